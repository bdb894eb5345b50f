"""Triton kernels: compile a ``@triton.jit`` function for a compute capability with
Triton's own compiler (no GPU, no driver) and analyze the PTX it makes.

::

    import warpscope.triton
    r = warpscope.triton.analyze(add_kernel, lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),),
                                 x, y, out, n, BLOCK_SIZE=1024, cc=["9.0", "8.0"])
    print(r)          # the accesses, attributed to the kernel's Python lines

Arguments are given as to a launch ``kernel[grid](*args, **kwargs)``: pointer arguments may
be torch tensors on any device (``"meta"`` tensors included), NumPy arrays, or any object
with ``shape`` and ``dtype`` (no memory is read); scalars as given.
"""

from __future__ import annotations

import inspect
import os
import re
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from . import ArgumentError, CompileError, Result, _analyze_spec, _content_dir, _is_array
from . import _nbytes, _spec, _write_once, parse_ccs

__all__ = ["analyze", "compile_ptx", "TritonPTX"]

# Keyword arguments of `analyze` that are warpscope's, not the kernel's.
_WARPSCOPE_OPTIONS = ("sample_blocks", "max_steps", "max_memory", "no_sass", "l1", "smem_bank_size", "init")


def _import_triton():
    try:
        import triton  # noqa: F401
        from triton.compiler import ASTSource  # noqa: F401
    except ImportError as e:
        raise ImportError(
            f"warpscope.triton needs Triton, which is not installed ({e}): pip install triton "
            "(the CPU-only install is enough: no GPU is used)"
        ) from None
    return triton


class _Pointer:
    """What Triton's specialization sees of a pointer argument: its dtype and a data
    pointer whose alignment is that of the real one (the CUDA caching allocator aligns every
    allocation to 512 bytes, so a tensor's pointer is aligned unless it is a view at an
    offset)."""

    def __init__(self, arg: Any, offset_bytes: int):
        self.dtype = arg.dtype
        self._offset = offset_bytes
        self.shape = tuple(arg.shape)

    def data_ptr(self) -> int:
        return self._offset


def _offset_bytes(arg: Any) -> int:
    """Bytes between a 512-byte aligned allocation and the argument's first element."""
    so = getattr(arg, "storage_offset", None)
    if callable(so):
        f = getattr(arg, "element_size", None)
        try:
            return int(so()) * (int(f()) if callable(f) else 1)
        except Exception:
            return 0
    return 0


def _target_cc(ccs: List[str]) -> Tuple[int, int]:
    """The one CC Triton compiles for: 9.0 when asked for, else the newest (as warpscope
    compiles CUDA source)."""
    parsed = [tuple(int(x) for x in c.split(".")) for c in ccs]
    if (9, 0) in parsed:
        return (9, 0)
    return max(parsed)


class TritonPTX:
    """What Triton made of one launch: ``ptx`` (the text), ``name`` (its entry),
    ``shared`` (bytes of dynamic shared memory per block), ``num_warps``, ``target``
    (``"sm_90"``…), ``signature`` and ``constexprs`` as Triton's JIT builds them,
    ``params`` (the Python names of the PTX's parameters, in order), ``scratch`` (the
    pointers Triton's launcher adds after them, ``global_scratch`` and ``profile_scratch``,
    with their bytes per program) and the launch's pointer sizes and scalar values."""

    def __init__(self, **kw: Any):
        self.__dict__.update(kw)

    def __repr__(self) -> str:
        return f"TritonPTX({self.name}, {self.target}, signature={self.signature})"


def _fix_inline_asm_locs(ptx: str) -> str:
    """Gives every line of an inline-asm block the ``.loc`` in effect before it.

    LLVM's NVPTX printer emits a ``.loc`` per line of Triton's inline-asm strings with the
    line number counting up from the op's (``.loc 1 11 9``, ``1 12 9``, ``1 13 9``…), so a
    ``tl.load`` at line 11 whose asm has four lines would be attributed to line 14. Lines are
    replaced, not removed: PTX line numbers stay as Triton wrote them."""
    lines = ptx.split("\n")
    current: Optional[str] = None
    in_asm = False
    for i, line in enumerate(lines):
        s = line.strip()
        if s.startswith("// begin inline asm"):
            in_asm = True
            continue
        if s.startswith("// end inline asm"):
            in_asm = False
            continue
        if s.startswith(".loc"):
            if in_asm and current is not None:
                indent = line[: len(line) - len(line.lstrip())]
                lines[i] = indent + current
            elif not in_asm:
                current = s
    return "\n".join(lines)


