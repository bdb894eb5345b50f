#!/usr/bin/env bash
# The test command of the README and CI: installs the CUDA compiler from PyPI into a virtual
# environment (no GPU needed; reused when present), so the compiled path (.cu → nvcc → PTX →
# SIMT executor) is tested too, then runs every test (GPU tests skip without a GPU),
# `warpscope check` on the examples' launch file, the Python package's tests, and the
# README's and the book's outputs and links (scripts/readme.py --check, mdbook build).
#
#   scripts/test.sh     (the environment: WARPSCOPE_VENV, else the active VIRTUAL_ENV, else
#                        .venv-cuda, made here)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${WARPSCOPE_VENV:-${VIRTUAL_ENV:-.venv-cuda}}
wheels="nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-crt nvidia-cuda-nvrtc nvidia-cuda-cccl nvidia-cuda-profiler-api nvidia-cuda-nvdisasm"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import nvidia' 2>/dev/null || [ -z "$(ls -d "$venv"/lib/python*/site-packages/nvidia/cu*/bin/nvcc 2>/dev/null)" ] \
    || [ -z "$(ls "$venv"/lib/python*/site-packages/nvidia/cu*/include/cuda_profiler_api.h 2>/dev/null)" ] \
    || [ -z "$(ls "$venv"/lib/python*/site-packages/nvidia/cu*/bin/nvdisasm 2>/dev/null)" ]; then
    "$venv/bin/pip" install --quiet --disable-pip-version-check $wheels
fi
venv=$(cd "$venv" && pwd)
export VIRTUAL_ENV="$venv"
cargo test --workspace --release --features cuda "$@"
# Overflow checks: the release build wraps silently where a debug build panics. The model,
# the executor, the report and the advice, and every fuzz corpus, once more in the test
# profile (optimized, overflow checks on).
cargo test -p warpscope-model -p warpscope-simt -p warpscope-report -p warpscope-advice "$@"
cargo test --features cuda --test fuzz_corpus "$@"
# The examples' memory budgets (examples/warpscope.toml), as a project's CI would check its
# own: exit 1 names each access over its budget.
cargo build --release --features cuda --quiet
target/release/warpscope check --launches examples/warpscope.toml
# The Python package (maturin + PyO3, with Triton's CPU wheel): built into .venv-py/ and its
# pytest suite run; it finds the CUDA compiler of $VIRTUAL_ENV above.
bash python/test.sh
# The README and the book: every command output shown is what warpscope prints today, every
# link resolves, and the book builds (mdBook, installed into target/tools once).
python3 scripts/readme.py --check
mdbook=$(command -v mdbook || true)
if [ -z "$mdbook" ]; then
    mdbook=target/tools/bin/mdbook
    [ -x "$mdbook" ] || cargo install --quiet --locked mdbook@0.5.4 --no-default-features --features search --root target/tools
fi
"$mdbook" build docs
