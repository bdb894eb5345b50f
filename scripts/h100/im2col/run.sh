#!/usr/bin/env bash
# On the H100: which pixels an im2col TMA load reads (im2col_probe.cu). Writes $OUT/im2col-probe.txt.
set -u
OUT=${OUT:-/tmp/im2col-out}
mkdir -p "$OUT"
nvcc -O2 -arch=sm_90a -std=c++17 -o /tmp/im2col_probe scripts/h100/im2col/im2col_probe.cu -lcuda > "$OUT/im2col-build.txt" 2>&1 \
    || { cat "$OUT/im2col-build.txt"; exit 1; }
/tmp/im2col_probe | tee "$OUT/im2col-probe.txt"
