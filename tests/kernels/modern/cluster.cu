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
