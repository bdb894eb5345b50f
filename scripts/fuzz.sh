#!/usr/bin/env bash
# A short fuzzing run per target (issue 21): cargo-fuzz (libFuzzer) on nightly Rust, one target
# at a time, each for SECONDS (default 600), starting from its checked-in corpus
# (fuzz/corpus/TARGET) and regression inputs (fuzz/regressions/TARGET). New inputs that reach
# new code are added to fuzz/corpus/TARGET (minimize with `cargo +nightly fuzz cmin TARGET`
# before committing them); a crash, a time-out (-timeout, 20 s an input) or an input that
# allocates past -rss_limit_mb is saved under fuzz/artifacts/TARGET and stops that target.
#
#   scripts/fuzz.sh                 every target, 600 s each
#   scripts/fuzz.sh 60 ptx npy      two targets, 60 s each
#   scripts/fuzz.sh --minimize [TARGET...]   shrink the corpora before committing them
#
# --minimize keeps, of each corpus, the smallest inputs of at most MAX_INPUT bytes (default
# 12288) that together reach every edge those inputs reach (libFuzzer -merge=1 on edges,
# -use_counters=0: hit counts make nearly every input "new", and the corpora grew to tens of
# MB); the checked-in corpora stay at a few MB.
#
# Prints, per target, the executions, libFuzzer's coverage (cov: edges, ft: features) and
# corpus size from its final lines, and whether it ended clean. Needs `cargo install
# cargo-fuzz` and a nightly toolchain (`rustup toolchain install nightly`). Extra libFuzzer
# flags: FUZZ_FLAGS="-max_len=8192". Lower priority on a shared machine: NICE=10.
set -uo pipefail

cd "$(dirname "$0")/../fuzz"
ALL=(preprocess preprocess_includes frontend ptx launches npy diff_json launch_file)
MINIMIZE=0
if [ "${1:-}" = "--minimize" ]; then
    MINIMIZE=1
    shift
    set -- 0 "$@"
fi
SECONDS_EACH=${1:-600}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=("${ALL[@]}")
NICE=${NICE:-0}

if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: needs cargo-fuzz and a nightly toolchain: rustup toolchain install nightly; cargo install cargo-fuzz" >&2
    exit 2
fi
nice -n "$NICE" cargo +nightly fuzz build || exit 2

if [ $MINIMIZE -eq 1 ]; then
    bin=target/x86_64-unknown-linux-gnu/release
    for t in "${TARGETS[@]}"; do
        small=$(mktemp -d) && kept=$(mktemp -d) || exit 2
        find "corpus/$t" -type f -size -"$(( ${MAX_INPUT:-12288} + 1 ))"c -exec cp {} "$small/" \;
        nice -n "$NICE" "$bin/$t" -merge=1 -use_counters=0 -timeout=60 -rss_limit_mb=4096 \
            "$kept" "$small" >"logs-minimize-$t.txt" 2>&1 || { echo "$t: merge failed (fuzz/logs-minimize-$t.txt)" >&2; exit 1; }
        rm -rf "corpus/$t" && mv "$kept" "corpus/$t" && chmod 755 "corpus/$t" && rm -rf "$small"
        echo "$t: $(ls "corpus/$t" | wc -l) inputs, $(du -sh --apparent-size "corpus/$t" | cut -f1); $(grep -o '[0-9]* new coverage edges' "logs-minimize-$t.txt" | tail -1)"
        rm -f "logs-minimize-$t.txt"
    done
    exit 0
fi

mkdir -p logs
summary=()
status=0
for t in "${TARGETS[@]}"; do
    mkdir -p "corpus/$t" "regressions/$t" "artifacts/$t"
    log="logs/$t.log"
    echo "== $t: ${SECONDS_EACH} s" >&2
    # shellcheck disable=SC2086
    nice -n "$NICE" cargo +nightly fuzz run "$t" "corpus/$t" "regressions/$t" -- \
        -max_total_time="$SECONDS_EACH" -timeout=20 -rss_limit_mb=4096 \
        -print_final_stats=1 ${FUZZ_FLAGS:-} >"$log" 2>&1
    rc=$?
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    last=$(grep -E '^#[0-9]+' "$log" | tail -1)
    cov=$(echo "$last" | grep -o 'cov: [0-9]*' | grep -o '[0-9]*')
    ft=$(echo "$last" | grep -o 'ft: [0-9]*' | grep -o '[0-9]*')
    corp=$(echo "$last" | grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' | cut -d' ' -f2)
    if [ $rc -eq 0 ]; then verdict=clean; else verdict="FOUND (exit $rc; see fuzz/$log and fuzz/artifacts/$t)"; status=1; fi
    line=$(printf '%-11s execs %-10s cov %-6s ft %-7s corpus %-12s %s' "$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$verdict")
    echo "$line" >&2
    summary+=("$line")
done
echo
printf '%s\n' "${summary[@]}"
exit $status
