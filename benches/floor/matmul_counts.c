/* The floor of issue 20's matmul row: the least work that counts the accesses of
 * tests/kernels/compiled/matmul_tiled.cu's matmul_rows (16x16 tiles) for one compute
 * capability from 5.0 on: the 32-byte sectors of every warp's global loads and store, and the
 * shared-memory wavefronts (32 banks of 4 bytes; lanes on one word share it) of every tile
 * store and tile read (As as nvcc reads it: 16 bytes a lane). Usage: matmul_counts N (N x N x N, a multiple of 16). Prints the
 * requests, sectors and wavefronts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned sectors(const uint64_t *a)
{
    uint64_t seen[32];
    unsigned n = 0;
    for (int l = 0; l < 32; l++) {
        uint64_t s = a[l] >> 5;
        int found = 0;
        for (unsigned k = 0; k < n && !found; k++)
            found = seen[k] == s;
        if (!found)
            seen[n++] = s;
    }
    return n;
}

/* Wavefronts of one pass: the most distinct 4-byte words any one bank holds. The tiles lie in
 * the first 2 KiB of shared memory, so a 512-bit map marks the words seen. */
static unsigned pass(const uint64_t *a, int lanes, int words_per_lane)
{
    uint64_t seen[8] = {0};
    unsigned per_bank[32] = {0}, most = 0;
    for (int l = 0; l < lanes; l++)
        for (int k = 0; k < words_per_lane; k++) {
            uint64_t w = (a[l] >> 2) + k;
            if (seen[w / 64] >> (w % 64) & 1)
                continue;
            seen[w / 64] |= 1ull << (w % 64);
            unsigned b = (unsigned)(w % 32);
            if (++per_bank[b] > most)
                most = per_bank[b];
        }
    return most;
}

/* 4-byte accesses: one pass of the warp. */
static unsigned wavefronts(const uint64_t *a) { return pass(a, 32, 1); }

/* 16-byte accesses: each half-warp a pass of its own, each lane on 4 consecutive words. */
static unsigned wavefronts_v4(const uint64_t *a) { return pass(a, 16, 4) + pass(a + 16, 16, 4); }

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], 0, 10) : 512;
    const uint64_t A = 0x10000000ull, B = A + n * n * 4 + 256, C = B + n * n * 4 + 256;
    const uint64_t As = 0, Bs = 16 * 16 * 4;
    uint64_t req = 0, sec = 0, wf = 0, a[32], b[32], sa[32], sb[32];
    for (uint64_t by = 0; by < n / 16; by++)
        for (uint64_t bx = 0; bx < n / 16; bx++)
            for (uint64_t w = 0; w < 8; w++) {
                for (uint64_t t = 0; t < n; t += 16) {
                    for (int l = 0; l < 32; l++) {
                        uint64_t tx = l % 16, ty = 2 * w + l / 16;
                        uint64_t row = by * 16 + ty, col = bx * 16 + tx;
                        a[l] = A + (row * n + t + tx) * 4;
                        b[l] = B + ((t + ty) * n + col) * 4;
                        sa[l] = As + (ty * 16 + tx) * 4;
                        sb[l] = Bs + (ty * 16 + tx) * 4;
                    }
                    sec += sectors(a) + sectors(b);
                    wf += wavefronts(sa) + wavefronts(sb);
                    req += 4;
                    /* nvcc reads a row of As four floats at a time (ld.shared.v4). */
                    for (uint64_t kk = 0; kk < 16; kk++) {
                        for (int l = 0; l < 32; l++) {
                            uint64_t tx = l % 16, ty = 2 * w + l / 16;
                            sa[l] = As + (ty * 16 + kk) * 4;
                            sb[l] = Bs + (kk * 16 + tx) * 4;
                        }
                        if (kk % 4 == 0) {
                            wf += wavefronts_v4(sa);
                            req += 1;
                        }
                        wf += wavefronts(sb);
                        req += 1;
                    }
                }
                for (int l = 0; l < 32; l++) {
                    uint64_t tx = l % 16, ty = 2 * w + l / 16;
                    a[l] = C + ((by * 16 + ty) * n + bx * 16 + tx) * 4;
                }
                sec += sectors(a);
                req += 1;
            }
    printf("requests %llu sectors %llu wavefronts %llu\n", (unsigned long long)req,
           (unsigned long long)sec, (unsigned long long)wf);
    return 0;
}
