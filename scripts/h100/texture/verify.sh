#!/usr/bin/env bash
# On the GPU machine, from the repository root, with .gpu-carry/ (scripts/gpu-check.sh build)
# carried: `warpscope verify` of every texture and surface launch of
# tests/data/h100/verify/texture.txt, the GPU test that checks it, and the local-memory probes
# of tests/kernels/local_wide.cu under ncu (4-, 8- and 16-byte local accesses).
# Writes $OUT/texture.out (stored as tests/data/h100/verify/texture.out), texture.err,
# tests.txt, local.csv and env.txt.
set -u
OUT=${OUT:-/tmp/texture-verify-out}
mkdir -p "$OUT"
W=.gpu-carry/warpscope
export WARPSCOPE_BIN=$PWD/$W
{ nvidia-smi -L; ncu --version | tail -1; nvcc --version | tail -1; } > "$OUT/env.txt" 2>&1
timeout 280 "$W" verify --batch tests/data/h100/verify/texture.txt > "$OUT/texture.out" 2> "$OUT/texture.err"
echo "verify exit $?" >> "$OUT/texture.err"
tail -3 "$OUT/texture.out"
M=l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_local_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum
: > "$OUT/local.csv"
for k in local_f32 local_f64 local_f32x4; do
    timeout 60 ncu --clock-control none --print-units base --csv --metrics "$M" \
        "$W" run --once tests/kernels/local_wide.cu --kernel "$k" --grid 64 --block 256 --arg k=3 \
        >> "$OUT/local.csv" 2>> "$OUT/local.err"
done
grep -v '^==' "$OUT/local.csv" | cut -d, -f5,13- | head -20
timeout 200 .gpu-carry/gpu-tests --include-ignored --test-threads=1 gpu_verify_textures > "$OUT/tests.txt" 2>&1
tail -3 "$OUT/tests.txt"
