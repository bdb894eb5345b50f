#!/usr/bin/env bash
# warpscope's GPU subcommands (run, verify, calibrate; cargo feature `cuda`) checked on a real GPU.
#
#   scripts/gpu-check.sh batches   (here) rewrite tests/data/h100/verify/*.txt: one `verify` launch
#                                  per row of the H100 ground-truth CSVs and of tests/data/h100/examples*.csv
#   scripts/gpu-check.sh build     (here) cargo build --release --features cuda, the test binary, both
#                                  stripped into .gpu-carry/ (git-ignored through .git/info/exclude)
#   scripts/gpu-check.sh device    (on the GPU machine, from the repository root, .gpu-carry carried)
#                                  runs everything below, writes $OUT (default /tmp/gpu-check-out)
#   scripts/gpu-check.sh store DIR (here) copy a device run's files (DIR: the tool's files_at) into
#                                  tests/data/h100/: profile-h100.json, copy-sweep-measured.csv,
#                                  gpu-check-summary.txt, verify/*.out (tests/gpu.rs checks them)
#
# One device call does it all (the device tool's `run`, carry [".gpu-carry"]):
#     bash scripts/gpu-check.sh device
# Device steps, each with its own time limit, logs under /tmp/gpu-check-work:
#   1. environment (GPU, driver, ncu, glibc) and the GPU tests (tests/gpu.rs, --test-threads=1)
#   2. `warpscope verify --batch` for each tests/data/h100/verify/*.txt (ground truth first)
#   3. `warpscope calibrate` -> profile-h100.json, with the copy sweep -> copy-sweep-measured.csv
#   4. `warpscope run` of a unit-stride float4 copy (1 GiB per array, random data): must reach
#      >= 90 % of calibrate's copy bandwidth
#   5. verify --lines (per source line, ncu's instrumented source counters) for five launches
#   6. verify of the noisy examples (tests/data/h100/examples-noisy.csv), last
# Files back in $OUT (the device tool returns at most 8), written as the steps go: summary.txt (also
# printed last), verify.txt, verify-lines.txt, tests.txt, profile-h100.json, copy-sweep-measured.csv,
# gpu-check.tar.gz (every log and ncu CSV). BUDGET (seconds, default 560) bounds the whole run.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1

batches() {
    mkdir -p tests/data/h100/verify
    python3 - <<'EOF'
import csv, os

def rows(path):
    with open(path) as f:
        lines = [l for l in f if not l.startswith('#') and l.strip()]
    return list(csv.DictReader(lines))

def q(w):
    return w if all(c.isalnum() or c in "_-.,/=:+" for c in w) else "'" + w + "'"

def line(file, kernel, grid, block, args, smem=0, note=""):
    w = [file, "--kernel", kernel, "--grid", grid, "--block", block]
    for a in args:
        w += ["--arg", a]
    if smem:
        w += ["--dynamic-smem", str(smem)]
    s = " ".join(q(x) for x in w)
    return s + ("  # " + note if note else "")

head = "# warpscope verify --batch {f}  (scripts/gpu-check.sh batches wrote this from {src})\n"
K = "tests/kernels/h100_ground_truth.cu"
gt = "tests/data/ground-truth/h100"
out = []
for r in rows(f"{gt}/global-f32-loads-stores.csv"):
    k = "global_load" if r["op"] == "load" else "global_store"
    out.append(line(K, k, "16384", "256", [f"stride={r['stride']}", f"offset={r['offset']}"],
                    note=f"{r['op']} offset {r['offset']} stride {r['stride']}: requests {r['requests']}, sectors {r['sectors']}"))
f = "tests/data/h100/verify/global-f32-loads-stores.txt"
open(f, "w").write(head.format(f=f, src=f"{gt}/global-f32-loads-stores.csv") + "\n".join(out) + "\n")

out = []
for r in rows(f"{gt}/shared-f32-stride.csv"):
    out.append(line(K, "shared_stride", "1024", "256", [f"stride={r['stride']}"],
                    note=f"instructions {r['instructions']}, wavefronts {r['wavefronts']}"))
f = "tests/data/h100/verify/shared-f32-stride.txt"
open(f, "w").write(head.format(f=f, src=f"{gt}/shared-f32-stride.csv") + "\n".join(out) + "\n")

# Dynamic shared memory per configuration, from the record of every launch.
smem = {}
for r in rows("tests/data/h100/examples-extra.csv"):
    smem[(r["file"], r["kernel"], r["grid"], r["block"], r["args"])] = int(r["dynamic_shared_bytes"] or 0)

for name in ["examples", "examples-noisy"]:
    out, seen = [], set()
    for r in rows(f"tests/data/h100/{name}.csv"):
        key = (r["file"], r["kernel"], r["grid"], r["block"], r["args"])
        if key in seen:
            continue
        seen.add(key)
        args = [a for a in r["args"].split(";") if a]
        out.append(line(r["file"], r["kernel"], r["grid"].replace(";", ","), r["block"].replace(";", ","), args,
                        smem.get(key, 0),
                        note=f"ld {r['global_ld_requests']}/{r['global_ld_sectors']} st {r['global_st_requests']}/{r['global_st_sectors']} shwf {r['shared_ld_wavefronts']}/{r['shared_st_wavefronts']}"))
    f = f"tests/data/h100/verify/{name}.txt"
    open(f, "w").write(head.format(f=f, src=f"tests/data/h100/{name}.csv") + "\n".join(out) + "\n")
for f in sorted(os.listdir("tests/data/h100/verify")):
    n = sum(1 for l in open("tests/data/h100/verify/" + f) if l.strip() and not l.startswith("#"))
    print(f"tests/data/h100/verify/{f}: {n} launches")
EOF
}

