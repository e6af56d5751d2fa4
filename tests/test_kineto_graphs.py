"""CUDA/HIP graph replays in real Kineto traces (MI300X) tied to the ops recorded at capture.

Counts were taken by hand with python + json on the raw files (``raw_counts`` below redoes it in the
test, independently of the importer): the kernels a ``hipGraphLaunch`` replayed are those whose
``args.correlation`` is the launch's; the capture's launch calls are the ``*LaunchKernel`` calls between
``hipStreamBeginCapture`` and ``hipStreamEndCapture`` on the capturing thread, each naming its kernel
in ``args.kernel``. Neither trace has graph node ids (ROCm): the tie is made by kernel-name order.

The independent check of each tie: Inductor wraps each Triton launch in a ``cpu_op`` named after the
kernel, so a replayed Triton kernel tied right has a capture-time op of its own name.
"""

import gzip
import json
from collections import Counter

import pytest

import pyprof_live
from pyprof_live.importers.kineto import load_kineto
from pyprof_live.records import NO_LINK

FLUX = "kineto_graphs/tracelens_xdit_flux1_capture_plus_replay_mi300x.json.gz"
VLLM_REPLAY = "kineto_graphs/tracelens_vllm_piecewise_replay_mi300x.json.gz"
VLLM_CAPTURE = "kineto_graphs/tracelens_vllm_piecewise_capture_mi300x.pt.trace.json.gz"


def raw_counts(path):
    """(kernels per graph launch, launch calls per capture) from the raw JSON."""
    with gzip.open(path) as f:
        events = json.load(f)["traceEvents"]
    runtime = sorted((e for e in events if e.get("cat") == "cuda_runtime"), key=lambda e: e["ts"])
    kernels = [e for e in events if e.get("cat") == "kernel"]
    launches = [e["args"]["correlation"] for e in runtime if e["name"] == "hipGraphLaunch"]
    per_launch = [sum(1 for k in kernels if k["args"]["correlation"] == c) for c in launches]
    captures, current = [], None
    for e in runtime:
        if e["name"] == "hipStreamBeginCapture":
            current = []
        elif e["name"] == "hipStreamEndCapture":
            captures.append(len(current))
            current = None
        elif current is not None and "LaunchKernel" in e["name"]:
            current.append(e)
    return per_launch, captures


def replayed(profile):
    profile.correlation
    return [k for k in profile.records.kernels if k.graph_id]


def check_triton_ties(profile, kernels):
    ops = profile.records.ops
    triton = [k for k in kernels if k.name.startswith("triton_")]
    assert triton and all(ops[k.op].name == k.name for k in triton)
    return len(triton)


@pytest.fixture(scope="module")
def flux(shared_data):
    return load_kineto(shared_data / FLUX)


def test_flux_capture_and_replay_in_one_trace(shared_data, flux):
    per_launch, captures = raw_counts(shared_data / FLUX)
    assert per_launch == [993] and captures == [994]  # 504 hipExtModuleLaunchKernel + 490 hipModuleLaunchKernel
    kernels = replayed(flux)
    # 993 replayed kernels, all tied (denominator: the 993 kernels of the one hipGraphLaunch); the 994th
    # captured launch (a Cijk_ GEMM, last in the capture) has no replayed kernel and is left alone
    assert len(kernels) == 993 and {k.graph_id for k in kernels} == {1}
    assert flux.correlation.kernels_replayed == flux.correlation.kernels_replayed_with_capture_op == 993
    assert all(k.op != NO_LINK and k.launch != NO_LINK for k in kernels)
    assert flux.records.apis[kernels[0].launch].name == "hipGraphLaunch"  # the launch stays the graph launch
    assert check_triton_ties(flux, kernels) == 433  # 433 Triton kernels, each under its own launch op
    ops = flux.records.ops
    triton = [k for k in kernels if k.name.startswith("triton_")]
    # ... an Inductor kernel call of the compiled graph (its launch op is inside "Torch-Compiled Region: 0/0")
    assert {(ops[k.op].kind, ops[k.op].graph) for k in triton} == {("compiled", "0/0 inference")}
    names = [ops[k.op].name for k in kernels]
    assert names.count("aten::mm") == 427 and names.count("aiter::fmha_v3_fwd") == 57
    assert {ops[k.op].module for k in kernels} == {"OptimizedModule_0.xFuserFlux1Transformer2DWrapper_0"}
    assert flux.meta["graph_replays"] == {
        "launches": 1,
        "kernels": 993,
        "kernels_tied_to_capture": 993,
        "captures": 1,
        "method": "kernel names of the capture's launch calls",
    }
    assert "993 of 993 kernels replayed by 1 graph launch(es)" in flux.table(limit=1)


