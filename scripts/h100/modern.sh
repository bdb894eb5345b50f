#!/usr/bin/env bash
# Modern kernels on the H100 (one device call, carry [".gpu-carry"] built by
# `scripts/gpu-check.sh build`): `warpscope verify` of tests/data/h100/verify/modern.txt,
# the per-line comparison of CUB's block scan, and the TMA tile kernel measured through its
# own host driver (scripts/h100/tma/). Files land in $OUT: modern.out, modern.err,
# modern-ncu.csv, scan-lines.out, tma-ncu.csv, tma-run.txt, env.txt.
#
#   bash scripts/h100/modern.sh
set -u
W=.gpu-carry/warpscope
OUT=${OUT:-/tmp/modern-out}
mkdir -p "$OUT"
{ nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv; ncu --version | tail -1; } > "$OUT/env.txt" 2>&1
timeout 360 $W verify --batch tests/data/h100/verify/modern.txt --ncu-csv "$OUT/modern-ncu.csv" \
    > "$OUT/modern.out" 2> "$OUT/modern.err"
echo "verify rc=$?" >> "$OUT/env.txt"
timeout 90 $W verify tests/kernels/modern/cub_block.cu --kernel block_scan --grid 2048 --block 128 --lines \
    > "$OUT/scan-lines.out" 2>&1
echo "scan lines rc=$?" >> "$OUT/env.txt"
timeout 120 bash scripts/h100/tma/run.sh
echo "tma rc=$?" >> "$OUT/env.txt"
tail -25 "$OUT/modern.out"
tail -30 "$OUT/scan-lines.out"
cat "$OUT/env.txt"
