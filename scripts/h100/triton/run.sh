#!/usr/bin/env bash
# On the H100 (device tool, from the repository root): Triton's vector add and row softmax
# under Nsight Compute, their JIT PTX kept. Writes $OUT/triton-ncu.csv, add_kernel.ptx,
# softmax_kernel.ptx, triton-run.txt.
set -u
OUT=${OUT:-/tmp/triton-out}
mkdir -p "$OUT"
export OUT
M=l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum
python3 scripts/h100/triton/measure.py > "$OUT/triton-run.txt" 2>&1
ncu --clock-control none --csv --kernel-name regex:'add_kernel|softmax_kernel' --metrics "$M" \
    python3 scripts/h100/triton/measure.py 2>/dev/null | grep -E '^"' > "$OUT/triton-ncu.csv"
cat "$OUT/triton-run.txt"
awk -F'","' '{print $5, $13, $15}' "$OUT/triton-ncu.csv" | cut -c1-150