build() {
    set -e
    local ex
    ex=$(git rev-parse --git-path info/exclude)
    mkdir -p "$(dirname "$ex")"
    grep -qx '/.gpu-carry/' "$ex" 2>/dev/null || echo '/.gpu-carry/' >> "$ex"
    cargo build --release --features cuda
    local tb
    tb=$(cargo test --release --features cuda --test gpu --no-run 2>&1 | sed -n 's/.*Executable tests\/gpu.rs (\(.*\))/\1/p' | tail -1)
    [ -n "$tb" ] || { echo "no test binary found"; exit 1; }
    rm -rf .gpu-carry && mkdir -p .gpu-carry
    objcopy --strip-debug target/release/warpscope .gpu-carry/warpscope
    objcopy --strip-debug "$tb" .gpu-carry/gpu-tests
    echo "glibc symbol versions needed (device has its own glibc; must be >= these):"
    objdump -T .gpu-carry/warpscope .gpu-carry/gpu-tests | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1
    ls -la .gpu-carry
    du -sh .gpu-carry
    echo "now: device tool run, carry [\".gpu-carry\"], command: bash scripts/gpu-check.sh device"
}

device() {
    OUT=${OUT:-/tmp/gpu-check-out}
    mkdir -p "$OUT"
    D=/tmp/gpu-check-work
    rm -rf "$D" && mkdir -p "$D"
    W=.gpu-carry/warpscope
    export WARPSCOPE_BIN=$PWD/$W
    export NCCL_NVLS_ENABLE=0
    S=$OUT/summary.txt
    : > "$S"
    T0=$(date +%s)
    BUDGET=${BUDGET:-560}
    say() { echo "$*" | tee -a "$S"; }
    # Seconds for the next step: its own limit, or what is left of the budget.
    lim() { local left=$(( BUDGET - ($(date +%s) - T0) )); [ "$left" -lt "$1" ] && echo $(( left > 5 ? left : 5 )) || echo "$1"; }
    {
        echo "== environment"
        date -u
        nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.max.sm,clocks.mem,memory.total --format=csv || true
        ncu --version | tail -1 || echo "no ncu"
        ldd --version | head -1
        objdump -T $W 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1
        ldconfig -p | grep -E 'libcuda\.so|libnvrtc\.so' | head -5
        ls /usr/local/cuda/lib64/libnvrtc* 2>/dev/null | head -3
        $W --version
        echo "== GPU tests"
    } > "$D/env.txt" 2>&1
    timeout "$(lim 240)" .gpu-carry/gpu-tests --test-threads=1 --include-ignored > "$D/tests.txt" 2>&1
    say "$(head -4 "$D/env.txt" | tail -2 | tr '\n' ' ')"
    say "tests: $(grep -E '^test result' "$D/tests.txt" || echo 'no result')"
    grep -E '^skipping|FAILED|panicked' "$D/tests.txt" | head -6 | sed 's/^/  /' | tee -a "$S"

    verify_batch() {
        local b=$1 f=tests/data/h100/verify/$1.txt t0
        t0=$(date +%s)
        timeout "$(lim "$2")" $W verify --batch "$f" --ncu-csv "$D/ncu-$b.csv" > "$D/verify-$b.txt" 2> "$D/verify-$b.err"
        local rc=$?
        say "verify $b: rc=$rc in $(( $(date +%s) - t0 )) s: $(grep -E 'launches exact' "$D/verify-$b.txt" | head -1) $(tail -1 "$D/verify-$b.err" | cut -c1-300)"
        { echo "######## verify --batch $f (rc=$rc)"; cat "$D/verify-$b.txt"; tail -5 "$D/verify-$b.err"; } >> "$OUT/verify.txt"
    }
    : > "$OUT/verify.txt"
    verify_batch global-f32-loads-stores 200
    verify_batch shared-f32-stride 120
    verify_batch examples 150

    t0=$(date +%s)
    timeout "$(lim 200)" $W calibrate -o "$OUT/profile-h100.json" --sweep-csv "$OUT/copy-sweep-measured.csv" > "$D/calibrate.txt" 2>&1
    say "calibrate: rc=$? in $(( $(date +%s) - t0 )) s"
    sed 's/^/  /' "$D/calibrate.txt" | tee -a "$S" > /dev/null

    # The other side of measure_copy_sweep: `warpscope sweep --measure` (the other engineer's CLI).
    timeout "$(lim 90)" $W sweep offset --range 0..8 --gpu h100 --profile "h100=$OUT/profile-h100.json" --measure \
        > "$D/sweep-measure.txt" 2>&1
    say "sweep offset --measure: rc=$?"
    tail -4 "$D/sweep-measure.txt" | sed 's/^/  /' | tee -a "$S" > /dev/null

    # Unit-stride float4 copy: 2^26 float4 = 1 GiB per array.
    timeout "$(lim 120)" $W run examples/vector_types.cu --kernel copy_vec4 --grid 262144 --block 256 --arg n=67108864 \
        --alloc a=268435456 --alloc b=268435456 --init random --repeat 30 --warmup 5 > "$D/run-copy.txt" 2>&1
    say "run copy_vec4: rc=$?"
    sed 's/^/  /' "$D/run-copy.txt" | tee -a "$S" > /dev/null
    timeout "$(lim 120)" $W run examples/harris.cu --kernel offset_copy --grid 1048576 --block 256 --arg n=268435456 --arg offset=0 \
        --alloc a=268435456 --alloc b=268435456 --init random --repeat 30 --warmup 5 > "$D/run-scalar.txt" 2>&1
    say "run offset_copy (2^28 floats, offset 0; copy-bandwidth.csv says 2393.2): rc=$?"
    sed 's/^/  /' "$D/run-scalar.txt" | tee -a "$S" > /dev/null
    python3 - "$OUT" <<'EOF2' | tee -a "$S"
import json, re, sys
d = sys.argv[1]
try:
    copy = json.load(open(f"{d}/profile-h100.json"))["copy_gbps"]
    run = float(re.search(r"effective bandwidth: ([0-9.]+) GB/s", open("/tmp/gpu-check-work/run-copy.txt").read()).group(1))
    pct = 100 * run / copy
    print(f"run copy_vec4 {run:.1f} GB/s = {pct:.1f} % of calibrate's copy {copy:.1f} GB/s: {'PASS' if pct >= 90 else 'FAIL'} (>= 90 %)")
except Exception as e:
    print(f"run vs calibrate: cannot compare: {e}")
try:
    meas = {}
    for path, key in ((f"{d}/copy-sweep-measured.csv", "now"), ("tests/data/ground-truth/h100/copy-bandwidth.csv", "csv")):
        for l in open(path):
            if l.startswith("#") or l.startswith("experiment"):
                continue
            e, p, g = l.strip().split(",")
            meas.setdefault((e, int(p)), {})[key] = float(g)
    both = {k: v for k, v in meas.items() if "now" in v and "csv" in v}
    rel = sorted(abs(v["now"] - v["csv"]) / v["csv"] for v in both.values())
    worst = max(both.items(), key=lambda kv: abs(kv[1]["now"] - kv[1]["csv"]) / kv[1]["csv"])
    print(f"copy sweep vs copy-bandwidth.csv: {len(rel)} points, median |diff| {rel[len(rel)//2]*100:.1f} %, max {rel[-1]*100:.1f} % at {worst[0]} ({worst[1]})")
    for k in [("offset", 0), ("offset", 1), ("offset", 32), ("stride", 1), ("stride", 2), ("stride", 8), ("stride", 32)]:
        v = meas.get(k, {})
        print(f"  {k[0]} {k[1]}: now {v.get('now', float('nan')):.1f}, csv {v.get('csv', float('nan')):.1f} GB/s")
except Exception as e:
    print(f"sweep comparison failed: {e}")
EOF2

    # Per source line (ncu's instrumented source counters), single launches.
    {
        for l in "examples/transpose.cu --kernel transpose_coalesced --grid 32,32 --block 32,8 --arg width=1024 --arg height=1024" \
                 "examples/transpose.cu --kernel transpose_no_bank_conflicts --grid 32,32 --block 32,8 --arg width=1024 --arg height=1024" \
                 "examples/harris.cu --kernel offset<float> --grid 4096 --block 256 --arg s=1" \
                 "examples/vector_types.cu --kernel copy_vec4_shifted --grid 4096 --block 256 --arg n=1048576" \
                 "tests/kernels/h100_ground_truth.cu --kernel shared_stride --grid 1024 --block 256 --arg stride=2"; do
            echo "######## verify $l --lines"
            # shellcheck disable=SC2086
            timeout "$(lim 60)" $W verify $l --lines
            echo "rc=$?"
        done
    } > "$OUT/verify-lines.txt" 2>&1
    say "verify --lines: $(grep -c '^rc=0' "$OUT/verify-lines.txt") of 5 rc=0"

    verify_batch examples-noisy 300

    cp "$D/tests.txt" "$OUT/tests.txt"
    tar -czf "$OUT/gpu-check.tar.gz" -C /tmp gpu-check-work
    say "total $(( $(date +%s) - T0 )) s"
    echo
    echo "==== summary"
    cat "$S"
}

store() {
    local from=${1:?usage: scripts/gpu-check.sh store DIR}
    local w
    w=$(mktemp -d)
    tar -xzf "$from/gpu-check.tar.gz" -C "$w" || exit 1
    install -m 644 "$from/profile-h100.json" "$from/copy-sweep-measured.csv" tests/data/h100/
    install -m 644 "$from/summary.txt" tests/data/h100/gpu-check-summary.txt
    install -m 644 "$from/verify-lines.txt" tests/data/h100/verify/lines.out
    for b in global-f32-loads-stores shared-f32-stride examples examples-noisy; do
        install -m 644 "$w/gpu-check-work/verify-$b.txt" "tests/data/h100/verify/$b.out"
    done
    rm -rf "$w"
    git status --short tests/data/h100
}

case "${1:-}" in
    batches) batches ;;
    store) store "${2:-}" ;;
    build) build ;;
    device) device ;;
    *) echo "usage: scripts/gpu-check.sh batches|build|device|store DIR"; exit 2 ;;
esac
