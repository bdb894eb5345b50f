// Distributed shared memory as the CUDA Programming Guide writes it ("Distributed Shared
// Memory"): clusters of two blocks (__cluster_dims__(2, 1, 1)); each block fills its own
// shared array, the cluster synchronizes, and every thread reads the word of its thread
// index in the neighbour block's array through cluster.map_shared_rank (mapa +
// ld.shared::cluster: a DSMEM load), then the cluster synchronizes again so that no block
// exits while the other still reads its shared memory.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900  // clusters are sm_90's
#define CLUSTER_DIMS __cluster_dims__(2, 1, 1)
#else
#define CLUSTER_DIMS
#endif

__global__ void CLUSTER_DIMS neighbour_sum(const int* in, int* out) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    constexpr int N = 256;  // threads per block
    __shared__ int smem[N];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned int rank = cluster.block_rank();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    smem[threadIdx.x] = in[i];
    cluster.sync();
    int* peer = cluster.map_shared_rank(smem, rank ^ 1);
    out[i] = smem[threadIdx.x] + peer[threadIdx.x];
    cluster.sync();
#endif
}

// The same exchange with a strided read of the neighbour's array: lane l of a warp reads
// word 8*l (mod 256) of the neighbour, 8 words apart: an 8-way bank conflict in the
// neighbour's shared memory, each lane in its own 32-byte piece.
__global__ void CLUSTER_DIMS neighbour_stride(const int* in, int* out) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    constexpr int N = 256;
    __shared__ int smem[N];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned int rank = cluster.block_rank();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    smem[threadIdx.x] = in[i];
    cluster.sync();
    int* peer = cluster.map_shared_rank(smem, rank ^ 1);
    out[i] = peer[(threadIdx.x * 8) % N];
    cluster.sync();
#endif
}
