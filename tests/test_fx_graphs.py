"""Ops run by an FX graph's generated code get the module and lines of the node each line runs (fx_graphs.py).

A torch.export'd program and a model compiled with ``backend="aot_eager"`` run their ops from a GraphModule's
``forward``: before, every op had the GraphModule's module ("GraphModule", "GPT.GraphModule") and the line that
called the graph. Each is compared op by op with the same model run eagerly.
"""

from __future__ import annotations

import inspect
import warnings

import pytest
import torch

import pyprof_live
from pyprof_live.capture import callsite, fx_graphs
from tests.compiled_models import GPT, GPT_CONFIG, gpt_batch, needs_compiled_runs

pytestmark = pytest.mark.e2e

#: GPT_CONFIG's 2 layers, each an attention block (qkv, proj) and an MLP block (fc1, fc2), then the head: the
#: modules of its 9 linear layers, in the order they run.
LINEARS = [
    "GPT." + path
    for path in [
        f"blocks.{layer}.{block}.{name}"
        for layer in range(2)
        for block, name in ((0, "qkv"), (0, "proj"), (1, "fc1"), (1, "fc2"))
    ]
    + ["head"]
]


def _ops(run, tokens, targets) -> list:
    """(name, dir, module path, innermost call site) of each op of one forward and backward."""
    with pyprof_live.profile() as p:
        run(tokens, targets).backward()
    p.correlation  # backward ops take their forward op's module and lines
    return [
        (op.name, op.dir, op.module, op.callsite[:1])
        for op in p.records.ops
        if op.kind == "op" and op.dir in ("fwd", "bwd")
    ]


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return GPT(**GPT_CONFIG)


def _eager(model, tokens, targets) -> list:
    model.zero_grad(set_to_none=True)
    return _ops(model, tokens, targets)


def test_an_exported_programs_ops_have_the_modules_and_lines_of_the_eager_model(model):
    tokens, targets = gpt_batch(1)
    eager = _eager(model, tokens, targets)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.export.export(model, (tokens, targets)).module()
    model.zero_grad(set_to_none=True)  # the program shares the model's parameters: first gradients again
    exported = _ops(program, tokens, targets)
    # The same ops in the same order, each in the same module (the exported program named as the model it was
    # traced from) and at the same innermost line, forward and backward (backward ops take their forward op's).
    assert exported == eager
    linears = [module for name, direction, module, _ in exported if name == "aten::addmm" and direction == "fwd"]
    assert linears == LINEARS


@needs_compiled_runs
def test_an_aot_eager_graphs_forward_ops_have_the_models_modules_and_lines(model):
    tokens, targets = gpt_batch(1)
    eager = _eager(model, tokens, targets)
    compiled = torch.compile(model, backend="aot_eager")
    compiled(tokens, targets)  # compiled before the profile: only its run is recorded
    model.zero_grad(set_to_none=True)
    ops = _ops(compiled, tokens, targets)
    forward = [op for op in ops if op[1] == "fwd"]
    # AOTAutograd's forward graph runs the linear layers as addmm (2-D inputs: its decomposition of linear), in the
    # modules and at the lines the eager model runs them.
    linears = [op for op in forward if op[0] == "aten::addmm"]
    assert [module for _, _, module, _ in linears] == LINEARS
    eager_sites = [site for name, direction, _, site in eager if name == "aten::addmm" and direction == "fwd"]
    assert [site for *_, site in linears] == eager_sites
    assert not [op for op in forward if "GraphModule" in op[2]]


class _Inner(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


class _Outer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = _Inner()

    def forward(self, x):
        return torch.relu(self.inner(x))  # relu: a node of the traced graph; inner: a leaf module it calls


class _KeepInner(torch.fx.Tracer):
    record_stack_traces = True

    def is_leaf_module(self, module, qualified_name):
        return isinstance(module, _Inner) or super().is_leaf_module(module, qualified_name)


def _traced():
    outer = _Outer()
    return torch.fx.GraphModule(outer, _KeepInner().trace(outer))


def test_a_traced_graphs_ops_have_their_nodes_lines_and_a_leaf_modules_ops_the_hooks_modules():
    torch.manual_seed(0)
    traced = _traced()
    x = torch.ones(2, 4)
    with pyprof_live.profile() as p:
        traced(x)
        code = type(traced).forward.__code__
        kept_during = callsite._internal_code[id(code)]
    ops = {op.name: op for op in p.records.ops}
    relu_line = f"test_fx_graphs.py:{inspect.getsourcelines(_Outer.forward)[1] + 1}"
    # relu ran on the generated forward's line of the relu node: the line of _Outer.forward that wrote it (before:
    # the line calling the graph); it ran in no submodule: the graph's own
    assert (ops["aten::relu"].module, ops["aten::relu"].callsite[0]) == ("GraphModule", relu_line)
    # addmm ran inside the leaf module's forward: the hooks' deeper module stays (the node's is "GraphModule.inner")
    assert ops["aten::addmm"].module == "GraphModule.inner.fc"
    assert not [site for op in p.records.ops for site in op.callsite if "eval_with_key" in site]
    # The generated code was a user frame for the walk during the profile only
    assert (kept_during, callsite._internal_code[id(code)]) == (False, True)


def test_a_graph_that_cannot_be_read_runs_as_before_with_a_warning(monkeypatch):
    def unreadable(*args):
        raise RuntimeError("no such node")

    monkeypatch.setattr(fx_graphs, "_read", unreadable)
    traced = _traced()
    x = torch.ones(2, 4)
    expected = traced(x)
    with pyprof_live.profile() as p:
        out = traced(x)
    assert torch.equal(out, expected)
    assert [w for w in p.meta["warnings"] if "could not read the FX graph" in w] == [
        "could not read the FX graph of GraphModule (RuntimeError: no such node): its ops have its module and the "
        "line that called it"
    ]
    assert {op.module for op in p.records.ops if op.name == "aten::relu"} == {"GraphModule"}
