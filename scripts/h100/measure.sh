#!/usr/bin/env bash
# Measures every kernel configuration of examples/*.cu on the GPU with Nsight Compute and
# writes tests/data/h100-format results.
#
# usage (from the repository root, on a machine with an H100, nvcc, ncu and python3):
#     scripts/h100/measure.sh [OUTDIR]          (OUTDIR defaults to $OUT, else /tmp/warpscope-h100)
#
# Steps: build scripts/h100/driver.cu (which #includes every examples/*.cu) with
# nvcc -O3 -arch=sm_90 -Xptxas -v; dump its SASS; run the driver once per group of kernels
# (banks, harris, aos, pitch, transpose, reduce, vector), each under
#   ncu --clock-control none --print-units base --csv --metrics <list>
# (every launch profiled, in order); join ncu's rows with the driver's manifests
# (scripts/h100/collect.py). Outputs in OUTDIR:
#   examples.csv, examples-noisy.csv   -> copy to tests/data/h100/ (configurations whose counts repeat /
#                                         whose shared-load wavefronts vary between repeats)
#   shared-f32-stride-remeasured.csv, shared-f32-stride-remeasured-nofill.csv  -> tests/data/h100/
#   examples-extra.csv                 every metric, every launch (ncu kernel names, dynamic smem)
#   ncu_GROUP.csv, manifest_GROUP.csv  the raw inputs of the join
#   build.txt                          nvcc/ptxas -v output (registers, smem, stack, spills)
#   sass.txt                           cuobjdump -sass of the whole driver
#   measure.log                        everything printed (versions, SASS memory-instruction summary, table)
# With PACK_RAW=1 the four raw files are packed into raw.tar.gz (the device tool returns <= 8 files).
set -u
set -o pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUTDIR=${1:-${OUT:-/tmp/warpscope-h100}}
mkdir -p "$OUTDIR"
WORK=$(mktemp -d /tmp/warpscope-measure.XXXXXX)

REQUIRED="l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,\
l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,\
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,\
smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_global_ld.sum,dram__bytes_read.sum,dram__bytes_write.sum"
EXTRA="smsp__inst_executed_op_shared_st.sum,smsp__inst_executed_op_global_st.sum,\
l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum,\
l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_local_op_st.sum,\
launch__registers_per_thread"

main() {
    cd "$ROOT" || exit 1
    echo "== environment"
    date -u
    nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.max.sm,clocks.mem --format=csv || true
    GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
    DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
    NCUV=$(ncu --version | tail -1)
    NVCCV=$(nvcc --version | grep -i release | sed 's/^.*release/nvcc release/')
    echo "GPU: $GPU; driver $DRIVER; ncu: $NCUV; $NVCCV"

    echo "== build"
    nvcc -O3 -arch=sm_90 -lineinfo -Xptxas -v -o "$WORK/driver" scripts/h100/driver.cu 2>&1 | tee "$OUTDIR/build.txt"
    if [ ! -x "$WORK/driver" ]; then echo "BUILD FAILED"; return 1; fi
    cuobjdump -sass "$WORK/driver" > "$OUTDIR/sass.txt" 2>&1 || echo "cuobjdump failed"
    echo "== SASS memory instructions per kernel (mnemonic counts)"
    awk '
        /Function :/ { if (fn != "") dump(); fn = $3; delete c; next }
        /\/\*[0-9a-f]+\*\// {
            for (i = 1; i <= NF; i++) if ($i ~ /^(LDG|STG|LDS|STS|LDL|STL|LD|ST|LDSM|ATOMS|RED)\./ || $i ~ /^(LDS|STS|LDG|STG|LDL|STL)$/) { c[$i]++; break }
        }
        function dump(   k, s) { s = ""; for (k in c) s = s " " k "x" c[k]; print fn ":" s }
        END { if (fn != "") dump() }' "$OUTDIR/sass.txt"

    echo "== sanity run (no profiler)"
    "$WORK/driver" "$WORK/manifest_plain.csv" 2> "$WORK/plain.err"
    rc=$?
    tail -3 "$WORK/plain.err"
    if [ $rc -ne 0 ]; then cat "$WORK/plain.err"; echo "DRIVER FAILED rc=$rc"; return 1; fi

    echo "== ncu runs (one process per group of kernels)"
    METRICS="$REQUIRED,$EXTRA"
    NOTE=""
    PAIRS=()
    for grp in banks harris aos pitch transpose reduce vector; do
        t0=$(date +%s)
        ncu --clock-control none --print-units base --csv --metrics "$METRICS" \
            "$WORK/driver" "$OUTDIR/manifest_$grp.csv" "$grp" > "$OUTDIR/ncu_$grp.csv" 2> "$WORK/ncu_$grp.err"
        rc=$?
        if { [ $rc -ne 0 ] || grep -q '==ERROR==' "$OUTDIR/ncu_$grp.csv" "$WORK/ncu_$grp.err"; } &&
            [ "$METRICS" != "$REQUIRED" ]; then
            echo "ncu with extra metrics failed (rc=$rc); retrying with the required metrics only"
            grep '==ERROR==' "$OUTDIR/ncu_$grp.csv" "$WORK/ncu_$grp.err" | head -10
            METRICS="$REQUIRED"
            NOTE="extra metrics unavailable"
            ncu --clock-control none --print-units base --csv --metrics "$METRICS" \
                "$WORK/driver" "$OUTDIR/manifest_$grp.csv" "$grp" > "$OUTDIR/ncu_$grp.csv" 2> "$WORK/ncu_$grp.err"
            rc=$?
        fi
        echo "ncu $grp rc=$rc in $(( $(date +%s) - t0 )) s"
        grep -v '^alloc\|^note:' "$WORK/ncu_$grp.err" | grep -v '^device 0\|^driver done' | tail -5
        grep '==ERROR==' "$OUTDIR/ncu_$grp.csv" | sort | uniq -c | head -5
        PAIRS+=(--pair "$OUTDIR/manifest_$grp.csv" "$OUTDIR/ncu_$grp.csv")
    done

    echo "== join"
    python3 scripts/h100/collect.py "$OUTDIR" "${PAIRS[@]}" \
        --gpu "$GPU" --driver "$DRIVER" --ncu "$NCUV" --nvcc "$NVCCV" --metrics-note "$NOTE"
    echo "collect rc=$?"
}

main "$@" 2>&1 | tee "$OUTDIR/measure.log"
rm -rf "$WORK"
if [ "${PACK_RAW:-0}" = 1 ]; then
    (cd "$OUTDIR" && tar -czf raw.tar.gz ncu_*.csv manifest_*.csv sass.txt build.txt &&
        rm -f ncu_*.csv manifest_*.csv sass.txt build.txt)
fi
