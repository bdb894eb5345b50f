#!/usr/bin/env bash
# On the GPU machine (device tool, from the repository root, carry [".gpu-carry"]): the
# Python package's Triton tests where torch, Triton 3.6.0 and a GPU exist, with the wheel
# built here (cd python && maturin build --release -o ../.gpu-carry/wheel). Covers what CI
# cannot: torch tensors as arguments (CPU, CUDA and "meta" devices) and warpscope.triton
# against the same launch run by Triton's JIT on the GPU. Writes $OUT/python-tests.txt.
set -u
OUT=${OUT:-/tmp/python-out}
mkdir -p "$OUT"
# The machine's python3 (its venv has torch and Triton); the wheel beside it, not into it.
rm -rf /tmp/wsdeps
python3 -m pip install -q --no-deps --target /tmp/wsdeps .gpu-carry/wheel/warpscope-*.whl > "$OUT/python-install.txt" 2>&1
export PYTHONPATH=/tmp/wsdeps
{ command -v python3; python3 -c "import torch, triton, warpscope; print('torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name())"; } \
    > "$OUT/python-tests.txt" 2>&1
python3 -m pytest -q -rs -p no:cacheprovider python/tests/test_triton.py python/tests/test_triton_h100.py \
    python/tests/test_triton2_h100.py python/tests/test_torch_gpu.py >> "$OUT/python-tests.txt" 2>&1
echo "pytest rc=$?" >> "$OUT/python-tests.txt"
tail -30 "$OUT/python-tests.txt"
