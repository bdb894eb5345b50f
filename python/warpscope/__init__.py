"""warpscope for Python: the memory requests, 32-byte sectors and shared-memory wavefronts
of a CUDA kernel's launch, for any compute capability, with no GPU.

A thin face over the ``warpscope`` Rust library (the same code as the ``warpscope``
command line)::

    import warpscope
    r = warpscope.analyze("examples/harris.cu", kernel="offset<float>",
                          grid=4096, block=256, args={"s": 1}, cc=["9.0", "8.0"])
    r.sites[0].sectors        # 32-byte sectors of the first access, summed over the launch
    r.to_dict()               # what `warpscope analyze --format json` prints
    r.to_pandas()             # one row per access and CC (the CSV's columns)

Triton kernels: :func:`warpscope.triton.analyze`.

Units: ``requests``, ``transactions``, ``sectors`` and ``wavefronts`` are counts summed
over every warp of the launch; ``sectors`` are 32-byte sectors; ``*_bytes`` are bytes;
``width`` is bytes per lane; ``efficiency`` is a fraction (bytes requested / bytes moved;
1 when every byte moved was requested, above 1 for a broadcast), ``None`` where no
transaction was issued (shared and constant memory, whose JSON has
``wavefront_efficiency``: ideal / actual wavefronts). The JSON's totals are per memory
space and direction (``global_load``) and per memory space (``global``, ``shared``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import html as _html
import io
import json
import os
import re
import shutil
import tempfile
import threading
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _warpscope as _native
from ._errors import ArgumentError, CompileError, Error, InputError, LaunchError, from_native

__version__ = _native.__version__

__all__ = [
    "analyze",
    "analyze_many",
    "explain",
    "Result",
    "Site",
    "LineSummary",
    "Explanation",
    "Error",
    "InputError",
    "ArgumentError",
    "CompileError",
    "LaunchError",
    "parse_ccs",
]

Dims = Union[int, Sequence[int]]
PathLike = Union[str, "os.PathLike[str]"]


# --------------------------------------------------------------------------------------
# Building the launch description the native module takes
# --------------------------------------------------------------------------------------


def _call(fn, *args, default_file: Optional[str] = None, rename: Optional[Tuple[str, str]] = None, **kw):
    """Calls a native function, re-raising its error as :class:`Error` or a subclass."""
    try:
        return fn(*args, **kw)
    except _native.NativeError as e:
        kind, message = e.args
        if rename is not None:
            message = message.replace(rename[0], rename[1])
        raise from_native(kind, message, default_file) from None


def parse_ccs(cc: Union[str, float, int, Iterable[Union[str, float, int]]]) -> List[str]:
    """The compute capabilities ``cc`` names, as ``"major.minor"`` strings: ``"9.0"``,
    ``"sm_90"``, ``"hopper"``, ``"9.0,8.0"``, ``["9.0", "8.0"]``, ``"all"``, ``"guide"``.

    Raises :class:`InputError` for an unknown one (the message lists the known ones)."""
    return _call(_native.parse_ccs, _cc_text(cc))


def _cc_text(cc: Any) -> str:
    if isinstance(cc, str):
        return cc
    if isinstance(cc, (int, float)):
        return _one_cc(cc)
    try:
        items = list(cc)
    except TypeError:
        raise InputError(
            f"cc={cc!r}: give a compute capability ('9.0'), a list of them, 'all' or 'guide'"
        ) from None
    if not items:
        raise InputError("cc=[]: give at least one compute capability")
    return ",".join(_one_cc(c) for c in items)


def _one_cc(c: Any) -> str:
    if isinstance(c, bool):
        raise InputError(f"cc={c!r}: not a compute capability")
    if isinstance(c, float):
        return f"{c:.1f}"
    return str(c)


def _dims(d: Any, what: str) -> List[int]:
    """A grid or block as three positive integers."""
    if isinstance(d, bool):
        raise InputError(f"{what}={d!r}: expected a positive integer or a tuple of 1 to 3")
    try:
        parts = [int(d.__index__())] if hasattr(d, "__index__") else [int(x.__index__()) for x in d]
    except (TypeError, AttributeError):
        raise InputError(
            f"{what}={d!r}: expected a positive integer or a tuple of 1 to 3 of them"
        ) from None
    if not 1 <= len(parts) <= 3:
        raise InputError(f"{what}={d!r}: expected X, (X, Y) or (X, Y, Z)")
    if any(p < 1 for p in parts):
        raise InputError(f"{what}={d!r}: dimensions must be at least 1")
    if any(p >= 2**32 for p in parts):
        raise InputError(f"{what}={d!r}: a dimension is too large")
    return parts + [1] * (3 - len(parts))


def _is_array(v: Any) -> bool:
    """Whether ``v`` is a tensor or array (something with a shape and a dtype)."""
    return hasattr(v, "shape") and hasattr(v, "dtype") and not isinstance(v, (str, bytes))


def _numel(v: Any) -> int:
    n = 1
    for s in tuple(v.shape):
        n *= int(s)
    return n


def _itemsize(v: Any) -> Optional[int]:
    """Bytes of one element of a tensor or array, if it says."""
    f = getattr(v, "element_size", None)
    if callable(f):
        return int(f())
    if isinstance(getattr(v, "itemsize", None), int):
        return int(v.itemsize)
    dt = getattr(v, "dtype", None)
    if isinstance(getattr(dt, "itemsize", None), int):
        return int(dt.itemsize)
    try:
        import numpy as np  # noqa: F401

        return int(np.dtype(str(dt).replace("torch.", "")).itemsize)
    except Exception:
        pass
    m = re.search(r"(\d+)", str(dt))
    if m:
        return max(1, int(m.group(1)) // 8)
    return None


def _nbytes(v: Any) -> int:
    """Bytes an array argument spans: its elements, or for a strided view the bytes from
    its first to one past its last element."""
    size = _itemsize(v)
    if size is None:
        raise ArgumentError(f"cannot tell the element size of {type(v).__name__} (dtype {v.dtype!r})")
    shape = [int(s) for s in tuple(v.shape)]
    if any(s == 0 for s in shape):
        return 0
    strides = None
    st = getattr(v, "stride", None)
    if callable(st):  # torch: strides in elements
        try:
            strides = [int(x) * size for x in st()]
        except Exception:
            strides = None
    elif isinstance(getattr(v, "strides", None), tuple):  # numpy: strides in bytes
        strides = [int(x) for x in v.strides]
    if strides is None or len(strides) != len(shape):
        return _numel(v) * size
    return sum((s - 1) * abs(t) for s, t in zip(shape, strides)) + size


def _scalar_text(name: str, v: Any) -> str:
    # NumPy scalars and 0-d arrays or tensors: their Python value.
    if hasattr(v, "item") and (not _is_array(v) or tuple(v.shape) == ()):
        v = v.item()
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return v
    raise ArgumentError(
        f"args[{name!r}]={v!r}: expected a number, a string, a dict of a struct's fields, or an array for a pointer"
    )


def _flatten_args(name: str, v: Any, out: List[Tuple[str, str]]) -> None:
    """A struct passed by value: ``{"d": {"n": 3, "w": [1, 2]}}`` is ``d.n=3``, ``d.w[0]=1``…"""
    if isinstance(v, Mapping):
        for k, x in v.items():
            _flatten_args(f"{name}.{k}", x, out)
    elif isinstance(v, (list, tuple)):
        for i, x in enumerate(v):
            _flatten_args(f"{name}[{i}]", x, out)
    else:
        out.append((name, _scalar_text(name, v)))


def _content_dir(*parts: str) -> str:
    """A folder under the temporary folder named by a hash of ``parts`` (the same text
    gets the same path, so nvcc's compile cache serves it again)."""
    h = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20]
    d = os.path.join(tempfile.gettempdir(), f"warpscope-py-{h}")
    os.makedirs(d, exist_ok=True)
    return d


