/* The floor of issue 20's benchmark: the least work that counts the 32-byte sectors of the
 * naive transpose (examples/transpose.cu, transpose_naive) for one compute capability: every
 * warp's 32 addresses computed, the distinct sectors of each warp access counted. No
 * interpretation, no report. Usage: transpose_sectors N (the matrix is N x N floats, block
 * 32x8, four rows per thread). Prints requests and sectors (for N = 4096: 1,048,576 and
 * 18,874,368, as warpscope's table shows). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned distinct_sectors(const uint64_t *addr)
{
    uint64_t seen[32];
    unsigned n = 0;
    for (int l = 0; l < 32; l++) {
        uint64_t s = addr[l] >> 5;
        int found = 0;
        for (unsigned k = 0; k < n; k++)
            if (seen[k] == s) { found = 1; break; }
        if (!found) seen[n++] = s;
    }
    return n;
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], 0, 10) : 4096;
    const uint64_t in = 0x10000000ull, out = in + n * n * 4 + 256;
    uint64_t requests = 0, sectors = 0, ld[32], st[32];
    for (uint64_t by = 0; by < n / 32; by++)
        for (uint64_t bx = 0; bx < n / 32; bx++)
            for (uint64_t ty = 0; ty < 8; ty++)
                for (uint64_t j = 0; j < 32; j += 8) {
                    for (uint64_t tx = 0; tx < 32; tx++) {
                        uint64_t x = bx * 32 + tx, y = by * 32 + ty;
                        ld[tx] = in + ((y + j) * n + x) * 4;
                        st[tx] = out + (x * n + (y + j)) * 4;
                    }
                    sectors += distinct_sectors(ld) + distinct_sectors(st);
                    requests += 2;
                }
    printf("requests %llu sectors %llu\n", (unsigned long long)requests,
           (unsigned long long)sectors);
    return 0;
}
