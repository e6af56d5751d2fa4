"""``pyprof-live diff A B`` and pyprof_live.report.diff: op-by-op deltas, sorted by the largest change; the CLI's
subcommand (and a file literally named ``diff``), and its ``--chrome`` / ``--html`` exports."""

from __future__ import annotations

import csv
import gzip
import io
import json

import pytest

from pyprof_live.profile import Profile
from pyprof_live.records import ApiRecord, KernelRecord, OpRecord, TensorMeta
from pyprof_live.report.diff import diff

from .export_fixtures import live_profile

X, W, B = TensorMeta((32, 64), "float32"), TensorMeta((64, 16), "float32"), TensorMeta((16,), "float32")
Y = TensorMeta((32, 16), "float32")


def addmm(start: int, end: int) -> OpRecord:
    return OpRecord("aten::addmm", start, end, tid=1, inputs=(B, X, W, 1, 1), outputs=(Y,))


def launched(ops, kernels_at) -> Profile:
    """``kernels_at``: (op index, kernel start, kernel end); each launch 10 ns into its op."""
    apis = [
        ApiRecord("cudaLaunchKernel", ops[i].start + 10, ops[i].start + 20, correlation=n, tid=1)
        for n, (i, _, _) in enumerate(kernels_at)
    ]
    kernels = [KernelRecord("gemm", start, end, correlation=n) for n, (_, start, end) in enumerate(kernels_at)]
    return Profile(ops=ops, apis=apis, kernels=kernels, meta={"source": "test"})


def before_after():
    """A: addmm (1000 ns host, 500 ns kernel), relu (300 ns host). B: addmm twice (800 ns host and a
    300 ns kernel each), relu gone, gelu new (400 ns host, 100 ns kernel, inputs not recorded)."""
    a = launched(
        [addmm(0, 1000), OpRecord("aten::relu", 1000, 1300, tid=1, inputs=(Y,), outputs=(Y,))], [(0, 200, 700)]
    )
    b = launched(
        [addmm(0, 800), addmm(1000, 1800), OpRecord("aten::gelu", 2000, 2400, tid=1)],
        [(0, 100, 400), (1, 1100, 1400), (2, 2100, 2200)],
    )
    return a, b


def test_deltas_per_op_largest_change_first():
    view = diff(*before_after())
    rows = {r["op"]: r for r in view.rows}
    # addmm 32x64 @ 64x16: 2*32*64*16 = 65536 flops per call; B has two calls.
    assert rows["aten::addmm"] == {
        "op": "aten::addmm",
        "params": None,
        "calls_a": 1,
        "calls_b": 2,
        "d_calls": 1,
        "host_self_a": 1000,
        "host_self_b": 1600,
        "d_host_self": 600,  # 800 + 800
        "dev_self_a": 500,
        "dev_self_b": 600,
        "d_dev_self": 100,  # 300 + 300 - 500
        "flops_a": 65536,
        "flops_b": 131072,
        "d_flops": 65536,
    }
    # relu on 32x16 = 512 elements, one flop each; gone from B.
    assert [rows["aten::relu"][k] for k in ("calls_b", "d_calls", "d_host_self", "d_dev_self", "d_flops")] == [
        0,
        -1,
        -300,
        0,
        -512,
    ]
    # gelu without recorded inputs has no flops formula: its delta is unknown, not 0 - 0.
    assert rows["aten::gelu"]["flops_b"] == "na" and rows["aten::gelu"]["d_flops"] is None
    # |d_dev_self|: addmm 100 and gelu 100 tie (then |d_calls| 1 and 1, then the name), relu 0.
    assert [r["op"] for r in view.rows] == ["aten::addmm", "aten::gelu", "aten::relu"]
    assert view.notes[1:] == [
        "total host self time: A 1300 ns, B 2000 ns, B - A = +700 ns (+53.8%)",  # 1000+300 -> 1600+400
        "total device time: A 500 ns, B 700 ns, B - A = +200 ns (+40.0%)",  # 500 -> 600+100
        "3 ops by op: 1 only in A, 1 only in B; sorted by |d_dev_self|",
    ]


