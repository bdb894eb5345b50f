#!/usr/bin/env bash
# Experiment: run scripts/h100/shared_noise.cu under ncu with different collection settings and
# print the shared-load wavefronts of every launch side by side.   usage: shared_noise.sh OUTDIR
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUTDIR=${1:-/tmp/shared-noise}
mkdir -p "$OUTDIR"
W=$(mktemp -d)
nvcc -O3 -arch=sm_90 -o "$W/sn" "$ROOT/scripts/h100/shared_noise.cu" || exit 1
cuobjdump -sass "$W/sn" | grep -E "Function|LDS|STS|BAR|STG" > "$OUTDIR/shared_noise_sass.txt"
FULL="l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_global_ld.sum,dram__bytes_read.sum,dram__bytes_write.sum"
TWO="l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed_op_shared_ld.sum"
run() {  # name, ncu options...
    local name=$1; shift
    ncu --clock-control none --print-units base --csv "$@" "$W/sn" > "$OUTDIR/sn_$name.csv" 2> "$W/err_$name"
    echo "$name rc=$?"
}
run full_cacheall --metrics "$FULL"
run two_cacheall --metrics "$TWO"
run full_cachenone --cache-control none --metrics "$FULL"
run two_cachenone --cache-control none --metrics "$TWO"
run one_wf --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
"$W/sn" > "$W/labels.txt"
python3 - "$OUTDIR" "$W/labels.txt" <<'PY'
import csv, sys
outdir, labels = sys.argv[1], sys.argv[2]
labs = [l.split()[1:] for l in open(labels) if l.startswith("LAUNCH")]
names = ["full_cacheall", "two_cacheall", "full_cachenone", "two_cachenone", "one_wf"]
cols = {}
for n in names:
    vals = {}
    hdr = None
    for line in open(f"{outdir}/sn_{n}.csv", errors="replace"):
        if not line.startswith('"'):
            continue
        row = next(csv.reader([line]))
        if row[0] == "ID":
            hdr = {k: i for i, k in enumerate(row)}
            continue
        if row[hdr["Metric Name"]] == "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum":
            vals[int(row[0])] = row[hdr["Metric Value"]].replace(",", "")
    cols[n] = vals
print("variant stride " + " ".join(f"{n:>15s}" for n in names))
for i, (v, s) in enumerate(labs):
    print(f"{v:7s} {s:>6s} " + " ".join(f"{cols[n].get(i, '?'):>15s}" for n in names))
PY
rm -rf "$W"
