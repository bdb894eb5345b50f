"""examples/warpscope.ipynb runs from top to bottom (nbclient, a local IPython kernel) and
shows the figures of the CUDA coalescing rules. Skipped, saying so, without nbclient,
nbformat or ipykernel."""

import pytest

from conftest import ROOT

nbformat = pytest.importorskip("nbformat", reason="nbformat not installed (pip install nbformat): notebook not run")
nbclient = pytest.importorskip("nbclient", reason="nbclient not installed (pip install nbclient): notebook not run")
pytest.importorskip("ipykernel", reason="ipykernel not installed (pip install ipykernel): notebook not run")


def outputs(cell, mime):
    """The text of a code cell's outputs of one MIME type (its standard output for
    text/plain)."""
    out = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream" and o.get("name") == "stdout" and mime == "text/plain":
            out.append(o["text"])
        elif "data" in o and mime in o["data"]:
            out.append(o["data"][mime])
    return "".join(out)


def test_notebook_runs_and_shows_the_figures():
    path = ROOT / "examples/warpscope.ipynb"
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert not [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    # harris offset<float>, s = 1: 4,096 blocks x 8 warps = 32,768 requests a site; each
    # warp's 128 bytes start 4 bytes into a sector: 5 sectors a request, 163,840 in all,
    # 128/160 = 80 % efficiency; on CC 9.0 and 8.0 alike.
    table = outputs(code[1], "text/html")
    # Load and store, each CC: 163,840 sectors; the totals rows 327,680.
    assert "offset&lt;float&gt;" in table and table.count("163,840") == 2 * 2
    assert table.count("327,680") == 2 and "80.0%" in table
    assert outputs(code[2], "text/plain").splitlines() == [
        "CC 9.0: global loads 32,768 requests, 163,840 sectors, 5 sectors a request, 80% efficient",
        "CC 8.0: global loads 32,768 requests, 163,840 sectors, 5 sectors a request, 80% efficient",
    ]
    # The explain picture: the costliest warp, 5 sectors of 32 bytes for its 128.
    picture = outputs(code[3], "text/html")
    assert picture.startswith('<div class="warpscope-explain">') and "<svg" in picture
    assert "5 transactions · 160 B moved (5 sectors) · 128 B requested · 80.0% efficiency" in picture
    # Offsets 0 and 8 (32 bytes) keep a warp on 4 sectors; 1 to 7 straddle a fifth.
    assert outputs(code[4], "text/plain").splitlines() == [
        f"s={s}: {4 if s in (0, 8) else 5} sectors a request" for s in range(9)
    ]
