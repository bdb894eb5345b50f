// Hopper's bulk copies, bulk reductions and asynchronous stores between the blocks of a
// cluster (clusters of two blocks, __cluster_dims__(2, 1, 1)), written with CCCL's
// cuda::ptx wrappers (<cuda/ptx>, PTX ISA "cp.async.bulk", "cp.reduce.async.bulk",
// "st.async", "red.async"). Every kernel takes 256 threads a block (N).
//
// bulk_multicast: rank 0 of each cluster copies the cluster's 1 KiB of `in` into `buf` of
//   both blocks with one cp.async.bulk ... .multicast::cluster (ctaMask 0b11), completing
//   1,024 transaction bytes on each block's mbarrier; thread t writes
//   out[i] = buf[t] + buf[(t + 1) % N] (i = blockIdx.x * N + t).
// bulk_exchange: each block copies its 1 KiB (`in`'s values) from its own shared memory into
//   the neighbour's `recv` (cp.async.bulk.shared::cluster.shared::cta, completing on the
//   neighbour's mbarrier) and adds it into sums[0..N) (cp.reduce.async.bulk.global
//   .shared::cta.bulk_group.add.u32); out[i] = recv[t] = in[neighbour's i]; sums[t] = the sum of
//   in[b * N + t] over every block b.
// async_stores: each thread st.async's its value into the neighbour's recv[t] and red.async
//   adds it into the neighbour's `total`; thread 0 also adds its block's 1 KiB into the
//   neighbour's acc (cp.reduce.async.bulk.shared::cluster.shared::cta...add.u32), acc[t]
//   starting at t; every byte completes on the neighbour's mbarrier (3 KiB a block).
//   out[i] = recv[t] + acc[t] = 2 * in[neighbour's i] + t; totals[blockIdx.x] = the sum of
//   the neighbour's 256 values.
#include <cooperative_groups.h>
#include <cuda/ptx>
#include <cstdint>
namespace cg = cooperative_groups;
namespace ptx = cuda::ptx;

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900  // clusters and bulk copies are sm_90's
#define HOPPER 1
#define CLUSTER_DIMS __cluster_dims__(2, 1, 1)
#else
#define HOPPER 0
#define CLUSTER_DIMS
#endif

constexpr int N = 256;  // threads a block, words a buffer

#if HOPPER
// Thread 0 initializes the block's mbarrier for one arrival and makes it visible to the
// cluster before anyone copies into it.
__device__ void init_barrier(uint64_t* bar) {
    if (threadIdx.x == 0) {
        ptx::mbarrier_init(bar, 1);
        ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
    }
}

__device__ void wait_phase0(uint64_t* bar) {
    while (!ptx::mbarrier_try_wait_parity(bar, 0)) {
    }
}
#endif

__global__ void CLUSTER_DIMS bulk_multicast(const unsigned* in, unsigned* out) {
#if HOPPER
    __shared__ alignas(128) unsigned buf[N];
    __shared__ alignas(8) uint64_t bar;
    cg::cluster_group cluster = cg::this_cluster();
    init_barrier(&bar);
    cluster.sync();
    if (threadIdx.x == 0) {
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar, sizeof(buf));
        if (cluster.block_rank() == 0) {
            const unsigned* src = in + (blockIdx.x / 2) * N;
            ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, buf, src, sizeof(buf), &bar, uint16_t(0b11));
        }
    }
    wait_phase0(&bar);
    int t = threadIdx.x;
    out[blockIdx.x * N + t] = buf[t] + buf[(t + 1) % N];
    cluster.sync();
#endif
}

__global__ void CLUSTER_DIMS bulk_exchange(const unsigned* in, unsigned* out, unsigned* sums) {
#if HOPPER
    __shared__ alignas(128) unsigned mine[N];
    __shared__ alignas(128) unsigned recv[N];
    __shared__ alignas(8) uint64_t bar;
    cg::cluster_group cluster = cg::this_cluster();
    unsigned peer = cluster.block_rank() ^ 1;
    int t = threadIdx.x, i = blockIdx.x * N + t;
    mine[t] = in[i];
    init_barrier(&bar);
    ptx::fence_proxy_async(ptx::space_shared);  // mine[] visible to the bulk copy
    cluster.sync();
    if (t == 0) {
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar, sizeof(recv));
        ptx::cp_async_bulk(ptx::space_cluster, ptx::space_shared, cluster.map_shared_rank(recv, peer), mine,
                           sizeof(mine), cluster.map_shared_rank(&bar, peer));
        ptx::cp_reduce_async_bulk(ptx::space_global, ptx::space_shared, ptx::op_add, sums, mine, sizeof(mine));
        ptx::cp_async_bulk_commit_group();
        ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});
    }
    wait_phase0(&bar);
    out[i] = recv[t];
    cluster.sync();
#endif
}

__global__ void CLUSTER_DIMS async_stores(const unsigned* in, unsigned* out, unsigned* totals) {
#if HOPPER
    __shared__ alignas(128) unsigned mine[N];
    __shared__ alignas(128) unsigned recv[N];
    __shared__ alignas(128) unsigned acc[N];
    __shared__ unsigned total;
    __shared__ alignas(8) uint64_t bar;
    cg::cluster_group cluster = cg::this_cluster();
    unsigned peer = cluster.block_rank() ^ 1;
    int t = threadIdx.x, i = blockIdx.x * N + t;
    unsigned v = in[i];
    mine[t] = v;
    acc[t] = t;
    if (t == 0) total = 0;
    init_barrier(&bar);
    ptx::fence_proxy_async(ptx::space_shared);
    cluster.sync();
    uint64_t* peer_bar = cluster.map_shared_rank(&bar, peer);
    if (t == 0) {
        // 4 bytes of st.async and 4 of red.async a thread, and the 1 KiB bulk reduction.
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar, 3 * N * 4);
    }
    ptx::st_async(cluster.map_shared_rank(&recv[t], peer), v, peer_bar);
    ptx::red_async(ptx::op_add, cluster.map_shared_rank(&total, peer), v, peer_bar);
    if (t == 0) {
        ptx::cp_reduce_async_bulk(ptx::space_cluster, ptx::space_shared, ptx::op_add,
                                  cluster.map_shared_rank(acc, peer), mine, sizeof(mine), peer_bar);
    }
    wait_phase0(&bar);
    out[i] = recv[t] + acc[t];
    if (t == 0) totals[blockIdx.x] = total;
    cluster.sync();
#endif
}
