"""warpscope.triton on kernels that build their TMA descriptors on the device
(``tl.make_tensor_descriptor``): Triton 3.6 zeroes a 128-byte CUtensorMap in shared memory,
fills it with ``tensormap.replace`` and copies it with ``tensormap.cp_fenceproxy`` into the
program's slice of its ``global_scratch`` buffer, whose generic address the TMA copies use.
The TMA figures are derived by hand from the tensor and box sizes.

Skipped, with the reason shown (pytest -rs), when Triton is not installed."""

import inspect

import pytest

triton = pytest.importorskip("triton", reason="triton not installed (pip install triton): Triton tests skipped")
tl = pytest.importorskip("triton.language")
np = pytest.importorskip("numpy", reason="numpy not installed")
import warpscope.triton as wt  # noqa: E402


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


def _line(fn, text):
    lines, first = inspect.getsourcelines(fn.fn)
    return first + next(i for i, l in enumerate(lines) if text in l)


def _rows(r, fn, text, cc="9.0"):
    """(op, space) → (requests, sectors, wavefronts) of the rows of the line holding `text`."""
    out = {}
    for s in r.sites:
        if s.cc == cc and s.line == _line(fn, text):
            k = (s.op, s.space, s.ptx.split(".")[0])
            a = out.get(k, (0, 0, 0))
            out[k] = (a[0] + s.requests, a[1] + s.sectors, a[2] + s.wavefronts)
    return out


@pytest.mark.parametrize("cc", ["9.0", "10.0"])
def test_device_descriptor_copy_in_bounds(cc):
    """256 x 128 fp16, 64 x 64 boxes, grid (4, 2): 8 programs, every box inside. Each box
    is 64 rows of 128 bytes = 8,192 bytes = 256 sectors, read (a.load) and written (b.store)
    by the TMA as 16 pieces of 512 bytes: 8 x 256 = 2,048 sectors in 128 requests each way,
    65,536 bytes = the tensor once. Each of the 2 descriptors per program is copied to the
    global scratch by one warp, 32 lanes x 4 bytes (LDS + ATOMG.EXCH as ptxas compiles
    tensormap.cp_fenceproxy): 8 x 2 x 4 = 64 global sectors in 16 requests."""
    M, N = 256, 128
    a = np.zeros((M, N), np.float16)
    b = np.zeros((M, N), np.float16)
    r = wt.analyze(desc_copy_kernel, (M // 64, N // 64), a, b, M, N, BM=64, BN=64, cc=cc)
    ptx = r.ptx.ptx
    assert "tensormap.replace.tile.global_address" in ptx and "tensormap.cp_fenceproxy" in ptx
    assert r.ptx.params == ["a_ptr", "b_ptr", "M", "N"]
    assert r.ptx.scratch == {"global_scratch": 256, "profile_scratch": 0}
    load = _rows(r, desc_copy_kernel, "x = a.load", cc)
    assert load[("load", "global", "cp")][:2] == (128, 2048)
    store = _rows(r, desc_copy_kernel, "b.store", cc)
    assert store[("store", "global", "cp")][:2] == (128, 2048)
    made = _rows(r, desc_copy_kernel, "a = tl.make_tensor_descriptor", cc)
    assert made[("atomic", "global", "tensormap")][:2] == (8, 32)
    assert made[("load", "shared", "tensormap")] == (8, 0, 8)


def test_device_descriptor_copy_out_of_bounds():
    """200 x 120 fp16 (rows of 240 bytes), 64 x 64 boxes, grid (4, 2). A load reads every
    box row that reaches into the tensor whole (128 bytes), a store writes only the elements
    inside (measured on H100 for host maps, tests/data/h100/tma/). Row r starts at 240 r +
    128 pid_n bytes: 32-byte aligned for even r, 16 bytes off for odd r.
    Loads: 200 rows per column of boxes, even rows 4 sectors, odd rows 5: 2 x (100 x 4 +
    100 x 5) = 1,800 sectors. Stores: the left boxes as the loads (900); the right ones write
    56 elements (112 bytes) a row, from byte 128 (even rows: sectors 4–7) or 16 past a
    sector (odd rows: 4 sectors): 200 x 4 = 800; 1,700 in all. The last row's read runs 16
    bytes past the end of a's 48,000 bytes, as the hardware reads it."""
    M, N = 200, 120
    a = np.zeros((M, N), np.float16)
    b = np.zeros((M, N), np.float16)
    r = wt.analyze(desc_copy_kernel, (4, 2), a, b, M, N, BM=64, BN=64, cc="9.0")
    assert _rows(r, desc_copy_kernel, "x = a.load")[("load", "global", "cp")][1] == 1800
    assert _rows(r, desc_copy_kernel, "b.store")[("store", "global", "cp")][1] == 1700


def test_device_descriptor_matmul_sm90():
    """C = A B, 256 x 256 x 256 fp16, 128 x 128 x 64 tiles, 4 warps, sm_90 (wgmma + TMA
    through device-built descriptors). Each of the 4 programs loads its 128 x 256 strip of
    A and 256 x 128 strip of B (65,536 bytes each = 2,048 sectors) and stores its 128 x 128
    tile of C (32,768 bytes = 1,024 sectors): A and B 4 x 2,048 = 8,192 sectors each, C
    4,096 — each program's boxes inside the tensors."""
    M = N = K = 256
    a = np.zeros((M, K), np.float16)
    b = np.zeros((K, N), np.float16)
    c = np.zeros((M, N), np.float16)
    r = wt.analyze(desc_matmul_kernel, (2, 2), a, b, c, M, N, K, BM=128, BN=128, BK=64, cc="9.0")
    assert "wgmma.mma_async" in r.ptx.ptx
    assert r.ptx.scratch["global_scratch"] == 384
    a_rows = _rows(r, desc_matmul_kernel, "a = a_desc.load")
    b_rows = _rows(r, desc_matmul_kernel, "b = b_desc.load")
    c_rows = _rows(r, desc_matmul_kernel, "c_desc.store")
    assert a_rows[("load", "global", "cp")][1] == 8192
    assert b_rows[("load", "global", "cp")][1] == 8192
    assert c_rows[("store", "global", "cp")][1] == 4096
