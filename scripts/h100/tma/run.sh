#!/usr/bin/env bash
# On the H100 (device tool, from the repository root): builds tma_driver.cu with nvcc and
# measures tma_tile with Nsight Compute for an in-bounds tensor (128 x 256 ints) and one whose
# last column of boxes is partly out of bounds (150 x 256). Writes $OUT/tma-ncu.csv.
set -u
OUT=${OUT:-/tmp/tma-out}
mkdir -p "$OUT"
cd scripts/h100/tma
nvcc -O3 -arch=sm_90a -std=c++17 -o /tmp/tma_driver tma_driver.cu -lcuda > "$OUT/tma-build.txt" 2>&1 || { cat "$OUT/tma-build.txt"; exit 1; }
M=l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum,l1tex__m_l1tex2xbar_write_sectors_mem_global_op_tma_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,sm__sass_inst_executed_op_tma_ld.sum,sm__sass_inst_executed_op_tma_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
: > "$OUT/tma-ncu.csv"
for wh in "128 256" "150 256"; do
    /tmp/tma_driver $wh | tee -a "$OUT/tma-run.txt"
    ncu --clock-control none --csv --metrics "$M" /tmp/tma_driver $wh 2>/dev/null | grep -E '^"' >> "$OUT/tma-ncu.csv"
done
grep -E 'Metric Name|tma_tile' "$OUT/tma-ncu.csv" | awk -F'","' '{print $9, $13, $15}' | sort -u
