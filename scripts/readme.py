#!/usr/bin/env python3
"""Regenerates the output of every command shown in README.md.

A code block whose first line starts with `$ warpscope ` (or `$ ` and a shell pipeline
starting with warpscope) is run from the repository root with target/release/warpscope first
on PATH, and the block's remaining lines are replaced by what it printed (stdout, then
stderr). `--check` only reports the blocks whose output differs (exit 1), for CI or review.

    scripts/readme.py [--check]      (build first: cargo build --release --features cuda)
"""
import os
import re
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
readme = os.path.join(root, "README.md")
env = dict(os.environ)
env["PATH"] = os.path.join(root, "target", "release") + os.pathsep + env.get("PATH", "")
env.pop("COLUMNS", None)

text = open(readme, encoding="utf-8").read()
block = re.compile(r"^```\n(\$ [^\n]*)\n(.*?)^```\n", re.S | re.M)
changed = []


def run(m):
    cmd = m.group(1)[2:]
    if not cmd.startswith("warpscope "):
        return m.group(0)
    p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=root, env=env,
                       capture_output=True, text=True)
    out = p.stdout + p.stderr
    if not out.endswith("\n"):
        out += "\n"
    if out != m.group(2):
        changed.append(cmd)
    return f"```\n{m.group(1)}\n{out}```\n"


new = block.sub(run, text)
if "--check" in sys.argv:
    for c in changed:
        print(f"README output differs: {c}")
    sys.exit(1 if changed else 0)
open(readme, "w", encoding="utf-8").write(new)
print(f"{len(changed)} block(s) updated")
