#!/usr/bin/env bash
# Measures the compiled-path ground truth on an H100 (scripts/h100/compiled/, tests/kernels/compiled/).
#
# usage (from the repository root, on a machine with an H100, CUDA 13 nvcc, ncu, cuobjdump, python3 with
# torch and triton):
#     bash scripts/h100/compiled/measure.sh [OUTDIR]        (OUTDIR defaults to $OUT, else /tmp/warpscope-compiled)
#
# Steps:
#   1. nvcc -O3 -arch=sm_90 -lineinfo -Xptxas -v builds scripts/h100/compiled/driver.cu (which #includes every
#      tests/kernels/compiled/*.cu); each .cu is also compiled alone to PTX (-ptx) and to a cubin (-cubin) with
#      the same flags; cuobjdump -sass dumps the SASS.
#   2. ncu --query-metrics is saved (raw.tar.gz: query-ldgsts.txt, query-check.txt); a one-launch ncu probe
#      drops any requested metric this ncu does not know (recorded in the CSV header).
#   3. ncu --clock-control none --print-units base --csv --metrics LIST: every launch of the driver (each
#      kernel launched twice, rep 0 and rep 1) and of triton_kernels.py (the Triton kernels, twice each,
#      -k filtered); Triton first runs once without ncu to compile and write the fixtures.
#   4. ncu --section SourceCounters --page source --print-source sass --csv: the instrumented per-instruction
#      counters of the shared-memory kernels (matmul_rows, matmul_cols, reduce_cg, histogram256,
#      cp_async_copy; then the Triton matmul if time allows), memory rows only.
#   5. util.py joins and summarises.
# Outputs in OUTDIR:
#   compiled.csv           -> tests/data/h100/compiled/compiled.csv
#   source-counters.csv    -> tests/data/h100/compiled/source-counters.csv
#   sass-vs-ptx.txt        -> tests/data/h100/compiled/sass-vs-ptx.txt (static memory instructions, PTX vs SASS)
#   fixtures.tar.gz        triton_*.ptx/json/sass, nvcc_*.ptx/sass -> tests/data/h100/compiled/
#   raw.tar.gz             ncu raw CSVs, manifests, build output, probe log, commands
#   measure.log            everything printed
set -u
set -o pipefail

ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
OUTDIR=${1:-${OUT:-/tmp/warpscope-compiled}}
mkdir -p "$OUTDIR"
WORK=$(mktemp -d /tmp/warpscope-compiled.XXXXXX)
S=scripts/h100/compiled
K=tests/kernels/compiled
CMDS=$WORK/commands.txt
T0=$(date +%s)
elapsed() { echo $(( $(date +%s) - T0 )); }
# logc TEXT: records a command line (as run from the repository root; $WORK = scratch folder)
logc() { echo "$*" | sed "s#$WORK#\$WORK#g" >> "$CMDS"; echo "+ $*" | sed "s#$WORK#\$WORK#g"; }

