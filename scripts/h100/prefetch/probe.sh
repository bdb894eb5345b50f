#!/usr/bin/env bash
# On the H100 (device tool, from the repository root): builds tma_probe.cu and measures its
# 32 launches (tensor_load_at, tensor_prefetch_at for each case) with Nsight Compute: the TMA
# load sectors at the SM and the L2 sectors and requests from the SMs. Writes
# $OUT/probe-ncu.csv and $OUT/probe-run.txt.
set -u
OUT=${OUT:-/tmp/probe-out}
mkdir -p "$OUT"
cd scripts/h100/prefetch
nvcc -O3 -arch=sm_90a -std=c++17 -o /tmp/tma_probe tma_probe.cu -lcuda > "$OUT/probe-run.txt" 2>&1 || { cat "$OUT/probe-run.txt"; exit 1; }
/tmp/tma_probe | tee -a "$OUT/probe-run.txt"
M=l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum,lts__t_sectors_srcunit_tex.sum,lts__t_requests_srcunit_tex.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum
timeout 200 ncu --clock-control none --csv --metrics "$M" /tmp/tma_probe 2>/dev/null | grep -E '^"' > "$OUT/probe-ncu.csv"
python3 - "$OUT/probe-ncu.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
h = rows[0]
by = {}
for r in rows[1:]:
    by.setdefault(int(r[h.index("ID")]), {})[r[h.index("Metric Name")].split("__")[1][:40]] = r[h.index("Metric Value")]
for k in sorted(by):
    print(k, by[k])
PY
