"""warpscope.triton against Triton's JIT on a real GPU (skipped, and says so, without torch
and CUDA: CI has no GPU; scripts/h100/python/run.sh runs it on the H100).

For each launch, the PTX that ``warpscope.triton.compile_ptx`` makes with no GPU must be the
PTX the JIT made for the same call on the GPU: same specialization (pointers and integers
divisible by 16, integers equal to 1, a tensor view at an odd offset not aligned), same
options, same descriptors. Arguments are torch tensors on the GPU, on the CPU and on the
"meta" device (no memory)."""

import os
import re
import sys

import pytest

torch = pytest.importorskip("torch", reason="torch not installed: GPU comparison not run")
triton = pytest.importorskip("triton", reason="triton not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA GPU: the JIT comparison needs one", allow_module_level=True)

import warpscope.triton as wt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "h100", "triton"))
import kernels  # noqa: E402


def same(jit_ptx, ours):
    strip = lambda p: re.sub(r'(?m)^\s*\.file\s+\d+\s+".*"', ".file", p)  # noqa: E731
    return strip(jit_ptx) == strip(ours)


def jit_and_ours(kernel, grid, args, **kw):
    k = kernel[grid](*args, **kw)
    torch.cuda.synchronize()
    cc = "{}.{}".format(*torch.cuda.get_device_capability())
    opts = {o: kw.pop(o) for o in ("num_warps", "num_stages") if o in kw}
    return k.asm["ptx"], wt.compile_ptx(kernel, *args, cc=cc, **opts, **kw).ptx


@pytest.mark.parametrize("device", ["cuda", "cpu", "meta"])
def test_add_on_every_device(device):
    n = 98432
    x, y, o = (torch.rand(n, device="cuda") for _ in range(3))
    jit, _ = jit_and_ours(kernels.add_kernel, (triton.cdiv(n, 1024),), (x, y, o, n), BLOCK_SIZE=1024)
    a = torch.empty(n, device=device)
    cc = "{}.{}".format(*torch.cuda.get_device_capability())
    ours = wt.compile_ptx(kernels.add_kernel, a, a, a, n, BLOCK_SIZE=1024, cc=cc).ptx
    assert same(jit, ours)
    r = wt.analyze(kernels.add_kernel, (triton.cdiv(n, 1024),), a, a, a, n, BLOCK_SIZE=1024, cc="9.0")
    assert r.totals["9.0"]["global_load"]["sectors"] == 24608


def test_specialization_follows_the_jit():
    """An odd n (not divisible by 16), n = 1, and a view one element into its storage (a
    pointer not 16-byte aligned): each changes the JIT's specialization; ours follows."""
    base = torch.rand(4097, device="cuda")
    view = base[1:]
    for n, t in ((4095, base), (1, base), (4096, view)):
        out = torch.empty_like(t)
        jit, ours = jit_and_ours(kernels.add_kernel, (triton.cdiv(n, 1024),), (t, t, out, n), BLOCK_SIZE=1024)
        assert same(jit, ours), (n, t.storage_offset())


def test_matmuls_follow_the_jit():
    m, n, k = kernels.MM_M, kernels.MM_N, kernels.MM_K
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    jit, ours = jit_and_ours(kernels.matmul_kernel, (m // 128, n // 128), (a, b, c, m, n, k, k, n, n),
                             BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=4, num_stages=3)
    assert same(jit, ours)
    from triton.tools.tensor_descriptor import TensorDescriptor
    descs = (TensorDescriptor.from_tensor(a, [128, 64]), TensorDescriptor.from_tensor(b, [64, 128]),
             TensorDescriptor.from_tensor(c, [128, 128]))
    jit, ours = jit_and_ours(kernels.matmul_tma_kernel, (m // 128, n // 128), (*descs, k),
                             BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=4, num_stages=3)
    assert same(jit, ours)
    r = wt.analyze(kernels.matmul_tma_kernel, (m // 128, n // 128), *descs, k, BLOCK_M=128, BLOCK_N=128,
                   BLOCK_K=64, num_warps=4, num_stages=3, cc="9.0")
    tma = sum(s.sectors for s in r.sites if s.space == "global" and s.op == "load")
    assert tma == 49152
