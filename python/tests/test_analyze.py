"""warpscope.analyze: the figures, the documents and their views, against the CLI."""

import json

import pytest

import warpscope
from conftest import HARRIS, HARRIS_FLAGS, cuda_venv


def test_harris_global_loads_at_cc90(root):
    r = warpscope.analyze("examples/harris.cu", cc="9.0", **HARRIS)
    loads = [s for s in r.sites if s.space == "global" and s.op == "load"]
    assert len(loads) == 1
    # 4096 blocks x 8 warps = 32768 warp loads, one request each; the warp's 128 bytes
    # start 4 bytes into a 128-byte line (a[i + s], s = 1): 5 sectors each.
    assert loads[0].requests == 32768
    assert loads[0].sectors == 163840
    assert loads[0].transactions == 163840
    assert loads[0].efficiency == pytest.approx(0.8)
    t = r.totals["9.0"]
    assert t["global_load"]["requests"] == 32768 and t["global_load"]["sectors"] == 163840
    assert t["global_store"]["sectors"] == 163840
    assert r.ccs == ["9.0"] and r.kernel == "offset<float>"
    assert r.grid == (4096, 1, 1) and r.block == (256, 1, 1)


def test_to_dict_is_the_cli_json(root, cli):
    r = warpscope.analyze("examples/harris.cu", cc="9.0", **HARRIS)
    out = cli("analyze", *HARRIS_FLAGS, "--cc", "9.0", "--format", "json").stdout
    assert r.to_json() == out
    assert r.to_dict() == json.loads(out)
    assert r.to_dict()["schema_version"] == 1


def test_to_dict_structure(root):
    """The document's shape, for when no CLI binary is built to compare with."""
    d = warpscope.analyze("examples/harris.cu", cc=["9.0", "8.0"], **HARRIS).to_dict()
    assert list(d)[:2] == ["schema_version", "kernel"]
    assert {"source", "grid", "block", "architectures", "local_arrays", "notes", "advice"} <= set(d)
    assert [a["cc"] for a in d["architectures"]] == ["9.0", "8.0"]
    site = d["architectures"][0]["sites"][0]
    for k in ("line", "column", "text", "space", "op", "width", "requests", "transactions", "sectors", "wavefronts", "efficiency"):
        assert k in site


def test_several_ccs_and_named_sets(root, cli):
    r = warpscope.analyze("examples/harris.cu", cc=["9.0", "2.0"], **HARRIS)
    assert r.ccs == ["9.0", "2.0"]
    assert r.to_json() == cli("analyze", *HARRIS_FLAGS, "--cc", "9.0,2.0", "--format", "json").stdout
    r = warpscope.analyze("examples/harris.cu", cc="all", **HARRIS)
    assert r.ccs == warpscope.parse_ccs("all") and len(r.ccs) > 20
    assert warpscope.parse_ccs(["sm_90", 8.0, "turing"]) == ["9.0", "8.0", "7.5"]


def test_compiled_path_matches_cli(root, cli, monkeypatch):
    """With nvcc (the development venv's pip wheel), the PTX of the compile is analyzed,
    as by the CLI in the same environment."""
    venv = cuda_venv()
    if venv is None:
        pytest.skip("no .venv-cuda with the pip nvcc: compiled path not tested")
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    r = warpscope.analyze("examples/harris.cu", cc="9.0", frontend="ptx", **HARRIS)
    assert all(s.ptx for s in r.sites)
    load = next(s for s in r.sites if s.op == "load")
    assert (load.requests, load.sectors) == (32768, 163840)
    out = cli("analyze", *HARRIS_FLAGS, "--cc", "9.0", "--frontend", "ptx", "--format", "json").stdout
    assert r.to_json() == out
    # ptxas -v's figures and the occupancy (8 registers: 256-thread blocks fill 9.0's 64
    # warps with 8 blocks, limited by warps), as the CLI's JSON has them.
    res = r.resources
    assert res == json.loads(out)["resources"]
    assert (res["registers_per_thread"], res["spill_store_bytes"]) == (8, 0)
    occ = res["occupancy"][0]["theoretical"]
    assert (occ["blocks_per_sm"], occ["warps_per_sm"], occ["occupancy"]) == (8, 64, 1.0)
    assert occ["limited_by"] == ["warps"]


def test_sites_by_line_and_repr(root):
    r = warpscope.analyze("examples/harris.cu", cc=["9.0", "8.0"], **HARRIS)
    assert len(r.sites) == 4 and {s.cc for s in r.sites} == {"9.0", "8.0"}
    assert all(s.file == "examples/harris.cu" and s.line == 26 for s in r.sites)
    lines = r.by_line()
    assert [(l.cc, l.line, l.sites) for l in lines] == [("9.0", 26, 2), ("8.0", 26, 2)]
    assert lines[0].requests == 65536 and lines[0].sectors == 327680
    assert lines[0].efficiency == pytest.approx(0.8)
    text = repr(r)
    assert "offset<float>" in text and "163,840" in text
    assert r.table(width=200) == text or "163,840" in r.table(width=200)


