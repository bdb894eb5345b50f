#!/usr/bin/env bash
# On the H100 (device tool, from a folder holding this script, dsmem_driver.cu and
# tests/kernels/modern/dsmem_probe.cu at the same relative places): builds the driver for
# sm_90, runs every distributed-shared-memory probe (grid 2, block 128, one cluster of 2), and
# measures each with Nsight Compute: every metric this ncu knows for gh100 whose name says
# dshared/dsmem, and the shared-memory LSU wavefronts. Writes $OUT/dsmem-ncu.csv,
# $OUT/dsmem-run.txt, $OUT/dsmem-metrics.txt. Stored in tests/data/h100/dsmem/.
set -u
OUT=${OUT:-/tmp/dsmem-out}
mkdir -p "$OUT"
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/dsmem-run.txt"
ncu --version | tail -1 >> "$OUT/dsmem-run.txt"
nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/dsmem_driver dsmem_driver.cu > "$OUT/dsmem-build.txt" 2>&1 || { cat "$OUT/dsmem-build.txt"; exit 1; }
/tmp/dsmem_driver | tee -a "$OUT/dsmem-run.txt"
ncu --query-metrics --chip gh100 > /tmp/dsmem-query.txt 2>&1
M=$(awk '{print $1}' /tmp/dsmem-query.txt | grep -E 'dshared|dsmem' | grep -v average | sed 's/$/.sum/' | paste -sd, -)
M=$M,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
echo "$M" > "$OUT/dsmem-metrics.txt"
ncu --clock-control none --csv --metrics "$M" /tmp/dsmem_driver 2>"$OUT/dsmem-ncu.err" | grep -E '^"' > "$OUT/dsmem-ncu.csv"
grep -i "metric\|error" "$OUT/dsmem-ncu.err" | head -5
# kernel, dshared output wavefronts / requests / sectors (non-zero)
awk -F'","' '$13 ~ /t_(output_wavefronts|requests|sectors)_pipe_lsu_mem_dshared_op_(ld|st|atom).sum/ && $15 != "0\"" {split($5,k,"("); print k[1], $13, $15}' "$OUT/dsmem-ncu.csv"
