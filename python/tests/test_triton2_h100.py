"""Triton's layer norm, strided copy, tiled transpose and fp16 matmuls against Nsight Compute
on the H100 (tests/data/h100/triton2/, made by scripts/h100/triton/run2.sh with Triton 3.6.0,
torch 2.11.0+cu130, on an NVIDIA H100 80GB HBM3, ncu 2025.3.1).

Three checks: the PTX the JIT made on the GPU, analyzed here, equals the hardware's counters;
Triton 3.6.0 here (no GPU) makes the same PTX as the GPU's JIT, so
``warpscope.triton.analyze`` analyzes what the GPU runs; and ``warpscope.triton.analyze``
gives the same figures.

One measured difference, explained from the SASS: in the transpose, ptxas sinks the last
shared load below ``@!P6 EXIT`` (the guard of the masked store it feeds), so the 64 warps of
the edge blocks whose last store is wholly masked off never execute it: the H100 executes
26,560 shared loads where the PTX has 26,624."""

import csv
import json
import os
import re
import sys
from types import SimpleNamespace

import pytest

import warpscope

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "h100", "triton2")
sys.path.insert(0, os.path.join(ROOT, "scripts", "h100", "triton"))

LN_ROWS, LN_COLS = 1151, 1000
SN, STRIDE = 65536, 3
TM, TN = 1000, 777
M, N, K = 512, 384, 256

