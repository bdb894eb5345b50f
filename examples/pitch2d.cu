// pitch2d.cu -- two-dimensional arrays: unpadded rows versus cudaMallocPitch rows.
//
// Demonstrates: seed 000 (Programming Guide, "Two-Dimensional Arrays"): a thread (tx,ty)
// accessing BaseAddress + width * ty + tx is fully coalesced only if both the block width
// and the array width are multiples of the warp size.  With width = 1000 floats most rows
// start off a 32-byte boundary, so a warp's 128 bytes touch 5 sectors instead of 4, and the
// warps at the right edge (tx >= 1000) are partly inactive.  The pitched variant addresses
// rows as (float*)((char*)base + y * pitch); cudaMallocPitch pads the 4000-byte row to
// pitch = 4096 bytes on the H100, so every row starts 512-byte aligned again.
//
// warpscope analyze examples/pitch2d.cu --kernel inc_2d --grid 32,125 --block 32,8 --arg width=1000 --arg height=1000
// warpscope analyze examples/pitch2d.cu --kernel inc_2d_pitched --grid 32,125 --block 32,8 --arg pitch=4096 --arg width=1000 --arg height=1000
//
// Allocations used for tests/data/h100/examples.csv: inc_2d base = width*height floats
// (cudaMalloc); inc_2d_pitched base = cudaMallocPitch(1000*4 bytes, 1000 rows), pitch as
// returned (4096 on the H100).

__global__ void inc_2d(float* base, int width, int height)
{
    int tx = blockIdx.x * blockDim.x + threadIdx.x;
    int ty = blockIdx.y * blockDim.y + threadIdx.y;
    if (tx < width && ty < height) {
        base[width * ty + tx] = base[width * ty + tx] + 1.0f;
    }
}

__global__ void inc_2d_pitched(float* base, size_t pitch, int width, int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        float* row = (float*)((char*)base + y * pitch);
        row[x] = row[x] + 1.0f;
    }
}
