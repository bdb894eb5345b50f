"""warpscope.numba: a Numba CUDA kernel compiled here by NVVM (no GPU) and analyzed.

Skipped, with the reason shown (pytest -rs), when numba-cuda or its NVVM is not installed.

The expected figures follow the coalescing rules of CC 9.0: a warp's global access is one
request, and moves every 32-byte sector its 32 lanes touch; a shared access takes one
wavefront per distinct 4-byte word in its most used bank (32 banks of 4 bytes)."""

import inspect
import os
import sys

import pytest

import warpscope

np = pytest.importorskip("numpy", reason="numpy not installed")
numba = pytest.importorskip("numba", reason="numba not installed (pip install numba-cuda): Numba tests skipped")
try:
    from numba import cuda
except Exception as e:  # numba-cuda missing, or its CUDA libraries
    pytest.skip(f"numba.cuda did not load ({e}): pip install 'numba-cuda[cu13]'", allow_module_level=True)
import warpscope.numba as wn  # noqa: E402

try:
    cuda.compile_ptx(lambda: None, (), cc=(9, 0))
except Exception as e:  # no NVVM / NVRTC
    pytest.skip(f"Numba cannot compile here ({type(e).__name__}: {e}): pip install 'numba-cuda[cu13]'",
                allow_module_level=True)


@cuda.jit
def copy_offset(a, b, off):
    i = cuda.grid(1)
    if i < b.size:
        b[i] = a[i + off]


@cuda.jit
def transpose_naive(a, b):
    x, y = cuda.grid(2)
    if y < a.shape[0] and x < a.shape[1]:
        b[x, y] = a[y, x]


