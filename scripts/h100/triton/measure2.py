"""Triton kernels on the H100, second set (issue 17/18): layer norm, a strided copy, a tiled
transpose, an fp16 matmul through pointers (wgmma with cp.async pipelining on the H100; with
DISABLE_MMA_V3=1 in the environment, mma.sync as on Ampere) and the same matmul through host
tensor descriptors (TMA + wgmma). Writes each kernel's PTX and launch metadata to $OUT
(<name>[-mma2].ptx, <name>[-mma2].json); run under Nsight Compute by run2.sh.

    python3 measure2.py            # all five
    python3 measure2.py matmul     # only the pointer matmul (for the DISABLE_MMA_V3 run)
"""
import json
import os
import sys

import torch
import triton

sys.path.insert(0, os.path.dirname(__file__))
from kernels import (layernorm_kernel, strided_copy_kernel, transpose_kernel, matmul_kernel,  # noqa: E402
                     matmul_tma_kernel, LN_ROWS, LN_COLS, STRIDED_N, STRIDE, T_M, T_N, MM_M, MM_N, MM_K)

out_dir = os.environ.get("OUT", "/tmp")
suffix = "-mma2" if os.environ.get("DISABLE_MMA_V3") == "1" else ""
only = sys.argv[1:]
torch.manual_seed(0)


def save(name, k):
    open(os.path.join(out_dir, f"{name}{suffix}.ptx"), "w").write(k.asm["ptx"])
    md = k.metadata
    meta = {"shared": md.shared, "num_warps": md.num_warps,
            "tensordesc_meta": getattr(md, "tensordesc_meta", None)}
    json.dump(meta, open(os.path.join(out_dir, f"{name}{suffix}.json"), "w"))


def want(name):
    return not only or name in only


if want("layernorm"):
    x = torch.randn(LN_ROWS, LN_COLS, device="cuda")
    w = torch.rand(LN_COLS, device="cuda")
    b = torch.rand(LN_COLS, device="cuda")
    y = torch.empty_like(x)
    mean = torch.empty(LN_ROWS, device="cuda")
    rstd = torch.empty(LN_ROWS, device="cuda")
    k = layernorm_kernel[(LN_ROWS,)](x, y, w, b, mean, rstd, x.stride(0), LN_COLS, 1e-5, BLOCK_SIZE=256)
    torch.cuda.synchronize()
    ref = torch.nn.functional.layer_norm(x, (LN_COLS,), w, b, 1e-5)
    assert torch.allclose(y, ref, atol=1e-4), (y - ref).abs().max()
    save("layernorm_kernel", k)

if want("strided"):
    src = torch.rand(STRIDED_N * STRIDE, device="cuda")
    o = torch.empty(STRIDED_N, device="cuda")
    k = strided_copy_kernel[(triton.cdiv(STRIDED_N, 1024),)](src, o, STRIDED_N, STRIDE=STRIDE, BLOCK=1024)
    torch.cuda.synchronize()
    assert torch.equal(o, src[::STRIDE])
    save("strided_copy_kernel", k)

if want("transpose"):
    a = torch.rand(T_M, T_N, device="cuda")
    t = torch.empty(T_N, T_M, device="cuda")
    k = transpose_kernel[(triton.cdiv(T_M, 64), triton.cdiv(T_N, 64))](a, t, T_M, T_N, BM=64, BN=64)
    torch.cuda.synchronize()
    assert torch.equal(t, a.t())
    save("transpose_kernel", k)

if want("matmul"):
    A = torch.randn(MM_M, MM_K, device="cuda", dtype=torch.float16)
    B = torch.randn(MM_K, MM_N, device="cuda", dtype=torch.float16)
    C = torch.empty(MM_M, MM_N, device="cuda", dtype=torch.float16)
    k = matmul_kernel[(MM_M // 128, MM_N // 128)](A, B, C, MM_M, MM_N, MM_K, A.stride(0), B.stride(0), C.stride(0),
                                                   BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=4, num_stages=3)
    torch.cuda.synchronize()
    assert torch.allclose(C.float(), A.float() @ B.float(), atol=0.5, rtol=1e-2)
    save("matmul_kernel", k)

if want("matmul_tma"):
    from triton.tools.tensor_descriptor import TensorDescriptor
    A = torch.randn(MM_M, MM_K, device="cuda", dtype=torch.float16)
    B = torch.randn(MM_K, MM_N, device="cuda", dtype=torch.float16)
    C = torch.empty(MM_M, MM_N, device="cuda", dtype=torch.float16)
    k = matmul_tma_kernel[(MM_M // 128, MM_N // 128)](
        TensorDescriptor.from_tensor(A, [128, 64]), TensorDescriptor.from_tensor(B, [64, 128]),
        TensorDescriptor.from_tensor(C, [128, 128]), MM_K, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64,
        num_warps=4, num_stages=3)
    torch.cuda.synchronize()
    assert torch.allclose(C.float(), A.float() @ B.float(), atol=0.5, rtol=1e-2)
    save("matmul_tma_kernel", k)
print("triton", triton.__version__, "torch", torch.__version__, torch.cuda.get_device_name(), "suffix", suffix or "-")
