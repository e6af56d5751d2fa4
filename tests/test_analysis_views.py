"""Views with device columns: the per-step breakdown (by hand, on a live CPU profile, on real traces
checked against independent JSON scans), ops/kernels/modules device time."""

import gzip
import json
from decimal import Decimal

import pytest
import torch

import pyprof_live
from pyprof_live.analysis.timeline import CATEGORIES
from pyprof_live.records import TensorMeta

from .analysis_fixtures import ProfileBuilder

DEVICE_COLUMNS = ("kernel", "memcpy", "memset", "runtime", "gpu_busy", "gpu_idle", "busy%")


def _two_step_profile():
    """Step 1 [0, 1000]: op A [100, 600] launches (API [101, 121]) kernel [150, 450]; op B [600, 800] launches
    (API [601, 621]) a memcpy [650, 750]; DataLoader [800, 950]. Step 2 [1000, 2000]: op C [1000, 1500].
    A kernel at [2100, 2200], after the steps, is left out."""
    b = ProfileBuilder("NVIDIA A100-SXM4-80GB")
    b.op("aten::mul", 100, 600, kernels=[("vectorized_elementwise_kernel", 150, 450)], launch_ns=20)
    b.op("aten::copy_", 600, 800, memcpy=[("HtoD", 650, 750)], launch_ns=20)
    b.op("aten::add", 1000, 1500)
    b.op("aten::relu", 2050, 2300, kernels=[("relu_kernel", 2100, 2200)])
    b.range("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 800, 950)
    b.range("ProfilerStep#1", 0, 1000).range("ProfilerStep#2", 1000, 2000)
    return b.build()


def test_step_breakdown_by_hand():
    rows = {r["step"]: r for r in _two_step_profile().overview().rows}
    # Step 1, each instant to the highest priority: kernel [150,450] = 300; memcpy [650,750] = 100; runtime
    # [101,121] + [601,621] = 40; dataloader [800,950] = 150; cpu_exec: op A 500 - 300 - 20 = 180 and op B
    # 200 - 100 - 20 = 80 -> 260; profiler 0 (an import); other [0,100] + [950,1000] = 150.
    # 300+100+40+150+260+150 = 1000.
    first = rows["ProfilerStep#1"]
    assert [first[c] for c in CATEGORIES] == [300, 100, 0, 40, 150, 260, 0, 150]
    assert (first["dur"], first["gpu_busy"], first["gpu_idle"], first["busy%"]) == (1000, 400, 600, 40.0)
    # Step 2: op C 500 of CPU execution, 500 of nothing.
    second = rows["ProfilerStep#2"]
    assert (second["cpu_exec"], second["other"], second["kernel"], second["busy%"]) == (500, 500, 0, 0.0)
    total = rows["total"]
    assert (total["dur"], total["kernel"], total["cpu_exec"], total["other"], total["busy%"]) == (
        2000,
        300,
        760,
        650,
        20.0,
    )


def test_without_steps_one_window_spans_the_profile():
    p = ProfileBuilder().op("aten::add", 10, 60).op("aten::mul", 100, 110).build()
    (row,) = p.overview().rows
    # [10, 110]: 50 + 10 of ops, 40 of nothing
    assert (row["step"], row["dur"], row["cpu_exec"], row["other"]) == ("(whole profile)", 100, 60, 40)


def test_ops_and_modules_device_columns():
    x = TensorMeta((64, 64), "float32")
    b = ProfileBuilder("NVIDIA A100-SXM4-80GB")
    b.op("aten::linear", 0, 1000, inputs=(x, x), module="Net.fc", dir="fwd")
    b.op("aten::mm", 10, 900, inputs=(x, x), kernels=[("ampere_sgemm_64x64_nn", 100, 400)], module="Net.fc", dir="fwd")
    b.op("aten::relu", 1000, 1100, inputs=(x,), kernels=[("relu_kernel", 1200, 1250)], module="Net.act", dir="fwd")
    b.op(
        "aten::mm",
        2000,
        2900,
        inputs=(x, x),
        kernels=[("ampere_sgemm_64x64_nt", 2100, 2500)],
        module="Net.fc",
        dir="bwd",
    )
    p = b.build()
    ops = {r["op"]: r for r in p.ops().rows}
    assert (ops["aten::linear"]["dev"], ops["aten::linear"]["dev_self"]) == (300, 0)  # its child's GEMM
    assert (ops["aten::mm"]["calls"], ops["aten::mm"]["dev"], ops["aten::mm"]["dev_self"]) == (2, 700, 700)
    assert "dev" in p.ops().columns and "sol%" in p.ops().columns
    modules = {r["module"]: r for r in p.modules().rows}
    # Net: GEMM fwd 300 + relu 50 + GEMM bwd 400; Net.fc: 300 fwd + 400 bwd, all its own
    assert (
        modules["Net"]["dev"],
        modules["Net"]["dev_self"],
        modules["Net"]["dev_fwd"],
        modules["Net"]["dev_bwd"],
    ) == (750, 0, 350, 400)
    assert (modules["Net.fc"]["dev"], modules["Net.fc"]["dev_self"], modules["Net.fc"]["depth"]) == (700, 700, 1)
    assert [r["module"] for r in p.modules().rows] == ["Net", "Net.act", "Net.fc"]  # tree order


class _Squares(torch.utils.data.Dataset):
    def __len__(self):
        return 12

    def __getitem__(self, i):
        return torch.full((8,), float(i)), torch.tensor(float(i * i))


def test_live_cpu_profile_views_have_no_device_columns():
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = torch.utils.data.DataLoader(_Squares(), batch_size=4)
    with pyprof_live.profile() as p:
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x).squeeze(1), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            loss.item()  # a CPU tensor: no sync to report
            p.step()
    overview = p.overview()
    assert [r["step"] for r in overview.rows] == ["step 0", "step 1", "step 2", "total"]
    assert not set(DEVICE_COLUMNS) & set(overview.columns)
    for row in overview.rows:
        assert sum(row[c] for c in CATEGORIES) == row["dur"] and row["kernel"] == 0
        assert row["cpu_exec"] > 0
    assert overview.rows[-1]["dataloader"] > 0  # the DataLoader's record_function ranges
    assert not {"dev", "dev_self", "sol%"} & set(p.ops().columns + p.modules().columns)
    assert p.ops().rows[0]["ideal"] is None
    recommendations = p.recommendations()
    assert {r["rule"] for r in recommendations.rows} <= {"dataloader", "amp-casts"}
    assert "fp32-matmul (needs GPU kernels" in recommendations.notes[1]
    assert "host-sync (needs CUDA API calls or memcpy records)" in recommendations.notes[1]