def test_repr_html(root):
    r = warpscope.analyze("examples/harris.cu", cc=["9.0", "8.0"], **HARRIS)
    h = r._repr_html_()
    assert h.startswith("<div") and h.endswith("</div>")
    assert "<table" in h and "offset&lt;float&gt;" in h
    assert "163,840" in h and "9.0 req" in h and "8.0 req" in h and "80.0%" in h
    # One total row per memory space, never one across spaces.
    assert h.count('class="l">total global</td>') == 1 and "total shared" not in h
    assert "<script" not in h


def test_to_pandas_columns_are_the_csv(root, cli):
    pytest.importorskip("pandas", reason="pandas not installed: to_pandas not tested")
    r = warpscope.analyze("examples/harris.cu", cc=["9.0", "8.0"], **HARRIS)
    df = r.to_pandas()
    header = r.to_csv().splitlines()[0].split(",")
    assert list(df.columns) == header
    assert header == cli("analyze", *HARRIS_FLAGS, "--cc", "9.0,8.0", "--format", "csv").stdout.splitlines()[0].split(",")
    # Two sites x two CCs, then per CC one total row for its one space (global).
    assert len(df) == 6
    totals = df[df["site"] == "total"]
    assert list(zip(totals["cc"], totals["space"])) == [("9.0", "global"), ("8.0", "global")]
    sites = df[df["site"] != "total"]
    assert set(sites["cc"]) == {"9.0", "8.0"}
    assert sites["sectors"].sum() == 4 * 163840
    assert list(totals["sectors"]) == [2 * 163840, 2 * 163840]
    load = df[(df["op"] == "load") & (df["cc"] == "9.0")].iloc[0]
    assert load["requests"] == 32768 and load["efficiency_percent"] == pytest.approx(80.0)
    assert load["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 163840


def test_to_pandas_without_pandas(root, monkeypatch):
    import sys

    r = warpscope.analyze("examples/harris.cu", cc="9.0", **HARRIS)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        r.to_pandas()


LOAD_INLINE = r"""
__global__ void scale(const float* __restrict__ x, float* y, int n, float a)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
"""


def test_source_string_and_array_arguments():
    np = pytest.importorskip("numpy", reason="numpy not installed")
    x = np.zeros(1000, np.float32)
    r = warpscope.analyze(LOAD_INLINE, kernel="scale", grid=4, block=256, args={"x": x, "y": x, "n": 1000, "a": 2.0})
    assert r.source == "kernel.cu"
    loads = [s for s in r.sites if s.op == "load"]
    # 1000 floats: 31 full warps and one of 8 lanes; 4000 bytes = 125 sectors.
    assert sum(s.requests for s in loads) == 32
    assert sum(s.sectors for s in loads) == 125
    # The kernel is found when the source has one; the name shown is file=.
    r2 = warpscope.analyze(source=LOAD_INLINE, file="ext.cu", grid=4, block=256, args={"n": 1000, "a": 2.0}, allocs={"x": 1000, "y": x})
    assert r2.source == "ext.cu" and r2.kernel == "scale"
    assert [s.sectors for s in r2.sites] == [s.sectors for s in r.sites]


def test_init_from_an_array():
    np = pytest.importorskip("numpy", reason="numpy not installed")
    src = r"""
__global__ void gather(const int* idx, const float* x, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = x[idx[i]];
}
"""
    idx = np.arange(64, dtype=np.int32) * 32  # every lane a different 128-byte line
    r = warpscope.analyze(src, kernel="gather", grid=1, block=64, args={"idx": idx, "x": np.zeros(64 * 32, np.float32), "y": np.zeros(64, np.float32)},
                          init={"idx": idx}, cc="9.0")
    by_text = {s.text: s for s in r.sites}
    gathered = by_text["x[idx[i]]"]
    assert gathered.requests == 2 and gathered.sectors == 64
    coalesced = warpscope.analyze(src, kernel="gather", grid=1, block=64, args={"idx": idx, "x": np.zeros(64 * 32, np.float32), "y": np.zeros(64, np.float32)},
                                  init={"idx": "iota"}, cc="9.0")
    assert {s.text: s for s in coalesced.sites}["x[idx[i]]"].sectors == 8


def test_explain_html(root):
    e = warpscope.explain("examples/harris.cu", site=1, cc="9.0", **HARRIS)
    h = e._repr_html_()
    assert "<svg" in h or "<html" in h.lower()
    assert "offset" in e.text()
    assert e.to_dict()["schema_version"] == 1
    r = warpscope.analyze("examples/harris.cu", cc="9.0", **HARRIS)
    assert r.explain(line=26, column=12).to_dict() == e.to_dict()


def test_sample_blocks_auto_runs_every_block_of_a_small_launch(root):
    # 4096 blocks × 8 warps of harris's offset kernel fit the 24·10⁶ work-unit budget:
    # every block runs, the figures are the full run's, and a note says so.
    r = warpscope.analyze("examples/harris.cu", cc="9.0", sample_blocks="auto", **HARRIS)
    loads = [s for s in r.sites if s.space == "global" and s.op == "load"]
    assert loads[0].requests == 32768 and loads[0].sectors == 163840
    assert any("--sample-blocks auto: every block ran" in n for n in r.notes)
    with pytest.raises(warpscope.Error, match="auto"):
        warpscope.analyze("examples/harris.cu", cc="9.0", sample_blocks="some", **HARRIS)
