"""Extern kernel calls of static compiled graphs recorded without the op hook (capture/extern_ops.py): the same
records as through the hook, and the hook kept wherever that could not be made exact."""

from __future__ import annotations

import dataclasses
import sys
import threading
from types import SimpleNamespace

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import pyprof_live
from pyprof_live import torch_compat
from pyprof_live.capture import extern_ops
from pyprof_live.capture.context import context
from pyprof_live.capture.recorder import R_KWARGS, R_PEEK, R_TID
from tests.compiled_models import MLPBlock, needs_compiled_runs

pytestmark = [pytest.mark.e2e, needs_compiled_runs]

STEPS = 3


@pytest.fixture
def pops(monkeypatch):
    """How many times an extern call took the op hook off the mode stack."""
    count = [0]
    real = extern_ops._pop

    def counting_pop(key):
        count[0] += 1
        return real(key)

    monkeypatch.setattr(extern_ops, "_pop", counting_pop)
    return count


@pytest.fixture(scope="module")
def mlp_step():
    torch._dynamo.reset()
    torch.manual_seed(0)
    compiled, x = torch.compile(MLPBlock(32)), torch.randn(4, 32)

    def step():
        compiled(x).sum().backward()

    with pyprof_live.profile():  # compiled under a profile: its kernels have their fused ops
        step()
    return step


def _profile(step, **kwargs):
    with pyprof_live.profile(**kwargs) as p:
        for _ in range(STEPS):
            step()
            p.step()
    return p


def _without_times(p) -> list:
    """Every field of every record but its times and the profiler's own time."""
    return [
        {k: v for k, v in dataclasses.asdict(op).items() if k not in ("start", "end", "overhead")}
        for op in p.records.ops
    ]


def test_later_calls_of_a_site_record_the_same_ops_without_the_hook(mlp_step, pops, monkeypatch):
    """MLPBlock(32)'s training step has 2 extern addmm calls in its forward graph (fc1, fc2) and 4 extern mm calls
    in its backward graph (each Linear's input and weight gradients): 6 sites, each called once per step. The first
    step goes through the hook (each site's first call), steps 2 and 3 do not: 2 x 6 = 12 calls without it. With
    the new path off, every field of every record but the times is the same, ids and sequence numbers included."""
    fast = _profile(mlp_step)
    assert pops[0] == 12
    monkeypatch.setattr(extern_ops, "_AVAILABLE", False)
    hooked = _profile(mlp_step)
    assert pops[0] == 12
    names = [op.name for op in fast.records.ops if op.kind == "op" and op.graph]
    assert names.count("aten::addmm") == 2 * STEPS and names.count("aten::mm") == 4 * STEPS
    assert _without_times(fast) == _without_times(hooked)


def test_a_users_dispatch_mode_on_the_stack_keeps_the_hook(mlp_step, pops):
    """Another mode above the op hook sees each op first: the calls must dispatch to it as before."""

    class Passing(TorchDispatchMode):
        @classmethod
        def ignore_compile_internals(cls) -> bool:  # compiled code runs compiled under it, as under the profile
            return True

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with pyprof_live.profile() as p:
        with Passing():
            for _ in range(STEPS):
                mlp_step()
    assert pops[0] == 0
    names = [op.name for op in p.records.ops if op.kind == "op" and op.graph]
    assert names.count("aten::addmm") == 2 * STEPS and names.count("aten::mm") == 4 * STEPS


def test_an_exception_in_the_call_puts_the_hook_back(mlp_step):
    """The hook is off the stack while the call runs, back on it after the call raised, and nothing is recorded."""
    with pyprof_live.profile(stack_depth=0) as p:
        mlp_step()
        capture = p.session._compiled
        op = next(op for op in capture.extern_ops.values() if op is not None)
        recorder = op.recorder
        before = len(recorder.raw)
        seen = []

        def fails(*args, **kwargs):
            seen.append(torch_compat.current_dispatch_mode())
            raise ValueError("extern kernel failed")

        context.graph_call = (sys._getframe(), 0, ())  # as a compiled graph call's hook sets it
        try:
            with pytest.raises(ValueError, match="extern kernel failed"):
                op.call(fails, (), {})
        finally:
            context.graph_call = None
        assert seen == [None]
        assert torch_compat.current_dispatch_mode() is recorder
        assert torch_compat.dispatch_stack_len() == 1
        assert len(recorder.raw) == before
        mlp_step()  # still recorded, through the new path
    assert sum(op.name == "aten::addmm" for op in p.records.ops) == 2 * 2


def _recorder(raw: list, writes_first_arg: bool = False):
    return SimpleNamespace(raw=raw, op_infos=[SimpleNamespace(writes_first_arg=writes_first_arg)])


def _raw_op(**fields) -> tuple:
    """A raw op tuple of aten::mm.out(a, b, out=buf) on this thread, before any autograd node was made."""
    record = [0] * 21
    record[R_TID] = threading.get_ident()
    record[R_PEEK] = torch_compat.peek_sequence_nr()
    record[R_KWARGS] = (("out", ((4, 3), torch.float32)),)
    for index, value in fields.items():
        record[int(index[1:])] = value
    return tuple(record)


def test_a_site_learns_only_from_a_first_call_that_recorded_exactly_one_out_op():
    """0 or 2 ops recorded in the first call, an op of another thread, an op that may create an autograd node
    (no out= argument, or a node numbered during the call), or one writing its first argument: the hook stays."""
    peek = torch_compat.peek_sequence_nr()
    one = _raw_op()
    assert isinstance(extern_ops.learn(_recorder([one]), 0, peek, None, 7, []), extern_ops.ExternOp)
    assert extern_ops.learn(_recorder([]), 0, peek, None, 7, []) is None  # no op
    assert extern_ops.learn(_recorder([one, one]), 0, peek, None, 7, []) is None  # two ops
    assert extern_ops.learn(_recorder([_raw_op(**{f"r{R_TID}": -1})]), 0, peek, None, 7, []) is None
    assert extern_ops.learn(_recorder([_raw_op(**{f"r{R_KWARGS}": ()})]), 0, peek, None, 7, []) is None
    assert extern_ops.learn(_recorder([_raw_op(**{f"r{R_PEEK}": peek + 1})]), 0, peek, None, 7, []) is None
    assert extern_ops.learn(_recorder([one], writes_first_arg=True), 0, peek, None, 7, []) is None
    assert extern_ops.learn(None, 0, peek, None, 7, []) is None  # no op hook (its profile segment is over)
