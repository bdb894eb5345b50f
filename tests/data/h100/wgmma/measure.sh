#!/usr/bin/env bash
# Measures what an H100 counts for wgmma's shared-memory reads (README.md beside this).
# Run from the repository root on the GPU machine; results go to $OUT.
set -u
D=tests/data/h100/wgmma
OUT=${OUT:-/tmp/wgmma-out}
W=/tmp/wgmma
mkdir -p "$OUT" "$W"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; nvcc --version | tail -2; ncu --version | tail -1; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o "$W/wg" "$D/wgmma_smem.cu" > "$OUT/build.txt" 2>&1 || { cat "$OUT/build.txt"; exit 1; }
cuobjdump -sass "$W/wg" | grep -E 'Function|GMMA|LDS|STS|BAR|WARPGROUP' > "$OUT/sass.txt"
"$W/wg" | tee "$OUT/run.txt"
# Candidate counters: every counter of GH100 about shared memory, banks, wavefronts or GMMA.
ncu --query-metrics --chip gh100 > "$W/query.txt" 2>&1
grep -iE 'gmma|shared|bank|wavefront|smem|tensor' "$W/query.txt" > "$OUT/query-matches.txt"
awk '$2=="Counter"{print $1".sum"}' "$OUT/query-matches.txt" | sort -u > "$OUT/metrics.txt"
[ -s "$OUT/metrics.txt" ] || awk '{print $1".sum"}' "$OUT/query-matches.txt" | grep -vE 'pct|ratio|per_' | sort -u > "$OUT/metrics.txt"
echo "$(wc -l < "$OUT/metrics.txt") candidate counters"
MET="$(paste -sd, "$OUT/metrics.txt"),smsp__inst_executed.sum,sm__cycles_elapsed.max"
if ! timeout 330 ncu --clock-control none --print-units base --csv --log-file "$OUT/ncu-wgmma.csv" --metrics "$MET" "$W/wg" > /dev/null 2> "$OUT/ncu.err"; then
  echo "full counter list failed: $(tail -3 "$OUT/ncu.err")"; tail -5 "$OUT/ncu-wgmma.csv"
  MET=l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_bank_reads.sum,l1tex__data_bank_writes.sum,smsp__inst_executed.sum
  timeout 120 ncu --clock-control none --print-units base --csv --log-file "$OUT/ncu-wgmma.csv" --metrics "$MET" "$W/wg" > /dev/null 2>> "$OUT/ncu.err"
fi
python3 "$D/summarize.py" "$OUT/ncu-wgmma.csv" | tee "$OUT/summary.txt"