def _bind(fn: Any, backend: Any, args: Sequence[Any], kwargs: Dict[str, Any]):
    """(bound arguments by name, specialization per parameter, options) as Triton's JIT
    binds a launch (``create_function_from_signature``)."""
    from triton.runtime import jit as tjit

    make = getattr(tjit, "create_function_from_signature", None)
    if make is None:
        raise ImportError(
            f"warpscope.triton supports Triton 3.3 and later (create_function_from_signature); "
            f"this is Triton {__import__('triton').__version__}: pip install -U triton"
        )
    binder = make(fn.signature, fn.params, backend)
    try:
        return binder(*args, **kwargs)
    except TypeError as e:
        names = ", ".join(p.name + (": constexpr" if p.is_constexpr else "") for p in fn.params)
        raise ArgumentError(f"{fn.__name__}({names}): {e}") from None


def compile_ptx(
    kernel: Any,
    *args: Any,
    cc: str = "9.0",
    num_warps: int = 4,
    num_stages: int = 3,
    unaligned: Iterable[str] = (),
    options: Optional[Dict[str, Any]] = None,
    **kwargs: Any,
) -> TritonPTX:
    """Compiles ``kernel`` for the arguments of one launch as Triton's JIT would on a GPU of
    compute capability ``cc``, without one: the signature (``*fp32``, ``i32``, …) and the
    specialization (pointers and integers divisible by 16, integers equal to 1) from
    Triton's own binder, then ``triton.compile(ASTSource(...), target=GPUTarget("cuda",
    CC, 32))``. ``unaligned``: names of pointer arguments not to assume 16-byte aligned.
    ``options``: more of Triton's compile options (``maxnreg``, ``num_ctas``, …)."""
    triton = _import_triton()
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource, make_backend

    if not _is_jit(kernel):
        raise TypeError(
            f"warpscope.triton.analyze: {getattr(kernel, '__name__', kernel)!r} is not a @triton.jit function "
            "(decorate it with @triton.jit; an @triton.autotune/heuristics wrapper: pass its .fn)"
        )
    fn = kernel
    major, minor = (int(x) for x in str(cc).split("."))
    target = GPUTarget("cuda", major * 10 + minor, 32)
    backend = make_backend(target)
    unaligned = set(unaligned)
    names = [p.name for p in fn.params]
    unknown = unaligned - set(names)
    if unknown:
        raise ArgumentError(f"unaligned: {fn.__name__} has no parameter {sorted(unknown)}; its parameters: {', '.join(names)}")

    # What the binder sees: pointers as dtype + aligned pointer, NumPy scalars as numbers,
    # tensor descriptors over such a pointer.
    def prepared(name: str, v: Any) -> Any:
        if _is_descriptor(v):
            from triton.tools.tensor_descriptor import TensorDescriptor

            return TensorDescriptor(_Pointer(v.base, 0), [int(x) for x in v.shape], [int(x) for x in v.strides],
                                    [int(x) for x in v.block_shape], getattr(v, "padding", "zero"))
        if _is_array(v) and tuple(v.shape) != ():
            return _Pointer(v, 4 if name in unaligned else _offset_bytes(v))
        if hasattr(v, "item") and hasattr(v, "dtype"):
            return v.item()
        return v

    positional = [prepared(names[i] if i < len(names) else "", v) for i, v in enumerate(args)]
    keyword = {k: prepared(k, v) for k, v in kwargs.items()}
    opts = dict(options or {})
    opts.update(num_warps=num_warps, num_stages=num_stages)
    # The options JITFunction.run adds before binding (Triton 3.9: debug, instrumentation
    # mode, fpsan casts), where this Triton has them.
    try:
        from triton import knobs
    except ImportError:  # pragma: no cover
        knobs = None
    if knobs is not None:
        opts["debug"] = opts.get("debug", getattr(fn, "debug", None)) or getattr(knobs.runtime, "debug", False)
        for k in ("instrumentation_mode", "fpsan_homomorphic_casts"):
            if hasattr(knobs.compilation, k) and k not in opts:
                opts[k] = getattr(knobs.compilation, k)
    bound, specialization, run_options = _bind(fn, backend, positional, {**keyword, **opts})
    kw_opts = dict(run_options)
    try:
        compile_options, signature, constexprs, attrs = fn._pack_args(backend, kw_opts, bound, specialization, run_options)
    except KeyError as e:
        raise ArgumentError(f"{fn.__name__}: {e.args[0] if e.args else e}") from None
    try:
        compiled = triton.compile(ASTSource(fn, signature, constexprs, attrs), target=target,
                                  options=compile_options.__dict__)
    except Exception as e:  # Triton's CompilationError and the backends' errors, verbatim
        raise _compile_error(fn, e) from None
    ptx = compiled.asm["ptx"]
    m = re.search(r"\.entry\s+([\w$]+)\s*\(", ptx)
    name = m.group(1) if m else fn.__name__
    # The PTX's parameters: the arguments Triton did not make constants, in order (then
    # Triton's own scratch pointers, which keep warpscope's param_K names).
    # A host tensor descriptor is its CUtensorMap, then its shape (i32) and strides (i64)
    # per dimension, outermost first (Triton's make_tensordesc_arg).
    params: List[str] = []
    bound_values = dict(bound)
    pointers: Dict[str, int] = {}
    scalars: Dict[str, Any] = {}
    tensor_maps: Dict[str, str] = {}
    descriptor_meta = list(getattr(compiled.metadata, "tensordesc_meta", None) or [])
    for n, (ty, _) in zip(names, specialization):
        if ty == "constexpr":
            continue
        v = _original(n, names, args, kwargs, bound_values)
        if isinstance(ty, str) and ty.startswith("tensordesc"):
            if not _is_descriptor(v):
                raise ArgumentError(f"{fn.__name__}: argument '{n}' ({ty}) takes a TensorDescriptor")
            meta = descriptor_meta.pop(0) if descriptor_meta else None
            tensor_maps[n] = _tensor_map_spec(n, v, meta)
            rank = len(v.shape)
            params.append(n)
            for i in range(rank):
                params.append(f"{n}.shape{i}")
                scalars[f"{n}.shape{i}"] = int(v.shape[i])
            for i in range(rank):
                params.append(f"{n}.stride{i}")
                scalars[f"{n}.stride{i}"] = int(v.strides[i])
            continue
        params.append(n)
        if isinstance(ty, str) and ty.startswith("*"):
            if not _is_array(v):
                raise ArgumentError(f"{fn.__name__}: argument '{n}' is a pointer ({ty}) but {v!r} has no shape and dtype")
            pointers[n] = _nbytes(v)
        else:
            if _is_array(v) and tuple(v.shape) != ():
                raise ArgumentError(f"{fn.__name__}: argument '{n}' ({ty}) takes a scalar, not an array")
            scalars[n] = v.item() if hasattr(v, "item") else v
    shared = int(getattr(compiled.metadata, "shared", 0) or 0)
    # Triton's launcher passes two pointers after the arguments (Triton 3.3 and later):
    # `global_scratch` (global_scratch_size bytes per program and CTA: the 128-byte
    # CUtensorMaps tl.make_tensor_descriptor builds, among others) and `profile_scratch`
    # (for Proton), each null when its size is 0. Named so, sized per program.
    m = re.search(r"\.entry\s+[\w$]+\s*\(([^)]*)\)", ptx)
    n_ptx = len(re.findall(r"\.param\b", m.group(1))) if m else len(params)
    scratch: Dict[str, int] = {}
    for sname in ("global_scratch", "profile_scratch")[: max(0, n_ptx - len(params))]:
        scratch[sname] = int(getattr(compiled.metadata, f"{sname}_size", 0) or 0)
    return TritonPTX(
        ptx=ptx,
        name=name,
        shared=shared,
        num_warps=int(getattr(compiled.metadata, "num_warps", num_warps)),
        target=f"sm_{major}{minor}",
        signature=signature,
        constexprs={names[k[0]] if isinstance(k, tuple) and len(k) == 1 else k: v for k, v in constexprs.items()},
        params=params,
        pointers=pointers,
        scalars=scalars,
        tensor_maps=tensor_maps,
        scratch=scratch,
        num_ctas=int(getattr(compiled.metadata, "num_ctas", 1) or 1),
        bound=bound_values,
        source_file=inspect.getsourcefile(fn.fn) if hasattr(fn, "fn") else None,
    )


