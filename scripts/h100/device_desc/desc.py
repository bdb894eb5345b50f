"""On the H100 (device tool; scripts/h100/prefetch/run.sh runs it under Nsight Compute):
Triton 3.6 kernels that build their TMA descriptors on the device (tl.make_tensor_descriptor),
the kernels of python/tests/test_triton_device_descriptors.py, launched as that test analyzes
them: desc_copy_kernel over 256 x 128 and 200 x 120 fp16 (64 x 64 boxes), desc_matmul_kernel
256 x 256 x 256 fp16 (128 x 128 x 64 tiles). Checks the results and writes each kernel's PTX
to $OUT."""

import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def desc_copy_kernel(a_ptr, b_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a = tl.make_tensor_descriptor(a_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    b = tl.make_tensor_descriptor(b_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    x = a.load([pid_m * BM, pid_n * BN])
    b.store([pid_m * BM, pid_n * BN], x)


@triton.jit
def desc_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([k * BK, pid_n * BN])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


def main():
    out = os.environ.get("OUT", "/tmp")
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    print("triton", triton.__version__, "torch", torch.__version__, torch.cuda.get_device_name())
    ok = True
    for M, N in ((256, 128), (200, 120)):
        a = torch.randn(M, N, dtype=torch.float16, device="cuda")
        b = torch.full_like(a, float("nan"))
        k = desc_copy_kernel[(triton.cdiv(M, 64), triton.cdiv(N, 64))](a, b, M, N, BM=64, BN=64)
        torch.cuda.synchronize()
        good = torch.equal(a, b)
        ok &= good
        print(f"desc_copy_kernel {M}x{N}: {'ok' if good else 'WRONG'}")
    open(os.path.join(out, "desc_copy_kernel.ptx"), "w").write(k.asm["ptx"])
    M = N = K = 256
    a = torch.randn(M, K, dtype=torch.float16, device="cuda")
    b = torch.randn(K, N, dtype=torch.float16, device="cuda")
    c = torch.full((M, N), float("nan"), dtype=torch.float16, device="cuda")
    k = desc_matmul_kernel[(2, 2)](a, b, c, M, N, K, BM=128, BN=128, BK=64)
    torch.cuda.synchronize()
    ref = (a.double() @ b.double())
    err = ((c.double() - ref).norm() / ref.norm()).item()
    good = err < 1e-2
    ok &= good
    print(f"desc_matmul_kernel 256^3: relative error {err:.2e} {'ok' if good else 'WRONG'}")
    open(os.path.join(out, "desc_matmul_kernel.ptx"), "w").write(k.asm["ptx"])
    print("ok: desc.py" if ok else "WRONG: desc.py")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
