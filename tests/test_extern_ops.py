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
from torch.overrides import TorchFunctionMode
from torch.utils._mode_utils import no_dispatch
from torch.utils._python_dispatch import TorchDispatchMode

import pyprof_live
from pyprof_live import torch_compat
from pyprof_live.capture import compiled, extern_ops
from pyprof_live.capture import recorder as recorder_module
from pyprof_live.capture import session as session_module
from pyprof_live.capture.context import context
from pyprof_live.capture.recorder import R_DIR, R_FRAMES, R_ID, R_KWARGS, R_PEEK, R_TID
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


#: extern_ops.relearned: the fixture below takes it away, the tests of making a site from an earlier profile's put it back.
RELEARNED = extern_ops.relearned


@pytest.fixture(autouse=True)
def learning_in_each_profile(monkeypatch):
    """These tests are about what a site's first call in a profile learns (mlp_step's graphs live through the module,
    and so does what each site learned): no site is made from an earlier profile's but where a test puts it back."""
    monkeypatch.setattr(extern_ops, "relearned", lambda *args: None)


def _forget_learned() -> None:
    """What every profile so far learned of the extern call sites of the compiled graphs."""
    for _, info in compiled._graphs.values():
        info.learned_externs.clear()


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


def test_a_later_profile_takes_learned_sites_off_the_hook_from_their_first_call(mlp_step, pops, monkeypatch):
    """Profile 1 learns MLPBlock(32)'s 6 extern call sites at their first calls (2 x 6 = 12 calls without the hook, as
    above); profile 2 makes the same from what profile 1 learned: all 3 x 6 = 18 of its calls without the hook. Every
    field of its records but the times is that of a profile whose calls all went through the hook."""
    monkeypatch.setattr(extern_ops, "relearned", RELEARNED)
    _forget_learned()
    _profile(mlp_step)
    assert pops[0] == 12
    made_again = _profile(mlp_step)
    assert pops[0] == 12 + 18
    monkeypatch.setattr(extern_ops, "_AVAILABLE", False)
    hooked = _profile(mlp_step)
    assert pops[0] == 30
    assert _without_times(made_again) == _without_times(hooked)


def test_a_site_learned_with_other_call_site_depth_is_learned_again(mlp_step, pops, monkeypatch):
    """What the hook's frame walk found at a site's first call is part of what it learned: a profile with another
    stack depth learns its sites anew (12 of 18 calls without the hook), and the next one at that depth makes them."""
    monkeypatch.setattr(extern_ops, "relearned", RELEARNED)
    _forget_learned()
    _profile(mlp_step)
    _profile(mlp_step, stack_depth=0)
    assert pops[0] == 12 + 12
    _profile(mlp_step, stack_depth=0)
    assert pops[0] == 24 + 18


def test_a_site_is_made_again_only_for_the_kernel_and_hook_it_learned_with():
    """remember() keeps the extern kernel, the op and its shapes; relearned() makes the site's op for this profile's hook
    (its index among this profile's op infos) only for that kernel, and only while the hook records."""
    infos: dict = {}
    recorder = _recorder([])
    recorder.op_info = lambda func: infos.setdefault(func, SimpleNamespace(index=len(infos) + 4))
    remembered = (torch.mm, torch.ops.aten.mm.out, (((4, 2), torch.float32),), (("out", ((4, 3), torch.float32)),), 9)
    op = RELEARNED(recorder, remembered, torch.mm, None, 7, [])
    assert type(op).__name__ == "ExternOp" and (op.index, op.args, op.kwargs, op.out, op.line) == (
        4,
        *remembered[2:],
        7,
    )
    assert RELEARNED(recorder, remembered, torch.addmm, None, 7, []) is None  # another kernel at the site
    assert RELEARNED(recorder, None, torch.mm, None, 7, []) is None  # nothing learned there
    assert RELEARNED(None, remembered, torch.mm, None, 7, []) is None  # no op hook (its profile segment is over)
    recorder.op_infos = [SimpleNamespace(func=torch.ops.aten.mm.out)] * 5
    assert extern_ops.remember(recorder, op, torch.mm) == remembered


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
        dispatch_ns=0,
    )


