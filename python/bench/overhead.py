"""What a Python ``warpscope.analyze`` call costs against the same analysis by the CLI.

    python python/bench/overhead.py [--runs 20] [--bin target/release/warpscope] [--json]

Runs each launch (examples/harris.cu's ``offset<float>``, ``--grid 4096 --block 256 --arg
s=1``, and its ``stride<float>`` with s=8, on CC 9.0 and on CC 9.0,8.0,7.0) ``--runs``
times each way, alternating, after one warm-up run:

* Python: ``warpscope.analyze(...)`` and ``.to_json()`` in this process (wall time of the
  call, ``time.perf_counter``);
* CLI: ``warpscope analyze FILE ... --format json`` as a subprocess (wall time from spawn to
  exit, output read), the same work plus starting a process.

Prints the medians (ms), the difference Python − CLI, and the Python layer's own share of a
call (its time outside the native analysis: what a call adds to the library's work, where
the CLI adds starting a process); the target (issue 17) is a Python
call at most 20 ms more than the CLI. Also the one-time ``import warpscope`` of a fresh
interpreter. Both use this environment, so both take the same front end (nvcc's compiled
path where nvcc is found, e.g. with VIRTUAL_ENV=.venv-cuda, else the source interpreter).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

LAUNCHES = [
    ("offset<float> s=1, CC 9.0", dict(kernel="offset<float>", grid=4096, block=256, args={"s": 1}, cc="9.0")),
    ("stride<float> s=8, CC 9.0", dict(kernel="stride<float>", grid=4096, block=256, args={"s": 8}, cc="9.0")),
    ("offset<float> s=1, CC 9.0,8.0,7.0", dict(kernel="offset<float>", grid=4096, block=256, args={"s": 1},
                                               cc="9.0,8.0,7.0")),
]


def cli_flags(kw):
    flags = ["examples/harris.cu", "--kernel", kw["kernel"], "--grid", str(kw["grid"]), "--block", str(kw["block"])]
    for k, v in kw["args"].items():
        flags += ["--arg", f"{k}={v}"]
    return flags + ["--cc", kw["cc"], "--format", "json"]


def same_front_end():
    """Drops a $VIRTUAL_ENV without nvcc from this process's environment (the package's and
    the CLI's): there the CLI (built with `--features cuda`) would compile with NVRTC from
    its pip wheels, which the package has no front end for, and they would not do the same
    work."""
    venv = os.environ.get("VIRTUAL_ENV")
    if venv and not list(Path(venv).glob("lib/python3*/site-packages/nvidia/cu*/bin/nvcc")):
        os.environ.pop("VIRTUAL_ENV")


def find_cli(given):
    if given:
        return given
    for p in (ROOT / "target/release/warpscope",):
        if p.is_file():
            return str(p)
    return shutil.which("warpscope")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--bin", help="the warpscope CLI (default: target/release/warpscope)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    a = ap.parse_args()
    exe = find_cli(a.bin)
    if exe is None:
        sys.exit("no warpscope CLI: cargo build --release (or --bin PATH)")
    os.chdir(ROOT)
    same_front_end()

    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import warpscope"], check=True)
    import_ms = (time.perf_counter() - t) * 1e3
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    bare_ms = (time.perf_counter() - t) * 1e3

    import warpscope

    # The native analysis's own time inside each Python call: the rest of the call is the
    # Python layer's (building the launch description, the JSON text).
    native_analyze = warpscope._native.analyze
    native_ms = []

    def timed(spec_json):
        t = time.perf_counter()
        try:
            return native_analyze(spec_json)
        finally:
            native_ms.append((time.perf_counter() - t) * 1e3)

    warpscope._native.analyze = timed
    rows = []
    for name, kw in LAUNCHES:
        flags = cli_flags(kw)
        py, cli, layer = [], [], []
        # Warm-up (nvcc's cache, the page cache), and the two must agree.
        same = warpscope.analyze("examples/harris.cu", **kw).to_json() == subprocess.run(
            [exe, "analyze", *flags], capture_output=True, text=True, check=True).stdout
        for _ in range(a.runs):
            t = time.perf_counter()
            warpscope.analyze("examples/harris.cu", **kw).to_json()
            py.append((time.perf_counter() - t) * 1e3)
            layer.append(py[-1] - native_ms[-1])
            t = time.perf_counter()
            subprocess.run([exe, "analyze", *flags], capture_output=True, check=True)
            cli.append((time.perf_counter() - t) * 1e3)
        rows.append(dict(launch=name, python_ms=statistics.median(py), cli_ms=statistics.median(cli),
                         python_min_ms=min(py), cli_min_ms=min(cli), python_layer_ms=statistics.median(layer),
                         same_json=same))
    notes = warpscope.analyze("examples/harris.cu", **LAUNCHES[0][1]).notes
    front = "source interpreter" if any("source interpreter" in n for n in notes) else "compiled (nvcc)"
    out = dict(runs=a.runs, cli=exe, front_end=front, import_warpscope_ms=import_ms - bare_ms, rows=rows,
               cores=os.cpu_count())
    if a.json:
        print(json.dumps(out, indent=2))
        return
    print(f"front end: {front}; {a.runs} runs each, medians (min); {os.cpu_count()} cores")
    print(f"{'launch':36} {'Python ms':>16} {'CLI ms':>16} {'Python - CLI':>12} {'Python layer':>12}  same JSON")
    for r in rows:
        print(f"{r['launch']:36} {r['python_ms']:8.1f} ({r['python_min_ms']:5.1f}) {r['cli_ms']:8.1f} "
              f"({r['cli_min_ms']:5.1f}) {r['python_ms'] - r['cli_ms']:+12.1f} {r['python_layer_ms']:12.2f}  {r['same_json']}")
    print("Python layer: the call's time outside the native analysis (median ms)")
    print(f"import warpscope in a fresh interpreter: {import_ms - bare_ms:.1f} ms (once per process)")
    worst = max(r["python_ms"] - r["cli_ms"] for r in rows)
    print(f"target: a Python call at most 20 ms more than the CLI: {'met' if worst <= 20 else 'NOT met'} "
          f"(worst {worst:+.1f} ms)")


if __name__ == "__main__":
    main()
