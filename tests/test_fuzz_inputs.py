"""The fuzz suite, CI-sized (marker ``fuzz``; about 3 minutes): real recordings with every field the
importers read given wrong values, damaged saved profiles, and hypothesis-generated traces. Each case
must end in a clean one-line error naming the file, or load and then survive every view, both
exports, save -> load and diff (tests/fuzz_cases.py). The long run with every value in every field
of every recording is benchmarks/fuzz_inputs.py.

Here each field gets two of the wrong values (rotating through the list, so every value is used
across fields), once in the first event or row that holds it and once in all of them.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .fuzz_cases import (
    KINETO_CATEGORIES,
    Case,
    kineto_cases,
    run_case,
    saved_cases,
    saved_document,
    sqlite_cases,
    trace_slice,
)

pytestmark = pytest.mark.fuzz

KINETO_SEEDS = (
    "kineto/hta_alexnet_a100_benchmark_trace.json.gz",  # HTA: External id == correlation, memcpy, cuda_sync
    "kineto/hta_nccl_data_a100_ws2_rank0.json.gz",  # collectives (record_param_comms), memset, backward nodes
    "kineto/kineto_tbplugin_resnet50_v100dgxs_oldformat.pt.trace.json.gz",  # the 2021 dialect
    "kineto/tracelens_owlv2_h100_infer.json.gz",  # shapes, python_function frames, [memory] instants
    "kineto_graphs/tracelens_vllm_piecewise_replay_mi300x.json.gz",  # HIP, CUDA-graph replays
)
SQLITE_SEEDS = (
    "nsys/nsys2022.1_pytorch_emitnvtx_dlprof_rtx2070s.sqlite",  # emit_nvtx and PyProf markers
    "nsys/nvprof_pytorch_pyprof_lm_v100_17ed9e2.sql",  # the nvprof dialect
    "nsys/nsys2025.5_vecadd_rtx3060_schema3.24.sqlite",  # the newest schema
)
VALUES_PER_FIELD = 2
EVENTS = 60  # read events per trace slice


def _failures(cases, folder) -> list[str]:
    outcomes = [(case.name, run_case(case, folder)) for case in cases]
    assert outcomes, "no cases were made"
    return [
        f"{outcome.kind}: {name}: {outcome.detail}"
        for name, outcome in outcomes
        if outcome.kind not in ("clean", "loaded")
    ]


@pytest.mark.parametrize("seed", KINETO_SEEDS)
def test_every_kineto_field_given_wrong_values(shared_data, tmp_path, seed):
    trace = trace_slice(shared_data / seed, EVENTS)
    failures = _failures(kineto_cases(trace, seed, per_field=VALUES_PER_FIELD), tmp_path / "case")
    assert not failures, f"{len(failures)} failed:\n" + "\n".join(failures[:20])


@pytest.mark.parametrize("seed", SQLITE_SEEDS)
def test_every_export_column_given_wrong_values(shared_data, tmp_path, seed):
    failures = _failures(sqlite_cases(shared_data / seed, seed, per_field=VALUES_PER_FIELD), tmp_path / "case")
    assert not failures, f"{len(failures)} failed:\n" + "\n".join(failures[:20])


@pytest.mark.parametrize("seed", (KINETO_SEEDS[1], SQLITE_SEEDS[0]))
def test_every_saved_field_given_wrong_values(shared_data, tmp_path, seed):
    from pyprof_live.importers import load

    source = tmp_path / "seed"
    source.mkdir()
    if seed.endswith(".gz"):
        trace = tmp_path / "seed" / "slice.json"
        trace.write_text(json.dumps(trace_slice(shared_data / seed, EVENTS)))
        profile = load(trace)
    else:
        profile = load(shared_data / seed)
    profile.save(source / "seed.pplive")
    cases = saved_cases(saved_document(source / "seed.pplive"), seed, per_field=VALUES_PER_FIELD)
    failures = _failures(cases, tmp_path / "case")
    assert not failures, f"{len(failures)} failed:\n" + "\n".join(failures[:20])


# ------------------------------------------------------------------------------------------------
# hypothesis: traces no recording holds

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=6,
)


def _mostly(good):
    """A field that is usually right, sometimes any JSON value at all."""
    return st.one_of(good, good, good, _json)


_ids = _mostly(st.integers(-1, 20))
_names = _mostly(
    st.sampled_from(["aten::mm", "aten::addmm", "aten::lstm", "aten::adaptive_avg_pool2d", "ProfilerStep#1", "k"])
)
_shapes = _mostly(st.lists(_mostly(st.lists(st.integers(0, 2**62), max_size=4)), max_size=3))
_args = st.fixed_dictionaries(
    {},
    optional={
        "External id": _ids,
        "external id": _ids,
        "correlation": _ids,
        "Sequence number": _ids,
        "Fwd thread id": _ids,
        "Input Dims": _shapes,
        "Input type": _mostly(
            st.lists(st.sampled_from(["float", "c10::Half", "Scalar", "TensorList", ""]), max_size=3)
        ),
        "Concrete Inputs": _mostly(st.lists(st.sampled_from(["", "1", "[10**12, 4]", "1e308", "True"]), max_size=3)),
        "device": _ids,
        "stream": _ids,
        "bytes": _mostly(st.integers(0, 2**40)),
        "grid": _mostly(st.lists(st.integers(0, 2**31), min_size=3, max_size=3)),
        "Python id": _ids,
        "Python parent id": _ids,
        "Call stack": _mostly(st.sampled_from(["a.py(1): f;b.py(2): g", ""])),
        "Total Allocated": _mostly(st.integers(0, 2**40)),
    },
)
_events = st.fixed_dictionaries(
    {
        "ph": st.just("X"),
        "cat": _mostly(st.sampled_from(KINETO_CATEGORIES)),
        "name": _names,
        "ts": _mostly(st.integers(0, 10**6) | st.floats(0, 1e6)),
        "dur": _mostly(st.integers(-5, 1000)),
        "pid": _ids,
        "tid": _ids,
        "args": _mostly(_args),
    }
)
_devices = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "id": _ids,
            "name": _mostly(st.sampled_from(["NVIDIA H100 80GB HBM3", "Mystery"])),
            "computeMajor": _ids,
            "computeMinor": _ids,
            "numSms": _ids,
            "totalGlobalMem": _ids,
        },
    ),
    max_size=2,
)
_traces = st.fixed_dictionaries(
    {"traceEvents": st.lists(_events, max_size=10)}, optional={"deviceProperties": _devices}
)


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(_traces)
def test_generated_traces_load_cleanly_or_work_everywhere(tmp_path_factory, trace):
    def write(folder):
        path = folder / "generated.json"
        path.write_bytes(json.dumps(trace).encode("utf-8", "surrogatepass"))
        return path

    outcome = run_case(Case("generated", write), tmp_path_factory.mktemp("case"))
    assert outcome.kind in ("clean", "loaded"), f"{outcome.kind}: {outcome.detail}\n{json.dumps(trace)[:2000]}"