def _original(name: str, names: List[str], args: Sequence[Any], kwargs: Dict[str, Any], bound: Dict[str, Any]) -> Any:
    """The argument the caller gave for parameter ``name`` (not the binder's stand-in)."""
    i = names.index(name)
    if i < len(args):
        return args[i]
    if name in kwargs:
        return kwargs[name]
    return bound.get(name)


def _is_descriptor(v: Any) -> bool:
    """A Triton host tensor descriptor (``triton.tools.tensor_descriptor.TensorDescriptor``)
    or any object with its fields."""
    return all(hasattr(v, a) for a in ("base", "shape", "strides", "block_shape"))


# CUtensorMapSwizzle as Triton's metadata gives it (CU_TENSOR_MAP_SWIZZLE_NONE = 0, 32B,
# 64B, 128B).
_SWIZZLES = {0: "none", 1: "32", 2: "64", 3: "128"}
_ELEMENT_TYPES = {1: "u8", 2: "u16", 4: "u32", 8: "u64"}


def _tensor_map_spec(name: str, desc: Any, meta: Optional[Dict[str, Any]]) -> str:
    """The ``--tensor-map`` text of the CUtensorMap Triton's launcher encodes for ``desc``:
    dimensions innermost first, byte strides of dimensions 1.., the box and swizzle the
    compiler chose (``tensordesc_meta``: the box may be narrower than the block, e.g. 64
    fp16 columns under a 128-byte swizzle)."""
    if meta is None:
        raise ArgumentError(
            f"descriptor '{name}': this Triton gives no tensordesc_meta for it (a host TensorDescriptor on a "
            "target without TMA?): compile for cc 9.0 or newer"
        )
    if meta.get("is_im2col") or meta.get("fp4_padded"):
        raise ArgumentError(f"descriptor '{name}': im2col and fp4-padded descriptors are not supported yet")
    elem = int(meta["elem_size"])
    shape = [int(x) for x in desc.shape]
    strides = [int(x) for x in desc.strides]
    dims = "x".join(str(d) for d in reversed(shape))
    byte_strides = "x".join(str(s * elem) for s in reversed(strides[:-1])) or "-"
    box = "x".join(str(int(b)) for b in reversed(list(meta["block_size"])))
    oob = "nan" if getattr(desc, "padding", "zero") == "nan" else "zero"
    swizzle = _SWIZZLES.get(int(meta["swizzle"]), "none")
    return f"{_ELEMENT_TYPES[elem]}:{dims}:{byte_strides}:{box}:swizzle={swizzle},oob={oob}"