def _kineto_events(path):
    """The trace's events with times as Decimal microseconds, so nanoseconds come out exact."""
    with gzip.open(path, "rt") as f:
        return json.load(f, parse_float=Decimal)["traceEvents"]


def _ns(us) -> int:
    return int(us * 1000)


def _union_within(intervals, start, end) -> int:
    """Length of the union of intervals clipped to [start, end] (independent of the sweep under test)."""
    total, reach = 0, start
    for s, e in sorted((max(s, start), min(e, end)) for s, e in intervals):
        if e > reach and e > s:
            total += e - max(s, reach)
            reach = e
    return total


def test_qwen_trace_views(shared_data):
    path = shared_data / "kineto" / "tracelens_qwen1.5-0.5b_h100_infer.json.gz"
    events = _kineto_events(path)
    p = pyprof_live.load(path)
    # JSON: one ProfilerStep#6 user_annotation of 47,151.395 us; kernels clipped to it, unioned.
    step = next(e for e in events if e.get("cat") == "user_annotation" and e["name"] == "ProfilerStep#6")
    start, end = _ns(step["ts"]), _ns(step["ts"] + step["dur"])
    kernels = [(_ns(e["ts"]), _ns(e["ts"] + e["dur"])) for e in events if e.get("cat") == "kernel"]
    (row,) = p.overview().rows
    assert (row["step"], row["dur"]) == ("ProfilerStep#6", 47_151_395)
    assert row["kernel"] == _union_within(kernels, start, end) == 43_071_901
    assert sum(row[c] for c in CATEGORIES) == row["dur"]
    # The first aten::addmm: [8944,1024] @ [1024,1024] bf16, its kernel (same External id) 31.967 us.
    # flops 2 * 8944 * 1024 * 1024 = 18,756,927,488; H100 SXM bf16 989.5 TFLOP/s: 18,955.96 ns, vs bytes
    # (1024 + 2 * 8944*1024 + 1024*1024) * 2 = 38,733,824 / 3350 = 11,562.3 ns -> 18,956 ns compute-bound,
    # 18,955.96 / 31,967 = 59.3% of SOL.
    addmm = next(e for e in events if e.get("cat") == "cpu_op" and e["name"] == "aten::addmm")
    gemm = next(
        e for e in events if e.get("cat") == "kernel" and e["args"].get("External id") == addmm["args"]["External id"]
    )
    assert _ns(gemm["dur"]) == 31_967
    # The op's first row is cuBLAS's 768 ns workspace memset, its second the GEMM; the roofline (on the
    # first row) counts kernels only, so it is against the 31,967 ns GEMM.
    table = p.kernel_view(columns="idx,op,kernel,sil,flops,ideal,sol%,bound").rows
    at = next(i for i, r in enumerate(table) if r["op"] == "aten::addmm")
    memset, kernel = table[at], table[at + 1]
    assert (memset["kernel"], memset["sil"], kernel["kernel"], kernel["sil"]) == ("[memset]", 768, gemm["name"], 31_967)
    assert (memset["flops"], memset["ideal"], memset["sol%"], memset["bound"]) == (
        18_756_927_488,
        18_956,
        59.3,
        "compute",
    )
    # ops(): aten::mm device self time = its kernels' and memsets' (same External id) durations in the JSON.
    mm_ids = {e["args"]["External id"] for e in events if e.get("cat") == "cpu_op" and e["name"] == "aten::mm"}
    mm_device_ns = sum(
        _ns(e["dur"])
        for e in events
        if e.get("cat") in ("kernel", "gpu_memset", "gpu_memcpy") and e["args"].get("External id") in mm_ids
    )
    ops = {r["op"]: r for r in p.ops().rows}
    assert (ops["aten::mm"]["calls"], ops["aten::mm"]["dev_self"]) == (len(mm_ids), mm_device_ns) == (96, 6_668_679)
    # kernels(): the cuBLAS sm90 GEMM, calls and total time as the JSON has them
    name = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
    gemms = [e for e in events if e.get("cat") == "kernel" and e["name"] == name]
    row = next(r for r in p.kernels().rows if r["kernel"] == name)
    assert (
        (row["calls"], row["sil"], row["tc"])
        == (len(gemms), sum(_ns(e["dur"]) for e in gemms), 1)
        == (241, 12_789_918, 1)
    )
    assert row["bound"] == "compute" and 50 < row["sol%"] < 80


