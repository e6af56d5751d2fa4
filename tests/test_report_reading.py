"""Reading the report: op+shape groups that do not split on per-step scalars, module paths cut from
the left, a default table that fits 100 characters, human units for people and raw numbers for
machines, limit= on every view, an empty kernel summary that says why, the profiler's own time."""

import csv
import io
import itertools

import pytest
import torch
from torch import nn

import pyprof_live
from pyprof_live.analysis.timeline import CATEGORIES
from pyprof_live.profile import Profile
from pyprof_live.records import OpRecord, RangeRecord, TensorMeta
from pyprof_live.render import units
from tests.test_capture import Doubled


def _train(steps: int):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    optimizer = torch.optim.AdamW(model.parameters(), foreach=False)  # step size: a float per step
    x = torch.randn(3, 4)
    with pyprof_live.profile() as p:
        for _ in range(steps):
            model(x).sum().backward()
            optimizer.step()
            optimizer.zero_grad()
            p.step()
    return p


def test_op_shape_groups_do_not_split_on_per_step_scalars():
    one, three = _train(1), _train(3)
    assert len(one.ops(by="op+shape")) == len(three.ops(by="op+shape"))
    # op+params keeps every argument: AdamW's step size (lr / bias correction) differs each step.
    assert len(three.ops(by="op+params")) > len(one.ops(by="op+params"))
    calls = {(r["op"], r["params"]): r["calls"] for r in three.ops(by="op+shape")}
    assert calls[("aten::addmm", "[8]fp32 [3,4]fp32 [4,8]fp32")] == 3  # one per step


def _profile_with_long_paths():
    """Two Linears whose paths differ only in their last part, as in BERT's attention."""
    prefix = "BertForSequenceClassification.bert.encoder.layer.3.attention.self."
    x, w = TensorMeta((2, 64, 128), "float32"), TensorMeta((128, 128), "float32")
    ops = [
        OpRecord("aten::addmm", 0, 1000, dir="fwd", module=prefix + "query", inputs=(x, w)),
        OpRecord("aten::addmm", 1000, 2000, dir="fwd", module=prefix + "key", inputs=(x, w)),
        OpRecord("aten::addmm", 2000, 3000, dir="fwd", module=prefix + "value", inputs=(x, w)),
    ]
    return Profile(ops=ops, meta={"source": "test"})


def test_module_paths_are_cut_from_the_left_and_stay_distinct_at_width_100():
    text = _profile_with_long_paths().table()
    lines = text.splitlines()
    rows = lines[1:4]
    assert all(len(line) <= 100 for line in lines[:4])
    cells = [row.split()[2] for row in rows]  # Idx, Direction, ModulePath, ...
    assert len(set(cells)) == 3
    assert [c.startswith("…") for c in cells] == [True] * 3
    assert [c.rsplit(".", 1)[1] for c in cells] == ["query", "key", "value"]


def test_default_table_of_a_cpu_profile_fits_100_columns_without_empty_gpu_columns():
    p = _train(1)
    lines = p.table().splitlines()
    table = lines[: len(p.kernel_view().rows) + 1]
    assert max(map(len, table)) <= 100
    assert table[0].split() == ["Idx", "Direction", "ModulePath", "Op", "Params", "Host", "FLOPs", "Bytes"]
    # Asked for, they are there.
    assert p.table(columns="idx,op,kernel,sil").splitlines()[0].split() == ["Idx", "Op", "Kernel", "Sil"]


def test_human_units_for_people_raw_numbers_for_machines():
    # 1.21 s, 263 ms, 4.2 GB, 12.3 TFLOP/s: three significant digits in the largest unit reached.
    assert units.duration(1_210_000_000) == "1.21 s" and units.duration(263_000_000) == "263 ms"
    assert units.size(4_200_000_000) == "4.2 GB" and units.rate(12.3e12) == "12.3 TFLOP/s"
    assert units.duration(999_700_000) == "1 s"  # 999.7 ms rounds to 1000 ms: the next unit
    assert units.duration(0) == "0 ns" and units.size(512) == "512 B"
    p = _profile_with_long_paths()
    row = p.table(columns="idx,host").splitlines()[1].split()
    assert row == ["1", "1", "µs"]  # 1000 ns
    machine = list(csv.reader(io.StringIO(p.table(columns="idx,host,flops", fmt="csv"))))
    assert machine[0] == ["Idx", "Host(ns)", "FLOPs"] and machine[1][1] == "1000"
    assert p.table(columns="idx,host", fmt="space").splitlines()[0] == "1 1000"


