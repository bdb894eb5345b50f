#!/usr/bin/env python3
"""Triton kernels for warpscope's compiled (PTX) path, and the fixtures warpscope is tested with.

usage (on the device machine; scripts/h100/compiled/measure.sh runs it twice, the second time under ncu):
    python3 scripts/h100/compiled/triton_kernels.py --manifest FILE [--fixtures DIR] [--reps N]

Launches, in this order, each kernel `reps` times (default 2), synchronizing after every launch:
  add      add_kernel      out = x + y, n = 1 << 22 float32, BLOCK_SIZE 1024, num_warps 4, grid (4096,)
  softmax  softmax_kernel  row softmax of a 4096 x 1024 float32 matrix, one program per row,
                           BLOCK_SIZE = next_power_of_2(1024) = 1024, num_warps 4, grid (4096,)
  matmul   matmul_kernel   C = A @ B, M = N = K = 512, fp16 inputs, fp32 accumulator, fp16 output,
                           BLOCK 64 x 64 x 32, num_warps 4, num_stages 3 (Triton's default), grid (8, 8)
  matmul_s1 matmul_kernel  the same kernel with num_stages 1 (no software pipelining)
All loads are plain tl.load of pointer tensors (no block pointers, no TMA descriptors); no autotune.
Data (deterministic, built with torch on the GPU):
  add:     x[i] = i * 0.5, y[i] = 1.0, out zeroed
  softmax: inp[r, c] = ((r * 1024 + c) % 1000) * 0.001, out zeroed
  matmul:  a[i] = ((i % 7) - 3) * 0.25, b[i] = ((i % 5) - 2) * 0.25 (row-major, fp16), c zeroed (fp16)
With --fixtures DIR it writes, per kernel NAME: triton_NAME.ptx (kernel.asm['ptx']), triton_NAME.cubin,
triton_NAME.json (the launch as warpscope must reproduce it; see describe()).
The manifest has one line per launch (launch,rep,file,kernel,grid,block,args,dynamic_shared_bytes).
"""
import argparse
import inspect
import json
import re
import sys
import traceback

import torch
import triton
import triton.language as tl

FILE = "scripts/h100/compiled/triton_kernels.py"


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_SIZE)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * in_row_stride + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + offs, num / den, mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                  stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc=acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16))


# ----------------------------------------------------------------------------------------------
def jsonable(x):
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set)):
        return [jsonable(v) for v in x]
    if isinstance(x, (int, float, str, bool)) or x is None:
        return x
    return repr(x)


def ptx_params(ptx, entry):
    """The .param list of `.entry ENTRY(...)`, in order: [{index, name, type, attrs}]."""
    m = re.search(r"\.entry\s+" + re.escape(entry) + r"\s*\(([^)]*)\)", ptx)
    if not m:
        return []
    out = []
    for piece in m.group(1).split(","):
        toks = piece.split()
        if not toks or toks[0] != ".param":
            continue
        out.append({"index": len(out), "ptx_name": toks[-1], "ptx_type": toks[1],
                    "ptx_attrs": " ".join(toks[2:-1])})
    return out


def split_top(s, sep=","):
    parts, depth, cur = [], 0, []
    for ch in s:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return [p.strip() for p in parts]


def ttir_args(ttir, name):
    """Arguments of `tt.func ... @NAME(...)` in the TTIR: [(text)], or None."""
    m = re.search(r"tt\.func\s+(?:public\s+)?@" + re.escape(name) + r"\(", ttir)
    if not m:
        return None
    i, depth = m.end(), 1
    start = i
    while i < len(ttir) and depth:
        if ttir[i] == "(":
            depth += 1
        elif ttir[i] == ")":
            depth -= 1
        i += 1
    body = ttir[start:i - 1]
    # '->' in function types would confuse split_top's '<>' depth; TTIR args have none.
    return [a for a in split_top(body) if a.startswith("%")]