def _is_jit(k: Any) -> bool:
    try:
        from triton.runtime.jit import JITFunction
    except ImportError:  # pragma: no cover
        return False
    return isinstance(k, JITFunction)


def _compile_error(fn: Any, e: Exception) -> CompileError:
    """Triton's compile error as a CompileError: its message verbatim, the kernel's Python
    file and the line it names."""
    message = str(e) or repr(e)
    file = line = column = None
    pos = None
    node = getattr(e, "node", None)
    if node is not None and getattr(node, "lineno", None) is not None:
        pos = (node.lineno, getattr(node, "col_offset", None))
    else:
        m = re.search(r"at (\d+):(\d+):", message)
        if m:
            pos = (int(m.group(1)), int(m.group(2)))
    try:
        file = inspect.getsourcefile(fn.fn)
        if pos is not None:
            # Triton parses the function's source from its `def` line (line 1), dedented.
            lines, first = inspect.getsourcelines(fn.fn)
            k = next(i for i, l in enumerate(lines) if l.lstrip().startswith(("def ", "async def ")))
            indent = len(lines[k]) - len(lines[k].lstrip())
            line = first + k + pos[0] - 1
            column = None if pos[1] is None else pos[1] + indent + 1
    except Exception:
        pass
    return CompileError(f"Triton could not compile {fn.__name__}: {message}", file=file, line=line, column=column)


