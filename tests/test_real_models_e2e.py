"""The seven real models of benchmarks/real_models.py under profile(): numerics bit-identical with and
without profiling, and the labels of a real training step. (Their cost is measured by the benchmark.)"""

import pytest
import torch

import pyprof_live
from tests.real_models import BUILDERS, NEEDS_TRANSFORMERS, TRANSFORMERS_MISSING, build

pytestmark = pytest.mark.e2e


def _needs(name):
    missing = name in NEEDS_TRANSFORMERS and TRANSFORMERS_MISSING
    return pytest.param(name, marks=pytest.mark.skipif(bool(missing), reason=missing or ""))


@pytest.mark.parametrize("name", [_needs(n) for n in BUILDERS])
def test_profiling_leaves_every_number_bit_identical(name):
    plain, profiled = build(name), build(name)
    torch.manual_seed(1)  # the same dropout masks in both runs
    plain_loss = plain()
    torch.manual_seed(1)
    with pyprof_live.profile() as p:
        profiled_loss = profiled()
    assert torch.equal(plain_loss, profiled_loss)
    assert all(torch.equal(a, b) for a, b in zip(plain.state(), profiled.state(), strict=True))
    assert {op.dir for op in p.records.ops} <= {"fwd", "bwd", "opt", "other"}
    # AdamW's math, and only it, is opt: one lerp_ per parameter.
    lerps = [op for op in p.records.ops if op.name == "aten::lerp_"]
    assert len(lerps) == len(list(profiled.model.parameters())) and {op.dir for op in lerps} == {"opt"}


@pytest.mark.skipif(bool(TRANSFORMERS_MISSING), reason=TRANSFORMERS_MISSING or "")
def test_gpt2_zero_grad_and_gradient_clipping_are_not_forward():
    step = build("gpt2")
    step()
    with pyprof_live.profile() as p:
        loss = step.loss_fn(step.model(*step.args, **step.kwargs))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(step.model.parameters(), 1.0)
        step.optimizer.step()
        step.optimizer.zero_grad(set_to_none=False)
    zeroed = [op for op in p.records.ops if op.name == "aten::zero_"]
    # GPT-2 with 2 layers: wte, wpe, 12 tensors per block x 2, ln_f weight and bias = 28 parameters
    assert len(zeroed) == 28 and {op.dir for op in zeroed} == {"opt"}
    norms = [op for op in p.records.ops if op.name in ("aten::_foreach_norm", "aten::linalg_vector_norm")]
    assert norms and {op.dir for op in norms} == {"other"}
