#!/usr/bin/env bash
# On the H100 (device tool, from the repository root): builds bulk_driver.cu (which includes
# tests/kernels/modern/bulk_cluster.cu) with nvcc for sm_90, checks the three kernels'
# results on the GPU (bulk_multicast, bulk_exchange, async_stores; grid 4, block 256,
# clusters of 2), and measures them with Nsight Compute: every metric this ncu knows for
# gh100 whose name says distributed shared memory, TMA or reduction (dshared, dsmem, tma,
# _red), and the LSU shared/global counters. Writes $OUT/bulk-ncu.csv, $OUT/bulk-run.txt,
# $OUT/bulk-metrics.txt and prints kernel, metric, value (non-zero ones).
#
# Measured (NVIDIA H100 80GB HBM3, ncu 2025.3.1; tests/data/h100/bulk/, results correct on
# the GPU) and equal to warpscope analyze tests/kernels/modern/bulk_cluster.cu --kernel K
# --grid 4 --block 256 --cc 9.0 --format csv in every column warpscope gives (the
# modern_corpus test bulk_cluster_kernels_equal_the_h100 compares them all;
# bulk_cluster_kernels_report_every_destination checks the rows):
#
# bulk_multicast (one 1-KiB cp.async.bulk .multicast::cluster per cluster, ctaMask 0b11):
#   l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum   128  (counted per destination
#       SM: 2 clusters x 2 blocks x 1,024 B / 32; warpscope: the global read per destination)
#   l1tex__m_l1tex2xbar_read_requests_mem_global_op_tma_ld_dest_multicast.sum  16  (128 B
#       each: L2 read once per cluster; no warpscope column)
#   every dshared metric                                             0  (warpscope: the other
#       block's copy is a shared store row in that block, in no ncu column)
#   l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum            64
#   l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum             0
#   l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum                 128  (out[])
# bulk_exchange (each block: 1 KiB shared::cta -> neighbour's shared::cluster, and a 1-KiB
#   cp.reduce.async.bulk.global.add.u32 into sums[]):
#   l1tex__m_l1tex2xbar_write_sectors_mem_dshared_op_tma_st.sum   128  (DSMEM bulk store row)
#   l1tex__m_l1tex2xbar_write_sectors_mem_global_op_tma_red.sum   128  (global bulk reduction
#       row; lts__t_sectors_op_red 128 too)
#   smsp__sass_inst_executed_op_dshared_tma_st.sum, _op_tma_red.sum  4 each  (one a copy; not
#       mapped: warpscope counts an execution per 512-byte piece, 8)
#   l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum / _op_st.sum    128 each  (in[], out[])
#   l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum / _op_st.sum  32 each
# async_stores (st.async.b32 and red.async.add.u32 a thread into the neighbour, one 1-KiB
#   cp.reduce.async.bulk.shared::cluster.add.u32 a block):
#   l1tex__t_requests_pipe_lsu_mem_dshared_op_st.sum                32  (st.async row)
#   l1tex__t_sectors_pipe_lsu_mem_dshared_op_st.sum                128  (4 sectors a warp)
#   smsp__sass_inst_executed_op_dshared_stas.sum                    32  (not in _op_dshared_st)
#   l1tex__t_requests_pipe_lsu_mem_dshared_op_redas.sum             32  (red.async row)
#   l1tex__t_sectors_pipe_lsu_mem_dshared_op_redas.sum           1,024  (one sector per active
#       lane, though every lane adds to one word)
#   smsp__sass_inst_executed_op_dshared_redas.sum                   32  (not in _op_dshared_atom)
#   l1tex__m_xbar2l1tex_read_sectors_mem_dshared_op_tma_red.sum    128  (DSMEM bulk reduction row)
#   l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum / _op_st.sum  68 each
#   l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum                 132  (out[], totals[])
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
