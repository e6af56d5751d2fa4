"""Kineto traces of torch.compile'd programs: Inductor kernels tied to their compiled graph, and to the
ATen ops they fused where an Inductor provenance log of the same run exists.

Real GPU traces (../shared/data/kineto_compiled/, counted by hand with python + json on the raw files):
every ``cpu_op`` carrying Inductor's ``kernel_backend`` arg (a Triton launch) lies, on its thread, inside
a ``Torch-Compiled Region: 0/0`` cpu_op, and its GPU kernel has its External id:
hta_triton_example_a100 1 launch / 1 kernel, tracelens_torch_compile_triton_mi300x 4 / 4 (of 12 kernels),
tracelens_xdit_sd3.5 2076 / 2076 (of 8042 kernels, 4 regions, no CompiledFunction: inference).
No provenance log of those runs exists, so none of their kernels has fused ops (tie rate 0, said so).

The provenance test makes its own recording on CPU (tests/compiled_recording.py, at test time).
"""

import subprocess
import sys
from pathlib import Path

import pytest

from pyprof_live import torch_compat
from pyprof_live.formulas import evaluate
from pyprof_live.importers.kineto import load_kineto
from pyprof_live.importers.provenance import read_provenance
from pyprof_live.records import NO_LINK

TRACES = {
    "kineto_compiled/hta_triton_example_a100.json.gz": 1,
    "kineto_compiled/tracelens_torch_compile_triton_mi300x.json.gz": 4,
    "kineto_compiled/tracelens_xdit_sd3.5_profile_rank0_mi300x.json.gz": 2076,
}


@pytest.mark.parametrize(("name", "count"), list(TRACES.items()))
def test_every_inductor_kernel_of_the_real_traces_is_tied_to_its_compiled_region(shared_data, name, count):
    profile = load_kineto(shared_data / name)
    profile.correlation
    ops = profile.records.ops
    inductor = [k for k in profile.records.kernels if k.op != NO_LINK and ops[k.op].kind == "compiled"]
    assert len(inductor) == count  # denominator: GPU kernels launched by an Inductor kernel call
    assert {ops[k.op].graph for k in inductor} == {"0/0 inference"}  # 100% tied to a region
    assert all(ops[k.op].name == k.name for k in inductor)  # Triton: the launch op is named after its kernel
    assert profile.meta["compiled"] == {
        "kernel_calls": count,
        "kernel_calls_in_compiled_graph": count,
        "provenance_logs": [],  # none beside these traces: no fused ops (0 of count)
    }
    assert not any(op.kind == "fused" for op in ops)


def test_tiny_mi300x_trace_extern_calls_run_in_the_graph(shared_data):
    profile = load_kineto(shared_data / "kineto_compiled/tracelens_torch_compile_triton_mi300x.json.gz")
    ops = profile.records.ops
    # inside "## Call CompiledFxGraph fal4x... ##": all 7 aten::mm cpu_ops (7 Cijk_ GEMM kernels) and the SDPA op;
    # 12 kernels = 4 Triton + 7 Cijk_ + 1 attn_fwd
    in_graph = [op.name for op in ops if op.graph and op.kind == "op"]
    assert in_graph.count("aten::mm") == 7 and "aten::_scaled_dot_product_flash_attention" in in_graph
    assert profile.peak(0).name == "MI300X"  # deviceProperties: id 0 "AMD Instinct MI300X"


def test_a_log_of_another_run_adds_no_fused_ops(shared_data):
    """The tlparse log's graph is "0/0" inference too, but its FX cache key (fe6uirnx...) is not the trace's
    (fal4xpia...): nothing is matched by name across runs."""
    profile = load_kineto(
        shared_data / "kineto_compiled/tracelens_torch_compile_triton_mi300x.json.gz",
        provenance=shared_data / "provenance/tlparse_inductor_provenance_jit_cuda_log.txt",
    )
    assert profile.meta["compiled"]["kernel_calls_with_fused_ops"] == 0
    assert not any(op.kind == "fused" for op in profile.records.ops)