def _raw_op(**fields) -> tuple:
    """A raw op tuple of aten::mm.out(a, b, out=buf) on this thread, before any autograd node was made."""
    record = [0] * 21
    record[R_TID] = threading.get_ident()
    record[R_PEEK] = torch_compat.peek_sequence_nr()
    record[R_KWARGS] = (("out", ((4, 3), torch.float32)),)
    record[R_DIR], record[R_FRAMES] = "fwd", ()
    for index, value in fields.items():
        record[int(index[1:])] = value
    return tuple(record)


@pytest.fixture
def in_graph_call():
    """context.graph_call as a compiled graph call's hook sets it: (its frame, stack depth, call site)."""
    context.graph_call = (sys._getframe(), 2, ((1, 2), (3, 4)))
    yield context.graph_call
    context.graph_call = None


def test_a_site_learns_only_from_a_first_call_that_recorded_exactly_one_out_op(in_graph_call):
    """0 or 2 ops recorded in the first call, an op that may create an autograd node (no out= argument, or a node
    numbered during the call), one writing its first argument, or a call site other than the graph call's (a Python
    extern kernel's own frame): the hook stays. Another mode in front of the hook during the call, or another
    thread's op recorded meanwhile: the site learns at its next call (RELEARN)."""
    peek = torch_compat.peek_sequence_nr()
    one = _raw_op()
    learned = extern_ops.learn(_recorder([one]), 0, peek, None, 7, [], True)
    assert type(learned).__name__ == "ExternOp" and learned.line == 7  # the C one where the C hook is in use
    assert extern_ops.learn(_recorder([one]), 0, peek, None, 7, [], False) is extern_ops.RELEARN
    assert extern_ops.learn(_recorder([]), 0, peek, None, 7, [], True) is None  # no op
    assert extern_ops.learn(_recorder([one, one]), 0, peek, None, 7, [], True) is None  # two ops
    other_thread = _raw_op(**{f"r{R_TID}": -1})
    assert extern_ops.learn(_recorder([other_thread]), 0, peek, None, 7, [], True) is extern_ops.RELEARN
    assert extern_ops.learn(_recorder([one, other_thread]), 0, peek, None, 7, [], True) is extern_ops.RELEARN
    assert extern_ops.learn(_recorder([_raw_op(**{f"r{R_KWARGS}": ()})]), 0, peek, None, 7, [], True) is None
    assert extern_ops.learn(_recorder([_raw_op(**{f"r{R_PEEK}": peek + 1})]), 0, peek, None, 7, [], True) is None
    assert extern_ops.learn(_recorder([one], writes_first_arg=True), 0, peek, None, 7, [], True) is None
    assert extern_ops.learn(None, 0, peek, None, 7, [], True) is None  # no op hook (its profile segment is over)
    # With call sites on (stack depth 2), the first call's must be the graph call's, or none for a backward op.
    deep = _recorder([_raw_op(**{f"r{R_FRAMES}": in_graph_call[2]})])
    deep.stack_depth = 2
    assert type(extern_ops.learn(deep, 0, peek, None, 7, [], True)).__name__ == "ExternOp"
    deep.raw = [_raw_op(**{f"r{R_FRAMES}": ((5, 6), *in_graph_call[2])})]  # a Python kernel's frame in front
    assert extern_ops.learn(deep, 0, peek, None, 7, [], True) is None
    deep.raw = [_raw_op(**{f"r{R_FRAMES}": (), f"r{R_DIR}": "bwd"})]
    assert type(extern_ops.learn(deep, 0, peek, None, 7, [], True)).__name__ == "ExternOp"


def _hooked(monkeypatch, scenario):
    """``scenario()`` again with every extern call through the op hook (as before extern_ops.py)."""
    with monkeypatch.context() as patch:
        patch.setattr(extern_ops, "_AVAILABLE", False)
        return scenario()


