"""warpscope.triton on kernels that build their TMA descriptors on the device
(``tl.make_tensor_descriptor``): Triton 3.6 zeroes a 128-byte CUtensorMap in shared memory,
fills it with ``tensormap.replace`` and copies it with ``tensormap.cp_fenceproxy`` into the
program's slice of its ``global_scratch`` buffer, whose generic address the TMA copies use.
The TMA figures are derived by hand from the tensor and box sizes.

Skipped, with the reason shown (pytest -rs), when Triton is not installed."""

import csv
import inspect
import os
import re

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
    # One thread's 10 shared loads of tensormap.replace (read-modify-writes of packed
    # fields) and the warp's load of the copy: 11 a program.
    assert made[("load", "shared", "tensormap")] == (88, 0, 88)


def test_device_descriptor_copy_out_of_bounds():
    """200 x 120 fp16 (rows of 240 bytes), 64 x 64 boxes, grid (4, 2). Row r starts at
    240 r + 128 pid_n bytes: 32-byte aligned for even r, 16 bytes off for odd r.
    Loads, as the H100's TMA counts them (tests/data/h100/prefetch/probe-ncu.csv): every row
    of a box, its part inside the tensor by the sectors it covers, each part outside as
    ceil(bytes / 32) sectors of its own. Left boxes: rows inside 4 (even) or 5 (odd)
    sectors; right boxes (56 columns, 112 bytes inside) 4 + 1 = 5 either way; the 56 rows
    of each bottom box past row 199: 4. By box: 3 x 288 + 3 x 320 + (4 x 4 + 4 x 5 + 224) +
    (8 x 5 + 224) = 2,348. Stores write only the elements inside: the left boxes as the
    loads' rows inside (200 rows: 900), the right ones 112 bytes a row, 4 sectors (800):
    1,700. The H100 measured both (tests/data/h100/device_desc/desc-ncu.csv)."""
    M, N = 200, 120
    a = np.zeros((M, N), np.float16)
    b = np.zeros((M, N), np.float16)
    r = wt.analyze(desc_copy_kernel, (4, 2), a, b, M, N, BM=64, BN=64, cc="9.0")
    assert _rows(r, desc_copy_kernel, "x = a.load")[("load", "global", "cp")][1] == 2348
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


DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                    "tests", "data", "h100", "device_desc")


def _ncu(launch_id):
    """Nsight Compute's values for launch `launch_id` of scripts/h100/device_desc/desc.py
    (0: copy 256 x 128, 1: copy 200 x 120, 2: matmul)."""
    out = {}
    with open(os.path.join(DATA, "desc-ncu.csv")) as f:
        for row in csv.DictReader(f):
            if int(row["ID"]) == launch_id:
                out[row["Metric Name"].removesuffix(".sum")] = int(row["Metric Value"].replace(",", ""))
    return out


def _counters(r):
    """The result in Nsight Compute's terms (the columns desc.py measured)."""
    c = dict.fromkeys(["tma_ld", "tma_st", "sld_wf", "sst_wf", "sld_inst", "sst_inst", "atom_req", "atom_sec",
                       "atom_inst", "gmma_wf"], 0)
    for s in r.sites:
        if s.cc != "9.0":
            continue
        head = s.ptx.split(".")[0]
        if s.space == "global" and s.ptx.startswith("cp.async.bulk"):
            c["tma_ld" if s.op == "load" else "tma_st"] += s.sectors
        elif s.space == "global" and s.op == "atomic":
            c["atom_req"] += s.requests
            c["atom_sec"] += s.sectors
            c["atom_inst"] += s.executions
        elif s.space == "shared" and head == "wgmma":
            c["gmma_wf"] += s.wavefronts
        elif s.space == "shared" and head != "cp":
            k = "sld" if s.op == "load" else "sst"
            c[f"{k}_wf"] += s.wavefronts
            if head not in ("ldmatrix", "stmatrix"):
                c[f"{k}_inst"] += s.requests
    return c


def _hardware(m):
    return {
        "tma_ld": m["l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld"],
        "tma_st": m["l1tex__m_l1tex2xbar_write_sectors_mem_global_op_tma_st"],
        "sld_wf": m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld"],
        "sst_wf": m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st"],
        "sld_inst": m["smsp__sass_inst_executed_op_shared_ld"],
        "sst_inst": m["smsp__sass_inst_executed_op_shared_st"],
        "atom_req": m["l1tex__t_requests_pipe_lsu_mem_global_op_atom"],
        "atom_sec": m["l1tex__t_sectors_pipe_lsu_mem_global_op_atom"],
        "atom_inst": m["smsp__sass_inst_executed_op_global_atom"],
        "gmma_wf": m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma"],
    }


@pytest.mark.parametrize("launch_id", [0, 1, 2])
def test_device_descriptor_kernels_equal_the_h100(launch_id):
    """The three launches of scripts/h100/device_desc/desc.py (Triton 3.6.0 on an H100 80GB
    HBM3, ncu 2025.3.1), analyzed here: every column measured equals the H100's. Each
    descriptor costs 10 shared loads and 14 shared stores of one thread (tensormap.replace
    as ptxas compiles it), the zeroing store and the copy's shared load of a warp, and the
    copy's global atomic exchange (4 sectors); the matmul's TMA reads 16,384 sectors and its
    wgmma 6,144 wavefronts."""
    if triton.__version__ != "3.6.0":
        pytest.skip(f"the GPU ran Triton 3.6.0; this is {triton.__version__}")
    f16 = np.float16
    if launch_id < 2:
        M, N = ((256, 128), (200, 120))[launch_id]
        r = wt.analyze(desc_copy_kernel, ((M + 63) // 64, (N + 63) // 64), np.zeros((M, N), f16),
                       np.zeros((M, N), f16), M, N, BM=64, BN=64, cc="9.0")
        name = "desc_copy_kernel"
    else:
        z = np.zeros((256, 256), f16)
        r = wt.analyze(desc_matmul_kernel, (2, 2), z, z, z, 256, 256, 256, BM=128, BN=128, BK=64, cc="9.0")
        name = "desc_matmul_kernel"
    if launch_id != 0:
        # The PTX made here is the GPU's (the file holds the kernel's last compiled variant).
        gpu = open(os.path.join(DATA, f"{name}.ptx")).read()
        # The kernels sit at other lines of another file there: compare without .loc.
        def body(p):
            p = p[p.index(".visible .entry"):p.index(".section")]
            return re.sub(r"(?m)^\s*\.(loc|file)\b.*\n", "", p)

        assert body(r.ptx.ptx) == body(gpu)
    assert _counters(r) == _hardware(_ncu(launch_id))
