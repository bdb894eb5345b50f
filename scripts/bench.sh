#!/usr/bin/env bash
# Issue 20's speed table: warpscope's CPU seconds for each launch beside the floor (a C loop
# that only counts the same launch's sectors/wavefronts, benches/floor/), measured in the same
# run on this machine. Best of 3 runs (a loaded machine only ever adds time).
#
#   scripts/bench.sh                  the table
#   scripts/bench.sh --instructions   also instructions counted by callgrind for the 4096²
#                                     transpose and its floor (they repeat exactly; slow)
#
# Needs the CUDA compiler wheels of scripts/test.sh in $VIRTUAL_ENV (or .venv-cuda).
set -euo pipefail
cd "$(dirname "$0")/.."
export VIRTUAL_ENV=${VIRTUAL_ENV:-$PWD/.venv-cuda}
cargo build --release --features cuda --quiet
ws=target/release/warpscope
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/transpose_floor" benches/floor/transpose_sectors.c
cc -O2 -o "$tmp/matmul_floor" benches/floor/matmul_counts.c

# The best of 3 runs of a command (a loaded machine only ever adds time), as /usr/bin/time's
# FORMAT gives it (a sum "A B" is added up); its output to $tmp/out.
best_of_3() {
    local format=$1 best=""
    shift
    for _ in 1 2 3; do
        /usr/bin/time -f "$format" -o "$tmp/time" "$@" > "$tmp/out" 2>/dev/null
        local t
        t=$(awk '{printf "%.3f", $1 + $2}' "$tmp/time")
        if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; fi
    done
    echo "$best"
}
cpu() { best_of_3 "%U %S" "$@"; }   # CPU seconds, user + sys
wall() { best_of_3 "%e" "$@"; }     # wall seconds
ratio() { awk "BEGIN{printf \"%.1f×\", $1 / $2}"; }

transpose=(analyze examples/transpose.cu --kernel transpose_naive --grid 128,128 --block 32,8
    --arg width=4096 --arg height=4096 -q)
# Triton's 4096³ TMA + wgmma matmul (the PTX Triton 3.6 emitted for sm_90a; benches/triton.rs).
P=matmul_tma_kernel_param
triton=(analyze tests/data/h100/triton2/matmul_tma_kernel.ptx --kernel matmul_tma_kernel
    --grid 32,32 --block 128 --dynamic-smem 98328 --cc 9.0 -q
    --tensor-map ${P}_0=u16:4096x4096:8192:64x128:swizzle=128
    --tensor-map ${P}_5=u16:4096x4096:8192:64x64:swizzle=128
    --tensor-map ${P}_10=u16:4096x4096:8192:64x128:swizzle=128)
for k in 1 2 3 6 7 8 11 12 13 15; do triton+=(--arg "${P}_$k=4096"); done
for k in 4 9 14; do triton+=(--arg "${P}_$k=1"); done
matmul=(analyze tests/kernels/compiled/matmul_tiled.cu --kernel matmul_rows --grid 32,32
    --block 16,16 --arg m=512 --arg n=512 --arg k=512 --cc 9.0 -q)
"$ws" "${transpose[@]}" --cc 9.0 > /dev/null # warm the compile cache

floor=$(cpu "$tmp/transpose_floor" 4096)
mfloor=$(cpu "$tmp/matmul_floor" 512)
t90=$(cpu "$ws" "${transpose[@]}" --cc 9.0)
tall=$(cpu "$ws" "${transpose[@]}" --cc all)
tsrc=$(cpu "$ws" "${transpose[@]}" --cc 9.0 --frontend source)
tsrcall=$(cpu "$ws" "${transpose[@]}" --cc all --frontend source)
mm=$(cpu "$ws" "${matmul[@]}")
mmnc=$(cpu "$ws" "${matmul[@]}" --no-checks)
tri=$(wall "$ws" "${triton[@]}")
triauto=$(wall "$ws" "${triton[@]}" --sample-blocks auto)
# A cold cache: NVRTC (or nvcc), ptxas and nvdisasm run; wall seconds beyond the warm run,
# the least of 3 (each run on a fresh cache). ENV... are extra variables for both runs.
cold_added() {
    local best=""
    for i in 1 2 3; do
        rm -rf "$tmp/cache"
        /usr/bin/time -f "%e" -o "$tmp/cold" env WARPSCOPE_CACHE_DIR="$tmp/cache" "$@" "$ws" "${transpose[@]}" --cc 9.0 > /dev/null
        /usr/bin/time -f "%e" -o "$tmp/warm" env WARPSCOPE_CACHE_DIR="$tmp/cache" "$@" "$ws" "${transpose[@]}" --cc 9.0 > /dev/null
        local t
        t=$(awk -v c="$(cat "$tmp/cold")" -v w="$(cat "$tmp/warm")" 'BEGIN{printf "%.2f", c - w}')
        if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; fi
    done
    echo "$best"
}
cold=$(cold_added)
coldnvcc=$(cold_added WARPSCOPE_NVCC_ONLY=1)
# The 16384² transpose: wall seconds on every core, and the largest resident memory.
/usr/bin/time -f "%e %M" -o "$tmp/big" "$ws" analyze examples/transpose.cu --kernel transpose_naive \
    --grid 512,512 --block 32,8 --arg width=16384 --arg height=16384 --cc 9.0 -q > /dev/null
read -r big_wall big_kb < "$tmp/big"

echo "floor: transpose 4096² $floor s CPU, matmul 512³ $mfloor s CPU ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
echo
echo "| launch | CPU s | × floor | goal |"
echo "| --- | --- | --- | --- |"
echo "| 4096² naive transpose, CC 9.0 (compiled, warm cache) | $t90 | $(ratio "$t90" "$floor") | ≤ 2× |"
echo "| same, all 29 CCs | $tall | $(ratio "$tall" "$floor") | ≤ 3× |"
echo "| same, CC 9.0, source path | $tsrc | $(ratio "$tsrc" "$floor") | |"
echo "| same, all 29 CCs, source path | $tsrcall | $(ratio "$tsrcall" "$floor") | |"
echo "| 512³ shared-tile matmul (16×16 tiles), CC 9.0 | $mm | $(ratio "$mm" "$mfloor") | ≤ 4× |"
echo "| same, --no-checks (no racecheck, initcheck) | $mmnc | $(ratio "$mmnc" "$mfloor") | |"
echo "| first run of a .cu (cold cache), wall s added | $cold | | ≤ 0.4 s |"
echo "| same, nvcc instead of NVRTC (WARPSCOPE_NVCC_ONLY=1) | $coldnvcc | | |"
echo "| 16384² transpose, CC 9.0, wall s on $(nproc) cores | $big_wall ($((big_kb / 1024)) MB) | | ≤ 4 s, < 100 MB |"
echo "| Triton 4096³ TMA + wgmma matmul, CC 9.0, wall s | $tri | | ≤ 10 s |"
echo "| same, --sample-blocks auto, wall s | $triauto | | ≤ 1 s |"

if [ "${1:-}" = "--instructions" ]; then
    ir() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null | awk '/Collected/ {print $4}'; }
    fi=$(ir "$tmp/transpose_floor" 4096)
    wi=$(ir "$ws" "${transpose[@]}" --cc 9.0)
    echo
    echo "instructions (callgrind): floor $fi, warpscope CC 9.0 $wi: $(ratio "$wi" "$fi")"
fi