class _AbsAfterMatmuls(TorchFunctionMode):
    """A user's mode that, once switched on, also runs abs() on each matmul's result: Dynamo traced F.linear, not
    torch.mm/addmm, so switching it on recompiles nothing."""

    on = False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func in (torch.mm, torch.addmm) and _AbsAfterMatmuls.on:
            torch.abs(out)
        return out


def test_a_users_function_mode_keeps_the_hook_for_the_ops_it_runs(mlp_step, pops, monkeypatch):
    """Extern kernels are torch functions (torch.addmm, torch.mm): a TorchFunctionMode handles them first and may run
    ops of its own, which the hook must see. Step 2 runs one abs per forward addmm (fc1, fc2): 2 aten::abs records, as
    with every call through the hook. Autograd's engine runs the backward graph without the mode: step 2's 4
    backward mm calls still take the new path."""
    mode = _AbsAfterMatmuls()

    def scenario():
        _AbsAfterMatmuls.on = False
        with mode, pyprof_live.profile(stack_depth=0) as p:  # no call sites: the mode's frame is not in any
            mlp_step()
            _AbsAfterMatmuls.on = True
            mlp_step()
        return p

    scenario()  # Dynamo compiles the forward graph again for the mode: in this first profile
    pops[0] = 0
    fast = scenario()
    assert pops[0] == 4
    hooked = _hooked(monkeypatch, scenario)
    assert sum(op.name == "aten::abs" for op in fast.records.ops) == 2
    assert _without_times(fast) == _without_times(hooked)


def test_set_default_device_s_function_mode_does_not_keep_the_hook(mlp_step, pops, monkeypatch):
    """torch.set_default_device() leaves a DeviceContext on the function-mode stack for good; it only changes factory
    calls, so the 2 x 6 later extern calls of 3 steps still take the new path, with the same records. (Dynamo
    recompiles the forward graph for the default device: a first profile does it.)"""
    torch.set_default_device("cpu")
    try:
        with pyprof_live.profile():
            mlp_step()
        pops[0] = 0
        fast = _profile(mlp_step)
        assert pops[0] == 12
        hooked = _hooked(monkeypatch, lambda: _profile(mlp_step))
    finally:
        torch.set_default_device(None)
    assert _without_times(fast) == _without_times(hooked)


def test_no_op_is_recorded_where_python_dispatch_is_off(mlp_step, pops, monkeypatch):
    """Under no_dispatch() no op reaches the hook: the second step's extern calls record nothing either, so the
    profile holds the first step's 2 addmm and 4 mm only."""

    def scenario():
        with pyprof_live.profile() as p:
            mlp_step()
            with no_dispatch():
                mlp_step()
        return p

    fast = scenario()
    assert pops[0] == 0
    names = [op.name for op in fast.records.ops]
    assert names.count("aten::addmm") == 2 and names.count("aten::mm") == 4
    assert _without_times(fast) == _without_times(_hooked(monkeypatch, scenario))


@pytest.mark.parametrize("in_c", [pytest.param(True, marks=needs_native), False])
def test_ops_recorded_without_the_hook_are_not_charged_its_dispatch(mlp_step, monkeypatch, in_c):
    """finalize.py adds the calibrated cost of torch's dispatch into the hook to each op's overhead (profiler time);
    an extern call that took the hook off made no such dispatch. With that cost set to 1 s: the 2 x 6 extern ops of
    steps 2 and 3 have overheads under 1 s, every op through the hook (step 1's 6 and the rest) over it."""
    second = 10**9
    monkeypatch.setattr(recorder_module, "dispatch_cost_ns", lambda: second)
    monkeypatch.setattr(session_module, "dispatch_cost_ns", lambda: second)
    if not in_c:
        monkeypatch.setattr(extern_ops, "_native_extern_op", lambda: None)
    ops = _profile(mlp_step).records.ops
    extern = sorted((op for op in ops if op.name in ("aten::addmm", "aten::mm") and op.graph), key=lambda op: op.start)
    assert len(extern) == 6 * STEPS
    assert all(op.overhead >= second for op in extern[:6]) and all(op.overhead < second for op in extern[6:])
    assert all(op.overhead >= second for op in ops if op.kind == "op" and op not in extern)


