"""Chrome trace export: the trace-event format (ph, ts, dur, pid, tid, paired flow ids), what Perfetto
reads back from it (integer ns, nesting per track), flows bound to the right slices, atomic writes.

A profile built here (times hand-picked, expected µs worked out in comments), a live CPU profile,
and the real Kineto traces of ../shared/data (skipped when absent).
"""

from __future__ import annotations

import gzip
import json
from bisect import bisect_right
from collections import Counter, defaultdict
from decimal import Decimal

import pytest

import pyprof_live
from pyprof_live.profile import Profile
from pyprof_live.render import chrome_trace as chrome_trace_module
from pyprof_live.render.chrome_trace import chrome_trace

from .export_fixtures import BIG_TID, hand_profile, live_profile


def perfetto_ns(value: float) -> int:
    """What Perfetto's JSON importer makes of a µs float: ``static_cast<int64_t>(value * 1000.0)``."""
    return int(value * 1000.0)


class Tracks:
    """X slices per (pid, tid) as Perfetto reads them (integer ns), sorted parents first."""

    def __init__(self, slices: dict):
        self.items = {track: sorted(items, key=lambda s: (s[0], -s[1])) for track, items in slices.items()}
        self.starts = {track: [s[0] for s in items] for track, items in self.items.items()}

    def innermost(self, flow_event):
        """The slice a flow event binds to: the deepest one on its track that contains its ts (a
        zero-length slice contains only its own ts). Walking back from the last slice starting at
        or before ts, the first one containing it is the deepest, as slices nest."""
        track = (flow_event["pid"], flow_event["tid"])
        at = perfetto_ns(flow_event["ts"])
        items = self.items.get(track, [])
        for i in range(bisect_right(self.starts.get(track, []), at) - 1, -1, -1):
            start, end, event = items[i]
            if at < end or start == at == end:
                return event
        return None


def check_trace_format(trace: dict) -> Tracks:
    """Assert the trace-event rules every viewer relies on; returns the X slices per track."""
    events = trace["traceEvents"]
    assert events, "empty trace"
    slices = defaultdict(list)
    flows = defaultdict(list)
    for e in events:
        for key in ("ph", "ts", "pid", "tid"):
            assert key in e, (key, e)
        assert isinstance(e["pid"], int) and 0 <= e["pid"] < 2**32, e
        assert isinstance(e["tid"], int) and 0 <= e["tid"] < 2**32, e
        assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0, e
        assert e["ph"] in ("X", "M", "s", "f"), e
        if e["ph"] == "X":
            assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0, e
            assert isinstance(e["name"], str) and e["name"], e
            start = perfetto_ns(e["ts"])
            slices[(e["pid"], e["tid"])].append((start, start + perfetto_ns(e["dur"]), e))
        elif e["ph"] in ("s", "f"):
            flows[e["id"]].append(e)
    tracks = Tracks(slices)
    for track, items in tracks.items.items():
        _assert_nested(track, items)
    for flow_id, pair in flows.items():
        assert sorted(e["ph"] for e in pair) == ["f", "s"], (flow_id, pair)
        for e in pair:
            assert e.get("bp") == ("e" if e["ph"] == "f" else None), e
            assert tracks.innermost(e) is not None, f"flow {flow_id} {e['ph']} is in no slice: {e}"
    return tracks


def _assert_nested(track, items) -> None:
    """Slices of one track nest (each inside the one open before it) as Perfetto's slice stacks need."""
    open_ends = []
    for start, end, e in items:
        while open_ends and open_ends[-1] <= start:
            open_ends.pop()
        assert not open_ends or end <= open_ends[-1], f"{e['name']} overlaps its parent on track {track}"
        open_ends.append(end)


def flow_ends(trace, slices, category):
    """(source slice, target slice) of every flow of ``category``."""
    by_id = defaultdict(dict)
    for e in trace["traceEvents"]:
        if e["ph"] in ("s", "f") and e["cat"] == category:
            by_id[e["id"]][e["ph"]] = slices.innermost(e)
    return [(pair["s"], pair["f"]) for pair in by_id.values()]


def round_trip(trace, tmp_path):
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace))
    loaded = json.loads(path.read_text())
    assert loaded == trace
    return loaded


# ------------------------------------------------------------------------------------------------
# A profile built by hand (tests/export_fixtures.py)