def _grid(grid: Any, meta: Dict[str, Any]) -> Tuple[int, ...]:
    g = grid(meta) if callable(grid) else grid
    if isinstance(g, int) or hasattr(g, "__index__"):
        g = (g,)
    try:
        return tuple(int(x) for x in g)
    except TypeError:
        raise ArgumentError(f"grid={grid!r}: expected a tuple of 1 to 3 integers or a callable returning one") from None


def analyze(
    kernel: Any,
    grid: Union[Sequence[int], int, Callable[[Dict[str, Any]], Sequence[int]]],
    *args: Any,
    cc: Union[str, Sequence[str]] = "9.0",
    num_warps: int = 4,
    num_stages: int = 3,
    unaligned: Iterable[str] = (),
    options: Optional[Dict[str, Any]] = None,
    sample_blocks: Optional[Union[int, float]] = None,
    max_steps: Optional[int] = None,
    max_memory: Optional[int] = None,
    no_sass: bool = False,
    init: Any = None,
    **constexprs: Any,
) -> Result:
    """Analyzes the launch ``kernel[grid](*args, num_warps=…, num_stages=…,
    **constexprs)`` of a ``@triton.jit`` function for the compute capabilities ``cc``
    (``"9.0"``, ``["9.0", "8.0"]``, ``"all"``), with no GPU.

    The kernel is compiled by Triton for one target (CC 9.0 when asked for, else the newest
    asked for) with the specialization Triton's JIT applies on a GPU; its PTX is run with
    ``grid`` (a tuple, or a callable of the meta-parameters, as Triton takes it) and
    ``32 * num_warps`` threads a block, every pointer argument an allocation of its bytes
    named by its Python name, scalars as given, and Triton's dynamic shared memory. Sites are
    attributed to the kernel's Python lines. The result also has ``.ptx`` (a
    :class:`TritonPTX`).

    Raises ``TypeError`` for a function that is not ``@triton.jit``,
    :class:`warpscope.ArgumentError` for arguments that do not fit its signature,
    :class:`warpscope.InputError` for an unknown CC, :class:`warpscope.CompileError` with
    Triton's message verbatim, ``ImportError`` when Triton is not installed.
    """
    _import_triton()
    if not _is_jit(kernel):
        raise TypeError(
            f"warpscope.triton.analyze: {getattr(kernel, '__name__', kernel)!r} is not a @triton.jit function "
            "(decorate it with @triton.jit; an @triton.autotune/heuristics wrapper: pass its .fn)"
        )
    ccs = parse_ccs(cc)
    major, minor = _target_cc(ccs)
    t = compile_ptx(kernel, *args, cc=f"{major}.{minor}", num_warps=num_warps, num_stages=num_stages,
                    unaligned=unaligned, options=options, **constexprs)
    ptx = _fix_inline_asm_locs(t.ptx)
    shown = f"{t.name}.ptx"
    path = os.path.join(_content_dir("triton", t.target, ptx), shown)
    _write_once(path, ptx)
    meta = dict(t.bound)
    g = _grid(grid, meta)
    # The scratch buffers as Triton's launcher allocates them: size × programs × CTAs (a
    # program's slice at its linear id × size); one of size 0 is a null pointer, which the
    # kernel does not touch.
    programs = 1
    for x in g:
        programs *= x
    allocs = dict(t.pointers)
    allocs.update({n: size * programs * t.num_ctas for n, size in t.scratch.items() if size > 0})
    spec, _ = _spec(
        path, kernel=t.name, grid=g, block=32 * t.num_warps,
        args={n: v for n, v in t.scalars.items()}, allocs=allocs, init=init,
        cc=",".join(ccs), defines=None, tensor_maps=t.tensor_maps or None, textures=None, frontend="auto", source=None, path=None,
        file=None, include_dirs=None, nvcc=None, std=None, opt_level=None, no_sass=no_sass,
        dynamic_smem=t.shared, max_steps=max_steps, max_memory=max_memory, sample_blocks=sample_blocks,
        l1="default", smem_bank_size=4, gpu=None, profile=None, param_names=t.params + list(t.scratch),
    )
    spec["display"] = shown
    r = _analyze_spec(spec, (path, shown))
    r.ptx = t  # type: ignore[attr-defined]
    return r
