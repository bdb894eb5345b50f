// CUB's block-level primitives as user kernels use them (headers from nvidia-cuda-cccl).
#include <cub/block/block_load.cuh>
#include <cub/block/block_store.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/warp/warp_reduce.cuh>

constexpr int THREADS = 128;
constexpr int ITEMS = 4;

template <cub::BlockLoadAlgorithm ALG>
__global__ void block_load_sum(const int *in, int *out) {
    using Load = cub::BlockLoad<int, THREADS, ITEMS, ALG>;
    using Reduce = cub::BlockReduce<int, THREADS>;
    __shared__ union {
        typename Load::TempStorage load;
        typename Reduce::TempStorage reduce;
    } temp;
    int items[ITEMS];
    Load(temp.load).Load(in + blockIdx.x * THREADS * ITEMS, items);
    __syncthreads();
    int sum = Reduce(temp.reduce).Sum(items);
    if (threadIdx.x == 0) out[blockIdx.x] = sum;
}

template __global__ void block_load_sum<cub::BLOCK_LOAD_DIRECT>(const int *, int *);
template __global__ void block_load_sum<cub::BLOCK_LOAD_VECTORIZE>(const int *, int *);
template __global__ void block_load_sum<cub::BLOCK_LOAD_TRANSPOSE>(const int *, int *);
template __global__ void block_load_sum<cub::BLOCK_LOAD_WARP_TRANSPOSE>(const int *, int *);

__global__ void block_scan(const int *in, int *out) {
    using Load = cub::BlockLoad<int, THREADS, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
    using Store = cub::BlockStore<int, THREADS, ITEMS, cub::BLOCK_STORE_WARP_TRANSPOSE>;
    using Scan = cub::BlockScan<int, THREADS>;
    __shared__ union {
        typename Load::TempStorage load;
        typename Store::TempStorage store;
        typename Scan::TempStorage scan;
    } temp;
    int items[ITEMS];
    int offset = blockIdx.x * THREADS * ITEMS;
    Load(temp.load).Load(in + offset, items);
    __syncthreads();
    Scan(temp.scan).ExclusiveSum(items, items);
    __syncthreads();
    Store(temp.store).Store(out + offset, items);
}

__global__ void block_radix_sort(const unsigned *in, unsigned *out) {
    using Sort = cub::BlockRadixSort<unsigned, THREADS, ITEMS>;
    __shared__ typename Sort::TempStorage temp;
    unsigned keys[ITEMS];
    int offset = blockIdx.x * THREADS * ITEMS;
    for (int k = 0; k < ITEMS; ++k) keys[k] = in[offset + threadIdx.x * ITEMS + k];
    Sort(temp).SortBlockedToStriped(keys);
    for (int k = 0; k < ITEMS; ++k) out[offset + k * THREADS + threadIdx.x] = keys[k];
}

__global__ void warp_reduce(const float *in, float *out) {
    using WarpReduce = cub::WarpReduce<float>;
    __shared__ typename WarpReduce::TempStorage temp[THREADS / 32];
    int i = blockIdx.x * THREADS + threadIdx.x;
    float s = WarpReduce(temp[threadIdx.x / 32]).Sum(in[i]);
    if (threadIdx.x % 32 == 0) out[i / 32] = s;
}
