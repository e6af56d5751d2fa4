"""The report contract: rows, columns, sorting, formats, summaries, saved profiles, the CLI."""

import csv
import gzip
import io
import json
import re
from pathlib import Path

import pytest
import torch

import pyprof_live
from pyprof_live.profile import Profile
from pyprof_live.records import ApiRecord, KernelRecord, OpRecord, TensorMeta
from pyprof_live.report.columns import COLUMN_NAMES, COLUMNS

from .fresh_process import run_pyprof_live

README = Path(__file__).resolve().parents[1] / "README.md"


def _gpu_profile():
    """addmm launches two kernels, relu none, one kernel has no op; times in ns, checked by hand below."""
    x, w, b = TensorMeta((32, 64), "float32"), TensorMeta((64, 16), "float32"), TensorMeta((16,), "float32")
    ops = [
        OpRecord(
            "aten::addmm",
            0,
            1000,
            tid=1,
            inputs=(b, x, w, 1, 1),
            outputs=(TensorMeta((32, 16), "float32"),),
            seq=0,
            module="Net.fc",
        ),
        OpRecord(
            "aten::relu",
            1000,
            1300,
            tid=1,
            inputs=(TensorMeta((32, 16), "float32"),),
            outputs=(TensorMeta((32, 16), "float32"),),
            seq=1,
            module="Net.act",
        ),
    ]
    apis = [
        ApiRecord("cudaLaunchKernel", 100, 150, correlation=1, tid=1),
        ApiRecord("cudaLaunchKernel", 400, 450, correlation=2, tid=1),
        ApiRecord("cudaLaunchKernel", 2000, 2050, correlation=3, tid=1),
    ]
    kernels = [
        KernelRecord("void gemm_kernel<float>(float*)", 200, 700, correlation=1, grid=(4, 1, 1), block=(128, 1, 1)),
        KernelRecord("splitKreduce_kernel", 800, 900, correlation=2),
        KernelRecord("ampere_sgemm_64x64_nn", 2100, 2400, correlation=3),
    ]
    return Profile(ops=ops, apis=apis, kernels=kernels, meta={"source": "test"})


def test_rows_one_per_kernel_plus_ops_without_kernels_op_quantities_once():
    view = _gpu_profile().kernel_view(columns=COLUMN_NAMES)
    rows = view.rows
    assert [(r["idx"], r["op"], r.get("sub"), r.get("sil")) for r in rows] == [
        (1, "aten::addmm", 0, 500),  # 700 - 200
        (2, "aten::addmm", 1, 100),  # 900 - 800
        (3, "aten::relu", None, None),
        (4, "(unattributed)", None, 300),  # 2400 - 2100
    ]
    # addmm 32x64 @ 64x16: 2*32*64*16 = 65536 flops (the bias add is not counted, as torch counts it);
    # bytes 4*(16 + 32*64 + 64*16 + 32*16) = 4*3600 = 14400; both on the first row only.
    assert rows[0]["host"] == 1000 and rows[1].get("host") is None
    assert (rows[0]["flops"], rows[0]["bytes"]) == (65536, 14400) and rows[1].get("flops") is None
    assert rows[2]["host"] == 300 and rows[0]["grid"] == "4,1,1"
    assert rows[0]["kernel"] == "gemm_kernel"
    assert any("1 kernels/memops (300 ns) were launched outside any recorded op" in n for n in view.notes)


def test_sort_by_sil_and_host_fallback_on_cpu_profiles():
    rows = _gpu_profile().kernel_view(sort="sil").rows
    assert [r.get("sil") for r in rows] == [500, 300, 100, None]  # largest first, no device time last
    cpu = Profile(ops=[OpRecord("aten::a", 0, 10), OpRecord("aten::b", 20, 50)])
    view = cpu.kernel_view(sort="sil")
    assert [r["op"] for r in view.rows] == ["aten::b", "aten::a"]
    assert "sorted by host time: this profile has no device time" in view.notes[0]


def test_unknown_column_or_sort_lists_the_valid_ones():
    p = _gpu_profile()
    with pytest.raises(pyprof_live.ColumnError, match=r"unknown column\(s\) 'bogus'; valid columns: idx, seq"):
        p.table(columns="idx,bogus")
    with pytest.raises(pyprof_live.ColumnError, match="unknown sort column 'nope'"):
        p.table(sort="nope")


def test_csv_space_and_width_formats():
    p = _gpu_profile()
    text = p.table(columns="idx,op,kernel,sil", fmt="csv")
    parsed = list(csv.reader(io.StringIO(text)))
    assert parsed[0] == ["Idx", "Op", "Kernel", "Sil(ns)"]
    assert parsed[1] == ["1", "aten::addmm", "gemm_kernel", "500"]
    assert text.splitlines()[1] == '"1","aten::addmm","gemm_kernel","500"'  # every field quoted, like PyProf
    space = p.table(columns="idx,op,params", fmt="space").splitlines()
    assert space[0] == "1 aten::addmm [16]fp32_[32,64]fp32_[64,16]fp32_beta=1_alpha=1"
    narrow = p.table(columns="idx,op,kernel,params,sil", width=60)
    assert all(len(line) <= 60 for line in narrow.splitlines()[:5])
    with pytest.raises(pyprof_live.ColumnError, match="too small"):
        p.table(columns="idx,op,kernel,params,sil", width=20)


