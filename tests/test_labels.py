"""The dir label of ops outside forward and backward: the optimizer's (zero_grad included) are opt;
input creation, gradient clipping, metrics and .item() are other; a loss computed on the model's
output outside any module is still fwd."""

import torch
import torch.nn.functional as F
from torch import nn

import pyprof_live


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))


def _host_ops(p):
    return [op for op in p.records.ops if op.kind == "op" and op.dir != "bwd"]


def test_zero_grad_without_set_to_none_is_opt():
    model = _model()
    optimizer = torch.optim.AdamW(model.parameters())
    F.cross_entropy(model(torch.randn(2, 4)), torch.tensor([0, 2])).backward()
    with pyprof_live.profile() as p:
        optimizer.zero_grad(set_to_none=False)
    zeroed = [op for op in p.records.ops if op.name == "aten::zero_"]
    # one zero_ per parameter: 2 Linear layers x (weight, bias) = 4
    assert len(zeroed) == 4 and {op.dir for op in zeroed} == {"opt"}


def test_a_training_step_labels_every_host_op_by_where_it_ran():
    model = _model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pyprof_live.profile() as p:
        x, y = torch.randn(2, 4), torch.tensor([0, 2])  # input creation: other
        logits = model(x)  # inside modules: fwd
        loss = F.cross_entropy(logits, y)  # outside modules, but it builds the autograd graph: fwd
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # between backward and the step: other
        optimizer.step()  # opt
        with torch.no_grad():
            accuracy = (logits.argmax(-1) == y).float().mean()  # a metric: other
        accuracy.item()  # other
    ops = _host_ops(p)
    by_phase = {}
    for op in ops:
        by_phase.setdefault(op.dir, []).append(op.name)
    assert by_phase["other"][:2] == ["aten::randn", "aten::lift_fresh"]  # torch.randn, torch.tensor
    assert by_phase["fwd"] == [
        *("aten::t", "aten::addmm", "aten::relu", "aten::detach", "aten::t", "aten::addmm"),
        # the loss, outside any module; the detach is the dispatch mode's, of log_softmax's saved output
        *("aten::_log_softmax", "aten::detach", "aten::nll_loss_forward"),
    ]
    # clip_grad_norm_'s norms, clamp and scaling; the metric's argmax, eq, mean; .item()
    for name in ("aten::clamp", "aten::argmax", "aten::eq", "aten::mean", "aten::_local_scalar_dense"):
        assert name in by_phase["other"], name
    assert all(name not in by_phase["fwd"] for name in ("aten::clamp", "aten::argmax", "aten::_local_scalar_dense"))
    assert by_phase["opt"] and "aten::add_" in by_phase["opt"]  # SGD: p.add_(grad, alpha=-lr)
    # No op between backward and the optimizer is labelled fwd.
    backward_end = max(op.end for op in p.records.ops if op.dir == "bwd")
    step_start = min(op.start for op in ops if op.dir == "opt")
    between = [op for op in ops if backward_end < op.start < step_start]
    assert between and {op.dir for op in between} == {"other"}


def test_ops_in_a_module_under_no_grad_are_forward():
    """Inference inside a module is forward, whether or not autograd records it."""
    model = _model()
    with pyprof_live.profile() as p, torch.no_grad():
        model(torch.ones(1, 4))
    assert {op.dir for op in _host_ops(p) if op.module} == {"fwd"}
    assert [op.dir for op in _host_ops(p) if not op.module] == ["other"]  # torch.ones