def _record(tmp_path_factory, *options):
    """A compiled 2-block MLP training step, 2 steps under torch.profiler, with its TORCH_TRACE log (real, made now)."""
    if not torch_compat.inductor_tracks_provenance():  # CI's oldest-torch job runs 2.6
        release = ".".join(map(str, torch_compat.TORCH))
        pytest.skip(f"torch {release}: Inductor has no provenance tracking (trace.provenance_tracking_level, 2.9+)")
    out = tmp_path_factory.mktemp("compiled_recording")
    subprocess.run(
        [sys.executable, "-m", "tests.compiled_recording", str(out), "2", *options],
        check=True,
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        timeout=900,
    )
    return out


@pytest.fixture(scope="module")
def cpu_recording(tmp_path_factory):
    return _record(tmp_path_factory)


@pytest.fixture(scope="module")
def cpu_recording_backward_with_forward(tmp_path_factory):
    import torch._functorch.config as functorch_config

    if not hasattr(functorch_config, "force_non_lazy_backward_lowering"):
        pytest.skip(f"torch {torch_compat.TORCH} cannot lower the backward graph with the forward")
    return _record(tmp_path_factory, "backward-with-forward")


def _fused_of(ops, i):
    """The fused records right after kernel call ``i``."""
    out = []
    for op in ops[i + 1 :]:
        if op.kind != "fused":
            break
        out.append(op)
    return out


@pytest.mark.e2e
def test_inductor_cpu_kernels_tied_to_fused_ops_from_the_log_found_beside_the_trace(cpu_recording):
    (log,) = (cpu_recording / "torch_trace").glob("dedicated_log_torch_trace_*.log")
    forward, backward = read_provenance(log)
    assert (forward.aot_id, backward.aot_id) == ("0_forward", "0_backward")
    sites = {
        d: [k for k in g.kernels if k.kernel.startswith("cpp_fused")] for d, g in (("f", forward), ("b", backward))
    }
    # torch 2.13 writes the lazily compiled backward's node map empty ({"version": 2.0}): its kernels have
    # stack traces (user lines) but no nodes; every forward C++ call site has nodes
    assert sites["f"] and all(k.nodes for k in sites["f"]) and not any(k.nodes for k in sites["b"])
    assert all(k.lines for k in sites["f"] + sites["b"])

    profile = load_kineto(cpu_recording / "trace.json")  # the log is found beside the trace
    assert profile.meta["compiled"]["provenance_logs"] == [str(log)]
    ops = profile.records.ops
    calls = [i for i, op in enumerate(ops) if op.kind == "compiled"]
    by_graph = {g: [i for i in calls if ops[i].graph == g] for g in ("0/0 forward", "0/0 backward")}
    # one call per C++ call site of each graph per step, 2 steps: every call is tied to its graph
    assert len(by_graph["0/0 forward"]) == 2 * len(sites["f"]) and len(by_graph["0/0 backward"]) == 2 * len(sites["b"])
    assert len(calls) == len(by_graph["0/0 forward"]) + len(by_graph["0/0 backward"])

    def fused_of(i):
        return _fused_of(ops, i)

    # Forward: every call has its call site's nodes, in order, as fused ops (denominator: the forward calls)
    order = {}
    for i in by_graph["0/0 forward"]:
        call = ops[i]
        nth = order[call.name] = order.get(call.name, -1) + 1
        named = sorted((k for k in sites["f"] if k.kernel == call.name), key=lambda k: k.handle)
        site = named[nth % len(named)]
        fused = fused_of(i)
        assert [(f.name, f.overload) for f in fused] == [tuple(n.op.rsplit(".", 1)) for n in site.nodes if n.op]
        assert all(f.start == f.end == call.start and f.graph == call.graph for f in fused)
        assert call.callsite == site.lines and call.callsite[0].startswith("compiled_recording.py:")
    forward_time = sum(ops[i].end - ops[i].start for i in by_graph["0/0 forward"])
    tied_time = sum(ops[i].end - ops[i].start for i in by_graph["0/0 forward"] if fused_of(i))
    assert tied_time == forward_time > 0  # 100% of the forward Inductor kernel time is tied to fused ops
    assert profile.meta["compiled"]["kernel_calls_with_fused_ops"] == len(by_graph["0/0 forward"])
    # Backward: no nodes in the log -> no fused ops, but the user lines of the kernel stacks
    assert not any(fused_of(i) for i in by_graph["0/0 backward"])
    assert all(ops[i].callsite[0].startswith("compiled_recording.py:") for i in by_graph["0/0 backward"])

    # The fused nodes carry the shapes the formulas need: GELU's x * 0.5 on the 32 x 256 fc1 output
    gelu = next(i for i in by_graph["0/0 forward"] if ops[i].name == "cpp_fused_gelu_1")
    halves = [f for f in fused_of(gelu) if f.name == "aten::mul" and 0.5 in f.inputs]
    assert len(halves) == 1 and halves[0].inputs[0].shape == (32, 256)
    assert evaluate(halves[0]).flops == 32 * 256  # one multiply per element