def _write_once(path: str, text: str) -> None:
    """Writes ``text`` to ``path`` unless it already holds it, whole (aside, then renamed)."""
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except OSError:
        pass
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def _looks_like_source(s: str) -> bool:
    return "\n" in s or "__global__" in s or ".entry" in s or "{" in s


def _looks_like_ptx(s: str) -> bool:
    return bool(re.search(r"^\s*\.version\s", s, re.M)) and ".entry" in s


def _guess_kernel(text: str, ptx: bool) -> Optional[str]:
    if ptx:
        names = re.findall(r"\.entry\s+([\w$]+)", text)
    else:
        names = re.findall(r"__global__\s+(?:[\w:]+\s+)*?(?:void\s+)(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(", text)
    names = list(dict.fromkeys(names))
    return names[0] if len(names) == 1 else None


def _spec(
    source_or_path: Any,
    *,
    kernel: Optional[str],
    grid: Dims,
    block: Dims,
    args: Optional[Mapping[str, Any]],
    allocs: Optional[Mapping[str, Any]],
    init: Any,
    cc: Any,
    defines: Any,
    tensor_maps: Optional[Mapping[str, str]],
    textures: Optional[Mapping[str, str]],
    frontend: str,
    source: Optional[str],
    path: Optional[PathLike],
    file: Optional[str],
    include_dirs: Optional[Iterable[PathLike]],
    nvcc: Optional[PathLike],
    std: Optional[str],
    opt_level: Optional[Union[str, int]],
    no_sass: bool,
    dynamic_smem: int,
    max_steps: Optional[int],
    max_memory: Optional[int],
    sample_blocks: Optional[Union[int, float, str]],
    l1: str,
    smem_bank_size: int,
    gpu: Optional[str],
    profile: Optional[PathLike],
    param_names: Optional[Sequence[str]] = None,
    nvcc_flags: Optional[Iterable[str]] = None,
) -> Tuple[Dict[str, Any], Optional[Tuple[str, str]]]:
    """The native launch description, and (temporary path, shown name) for a source
    string."""
    # The kernel's text: a path, or a source string written to a file (the compiled path
    # hands nvcc a file).
    given = [x is not None for x in (source_or_path, source, path)]
    if sum(given) != 1:
        raise ArgumentError("give the kernel once: a path or CUDA/PTX source text (source_or_path, source= or path=)")
    text: Optional[str] = None
    if source is not None:
        text = source
    elif path is not None:
        path = os.fspath(path)
    elif isinstance(source_or_path, bytes):
        text = source_or_path.decode("utf-8")
    elif isinstance(source_or_path, os.PathLike):
        path = os.fspath(source_or_path)
    elif isinstance(source_or_path, str):
        if _looks_like_source(source_or_path):
            text = source_or_path
        else:
            path = source_or_path
    else:
        raise ArgumentError(
            f"source_or_path: expected a path or source text, not {type(source_or_path).__name__}"
        )
    spec: Dict[str, Any] = {}
    rename = None
    if text is not None:
        if not isinstance(text, str):
            raise ArgumentError(f"source: expected a str, not {type(text).__name__}")
        ptx = _looks_like_ptx(text)
        shown = file or ("kernel.ptx" if ptx else "kernel.cu")
        if kernel is None:
            kernel = _guess_kernel(text, ptx)
        tmp = os.path.join(_content_dir(shown, text), os.path.basename(shown))
        _write_once(tmp, text)
        spec["file"] = tmp
        spec["source"] = text
        spec["display"] = shown
        rename = (tmp, shown)
    else:
        spec["file"] = path
        if kernel is None:
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    kernel = _guess_kernel(f.read(), path.lower().endswith(".ptx"))
            except OSError:
                kernel = None
    if kernel is None:
        raise ArgumentError("kernel=: name the kernel to analyze (with template arguments for a template, e.g. 'stride<float>')")
    spec["kernel"] = str(kernel)
    spec["grid"] = _dims(grid, "grid")
    spec["block"] = _dims(block, "block")
    is_ptx = spec["file"].lower().endswith(".ptx")

    pairs: List[Tuple[str, str]] = []
    alloc_list: List[Tuple[str, int]] = []
    for name, v in (args or {}).items():
        if _is_array(v) and tuple(v.shape) != ():
            # A tensor or array for a pointer parameter sizes its allocation: elements of
            # the parameter's type for CUDA source, bytes for PTX (its pointers are untyped).
            alloc_list.append((str(name), _nbytes(v) if is_ptx else _numel(v)))
        else:
            _flatten_args(str(name), v, pairs)
    for name, v in (allocs or {}).items():
        if _is_array(v):
            alloc_list.append((str(name), _nbytes(v) if is_ptx else _numel(v)))
        else:
            try:
                n = int(v.__index__())
            except (AttributeError, TypeError):
                raise ArgumentError(f"allocs[{name!r}]={v!r}: expected a number of elements or an array") from None
            if n < 0:
                raise InputError(f"allocs[{name!r}]={v}: a size cannot be negative")
            alloc_list.append((str(name), n))
    spec["args"] = pairs
    spec["allocs"] = alloc_list
    spec["init"] = _init_rules(init)
    if cc is not None:
        spec["cc"] = _cc_text(cc)
    if defines:
        if isinstance(defines, Mapping):
            spec["defines"] = [k if v is None or v is True else f"{k}={v}" for k, v in defines.items()]
        elif isinstance(defines, str):
            spec["defines"] = [defines]
        else:
            spec["defines"] = [str(d) for d in defines]
    spec["tensor_maps"] = [(str(k), str(v)) for k, v in (tensor_maps or {}).items()]
    spec["textures"] = [f"{k}={v}" for k, v in (textures or {}).items()]
    if frontend not in ("auto", "ptx", "source"):
        raise InputError(f"frontend={frontend!r}: expected 'auto', 'ptx' or 'source'")
    spec["frontend"] = frontend
    if nvcc is not None:
        spec["nvcc"] = os.fspath(nvcc)
    spec["include_dirs"] = [os.fspath(d) for d in (include_dirs or [])]
    if std is not None:
        spec["std"] = str(std)
    if opt_level is not None:
        spec["opt_level"] = str(opt_level)
    if nvcc_flags is not None:
        if isinstance(nvcc_flags, str):
            raise InputError(f"nvcc_flags={nvcc_flags!r}: give a list of arguments, e.g. ['-maxrregcount=32']")
        spec["nvcc_flags"] = [str(f) for f in nvcc_flags]
    spec["no_sass"] = bool(no_sass)
    spec["dynamic_smem"] = int(dynamic_smem)
    if max_steps is not None:
        spec["max_steps"] = int(max_steps)
    if max_memory is not None:
        spec["max_memory"] = int(max_memory)
    if sample_blocks is not None:
        spec["sample_blocks"] = sample_blocks
    spec["l1"] = l1
    spec["smem_bank_size"] = int(smem_bank_size)
    if gpu is not None:
        spec["gpu"] = gpu
    if profile is not None:
        spec["profile"] = os.fspath(profile)
    if param_names:
        spec["param_names"] = list(param_names)
    return spec, rename


