#!/usr/bin/env bash
# The test command of the README and CI: installs the CUDA compiler from PyPI into a virtual
# environment (no GPU needed; reused when present), so the compiled path (.cu → nvcc → PTX →
# SIMT executor) is tested too, then runs every test (GPU tests skip without a GPU),
# `warpscope check` on the examples' launch file, and the Python package's tests.
#
#   scripts/test.sh            (WARPSCOPE_VENV=DIR to put the environment elsewhere)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${WARPSCOPE_VENV:-.venv-cuda}
wheels="nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-crt nvidia-cuda-nvrtc nvidia-cuda-cccl nvidia-cuda-profiler-api nvidia-cuda-nvdisasm"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import nvidia' 2>/dev/null || [ -z "$(ls -d "$venv"/lib/python*/site-packages/nvidia/cu*/bin/nvcc 2>/dev/null)" ] \
    || [ -z "$(ls "$venv"/lib/python*/site-packages/nvidia/cu*/include/cuda_profiler_api.h 2>/dev/null)" ] \
    || [ -z "$(ls "$venv"/lib/python*/site-packages/nvidia/cu*/bin/nvdisasm 2>/dev/null)" ]; then
    "$venv/bin/pip" install --quiet --disable-pip-version-check $wheels
fi
export VIRTUAL_ENV="$PWD/$venv"
cargo test --workspace --release --features cuda "$@"
# The examples' memory budgets (examples/warpscope.toml), as a project's CI would check its
# own: exit 1 names each access over its budget.
cargo build --release --features cuda --quiet
target/release/warpscope check --launches examples/warpscope.toml
# The Python package (maturin + PyO3, with Triton's CPU wheel): built into .venv-py/ and its
# pytest suite run; it finds the CUDA compiler of $VIRTUAL_ENV above.
bash python/test.sh