def test_hand_profile_tracks_times_and_flows(tmp_path):
    trace = round_trip(chrome_trace(hand_profile()), tmp_path)
    slices = check_trace_format(trace)
    events = trace["traceEvents"]
    x = {e["name"]: e for e in events if e["ph"] == "X"}
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}

    # The earliest record is "step 0" at 500 ns: ts are µs since then, plus the quarter-ns nudge.
    assert trace["otherData"]["time_origin_ns"] == 500
    assert (x["aten::linear"]["ts"], x["aten::linear"]["dur"]) == (0.50025, 4.00025)  # 1000-500, 5000-1000
    assert (perfetto_ns(x["aten::linear"]["ts"]), perfetto_ns(x["aten::linear"]["dur"])) == (500, 4000)
    assert (perfetto_ns(x["gemm_kernel"]["ts"]), perfetto_ns(x["gemm_kernel"]["dur"])) == (2000, 1000)
    assert x["gemm_kernel"]["args"]["kernel"] == "void gemm_kernel<float>(float*)"
    assert x["gemm_kernel"]["args"]["op"] == "aten::addmm"
    # addmm 8x16 @ 16x4: 2*8*16*4 = 1024 flops (the bias add is not counted, as torch's counter).
    assert x["aten::addmm"]["args"]["flops"] == 1024 and x["aten::addmm"]["args"]["seq"] == 7
    assert x["memcpy HtoD"]["args"]["GB/s"] == 10.0  # 1000 bytes in 100 ns = 10 bytes/ns = 10 GB/s

    # Host pid 0 clashes with GPU 0, so the GPU is process max(0, 0) + 1 = 1; streams keep their ids.
    assert processes == {0: "host process 0", 1: "GPU 0"}
    assert (x["gemm_kernel"]["pid"], x["gemm_kernel"]["tid"]) == (1, 7)
    assert (x["memcpy HtoD"]["pid"], x["memcpy HtoD"]["tid"]) == (1, 13)
    # The 2**40 thread ident becomes tid 1; the range that cannot nest goes to a second track, tid 2.
    assert names[(0, 1)] == f"thread {BIG_TID}"
    assert names[(0, 2)] == f"thread {BIG_TID} (overlapping slices 1)"
    assert {e["name"]: e["tid"] for e in events if e["ph"] == "X" and e["pid"] == 0} == {
        "step 0": 1,
        "aten::linear": 1,
        "aten::addmm": 1,
        "aten::mm": 1,
        "nvtx overlap": 2,
    }

    launches = flow_ends(trace, slices, "launch")
    assert sorted((s["name"], f["name"]) for s, f in launches) == [
        ("aten::addmm", "gemm_kernel"),
        ("aten::addmm", "memcpy HtoD"),
        ("aten::mm", "mm_kernel"),
    ]
    assert [(s["name"], f["name"]) for s, f in flow_ends(trace, slices, "fwdbwd")] == [("aten::addmm", "aten::mm")]
    # addmm starts with its parent linear: its flows sit mid-addmm, (1000 + 4000) // 2 = 2500 ns,
    # i.e. 2000 ns after the origin, so they bind to addmm and not to linear.
    starts = {e["ts"] for e in events if e["ph"] == "s" and slices.innermost(e)["name"] == "aten::addmm"}
    assert starts == {2.00025}


def test_flow_anchor_is_in_the_first_stretch_not_covered_by_children():
    anchor = chrome_trace_module._anchor
    assert anchor(0, 100, []) == 50
    assert anchor(0, 100, [(0, 30), (30, 60)]) == 80  # children cover 0..60: middle of 60..100
    assert anchor(0, 100, [(10, 20)]) == 5  # 0..10 is free
    assert anchor(0, 100, [(0, 100)]) == 0  # fully covered: the start is the best there is


def test_gzip_output_and_atomic_replace(tmp_path, monkeypatch):
    profile = hand_profile()
    gz = tmp_path / "trace.json.gz"
    count = profile.export_chrome_trace(gz)
    loaded = json.loads(gzip.decompress(gz.read_bytes()))
    # 5 X on the host + 3 on the GPU, 4 flows x 2, metadata: 2 processes x 2 + 4 thread names.
    assert count == len(loaded["traceEvents"]) == 5 + 3 + 8 + 4 + 4
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trace.json.gz"]

    def broken_dump(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(json, "dump", broken_dump)  # the chrome renderer writes with json.dump
    with pytest.raises(OSError, match="disk full"):
        profile.export_chrome_trace(gz)
    assert json.loads(gzip.decompress(gz.read_bytes())) == loaded  # the old file is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trace.json.gz"]  # no temp file left


def test_empty_profile_exports_a_valid_trace():
    trace = chrome_trace(Profile())
    assert trace["traceEvents"] == [] and trace["otherData"]["time_origin_ns"] == 0


# ------------------------------------------------------------------------------------------------
# A live CPU profile


def test_live_cpu_profile_has_one_slice_per_op_and_forward_backward_flows(tmp_path):
    p = live_profile(steps=1)
    path = tmp_path / "live.json"
    p.export_chrome_trace(path)
    trace = json.loads(path.read_text())
    slices = check_trace_format(trace)
    ops = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["cat"] == "op"]
    assert len(ops) == len(p.records.ops)
    assert sorted(e["args"]["index"] for e in ops) == list(range(len(p.records.ops)))
    # Each backward op linked to a forward op, whose parent is not linked to the same one, has its arrow.
    records = p.records.ops
    expected = Counter(
        (records[op.fwd].name, op.name)
        for op in records
        if op.fwd != -1 and (op.parent == -1 or records[op.parent].fwd != op.fwd)
    )
    got = Counter((s["name"], f["name"]) for s, f in flow_ends(trace, slices, "fwdbwd"))
    assert got == expected and expected[("aten::addmm", "aten::mm")] >= 2  # both linears' weight grads
    assert all(s["args"]["dir"] == "fwd" and f["args"]["dir"] == "bwd" for s, f in flow_ends(trace, slices, "fwdbwd"))
    thread_names = [e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "thread_name"]
    assert f"thread {records[0].tid}" in thread_names  # the real 64-bit ident survives in the name


