"""Every error type: the class, the CLI's message, and the file, line and column it names."""

import pytest

import warpscope
from conftest import HARRIS, cuda_venv


def harris(**kw):
    return warpscope.analyze("examples/harris.cu", **{**HARRIS, **kw})


def test_hierarchy():
    assert issubclass(warpscope.InputError, warpscope.Error) and issubclass(warpscope.InputError, ValueError)
    assert issubclass(warpscope.ArgumentError, warpscope.InputError) and issubclass(warpscope.ArgumentError, TypeError)
    assert issubclass(warpscope.CompileError, warpscope.Error)
    assert issubclass(warpscope.LaunchError, warpscope.Error)
    assert issubclass(warpscope.Error, Exception)


def test_unknown_cc(root):
    with pytest.raises(warpscope.InputError, match=r"--cc 4\.2: compute capability 4\.2 is not in warpscope's table") as e:
        harris(cc="4.2")
    assert (e.value.file, e.value.line, e.value.column) == (None, None, None)
    with pytest.raises(warpscope.InputError, match="not a compute capability"):
        warpscope.parse_ccs("hal")


def test_message_is_the_clis(root, cli):
    with pytest.raises(warpscope.InputError) as e:
        harris(args={"q": 1})
    p = cli("analyze", "examples/harris.cu", "--kernel", "offset<float>", "--grid", "4096", "--block", "256", "--arg", "q=1", check=False)
    assert p.returncode == 1
    assert p.stderr == f"error: {e.value.message}\n"
    assert str(e.value) == e.value.message


def test_input_errors(root):
    with pytest.raises(warpscope.InputError, match="no kernel named 'nope' in examples/harris.cu; kernels found"):
        harris(kernel="nope")
    with pytest.raises(warpscope.InputError, match="has no parameter 'q'"):
        harris(args={"q": 1})
    with pytest.raises(warpscope.InputError, match="cannot read examples/none.cu") as e:
        warpscope.analyze("examples/none.cu", **HARRIS)
    assert e.value.file == "examples/none.cu"
    with pytest.raises(warpscope.InputError, match="'bogus' is not a mode"):
        harris(init={"a": "bogus"})
    with pytest.raises(warpscope.InputError, match="dimensions must be at least 1"):
        harris(grid=(0, 1))
    with pytest.raises(warpscope.InputError, match="frontend"):
        harris(frontend="nvcc")
    with pytest.raises(warpscope.ArgumentError):
        harris(args={"s": object()})
    with pytest.raises(warpscope.ArgumentError, match="kernel="):
        warpscope.analyze("__global__ void a(int*p){} __global__ void b(int*p){}", grid=1, block=32)


def test_compile_error_names_the_position():
    src = "__global__ void k(float* a)\n{\n    a[threadIdx.x] = 1 +;\n}\n"
    with pytest.raises(warpscope.CompileError, match="syntax error") as e:
        warpscope.analyze(src, kernel="k", grid=1, block=32, file="broken.cu", frontend="source")
    assert (e.value.file, e.value.line, e.value.column) == ("broken.cu", 3, 24)
    assert e.value.message.startswith("broken.cu:3:24: syntax error")


def test_nvcc_compile_error(monkeypatch):
    venv = cuda_venv()
    if venv is None:
        pytest.skip("no .venv-cuda with the pip nvcc: nvcc's errors not tested")
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    src = "__global__ void k(float* a)\n{\n    a[threadIdx.x] = undefined_name;\n}\n"
    with pytest.raises(warpscope.CompileError, match="compile failed") as e:
        warpscope.analyze(src, kernel="k", grid=1, block=32, file="bad.cu", frontend="ptx")
    assert e.value.line == 3 and e.value.file.endswith("bad.cu")
    assert "undefined_name" in e.value.message


def test_malformed_ptx():
    ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n  ld.global.zork %r1, [p];\n}\n"
    with pytest.raises(warpscope.CompileError, match="PTX line 6:3") as e:
        warpscope.analyze(ptx, grid=1, block=32)
    assert (e.value.file, e.value.line, e.value.column) == ("kernel.ptx", 6, 3)


def test_no_compiler_for_frontend_ptx(root, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    for v in ("VIRTUAL_ENV", "CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(v, raising=False)
    with pytest.raises(warpscope.CompileError, match="needs a CUDA compiler"):
        harris(frontend="ptx")


def test_launch_errors(root):
    with pytest.raises(warpscope.LaunchError, match="CC 9.0 allows at most 1024 threads per block"):
        harris(block=2048, cc="9.0")
    with pytest.raises(warpscope.LaunchError, match="outside allocation 'a'") as e:
        harris(allocs={"a": 100})
    assert (e.value.file, e.value.line, e.value.column) == ("examples/harris.cu", 26, 12)
    with pytest.raises(warpscope.LaunchError, match="loop ran more than 1000 steps") as e:
        warpscope.analyze("__global__ void k(float* a)\n{\n    while (1) { a[0] = 1; }\n}\n", kernel="k", grid=1, block=32,
                          max_steps=1000, frontend="source")
    assert e.value.line == 3


def test_a_panic_is_an_error_not_a_crash():
    from warpscope import _errors, _warpscope

    with pytest.raises(_warpscope.NativeError) as e:
        _warpscope._panic_for_test()
    kind, message = e.value.args
    assert kind == "error" and "internal error" in message and "a deliberate panic" in message
    err = _errors.from_native(kind, message)
    assert type(err) is warpscope.Error and isinstance(err, Exception)