@pytest.mark.e2e
def test_a_backward_lowered_with_its_forward_has_its_fused_ops_too(cpu_recording_backward_with_forward):
    """Lowered with the forward, the backward's node map is logged; the log's entry for it then also
    restates the forward's call sites (handles 1-9): only those of its own wrapper are the backward's."""
    (log,) = (cpu_recording_backward_with_forward / "torch_trace").glob("dedicated_log_torch_trace_*.log")
    forward, backward = read_provenance(log)
    assert (forward.aot_id, backward.aot_id) == ("0_forward", "0_backward")
    # forward: 5 C++ + 4 addmm call sites, handles 1-9; backward: 5 C++ + 8 mm call sites, handles 10-22
    assert [k.handle for k in forward.kernels] == list(range(1, 10))
    assert [k.handle for k in backward.kernels] == list(range(10, 23))
    assert all(k.nodes for k in forward.kernels + backward.kernels)
    # two GELU backward sites (one per block), each fusing the 12 nodes of gelu_backward + fc1's bias-grad sum
    gelu_backward = [k for k in backward.kernels if k.kernel == "cpp_fused_gelu_gelu_backward_sum_1"]
    assert [(k.handle, len(k.nodes)) for k in gelu_backward] == [(12, 12), (18, 12)]

    profile = load_kineto(cpu_recording_backward_with_forward / "trace.json")
    ops = profile.records.ops
    calls = [i for i, op in enumerate(ops) if op.kind == "compiled"]
    # denominator: 20 kernel calls = 2 steps x (5 forward + 5 backward C++ call sites), all tied
    assert len(calls) == 20 and profile.meta["compiled"]["kernel_calls_with_fused_ops"] == 20
    sites = {"0/0 forward": forward, "0/0 backward": backward}
    for i in calls:
        # each call fuses the nodes of one of its kernel's call sites in that graph (getitem & co. are no op)
        site_nodes = {
            tuple(n.op for n in k.nodes if n.op) for k in sites[ops[i].graph].kernels if k.kernel == ops[i].name
        }
        assert tuple(f"{f.name}.{f.overload}" for f in _fused_of(ops, i)) in site_nodes
    kernel_time = sum(ops[i].end - ops[i].start for i in calls)
    tied_time = sum(ops[i].end - ops[i].start for i in calls if _fused_of(ops, i))
    print(f"Inductor kernel time tied to fused ops: {tied_time} of {kernel_time} ns (20 of 20 calls)")
    assert tied_time == kernel_time > 0  # 100% of the Inductor kernel time, both graphs
