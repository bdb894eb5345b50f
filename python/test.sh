#!/usr/bin/env bash
# Builds the Python package (maturin + PyO3) into .venv-py/ at the repository root and runs
# its tests: `bash python/test.sh` (any extra arguments go to pytest).
#
# Installs from PyPI: maturin, pytest, numpy, pandas; nbclient, nbformat and ipykernel (the
# notebook test); Triton's wheel and numba-cuda with the CUDA 13 NVVM, NVRTC and runtime
# libraries it loads (no GPU is used by either); Ray (warpscope.analyze_many on a cluster).
# Each optional one that does not install has its tests skipped, saying so (pytest -rs).
# Installs only what is missing, so a second run installs nothing. The Rust build goes to
# $CARGO_TARGET_DIR (default: target/python/ at the repository root).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
venv="$root/.venv-py"
py="${PYTHON:-python3}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target/python}"

if [ ! -x "$venv/bin/python" ]; then
    "$py" -m venv "$venv"
fi
# shellcheck disable=SC1091
source "$venv/bin/activate"
python -m pip install -q --upgrade pip
if ! python -c "import maturin, pytest, numpy, pandas, nbclient, nbformat, ipykernel" 2>/dev/null; then
    python -m pip install -q "maturin>=1.5,<2" pytest numpy pandas nbclient nbformat ipykernel
fi
# Triton 3.6.0: the version the H100 measurements ran (tests/data/h100/triton*/), so the
# tests can check that the PTX Triton makes here is the PTX its JIT made on the GPU.
TRITON_VERSION=3.6.0
if [ "$(python -c 'import triton; print(triton.__version__)' 2>/dev/null)" != "$TRITON_VERSION" ]; then
    python -m pip install -q "triton==$TRITON_VERSION" || echo "warning: triton $TRITON_VERSION did not install: its tests will be skipped" >&2
fi
# numba-cuda compiles with NVVM (libnvvm) and asks NVRTC which CCs it targets; both, and the
# CUDA runtime library it checks at import, come as pip wheels (the [cu13] extra's subset
# that compile_ptx needs).
if ! python -c "from numba import cuda; cuda.compile_ptx(lambda: None, (), cc=(9, 0))" 2>/dev/null; then
    python -m pip install -q numba-cuda "nvidia-nvvm==13.*" "nvidia-cuda-nvrtc==13.*" "nvidia-cuda-runtime==13.*" \
        || echo "warning: numba-cuda did not install: its tests will be skipped" >&2
fi
if ! python -c "import ray" 2>/dev/null; then
    python -m pip install -q ray || echo "warning: ray did not install: analyze_many's Ray test will be skipped" >&2
fi

start=$(date +%s)
# In-tree build with the venv's maturin (no isolated build environment to download).
python -m pip install -q --no-build-isolation --force-reinstall --no-deps "$here"
echo "python/test.sh: package built and installed in $(( $(date +%s) - start )) s" >&2

cd "$root"
python -m pytest "$here/tests" -q -rs "$@"
