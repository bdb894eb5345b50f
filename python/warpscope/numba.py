"""Numba CUDA kernels: compile a ``@cuda.jit`` function for a compute capability with
Numba's own compiler (``numba.cuda.compile_ptx``: NVVM, no GPU, no driver) and analyze the
PTX it makes.

::

    import numpy as np
    from numba import cuda
    import warpscope.numba

    @cuda.jit
    def copy(a, b, off):
        i = cuda.grid(1)
        if i < b.size:
            b[i] = a[i + off]

    a = np.zeros(1 << 20, np.float32)
    b = np.zeros((1 << 20) - 32, np.float32)
    r = warpscope.numba.analyze(copy, 4096, 256, a, b, 1, cc=["9.0", "8.0"])
    print(r)          # the accesses, attributed to the kernel's Python lines

Arguments are given as to a launch ``copy[grid, block](*args)``: arrays as NumPy arrays,
Numba device arrays or anything Numba types as an array (only their shape, dtype and
strides are used; no memory is read unless ``init=`` says so), scalars as Python or NumPy
numbers.

Needs ``numba-cuda`` with NVVM: ``pip install "numba-cuda[cu13]"`` (``pip install
numba-cuda nvidia-nvvm nvidia-cuda-nvrtc nvidia-cuda-runtime`` is the least of it).
"""

from __future__ import annotations

import inspect
import os
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import ArgumentError, CompileError, Result, _analyze_spec, _content_dir, _is_array
from . import _spec, _write_once, parse_ccs

__all__ = ["analyze", "compile_ptx", "NumbaPTX"]

_INSTALL = 'pip install "numba-cuda[cu13]"'


def _import_cuda():
    """``numba.cuda``, or ImportError naming the pip package."""
    try:
        from numba import cuda  # noqa: F401
    except ImportError as e:
        raise ImportError(
            f"warpscope.numba needs Numba's CUDA target, which is not installed ({e}): pip install numba-cuda "
            f"(with NVVM: {_INSTALL}; no GPU is used)"
        ) from None
    except Exception as e:  # numba-cuda installed without the CUDA libraries it loads
        raise ImportError(
            f"warpscope.numba: numba.cuda did not load ({type(e).__name__}: {e}): {_INSTALL} "
            "installs NVVM, NVRTC and the CUDA runtime library it needs (no GPU is used)"
        ) from None
    return cuda


def _numba_types():
    try:
        from numba.cuda import types  # numba-cuda's own types (the same as numba.core's)
    except ImportError:  # pragma: no cover
        from numba.core import types
    return types


def _is_dispatcher(fn: Any) -> bool:
    try:
        from numba.cuda.dispatcher import CUDADispatcher
    except ImportError:  # pragma: no cover
        return False
    return isinstance(fn, CUDADispatcher)


def _target_cc(ccs: List[str]) -> Tuple[int, int]:
    """The one CC Numba compiles for: 9.0 when asked for, else the newest asked for; then
    the nearest one NVRTC can target (the newest at or below it, else its oldest)."""
    parsed = [tuple(int(x) for x in c.split(".")) for c in ccs]
    want = (9, 0) if (9, 0) in parsed else max(parsed)
    try:
        from numba.cuda.cudadrv import nvrtc

        supported = sorted(tuple(c) for c in nvrtc.get_supported_ccs())
    except Exception:
        return want  # type: ignore[return-value]
    if not supported:
        return want  # type: ignore[return-value]
    below = [c for c in supported if c <= want]
    return below[-1] if below else supported[0]  # type: ignore[return-value]


class NumbaPTX:
    """What Numba made of one launch: ``ptx`` (the text, its entry renamed ``name``),
    ``name``, ``target`` (``"sm_90"``…), ``signature`` (the Numba types of the arguments),
    ``params`` (the names warpscope gives the PTX's parameters, in order: an array ``a`` is
    ``a.meminfo``, ``a.parent``, ``a.nitems``, ``a.itemsize``, ``a`` (its data pointer, an
    allocation), ``a.shape[0]``…, ``a.strides[0]``…), ``pointers`` (allocation bytes by
    argument) and ``scalars`` (the value of every other parameter)."""

    def __init__(self, **kw: Any):
        self.__dict__.update(kw)

    def __repr__(self) -> str:
        return f"NumbaPTX({self.name}, {self.target}, signature={self.signature})"


