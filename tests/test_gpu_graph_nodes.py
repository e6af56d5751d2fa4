"""Live CUDA-graph replays tied to capture-time ops: the real CuptiBackend and GraphNodeTracker driven by
a stand-in CUDA process that delivers cupti-python's real record classes (ActivityAPI, ActivityKernel13,
ActivityExternalCorrelation, ResourceData + GraphData in the graph-node callbacks)."""

import threading

import pytest
import torch
from cupti import cupti

from pyprof_live.capture.gpu import graph_nodes
from pyprof_live.profile import Profile
from pyprof_live.records import NO_LINK, OpRecord
from tests.gpu_replay import ReplayBackend, ReplayProcess

_CBID = {r.name: int(r) for r in cupti.RuntimeApiTraceCbid}
LAUNCH = _CBID["cudaLaunchKernel_v7000"]
GRAPH_LAUNCH = _CBID["cudaGraphLaunch_v10000"]
CREATED, CLONED = cupti.CallbackIdResource.GRAPHNODE_CREATED, cupti.CallbackIdResource.GRAPHNODE_CLONED
ME = threading.get_ident() & 0xFFFFFFFF  # the thread the callbacks run on, as CUPTI ids it


@pytest.fixture
def capture_begin_stub(monkeypatch):
    """torch.cuda.CUDAGraph.capture_begin needs CUDA; the tracker's hook wraps this stand-in instead."""
    calls = []
    monkeypatch.setattr(torch.cuda.CUDAGraph, "capture_begin", lambda self, *a, **k: calls.append(self))
    return calls


def kernel(name, start, end, correlation, graph=(0, 0)):
    k = cupti.ActivityKernel13()
    k.kind = int(cupti.ActivityKind.CONCURRENT_KERNEL)
    k.name, k.start, k.end, k.correlation_id = name, start, end, correlation
    k.graph_id, k.graph_node_id = graph
    return k


def captured_and_replayed(process):
    """Ops 1 (aten::mul) and 2 (aten::relu) captured into graph 7 as nodes 0xA0, 0xB0 (ids 1_000_160 and
    1_000_176), cloned at instantiation into 0xA1, 0xB1; then one replay outside any op plus one graph
    launched before the profile's capture began (node 0xC1, never created under the profile)."""
    backend = ReplayBackend("cupti", [], process)
    backend.start()
    process.thread = ME
    torch.cuda.CUDAGraph.capture_begin(object())  # the hook takes the CUPTI subscription
    for op_id, correlation, node, start in ((1, 101, 0xA0, 1_000), (2, 102, 0xB0, 2_000)):
        backend.push(op_id)
        process.api_call("runtime", LAUNCH, start, start + 100, correlation, 0)
        process.graph_node_event(CREATED, node, start + 50)  # inside the cudaLaunchKernel call
        backend.pop()
    process.graph_node_event(CLONED, 0xA1, 3_050, original=0xA0)
    process.graph_node_event(CLONED, 0xB1, 3_060, original=0xB0)
    process.api_call("runtime", GRAPH_LAUNCH, 4_000, 4_010, 200, 0)
    process.device_activity(kernel("mul_kernel", 4_100, 4_200, 200, (7, 0xA1 + 1_000_000)))
    process.device_activity(kernel("relu_kernel", 4_200, 4_250, 200, (7, 0xB1 + 1_000_000)))
    process.api_call("runtime", GRAPH_LAUNCH, 5_000, 5_010, 300, 0)
    process.device_activity(kernel("old_kernel", 5_100, 5_130, 300, (8, 0xC1 + 1_000_000)))
    capture = backend.stop()
    ops = [
        OpRecord("aten::mul", 900, 1_200, ME, external_id=1),
        OpRecord("aten::relu", 1_900, 2_200, ME, external_id=2),
    ]
    profile = Profile(ops=ops, apis=capture.records.apis, kernels=capture.records.kernels, meta=capture.meta)
    profile.correlation
    return profile, capture


def test_replayed_kernels_are_tied_to_the_ops_recorded_at_capture(capture_begin_stub):
    process = ReplayProcess(clock_offset_ns=123_456_789)
    profile, capture = captured_and_replayed(process)
    kernels = {k.name: k for k in profile.records.kernels}
    ops = profile.records.ops
    # node 0xA1 was cloned from 0xA0, created inside cudaLaunchKernel 101 (op 1); 0xB1 <- 0xB0 <- call 102 (op 2)
    assert (kernels["mul_kernel"].capture_correlation, ops[kernels["mul_kernel"].op].name) == (101, "aten::mul")
    assert (kernels["relu_kernel"].capture_correlation, ops[kernels["relu_kernel"].op].name) == (102, "aten::relu")
    assert profile.records.apis[kernels["mul_kernel"].launch].correlation == 200  # launch stays the graph launch
    old = kernels["old_kernel"]
    assert old.capture_correlation == NO_LINK and old.op == NO_LINK  # its capture was not profiled
    assert profile.correlation.kernels_replayed_with_capture_op == 2
    assert capture.meta["gpu"]["graph_nodes"] == {"captures": 1, "nodes_created": 2, "kernels": 3, "tied": 2}
    assert capture.meta["gpu_notes"][-2:] == [
        "2 of 3 kernels replayed from CUDA graphs tied to the ops that issued them at capture "
        "(1 graph capture(s) in the profile; by CUPTI graph node ids)",
        "replays of graphs captured before the profile started are shown as 'replay of graph N'",
    ]
    assert "replay of graph 8" in profile.table(columns="op,kernel")
    # stop gave the subscription back and unhooked capture_begin
    assert process.subscriber is None and graph_nodes._subscriber is None
    assert torch.cuda.CUDAGraph.capture_begin is not None and len(capture_begin_stub) == 1
    torch.cuda.CUDAGraph.capture_begin(object())
    assert process.subscriber is None


def test_no_capture_no_subscription(capture_begin_stub):
    process = ReplayProcess()
    backend = ReplayBackend("cupti", [], process)
    backend.start()
    process.api_call("runtime", LAUNCH, 1_000, 1_100, 5, 0)
    capture = backend.stop()
    assert process.subscriber is None and capture.meta["gpu"]["graph_nodes"]["captures"] == 0


def test_another_subscriber_leaves_replays_per_graph_and_says_why(capture_begin_stub):
    process = ReplayProcess()
    process.subscribe_error = cupti.cuptiError(int(cupti.Result.ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED))
    profile, capture = captured_and_replayed(process)
    assert all(k.capture_correlation == NO_LINK for k in profile.records.kernels)
    assert capture.meta["gpu_notes"][-1] == (
        "capture-time ops of graph replays unknown: another CUPTI subscriber holds CUPTI's callback API "
        "(torch.profiler keeps one once used in a process; Nsight tools too)"
    )


def test_the_hook_is_removed_when_the_profiled_code_raises(capture_begin_stub):
    stub = torch.cuda.CUDAGraph.capture_begin
    process = ReplayProcess()
    backend = ReplayBackend("cupti", [], process)
    backend.start()
    assert torch.cuda.CUDAGraph.capture_begin is not stub
    try:
        torch.cuda.CUDAGraph.capture_begin(object())
        raise ValueError("user code failed")
    except ValueError:
        pass
    finally:
        backend.stop()
    assert torch.cuda.CUDAGraph.capture_begin is stub and process.subscriber is None