def _init_rules(init: Any) -> List[str]:
    """``init=`` as the CLI's ``--init`` rules: a mode for every pointer (``"iota"``), a
    dict of modes or arrays by parameter, or a list of ``NAME=MODE`` rules."""
    if init is None:
        return []
    if isinstance(init, str):
        return [init]
    if isinstance(init, Mapping):
        rules = []
        for name, v in init.items():
            if _is_array(v):
                rules.append(f"{name}=file:{_npy_file(v)}")
            else:
                rules.append(f"{name}={v}")
        return rules
    return [str(r) for r in init]


def _npy_file(a: Any) -> str:
    """An array's contents as a .npy file (for ``init={"x": array}``)."""
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        raise ImportError("init= with an array needs NumPy: pip install numpy") from None
    if hasattr(a, "detach"):  # torch
        a = a.detach().cpu().numpy()
    arr = np.ascontiguousarray(np.asarray(a))
    buf = io.BytesIO()
    np.save(buf, arr)
    data = buf.getvalue()
    d = _content_dir("npy", hashlib.sha256(data).hexdigest())
    p = os.path.join(d, "init.npy")
    if not os.path.exists(p):
        tmp = f"{p}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, p)
    return p


# --------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Site:
    """One access (a row of ``warpscope analyze``'s table) for one compute capability,
    its counters summed over the launch.

    ``index`` is the row (``--site N``), ``line``/``column`` 1-based in ``file``;
    ``requests``, ``transactions``, ``sectors`` (32 bytes each), ``wavefronts``
    (shared memory) and ``executions`` (warp instructions) are counts;
    ``transaction_bytes`` and ``bytes_requested`` bytes; ``width`` bytes per lane;
    ``efficiency`` a fraction 0–1 or ``None``.
    """

    cc: str
    index: int
    file: str
    line: int
    column: int
    text: str
    op: str
    space: str
    width: int
    read_only: bool
    ptx: Optional[str]
    ptx_line: Optional[int]
    executions: int
    requests: int
    transactions: int
    transaction_bytes: int
    sectors: int
    bytes_requested: int
    efficiency: Optional[float]
    wavefronts: int
    misaligned_lanes: int

    def to_dict(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)


