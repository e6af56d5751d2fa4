"""Ops run by an FX graph's generated code get the module and lines of the node each line runs (fx_graphs.py).

A torch.export'd program and a model compiled with ``backend="aot_eager"`` run their ops from a GraphModule's
``forward``: before, every op had the GraphModule's module ("GraphModule", "GPT.GraphModule") and the line that
called the graph. Each is compared op by op with the same model run eagerly.
"""

from __future__ import annotations

import warnings

import pytest
import torch

import pyprof_live
from tests.compiled_models import GPT, GPT_CONFIG, gpt_batch, needs_compiled_runs

pytestmark = pytest.mark.e2e

#: GPT_CONFIG's 2 layers, each an attention block (qkv, proj) and an MLP block (fc1, fc2), then the head: the
#: modules of its 9 linear layers, in the order they run.
LINEARS = [
    f"blocks.{layer}.{block}.{name}"
    for layer in range(2)
    for block, name in ((0, "qkv"), (0, "proj"), (1, "fc1"), (1, "fc2"))
] + ["head"]


def _ops(run, tokens, targets) -> list:
    """(name, dir, module path below its root, innermost call site) of each op of one forward and backward."""
    with pyprof_live.profile() as p:
        run(tokens, targets).backward()
    p.correlation  # backward ops take their forward op's module and lines
    return [
        (op.name, op.dir, op.module.partition(".")[2], op.callsite[:1])
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
    with pyprof_live.profile() as p:
        program(tokens, targets).backward()
    p.correlation
    exported = [
        (op.name, op.dir, op.module.partition(".")[2], op.callsite[:1])
        for op in p.records.ops
        if op.kind == "op" and op.dir in ("fwd", "bwd")
    ]
    # The same ops in the same order, each in the same module (below the root: "GPT" eagerly, the GraphModule
    # exported) and at the same innermost line, forward and backward (backward ops take their forward op's).
    assert exported == eager
    linears = [module for name, direction, module, _ in exported if name == "aten::addmm" and direction == "fwd"]
    assert linears == LINEARS
    roots = {op.module.partition(".")[0] for op in p.records.ops if op.kind == "op" and op.module}
    assert roots == {"GraphModule"}


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


def test_a_symbolic_traced_models_generated_lines_are_never_shown():
    # symbolic_trace keeps no stack traces: the generated forward's lines stand for nothing a user wrote.
    traced = torch.fx.symbolic_trace(torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU()))
    with pyprof_live.profile() as p:
        traced(torch.ones(2, 4))
    sites = [site for op in p.records.ops for site in op.callsite]
    assert sites and not [site for site in sites if "eval_with_key" in site]
    # symbolic_trace names its GraphModule's class after the traced module's
    assert [op.module for op in p.records.ops if op.name == "aten::addmm"] == ["Sequential.0"]