def _arg_type(fn: Any, name: str, v: Any, given: Any) -> Any:
    """The Numba type of argument ``name``: ``given`` (a Numba type) when there is one, else
    as Numba's dispatcher types a launch's argument."""
    types = _numba_types()
    if given is not None:
        if not isinstance(given, types.Type):
            raise ArgumentError(f"signature: {given!r} for argument '{name}' is not a Numba type (numba.float32[:], numba.int32)")
        return given
    if isinstance(v, types.Type):
        raise ArgumentError(
            f"argument '{name}' is the Numba type {v}: give a value (an array or a number), "
            "or the types with signature= and the values as arguments"
        )
    try:
        return fn.typeof_pyval(v)
    except Exception as e:
        raise ArgumentError(f"argument '{name}'={v!r}: Numba cannot type it for a CUDA launch ({e})") from None


def _flatten(name: str, ty: Any, v: Any) -> Tuple[List[Tuple[str, Optional[str]]], Optional[int]]:
    """The PTX parameters of argument ``name`` of Numba type ``ty`` with value ``v``, as
    (parameter name, scalar value or None for the data pointer), and the data pointer's
    allocation bytes (arrays)."""
    types = _numba_types()
    if isinstance(ty, types.Array):
        if not _is_array(v):
            raise ArgumentError(f"argument '{name}' is an array ({ty}) but {v!r} has no shape and dtype")
        shape = [int(s) for s in tuple(v.shape)]
        if len(shape) != ty.ndim:
            raise ArgumentError(f"argument '{name}': a {len(shape)}-d array given for {ty}")
        itemsize = getattr(getattr(v, "dtype", None), "itemsize", None)
        itemsize = int(itemsize) if isinstance(itemsize, int) else int(ty.dtype.bitwidth) // 8
        strides = getattr(v, "strides", None)
        if not isinstance(strides, tuple) or len(strides) != len(shape):  # C order
            strides, acc = [], itemsize
            for s in reversed(shape):
                strides.insert(0, acc)
                acc *= max(s, 1)
        strides = [int(s) for s in strides]
        if any(s < 0 for s in strides):
            raise ArgumentError(
                f"argument '{name}': negative strides {tuple(strides)} (a reversed view) are not supported: "
                "pass a copy (np.ascontiguousarray)"
            )
        nitems = 1
        for s in shape:
            nitems *= s
        span = 0 if nitems == 0 else sum((s - 1) * t for s, t in zip(shape, strides)) + itemsize
        params: List[Tuple[str, Optional[str]]] = [
            (f"{name}.meminfo", "0"),
            (f"{name}.parent", "0"),
            (f"{name}.nitems", str(nitems)),
            (f"{name}.itemsize", str(itemsize)),
            (name, None),
        ]
        params += [(f"{name}.shape[{d}]", str(s)) for d, s in enumerate(shape)]
        params += [(f"{name}.strides[{d}]", str(t)) for d, t in enumerate(strides)]
        return params, span
    if _is_array(v) and tuple(v.shape) != ():
        raise ArgumentError(f"argument '{name}' ({ty}) takes a scalar, not an array of shape {tuple(v.shape)}")
    if isinstance(ty, (types.Integer, types.Boolean)):
        x = v.item() if hasattr(v, "item") else v
        return [(name, str(int(x)))], None
    if isinstance(ty, types.Float):
        x = v.item() if hasattr(v, "item") else v
        return [(name, repr(float(x)))], None
    raise ArgumentError(
        f"argument '{name}' of Numba type {ty}: warpscope.numba takes arrays, integers, floats and booleans "
        "(a tuple, record or complex argument is not supported yet)"
    )


def _bind(fn: Any, args: Sequence[Any]) -> List[str]:
    """The names of ``fn``'s parameters, checked against the positional ``args``."""
    py = fn.py_func
    sig = inspect.signature(py)
    names = list(sig.parameters)
    try:
        sig.bind(*args)
    except TypeError as e:
        raise ArgumentError(f"{py.__name__}({', '.join(names)}): {e}") from None
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values()):
        raise ArgumentError(f"{py.__name__}: a CUDA kernel takes a fixed list of parameters, not *args or **kwargs")
    if len(args) != len(names):  # defaults: Numba kernels take every argument
        raise ArgumentError(
            f"{py.__name__}({', '.join(names)}): takes {len(names)} arguments but {len(args)} were given"
        )
    return names


