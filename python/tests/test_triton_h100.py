"""Triton kernels against Nsight Compute on the H100 (tests/data/h100/triton/, made by
scripts/h100/triton/run.sh with Triton 3.6.0, torch 2.11.0+cu130): the PTX the JIT made on
the GPU, analyzed here, equals the hardware's counts; and warpscope.triton.analyze, which
compiles here with no GPU, gives the same global figures (the shared-memory figures of the
softmax's reductions depend on the Triton version: 3.6 does 10 shared loads a row, 3.9 does
8, so they are compared only when the versions match)."""

import csv
import os
import sys

import pytest

import warpscope

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "h100", "triton")
sys.path.insert(0, os.path.join(ROOT, "scripts", "h100", "triton"))

METRICS = {
    "global_load": ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
    "global_store": ("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
    "shared_load": ("smsp__sass_inst_executed_op_shared_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
    "shared_store": ("smsp__sass_inst_executed_op_shared_st.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"),
}


def measured(kernel):
    m = {}
    with open(os.path.join(DATA, "triton-ncu.csv")) as f:
        for row in csv.reader(f):
            if len(row) > 14 and row[4].startswith(kernel):
                m[row[12]] = int(row[14].replace(",", ""))
    return m


def figures(result, space):
    t = result.totals["9.0"][space]
    second = "wavefronts" if space.startswith("shared") else "sectors"
    return t["requests"], t[second]


def expected(kernel, space):
    m = measured(kernel)
    a, b = METRICS[space]
    return m[a], m[b]


ROWS, COLS, N = 1823, 781, 98432
GPU_LAUNCHES = {
    "add_kernel": (97, {"param_3": N}, {f"param_{k}": 4 * N for k in range(3)}),
    "softmax_kernel": (ROWS, {"param_2": COLS, "param_3": COLS, "param_4": COLS}, {"param_0": 4 * ROWS * COLS, "param_1": 4 * ROWS * COLS}),
}


@pytest.mark.parametrize("kernel", ["add_kernel", "softmax_kernel"])
def test_gpu_ptx_equals_the_h100(kernel):
    grid, args, allocs = GPU_LAUNCHES[kernel]
    r = warpscope.analyze(os.path.join(DATA, f"{kernel}.ptx"), kernel=kernel, grid=grid, block=128,
                          args=args, allocs=allocs, cc="9.0", dynamic_smem=1024)
    for space in METRICS:
        assert figures(r, space) == expected(kernel, space), (kernel, space)
    if kernel == "softmax_kernel":
        assert expected(kernel, "shared_load") == (18230, 18230)
        assert expected(kernel, "global_load") == (45575, 217846)


def test_triton_analyze_here_equals_the_h100():
    triton = pytest.importorskip("triton", reason="triton not installed (pip install triton)")
    np = pytest.importorskip("numpy")
    import warpscope.triton as wt
    from kernels import add_kernel, softmax_kernel

    x, y, o = (np.zeros(N, np.float32) for _ in range(3))
    r = wt.analyze(add_kernel, (triton.cdiv(N, 1024),), x, y, o, N, BLOCK_SIZE=1024, cc="9.0")
    for space in METRICS:
        assert figures(r, space) == expected("add_kernel", space), space
    a = np.zeros((ROWS, COLS), np.float32)
    b = np.zeros_like(a)
    r = wt.analyze(softmax_kernel, (ROWS,), b, a, COLS, COLS, COLS, BLOCK_SIZE=triton.next_power_of_2(COLS), cc="9.0")
    for space in ["global_load", "global_store"]:
        assert figures(r, space) == expected("softmax_kernel", space), space
    if triton.__version__ == "3.6.0":
        for space in ["shared_load", "shared_store"]:
            assert figures(r, space) == expected("softmax_kernel", space), space


def test_triton_here_makes_the_gpus_ptx():
    """With the GPU's Triton version, the PTX compiled here (no GPU) is the PTX the JIT made
    on the H100, but for the `.file` path of Triton's own standard.py."""
    triton = pytest.importorskip("triton", reason="triton not installed (pip install triton)")
    if triton.__version__ != "3.6.0":
        pytest.skip(f"the GPU ran Triton 3.6.0; this is {triton.__version__} (python/test.sh installs 3.6.0)")
    np = pytest.importorskip("numpy")
    import re
    import warpscope.triton as wt
    from kernels import add_kernel, softmax_kernel

    strip = lambda p: re.sub(r'(?m)^\s*\.file\s+\d+\s+".*/site-packages/', ".file ", p)  # noqa: E731
    x = np.zeros(N, np.float32)
    a = np.zeros((ROWS, COLS), np.float32)
    made = {
        "add_kernel": wt.compile_ptx(add_kernel, x, x, x, N, BLOCK_SIZE=1024, cc="9.0").ptx,
        "softmax_kernel": wt.compile_ptx(softmax_kernel, a, a, COLS, COLS, COLS, BLOCK_SIZE=1024, cc="9.0").ptx,
    }
    for kernel, ptx in made.items():
        assert strip(ptx) == strip(open(os.path.join(DATA, f"{kernel}.ptx")).read()), kernel