_COUNTERS = (
    "executions",
    "requests",
    "transactions",
    "transaction_bytes",
    "sectors",
    "bytes_requested",
    "wavefronts",
    "misaligned_lanes",
)


@dataclasses.dataclass(frozen=True)
class LineSummary:
    """The accesses of one source line for one compute capability, summed (``sites``:
    how many rows); ``efficiency`` is recomputed as bytes requested / bytes moved."""

    cc: str
    file: str
    line: int
    text: str
    sites: int
    executions: int
    requests: int
    transactions: int
    transaction_bytes: int
    sectors: int
    bytes_requested: int
    wavefronts: int
    misaligned_lanes: int
    efficiency: Optional[float]

    def to_dict(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)


class Result:
    """An analysis: ``to_dict()`` is exactly what ``warpscope analyze --format json``
    prints; ``sites``, ``totals``, ``by_line()`` and ``to_pandas()`` are views of it."""

    #: For :func:`warpscope.triton.analyze`: what Triton compiled (a
    #: :class:`warpscope.triton.TritonPTX`: the PTX, signature, parameters); else ``None``.
    ptx: Any = None

    def __init__(self, native: Any, spec: Dict[str, Any], rename: Optional[Tuple[str, str]] = None):
        self._native = native
        self._spec = spec
        self._rename = rename
        self._json: Optional[str] = None
        self._doc: Optional[Dict[str, Any]] = None

    # The document ---------------------------------------------------------------------

    def to_json(self) -> str:
        """The JSON text ``warpscope analyze --format json`` prints (pretty, final newline)."""
        if self._json is None and self._native is None:
            self._json = self._detached["json"]
        if self._json is None:
            self._json = _call(self._native.json)
        return self._json

    def _d(self) -> Dict[str, Any]:
        if self._doc is None:
            self._doc = json.loads(self.to_json())
        return self._doc

    def to_dict(self) -> Dict[str, Any]:
        """The JSON document of ``warpscope analyze --format json``, parsed (a new copy
        each call), with ``schema_version``."""
        return json.loads(self.to_json())

    def to_csv(self) -> str:
        """The CSV of ``warpscope analyze --format csv``: one row per access and CC, with
        Nsight Compute's metric names as extra columns, then a ``total`` row per CC and
        memory space."""
        if self._native is None:
            return self._detached["csv"]
        return _call(self._native.csv)

    def table(self, width: Optional[int] = None, color: bool = False) -> str:
        """The text table of ``warpscope analyze``, fitted to ``width`` columns (``None``:
        the terminal's), with ANSI colours when ``color``. (A result made in another
        process, such as a Ray worker's, keeps its table as rendered there, unfitted.)"""
        if self._native is None:
            return self._detached["table_color" if color else "table"]
        if width is None:
            width = shutil.get_terminal_size((160, 24)).columns
        return self._native.table(width, color)

    def __reduce__(self):
        """Pickles as its rendered forms (JSON, CSV, tables) and launch: what crosses to
        another process (``analyze_many`` on Ray); ``explain()`` there runs the launch
        again."""
        if self._native is None:
            detached = self._detached
        else:
            detached = {
                "json": self.to_json(),
                "csv": self.to_csv(),
                "table": self._native.table(None, False),
                "table_color": self._native.table(None, True),
            }
        return (_detached_result, (detached, self._spec, self._rename, self.ptx))

    def __repr__(self) -> str:
        return self.table()

    __str__ = __repr__

    # Views ----------------------------------------------------------------------------

    @property
    def kernel(self) -> str:
        return self._d()["kernel"]

    @property
    def source(self) -> str:
        return self._d()["source"]

    @property
    def grid(self) -> Tuple[int, int, int]:
        return tuple(self._d()["grid"])  # type: ignore[return-value]

    @property
    def block(self) -> Tuple[int, int, int]:
        return tuple(self._d()["block"])  # type: ignore[return-value]

    @property
    def ccs(self) -> List[str]:
        """The compute capabilities analyzed, in the order asked for."""
        return [a["cc"] for a in self._d()["architectures"]]

    @property
    def notes(self) -> List[str]:
        return list(self._d()["notes"])

    @property
    def advice(self) -> List[Dict[str, Any]]:
        return json.loads(json.dumps(self._d()["advice"]))

    @property
    def resources(self) -> Optional[Dict[str, Any]]:
        """What ``ptxas -v`` reported for the kernel and the launch's theoretical occupancy
        per CC (the JSON's ``resources``: ``registers_per_thread``, ``spill_store_bytes``,
        ``occupancy[i]["theoretical"]["occupancy"]``, …); ``None`` unless the compiled path
        ran the SASS check."""
        r = self._d().get("resources")
        return None if r is None else json.loads(json.dumps(r))

    @property
    def sites(self) -> List[Site]:
        """Every access for every CC: the rows of the table, CC by CC in the order asked
        for."""
        d = self._d()
        out = []
        for a in d["architectures"]:
            for i, s in enumerate(a["sites"]):
                out.append(
                    Site(
                        cc=a["cc"],
                        index=i,
                        file=s.get("file", d["source"]),
                        line=s["line"],
                        column=s["column"],
                        text=s["text"],
                        op=s["op"],
                        space=s["space"],
                        width=s["width"],
                        read_only=s["read_only"],
                        ptx=s.get("ptx"),
                        ptx_line=s.get("ptx_line"),
                        efficiency=s["efficiency"],
                        **{k: s[k] for k in _COUNTERS},
                    )
                )
        return out

    @property
    def totals(self) -> Dict[str, Dict[str, Dict[str, Any]]]:
        """Sums per memory space and direction, and per memory space, by CC:
        ``totals["9.0"]["global_load"]["sectors"]``, ``totals["9.0"]["shared"]
        ["wavefront_efficiency"]`` (keys as in the JSON: global_load, global_store,
        shared_load, …, global, local, shared, constant, …)."""
        return {a["cc"]: json.loads(json.dumps(a["totals"])) for a in self._d()["architectures"]}

    def by_line(self) -> List[LineSummary]:
        """The accesses of each source line summed, per CC, in the order of the table."""
        groups: Dict[Tuple[str, str, int], List[Site]] = {}
        for s in self.sites:
            groups.setdefault((s.cc, s.file, s.line), []).append(s)
        out = []
        for (cc, file, line), ss in groups.items():
            sums = {k: sum(getattr(s, k) for s in ss) for k in _COUNTERS}
            texts = list(dict.fromkeys(s.text for s in ss))
            eff = sums["bytes_requested"] / sums["transaction_bytes"] if sums["transaction_bytes"] else None
            out.append(
                LineSummary(cc=cc, file=file, line=line, text="; ".join(texts), sites=len(ss), efficiency=eff, **sums)
            )
        return out

    def to_pandas(self):
        """A ``pandas.DataFrame`` with one row per access and CC, then one per CC and
        memory space whose ``site`` is ``"total"`` (leave those out when summing): the
        columns of ``warpscope analyze --format csv`` (``efficiency_percent`` in percent,
        empty Nsight Compute columns as missing values)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(
                "Result.to_pandas() needs pandas, which is not installed: pip install pandas"
            ) from None
        text_cols = {"kernel": str, "file": str, "text": str, "ptx": str, "op": str, "space": str, "cc": str}
        return pd.read_csv(io.StringIO(self.to_csv()), dtype=text_cols, keep_default_na=False, na_values={
            c: [""] for c in ("ptx_line",)
        }).pipe(_csv_types)

    def explain(self, *, line: Optional[int] = None, column: Optional[int] = None, site: Optional[int] = None,
                warp: Optional[int] = None) -> "Explanation":
        """Explains one access of this launch (by ``line``/``column`` of its source, or
        by ``site``, its row): see :func:`warpscope.explain`."""
        return _explain(self._spec, self._rename, line=line, column=column, site=site, warp=warp)

    def _repr_html_(self) -> str:
        return _html_table(self._d())


def _detached_result(detached: Dict[str, str], spec: Dict[str, Any], rename: Any, ptx: Any) -> Result:
    r = Result(None, spec, rename)
    r._detached = detached  # type: ignore[attr-defined]
    if ptx is not None:
        r.ptx = ptx
    return r


def _csv_types(df):
    """Numeric Nsight Compute columns: empty cells are missing values, not text."""
    import pandas as pd

    for c in df.columns:
        if "__" in c or c.endswith(".sum"):
            df[c] = pd.to_numeric(df[c].replace("", None), errors="coerce").astype("Int64")
    if "ptx_line" in df.columns:
        df["ptx_line"] = pd.to_numeric(df["ptx_line"], errors="coerce").astype("Int64")
    if "read_only" in df.columns and df["read_only"].dtype == object:
        df["read_only"] = df["read_only"].map({"true": True, "false": False})
    return df


def _fmt(n: Any) -> str:
    if n is None:
        return ""
    if isinstance(n, float):
        return f"{100 * n:.1f}%"
    return f"{n:,}"


def _eff(c: Dict[str, Any], space: str) -> str:
    """The table's ``eff`` of counters of one space: ideal / actual wavefronts for shared
    memory, bytes requested / bytes moved otherwise; above 100 % (a broadcast) shown as
    100 % marked ``*``."""
    e = c.get("wavefront_efficiency") if space == "shared" else c.get("efficiency")
    if e is not None and e > 1 + 1e-9:
        return "100.0%*"
    return _fmt(e)


def _html_table(d: Dict[str, Any]) -> str:
    """A self-contained HTML table of an analysis (for notebooks)."""
    e = _html.escape
    archs = d["architectures"]
    grid = "×".join(str(x) for x in d["grid"])
    block = "×".join(str(x) for x in d["block"])
    head = (
        f"<div><b>{e(d['kernel'])}</b> — grid ({grid}) block ({block}) — "
        f"<code>{e(d['source'])}</code></div>"
    )
    style = (
        "<style>.warpscope td,.warpscope th{padding:2px 8px;text-align:right;border-bottom:1px solid #ddd}"
        ".warpscope td.l,.warpscope th.l{text-align:left}.warpscope tr.t td{font-weight:bold}</style>"
    )
    rows_n = max((len(a["sites"]) for a in archs), default=0)
    same = all(len(a["sites"]) == rows_n for a in archs)
    if not same:  # a table per CC
        parts = [
            _html_table({**d, "architectures": [a]}) for a in archs
        ]
        return "".join(parts)
    has_ptx = any("ptx" in s for a in archs for s in a["sites"])
    cols = ["#", "site", "access"] + (["ptx (line)"] if has_ptx else []) + ["op", "space", "B"]
    th = "".join(f'<th class="l">{c}</th>' if c in ("site", "access", "ptx (line)") else f"<th>{c}</th>" for c in cols)
    for a in archs:
        th += f"<th>{e(a['cc'])} req</th><th>{e(a['cc'])} sectors/tx</th><th>{e(a['cc'])} wf</th><th>{e(a['cc'])} eff</th>"
    body = []
    for i in range(rows_n):
        s = archs[0]["sites"][i]
        where = f"{s.get('file', d['source'])}:{s['line']}:{s['column']}"
        tds = [f"<td>{i}</td>", f'<td class="l"><code>{e(where)}</code></td>', f'<td class="l"><code>{e(s["text"])}</code></td>']
        if has_ptx:
            p = f"{s['ptx']} ({s['ptx_line']})" if "ptx" in s else ""
            tds.append(f'<td class="l"><code>{e(p)}</code></td>')
        tds += [f"<td>{e(s['op'])}</td>", f"<td>{e(s['space'])}</td>", f"<td>{s['width']}</td>"]
        for a in archs:
            x = a["sites"][i]
            tds.append(f"<td>{_fmt(x['requests'])}</td><td>{_fmt(x['transactions'])}</td>"
                       f"<td>{_fmt(x['wavefronts'])}</td><td>{_eff(x, x['space'])}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    # Totals per memory space, as the text table's last rows: an efficiency is never
    # summed across spaces (shared memory's is ideal / actual wavefronts).
    for space in ("global", "local", "shared", "distributed_shared", "constant", "texture", "surface"):
        per = [a["totals"].get(space) for a in archs]
        if not any(t and (t["requests"] or t["executions"]) for t in per):
            continue
        tot = [f'<td></td><td class="l">total {e(space)}</td><td></td>'] + (["<td></td>"] if has_ptx else []) + ["<td></td>" * 3]
        for t in per:
            t = t or {}
            tot.append(f"<td>{_fmt(t.get('requests', 0))}</td><td>{_fmt(t.get('transactions', 0))}</td>"
                       f"<td>{_fmt(t.get('wavefronts', 0))}</td><td>{_eff(t, space)}</td>")
        body.append('<tr class="t">' + "".join(tot) + "</tr>")
    notes = "".join(f"<li>{e(n)}</li>" for n in d.get("notes", []))
    legend = (
        "<div><small>req: requests; sectors/tx: transactions (32-byte sectors from CC 5.0 on); "
        "wf: shared-memory wavefronts; eff: bytes requested / bytes moved (shared: ideal / actual "
        "wavefronts; *: a broadcast, capped at 100 %); totals per memory space</small></div>"
    )
    return (
        f'<div class="warpscope">{style}{head}<table class="warpscope"><thead><tr>{th}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>{legend}"
        + (f"<ul><small>{notes}</small></ul>" if notes else "")
        + "</div>"
    )


class Explanation:
    """One access explained warp by warp and CC by CC (``warpscope explain``): in a
    notebook its HTML picture; ``text()``, ``svg()``, ``html()``, ``to_dict()``."""

    def __init__(self, native: Any):
        self._native = native

    def text(self, color: bool = False) -> str:
        return self._native.text(color)

    def svg(self) -> str:
        return self._native.svg()

    def html(self) -> str:
        return self._native.html()

    def to_json(self) -> str:
        return _call(self._native.json)

    def to_dict(self) -> Dict[str, Any]:
        return json.loads(self.to_json())

    def __repr__(self) -> str:
        return self.text()

    __str__ = __repr__

    def _repr_html_(self) -> str:
        """The picture of :meth:`html` as a fragment for a notebook: its body in a
        ``<div class="warpscope-explain">``, its stylesheet scoped to that div (the page's
        ``body`` rules would restyle the whole notebook)."""
        return _html_fragment(self.html(), "warpscope-explain")


def _scope_css(css: str, scope: str) -> str:
    """``css`` with every selector under ``.scope`` (``body`` becomes ``.scope`` itself)."""

    def rule(m: "re.Match[str]") -> str:
        sels = []
        for sel in m.group(1).split(","):
            sel = sel.strip()
            if sel in ("body", "html"):
                sels.append(f".{scope}")
            elif sel:
                sels.append(f".{scope} {sel}")
        return ", ".join(sels) + " {" + m.group(2) + "}"

    return re.sub(r"([^{}]+)\{([^{}]*)\}", rule, css)


def _html_fragment(page: str, scope: str) -> str:
    """A whole HTML page as a ``<div class=scope>`` holding its body and scoped styles."""
    styles = "".join(_scope_css(m.group(1), scope) for m in re.finditer(r"<style[^>]*>(.*?)</style>", page, re.S))
    m = re.search(r"<body[^>]*>(.*)</body>", page, re.S)
    body = m.group(1) if m else page
    return f'<div class="{scope}"><style>{styles}</style>{body}</div>'


# --------------------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------------------


def analyze(
    source_or_path: Union[PathLike, str, bytes, None] = None,
    *,
    kernel: Optional[str] = None,
    grid: Dims,
    block: Dims,
    args: Optional[Mapping[str, Any]] = None,
    allocs: Optional[Mapping[str, Any]] = None,
    init: Any = None,
    cc: Any = None,
    defines: Any = None,
    tensor_maps: Optional[Mapping[str, str]] = None,
    textures: Optional[Mapping[str, str]] = None,
    frontend: str = "auto",
    source: Optional[str] = None,
    path: Optional[PathLike] = None,
    file: Optional[str] = None,
    include_dirs: Optional[Iterable[PathLike]] = None,
    nvcc: Optional[PathLike] = None,
    std: Optional[str] = None,
    opt_level: Optional[Union[str, int]] = None,
    no_sass: bool = False,
    dynamic_smem: int = 0,
    max_steps: Optional[int] = None,
    max_memory: Optional[int] = None,
    sample_blocks: Optional[Union[int, float, str]] = None,
    l1: str = "default",
    smem_bank_size: int = 4,
    gpu: Optional[str] = None,
    profile: Optional[PathLike] = None,
    nvcc_flags: Optional[Iterable[str]] = None,
) -> Result:
    """Analyzes one launch of a CUDA kernel: ``warpscope analyze`` as a function.

    ``source_or_path``: a ``.cu`` or ``.ptx`` path, or CUDA C++/PTX source text (what
    ``torch.utils.cpp_extension.load_inline`` or ``cupy.RawKernel`` take); or give
    ``source=`` or ``path=``. A source string is written to a temporary file, shown in
    reports as ``file`` (default ``kernel.cu``, or ``kernel.ptx`` for PTX).

    ``kernel``: its name, with template arguments for a template (``"offset<float>"``);
    may be left out when the source has one kernel. ``grid`` (blocks) and ``block``
    (threads): an int or a tuple of 1 to 3.

    ``args``: scalar parameters by name (``{"n": 4096, "alpha": 0.5}``; a struct passed by
    value as a dict of its fields); a tensor or array (anything with ``shape`` and
    ``dtype``) for a pointer parameter sizes its allocation. ``allocs``: allocation sizes
    by pointer parameter, in elements of its type (bytes for a PTX pointer), or an array.
    ``init``: what the allocations hold (``"iota"``, ``{"idx": "random:1"}``, or an array's
    contents). ``cc``: ``"9.0"``, ``["9.0", "8.0"]``, ``"all"`` or ``"guide"`` (default
    9.0). ``defines``: ``{"N": 128}`` or ``["N=128"]``. ``tensor_maps``/``textures``: by
    parameter name, as the CLI's ``--tensor-map``/``--texture`` values. ``frontend``:
    ``"auto"`` (compiled with nvcc when found, else the source interpreter), ``"ptx"`` or
    ``"source"``. The other options are the CLI's flags of the same names
    (``sample_blocks``: blocks, a fraction of the grid as a float, or ``"auto"``;
    ``nvcc_flags``: a list of further nvcc arguments,
    ``["-maxrregcount=32", "--use_fast_math"]``).

    Raises :class:`InputError`, :class:`CompileError`, :class:`LaunchError` (all
    :class:`Error`), with the CLI's message and the file, line and column it names.
    """
    spec, rename = _spec(
        source_or_path, kernel=kernel, grid=grid, block=block, args=args, allocs=allocs, init=init, cc=cc,
        defines=defines, tensor_maps=tensor_maps, textures=textures, frontend=frontend, source=source, path=path,
        file=file, include_dirs=include_dirs, nvcc=nvcc, std=std, opt_level=opt_level, no_sass=no_sass,
        dynamic_smem=dynamic_smem, max_steps=max_steps, max_memory=max_memory, sample_blocks=sample_blocks, l1=l1,
        smem_bank_size=smem_bank_size, gpu=gpu, profile=profile, nvcc_flags=nvcc_flags,
    )
    return _analyze_spec(spec, rename)


def _analyze_spec(spec: Dict[str, Any], rename: Optional[Tuple[str, str]] = None) -> Result:
    native = _call(_native.analyze, json.dumps(spec), default_file=spec.get("display", spec["file"]), rename=rename)
    return Result(native, spec, rename)


def _explain(spec, rename, *, line=None, column=None, site=None, warp=None) -> Explanation:
    native = _call(
        _native.explain, json.dumps(spec), line, column, site, warp,
        default_file=spec.get("display", spec["file"]), rename=rename,
    )
    return Explanation(native)


def explain(
    source_or_path: Union[PathLike, str, bytes, None] = None,
    *,
    line: Optional[int] = None,
    column: Optional[int] = None,
    site: Optional[int] = None,
    warp: Optional[int] = None,
    **launch: Any,
) -> Explanation:
    """Explains one access of a launch warp by warp and CC by CC (``warpscope explain``):
    the access at ``line`` (and ``column``) of the source, or row ``site`` of the table;
    ``warp`` the warp-level execution (0-based in launch order; default the costliest).
    The launch takes :func:`analyze`'s keyword arguments. In a notebook it shows its HTML
    picture."""
    spec, rename = _spec_of_analyze_args(source_or_path, **launch)
    return _explain(spec, rename, line=line, column=column, site=site, warp=warp)


def _spec_of_analyze_args(source_or_path=None, **kw):
    """The launch description of :func:`analyze`'s arguments (shared by :func:`explain`)."""
    import inspect

    sig = inspect.signature(analyze)
    try:
        bound = sig.bind(source_or_path, **kw)
    except TypeError as e:
        raise ArgumentError(str(e)) from None
    bound.apply_defaults()
    a = dict(bound.arguments)
    a.pop("source_or_path")
    return _spec(source_or_path, **a)



