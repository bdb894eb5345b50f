#!/usr/bin/env bash
# Builds the Python package (maturin + PyO3) into .venv-py/ at the repository root and runs
# its tests: `bash python/test.sh` (any extra arguments go to pytest).
#
# Installs maturin, pytest, numpy and pandas, and Triton's CPU-only wheel from PyPI (no GPU
# is used); when Triton does not install, its tests are skipped and say so. The Rust build
# goes to $CARGO_TARGET_DIR (default: target/python/ at the repository root).
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
python -m pip install -q "maturin>=1.5,<2" pytest numpy pandas
if ! python -c "import triton" 2>/dev/null; then
    python -m pip install -q triton || echo "warning: triton did not install: its tests will be skipped" >&2
fi

start=$(date +%s)
# In-tree build with the venv's maturin (no isolated build environment to download).
python -m pip install -q --no-build-isolation --force-reinstall --no-deps "$here"
echo "python/test.sh: package built and installed in $(( $(date +%s) - start )) s" >&2

cd "$root"
python -m pytest "$here/tests" -q -rs "$@"
