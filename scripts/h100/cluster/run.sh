#!/usr/bin/env bash
# On the H100 (device tool, from the repository root): builds cluster_driver.cu (which
# includes tests/kernels/modern/cluster.cu) with nvcc for sm_90 and measures neighbour_sum
# (grid 4, block 256, clusters of 2) with Nsight Compute: the distributed-shared-memory
# counters (ncu's mem_dshared / op_dshared) and the shared-memory instruction counts.
# Writes $OUT/cluster-ncu.csv and prints metric, value.
#
# What each must equal (warpscope analyze tests/kernels/modern/cluster.cu --kernel
# neighbour_sum --grid 4 --block 256 --cc 9.0 --format csv; the modern_corpus test
# cluster_neighbour_reads_are_distributed_shared_memory):
#   smsp__sass_inst_executed_op_dshared_ld.sum        32  (DSMEM row executions: 4 blocks x 8 warps)
#   l1tex__t_requests_pipe_lsu_mem_dshared_op_ld.sum  32  (DSMEM row requests)
#   l1tex__t_sectors_pipe_lsu_mem_dshared_op_ld.sum  128  (DSMEM row sectors: 4 per warp, unmeasured rule)
#   smsp__sass_inst_executed_op_dshared_st.sum         0  (no DSMEM store)
#   l1tex__t_bytes_pipe_lsu_mem_dshared.sum         4096  (32 warps x 128 bytes; no warpscope column)
#   smsp__sass_inst_executed_op_shared_ld.sum         32  (the own smem[threadIdx.x] load)
#   smsp__sass_inst_executed_op_shared_st.sum         32  (the smem store)
#   l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum  32 if ncu keeps DSMEM out of the
#       shared wavefronts (warpscope's shared row), 64 if it counts the DSMEM wavefronts too
#   l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum  32
set -u
OUT=${OUT:-/tmp/cluster-out}
mkdir -p "$OUT"
cd scripts/h100/cluster
nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/cluster_driver cluster_driver.cu > "$OUT/cluster-build.txt" 2>&1 || { cat "$OUT/cluster-build.txt"; exit 1; }
/tmp/cluster_driver | tee "$OUT/cluster-run.txt"
M=smsp__sass_inst_executed_op_dshared_ld.sum,smsp__sass_inst_executed_op_dshared_st.sum,l1tex__t_requests_pipe_lsu_mem_dshared_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_dshared_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_dshared_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_dshared_op_st.sum,l1tex__t_bytes_pipe_lsu_mem_dshared.sum,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
ncu --clock-control none --csv --metrics "$M" /tmp/cluster_driver 2>"$OUT/cluster-ncu.err" | grep -E '^"' > "$OUT/cluster-ncu.csv"
# A metric this ncu does not know is reported on stderr: show it.
grep -i "metric\|error" "$OUT/cluster-ncu.err" | head -5
grep -E 'neighbour_sum' "$OUT/cluster-ncu.csv" | awk -F'","' '{print $13, $15}' | sort -u