# --------------------------------------------------------------------------------------
# Many launches
# --------------------------------------------------------------------------------------

Launch = Union[Mapping[str, Any], Tuple[Any, Mapping[str, Any]], Tuple[Any, Sequence[Any], Mapping[str, Any]]]


def _launch_call(i: int, launch: Any, cc: Any) -> Tuple[Any, Tuple[Any, ...], Dict[str, Any]]:
    """(function, positional arguments, keyword arguments) of launch ``i``."""
    if isinstance(launch, Mapping):
        fn, args, kw = analyze, (), dict(launch)
    elif isinstance(launch, (tuple, list)) and len(launch) == 2 and callable(launch[0]) and isinstance(launch[1], Mapping):
        fn, args, kw = launch[0], (), dict(launch[1])
    elif (isinstance(launch, (tuple, list)) and len(launch) == 3 and callable(launch[0])
          and isinstance(launch[1], (tuple, list)) and isinstance(launch[2], Mapping)):
        fn, args, kw = launch[0], tuple(launch[1]), dict(launch[2])
    else:
        raise ArgumentError(
            f"launches[{i}]: expected a dict of warpscope.analyze's keyword arguments, (function, kwargs) "
            f"or (function, args, kwargs), not {type(launch).__name__}"
        )
    if cc is not None and "cc" not in kw:
        kw["cc"] = cc
    return fn, args, kw