def test_op_module_and_kernel_summaries():
    p = _gpu_profile()
    ops = {r["op"]: r for r in p.ops().rows}
    assert (ops["aten::addmm"]["calls"], ops["aten::addmm"]["host"], ops["aten::addmm"]["dev_self"]) == (1, 1000, 600)
    modules = {r["module"]: r for r in p.modules().rows}
    assert modules["Net"]["host"] == 1300 and modules["Net.fc"]["dev"] == 600 and modules["Net.act"]["host"] == 300
    kernels = {r["kernel"]: r for r in p.kernels().rows}
    assert (kernels["gemm_kernel"]["calls"], kernels["ampere_sgemm_64x64_nn"]["tc"]) == (1, 0)


def test_readme_documents_every_column_exactly():
    text = README.read_text()
    for column in COLUMNS:
        assert f"| `{column.name}` | {column.header} | {column.meaning} |" in text


def _live_profile():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    with pyprof_live.profile() as p:
        model(torch.randn(2, 4)).sum().backward()
    return p


def test_save_and_load_round_trip(tmp_path):
    p = _live_profile()
    path = tmp_path / "run.pplive"
    p.save(path)
    q = pyprof_live.load(path)
    assert q.table(columns=COLUMN_NAMES) == p.table(columns=COLUMN_NAMES)
    assert q.records.ops == p.records.ops


def test_newer_or_damaged_saved_profiles_are_refused(tmp_path):
    p = _live_profile()
    path = tmp_path / "run.pplive"
    p.save(path)
    document = json.loads(gzip.decompress(path.read_bytes()))
    document["version"] = 99
    newer = tmp_path / "newer.pplive"
    newer.write_bytes(gzip.compress(json.dumps(document).encode()))
    with pytest.raises(pyprof_live.ProfileVersionError, match=r"newer\.pplive: saved by a newer pyprof_live"):
        pyprof_live.load(newer)
    truncated = tmp_path / "cut.pplive"
    truncated.write_bytes(path.read_bytes()[:200])
    with pytest.raises(pyprof_live.ProfileFormatError, match=r"cut\.pplive: "):
        pyprof_live.load(truncated)


def test_failed_save_leaves_no_file(tmp_path):
    p = _live_profile()
    p.meta["unserialisable"] = object()
    path = tmp_path / "run.pplive"
    with pytest.raises(TypeError):
        p.save(path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "content, problem",
    [
        (b"", "file is empty"),
        (b"\x00\x01garbage" * 10, "not a profile pyprof_live can read"),
        (b"\x1f\x8b\x08\x00garbage", "damaged gzip data"),
    ],
)
def test_load_rejects_unreadable_files_in_one_line(tmp_path, content, problem):
    path = tmp_path / "bad.bin"
    path.write_bytes(content)
    with pytest.raises(pyprof_live.ProfileFormatError) as info:
        pyprof_live.load(path)
    assert str(info.value).startswith(str(path)) and problem in str(info.value) and "\n" not in str(info.value)


@pytest.mark.e2e
def test_cli_reports_a_saved_profile_and_fails_cleanly_on_bad_input(tmp_path):
    """The smoke test of the real program (python -m pyprof_live); other CLI tests run it in-process."""
    path = tmp_path / "run.pplive"
    _live_profile().save(path)
    ok = run_pyprof_live(path, "-c", "idx,dir,op", "--csv")
    assert ok.returncode == 0 and ok.stdout.splitlines()[0] == '"Idx","Direction","Op"'
    assert re.match(r'"1","fwd","aten::randn"', ok.stdout.splitlines()[1])
    default = run_pyprof_live(path)
    assert default.returncode == 0 and default.stdout.splitlines()[0].startswith("1 fwd - - aten::randn")
    bad = tmp_path / "bad.sqlite"
    bad.write_text("not a database")
    failed = run_pyprof_live(bad)
    assert failed.returncode == 2 and failed.stdout == ""
    assert failed.stderr.strip().count("\n") == 0 and str(bad) in failed.stderr
    unknown = run_pyprof_live(path, "-c", "idx,nope")
    assert unknown.returncode == 2 and "valid columns" in unknown.stderr
    helped = run_pyprof_live("--help")
    assert all(c in helped.stdout for c in COLUMN_NAMES)


def test_params_show_keyword_arguments_once_whichever_layout_the_source_uses():
    x = TensorMeta((4, 6), "float32")
    # Live capture: keyword values appended to inputs. Importers: keyword values only in kwargs.
    live = OpRecord("aten::softmax", 0, 1, overload="int", inputs=(x, -1, None), kwargs=())
    imported = OpRecord("aten::chunk", 0, 1, inputs=(x, 3), kwargs=(("dim", -1),))
    appended = OpRecord("aten::addmm", 0, 1, inputs=(x, x, x, 0.5, 2.0), kwargs=(("beta", 0.5), ("alpha", 2.0)))
    from pyprof_live.render.cells import params_text

    assert params_text(live) == "[4,6]fp32 dim=-1"
    assert params_text(imported) == "[4,6]fp32 chunks=3 dim=-1"
    assert params_text(appended) == "[4,6]fp32 [4,6]fp32 [4,6]fp32 beta=0.5 alpha=2"


def test_an_op_without_arguments_shows_its_enclosing_ops_params():
    """nvprof/nsys: the emit_nvtx op has no sizes; the PyProf marker around it has the arguments."""
    x = TensorMeta((35, 20), "int64")
    marker = OpRecord("embedding", 0, 100, kind="function", mod="torch", inputs=(TensorMeta((8, 4), "float32"), x))
    inner = OpRecord("aten::embedding", 10, 90)
    rows = Profile(ops=[marker, inner]).kernel_view(columns=("op", "mod", "params")).rows
    assert [(r["op"], r["mod"], r["params"]) for r in rows] == [("aten::embedding", "torch", "[8,4]fp32 [35,20]int64")]
