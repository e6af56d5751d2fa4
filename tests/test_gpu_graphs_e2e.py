"""CUDA graphs captured under profile() and replayed: kernels tied to the ops recorded at capture, live.

Skipped without CUDA. The CPU tests of the same path are tests/test_gpu_graph_nodes.py (the real
backend and tracker, cupti-python's record classes, a stand-in process).
"""

import pytest
import torch

import pyprof_live
from pyprof_live.records import NO_LINK

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]


def warmed_graph_inputs():
    static_x = torch.randn(64, 64, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        static_x.mul(2).relu()  # warm-up on a side stream, as torch.cuda.graph requires
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    return static_x


def replayed(profile):
    profile.correlation
    return [k for k in profile.records.kernels if k.graph_id]


def test_torch_cuda_graph_captured_in_the_profile():
    static_x = warmed_graph_inputs()
    graph = torch.cuda.CUDAGraph()
    with pyprof_live.profile(gpu="cupti") as p:
        with torch.cuda.graph(graph):
            out = static_x.mul(2).relu()
        for _ in range(3):
            graph.replay()
        torch.cuda.synchronize()
    torch.testing.assert_close(out, static_x.mul(2).relu())
    kernels = replayed(p)
    assert len(kernels) == 3 * 2  # 3 replays of mul + relu
    ops = p.records.ops
    assert all(k.capture_correlation != NO_LINK and k.op != NO_LINK for k in kernels)
    assert sorted({ops[k.op].name for k in kernels}) == ["aten::mul", "aten::relu"]
    assert all(ops[k.op].callsite and "test_gpu_graphs_e2e.py" in ops[k.op].callsite[0] for k in kernels)
    assert p.meta["gpu"]["graph_nodes"]["tied"] == 6 and p.correlation.kernels_replayed_with_capture_op == 6
    assert "aten::mul" in p.table(columns="op,kernel")


def test_graph_captured_before_the_profile_is_reported_per_graph():
    static_x = warmed_graph_inputs()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_x.mul(2).relu()
    with pyprof_live.profile(gpu="cupti") as p:
        graph.replay()
        torch.cuda.synchronize()
    kernels = replayed(p)
    assert len(kernels) == 2 and all(k.op == NO_LINK and k.capture_correlation == NO_LINK for k in kernels)
    assert f"replay of graph {kernels[0].graph_id}" in p.table(columns="op,kernel")


def test_compile_reduce_overhead_replays_are_tied_to_capture_time_ops():
    torch._dynamo.reset()
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.GELU(), torch.nn.Linear(64, 8)).cuda()
    compiled = torch.compile(model, mode="reduce-overhead")
    x = torch.randn(16, 64, device="cuda")
    expected = model(x)
    with pyprof_live.profile(gpu="cupti") as p:
        for _ in range(4):  # cudagraph trees: warm-up run, then record (capture), then replays
            out = compiled(x)
        torch.cuda.synchronize()
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-4)
    kernels = replayed(p)
    assert kernels, "no kernel was replayed from a CUDA graph"
    tied = [k for k in kernels if k.op != NO_LINK and k.capture_correlation != NO_LINK]
    assert len(tied) >= 0.95 * len(kernels)
    assert p.meta["gpu"]["graph_nodes"]["captures"] >= 1
    # the GEMMs were issued by the Linear layers' matmuls at capture
    ops = p.records.ops
    gemm_ops = {ops[k.op].name for k in tied if "gemm" in k.name.lower() or "sm80" in k.name or "sm90" in k.name}
    assert gemm_ops and gemm_ops <= {"aten::mm", "aten::addmm", "aten::_addmm_activation"}
