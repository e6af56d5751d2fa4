"""Every backward op of real training steps is tied to the right forward op (issue 2 acceptance)."""

import re

import pytest
import torch
import torch.nn as nn

import pyprof_live

from .formula_models import TRAINING_STEPS


def _mha_step():
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(16, 4, batch_first=True)
    opt = torch.optim.AdamW(mha.parameters())
    x = torch.randn(2, 5, 16)

    def step():
        out, _ = mha(x, x, x)
        out.pow(2).mean().backward()
        opt.step()
        opt.zero_grad()

    return step


STEPS = dict(TRAINING_STEPS, multihead_attention=_mha_step)


def _normalized(name: str) -> str:
    """'aten::_log_softmax' / 'LogSoftmaxBackward0' / 'NllLossBackward0' -> 'logsoftmax' / 'nllloss'."""
    name = name.rpartition("::")[2]
    name = re.sub(r"Backward\d*$", "", name)
    name = name.replace("_", "").lower()
    return re.sub(r"forward$", "", name)


def _right_forward_op(node: str, fwd_name: str) -> bool:
    if node == "torch::autograd::CopySlices":
        return fwd_name.endswith("_")  # the in-place op on a view that autograd wrapped
    return _normalized(node) == _normalized(fwd_name)


@pytest.mark.e2e
@pytest.mark.parametrize("model", sorted(STEPS))
def test_every_backward_op_is_tied_to_its_forward_op(model):
    step = STEPS[model]()
    step()  # warm-up outside the profile: optimizer state, lazy init
    with pyprof_live.profile() as p:
        step()
    p.correlation
    ops = p.records.ops
    bwd = [op for op in ops if op.dir == "bwd"]
    accumulate = [op for op in bwd if "AccumulateGrad" in op.node]
    tied = [op for op in bwd if op not in accumulate]
    assert tied, "no backward op recorded"
    unmatched = [(op.name, op.node) for op in tied if op.fwd < 0]
    assert unmatched == []
    wrong = sorted({(op.node, ops[op.fwd].name) for op in tied if not _right_forward_op(op.node, ops[op.fwd].name)})
    assert wrong == []
    # AccumulateGrad is attributed to a parameter of the model, never to a forward op.
    assert accumulate and all(op.param and op.fwd < 0 for op in accumulate)
    # Every op inside optimizer.step() is opt, and only those (each step here runs AdamW).
    steps = [r for r in p.records.ranges if r.name.startswith("Optimizer.step#")]
    inside = [any(r.start <= op.start and op.end <= r.end for r in steps) for op in ops if op.kind == "op"]
    assert steps and any(inside)
    assert [op.dir == "opt" for op in ops if op.kind == "op"] == inside
