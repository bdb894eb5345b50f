#!/usr/bin/env bash
# On the H100 (device tool, from the repository root): the second Triton set
# (measure2.py) under Nsight Compute. The counters are the LSU's global and shared ones,
# the TMA's and wgmma's (Hopper), LDGSTS's and ldmatrix/stmatrix's instruction counts,
# each kept only if this ncu knows it. Writes $OUT/triton2-ncu.csv (default run),
# $OUT/triton2-mma2-ncu.csv (matmul with DISABLE_MMA_V3=1), the PTX and metadata of each
# kernel, triton2-run.txt and metrics.txt.
set -u
OUT=${OUT:-/tmp/triton-out}
mkdir -p "$OUT"
export OUT
here=scripts/h100/triton
ncu --query-metrics --chip gh100 > "$OUT/query.txt" 2>&1
want="l1tex__t_requests_pipe_lsu_mem_global_op_ld l1tex__t_sectors_pipe_lsu_mem_global_op_ld
l1tex__t_requests_pipe_lsu_mem_global_op_st l1tex__t_sectors_pipe_lsu_mem_global_op_st
l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldgsts l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_stsm l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_tma_st l1tex__data_pipe_lsu_wavefronts_mem_shared_op_tma_ld
l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld l1tex__m_l1tex2xbar_write_sectors_mem_global_op_tma_st
smsp__sass_inst_executed_op_shared_ld smsp__sass_inst_executed_op_shared_st smsp__sass_inst_executed_op_ldgsts
smsp__sass_inst_executed_op_ldsm smsp__sass_inst_executed_op_stsm smsp__sass_inst_executed_op_global_ld
smsp__sass_inst_executed_op_global_st smsp__inst_executed_op_ldgsts"
M=""
for m in $want; do
    if grep -q "^$m " "$OUT/query.txt" || grep -q "^$m\b" "$OUT/query.txt"; then M="$M,$m.sum"; else echo "missing $m" >> "$OUT/metrics.txt"; fi
done
M=${M#,}
echo "$M" >> "$OUT/metrics.txt"
python3 $here/measure2.py > "$OUT/triton2-run.txt" 2>&1
DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/triton-mma2 python3 $here/measure2.py matmul >> "$OUT/triton2-run.txt" 2>&1
ncu --clock-control none --csv --kernel-name regex:'layernorm|strided_copy|transpose|matmul' --metrics "$M" \
    python3 $here/measure2.py 2>"$OUT/ncu.err" | grep -E '^"' > "$OUT/triton2-ncu.csv"
DISABLE_MMA_V3=1 TRITON_CACHE_DIR=/tmp/triton-mma2 ncu --clock-control none --csv --kernel-name regex:matmul --metrics "$M" \
    python3 $here/measure2.py matmul 2>>"$OUT/ncu.err" | grep -E '^"' > "$OUT/triton2-mma2-ncu.csv"
cat "$OUT/triton2-run.txt" "$OUT/metrics.txt"
tail -3 "$OUT/ncu.err"
for f in triton2-ncu.csv triton2-mma2-ncu.csv; do
    awk -F'","' '{print $5, $13, $15}' "$OUT/$f" | cut -c1-160
done
grep -c "mma.sync\|wgmma.mma_async" "$OUT"/matmul_kernel*.ptx
