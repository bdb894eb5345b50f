#!/usr/bin/env bash
# On the H100 (device tool, from the repository root): builds bulk_driver.cu (which includes
# tests/kernels/modern/bulk_cluster.cu) with nvcc for sm_90, checks the three kernels'
# results on the GPU (bulk_multicast, bulk_exchange, async_stores; grid 4, block 256,
# clusters of 2), and measures them with Nsight Compute: every metric this ncu knows for
# gh100 whose name says distributed shared memory, TMA or reduction (dshared, dsmem, tma,
# _red), and the LSU shared/global counters. Writes $OUT/bulk-ncu.csv, $OUT/bulk-run.txt,
# $OUT/bulk-metrics.txt and prints kernel, metric, value (non-zero ones).
#
# What each should equal: warpscope analyze tests/kernels/modern/bulk_cluster.cu --kernel K
# --grid 4 --block 256 --cc 9.0 --format csv (the modern_corpus test
# bulk_cluster_kernels_report_every_destination checks these figures):
#
# bulk_multicast (one 1-KiB cp.async.bulk .multicast::cluster per cluster, ctaMask 0b11):
#   l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum    64  (global side read once:
#       2 clusters x 1,024 B / 32; 128 would mean ncu counts it once per destination block)
#   …dshared…tma… write sectors (name from the query)            64  (warpscope's
#       distributed_shared store row of cp.async.bulk: 4 pieces of 512 B; not mapped yet)
#   smsp__sass_inst_executed_op_dshared_st.sum / _ld / _atom        0  (no LSU DSMEM access)
#   smsp__sass_inst_executed_op_shared_ld.sum                      64  (two ld.shared rows, 32 each)
#   l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum           64
#   l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum            0  (the bulk copy's own-block
#       writes are the TMA unit's: warpscope's shared store row of 16 wavefronts is not an LSU one)
#   l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum                128  (out[])
# bulk_exchange (each block: 1 KiB shared::cta -> neighbour's shared::cluster, and a 1-KiB
#   cp.reduce.async.bulk.global.add.u32 into sums[]):
#   …dshared…tma… write sectors                                   128  (DSMEM store row: 8 pieces)
#   global TMA reduction sectors (…global_op_tma_red… or in …op_tma_st…)  128  (warpscope's
#       cp.reduce global atomic row: 4 x 1,024 B / 32; not mapped yet)
#   l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum       0
#   l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum               128  (in[])
#   smsp__sass_inst_executed_op_shared_st.sum                      32  (mine[t] = …)
#   smsp__sass_inst_executed_op_shared_ld.sum                      32  (recv[t])
#   l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum                128  (out[])
# async_stores (st.async.b32 and red.async.add.u32 a thread into the neighbour, one 1-KiB
#   cp.reduce.async.bulk.shared::cluster.add.u32 a block):
#   smsp__sass_inst_executed_op_dshared_st.sum                     32  (st.async row executions,
#       if ncu counts STAS as a DSMEM store)
#   l1tex__t_requests_pipe_lsu_mem_dshared_op_st.sum               32
#   l1tex__t_sectors_pipe_lsu_mem_dshared_op_st.sum               128  (4 sectors a warp)
#   smsp__sass_inst_executed_op_dshared_atom.sum                   32  (red.async row: 32 warps;
#       it may be in an op_dshared_red metric instead: see the query)
#   l1tex__t_requests_pipe_lsu_mem_dshared_op_atom.sum             32  (if it exists)
#   l1tex__t_sectors_pipe_lsu_mem_dshared_op_atom.sum              32  (1 sector a warp)
#   …dshared…tma… reduction sectors                               128  (cp.reduce DSMEM atomic row)
#   smsp__sass_inst_executed_op_shared_st.sum                      68  (mine, acc: 32 each; total: 4)
#   smsp__sass_inst_executed_op_shared_ld.sum                      68  (recv, acc: 32 each; total: 4)
#   l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum           68
#   l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum           68
set -u
OUT=${OUT:-/tmp/bulk-out}
mkdir -p "$OUT"
cd scripts/h100/bulk
nvcc -O3 -arch=sm_90a -std=c++17 -o /tmp/bulk_driver bulk_driver.cu > "$OUT/bulk-build.txt" 2>&1 || { cat "$OUT/bulk-build.txt"; exit 1; }
/tmp/bulk_driver | tee "$OUT/bulk-run.txt"
grep -q "ok: async_stores" "$OUT/bulk-run.txt" || { echo "results wrong on the GPU: not profiling"; exit 1; }
ncu --query-metrics --chip gh100 > "$OUT/bulk-query.txt" 2>&1
M=$(awk '{print $1}' "$OUT/bulk-query.txt" | grep -E 'dshared|dsmem|tma|_red' | sed 's/$/.sum/' | paste -sd, -)
M=$M,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
echo "$M" | tr , '\n' > "$OUT/bulk-metrics.txt"
ncu --clock-control none --csv --metrics "$M" /tmp/bulk_driver 2>"$OUT/bulk-ncu.err" | grep -E '^"' > "$OUT/bulk-ncu.csv"
# A metric this ncu does not know is reported on stderr: show it.
grep -i "metric\|error" "$OUT/bulk-ncu.err" | head -5
awk -F'","' '{print $5, $13, $15}' "$OUT/bulk-ncu.csv" | grep -v ' 0"$' | cut -c1-160