def test_by_shape_keeps_shapes_apart_and_cpu_profiles_sort_by_host_time():
    small = TensorMeta((2, 64), "float32")
    a = Profile(ops=[addmm(0, 1000)])
    b = Profile(ops=[addmm(0, 900), OpRecord("aten::addmm", 1000, 1500, tid=1, inputs=(B, small, W, 1, 1))])
    view = diff(a, b, by="op+shape")
    # Sorted by |d_host_self| (no GPU activity): the new 2x64 call, 500 ns, before the 32x64 one, 1000 -> 900.
    assert [(r["params"], r["d_calls"], r["d_host_self"]) for r in view.rows] == [
        ("[16]fp32 [2,64]fp32 [64,16]fp32 beta=1 alpha=1", 1, 500),
        ("[16]fp32 [32,64]fp32 [64,16]fp32 beta=1 alpha=1", 0, -100),
    ]
    assert "dev_self_a" not in view.columns and view.notes[-1].endswith("sorted by |d_host_self|")
    with pytest.raises(ValueError, match="op\\+shape"):
        diff(a, b, by="module")


def test_profiles_with_and_without_gpu_activity_compare_host_time():
    a, b = before_after()
    view = diff(Profile(ops=list(a.records.ops)), b)
    assert "only one profile has GPU activity: rows are sorted by the change of host self time" in view.notes
    assert [r["op"] for r in view.rows] == ["aten::addmm", "aten::gelu", "aten::relu"]  # |d_host_self| 600, 400, 300


def test_live_profiles_diff_against_themselves_is_all_zero():
    p = live_profile(steps=1)
    view = diff(p, p)
    assert view.rows and all(r["d_calls"] == 0 and r["d_host_self"] == 0 for r in view.rows)


# ------------------------------------------------------------------------------------------------
# Command line


@pytest.fixture
def saved(tmp_path):
    a, b = before_after()
    a.save(tmp_path / "a.pplive")
    b.save(tmp_path / "b.pplive")
    return tmp_path / "a.pplive", tmp_path / "b.pplive"


def test_cli_diff_csv(saved, cli):
    done = cli("diff", *saved, "--csv")
    assert done.returncode == 0, done.stderr
    table = list(csv.reader(io.StringIO(done.stdout)))
    assert table[0][:4] == ["Op", "calls_a", "calls_b", "d_calls"]
    assert [row[0] for row in table[1:]] == ["aten::addmm", "aten::gelu", "aten::relu"]
    assert table[1][table[0].index("d_dev_self")] == "100"


def test_cli_diff_errors_are_one_line(saved, tmp_path, cli):
    done = cli("diff", saved[0], tmp_path / "missing.pplive")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "missing.pplive" in done.stderr
    done = cli("diff", saved[0])
    assert done.returncode == 2 and "required: b" in done.stderr


def test_a_file_named_diff_is_still_a_profile(saved, tmp_path, cli):
    """Before the subcommand, `pyprof-live diff --view ops` reported a file named diff; it still does,
    and `pyprof-live diff A B` with A and B existing files is the comparison even there."""
    a, b = saved
    (tmp_path / "diff").write_bytes(a.read_bytes())
    report = cli("diff", "--view", "ops", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert report.stdout.splitlines()[1].split()[:2] == ["aten::addmm", "1"]
    compared = cli("diff", a.name, b.name, cwd=tmp_path)
    assert compared.returncode == 0 and "d_calls" in compared.stdout.splitlines()[0]


def test_cli_writes_chrome_trace_and_html_instead_of_the_report(saved, tmp_path, cli):
    trace, page = tmp_path / "t.json.gz", tmp_path / "r.html"
    done = cli(saved[0], "--chrome", trace, "--html", page)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert done.stderr.splitlines() == [f"wrote Chrome trace {trace}", f"wrote HTML report {page}"]
    events = json.loads(gzip.decompress(trace.read_bytes()))["traceEvents"]
    assert sum(e["ph"] == "X" for e in events) == 3  # addmm, relu, the gemm kernel
    assert page.read_text().startswith("<!DOCTYPE html>")
    done = cli(saved[0], "--html", tmp_path / "no" / "such" / "dir.html")
    assert done.returncode == 2 and done.stderr.startswith("pyprof-live: error: cannot write HTML report")