def test_nccl_trace_steps(shared_data):
    path = shared_data / "kineto" / "hta_nccl_data_a100_ws2_rank0.json.gz"
    events = _kineto_events(path)
    steps = sorted(
        (e for e in events if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")),
        key=lambda e: e["ts"],
    )
    kernels = [(_ns(e["ts"]), _ns(e["ts"] + e["dur"])) for e in events if e.get("cat") == "kernel"]
    rows = pyprof_live.load(path).overview().rows
    assert (
        [r["step"] for r in rows]
        == [e["name"] for e in steps] + ["total"]
        == ["ProfilerStep#4", "ProfilerStep#5", "ProfilerStep#6", "total"]
    )
    for row, step in zip(rows, steps):
        start, end = _ns(step["ts"]), _ns(step["ts"] + step["dur"])
        assert row["dur"] == end - start
        assert row["kernel"] == _union_within(kernels, start, end)
        assert sum(row[c] for c in CATEGORIES) == row["dur"]
    assert (rows[-1]["dur"], rows[-1]["kernel"], rows[-1]["busy%"]) == (667_105_339, 155_215_315, 23.6)


@pytest.mark.e2e
def test_resnet50_v100_steps_and_dataloader(shared_data):
    path = shared_data / "kineto" / "kineto_tbplugin_resnet50_v100dgxs_oldformat.pt.trace.json.gz"
    events = _kineto_events(path)
    steps = sorted(
        (e for e in events if e["name"].startswith("ProfilerStep#") and e.get("ph") == "X"), key=lambda e: e["ts"]
    )
    loading = [
        (_ns(e["ts"]), _ns(e["ts"] + e["dur"]))
        for e in events
        if e["name"].startswith("enumerate(DataLoader)#") and e.get("ph") == "X"
    ]
    kernels = [(_ns(e["ts"]), _ns(e["ts"] + e["dur"])) for e in events if e.get("cat") == "Kernel"]
    # what outranks data loading: GPU work still running from the step before, and CUDA API calls
    higher = [
        (_ns(e["ts"]), _ns(e["ts"] + e["dur"]))
        for e in events
        if e.get("cat") in ("Kernel", "Memcpy", "Memset", "Runtime") and e.get("ph") == "X"
    ]
    rows = pyprof_live.load(path).overview().rows
    assert len(rows) == len(steps) + 1 == 7
    for row, step in zip(rows, steps):
        start, end = _ns(step["ts"]), _ns(step["ts"] + step["dur"])
        assert (row["step"], row["dur"]) == (step["name"], end - start)
        assert row["kernel"] == _union_within(kernels, start, end)
        # the DataLoader ranges of one step do not overlap each other: each one's time minus what outranks it
        waiting = sum(
            min(e, end) - max(s, start) - _union_within(higher, max(s, start), min(e, end))
            for s, e in loading
            if s < end and e > start
        )
        assert row["dataloader"] == waiting
    # ProfilerStep#5..#10: 1,048,976,000 ns, 575,622,000 of kernels, 355,571,000 waiting for data
    assert (rows[-1]["dur"], rows[-1]["kernel"], rows[-1]["dataloader"]) == (1_048_976_000, 575_622_000, 355_571_000)