def describe(fn, kernel, grid, args, kwargs, tensors, fixture, notes):
    """The launch as warpscope must reproduce it (written to triton_NAME.json)."""
    md = kernel.metadata
    try:
        mdd = md._asdict()
    except Exception:
        mdd = dict(getattr(md, "__dict__", {}))
    num_warps = int(mdd.get("num_warps", 4))
    num_ctas = int(mdd.get("num_ctas", 1) or 1)
    name = mdd.get("name", fn.__name__)
    ptx = kernel.asm["ptx"]
    ttir = kernel.asm.get("ttir", "") if hasattr(kernel.asm, "get") else ""
    try:
        ttir = kernel.asm["ttir"]
    except Exception:
        pass

    # Python-level arguments, in order.
    sig = inspect.signature(fn.fn)
    pyargs = []
    for i, (pname, p) in enumerate(sig.parameters.items()):
        is_constexpr = "constexpr" in str(p.annotation)
        if i < len(args):
            val = args[i]
        else:
            val = kwargs.get(pname, p.default)
        entry = {"name": pname}
        if is_constexpr:
            entry.update(kind="constexpr", value=val)
        elif isinstance(val, torch.Tensor):
            tname = next((k for k, t in tensors.items() if t is val), "?")
            entry.update(kind="pointer", tensor=tname, dtype=str(val.dtype).replace("torch.", ""),
                         shape=list(val.shape), elements=val.numel(), element_bytes=val.element_size(),
                         bytes=val.numel() * val.element_size(), data_ptr_mod_256=val.data_ptr() % 256)
        elif isinstance(val, bool):
            entry.update(kind="bool", value=val)
        elif isinstance(val, int):
            entry.update(kind="int", value=val, divisible_by_16=(val % 16 == 0), equals_1=(val == 1))
        else:
            entry.update(kind=type(val).__name__, value=repr(val))
        pyargs.append(entry)
    runtime_args = [a for a in pyargs if a["kind"] != "constexpr"]
    ones = [a for a in runtime_args if a["kind"] == "int" and a["value"] == 1]

    params = ptx_params(ptx, name)
    targs = ttir_args(ttir, name) if ttir else None
    mapping_note = ""
    if targs is not None and len(targs) == len(runtime_args):
        kept, specialized = runtime_args, []
        mapping_note = "every runtime argument is a TTIR argument (none specialized away)"
    elif targs is not None and len(targs) == len(runtime_args) - len(ones):
        kept, specialized = [a for a in runtime_args if a not in ones], ones
        mapping_note = "the int arguments equal to 1 were specialized away (constexpr), as the TTIR shows"
    else:
        # Fall back on the PTX parameter count: Triton appends at most 2 scratch pointers.
        extra_all = len(params) - len(runtime_args)
        extra_ones = len(params) - (len(runtime_args) - len(ones))
        if 0 <= extra_all <= 2:
            kept, specialized = runtime_args, []
        elif 0 <= extra_ones <= 2:
            kept, specialized = [a for a in runtime_args if a not in ones], ones
        else:
            kept, specialized = runtime_args, []
            mapping_note = "MAPPING UNCERTAIN: "
        mapping_note += "mapping inferred from the PTX parameter count (TTIR signature not parsed)"
    divisible = []
    if targs is not None and len(targs) == len(kept):
        for a, t in zip(kept, targs):
            a["ttir_arg"] = t.split("loc(")[0].strip()
            if "tt.divisibility = 16" in t:
                divisible.append(a["name"])

    scratch_names = []
    if "global_scratch_size" in mdd:
        scratch_names.append("global_scratch")
    if "profile_scratch_size" in mdd:
        scratch_names.append("profile_scratch")
    launch_params = []
    for p in params:
        q = dict(p)
        if p["index"] < len(kept):
            a = kept[p["index"]]
            q["arg"] = a["name"]
            if a["kind"] == "pointer":
                q["value"] = {"tensor": a["tensor"], "dtype": a["dtype"], "elements": a["elements"],
                              "bytes": a["bytes"]}
            else:
                q["value"] = a["value"]
        else:
            j = p["index"] - len(kept)
            sname = scratch_names[j] if j < len(scratch_names) else f"appended_{j}"
            size = mdd.get(sname + "_size", None)
            q["arg"] = sname + " (appended by Triton)"
            q["value"] = 0 if not size else f"pointer to a Triton-allocated scratch buffer of {size} bytes per program"
            q["note"] = (f"metadata {sname}_size = {size}: " +
                         ("Triton passes a null pointer" if not size else "Triton allocates it"))
        launch_params.append(q)

    g = list(grid) + [1] * (3 - len(grid))
    d = {
        "fixture": fixture,
        "kernel": name,
        "source": FILE,
        "ptx_file": f"triton_{fixture}.ptx",
        "grid": g,
        "block": [num_warps * 32 * 1, 1, 1],
        "num_warps": num_warps,
        "num_ctas": num_ctas,
        "cluster_dims": mdd.get("cluster_dims"),
        "dynamic_shared_bytes": int(mdd.get("shared", 0)),
        "launch_params": launch_params,
        "python_args": pyargs,
        "specialized_away": [{"name": a["name"], "value": a["value"],
                              "why": "int argument equal to 1: Triton makes it a compile-time constant"}
                             for a in specialized],
        "divisibility_16": divisible,
        "mapping_note": mapping_note,
        "notes": notes,
        "ttir_signature_args": targs,
        "versions": {"triton": triton.__version__, "torch": torch.__version__,
                     "device": torch.cuda.get_device_name(0)},
        "metadata": jsonable(mdd),
    }
    src = getattr(kernel, "src", None)
    if src is not None:
        d["src"] = {k: jsonable(getattr(src, k)) for k in ("signature", "constexprs", "constants", "attrs")
                    if hasattr(src, k)}
    return d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--fixtures", default=None)
    ap.add_argument("--reps", type=int, default=2)
    a = ap.parse_args()
    dev = "cuda"
    n = 1 << 22
    rows, cols = 4096, 1024
    M = N = K = 512

    def make():
        t = {}
        t["x"] = torch.arange(n, dtype=torch.float32, device=dev) * 0.5
        t["y"] = torch.ones(n, dtype=torch.float32, device=dev)
        t["out"] = torch.zeros(n, dtype=torch.float32, device=dev)
        r = torch.arange(rows * cols, dtype=torch.int64, device=dev)
        t["inp"] = ((r % 1000).to(torch.float32) * 0.001).reshape(rows, cols).contiguous()
        t["sm_out"] = torch.zeros(rows, cols, dtype=torch.float32, device=dev)
        ia = torch.arange(M * K, dtype=torch.int64, device=dev)
        ib = torch.arange(K * N, dtype=torch.int64, device=dev)
        t["a"] = (((ia % 7) - 3).to(torch.float32) * 0.25).to(torch.float16).reshape(M, K).contiguous()
        t["b"] = (((ib % 5) - 2).to(torch.float32) * 0.25).to(torch.float16).reshape(K, N).contiguous()
        t["c"] = torch.zeros(M, N, dtype=torch.float16, device=dev)
        return t

    T = make()
    torch.cuda.synchronize()
    launches = [
        ("add", add_kernel, (n // 1024,), lambda: (T["x"], T["y"], T["out"], n), dict(BLOCK_SIZE=1024, num_warps=4),
         f"n_elements={n};BLOCK_SIZE=1024;num_warps=4",
         ["x = 4194304 float32 (x[i] = 0.5 i), y = 4194304 float32 (1.0), out = 4194304 float32 (zeroed)"]),
        ("softmax", softmax_kernel, (rows,),
         lambda: (T["sm_out"], T["inp"], T["inp"].stride(0), T["sm_out"].stride(0), cols),
         dict(BLOCK_SIZE=triton.next_power_of_2(cols), num_warps=4),
         f"in_row_stride={cols};out_row_stride={cols};n_cols={cols};BLOCK_SIZE=1024;num_warps=4",
         ["inp = sm_out = 4096 x 1024 float32 row-major; inp[r,c] = ((r*1024 + c) % 1000) * 0.001"]),
        ("matmul", matmul_kernel, (M // 64, N // 64),
         lambda: (T["a"], T["b"], T["c"], M, N, K, T["a"].stride(0), T["a"].stride(1), T["b"].stride(0),
                  T["b"].stride(1), T["c"].stride(0), T["c"].stride(1)),
         dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_warps=4, num_stages=3),
         "M=512;N=512;K=512;stride_am=512;stride_ak=1;stride_bk=512;stride_bn=1;stride_cm=512;stride_cn=1;"
         "BLOCK_M=64;BLOCK_N=64;BLOCK_K=32;num_warps=4;num_stages=3",
         ["a = 512 x 512 fp16 (a[i] = ((i % 7) - 3) / 4), b = 512 x 512 fp16 (((i % 5) - 2) / 4), "
          "c = 512 x 512 fp16 zeroed; all row-major"]),
        ("matmul_s1", matmul_kernel, (M // 64, N // 64),
         lambda: (T["a"], T["b"], T["c"], M, N, K, T["a"].stride(0), T["a"].stride(1), T["b"].stride(0),
                  T["b"].stride(1), T["c"].stride(0), T["c"].stride(1)),
         dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_warps=4, num_stages=1),
         "M=512;N=512;K=512;stride_am=512;stride_ak=1;stride_bk=512;stride_bn=1;stride_cm=512;stride_cn=1;"
         "BLOCK_M=64;BLOCK_N=64;BLOCK_K=32;num_warps=4;num_stages=1",
         ["as matmul, num_stages=1"]),
    ]
    man = open(a.manifest, "w")
    man.write(f"# Triton {triton.__version__}, torch {torch.__version__}: {FILE}\n")
    man.write("# add: x, y, out = 4194304 float32 each; x[i] = 0.5 i, y[i] = 1, out zeroed\n")
    man.write("# softmax: inp, out = 4096 x 1024 float32 (row stride 1024); inp[r,c] = ((r*1024 + c) % 1000) * 0.001\n")
    man.write("# matmul, matmul_s1: a, b, c = 512 x 512 fp16 row-major; a[i] = ((i % 7) - 3) / 4, "
              "b[i] = ((i % 5) - 2) / 4, c zeroed; fp32 accumulator\n")
    man.write("# Triton pointer arguments are torch allocations (256-byte aligned); the launch parameters "
              "in PTX order are in tests/data/h100/compiled/triton_*.json\n")
    man.write("launch,rep,file,kernel,grid,block,args,dynamic_shared_bytes\n")
    man.flush()
    count = 0
    failed = 0
    for rep in range(a.reps):
        for fixture, fn, grid, argf, kw, argstr, notes in launches:
            try:
                args = argf()
                k = fn[grid](*args, **kw)
                torch.cuda.synchronize()
                if k is None or not hasattr(k, "metadata"):
                    k = fn.warmup(*args, grid=grid, **kw)
                md = k.metadata
            except Exception:
                failed += 1
                print(f"LAUNCH FAILED: {fixture}", file=sys.stderr)
                traceback.print_exc()
                continue
            nw = int(getattr(md, "num_warps", kw.get("num_warps", 4)))
            shared = int(getattr(md, "shared", 0))
            g = list(grid) + [1] * (3 - len(grid))
            man.write(f"{count},{rep},{FILE},{fn.__name__},{g[0]};{g[1]};{g[2]},{nw * 32};1;1,"
                      f"fixture={fixture};{argstr},{shared}\n")
            man.flush()
            count += 1
            if rep == 0 and a.fixtures:
                try:
                    tensors = {name: t for name, t in T.items()}
                    d = describe(fn, k, grid, args, kw, tensors, fixture, notes)
                    with open(f"{a.fixtures}/triton_{fixture}.ptx", "w") as f:
                        f.write(k.asm["ptx"])
                    with open(f"{a.fixtures}/triton_{fixture}.cubin", "wb") as f:
                        f.write(k.asm["cubin"])
                    with open(f"{a.fixtures}/triton_{fixture}.json", "w") as f:
                        json.dump(jsonable(d), f, indent=1)
                        f.write("\n")
                    print(f"{fixture}: grid {d['grid']} block {d['block']} shared {d['dynamic_shared_bytes']} "
                          f"params {[(p['ptx_type'], p.get('arg')) for p in d['launch_params']]} "
                          f"specialized {[s['name'] for s in d['specialized_away']]} "
                          f"div16 {d['divisibility_16']}")
                except Exception:
                    failed += 1
                    print(f"FIXTURE FAILED: {fixture}", file=sys.stderr)
                    traceback.print_exc()
    # A quick look that the kernels computed something sensible (not a check).
    ref = (T["a"].float() @ T["b"].float())
    print(f"triton done: {count} launches; add out[3] = {T['out'][3].item()}; softmax row 0 sum = "
          f"{T['sm_out'][0].sum().item():.4f}; matmul max |c - ref| = {(T['c'].float() - ref).abs().max().item()}")
    man.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
