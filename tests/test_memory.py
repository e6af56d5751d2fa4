"""Memory: Kineto [memory] events become allocation records; p.memory() finds the peak and what was live
at it, by op and module. Checked against a hand-built profile (numbers worked out below) and against an
independent reading of a real trace's events (the arithmetic is in the test)."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict

import pytest

import pyprof_live
from pyprof_live.profile import Profile
from pyprof_live.records import AllocRecord, OpRecord
from pyprof_live.render.pages import memory_curves

QWEN = "kineto/tracelens_qwen1.5-0.5b_h100_infer.json.gz"  # profile_memory=1, Addr and totals on each event


def hand_profile() -> Profile:
    """Thread 1: linear 0..100 > addmm 10..50; relu 200..300. Allocations on cuda:0 (no totals given):
    +1000 @20 (addmm, A), +500 @30 (addmm, B), -1000 @60 (free A), +2000 @210 (relu, C), -500 @400."""
    ops = [
        OpRecord("aten::linear", 0, 100, tid=1, module="Net.fc"),
        OpRecord("aten::addmm", 10, 50, tid=1, module="Net.fc"),
        OpRecord("aten::relu", 200, 300, tid=1, module="Net.act"),
    ]
    allocs = [
        AllocRecord(20, 1000, "cuda:0", addr=0xA, tid=1),
        AllocRecord(30, 500, "cuda:0", addr=0xB, tid=1),
        AllocRecord(60, -1000, "cuda:0", addr=0xA, tid=1),
        AllocRecord(210, 2000, "cuda:0", addr=0xC, tid=1),
        AllocRecord(400, -500, "cuda:0", addr=0xB, tid=1),
    ]
    return Profile(ops=ops, allocs=allocs, meta={"source": "test"})


def test_peak_and_live_blocks_of_a_hand_built_profile():
    p = hand_profile()
    # running sum: 1000, 1500, 500, 2500, 2000 -> peak 2500 at 210 ns; live then: B (500, addmm) and C (2000, relu)
    rows = {r["op"]: r for r in p.memory().rows}
    assert rows["aten::relu"] == {
        "device": "cuda:0",
        "op": "aten::relu",
        "live_bytes": 2000,
        "blocks": 1,
        "allocated": 2000,
    }
    assert rows["aten::addmm"] == {
        "device": "cuda:0",
        "op": "aten::addmm",
        "live_bytes": 500,
        "blocks": 1,
        "allocated": 1500,
    }
    assert [r["op"] for r in p.memory().rows] == ["aten::relu", "aten::addmm"]
    assert p.memory().notes[0].startswith("cuda:0: peak 2500 bytes allocated at 210 ns (summed from the events")
    assert {r["module"]: r["live_bytes"] for r in p.memory(by="module").rows} == {"Net.act": 2000, "Net.fc": 500}
    (curve,) = memory_curves(p)
    assert curve["allocated"] == [1000, 1500, 500, 2500, 2000] and curve["times"] == [20, 30, 60, 210, 400]
    assert (curve["peak"], curve["peak_time"]) == (2500, 210)


def test_memory_survives_save_and_load_and_old_files_have_none(tmp_path):
    p = hand_profile()
    p.save(tmp_path / "m.pplive")
    again = pyprof_live.load(tmp_path / "m.pplive")
    assert again.records.allocs == p.records.allocs
    assert again.memory().rows == p.memory().rows
    # a file saved before allocations were records has no "allocs" table: it loads with none
    document = json.loads(gzip.decompress((tmp_path / "m.pplive").read_bytes()))
    del document["records"]["allocs"]
    (tmp_path / "old.pplive").write_bytes(gzip.compress(json.dumps(document).encode()))
    old = pyprof_live.load(tmp_path / "old.pplive")
    assert old.records.allocs == [] and len(old.records.ops) == 3
    assert old.memory().rows == [] and old.memory().notes == ["no allocations recorded (Kineto: profile_memory=True)"]


def test_memory_dataframe_has_raw_integers():
    pytest.importorskip("pandas")
    df = hand_profile().to_dataframe("memory")
    assert list(df["live_bytes"]) == [2000, 500]


def independent_reading(path):
    """Straight from the JSON: cuda:0's peak (largest 'Total Allocated'), the blocks live then (by Addr),
    each charged to the shortest cpu_op of its thread whose [ts, ts + dur] holds the event."""
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    memory = [e for e in events if e.get("name") == "[memory]" and e["args"].get("Device Type") == 1]
    ops = [e for e in events if e.get("cat") == "cpu_op"]
    by_thread = defaultdict(list)
    for e in ops:
        by_thread[(e["pid"], e["tid"])].append(e)
    memory.sort(key=lambda e: e["ts"])
    totals = [e["args"]["Total Allocated"] for e in memory]
    peak = max(totals)
    at = totals.index(peak)
    live = {}
    for e in memory[: at + 1]:
        if e["args"]["Bytes"] > 0:
            live[e["args"]["Addr"]] = e
        else:
            live.pop(e["args"]["Addr"], None)
    per_op = defaultdict(int)
    for e in live.values():
        holding = [o for o in by_thread[(e["pid"], e["tid"])] if o["ts"] <= e["ts"] <= o["ts"] + o["dur"]]
        name = min(holding, key=lambda o: o["dur"])["name"] if holding else "(no op)"
        per_op[name] += e["args"]["Bytes"]
    return peak, per_op


def test_peak_and_top_ops_match_an_independent_reading_of_a_real_trace(shared_data):
    path = shared_data / QWEN
    peak, per_op = independent_reading(path)
    p = pyprof_live.load(path)
    assert p.meta["memory_events"] == 2450  # 2,250 on the GPU + 200 on the CPU (the data README's count)
    (note,) = [n for n in p.memory().notes if n.startswith("cuda:0")]
    assert note.startswith(f"cuda:0: peak {peak} bytes")
    assert peak == 2_088_508_416
    ours = {r["op"]: r["live_bytes"] for r in p.memory().rows if r["device"] == "cuda:0" and r["blocks"]}
    assert ours == dict(per_op)
    top = sorted(per_op.items(), key=lambda kv: -kv[1])[:3]
    assert [name for name, _ in top] == ["aten::add", "aten::addmm", "aten::mul"]
    # what the trace never saw allocated (weights loaded before profiling): the peak minus the live blocks
    before = next(r for r in p.memory().rows if r["op"] == "(allocated before the profile)")
    assert before["live_bytes"] == peak - sum(per_op.values())


def test_live_cpu_profile_counts_what_each_ops_outputs_allocated():
    from .export_fixtures import live_profile

    p = live_profile(steps=2)
    rows = {r["op"]: r for r in p.memory().rows}
    # TinyNet on x[4,8] fp32, 2 steps: body.0 addmm -> [4,16] = 256 B, head addmm -> [4,2] = 32 B: 2 * 288
    assert rows["aten::addmm"]["allocated"] == 576
    assert rows["aten::relu"]["allocated"] == 2 * 4 * 16 * 4  # relu output [4,16] fp32
    assert "aten::t" not in rows and "aten::view" not in rows  # views allocate nothing
    assert rows["aten::addmm"]["live_bytes"] == 0  # no frees seen on the CPU: nothing is "live at a peak"
    assert p.memory().notes[0].startswith("cpu: bytes each op's outputs allocated")
    modules = {r["module"]: r["allocated"] for r in p.memory(by="module").rows}
    assert modules["TinyNet.head"] >= 2 * 32 and modules["TinyNet.body.0"] >= 2 * 256
    assert memory_curves(p) == []  # no curve without frees


@pytest.mark.gpu
def test_cuda_allocator_history_in_a_live_profile():
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    with pyprof_live.profile() as p:
        x = torch.empty(1024, 1024, device="cuda")  # 4 MiB
        y = x * 2  # another 4 MiB
        del x
        z = y.sum()
    torch.cuda.synchronize()
    gpu = [a for a in p.records.allocs if a.device.startswith("cuda")]
    assert sum(a.bytes for a in gpu if a.bytes > 0) >= 2 * 4 * 2**20
    rows = {r["op"]: r for r in p.memory().rows if r["device"] == gpu[0].device}
    # the peak is when x (aten::empty) and y (aten::mul) both exist: 4 MiB each live then
    assert rows["aten::empty"]["live_bytes"] >= 4 * 2**20 and rows["aten::mul"]["live_bytes"] >= 4 * 2**20
    # after the peak x is freed: the allocator's history says so (a free of x's block)
    assert any(a.bytes <= -4 * 2**20 for a in gpu)
    assert z.dtype == torch.float32