REQUESTED="l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,\
l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,\
l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum,\
l1tex__t_requests_pipe_lsu_mem_global_op_red.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum,\
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,\
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum,\
smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,\
smsp__sass_inst_executed_op_shared_atom.sum,smsp__sass_inst_executed_op_global_ld.sum,\
smsp__sass_inst_executed_op_global_st.sum,smsp__sass_inst_executed_op_global_atom.sum,\
smsp__sass_inst_executed_op_global_red.sum,smsp__sass_inst_executed_op_ldgsts.sum"
# cp.async (LDGSTS) metrics, chosen from `ncu --query-metrics | grep -i ldgsts` on the H100 (ncu 2025.3.1):
# the l1tex__ ldgsts hardware counters exist only for LDGSTS.ACCESS (cache_access); the smsp__sass_* ones are
# instrumented and cover LDGSTS.BYPASS (16-byte cp.async.cg) too.
LDGSTS_M="smsp__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum,\
smsp__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts.sum,\
smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum,\
smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum,\
smsp__sass_inst_executed_op_ldgsts_cache_bypass.sum,smsp__sass_inst_executed_op_ldgsts_cache_access.sum,\
l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts_cache_access.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_access.sum,\
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum,smsp__inst_executed_op_ldgsts.sum,\
smsp__inst_executed_op_ldgsts_pred_off_all.sum"
# Instrumented (SASS-patched, exact and repeatable) versions of the wavefront/sector counters.
EXACT_M="smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum,\
smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_atom.sum,smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum,\
smsp__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ld.sum,smsp__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_st.sum,\
smsp__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_atom.sum,smsp__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_red.sum,\
smsp__sass_inst_executed_op_ldsm.sum,smsp__sass_inst_executed_op_shared_gmma.sum"
LAUNCH_M="launch__grid_size,launch__block_size,launch__shared_mem_per_block_dynamic"
EXTRA="smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,\
smsp__inst_executed_op_global_ld.sum,smsp__inst_executed_op_global_st.sum,\
l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum,\
launch__shared_mem_per_block_static,launch__registers_per_thread"

