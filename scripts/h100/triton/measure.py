"""Triton kernels on the H100 for warpscope.triton: runs Triton's vector add and a row
softmax (one row per program) on the GPU, writes the PTX the JIT made for each to $OUT, and
is run under Nsight Compute by run.sh. The same kernels are analyzed with no GPU by
python/tests/test_triton_h100.py."""
import os
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(__file__))
from kernels import add_kernel, softmax_kernel, ADD_N, ROWS, COLS  # noqa: E402

out_dir = os.environ.get("OUT", "/tmp")
torch.manual_seed(0)
x = torch.rand(ADD_N, device="cuda")
y = torch.rand(ADD_N, device="cuda")
o = torch.empty_like(x)
k = add_kernel[(triton.cdiv(ADD_N, 1024),)](x, y, o, ADD_N, BLOCK_SIZE=1024)
torch.cuda.synchronize()
assert torch.allclose(o, x + y)
open(os.path.join(out_dir, "add_kernel.ptx"), "w").write(k.asm["ptx"])

a = torch.randn(ROWS, COLS, device="cuda")
b = torch.empty_like(a)
block = triton.next_power_of_2(COLS)
k = softmax_kernel[(ROWS,)](b, a, a.stride(0), b.stride(0), COLS, BLOCK_SIZE=block)
torch.cuda.synchronize()
assert torch.allclose(b, torch.softmax(a, dim=1), atol=1e-6)
open(os.path.join(out_dir, "softmax_kernel.ptx"), "w").write(k.asm["ptx"])
print("triton", triton.__version__, "torch", torch.__version__, torch.cuda.get_device_name())
