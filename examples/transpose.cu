// transpose.cu -- matrix transpose: naive, shared-memory tiled, and tiled with padding.
//
// Demonstrates: the classic NVIDIA "An Efficient Matrix Transpose in CUDA C/C++" kernels
// (which seed 002 announces: "we will show how to use shared memory to avoid strided global
// memory accesses during a matrix transpose"), with width/height as parameters so that
// non-square matrices work.  Each 32x8 thread block moves one 32x32 tile, every thread
// handling TILE_DIM / BLOCK_ROWS = 4 elements.
//   copy_tiles          : reference copy with the same indexing (coalesced loads and stores)
//   transpose_naive     : loads coalesced, stores strided by `height` floats (32 sectors/request)
//   transpose_coalesced : both global sides coalesced through tile[32][32]; reading a tile
//                         column is a 32-way bank conflict (32 wavefronts/request)
//   transpose_no_bank_conflicts : tile[32][33], the padding makes the column read conflict free
// The matrix `idata` is height rows of width floats; `odata` is width rows of height floats.
// width and height must be multiples of TILE_DIM; grid = (width/32, height/32), block = (32, 8).
//
// warpscope analyze examples/transpose.cu --kernel transpose_naive --grid 32,32 --block 32,8 --arg width=1024 --arg height=1024
// warpscope analyze examples/transpose.cu --kernel transpose_coalesced --grid 32,32 --block 32,8 --arg width=1024 --arg height=1024
// warpscope analyze examples/transpose.cu --kernel transpose_no_bank_conflicts --grid 32,32 --block 32,8 --arg width=1024 --arg height=1024
//
// Allocations used for tests/data/h100/examples.csv: idata and odata width*height floats each.

#ifndef TILE_DIM
#define TILE_DIM 32
#endif
#ifndef BLOCK_ROWS
#define BLOCK_ROWS 8
#endif

__global__ void copy_tiles(float* odata, const float* idata, int width, int height)
{
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[(y + j) * width + x] = idata[(y + j) * width + x];
}

__global__ void transpose_naive(float* odata, const float* idata, int width, int height)
{
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[x * height + (y + j)] = idata[(y + j) * width + x];
}

__global__ void transpose_coalesced(float* odata, const float* idata, int width, int height)
{
    __shared__ float tile[TILE_DIM][TILE_DIM];

    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];

    __syncthreads();

    x = blockIdx.y * TILE_DIM + threadIdx.x;  // transpose block offset
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

__global__ void transpose_no_bank_conflicts(float* odata, const float* idata, int width, int height)
{
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];

    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];

    __syncthreads();

    x = blockIdx.y * TILE_DIM + threadIdx.x;  // transpose block offset
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