def test_vllm_replay_file_tied_to_its_capture_file(shared_data, tmp_path):
    per_launch, _ = raw_counts(shared_data / VLLM_REPLAY)
    _, captures = raw_counts(shared_data / VLLM_CAPTURE)
    # 25 piecewise graphs of one forward: 4 + 23 x 15 + 12 = 361 kernels, captured as 25 captures of the same sizes
    assert per_launch == captures == [4] + [15] * 23 + [12] and sum(per_launch) == 361
    profile = load_kineto(shared_data / VLLM_REPLAY, capture=shared_data / VLLM_CAPTURE)
    kernels = replayed(profile)
    assert len(kernels) == 361 and profile.correlation.kernels_replayed_with_capture_op == 361  # 361/361
    assert sorted({k.graph_id for k in kernels}) == list(range(1, 26))  # the n-th launch <- the n-th capture
    assert check_triton_ties(profile, kernels) == 48
    ops = profile.records.ops
    # vLLM runs its piecewise Inductor graphs without a Dynamo region: each is named by the FX cache key of
    # its "## Call CompiledFxGraph <key> ##" range in the capture trace (25 ranges, 3 keys: first piece,
    # the 23 alike layers, last piece); all 48 Triton launch ops are Inductor kernel calls of one of them
    graphs = Counter(ops[k.op].graph.split()[0][:8] + " " + ops[k.op].graph.split()[1] for k in kernels)
    assert graphs == {"fyz7apwg inference": 4, "fb3en3pm inference": 23 * 15, "fvcpdjt7 inference": 12}
    assert profile.meta["compiled"] == {"kernel_calls": 48, "kernel_calls_in_compiled_graph": 48, "provenance_logs": []}
    profile.save(tmp_path / "vllm.pyprof")  # the ties are kept: capture_correlation is saved, links recomputed
    assert pyprof_live.load(tmp_path / "vllm.pyprof").correlation.kernels_replayed_with_capture_op == 361
    layers = [ops[k.op].name for k in kernels if k.graph_id not in (1, 25)]
    assert layers.count("vllm::moe_forward") == 3 * 23 and layers.count("aten::addmm") == 3 * 23
    assert profile.meta["capture_path"].endswith("capture_mi300x.pt.trace.json.gz")
    # the capture trace's own kernels (warm-up runs) are not added; only its launch calls and their ops
    assert len(profile.records.kernels) == 413
    # deviceProperties: name "", computeMajor 9, computeMinor 4, numSms 304, totalGlobalMem 206141652992
    assert profile.peak(2).name == "MI300X" and "speed of light on device 2 (): MI300X" in profile.table(limit=1)


def test_replays_without_their_capture_are_rows_per_graph(shared_data):
    profile = load_kineto(shared_data / VLLM_REPLAY)
    kernels = replayed(profile)
    assert len(kernels) == 361 and profile.correlation.kernels_replayed_with_capture_op == 0
    # no graph ids in a ROCm trace: graphs numbered by distinct kernel sequence, in launch order
    sizes = {}
    for k in kernels:
        sizes[k.graph_id] = sizes.get(k.graph_id, 0) + 1
    assert sizes == {1: 4, 2: 23 * 15, 3: 12}
    text = profile.table(columns="op,kernel")
    assert text.count("replay of graph 2") == 345 and "0 of 361 kernels replayed" in text
    assert "shown as 'replay of graph N' (graph 1: 4 kernels" in text


def test_cli_capture_option(shared_data, capsys):
    from pyprof_live.cli import main

    assert (
        main(
            [str(shared_data / VLLM_REPLAY), "--capture", str(shared_data / VLLM_CAPTURE), "--limit", "1", "-w", "300"]
        )
        == 0
    )
    assert "361 of 361 kernels replayed by 25 graph launch(es)" in capsys.readouterr().out
    nsys = shared_data / "nsys" / "nsys2025.5_vecadd_rtx3060_schema3.24.sqlite"
    with pytest.raises(SystemExit) as exit_:
        main([str(nsys), "--capture", str(shared_data / VLLM_CAPTURE)])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == (
        f"pyprof-live: error: {nsys}: a graph capture trace or a provenance log goes with a PyTorch "
        "profiler trace, not this file\n"
    )
