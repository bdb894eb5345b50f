"""Shared fixtures: the repository root, the CLI binary (when built) and a runner for it."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def cli_binary():
    """The `warpscope` command line to compare with: $WARPSCOPE_BIN, else the repository's
    release or debug build, else one on PATH; None when there is none."""
    env = os.environ.get("WARPSCOPE_BIN")
    if env:
        return env
    for p in (ROOT / "target/release/warpscope", ROOT / "target/debug/warpscope"):
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    return shutil.which("warpscope")


@pytest.fixture
def root(monkeypatch):
    """Runs the test in the repository root (the examples' paths are relative to it)."""
    monkeypatch.chdir(ROOT)
    return ROOT


def without_nvrtc_only_venv(monkeypatch):
    """Makes the CLI take the front end the package takes: the CLI built with
    `--features cuda` compiles with NVRTC when it finds no nvcc, and finds NVRTC in
    $VIRTUAL_ENV's pip wheels (the test venv has numba-cuda's); the package has no NVRTC
    front end and uses the source interpreter there. So where $VIRTUAL_ENV has no nvcc (where
    it has one, both compile with it), the test runs without it, the package and the CLI
    alike (their notes name the places searched)."""
    venv = os.environ.get("VIRTUAL_ENV")
    if venv and not list(Path(venv).glob("lib/python3*/site-packages/nvidia/cu*/bin/nvcc")):
        monkeypatch.delenv("VIRTUAL_ENV")


@pytest.fixture
def cli(monkeypatch):
    """Runs the CLI with arguments, in the repository root and this process's environment;
    skips (visibly) when no CLI binary is built."""
    exe = cli_binary()
    if exe is None:
        pytest.skip("no warpscope CLI binary (cargo build --release, or set WARPSCOPE_BIN): compared by structure only")
    without_nvrtc_only_venv(monkeypatch)

    def run(*args, check=True):
        p = subprocess.run([exe, *args], cwd=ROOT, capture_output=True, text=True, env=dict(os.environ))
        if check and p.returncode != 0:
            raise AssertionError(f"warpscope {' '.join(args)} failed: {p.stderr}")
        return p

    return run


HARRIS = dict(kernel="offset<float>", grid=4096, block=256, args={"s": 1})
HARRIS_FLAGS = ["examples/harris.cu", "--kernel", "offset<float>", "--grid", "4096", "--block", "256", "--arg", "s=1"]


def cuda_venv():
    """The development venv with the pip nvcc (`.venv-cuda`), when it is there."""
    v = ROOT / ".venv-cuda"
    return v if list(v.glob("lib/python3*/site-packages/nvidia/cu13/bin/nvcc")) else None
