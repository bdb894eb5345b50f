#!/bin/bash
# Builds smem_wavefronts.cu for sm_90 and runs it under ncu on a CUDA machine; writes
# $OUT/{ncu.csv,pats.txt,sass.txt,sass_full.txt} (OUT defaults to ./probe-out). Turn the
# two into h100-smem-wavefronts.csv by pairing the i-th PAT line with the i-th profiled
# launch (ncu's ID column), taking the _ld or _st metrics by the op.
set -e
cd "$(dirname "$0")"
OUT="${OUT:-$PWD/probe-out}"
mkdir -p "$OUT"
nvcc -arch=sm_90 -O3 -o /tmp/smem_wavefronts smem_wavefronts.cu
cuobjdump -sass /tmp/smem_wavefronts | tee "$OUT/sass_full.txt" | grep -oE '(LDS|STS)[A-Z0-9.]*' | sort | uniq -c > "$OUT/sass.txt"
M=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum
ncu --clock-control none --csv --metrics $M /tmp/smem_wavefronts > "$OUT/ncu_raw.txt" 2>&1 || true
grep '^PAT' "$OUT/ncu_raw.txt" > "$OUT/pats.txt" || true
grep -v '^PAT' "$OUT/ncu_raw.txt" | grep -v '^==PROF==' > "$OUT/ncu.csv" || true
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cat "$OUT/sass.txt"
wc -l "$OUT/pats.txt" "$OUT/ncu.csv"