main() {
    cd "$ROOT" || exit 1
    echo "== environment"
    date -u
    nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.max.sm --format=csv || true
    GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
    DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
    NCUV=$(ncu --version | tail -1)
    NVCCV=$(nvcc --version | grep -i release | sed 's/^.*release/nvcc release/')
    PYV=$(python3 -c 'import sys, torch, triton; print(f"python {sys.version.split()[0]}; torch {torch.__version__}; triton {triton.__version__}")' 2>&1 | tail -1)
    echo "GPU: $GPU; driver $DRIVER; ncu $NCUV; $NVCCV; $PYV"
    mkdir -p "$WORK/fixtures"

    echo "== build ($(elapsed) s)"
    logc nvcc -O3 -arch=sm_90 -lineinfo -Xptxas -v -o $WORK/driver $S/driver.cu
    nvcc -O3 -arch=sm_90 -lineinfo -Xptxas -v -o "$WORK/driver" $S/driver.cu > "$WORK/build.txt" 2>&1
    grep -E 'error|Function properties|registers|spill' "$WORK/build.txt" | grep -v '^ptxas info    : Compiling' | head -40
    if [ ! -x "$WORK/driver" ]; then cat "$WORK/build.txt"; echo "BUILD FAILED"; fi
    # per-file PTX and cubin, in the background
    PIDS=()
    for f in $K/*.cu; do
        b=$(basename "$f" .cu)
        logc nvcc -O3 -arch=sm_90 -lineinfo -ptx -o $WORK/fixtures/nvcc_$b.ptx $f
        logc nvcc -O3 -arch=sm_90 -lineinfo -cubin -o $WORK/nvcc_$b.cubin $f
        ( nvcc -O3 -arch=sm_90 -lineinfo -ptx -o "$WORK/fixtures/nvcc_$b.ptx" "$f" &&
          nvcc -O3 -arch=sm_90 -lineinfo -cubin -o "$WORK/nvcc_$b.cubin" "$f" &&
          cuobjdump -sass "$WORK/nvcc_$b.cubin" > "$WORK/fixtures/nvcc_$b.sass" ) > "$WORK/nvcc_$b.log" 2>&1 &
        PIDS+=($!)
    done
    logc cuobjdump -sass $WORK/driver '>' $WORK/sass.txt
    cuobjdump -sass "$WORK/driver" > "$WORK/sass.txt" 2>&1 || echo "cuobjdump failed"

    echo "== metric names ($(elapsed) s)"
    logc ncu --query-metrics '>' $WORK/query-metrics.txt
    ncu --query-metrics > "$WORK/query-metrics.txt" 2>&1
    grep -i ldgsts "$WORK/query-metrics.txt" > "$WORK/query-ldgsts.txt"
    awk '{print $1}' "$WORK/query-metrics.txt" | sort -u > "$WORK/query-names.txt"
    echo "ldgsts metric names listed by ncu --query-metrics:"
    grep -E '^(l1tex|smsp)__' "$WORK/query-names.txt" | grep -i ldgsts | paste -sd' ' -
    for m in $(echo "$REQUESTED,$LDGSTS_M,$EXACT_M,$EXTRA" | tr , ' '); do
        b=${m%.sum}
        if grep -qx "$b" "$WORK/query-names.txt"; then echo "listed: $m"; else echo "NOT listed by --query-metrics: $m"; fi
    done > "$WORK/query-check.txt"
    grep NOT "$WORK/query-check.txt"
    WANT="$REQUESTED,$LDGSTS_M,$EXACT_M,$LAUNCH_M,$EXTRA"
    logc python3 $S/util.py probe --metrics '<requested list>' --out $WORK/metrics.txt --dropped $WORK/dropped.txt -- $WORK/driver $WORK/manifest_probe.csv 1 gemm
    python3 $S/util.py probe --metrics "$WANT" --out "$WORK/metrics.txt" --dropped "$WORK/dropped.txt" -- \
        "$WORK/driver" "$WORK/manifest_probe.csv" 1 gemm > "$WORK/probe.log" 2>&1
    tail -5 "$WORK/probe.log"
    METRICS=$(head -1 "$WORK/metrics.txt")
    [ -n "$METRICS" ] || METRICS="$WANT"

    echo "== ncu: C++ kernels ($(elapsed) s)"
    logc ncu --clock-control none --print-units base --csv --metrics '$METRICS' $WORK/driver $WORK/manifest_c.csv 2 '>' $WORK/ncu_c.csv
    ncu --clock-control none --print-units base --csv --metrics "$METRICS" \
        "$WORK/driver" "$WORK/manifest_c.csv" 2 > "$WORK/ncu_c.csv" 2> "$WORK/ncu_c.err"
    echo "rc=$? ($(elapsed) s)"; grep -h '==ERROR==' "$WORK/ncu_c.csv" "$WORK/ncu_c.err" | sort | uniq -c | head; tail -2 "$WORK/ncu_c.err"

    echo "== Triton: compile, fixtures ($(elapsed) s)"
    logc python3 $S/triton_kernels.py --manifest $WORK/manifest_triton_plain.csv --fixtures $WORK/fixtures --reps 1
    PYTHONUNBUFFERED=1 python3 $S/triton_kernels.py --manifest "$WORK/manifest_triton_plain.csv" \
        --fixtures "$WORK/fixtures" --reps 1 2>&1 | tee "$WORK/triton_plain.log" | grep -v Warning | tail -25
    for c in "$WORK"/fixtures/triton_*.cubin; do
        [ -e "$c" ] || continue
        cuobjdump -sass "$c" > "${c%.cubin}.sass" 2>&1 || nvdisasm -c "$c" > "${c%.cubin}.sass" 2>&1
    done

    echo "== ncu: Triton kernels ($(elapsed) s)"
    TK='regex:add_kernel|softmax_kernel|matmul_kernel'
    logc ncu --clock-control none --print-units base --csv --metrics '$METRICS' -k "$TK" python3 $S/triton_kernels.py --manifest $WORK/manifest_triton.csv --reps 2 '>' $WORK/ncu_triton.csv
    PYTHONUNBUFFERED=1 ncu --clock-control none --print-units base --csv --metrics "$METRICS" -k "$TK" \
        python3 $S/triton_kernels.py --manifest "$WORK/manifest_triton.csv" --reps 2 > "$WORK/ncu_triton.csv" 2> "$WORK/ncu_triton.err"
    echo "rc=$? ($(elapsed) s)"; grep -h '==ERROR==' "$WORK/ncu_triton.csv" "$WORK/ncu_triton.err" | sort | uniq -c | head
    grep -h 'triton done\|FAILED' "$WORK/ncu_triton.csv" "$WORK/ncu_triton.err" | head -5

    echo "== ncu: source counters ($(elapsed) s)"
    SRC_K="matmul_rows matmul_cols reduce_cg histogram256 cp_async_copy"
    logc ncu --clock-control none --csv --section SourceCounters --page source --print-source sass $WORK/driver $WORK/manifest_src.csv 1 $SRC_K '>' $WORK/ncu_source_c.csv
    ncu --clock-control none --csv --section SourceCounters --page source --print-source sass \
        "$WORK/driver" "$WORK/manifest_src.csv" 1 $SRC_K > "$WORK/ncu_source_c.csv" 2> "$WORK/ncu_source_c.err"
    echo "rc=$? ($(elapsed) s)"
    SRC_RAW=("$WORK/ncu_source_c.csv")
    if [ "$(elapsed)" -lt 330 ]; then
        logc ncu --clock-control none --csv --section SourceCounters --page source --print-source sass -k regex:matmul_kernel -c 2 python3 $S/triton_kernels.py --manifest $WORK/manifest_src_triton.csv --reps 1 '>' $WORK/ncu_source_triton.csv
        ncu --clock-control none --csv --section SourceCounters --page source --print-source sass \
            -k regex:matmul_kernel -c 2 python3 $S/triton_kernels.py --manifest "$WORK/manifest_src_triton.csv" --reps 1 \
            > "$WORK/ncu_source_triton.csv" 2> "$WORK/ncu_source_triton.err"
        echo "triton source rc=$? ($(elapsed) s)"
        SRC_RAW+=("$WORK/ncu_source_triton.csv")
    else
        echo "skipping the Triton matmul source counters (time)"
    fi

    echo "== summaries ($(elapsed) s)"
    for p in "${PIDS[@]}"; do wait "$p" || echo "per-file nvcc job $p failed"; done
    cat "$WORK"/nvcc_*.log 2>/dev/null | head -20
    {
        echo "GPU: $GPU; driver $DRIVER; ncu $NCUV; $NVCCV; $PYV"
        echo "date: $(date -u +%Y-%m-%dT%H:%MZ); produced by: bash scripts/h100/compiled/measure.sh (device machine, repository root)"
        echo "commands, in order (\$WORK = a scratch folder; '\$METRICS' = the columns of this file):"
        sed 's/^/  /' "$CMDS"
        echo "metrics requested but rejected by this ncu (dropped): $(cat "$WORK/dropped.txt" 2>/dev/null)"
        grep NOT "$WORK/query-check.txt" | sed 's/^/(note) /'
        echo "every kernel configuration was launched twice in one process (rep 0, rep 1); rows are rep 0"
        echo "smsp__sass_* metrics are counted by SASS instrumentation (exact and repeatable: no 'differs' line names one)."
        echo "  l1tex__* and smsp__inst_executed_* are hardware counters; the shared-memory wavefront ones"
        echo "  (l1tex__data_pipe_lsu_wavefronts_mem_shared_*) vary run to run (the 'differs' lines below): compare"
        echo "  warpscope with smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_* instead."
        echo "  smsp__sass_inst_executed_* count an instruction when at least one thread is predicated on;"
        echo "  smsp__inst_executed_* (hardware) also count fully predicated-off ones, e.g. ptxas's '@!PT LDS RZ, [RZ]'"
        echo "  padding before LDGSTS (cp_async_copy, Triton matmul) and the if-guarded LDGSTS of the last tile."
        echo "l1tex__t_*_global_op_ld (hardware) include LDGSTS: cp_async_copy and the Triton matmul (num_stages 3)"
        echo "  show global-load requests/sectors with zero smsp__sass_inst_executed_op_global_ld."
    } > "$WORK/header.txt"
    python3 $S/util.py collect --out "$OUTDIR/compiled.csv" --metrics "$METRICS" --header "$WORK/header.txt" \
        --pair "$WORK/manifest_c.csv" "$WORK/ncu_c.csv" --pair "$WORK/manifest_triton.csv" "$WORK/ncu_triton.csv"
    {
        echo "GPU: $GPU; driver $DRIVER; ncu $NCUV; $NVCCV; $PYV"
        echo "date: $(date -u +%Y-%m-%dT%H:%MZ); produced by: bash scripts/h100/compiled/measure.sh"
        echo "ncu --clock-control none --csv --section SourceCounters --page source --print-source sass (instrumented"
        echo "  per-instruction counters, one launch per kernel: the C++ kernels as launched by scripts/h100/compiled/driver.cu,"
        echo "  then the first two matmul_kernel launches of triton_kernels.py (num_stages 3, then 1), if present);"
        echo "  only memory-instruction rows (Address Space set, or a memory SASS mnemonic) and memory columns are kept;"
        echo "  ncu prints each C++ launch's page twice: kept once. 'Instructions Executed' counts warp-level executions"
        echo "  including fully predicated-off ones ('@!PT LDS RZ, [RZ]' padding executes with 0 threads)."
        echo "offset = instruction address - the kernel's first instruction address"
    } > "$WORK/src_header.txt"
    python3 $S/util.py srcfilter --out "$OUTDIR/source-counters.csv" --header "$WORK/src_header.txt" \
        --label 'matmul_kernel=matmul_kernel[fixture=matmul],matmul_kernel[fixture=matmul_s1]' "${SRC_RAW[@]}"
    {
        echo "# Memory instructions per kernel, PTX next to SASS (static counts, from the code, not executed counts)."
        echo "# $NVCCV (nvcc -O3 -arch=sm_90 -lineinfo; PTX = nvcc -ptx of each tests/kernels/compiled/*.cu alone;"
        echo "#   SASS = cuobjdump -sass of the measured driver, checked against each file's own cubin);"
        echo "# Triton: kernel.asm['ptx'] and cuobjdump -sass of kernel.asm['cubin']; $PYV"
        echo "# classes: 'global ld' = ld.global*/LDG*, 'shared ld' = ld.shared*/LDS*, 'generic' = no state space (LD/ST),"
        echo "#   'cp.async' = cp.async.ca/cg/LDGSTS, 'cp.async sync' = commit/wait_group / LDGDEPBAR / DEPBAR;"
        echo "#   widths in bits per thread; a '?' after an opcode = predicated; 'x N' = N consecutive identical"
    } > "$WORK/sp_header.txt"
    SP=()
    for f in $K/*.cu; do
        b=$(basename "$f" .cu)
        SP+=(--ptx "$f=$WORK/fixtures/nvcc_$b.ptx" --cubin-sass "$f=$WORK/fixtures/nvcc_$b.sass")
    done
    for p in "$WORK"/fixtures/triton_*.ptx; do
        [ -e "$p" ] || continue
        b=$(basename "$p" .ptx)
        SP+=(--ptx "$S/triton_kernels.py:${b#triton_}=$p" --cubin-sass "$S/triton_kernels.py:${b#triton_}=${p%.ptx}.sass")
    done
    python3 $S/util.py sassptx --out "$OUTDIR/sass-vs-ptx.txt" --header "$WORK/sp_header.txt" --sass "$WORK/sass.txt" "${SP[@]}" > /dev/null
    grep -E '^== |differs|DIFFER' "$OUTDIR/sass-vs-ptx.txt"
    echo "== done ($(elapsed) s)"
}

main "$@" 2>&1 | tee "$OUTDIR/measure.log"
# the fixtures' SASS without the instruction encodings (/* 0x... */)
for f in "$WORK"/fixtures/*.sass; do
    [ -e "$f" ] && sed -E -i 's#[[:space:]]*/\* 0x[0-9a-f]{16} \*/##; /^[[:space:]]*$/d' "$f"
done
(cd "$WORK/fixtures" && tar -czf "$OUTDIR/fixtures.tar.gz" --exclude='*.cubin' .)
(cd "$WORK" && tar -czf "$OUTDIR/raw.tar.gz" --exclude=./driver --exclude='*.cubin' --exclude=./fixtures .)
rm -rf "$WORK"