@cuda.jit
def transpose_tiled(a, b):
    tile = cuda.shared.array((32, 32), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bx = cuda.blockIdx.x * 32
    by = cuda.blockIdx.y * 32
    tile[ty, tx] = a[by + ty, bx + tx]
    cuda.syncthreads()
    b[bx + ty, by + tx] = tile[tx, ty]


@cuda.jit
def transpose_padded(a, b):
    tile = cuda.shared.array((32, 33), numba.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bx = cuda.blockIdx.x * 32
    by = cuda.blockIdx.y * 32
    tile[ty, tx] = a[by + ty, bx + tx]
    cuda.syncthreads()
    b[bx + ty, by + tx] = tile[tx, ty]


@cuda.jit
def broken(a):
    a[0] = undefined_name  # noqa: F821


def line_of(fn, text):
    lines, first = inspect.getsourcelines(fn.py_func)
    return first + next(i for i, l in enumerate(lines) if text in l)


def test_copy_with_offset():
    """4096 blocks of 256 threads: 4096 x 8 = 32,768 warps, one load and one store each.
    The store b[i]: 32 lanes x 4 bytes contiguous from a 128-byte aligned address = 4
    sectors, 131,072 in all, 100 % efficient. The load a[i + 1] starts 4 bytes into a
    sector, so its 128 bytes span 5 sectors: 163,840 in all, 128/160 = 80 % efficient.
    The same on CC 8.0 (32-byte sectors there too)."""
    n = 4096 * 256
    a = np.zeros(n + 1, np.float32)
    b = np.zeros(n, np.float32)
    r = wn.analyze(copy_offset, 4096, 256, a, b, 1, cc=["9.0", "8.0"])
    assert r.kernel == "copy_offset" and r.grid == (4096, 1, 1) and r.block == (256, 1, 1)
    for cc in ("9.0", "8.0"):
        t = r.totals[cc]
        assert (t["global_load"]["requests"], t["global_load"]["sectors"]) == (32768, 163840)
        assert (t["global_store"]["requests"], t["global_store"]["sectors"]) == (32768, 131072)
        assert t["global_load"]["efficiency"] == pytest.approx(0.8)
    # Attributed to the kernel's Python line, in this file.
    line = line_of(copy_offset, "b[i] = a[i + off]")
    assert {(s.line, s.op) for s in r.sites if s.cc == "9.0"} == {(line, "load"), (line, "store")}
    assert all(s.file.endswith("test_numba.py") for s in r.sites)
    # Each named by its own access of the line.
    assert {(s.op, s.text) for s in r.sites} == {("load", "a[i + off]"), ("store", "b[i]")}
    # The PTX's 15 parameters: each array's 7 (meminfo, parent, nitems, itemsize, data,
    # shape, strides) and the int64 offset, filled from the arguments.
    assert r.ptx.params == [
        "a.meminfo", "a.parent", "a.nitems", "a.itemsize", "a", "a.shape[0]", "a.strides[0]",
        "b.meminfo", "b.parent", "b.nitems", "b.itemsize", "b", "b.shape[0]", "b.strides[0]", "off",
    ]
    assert r.ptx.pointers == {"a": (n + 1) * 4, "b": n * 4}
    assert r.ptx.scalars["b.nitems"] == str(n) and r.ptx.scalars["off"] == "1"
    assert str(r.ptx.signature[2]) == "int64"
    # Without the offset the load is aligned: 4 sectors a warp.
    r0 = wn.analyze(copy_offset, 4096, 256, a, b, 0)
    assert r0.totals["9.0"]["global_load"]["sectors"] == 131072


def test_naive_transpose_walks_a_column():
    """256 x 256 floats, blocks of 32 x 8 threads over an 8 x 32 grid: 65,536 threads,
    2,048 warps. A warp is 32 consecutive x at one y. The load a[y, x] reads one row's 128
    contiguous aligned bytes: 4 sectors, 8,192 in all. The store b[x, y] writes 32 rows
    of b, 256 x 4 = 1,024 bytes apart: one sector a lane, 32 a request, 65,536 in all
    (4 of its 32 bytes used: 12.5 %)."""
    n = 256
    a = np.zeros((n, n), np.float32)
    b = np.zeros((n, n), np.float32)
    r = wn.analyze(transpose_naive, (n // 32, n // 8), (32, 8), a, b)
    t = r.totals["9.0"]
    assert (t["global_load"]["requests"], t["global_load"]["sectors"]) == (2048, 8192)
    assert (t["global_store"]["requests"], t["global_store"]["sectors"]) == (2048, 65536)
    assert t["global_store"]["efficiency"] == 0.125
    # The 2-D arrays' shape and strides (bytes) are parameters too.
    assert r.ptx.scalars["a.shape[1]"] == "256" and r.ptx.scalars["a.strides[0]"] == "1024"
    # A Fortran-ordered input: a[y, x] now walks a column of its storage (lanes 1,024
    # bytes apart): 32 sectors a warp, as the store.
    r = wn.analyze(transpose_naive, (n // 32, n // 8), (32, 8), np.asfortranarray(a), b)
    assert r.totals["9.0"]["global_load"]["sectors"] == 65536
    assert str(r.ptx.signature[0]) == "array(float32, 2d, F)"
    # The advice names the Python file the table names, not the PTX.
    advice = [line for line in r.table().splitlines() if line.startswith("advice")]
    assert advice and all(os.path.basename(__file__) in line for line in advice), advice


def test_shared_memory_tile_bank_conflicts():
    """256 x 256 floats in 32 x 32 tiles: an 8 x 8 grid of 1,024-thread blocks, 32 warps
    each, 2,048 warps. A warp is one ty and tx = 0..31. Global load and store: one row's
    128 aligned bytes, 4 sectors a warp, 8,192 each. The shared store tile[ty, tx]: 32
    consecutive words, 32 banks, 1 wavefront: 2,048. The shared load tile[tx, ty] of the
    32 x 32 tile: words 32 apart, all in one bank: 32 wavefronts, 65,536. Padded to 32 x 33:
    words 33 apart, banks (tx + ty) mod 32 all different: 1 wavefront, 2,048."""
    n = 256
    a = np.zeros((n, n), np.float32)
    b = np.zeros((n, n), np.float32)
    for kernel, shared_load_wf in ((transpose_tiled, 65536), (transpose_padded, 2048)):
        r = wn.analyze(kernel, (n // 32, n // 32), (32, 32), a, b)
        t = r.totals["9.0"]
        assert (t["global_load"]["requests"], t["global_load"]["sectors"]) == (2048, 8192)
        assert (t["global_store"]["requests"], t["global_store"]["sectors"]) == (2048, 8192)
        assert (t["shared_store"]["requests"], t["shared_store"]["wavefronts"]) == (2048, 2048)
        assert (t["shared_load"]["requests"], t["shared_load"]["wavefronts"]) == (2048, shared_load_wf)
        line = line_of(kernel, "= tile[tx, ty]")
        assert {s.line for s in r.sites if s.space == "shared" and s.op == "load"} == {line}


def test_out_of_bounds_is_a_launch_error_at_the_python_line():
    a = np.zeros(1000, np.float32)  # 1,024 threads read a[i + 0] for i < b.size = 1024
    b = np.zeros(1024, np.float32)
    with pytest.raises(warpscope.LaunchError, match="outside allocation 'a'") as e:
        wn.analyze(copy_offset, 4, 256, a, b, 0)
    assert e.value.line == line_of(copy_offset, "b[i] = a[i + off]")


def test_signature_override():
    """int32 offset given as a Numba type: the same traffic (int32 + int64 index)."""
    n = 1024
    a = np.zeros(n + 1, np.float32)
    b = np.zeros(n, np.float32)
    r = wn.analyze(copy_offset, 4, 256, a, b, 1, signature=[None, None, numba.int32])
    assert str(r.ptx.signature[2]) == "int32"
    assert r.totals["9.0"]["global_load"]["sectors"] == 32 * 5  # 32 warps x 5 sectors


# Bad input ----------------------------------------------------------------------------


def test_not_a_cuda_jit_function():
    def plain(a):
        pass

    with pytest.raises(TypeError, match="is not a @cuda.jit function"):
        wn.analyze(plain, 1, 32, np.zeros(4, np.float32))


def test_wrong_argument_count():
    a = np.zeros(64, np.float32)
    with pytest.raises(warpscope.ArgumentError, match=r"copy_offset\(a, b, off\): missing a required argument: 'off'") as e:
        wn.analyze(copy_offset, 1, 32, a, a)
    assert isinstance(e.value, TypeError)
    with pytest.raises(warpscope.ArgumentError, match="too many positional arguments"):
        wn.analyze(copy_offset, 1, 32, a, a, 0, 0)


def test_array_for_a_scalar_and_scalar_for_an_array():
    a = np.zeros(64, np.float32)
    # Given the parameter types, the values are checked against them.
    with pytest.raises(warpscope.ArgumentError, match=r"argument 'off' \(int64\) takes a scalar, not an array of shape \(64,\)"):
        wn.analyze(copy_offset, 1, 32, a, a, a, signature=[None, None, numba.int64])
    with pytest.raises(warpscope.ArgumentError, match=r"argument 'a' is an array \(array\(float32, 1d, C\)\) but 3 has no shape"):
        wn.analyze(copy_offset, 1, 32, 3, a, 0, signature=[numba.float32[::1], None, None])
    # Typed from the values, as Numba's launch does: the kernel then does not type, and
    # Numba's message says why (compile_ptx gives no line for it: the file is the kernel's).
    with pytest.raises(warpscope.CompileError, match=r"getitem\(array\(float32, 1d, C\), array\(float32, 1d, C\)\)") as e:
        wn.analyze(copy_offset, 1, 32, a, a, a)
    assert "TypingError" in e.value.message and e.value.file.endswith("test_numba.py")
    with pytest.raises(warpscope.CompileError, match="TypingError"):
        wn.analyze(copy_offset, 1, 32, 3, a, 0)


def test_unknown_cc():
    a = np.zeros(64, np.float32)
    with pytest.raises(warpscope.InputError, match="--cc 4.2"):
        wn.analyze(copy_offset, 1, 32, a, a, 0, cc="4.2")


def test_numba_compile_error_verbatim():
    with pytest.raises(warpscope.CompileError, match="undefined_name") as e:
        wn.analyze(broken, 1, 32, np.zeros(4, np.float32))
    assert "TypingError" in e.value.message  # Numba's own message
    assert e.value.file.endswith("test_numba.py")
    assert e.value.line == line_of(broken, "undefined_name")


def test_numba_not_installed(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)
    with pytest.raises(ImportError, match="pip install numba-cuda"):
        wn.analyze(copy_offset, 1, 32)


def test_nvvm_not_installed(monkeypatch):
    """numba-cuda without its CUDA libraries: cuda-pathfinder's error (as it raises it when
    libnvvm is missing) becomes an ImportError naming the pip packages."""
    DynamicLibNotFoundError = type("DynamicLibNotFoundError", (RuntimeError,), {})

    def no_nvvm(*args, **kwargs):
        raise DynamicLibNotFoundError('Failure finding "libnvvm.so": No such file: libnvvm.so')

    monkeypatch.setattr(cuda, "compile_ptx", no_nvvm)
    with pytest.raises(ImportError, match=r"pip install \"numba-cuda\[cu13\]\".*nvidia-nvvm"):
        wn.analyze(copy_offset, 1, 32, np.zeros(64, np.float32), np.zeros(64, np.float32), 0)
