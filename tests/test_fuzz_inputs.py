"""The fuzz suite, CI-sized (marker ``fuzz``; about 3 minutes): real recordings with every field the
importers read given wrong values, damaged saved profiles, and hypothesis-generated traces. Each case
must end in a clean one-line error naming the file, or load and then survive every view, both
exports, save -> load and diff (tests/fuzz_cases.py). The long run with every value in every field
of every recording is benchmarks/fuzz_inputs.py.

Here each Kineto and saved field gets two of the wrong values (rotating through the list, so every
value is used across fields), once in the first event or row that holds it and once in all of them;
each SQLite column one (a case there costs about 0.2 s of CPU: the nvprof export alone has 159 read
columns; with two values the slice took 4 min of CPU, over its 3-minute budget). Every one of the
10 SQL values still lands on 11 or more columns of each export.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings

from .fuzz_cases import (
    Case,
    generated_traces,
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
VALUES_PER_COLUMN = 1  # SQLite
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
    failures = _failures(sqlite_cases(shared_data / seed, seed, per_field=VALUES_PER_COLUMN), tmp_path / "case")
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


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(generated_traces())
def test_generated_traces_load_cleanly_or_work_everywhere(tmp_path_factory, trace):
    def write(folder):
        path = folder / "generated.json"
        path.write_bytes(json.dumps(trace).encode("utf-8", "surrogatepass"))
        return path

    outcome = run_case(Case("generated", write), tmp_path_factory.mktemp("case"))
    assert outcome.kind in ("clean", "loaded"), f"{outcome.kind}: {outcome.detail}\n{json.dumps(trace)[:2000]}"