# ------------------------------------------------------------------------------------------------
# Real Kineto traces


REAL = sorted(
    [
        "kineto/hta_alexnet_a100_benchmark_trace.json.gz",
        "kineto/hta_call_stack_backward_thread.json",
        "kineto/hta_cupti_profiler_counters_a100.json.gz",
        "kineto/hta_nccl_data_a100_ws2_rank0.json.gz",
        "kineto/hta_triton_compile_a100.json.gz",
        "kineto/kineto_docs_before_fix_trace_h100.json",
        "kineto/kineto_tbplugin_resnet50_v100dgxs_oldformat.pt.trace.json.gz",
        "kineto/tracelens_qwen1.5-0.5b_h100_infer.json.gz",
        "kineto/tracelens_owlv2_h100_infer.json.gz",
        "nsys/nsys2022.1_pytorch_emitnvtx_dlprof_rtx2070s.sqlite",
        "nsys/nsys2022.4_tensorrt_centerformer_nvtxonly.sqlite",
        "nsys/nvprof_pytorch_pyprof_lm_v100_17ed9e2.sql",
    ]
)


@pytest.mark.e2e
@pytest.mark.parametrize("name", REAL)
def test_real_traces_export_valid_traces(shared_data, name, tmp_path):
    profile = pyprof_live.load(shared_data / name)
    path = tmp_path / "out.json"
    profile.export_chrome_trace(path)
    trace = json.loads(path.read_text())
    slices = check_trace_format(trace)
    kinds = Counter(e["cat"] for e in trace["traceEvents"] if e["ph"] == "X")
    records = profile.records
    # Ops fused into a compiled kernel call have no slice of their own (their call's args list them).
    ops = [op for op in records.ops if op.kind != "fused"]
    assert kinds["op"] + kinds["function"] + kinds["compiled"] == len(ops)
    assert kinds["kernel"] == len(records.kernels)
    assert kinds["memcpy"] + kinds["memset"] == len(records.memops)
    assert kinds["compile"] == len(records.compiles)
    assert sum(kinds.values()) == len(ops) + len(records.kernels) + len(records.memops) + len(records.ranges) + len(
        records.compiles
    )
    # One launch arrow per kernel/memop that correlation tied to an op, ending on that kernel/memop.
    linked = profile.correlation
    launches = flow_ends(trace, slices, "launch")
    assert len(launches) == linked.kernels_with_op + linked.memops_with_op
    assert all(
        s["cat"] in ("op", "function", "compiled") and f["cat"] in ("kernel", "memcpy", "memset") for s, f in launches
    )
    assert all(s["name"] == f["args"]["op"] for s, f in launches)  # the arrow leaves the op that launched it


def test_nccl_trace_has_as_many_forward_backward_arrows_as_kineto_drew(shared_data, tmp_path):
    """The source trace holds 543 fwdbwd flows (1086 events: 543 's' + 543 'f', one id each, by a json
    scan); every one starts at a forward op's start. Ours start from the same 543 forward ops."""
    path = shared_data / "kineto" / "hta_nccl_data_a100_ws2_rank0.json.gz"
    source = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    source_starts = sorted(
        int(Decimal(repr(e["ts"])) * 1000)  # exact ns, as the importer reads µs
        for e in source
        if e.get("cat") == "fwdbwd" and e["ph"] == "s"
    )
    assert len(source_starts) == 543

    profile = pyprof_live.load(path)
    trace = chrome_trace(profile)
    slices = check_trace_format(trace)
    arrows = flow_ends(trace, slices, "fwdbwd")
    assert len(arrows) == 543
    origin = trace["otherData"]["time_origin_ns"]
    ours = sorted(perfetto_ns(source_slice["ts"]) + origin for source_slice, _ in arrows)
    assert ours == source_starts
    # 2700 kernels + 1074 memcpy/memset, all tied to an op (the importer's test checks the links).
    assert len(flow_ends(trace, slices, "launch")) == 2700 + 1074
