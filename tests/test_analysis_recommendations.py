"""Recommendations: each rule on a profile built by hand (fires, and does not where it must not), on a
live CPU profile (no GPU advice), and on real traces with the time at stake checked by JSON/SQLite scans."""

import gzip
import json
import sqlite3
from decimal import Decimal

import pytest
import torch

import pyprof_live
from pyprof_live.records import TensorMeta
from pyprof_live.report import recommendations as rules

from .analysis_fixtures import ProfileBuilder

F32 = TensorMeta((256, 256), "float32")
BF16 = TensorMeta((4096, 4096), "bfloat16")


def _rows(profile) -> dict:
    return {r["rule"]: r for r in profile.recommendations().rows}


def _step(builder, end):
    return builder.range("ProfilerStep#1", 0, end)


def test_fp32_gemm_on_cuda_cores_of_a_tensor_core_gpu():
    def profile(device, kernel):
        b = ProfileBuilder(device).op("aten::mm", 0, 1000, inputs=(F32, F32), kernels=[(kernel, 100, 900)])
        return _step(b, 1000).build()

    ampere = _rows(profile("NVIDIA A100-SXM4-80GB", "ampere_sgemm_128x64_nn"))["fp32-matmul"]
    assert (ampere["at_stake"], ampere["kernel%"], ampere["where"]) == (800, 100.0, "aten::mm x1 (800 ns)")
    assert "allow_tf32" in ampere["advice"]
    volta = _rows(profile("Tesla V100-SXM2-16GB", "volta_sgemm_128x64_nn"))["fp32-matmul"]
    assert "float16" in volta["advice"] and "GradScaler" in volta["advice"]  # V100: no TF32, AMP instead
    assert "fp32-matmul" not in _rows(profile("NVIDIA A100-SXM4-80GB", "cutlass_80_tensorop_s1688gemm_64x64_nn"))
    no_tensor_cores = profile("GeForce GTX 1060 with Max-Q Design", "maxwell_sgemm_128x64_nn").recommendations()
    assert not no_tensor_cores.rows and "fp32-matmul (needs a GPU with tensor cores" in no_tensor_cores.notes[1]


def test_tensor_core_alignment():
    odd = (TensorMeta((4096, 1023), "bfloat16"), TensorMeta((1023, 4096), "bfloat16"))  # K = 1023
    rgb = (
        TensorMeta((32, 3, 224, 224), "float16"),
        TensorMeta((64, 3, 7, 7), "float16"),
        None,
        (2, 2),
        (3, 3),
        (1, 1),
        False,
        (0, 0),
        1,
    )  # first conv: 3 input channels cannot usefully be padded to 8
    b = ProfileBuilder("NVIDIA H100 80GB HBM3")
    b.op("aten::mm", 0, 1000, inputs=odd, kernels=[("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", 100, 600)])
    b.op(
        "aten::mm", 1000, 2000, inputs=(BF16, BF16), kernels=[("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", 1100, 1900)]
    )
    b.op("aten::convolution", 2000, 3000, inputs=rgb, kernels=[("sm90_xmma_fprop_implicit_gemm_f16f16", 2100, 2900)])
    row = _rows(_step(b, 3000).build())["tc-alignment"]
    assert (row["at_stake"], row["where"]) == (500, "aten::mm K=1023 (multiple of 8 wanted) x1 (500 ns)")


def test_launch_bound():
    # 200 kernels of 2,000 ns, each launched by a 5,000 ns call: the GPU waits 3,000 ns + 1 ns before each
    # but the first, inside a step of 200 * 7,000 = 1,400,000 ns.
    b = ProfileBuilder("NVIDIA H100 80GB HBM3")
    for i in range(200):
        t = i * 7000
        b.op("aten::add", t, t + 7000, kernels=[("vectorized_elementwise_kernel", t + 5001, t + 7001)], launch_ns=5000)
    row = _rows(_step(b, 1_400_000).build())["launch-bound"]
    # gap before kernel i (i >= 1): starts at 7000 i + 5001, the previous ended at 7000 (i - 1) + 7001 -> 5000 ns
    # of which the launch call (ending 7000 i + 5001) was still running: all 199 gaps count, 995,000 ns.
    assert row["at_stake"] == 199 * 5000 and row["share%"] == 71.1  # 995,000 / 1,400,000
    assert "200 of 200 kernels ran shorter than their launch took" in row["advice"]
    assert row["where"] == "vectorized_elementwise_kernel x200 (400 µs)"


def test_long_kernels_are_not_launch_bound():
    b = ProfileBuilder("NVIDIA H100 80GB HBM3")
    for i in range(200):
        t = i * 70_000
        b.op("aten::mm", t, t + 7000, kernels=[("sm90_gemm", t + 5001, t + 70_001)], launch_ns=5000)
    assert "launch-bound" not in _rows(_step(b, 14_000_000).build())


def test_dataloader_wait():
    b = (
        ProfileBuilder(None)
        .op("aten::add", 300, 1000)
        .range("enumerate(DataLoader)#_MultiProcessingDataLoaderIter", 0, 300)
    )
    row = _rows(_step(b, 1000).build())["dataloader"]
    assert (row["at_stake"], row["share%"], row["where"]) == (300, 30.0, "ProfilerStep#1 (300 ns)")
    assert "num_workers" in row["advice"] and "pin_memory" in row["advice"]


