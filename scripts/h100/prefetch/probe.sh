#!/usr/bin/env bash
# On the H100 (device tool, from the repository root): builds tma_probe.cu and measures its
# 32 launches (tensor_load_at, tensor_prefetch_at for each case) with Nsight Compute: the TMA
# load sectors at the SM and the L2 sectors and requests from the SMs. Writes
# $OUT/probe-ncu.csv and $OUT/probe-run.txt.
#
# Measured (NVIDIA H100 80GB HBM3, ncu 2025.3.1): the load's TMA sectors equal the prefetch's
# L2 sectors in every case: a box row's part inside the tensor costs the sectors it covers
# (aligned 4, 16 bytes off 5), each part outside ceil(bytes / 32) of its own (a row past the
# tensor 4, 112 of 128 bytes inside 4 + 1, 16 inside 1 + 4): aligned 256, pitch144 288,
# off16 320, off32/off64 256, inner56 320, inner56_off16 320, inner8 320, outer8 256,
# outer8_pitch144 260, the 120x200 boxes 288/320/260/264, x_neg16 256, y_neg8 256
# (crates/simt/tests/tma_probe.rs compares all 16).
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
