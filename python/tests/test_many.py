"""warpscope.analyze_many: many launches on local threads or a Ray cluster, in input order.

Figures follow the coalescing rule of CC 9.0: a warp's access is one request and moves
every 32-byte sector its 32 lanes touch."""

import pickle

import pytest

import warpscope
from conftest import ROOT

# examples/harris.cu's stride<float>: a[i * s] += 1 with i the global thread index. 256
# blocks of 256 threads = 2,048 warps, one load and one store each; a warp's 32 floats s
# apart touch min(4 s, 32) sectors (s = 1: 128 contiguous bytes, 4 sectors; s = 8: one
# sector a lane).
STRIDES = (1, 2, 4, 8)
WARPS = 256 * 256 // 32


def stride_launch(s, **kw):
    return dict(source_or_path=str(ROOT / "examples/harris.cu"), kernel="stride<float>", grid=256, block=256,
                args={"s": s}, **kw)


def check_strides(results):
    for s, r in zip(STRIDES, results):
        assert isinstance(r, warpscope.Result)
        t = r.totals["9.0"]["global_load"]
        assert (t["requests"], t["sectors"]) == (WARPS, WARPS * min(4 * s, 32)), s


def test_threads_in_input_order_and_as_analyze():
    results = warpscope.analyze_many([stride_launch(s) for s in STRIDES], cc="9.0")
    check_strides(results)
    # The same documents as one call at a time.
    one = warpscope.analyze(**stride_launch(4, cc="9.0"))
    assert results[2].to_json() == one.to_json()
    sequential = warpscope.analyze_many([stride_launch(s) for s in STRIDES], cc="9.0", parallel=False)
    assert [r.to_json() for r in sequential] == [r.to_json() for r in results]


def test_cc_applies_where_a_launch_names_none():
    results = warpscope.analyze_many([stride_launch(1), stride_launch(1, cc="8.0")], cc=["9.0", "7.0"])
    assert results[0].ccs == ["9.0", "7.0"] and results[1].ccs == ["8.0"]


def test_callable_forms(root):
    # (function, kwargs) and (function, args, kwargs): here warpscope.analyze itself.
    results = warpscope.analyze_many([
        (warpscope.analyze, {"source_or_path": "examples/harris.cu", "kernel": "stride<float>", "grid": 256,
                             "block": 256, "args": {"s": 2}}),
        (warpscope.analyze, ("examples/harris.cu",), {"kernel": "stride<float>", "grid": 256, "block": 256,
                                                      "args": {"s": 8}}),
    ], cc="9.0")
    assert [r.totals["9.0"]["global_load"]["sectors"] for r in results] == [WARPS * 8, WARPS * 32]


def test_errors_returned_or_raised():
    # An unknown CC, an unknown parameter, between two good launches.
    launches = [stride_launch(1), stride_launch(2, cc="4.2"), dict(stride_launch(4), args={"s": 4, "nope": 1}),
                stride_launch(8)]
    out = warpscope.analyze_many(launches, cc="9.0", errors="return")
    assert isinstance(out[0], warpscope.Result) and isinstance(out[3], warpscope.Result)
    assert isinstance(out[1], warpscope.InputError) and "4.2" in str(out[1]) and out[1].launch_index == 1
    assert isinstance(out[2], warpscope.InputError) and "nope" in str(out[2]) and out[2].launch_index == 2
    assert out[3].totals["9.0"]["global_load"]["sectors"] == WARPS * 32
    # raise: the first failure in input order.
    with pytest.raises(warpscope.InputError, match="4.2") as e:
        warpscope.analyze_many(launches, cc="9.0")
    assert e.value.launch_index == 1
    with pytest.raises(warpscope.InputError, match="nope"):
        warpscope.analyze_many(launches[2:], cc="9.0", parallel=False)


def test_bad_launch_and_bad_errors_mode():
    with pytest.raises(warpscope.ArgumentError, match=r"launches\[1\]"):
        warpscope.analyze_many([stride_launch(1), "examples/harris.cu"])
    with pytest.raises(warpscope.InputError, match="errors="):
        warpscope.analyze_many([stride_launch(1)], errors="ignore")
    assert warpscope.analyze_many([]) == []


def test_result_pickles_as_its_documents():
    r = warpscope.analyze(**stride_launch(2, cc=["9.0", "8.0"]))
    back = pickle.loads(pickle.dumps(r))
    assert back.to_json() == r.to_json() and back.to_csv() == r.to_csv()
    assert back.table() == r._native.table(None, False)
    assert back._repr_html_() == r._repr_html_()
    assert back.totals["8.0"]["global_load"]["sectors"] == WARPS * 8
    # explain() runs the launch again from its description.
    assert back.explain(site=0).to_dict()["kernel"] == "stride<float>"


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray", reason="ray not installed (pip install ray): analyze_many on Ray not tested")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_on_ray(ray_cluster, root):
    """Ray workers run the launches (relative paths as in the caller's folder) and send
    back results and errors."""
    launches = [dict(stride_launch(s), source_or_path="examples/harris.cu") for s in STRIDES]
    results = warpscope.analyze_many(launches, cc="9.0")
    check_strides(results)
    assert results[0].source == "examples/harris.cu"
    assert "stride<float>" in results[0].table()
    out = warpscope.analyze_many([launches[0], dict(launches[1], args={"s": 2, "nope": 1})], cc="9.0", errors="return")
    assert isinstance(out[0], warpscope.Result)
    assert isinstance(out[1], warpscope.InputError) and "nope" in str(out[1])
    with pytest.raises(warpscope.InputError, match="nope"):
        warpscope.analyze_many([dict(launches[1], args={"s": 2, "nope": 1})], cc="9.0")
    # ray=False keeps them here, with the same figures.
    here = warpscope.analyze_many(launches, cc="9.0", ray=False)
    assert [r.to_json() for r in here] == [r.to_json() for r in results]
