#!/usr/bin/env bash
# `warpscope verify` through the compiled path (nvcc → PTX → SIMT executor, the default for a
# .cu when nvcc is found) on the H100 machine, from the repository root, with .gpu-carry
# carried (scripts/gpu-check.sh build):
#     bash scripts/h100/compiled/verify.sh [BATCH ...]     (default: compiled-kernels examples shared-f32-stride)
# Each BATCH is tests/data/h100/verify/BATCH.txt; its output goes to $OUT/BATCH.out (stored as
# tests/data/h100/verify/compiled/BATCH.out), the environment and a summary to $OUT/summary.txt.
set -u
OUT=${OUT:-/tmp/verify-compiled}
mkdir -p "$OUT"
W=.gpu-carry/warpscope
[ -z "${CUDA_HOME:-}" ] && [ -x /usr/local/cuda/bin/nvcc ] && export CUDA_HOME=/usr/local/cuda
S="$OUT/summary.txt"
{
    echo "# $(date -u +%Y-%m-%dT%H:%MZ) bash scripts/h100/compiled/verify.sh $*"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    echo "nvcc: $(command -v nvcc || echo "$CUDA_HOME/bin/nvcc") $(${CUDA_HOME:+$CUDA_HOME/bin/}nvcc --version | tail -2 | head -1)"
    echo "ncu: $(ncu --version 2>/dev/null | tail -1)"
} > "$S" 2>&1
batches=${*:-compiled-kernels examples shared-f32-stride}
for b in $batches; do
    t0=$(date +%s)
    timeout 280 $W verify --batch "tests/data/h100/verify/$b.txt" > "$OUT/$b.out" 2> "$OUT/$b.err"
    rc=$?
    echo "$b: rc=$rc in $(( $(date +%s) - t0 )) s: $(grep -E 'launches exact' "$OUT/$b.out" | head -1) $(tail -2 "$OUT/$b.err" | tr '\n' ' ' | cut -c1-400)" >> "$S"
done
cat "$S"