# The launches as the GPU's PTX names its parameters (param_K), sizes in bytes.
MATMUL = ((M // 128, N // 128), {"param_3": M, "param_4": N, "param_5": K, "param_6": K, "param_7": N, "param_8": N},
          {"param_0": 2 * M * K, "param_1": 2 * K * N, "param_2": 2 * M * N}, None)
LAUNCHES = {
    "layernorm_kernel": ((LN_ROWS,), {"param_6": LN_COLS, "param_7": LN_COLS, "param_8": 1e-5},
                         {"param_0": 4 * LN_ROWS * LN_COLS, "param_1": 4 * LN_ROWS * LN_COLS, "param_2": 4 * LN_COLS,
                          "param_3": 4 * LN_COLS, "param_4": 4 * LN_ROWS, "param_5": 4 * LN_ROWS}, None),
    "strided_copy_kernel": ((SN // 1024,), {"param_2": SN}, {"param_0": 4 * SN * STRIDE, "param_1": 4 * SN}, None),
    "transpose_kernel": (((TM + 63) // 64, (TN + 63) // 64), {"param_2": TM, "param_3": TN},
                         {"param_0": 4 * TM * TN, "param_1": 4 * TM * TN}, None),
    "matmul_kernel": MATMUL,
    "matmul_kernel-mma2": MATMUL,
    # Each descriptor is its CUtensorMap, then shape (i32) and strides (i64), outermost
    # first; the maps as Triton's launcher encodes them (tensordesc_meta: 128-byte swizzle,
    # B's 64x128 block loaded as two 64x64 boxes).
    "matmul_tma_kernel": ((M // 128, N // 128),
                          {"param_1": M, "param_2": K, "param_3": K, "param_4": 1, "param_6": K, "param_7": N,
                           "param_8": N, "param_9": 1, "param_11": M, "param_12": N, "param_13": N, "param_14": 1,
                           "param_15": K},
                          {},
                          {"param_0": f"u16:{K}x{M}:{2 * K}:64x128:swizzle=128",
                           "param_5": f"u16:{N}x{K}:{2 * N}:64x64:swizzle=128",
                           "param_10": f"u16:{N}x{M}:{2 * N}:64x128:swizzle=128"}),
}


def measured(csv_name, kernel):
    m = {}
    with open(os.path.join(DATA, csv_name)) as f:
        for row in csv.reader(f):
            if len(row) > 14 and row[4].startswith(kernel):
                m[row[12].removesuffix(".sum")] = int(row[14].replace(",", ""))
    return m


def counters(result):
    """The result in Nsight Compute's terms: LSU global requests/sectors, shared wavefronts
    (ld.shared, ldmatrix; st.shared, stmatrix), shared-load instructions (ldmatrix not
    among them), TMA sectors, wgmma wavefronts; cp.async's and TMA's shared sides are in no
    LSU shared counter."""
    c = dict.fromkeys(["gld_req", "gld_sec", "gst_req", "gst_sec", "sld_wf", "sst_wf", "sld_inst", "sst_inst",
                       "ldsm_inst", "tma_ld", "tma_st", "gmma_wf"], 0)
    for s in result.sites:
        head = s.ptx.split(".")[0]
        bulk = s.ptx.startswith("cp.async.bulk")
        if s.space == "global":
            if bulk:
                c["tma_ld" if s.op == "load" else "tma_st"] += s.sectors
            elif s.op == "load":
                c["gld_req"] += s.requests
                c["gld_sec"] += s.sectors
            else:
                c["gst_req"] += s.requests
                c["gst_sec"] += s.sectors
        elif s.space == "shared" and not head == "cp":
            if head == "wgmma":
                c["gmma_wf"] += s.wavefronts
            elif s.op == "load":
                c["sld_wf"] += s.wavefronts
                if head == "ldmatrix":
                    c["ldsm_inst"] += s.requests
                else:
                    c["sld_inst"] += s.requests
            else:
                c["sst_wf"] += s.wavefronts
                if head != "stmatrix":
                    c["sst_inst"] += s.requests
    return c


def hardware(m):
    return {
        "gld_req": m["l1tex__t_requests_pipe_lsu_mem_global_op_ld"],
        "gld_sec": m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld"],
        "gst_req": m["l1tex__t_requests_pipe_lsu_mem_global_op_st"],
        "gst_sec": m["l1tex__t_sectors_pipe_lsu_mem_global_op_st"],
        "sld_wf": m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld"],
        "sst_wf": m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st"],
        "sld_inst": m["smsp__sass_inst_executed_op_shared_ld"],
        "sst_inst": m["smsp__sass_inst_executed_op_shared_st"],
        "ldsm_inst": m["smsp__sass_inst_executed_op_ldsm"],
        "tma_ld": m["l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld"],
        "tma_st": m["l1tex__m_l1tex2xbar_write_sectors_mem_global_op_tma_st"],
        "gmma_wf": m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma"],
    }


def expected(name):
    kernel = name.split("-")[0]
    h = hardware(measured("triton2-mma2-ncu.csv" if name.endswith("mma2") else "triton2-ncu.csv", kernel))
    if kernel == "transpose_kernel":
        # The sunk LDS (module docstring): 64 warp-executions the PTX makes unconditional.
        assert (h["sld_inst"], h["sld_wf"]) == (26560, 26560)
        h["sld_inst"] += 64
        h["sld_wf"] += 64
    return h


def gpu_result(name):
    grid, args, allocs, maps = LAUNCHES[name]
    meta = json.load(open(os.path.join(DATA, f"{name}.json")))
    return warpscope.analyze(os.path.join(DATA, f"{name}.ptx"), kernel=name.split("-")[0], grid=grid,
                             block=32 * meta["num_warps"], args=args, allocs=allocs, tensor_maps=maps, cc="9.0",
                             dynamic_smem=meta["shared"])


@pytest.mark.parametrize("name", list(LAUNCHES))
def test_gpu_ptx_equals_the_h100(name):
    assert counters(gpu_result(name)) == expected(name)


def test_the_matmuls_use_the_paths_they_are_named_for():
    ptx = {n: open(os.path.join(DATA, f"{n}.ptx")).read() for n in ("matmul_kernel", "matmul_kernel-mma2", "matmul_tma_kernel")}
    assert "wgmma.mma_async" in ptx["matmul_kernel"] and "cp.async.cg" in ptx["matmul_kernel"]
    assert "mma.sync" in ptx["matmul_kernel-mma2"] and "wgmma" not in ptx["matmul_kernel-mma2"]
    assert "cp.async.bulk.tensor.2d" in ptx["matmul_tma_kernel"] and "wgmma.mma_async" in ptx["matmul_tma_kernel"]
    # Every A and B byte crosses once per tile that needs it: A (512x256 fp16) for 3 column
    # tiles, B (256x384) for 4 row tiles: 3*256 KiB + 4*192 KiB = 1.5 MiB = 49,152 sectors,
    # through LDGSTS in the pointer matmuls and TMA in the descriptor one.
    assert expected("matmul_kernel")["gld_sec"] == expected("matmul_tma_kernel")["tma_ld"] == 49152


def _arrays():
    np = pytest.importorskip("numpy")
    f16, f32 = np.float16, np.float32
    return np, {
        "layernorm_kernel": lambda: ((LN_ROWS,), (np.zeros((LN_ROWS, LN_COLS), f32), np.zeros((LN_ROWS, LN_COLS), f32),
                                                  np.zeros(LN_COLS, f32), np.zeros(LN_COLS, f32), np.zeros(LN_ROWS, f32),
                                                  np.zeros(LN_ROWS, f32), LN_COLS, LN_COLS, 1e-5), dict(BLOCK_SIZE=256)),
        "strided_copy_kernel": lambda: ((SN // 1024,), (np.zeros(SN * STRIDE, f32), np.zeros(SN, f32), SN),
                                        dict(STRIDE=STRIDE, BLOCK=1024)),
        "transpose_kernel": lambda: (((TM + 63) // 64, (TN + 63) // 64), (np.zeros((TM, TN), f32), np.zeros((TN, TM), f32), TM, TN),
                                     dict(BM=64, BN=64)),
        "matmul_kernel": lambda: ((M // 128, N // 128), (np.zeros((M, K), f16), np.zeros((K, N), f16), np.zeros((M, N), f16),
                                                         M, N, K, K, N, N),
                                  dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=4, num_stages=3)),
        "matmul_tma_kernel": lambda: ((M // 128, N // 128), (_desc(np.zeros((M, K), f16), [128, 64]),
                                                             _desc(np.zeros((K, N), f16), [64, 128]),
                                                             _desc(np.zeros((M, N), f16), [128, 128]), K),
                                      dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=4, num_stages=3)),
    }


def _desc(a, block):
    """A host tensor descriptor over a NumPy array (the fields of Triton's TensorDescriptor)."""
    return SimpleNamespace(base=a, shape=list(a.shape), strides=[s // a.itemsize for s in a.strides], block_shape=block,
                           padding="zero")


def _triton_36():
    triton = pytest.importorskip("triton", reason="triton not installed (pip install triton)")
    if triton.__version__ != "3.6.0":
        pytest.skip(f"the GPU ran Triton 3.6.0; this is {triton.__version__} (python/test.sh installs 3.6.0)")
    return triton


def _strip_files(ptx):
    # `.file` names the Triton install's own path (standard.py), which differs by machine.
    return re.sub(r'(?m)^\s*\.file\s+\d+\s+".*/site-packages/', ".file ", ptx)


@pytest.mark.parametrize("name", ["layernorm_kernel", "strided_copy_kernel", "transpose_kernel", "matmul_kernel", "matmul_tma_kernel"])
def test_triton_here_makes_the_gpus_ptx_and_figures(name):
    _triton_36()
    import kernels
    import warpscope.triton as wt

    _, launches = _arrays()
    grid, args, constexprs = launches[name]()
    r = wt.analyze(getattr(kernels, name), grid, *args, cc="9.0", **constexprs)
    gpu = open(os.path.join(DATA, f"{name}.ptx")).read()
    assert _strip_files(r.ptx.ptx) == _strip_files(gpu)
    assert counters(r) == expected(name)
    if name == "matmul_tma_kernel":
        assert r.ptx.tensor_maps == {
            "a_desc": "u16:256x512:512:64x128:swizzle=128,oob=zero",
            "b_desc": "u16:384x256:768:64x64:swizzle=128,oob=zero",
            "c_desc": "u16:384x512:768:64x128:swizzle=128,oob=zero",
        }
