#!/usr/bin/env bash
# On the GPU machine, from the repository root, with .gpu-carry/ (scripts/gpu-check.sh build)
# carried: `warpscope verify` of tests/data/h100/verify/failures.txt, a batch where one launch
# fails planning and one fails in the profiled run, and the struct-parameter launch alone.
# Writes $OUT/failures.out (stored as tests/data/h100/verify/failures.out), failures.err,
# failures.json, env.txt.
set -u
OUT=${OUT:-/tmp/verify-failures-out}
mkdir -p "$OUT"
W=.gpu-carry/warpscope
{ nvidia-smi -L; ncu --version | tail -1; nvcc --version | tail -1; } > "$OUT/env.txt" 2>&1
timeout 250 "$W" verify --batch tests/data/h100/verify/failures.txt > "$OUT/failures.out" 2> "$OUT/failures.err"
echo "verify exit $?" >> "$OUT/failures.err"
timeout 200 "$W" verify --batch tests/data/h100/verify/failures.txt --format json > "$OUT/failures.json" 2>> "$OUT/failures.err"
echo "verify --format json exit $?" >> "$OUT/failures.err"
cat "$OUT/failures.out" "$OUT/failures.err"