def _run_launch(fn: Any, args: Tuple[Any, ...], kw: Dict[str, Any], cwd: Optional[str] = None):
    """Runs one launch: ("ok", Result) or ("error", the exception). On a Ray worker it runs
    in the caller's working folder (``cwd``), so relative paths mean what they meant there."""
    old = None
    try:
        if cwd is not None and os.path.isdir(cwd) and os.getcwd() != cwd:
            old = os.getcwd()
            os.chdir(cwd)
        return ("ok", fn(*args, **kw))
    except Exception as e:  # noqa: BLE001 — handed back to the caller, who raises or returns it
        return ("error", e)
    finally:
        if old is not None:
            os.chdir(old)


_RAY_TASK = None


def _use_ray(ray: Optional[bool]) -> Any:
    """The ``ray`` module when launches go to a Ray cluster: ``ray=None`` when Ray is
    installed and ``ray.init()`` was called, ``True`` always (an error when it cannot)."""
    if ray is False:
        return None
    if ray is None:
        # ray.init() imports Ray: when it was never imported there is no cluster (and no
        # need to pay for importing it).
        import sys

        ray_mod = sys.modules.get("ray")
        if ray_mod is None or not hasattr(ray_mod, "is_initialized"):
            return None
        return ray_mod if ray_mod.is_initialized() else None
    try:
        import ray as ray_mod
    except ImportError:
        if ray:
            raise ImportError("analyze_many(ray=True) needs Ray, which is not installed: pip install ray") from None
        return None
    if not ray_mod.is_initialized():
        if ray:
            raise Error("analyze_many(ray=True): connect to a cluster first (ray.init())")
        return None
    return ray_mod


