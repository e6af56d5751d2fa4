"""The real CUPTI collector end to end on a CUDA GPU, checked against torch.profiler on the same step.

Skipped without CUDA. The reference is torch.profiler's own trace of the same (warmed-up, deterministic)
training step, read back with pyprof_live's Kineto importer: the same kernels must come out in the
same order, each under an op of torch.profiler's op chain for that kernel (torch.profiler links a
kernel to the innermost op, e.g. aten::cudnn_convolution; a dispatch mode sees aten::convolution,
which encloses it).
"""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import pyprof_live
from pyprof_live.importers.kineto import load_kineto
from pyprof_live.records import NO_LINK

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]


@pytest.fixture(scope="module", autouse=True)
def deterministic_cudnn():
    """Same cuDNN algorithms in both runs compared; the global flags are put back for later modules."""
    saved = torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic
    torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic = False, True
    yield
    torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic = saved


def cnn_step():
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(8 * 8 * 8, 10),
    ).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(4, 3, 16, 16, device="cuda")
    y = torch.randint(0, 10, (4,), device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        opt.step()

    for _ in range(3):  # warm-up: cuDNN/cuBLAS handles, optimizer state, allocator
        step()
    torch.cuda.synchronize()
    return step


def op_chain(profile, index):
    names = []
    while index != NO_LINK:
        names.append(profile.records.ops[index].name)
        index = profile.records.ops[index].parent
    return names


def in_order(kernels):
    return sorted(kernels, key=lambda k: (k.start, k.device, k.stream))


@pytest.fixture(scope="module")
def both_profiles(tmp_path_factory):
    step = cnn_step()
    with pyprof_live.profile(gpu="cupti") as ours:
        step()
    # torch.profiler after ours: it must still work (we never subscribed, and disabled what we enabled).
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step()
    path = tmp_path_factory.mktemp("trace") / "trace.json"
    prof.export_chrome_trace(str(path))
    theirs = load_kineto(path)
    ours.correlation
    theirs.correlation
    return ours, theirs


def test_same_kernels_in_the_same_order(both_profiles):
    ours, theirs = both_profiles
    assert theirs.records.kernels, "torch.profiler recorded no kernels after our profile stopped"
    assert [k.name for k in in_order(ours.records.kernels)] == [k.name for k in in_order(theirs.records.kernels)]
    assert len(ours.records.memops) == len(theirs.records.memops)
    assert ours.meta["warnings"] == [] and "gpu_graph_replays" not in ours.meta


def test_each_kernel_is_under_the_op_torch_profiler_saw_launch_it(both_profiles):
    ours, theirs = both_profiles
    assert ours.correlation.kernels_unattributed == 0
    pairs = list(zip(in_order(ours.records.kernels), in_order(theirs.records.kernels)))
    mismatched = []
    for mine, reference in pairs:
        chain = op_chain(theirs, reference.op)
        op = ours.records.ops[mine.op]
        if op.name not in chain or (op.dir == "bwd") != (theirs.records.ops[reference.op].dir == "bwd"):
            mismatched.append((mine.name[:60], op.name, op.dir, chain))
    assert mismatched == []


def test_kernels_per_op_match(both_profiles):
    """Same op -> same kernel names and counts, per (op name, direction)."""
    ours, theirs = both_profiles

    def per_op(profile, name_of):
        table = {}
        for k in profile.records.kernels:
            key = name_of(profile, k)
            table.setdefault(key, []).append(k.name)
        return {key: sorted(names) for key, names in table.items()}

    ours_ops = {ours.records.ops[k.op].name for k in ours.records.kernels}

    def our_op(profile, k):
        op = profile.records.ops[k.op]
        return op.name, op.dir == "bwd"

    def their_op(profile, k):  # the enclosing op a dispatch mode records
        chain = op_chain(profile, k.op)
        name = next((n for n in chain if n in ours_ops), None)
        return name, profile.records.ops[k.op].dir == "bwd"

    assert per_op(ours, our_op) == per_op(theirs, their_op)


def test_launches_fall_inside_their_op_on_the_aligned_clock(both_profiles):
    ours, _ = both_profiles
    slack = ours.meta["gpu"]["clock_uncertainty_ns"] + 1_000  # bracket error + 1 µs of CUPTI's own stamping
    for k in ours.records.kernels:
        launch = ours.records.apis[k.launch]
        op = ours.records.ops[k.op]
        assert op.start - slack <= launch.start <= launch.end <= op.end + slack, (k.name, op.name)
        assert k.start >= launch.start - slack  # a kernel cannot run before it is launched
    assert {a.name for a in ours.records.apis} >= {"cudaLaunchKernel"}


def test_backward_kernels_carry_the_forward_module(both_profiles):
    ours, _ = both_profiles
    ops = ours.records.ops
    conv_fwd = {ops[k.op].module for k in ours.records.kernels if ops[k.op].name == "aten::convolution"}
    conv_bwd = {ops[k.op].module for k in ours.records.kernels if ops[k.op].name == "aten::convolution_backward"}
    assert len(conv_fwd) == 1 and conv_fwd == conv_bwd and conv_fwd != {""}


def test_devices_are_described(both_profiles):
    ours, _ = both_profiles
    (device,) = ours.records.devices
    props = torch.cuda.get_device_properties(device.id)
    assert (device.name, device.compute_capability) == (props.name, (props.major, props.minor))


def test_torch_profiler_inside_our_profile_is_reported(tmp_path):
    from torch.profiler import ProfilerActivity, profile

    step = cnn_step()
    with pyprof_live.profile(gpu="cupti") as ours:
        step()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            step()
        step()
    assert any(w.startswith("GPU data is incomplete") for w in ours.meta["warnings"])
    assert "GPU data is incomplete" in ours.table()
    prof.export_chrome_trace(str(tmp_path / "inside.json"))
    assert load_kineto(tmp_path / "inside.json").records.kernels  # torch.profiler got its kernels
    with pyprof_live.profile(gpu="cupti") as again:  # CUPTI can be taken back afterwards
        step()
    assert again.records.kernels and not any("incomplete" in w for w in again.meta["warnings"])


def test_cuda_graph_replay_is_reported_with_its_graph():
    step = cnn_step()
    static_x = torch.randn(64, 64, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        static_x.mul(2)  # warm-up on a side stream, as torch.cuda.graph requires
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = static_x.mul(2).relu()
    with pyprof_live.profile(gpu="cupti") as p:
        graph.replay()
        step()
    replayed = [k for k in p.records.kernels if k.graph_id]
    assert len(replayed) == 2 and out.shape == (64, 64)  # mul and relu
    assert all(k.op == NO_LINK for k in replayed)  # CUDAGraph.replay() is no aten op
    assert p.meta["gpu_graph_replays"][replayed[0].graph_id]["kernels"] == 2
    assert any("replays of CUDA graph" in note for note in p.meta["gpu_notes"])
    assert all(k.op != NO_LINK for k in p.records.kernels if not k.graph_id)


def test_gpu_auto_collects_without_warning():
    step = cnn_step()
    with pyprof_live.profile(gpu="auto") as p:
        step()
    assert p.records.kernels and p.meta["warnings"] == []
