"""Whole training steps: every op live capture records has a formula that produces numbers, and the
numbers do not depend on how the source recorded the arguments (live capture passes only the
arguments given, no strides; Kineto-style records carry every argument with defaults filled in)."""

import warnings
from collections import Counter

import pytest

import pyprof_live
from pyprof_live.formulas import evaluate
from tests.formula_models import TRAINING_STEPS
from tests.formula_recorder import record


@pytest.mark.e2e
@pytest.mark.parametrize("model", sorted(TRAINING_STEPS))
def test_every_op_of_a_training_step_is_computed_the_same_from_live_and_full_records(model):
    step = TRAINING_STEPS[model]()
    step()  # the first step creates the optimizer state
    full_records, _ = record(step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # CPU-only run: no GPU kernels, a warning says so
        with pyprof_live.profile(gpu="off") as profile:
            step()
    live = [op for op in profile.records.ops if op.kind == "op"]
    costs = {op.name: evaluate(op) for op in live}
    assert not {name: cost.reason for name, cost in costs.items() if None in cost[:2]}
    flops_live = Counter((op.name, evaluate(op).flops) for op in live)
    flops_full = Counter((op.name, evaluate(op).flops) for op in full_records if not op.name.startswith("profiler::"))
    assert flops_live == flops_full
    assert sum(count * flops for (_, flops), count in flops_live.items()) > 0