def compile_ptx(
    kernel: Any,
    *args: Any,
    cc: str = "9.0",
    signature: Optional[Sequence[Any]] = None,
    fastmath: Optional[bool] = None,
) -> NumbaPTX:
    """Compiles the ``@cuda.jit`` function ``kernel`` for the arguments of one launch as
    Numba would on a GPU of compute capability ``cc`` (``"9.0"``), without one:
    ``numba.cuda.compile_ptx(kernel.py_func, types, cc=(major, minor), lineinfo=True)``
    with the argument types Numba's dispatcher gives ``args`` (or ``signature``: a Numba
    type per argument, ``None`` to infer that one), and ``fastmath`` as the kernel was
    declared unless given.

    Raises ``TypeError`` for a function that is not ``@cuda.jit``,
    :class:`warpscope.ArgumentError` for arguments that do not fit it,
    :class:`warpscope.CompileError` with Numba's message verbatim, ``ImportError`` when
    numba-cuda or NVVM is not installed."""
    cuda = _import_cuda()
    if not _is_dispatcher(kernel):
        raise TypeError(
            f"warpscope.numba.analyze: {getattr(kernel, '__name__', kernel)!r} is not a @cuda.jit function "
            "(decorate it with @numba.cuda.jit; a device function (device=True) cannot be launched)"
        )
    if kernel.targetoptions.get("device"):
        raise TypeError(f"warpscope.numba.analyze: {kernel.py_func.__name__} is a device function (device=True): launch the kernel that calls it")
    names = _bind(kernel, args)
    if signature is not None:
        signature = list(signature)
        if len(signature) != len(names):
            raise ArgumentError(f"signature=: {len(signature)} types for the {len(names)} parameters of {kernel.py_func.__name__}")
    else:
        signature = [None] * len(names)
    tys = [_arg_type(kernel, n, v, t) for n, v, t in zip(names, args, signature)]
    major, minor = (int(x) for x in str(cc).split("."))
    if fastmath is None:
        fastmath = bool(kernel.targetoptions.get("fastmath", False))
    try:
        ptx, _ = cuda.compile_ptx(kernel.py_func, tuple(tys), cc=(major, minor), lineinfo=True, fastmath=fastmath)
    except ImportError:
        raise
    except Exception as e:
        if _missing_library(e):
            raise ImportError(
                f"warpscope.numba: Numba could not load a CUDA library it compiles with ({type(e).__name__}: "
                f"{str(e).splitlines()[0] if str(e) else e!r}): {_INSTALL}, or pip install nvidia-nvvm "
                "nvidia-cuda-nvrtc nvidia-cuda-runtime (no GPU is used)"
            ) from None
        raise _compile_error(kernel, e) from None
    # The entry's mangled name (it carries the types, which warpscope would otherwise read
    # as C++ parameters) becomes the Python function's.
    m = re.search(r"\.entry\s+([\w$]+)\s*\(", ptx)
    pyname = kernel.py_func.__name__
    name = re.sub(r"\W", "_", pyname) or "kernel"
    if m:
        mangled = m.group(1)
        taken = set(re.findall(r"[\w$]+", ptx.replace(mangled, " ")))
        while name in taken:
            name += "_"
        ptx = re.sub(r"(?<![\w$])" + re.escape(mangled) + r"(?=_param_\d+\b|[^\w$]|$)", name, ptx)
    params: List[str] = []
    scalars: Dict[str, str] = {}
    pointers: Dict[str, int] = {}
    for n, t, v in zip(names, tys, args):
        ps, span = _flatten(n, t, v)
        for pn, value in ps:
            params.append(pn)
            if value is not None:
                scalars[pn] = value
        if span is not None:
            pointers[n] = span
    count = len(re.findall(r"\.param\s+[.\w]+\s+(?:\.ptr\s+[.\w]+\s+)?(?:\.align\s+\d+\s+)?[\w$]+_param_\d+", ptx.split("{", 1)[0]))
    if m and count and count != len(params):
        raise ArgumentError(
            f"{pyname}: Numba's PTX has {count} parameters where warpscope expected {len(params)} for {tys}: "
            "an argument type warpscope does not lay out yet"
        )
    return NumbaPTX(
        ptx=ptx,
        name=name,
        target=f"sm_{major}{minor}",
        signature=tuple(tys),
        params=params,
        pointers=pointers,
        scalars=scalars,
        source_file=inspect.getsourcefile(kernel.py_func),
    )


def _missing_library(e: Exception) -> bool:
    """Whether ``e`` says NVVM, NVRTC or the CUDA runtime library could not be loaded (not a
    fault of the kernel)."""
    name = type(e).__name__
    text = str(e)
    return (name in ("DynamicLibNotFoundError", "NvvmSupportError", "NvrtcSupportError")
            or bool(re.search(r"lib(nvvm|nvrtc|cudart)\S* (cannot be found|not found)|Failure finding \"lib(nvvm|nvrtc|cudart)", text, re.I)))


