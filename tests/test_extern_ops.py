"""Extern kernel calls of static compiled graphs recorded without the op hook (capture/extern_ops.py): the same
records as through the hook, and the hook kept wherever that could not be made exact."""

from __future__ import annotations

import dataclasses
import itertools
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
from pyprof_live.capture.recorder import R_ID, R_KWARGS, R_PEEK, R_TID
from tests.compiled_models import MLPBlock, needs_compiled_runs
from tests.test_native_hook import _relative, captured_raw_ops, needs_native

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


def _recorder(raw: list, writes_first_arg: bool = False):
    return SimpleNamespace(
        raw=raw,
        op_infos=[SimpleNamespace(writes_first_arg=writes_first_arg)],
        gpu=None,
        next_id=iter(range(10)).__next__,
        param_names={},
        max_ops=100,
        stack_depth=0,
    )


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
    learned = extern_ops.learn(_recorder([one]), 0, peek, None, 7, [])
    assert type(learned).__name__ == "ExternOp" and learned.line == 7  # the C one where the C hook is in use
    assert extern_ops.learn(_recorder([]), 0, peek, None, 7, []) is None  # no op
    assert extern_ops.learn(_recorder([one, one]), 0, peek, None, 7, []) is None  # two ops
    assert extern_ops.learn(_recorder([_raw_op(**{f"r{R_TID}": -1})]), 0, peek, None, 7, []) is None
    assert extern_ops.learn(_recorder([_raw_op(**{f"r{R_KWARGS}": ()})]), 0, peek, None, 7, []) is None
    assert extern_ops.learn(_recorder([_raw_op(**{f"r{R_PEEK}": peek + 1})]), 0, peek, None, 7, []) is None
    assert extern_ops.learn(_recorder([one], writes_first_arg=True), 0, peek, None, 7, []) is None
    assert extern_ops.learn(None, 0, peek, None, 7, []) is None  # no op hook (its profile segment is over)


@pytest.fixture
def both_extern_ops(monkeypatch):
    """``both_extern_ops(step)`` profiles ``step`` with the Python ExternOp, then with the C one (the C op hook in
    both): [(raw op tuples, profile)] * 2. Every clock is a counter moving 1 per reading, fresh per run, so equal
    tuples mean the same clock readings in the same order."""
    captured = captured_raw_ops(monkeypatch)
    native, native_call, made = extern_ops._native_extern_op, extern_ops.native_extern_call, []

    def made_call(*args):
        call = native_call(*args)
        made.append(type(call).__name__)
        return call

    monkeypatch.setattr(extern_ops, "native_extern_call", made_call)

    def run(in_c: bool, step):
        monkeypatch.setattr(extern_ops, "_native_extern_op", native if in_c else lambda: None)
        for module in ("recorder", "modules", "functions", "session", "compiled", "extern_ops"):
            monkeypatch.setattr(f"pyprof_live.capture.{module}._now", itertools.count(10**6).__next__)
        made.clear()
        p = _profile(step)
        learned = {type(op).__module__ for op in p.session._compiled.extern_ops.values()}
        assert learned == {"pyprof_live.capture._hook" if in_c else "pyprof_live.capture.extern_ops"}
        assert made == ["ExternCall" if in_c else "NoneType"] * 2  # addmm in the forward graph, mm in the backward
        assert p.records.ops  # built on first read
        return captured[-1], p

    return lambda step: [run(in_c, step) for in_c in (False, True)]


@needs_native
def test_the_c_extern_op_appends_the_python_one_s_raw_tuples(mlp_step, both_extern_ops, pops):
    """Three MLPBlock(32) training steps, 6 extern call sites (2 addmm forward, 4 mm backward): 2 x 6 calls after the
    first step take the new path in each run (C: compiled.py's extern call and ExternOp.call both in C). Their raw
    tuples (shapes, direction, backward node and sequence number, module, layers, call site, ids, clock readings) and
    the records are the same from both."""
    (raw_py, p_py), (raw_c, p_c) = both_extern_ops(mlp_step)
    assert pops[0] == 2 * 12
    assert len(raw_py) == len(raw_c) > 0
    assert _relative(raw_py) == _relative(raw_c)
    assert [[type(v) for v in r] for r in raw_py] == [[type(v) for v in r] for r in raw_c]
    assert p_py.records.ops == p_c.records.ops
    bwd = [op for op in p_c.records.ops if op.name == "aten::mm"]
    assert len(bwd) == 4 * STEPS and {op.dir for op in bwd} == {"bwd"} and all(op.node for op in bwd)


class _Gpu:
    """A GPU backend's push/pop of the external correlation id around each op, logged."""

    def __init__(self, log: list):
        self.log = log

    def push(self, op_id: int) -> None:
        self.log.append(("push", op_id))

    def pop(self) -> None:
        self.log.append(("pop",))


@pytest.mark.parametrize("in_c", [pytest.param(True, marks=needs_native), False])
def test_an_exception_in_the_call_puts_the_hook_and_the_gpu_id_back(mlp_step, in_c):
    """The hook is off the mode stack and the op's id pushed to the GPU backend while the extern kernel runs; both
    are put back after it raised, nothing is recorded, and a later call records its op with the id it pushed."""
    with pyprof_live.profile(stack_depth=0) as p:
        mlp_step()
        learned = next(op for op in p.session._compiled.extern_ops.values() if op is not None)
        recorder = learned.recorder
        record = (learned.index, learned.args, learned.kwargs, learned.out)  # fc1's addmm, the first site learned
        log: list = []
        recorder.gpu = _Gpu(log)
        try:
            op_type = extern_ops._native_extern_op() if in_c else extern_ops.ExternOp
            op = op_type(recorder, record, learned.run, learned.line, [])
            assert type(op).__module__ == f"pyprof_live.capture.{'_hook' if in_c else 'extern_ops'}"

            def kernel(fails: bool):
                log.append(("run", torch_compat.current_dispatch_mode(), torch_compat.dispatch_stack_len()))
                if fails:
                    raise ValueError("extern kernel failed")
                return "out"

            before = len(recorder.raw)
            context.graph_call = (sys._getframe(), 0, ())  # as a compiled graph call's hook sets it
            try:
                with pytest.raises(ValueError, match="extern kernel failed"):
                    op.call(kernel, (True,), {})
                assert torch_compat.current_dispatch_mode() is recorder and torch_compat.dispatch_stack_len() == 1
                assert len(recorder.raw) == before
                assert op.call(kernel, (), {"fails": False}) == "out"
            finally:
                context.graph_call = None
        finally:
            recorder.gpu = None
        raw = recorder.raw[-1]
        assert len(recorder.raw) == before + 1 and raw[:4] == record and raw[R_ID] == log[3][1]
        failed_id = log[0][1]
        assert log == [
            ("push", failed_id),
            ("run", None, 0),
            ("pop",),
            ("push", failed_id + 1),
            ("run", None, 0),
            ("pop",),
        ]
        mlp_step()  # still recorded, through the new path
    assert sum(op.name == "aten::addmm" for op in p.records.ops) == 2 * 2 + 1
