"""warpscope.triton: a Triton kernel compiled here (no GPU) and analyzed.

Skipped, with the reason shown (pytest -rs), when Triton is not installed."""

import sys

import pytest

import warpscope

triton = pytest.importorskip("triton", reason="triton not installed (pip install triton): Triton tests skipped")
tl = pytest.importorskip("triton.language")
np = pytest.importorskip("numpy", reason="numpy not installed")
import warpscope.triton as wt  # noqa: E402


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


@triton.jit
def broken_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, undefined_name)  # noqa: F821


N = 98432
BLOCK = 1024


def grid(meta):
    return (triton.cdiv(N, meta["BLOCK_SIZE"]),)


def line_of(text):
    import inspect

    lines, first = inspect.getsourcelines(add_kernel.fn)
    return first + next(i for i, l in enumerate(lines) if text in l)


def test_vector_add_sectors():
    """n = 98,432 fp32 elements, BLOCK_SIZE = 1024, 4 warps: grid = cdiv(98432, 1024) = 97
    blocks of 128 threads; Triton gives each thread 8 consecutive floats as two 16-byte
    vector accesses per tensor. Per tensor: 98,432 x 4 B = 393,728 B = 12,304 sectors of 32
    bytes (fully coalesced, nothing wasted), in 96 x 4 warps x 2 = 768 requests of the full
    blocks and 1 of the last (its 128 elements, 512 B, are warp 0's first vector access):
    769. Three tensors: 2,307 requests, 36,912 sectors, efficiency 100 %."""
    x = np.zeros(N, np.float32)
    r = wt.analyze(add_kernel, grid, x, x, x, N, BLOCK_SIZE=BLOCK, cc="9.0")
    assert r.grid == (97, 1, 1) and r.block == (128, 1, 1)
    t = r.totals["9.0"]
    assert (t["global_load"]["requests"], t["global_load"]["sectors"]) == (1538, 24608)
    assert (t["global_store"]["requests"], t["global_store"]["sectors"]) == (769, 12304)
    assert t["global_load"]["efficiency"] == 1.0 and t["global_store"]["efficiency"] == 1.0
    assert {s.width for s in r.sites} == {16}
    # Attributed to the kernel's Python lines (the inline asm's .loc fixed up).
    lines = {(l.line, l.requests, l.sectors) for l in r.by_line()}
    assert lines == {
        (line_of("x = tl.load"), 769, 12304),
        (line_of("y = tl.load"), 769, 12304),
        (line_of("tl.store"), 769, 12304),
    }
    assert all(s.file.endswith("test_triton.py") for s in r.sites)
    # The PTX's parameters are named by the Python arguments, sized by their bytes.
    assert r.ptx.params == ["x_ptr", "y_ptr", "output_ptr", "n_elements"]
    assert r.ptx.pointers == {"x_ptr": N * 4, "y_ptr": N * 4, "output_ptr": N * 4}
    assert r.ptx.signature["x_ptr"] == "*fp32" and r.ptx.signature["n_elements"] == "i32"


def test_grid_tuple_several_ccs_and_duck_typed_arrays():
    class Spec:  # anything with shape and dtype
        def __init__(self, n, dtype):
            self.shape, self.dtype = (n,), dtype

        def element_size(self):
            return 4

    x = Spec(N, "float32")
    r = wt.analyze(add_kernel, (97,), x, x, x, N, BLOCK_SIZE=BLOCK, cc=["9.0", "8.0"])
    assert r.ccs == ["9.0", "8.0"]
    for cc in r.ccs:
        assert r.totals[cc]["global_load"]["sectors"] == 24608