def analyze_many(
    launches: Iterable[Launch],
    *,
    cc: Any = None,
    parallel: bool = True,
    errors: str = "raise",
    max_workers: Optional[int] = None,
    ray: Optional[bool] = None,
) -> List[Union[Result, BaseException]]:
    """Analyzes many launches at once; returns their :class:`Result` objects in the order
    of ``launches``.

    Each launch is a dict of :func:`analyze`'s arguments (``{"source_or_path":
    "examples/harris.cu", "kernel": "offset<float>", "grid": 4096, "block": 256, "args":
    {"s": 1}}``), or ``(function, kwargs)`` or ``(function, args, kwargs)`` for another
    entry point (``(warpscope.triton.analyze, (kernel, grid, x, y, out, n), {"BLOCK_SIZE":
    1024})``, ``warpscope.numba.analyze``). ``cc``: the compute capabilities of every
    launch that names none.

    Where they run: on a Ray cluster, one task per launch, when Ray is installed and
    ``ray.init()`` was called (``ray=False``: never; ``ray=True``: required); else with
    ``parallel`` on a pool of ``max_workers`` threads (default: one per core: the analysis
    runs in Rust without the GIL); else one after the other. Results that come back from
    Ray workers keep their JSON, CSV and tables (rendered there, unfitted).

    ``errors="raise"`` (default): the first failed launch in input order raises its
    exception (:class:`Error` and its subclasses, ``TypeError``, ``ImportError``, …, with
    ``launch_index`` set to its position), once the launches before it have finished;
    ``errors="return"``: the exception takes the failed launch's place in the list.

    Raises :class:`ArgumentError` for a launch that is neither form, :class:`InputError`
    for an unknown ``errors``.
    """
    if errors not in ("raise", "return"):
        raise InputError(f"errors={errors!r}: expected 'raise' or 'return'")
    calls = [_launch_call(i, l, cc) for i, l in enumerate(launches)]
    if not calls:
        return []
    ray_mod = _use_ray(ray)
    outcomes: List[Any] = [None] * len(calls)

    def done(i: int, outcome: Tuple[str, Any]) -> bool:
        """Records launch i's outcome; False when it is an error to raise."""
        status, value = outcome
        if status == "error":
            try:
                value.launch_index = i
            except Exception:  # noqa: BLE001
                pass
            if errors == "raise":
                outcomes[i] = value
                return False
        outcomes[i] = value
        return True

    if ray_mod is not None:
        global _RAY_TASK
        if _RAY_TASK is None:
            _RAY_TASK = ray_mod.remote(_run_launch)
        cwd = os.getcwd()
        refs = [_RAY_TASK.remote(fn, args, kw, cwd) for fn, args, kw in calls]
        for i, ref in enumerate(refs):
            if not done(i, ray_mod.get(ref)):
                for r in refs[i + 1:]:
                    ray_mod.cancel(r)
                raise outcomes[i]
        return outcomes
    if not parallel or len(calls) == 1:
        for i, (fn, args, kw) in enumerate(calls):
            if not done(i, _run_launch(fn, args, kw)):
                raise outcomes[i]
        return outcomes
    import concurrent.futures as cf

    workers = max_workers or os.cpu_count() or 1
    pool = cf.ThreadPoolExecutor(max_workers=min(workers, len(calls)), thread_name_prefix="warpscope")
    try:
        futures = [pool.submit(_run_launch, fn, args, kw) for fn, args, kw in calls]
        for i, f in enumerate(futures):
            if not done(i, f.result()):
                for g in futures[i + 1:]:
                    g.cancel()
                raise outcomes[i]
    finally:
        pool.shutdown(wait=True)
    return outcomes