def test_every_view_takes_limit():
    p = _train(1)
    for view in (p.ops(limit=2), p.ops(by="op+shape", limit=2), p.modules(limit=2), p.recommendations(limit=2)):
        assert len(view.rows) <= 2
    ops = p.ops(limit=2)
    assert len(p.ops().rows) > 2 and ops.notes[0] == f"showing 2 of {len(p.ops().rows)} rows"
    assert len(p.overview(limit=1).rows) == 1
    with pytest.raises(pyprof_live.ColumnError, match="limit must be 0 or more"):
        p.ops(limit=-1)


def test_an_empty_kernel_summary_says_why():
    p = _train(1)
    assert p.kernels().rows == []
    assert p.kernels().notes == [
        "no GPU kernels: nothing ran on a GPU while this profile recorded (a CPU-only run); "
        "p.ops() and p.table() show the ops"
    ]
    assert "no GPU kernels" in str(p.kernels())


def test_the_profilers_own_time_is_its_own_category():
    """Op 100..200 whose hook worked 30 ns around it, in a step 0..1000 with no other activity: 100
    cpu_exec, 30 profiler, 870 other (900 outside the op minus the 30)."""
    op = OpRecord("aten::add", 100, 200, dir="fwd", overhead=30)
    p = Profile(ops=[op], ranges=[RangeRecord("step 0", 0, 1000, kind="step")], meta={"source": "live"})
    row = p.overview().rows[0]
    assert (row["cpu_exec"], row["profiler"], row["other"]) == (100, 30, 870)
    assert sum(row[c] for c in CATEGORIES) == row["dur"]
    assert "pyprof_live's own recording added 30 ns (3% of the recorded time)" in p.overview().notes[2]
    assert any(n.startswith("pyprof_live's own recording added 30 ns") for n in p.kernel_view().notes)


def test_a_live_profile_shows_the_profilers_time():
    p = _train(2)
    total = p.overview().rows[-1]
    assert total["step"] == "total" and total["profiler"] > 0
    assert sum(total[c] for c in CATEGORIES) == total["dur"]
    assert sum(op.overhead for op in p.records.ops) == total["profiler"] + _outside_steps(p)


SECOND = 10**9


def _one_second_per_reading():
    """A clock that moves one second per reading: every hook that reads it twice took exactly 1 s."""
    return itertools.count(0, SECOND).__next__


def test_module_scope_and_function_hooks_time_is_profiler_time(monkeypatch):
    """Hooks between ops are the profiler's time, carried by the next op (the last op takes those after it).
    Module hooks and Function.apply's wrapper read a fake clock (1 s per hook); each record_function op
    is charged a fake 1 s dispatch cost. Real work of every hook is microseconds, so whole seconds count
    the hooks.
    Sequential(Identity, Linear) then a custom Function and one record_function:
      t       <- enter Sequential, enter Identity, exit Identity, enter Linear: 4 s
      addmm   <- 0 s (no hook between t and addmm)
      mul     <- exit Linear, exit Sequential, Function.apply's wrapper before the call: 3 s
      add     <- the wrapper after the call, record_function enter and exit: 3 s (+ their real hook time),
                 and, as the last op, an Identity's enter and exit after it: 2 s; 5 s in all"""
    monkeypatch.setattr("pyprof_live.capture.modules._now", _one_second_per_reading())
    monkeypatch.setattr("pyprof_live.capture.functions._now", _one_second_per_reading())
    monkeypatch.setattr("pyprof_live.capture.recorder.dispatch_cost_ns", lambda: SECOND)

    model = nn.Sequential(nn.Identity(), nn.Linear(4, 2))
    x = torch.randn(3, 4)
    with pyprof_live.profile() as p:
        y = Doubled.apply(model(x))
        with torch.profiler.record_function("metrics"):
            pass
        y.add(1)
        nn.Identity()(x)
    ops = [op for op in p.records.ops if op.kind == "op"]
    assert [op.name for op in ops] == ["aten::t", "aten::addmm", "aten::mul", "aten::add"]
    assert [op.overhead // SECOND for op in ops] == [4, 0, 3, 5]


def _outside_steps(p):
    """Overhead of ops recorded outside every step window (none here: every op ran in a step)."""
    windows = [(r.start, r.end) for r in p.records.ranges if r.kind == "step"]
    return sum(op.overhead for op in p.records.ops if not any(s <= op.start < e for s, e in windows))


def test_profile_inside_a_running_torch_profiler_on_cpu_is_a_cpu_only_report_with_a_footer():
    model = nn.Linear(4, 2)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as outer:
        with pyprof_live.profile() as p:
            model(torch.randn(3, 4)).sum().backward()
    assert [op.name for op in p.records.ops if op.dir == "fwd"][:2] == ["aten::t", "aten::addmm"]
    note = "torch.profiler was recording when this profile started: host times include its own recording"
    assert note in p.table()
    # torch.profiler kept recording: it saw the same addmm.
    assert any(e.name == "aten::addmm" for e in outer.events())