def test_fp16_and_out_of_bounds_is_a_launch_error():
    x = np.zeros(N, np.float16)
    r = wt.analyze(add_kernel, grid, x, x, x, N, BLOCK_SIZE=BLOCK)
    assert r.ptx.signature["x_ptr"] == "*fp16"
    assert r.totals["9.0"]["global_load"]["sectors"] == 2 * N * 2 // 32
    small = np.zeros(N // 2, np.float32)
    with pytest.raises(warpscope.LaunchError, match="outside allocation 'x_ptr'") as e:
        wt.analyze(add_kernel, grid, small, np.zeros(N, np.float32), np.zeros(N, np.float32), N, BLOCK_SIZE=BLOCK)
    assert e.value.line == line_of("x = tl.load") and e.value.file.endswith("test_triton.py")


def test_specialization_as_the_jit():
    x = np.zeros(N, np.float32)
    # n = 1 is specialized as a constant: no PTX parameter.
    t = wt.compile_ptx(add_kernel, x, x, x, 1, BLOCK_SIZE=BLOCK)
    assert t.params == ["x_ptr", "y_ptr", "output_ptr"] and t.signature["n_elements"] == "constexpr"
    # n not a multiple of 16: no divisibility, the masks are per element.
    t = wt.compile_ptx(add_kernel, x, x, x, 1000, BLOCK_SIZE=BLOCK)
    assert t.params[-1] == "n_elements"
    # A pointer not assumed 16-byte aligned: Triton loads it one float at a time, each
    # thread still holding 4 consecutive floats, so a warp's scalar load has lanes 16 bytes
    # apart: 512 bytes (16 sectors) for 128 requested, 4 x the sectors of the vector loads.
    r = wt.analyze(add_kernel, grid, x, x, x, N, BLOCK_SIZE=BLOCK, unaligned=["x_ptr"])
    x_line = next(l for l in r.by_line() if l.line == line_of("x = tl.load"))
    assert {s.width for s in r.sites if s.line == x_line.line} == {4}
    assert x_line.sectors == 4 * 12304 and x_line.efficiency == 0.25
    y_line = next(l for l in r.by_line() if l.line == line_of("y = tl.load"))
    assert y_line.sectors == 12304


def test_torch_meta_tensors():
    torch = pytest.importorskip("torch", reason="torch not installed: meta tensors not tested")
    x = torch.empty(N, dtype=torch.float32, device="meta")
    r = wt.analyze(add_kernel, grid, x, x, x, N, BLOCK_SIZE=BLOCK)
    assert r.totals["9.0"]["global_load"]["sectors"] == 24608


def test_not_a_jit_function():
    def plain(x_ptr):
        pass

    with pytest.raises(TypeError, match="is not a @triton.jit function"):
        wt.analyze(plain, (1,), np.zeros(4, np.float32))


def test_wrong_argument_count():
    x = np.zeros(N, np.float32)
    with pytest.raises(warpscope.ArgumentError, match=r"add_kernel\(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: constexpr\)") as e:
        wt.analyze(add_kernel, grid, x, x, BLOCK_SIZE=BLOCK)
    assert isinstance(e.value, TypeError)
    with pytest.raises(TypeError):
        wt.analyze(add_kernel, grid, x, x, x, N, N, BLOCK_SIZE=BLOCK, BLOCK_SIZE_TYPO=3)
    with pytest.raises(warpscope.ArgumentError, match="BLOCK_SIZE_TYPO"):
        wt.analyze(add_kernel, grid, x, x, x, N, BLOCK_SIZE=BLOCK, BLOCK_SIZE_TYPO=3)


def test_unknown_cc():
    x = np.zeros(N, np.float32)
    with pytest.raises(warpscope.InputError, match="--cc 4.2"):
        wt.analyze(add_kernel, grid, x, x, x, N, BLOCK_SIZE=BLOCK, cc="4.2")


def test_triton_compile_error_verbatim():
    with pytest.raises(warpscope.CompileError, match="undefined_name") as e:
        wt.analyze(broken_kernel, (1,), np.zeros(64, np.float32), BLOCK=64)
    assert e.value.file.endswith("test_triton.py")
    import inspect

    lines, first = inspect.getsourcelines(broken_kernel.fn)
    assert e.value.line == first + next(i for i, l in enumerate(lines) if "undefined_name" in l)
    assert "NameError" in e.value.message and "^" in e.value.message  # Triton's message, verbatim


def test_triton_not_installed(monkeypatch):
    monkeypatch.setitem(sys.modules, "triton", None)
    with pytest.raises(ImportError, match="pip install triton"):
        wt.analyze(add_kernel, grid)


def test_array_where_a_scalar_is_expected():
    """Triton's parameters are untyped: an array for n_elements makes it a pointer, and
    Triton's compiler rejects `offsets < n_elements` at that line (its message verbatim)."""
    x = np.zeros(N, np.float32)
    with pytest.raises(warpscope.CompileError, match=r"invalid operands of type pointer<fp32> and triton.language.int32") as e:
        wt.analyze(add_kernel, grid, x, x, x, x, BLOCK_SIZE=BLOCK)
    assert e.value.line == line_of("mask = offsets < n_elements")
    # A number where a pointer goes: an integer that tl.load cannot read through.
    with pytest.raises(warpscope.CompileError, match="add_kernel") as e:
        wt.analyze(add_kernel, grid, 3, x, x, N, BLOCK_SIZE=BLOCK)
    assert e.value.line == line_of("x = tl.load")
    # A NumPy scalar or a 0-d array is a scalar: the vector add's figures (24,608 load
    # sectors, see test_vector_add_sectors).
    for n in (np.int32(N), np.array(N)):
        r = wt.analyze(add_kernel, grid, x, x, x, n, BLOCK_SIZE=BLOCK)
        assert r.ptx.signature["n_elements"] == "i32" and r.totals["9.0"]["global_load"]["sectors"] == 24608