def test_item_of_a_cuda_tensor_is_a_host_sync():
    b = ProfileBuilder("NVIDIA A100-SXM4-80GB")
    b.op("aten::item", 0, 1000, inputs=(TensorMeta((), "float32"),))
    b.op(
        "aten::_local_scalar_dense",
        10,
        990,
        inputs=(TensorMeta((), "float32"),),
        memcpy=[("DtoH", 500, 510)],
        apis=[("cudaStreamSynchronize", 20, 980)],
    )
    row = _rows(_step(b, 1000).build())["host-sync"]
    assert (row["at_stake"], row["where"]) == (
        960,
        "aten::item > aten::_local_scalar_dense: cudaStreamSynchronize x1 (960 ns)",
    )
    assert "1 of them .item()/_local_scalar_dense on a CUDA tensor" in row["advice"]


def test_device_to_host_copies_stand_in_when_no_sync_call_was_recorded():
    b = ProfileBuilder("GeForce GTX 1060 with Max-Q Design")
    b.op("aten::copy_", 0, 1000, memcpy=[("DtoH", 100, 400), ("HtoD", 400, 500)])
    assert _rows(_step(b, 1000).build())["host-sync"]["where"] == "aten::copy_: memcpy DtoH x1 (300 ns)"


def test_hotspot_far_from_speed_of_light():
    # mm [4096,4096]bf16 x2 on H100: ideal 138,897.37 ns (see test_analysis_roofline); in 1,388,974 ns that is
    # 10.0% of SOL; at stake 1,388,974 - 138,897.37 = 1,250,076.6 -> 1,250,076 ns.
    b = ProfileBuilder("NVIDIA H100 80GB HBM3")
    b.op("aten::mm", 0, 2_000_000, inputs=(BF16, BF16), kernels=[("sm90_xmma_gemm_bf16bf16", 100, 1_389_074)])
    row = _rows(_step(b, 2_000_000).build())["far-from-sol"]
    assert row["at_stake"] == 1_250_076
    assert row["where"].startswith("aten::mm [4096,4096]bf16 [4096,4096]bf16 at 10.0% of SOL, compute-bound")


def test_autocast_casts_go_to_the_op_that_made_them():
    # Traces record autocast's casts inside the op: aten::linear > aten::to > aten::_to_copy (dtype code 15 = bf16).
    # A cast the user wrote (top-level aten::to) is not autocast's and is not counted.
    x = TensorMeta((4096, 4096), "float32")
    b = ProfileBuilder("NVIDIA A100-SXM4-80GB")
    b.op("aten::linear", 0, 10_000, inputs=(x, x), module="Net.fc", dir="fwd")
    b.op("aten::to", 10, 5000, inputs=(x, 15), dir="fwd")
    b.op("aten::_to_copy", 20, 4900, inputs=(x, 15), dir="fwd", kernels=[("unrolled_elementwise_kernel", 100, 2100)])
    b.op("aten::to", 20_000, 25_000, inputs=(x, 15), dir="fwd")
    b.op(
        "aten::_to_copy",
        20_010,
        24_900,
        inputs=(x, 15),
        dir="fwd",
        kernels=[("unrolled_elementwise_kernel", 20_100, 23_100)],
    )
    row = _rows(_step(b, 30_000).build())["amp-casts"]
    assert (row["at_stake"], row["where"]) == (2000, "aten::linear (Net.fc) x1 (2 µs)")


def test_live_autocast_casts_and_no_gpu_advice_on_cpu():
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8))
    with pyprof_live.profile() as p:
        for _ in range(2):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                out = model(torch.randn(4, 16))
            out.float().sum().backward()
            out.sum().item()
            p.step()
    row = rules.amp_casts(rules.Context(p))
    # Each forward casts Linear 0's bias, weight and input and Linear 2's bias and weight (its input is already
    # bf16): 3 casts before Sequential.0's addmm and 2 before Sequential.2's, twice.
    assert sorted(label for label, _ in row["items"]) == [
        "aten::addmm (Sequential.0) x6",
        "aten::addmm (Sequential.2) x4",
    ]
    advice = p.recommendations()
    assert {r["rule"] for r in advice.rows} <= {"amp-casts", "dataloader"}
    assert "host-sync (needs CUDA API calls or memcpy records)" in advice.notes[1]


def _kineto_events(path):
    with gzip.open(path, "rt") as f:
        return json.load(f, parse_float=Decimal)["traceEvents"]


def _ns(us) -> int:
    return int(us * 1000)


def _syncs_in_step(path, step_name: str) -> list:
    """The trace's *Synchronize runtime calls that start inside the named ProfilerStep (independent scan)."""
    events = _kineto_events(path)
    step = next(e for e in events if e.get("cat") == "user_annotation" and e["name"] == step_name)
    start, end = _ns(step["ts"]), _ns(step["ts"] + step["dur"])
    return [
        e
        for e in events
        if e.get("cat") == "cuda_runtime" and e["name"].endswith("Synchronize") and start <= _ns(e["ts"]) < end
    ]