def _compile_error(kernel: Any, e: Exception) -> CompileError:
    """Numba's typing or lowering error as a CompileError: its message verbatim, the
    kernel's Python file, and the line where Numba names one (``File "x.py", line 12``, its
    error's ``loc``) or, for an undefined name, the first line of the kernel using it."""
    message = str(e) or repr(e)
    file = line = None
    try:
        file = inspect.getsourcefile(kernel.py_func)
    except Exception:
        pass
    loc = getattr(e, "loc", None)
    m = re.search(r'File "([^"]+)", line (\d+)', message)
    if loc is not None and getattr(loc, "line", None):
        file, line = getattr(loc, "filename", file), int(loc.line)
    elif m:
        file, line = m.group(1), int(m.group(2))
    else:
        undefined = re.search(r"NameError: name '(\w+)' is not defined", message)
        if undefined:
            try:
                lines, first = inspect.getsourcelines(kernel.py_func)
                word = re.compile(r"\b" + re.escape(undefined.group(1)) + r"\b")
                line = first + next(i for i, l in enumerate(lines) if word.search(l) and not l.lstrip().startswith("def "))
            except (OSError, TypeError, StopIteration):
                pass
    return CompileError(
        f"Numba could not compile {kernel.py_func.__name__}: {type(e).__name__}: {message}", file=file, line=line
    )


def analyze(
    kernel: Any,
    grid: Union[int, Sequence[int]],
    block: Union[int, Sequence[int]],
    *args: Any,
    cc: Union[str, Sequence[str]] = "9.0",
    signature: Optional[Sequence[Any]] = None,
    fastmath: Optional[bool] = None,
    dynamic_smem: int = 0,
    sample_blocks: Optional[Union[int, float, str]] = None,
    max_steps: Optional[int] = None,
    max_memory: Optional[int] = None,
    no_sass: bool = False,
    init: Any = None,
    l1: str = "default",
    smem_bank_size: int = 4,
) -> Result:
    """Analyzes the launch ``kernel[grid, block, 0, dynamic_smem](*args)`` of a
    ``@cuda.jit`` function for the compute capabilities ``cc`` (``"9.0"``,
    ``["9.0", "8.0"]``, ``"all"``), with no GPU.

    ``grid`` (blocks) and ``block`` (threads): an int or a tuple of 1 to 3. The kernel is
    compiled by Numba (NVVM) for one target (CC 9.0 when asked for, else the newest asked
    for that NVRTC supports) with the argument types Numba's dispatcher would give ``args``
    (``signature=``: a Numba type per argument instead, ``None`` to infer one). Numba passes
    an array as several parameters; warpscope fills them from the array: its data pointer is
    an allocation of its own (named by the argument, sized in bytes from its first element
    to one past its last, aligned as a fresh device allocation), ``nitems``, ``itemsize``,
    ``shape`` and ``strides`` (bytes) as Numba's launch passes them. Integers are int64,
    floats float64, NumPy scalars their own type. Sites are attributed to the kernel's
    Python lines; the result also has ``.ptx`` (a :class:`NumbaPTX`).

    ``dynamic_smem``: bytes of dynamic shared memory (``cuda.shared.array(0, …)``);
    ``init``: what allocations hold, by argument name (``{"idx": index_array}``: its
    contents; default zeros); the other options are :func:`warpscope.analyze`'s.

    Raises ``TypeError`` for a function that is not ``@cuda.jit``;
    :class:`warpscope.ArgumentError` (also a ``TypeError``) for a wrong number of arguments,
    an array where a scalar is expected or the reverse; :class:`warpscope.InputError` for an
    unknown CC; :class:`warpscope.CompileError` with Numba's message verbatim;
    :class:`warpscope.LaunchError` for an access outside an array; ``ImportError`` naming
    ``pip install numba-cuda`` when Numba's CUDA target or NVVM is missing.
    """
    _import_cuda()
    if not _is_dispatcher(kernel):
        raise TypeError(
            f"warpscope.numba.analyze: {getattr(kernel, '__name__', kernel)!r} is not a @cuda.jit function "
            "(decorate it with @numba.cuda.jit; a device function (device=True) cannot be launched)"
        )
    ccs = parse_ccs(cc)
    major, minor = _target_cc(ccs)
    t = compile_ptx(kernel, *args, cc=f"{major}.{minor}", signature=signature, fastmath=fastmath)
    shown = f"{t.name}.ptx"
    path = os.path.join(_content_dir("numba", t.target, t.ptx), shown)
    _write_once(path, t.ptx)
    spec, _ = _spec(
        path, kernel=t.name, grid=grid, block=block, args=dict(t.scalars), allocs=dict(t.pointers), init=init,
        cc=",".join(ccs), defines=None, tensor_maps=None, textures=None, frontend="auto", source=None, path=None,
        file=None, include_dirs=None, nvcc=None, std=None, opt_level=None, no_sass=no_sass,
        dynamic_smem=dynamic_smem, max_steps=max_steps, max_memory=max_memory, sample_blocks=sample_blocks,
        l1=l1, smem_bank_size=smem_bank_size, gpu=None, profile=None, param_names=t.params,
    )
    spec["display"] = shown
    r = _analyze_spec(spec, (path, shown))
    r.ptx = t  # type: ignore[attr-defined]
    return r
