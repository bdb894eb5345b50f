#!/usr/bin/env bash
# The 1-D block-tiled SGEMM (tests/kernels/compiled/sgemm_1d_blocktile.cu) on the H100 under Nsight
# Compute. From the repository root on the GPU machine:
#     bash tests/data/h100/compiled/sgemm_1d_blocktile.sh
# writes $OUT/sgemm_1d_blocktile.csv (ncu's CSV after a header naming the card, the tools and these
# commands), $OUT/nvcc_sgemm_1d_blocktile.ptx (nvcc's PTX, as warpscope compiles it) and
# $OUT/nvcc_sgemm_1d_blocktile.sass (the driver's SASS, memory instructions and branches only).
set -u
OUT=${OUT:-/tmp/sgemm_1d_blocktile}
mkdir -p "$OUT"
W=$(mktemp -d)
K=tests/kernels/compiled/sgemm_1d_blocktile.cu
D=tests/data/h100/compiled/sgemm_1d_blocktile_driver.cu
m="smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum"
m="$m,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
m="$m,smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
m="$m,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
m="$m,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
m="$m,smsp__sass_inst_executed_op_global_ld.sum,smsp__sass_inst_executed_op_global_st.sum"
build="nvcc -O3 -arch=sm_90 -lineinfo -D NDEBUG -o \$WORK/sgemm $D"
prof="ncu --clock-control none --print-units base --csv --metrics <below> \$WORK/sgemm 2"
nvcc -O3 -arch=sm_90 -lineinfo -D NDEBUG -o "$W/sgemm" "$D" || exit 1
nvcc -O3 -arch=sm_90 -lineinfo -D NDEBUG -ptx -o "$OUT/nvcc_sgemm_1d_blocktile.ptx" "$K" || exit 1
cuobjdump -sass "$W/sgemm" | grep -E 'Function|LDS|STS|LDG|STG|BRA|BAR' | sed -E 's#/\* 0x[0-9a-f]+ \*/##; s/ +$//' \
    > "$OUT/nvcc_sgemm_1d_blocktile.sass"
{
    echo "# $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(ncu --version | tail -1); $(nvcc --version | tail -2 | head -1); $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "# produced by: bash tests/data/h100/compiled/sgemm_1d_blocktile.sh (device machine, repository root; \$WORK = a scratch folder)"
    echo "#   $build"
    echo "#   $prof"
    echo "# metrics: $m"
    echo "# launches: 2 of sgemm_1d_blocktile<<<(16, 16), 512>>>(M = N = K = 1024, alpha 1, beta 0), C zeroed before each"
    ncu --clock-control none --print-units base --csv --metrics "$m" "$W/sgemm" 2 2>&1
} > "$OUT/sgemm_1d_blocktile.csv"
grep -E "^\"" "$OUT/sgemm_1d_blocktile.csv" | awk -F"\",\"" "{print \$1, \$(NF-2), \$NF}" | tr -d "\""
echo "SASS memory instructions (driver):"
grep -oE '(LDS|STS|LDG|STG)[.A-Z0-9]*' "$OUT/nvcc_sgemm_1d_blocktile.sass" | sort | uniq -c