def test_qwen_trace_host_syncs(shared_data):
    path = shared_data / "kineto" / "tracelens_qwen1.5-0.5b_h100_infer.json.gz"
    syncs = _syncs_in_step(path, "ProfilerStep#6")
    # In the step: cudaDeviceSynchronize 14,102.53 us and cudaStreamSynchronize 7.69 us (the .item() of
    # aten::is_nonzero); a second cudaDeviceSynchronize starts after the step ends.
    rows = _rows(pyprof_live.load(path))
    assert rows["host-sync"]["at_stake"] == sum(_ns(e["dur"]) for e in syncs) == 14_110_220
    assert "1 of them .item()/_local_scalar_dense" in rows["host-sync"]["advice"]
    assert (
        "aten::is_nonzero > aten::_local_scalar_dense: cudaStreamSynchronize x1 (7.69 µs)" in rows["host-sync"]["where"]
    )
    assert "fp32-matmul" not in rows  # one 3.5 us fp32 bmm: 0.0% of kernel time is not worth a line


def test_nccl_trace_is_launch_bound(shared_data):
    path = shared_data / "kineto" / "hta_nccl_data_a100_ws2_rank0.json.gz"
    events = _kineto_events(path)
    launches = {e["args"]["correlation"]: _ns(e["dur"]) for e in events if e.get("cat") == "cuda_runtime"}
    kernels = [e for e in events if e.get("cat") == "kernel"]
    tiny = sum(1 for e in kernels if _ns(e["dur"]) < launches[e["args"]["correlation"]])
    row = _rows(pyprof_live.load(path))["launch-bound"]
    assert f"{tiny} of {len(kernels)} kernels ran shorter than their launch took" in row["advice"]
    assert (tiny, len(kernels)) == (1027, 2700)
    assert row["share%"] > 40  # GPU busy 23.6% of the steps (test_analysis_views), most of the rest waiting


def test_nsys_vecadd_blocking_copies(shared_data):
    path = shared_data / "nsys" / "nsys2025.5_vecadd_rtx3060_schema3.24.sqlite"
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    blocking = db.execute(
        "SELECT count(*), sum(r.end - r.start) FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
        "JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE 'cudaMemcpy%' "
        "AND s.value NOT LIKE '%Async%'"
    ).fetchone()
    row = _rows(pyprof_live.load(path))["host-sync"]
    assert blocking == (3, 3_245_853)
    assert (row["at_stake"], row["where"]) == (3_245_853, "(no op): cudaMemcpy x3 (3.25 ms)")


@pytest.mark.e2e
def test_resnet50_v100_fp32_convolutions_and_dataloader(shared_data):
    path = shared_data / "kineto" / "kineto_tbplugin_resnet50_v100dgxs_oldformat.pt.trace.json.gz"
    p = pyprof_live.load(path)
    rows = _rows(p)
    # V100 has fp16 tensor cores only: AMP, not TF32. Every GEMM/conv kernel here is a CUDA-core one
    # (sgemm, scudnn, dgrad/wgrad engines); the ops are float32.
    assert list(rows) == ["fp32-matmul", "dataloader"]
    assert "GradScaler" in rows["fp32-matmul"]["advice"]
    assert rows["fp32-matmul"]["where"].startswith("aten::cudnn_convolution_backward_weight x310")
    overview_total = p.overview().rows[-1]
    assert rows["dataloader"]["at_stake"] == overview_total["dataloader"] == 355_571_000  # see test_analysis_views
    # 12 cudaStreamSynchronize in the steps (input copies): 551 us, 0.05% of the steps, below the 1% line.
    events = _kineto_events(path)
    steps = [(_ns(e["ts"]), _ns(e["ts"] + e["dur"])) for e in events if e["name"].startswith("ProfilerStep#")]
    syncs = [e for e in events if e["name"] == "cudaStreamSynchronize" and any(s <= _ns(e["ts"]) < t for s, t in steps)]
    sync_row = rules.host_sync(rules.Context(p))
    assert sync_row["at_stake"] == sum(_ns(e["dur"]) for e in syncs) == 551_000 and len(syncs) == 12


@pytest.mark.e2e
def test_owlv2_h100_syncs_alignment_and_hotspots(shared_data):
    path = shared_data / "kineto" / "tracelens_owlv2_h100_infer.json.gz"
    syncs = _syncs_in_step(path, "ProfilerStep#6")
    rows = _rows(pyprof_live.load(path))
    assert rows["host-sync"]["at_stake"] == sum(_ns(e["dur"]) for e in syncs)
    assert rows["host-sync"]["where"].startswith("aten::to > aten::copy_: cudaStreamSynchronize x80")
    # attention over 5,185 tokens: bmm [16,5185,64] @ [16,64,5185] has N = 5185, not a multiple of 8
    assert "aten::bmm N=5185 (multiple of 8 wanted) x120" in rows["tc-alignment"]["where"]
    assert rows["far-from-sol"]["where"].startswith("aten::_softmax [16,5185,5185]bf16")
