"""Triton's vector add, analyzed with no GPU: `python examples/triton_add.py` (after
`pip install ./python triton numpy`)."""
import numpy as np
import triton
import triton.language as tl

import warpscope.triton as wt


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


n = 98432
x, y, out = (np.zeros(n, np.float32) for _ in range(3))
r = wt.analyze(add_kernel, lambda m: (triton.cdiv(n, m["BLOCK_SIZE"]),), x, y, out, n, BLOCK_SIZE=1024, cc=["9.0", "7.5"])
for l in r.by_line():
    print(f"CC {l.cc} line {l.line}: {l.requests} requests, {l.sectors} sectors, {l.efficiency:.0%}  {l.text}")