class _AbsAfterMatmulOps(TorchDispatchMode):
    """A mode in front of the hook that runs abs() after each mm/addmm op: the hook records both."""

    @classmethod
    def ignore_compile_internals(cls) -> bool:  # compiled code runs compiled under it, as under the profile
        return True

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func.overloadpacket in (torch.ops.aten.mm, torch.ops.aten.addmm):
            torch.abs(out)
        return out


def test_a_site_first_called_under_another_mode_learns_at_its_next_call(mlp_step, pops):
    """A first call with another mode in front of the hook (torch's own at a graph's first call: AOTAutograd's; here
    a user's that runs one more op per matmul, so the hook records 2 ops) learns nothing: the site learns at its
    next call. Step 1 under the mode, steps 2 and 3 without: the 6 sites learn at step 2, step 3's 6 calls take the
    new path (none did when a site kept the hook for good after such a first call)."""
    with pyprof_live.profile() as p:
        with _AbsAfterMatmulOps():
            mlp_step()
        mlp_step()
        mlp_step()
    assert pops[0] == 6
    assert sum(op is not None for op in p.session._compiled.extern_ops.values()) == 6


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


@needs_native
def test_the_c_types_are_built_whole():
    """ExternOp and ExternCall are made by their constructor alone: one made without its arguments is refused (it
    used to crash when called), calling __init__ again changes nothing, a recorder attribute that cannot be read is
    the error raised, and the record cap may be any integer type."""
    native = recorder_module._load_native()
    extern_ops._native_extern_op()  # hands set_extern_ops its torch calls
    for made in (native.ExternOp, native.ExternCall):
        with pytest.raises(TypeError):
            made.__new__(made)
    recorder = _recorder([_raw_op()])
    op = native.ExternOp(recorder, _raw_op(), None, 7, [])
    op.__init__(_recorder([]), _raw_op(), None, 8, [])
    assert op.recorder is recorder and op.line == 7
    del recorder.gpu
    with pytest.raises(AttributeError, match="gpu"):
        native.ExternOp(recorder, _raw_op(), None, 7, [])
    recorder = _recorder([_raw_op()])
    recorder.max_ops = SimpleNamespace(__index__=None)  # not an integer
    with pytest.raises(TypeError):
        native.ExternOp(recorder, _raw_op(), None, 7, [])
    recorder.max_ops = torch.tensor(5)  # an integer type with __index__
    assert native.ExternOp(recorder, _raw_op(), None, 7, []).line == 7


@pytest.mark.parametrize("in_c", [pytest.param(True, marks=needs_native), False])
def test_a_kernel_that_leaves_a_mode_on_the_stack_gets_the_hook_back_on_top(mlp_step, in_c):
    """The hook comes off the stack for the call and goes back on top after it, whatever the kernel did to the stack
    (here it leaves a mode of its own there), in the Python ExternOp as in the C one."""
    with pyprof_live.profile(stack_depth=0) as p:
        mlp_step()
        learned = next(op for op in p.session._compiled.extern_ops.values() if op is not None)
        recorder = learned.recorder
        op_type = extern_ops._native_extern_op() if in_c else extern_ops.ExternOp
        op = op_type(recorder, (learned.index, learned.args, learned.kwargs, learned.out), learned.run, 7, [])
        leftover = TorchDispatchMode()

        def kernel():
            torch_compat.push_dispatch_stack(leftover)
            return "out"

        context.graph_call = (sys._getframe(), 0, ())
        try:
            assert op.call(kernel, (), {}) == "out"
            stack = [torch_compat.dispatch_stack_at(i) for i in range(torch_compat.dispatch_stack_len())]
        finally:
            context.graph_call = None
            torch_compat.pop_dispatch_stack(None)
            torch_compat.pop_dispatch_stack(None)
            torch_compat.push_dispatch_stack(recorder)
        assert stack == [leftover, recorder]


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
