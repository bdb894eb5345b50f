#!/usr/bin/env bash
# ldmatrix/stmatrix on the H100: builds tests/kernels/compiled/ldmatrix.cu and runs it under
# Nsight Compute with every shared-memory instruction and wavefront metric that names ldsm/stsm,
# plus the plain shared ones. From the repository root on the GPU machine:
#     bash scripts/h100/compiled/ldmatrix.sh        (writes $OUT/ldmatrix.csv and $OUT/ldmatrix-metrics.txt)
set -u
OUT=${OUT:-/tmp/ldmatrix}
mkdir -p "$OUT"
W=$(mktemp -d)
nvcc -O3 -arch=sm_90 -lineinfo tests/kernels/compiled/ldmatrix.cu -o "$W/ldmatrix" || exit 1
ncu --query-metrics --chip gh100 2>/dev/null | awk '{print $1}' | grep -E '(ldsm|stsm)' > "$OUT/ldmatrix-metrics.txt"
m="smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum"
m="$m,smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
m="$m,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
for x in $(cat "$OUT/ldmatrix-metrics.txt"); do
    case "$x" in *.sum|*.avg|*.max|*.min) m="$m,$x" ;; *) m="$m,$x.sum" ;; esac
done
{
    echo "# $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(ncu --version | tail -1); $(nvcc --version | tail -2 | head -1); $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "# nvcc -O3 -arch=sm_90 -lineinfo tests/kernels/compiled/ldmatrix.cu; ncu --clock-control none --print-units base --csv --metrics <below>"
    echo "# launches in order: for pitch in 8 64: ldsm_x1 ldsm_x2 ldsm_x4 ldsm_x4_trans stsm_x4 (grid 1024, block 32)"
    ncu --clock-control none --print-units base --csv --metrics "$m" "$W/ldmatrix" 2>&1
} > "$OUT/ldmatrix.csv"
tail -n +1 "$OUT/ldmatrix.csv" | grep -E "ldsm|stsm" | grep -vE "^==" | awk -F'","' '{print $5, $(NF-2), $NF}' | head -200
