"""The C op hook (pyprof_live/capture/_hook.c) against the pure-Python one: the same raw tuples, objects and
types, the same OpRecords; and the Python hook when the C one cannot be imported."""

import itertools
import sys
import time
import warnings

import pytest
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

import pyprof_live
from pyprof_live import torch_compat
from pyprof_live.capture import callsite, recorder
from pyprof_live.capture import session as session_module
from pyprof_live.capture.context import context
from pyprof_live.capture.recorder import R_ID, R_NODE_SEQ, R_PEEK
from pyprof_live.records import TensorMeta

from .fresh_process import run_in_a_fresh_process

needs_native = pytest.mark.skipif(recorder._load_native() is None, reason="the C hook is not built here")


def captured_raw_ops(monkeypatch) -> list:
    """The raw op tuples of each profile built from now on, a list per profile; the calibrated dispatch cost is 7."""
    captured = []
    build = session_module.build_op_records

    def spy(raw_ops, *args, **kwargs):
        captured.append(list(raw_ops))
        return build(raw_ops, *args, **kwargs)

    monkeypatch.setattr(session_module, "build_op_records", spy)
    monkeypatch.setattr(recorder, "dispatch_cost_ns", lambda: 7)
    return captured


@pytest.fixture
def both_hooks(monkeypatch):
    """``both_hooks(make)`` profiles ``make()``'s function with each hook: [(raw tuples, profile)] * 2. Every clock the
    hooks read is a counter that moves 1 per reading (a fresh one per run), the calibrated dispatch cost
    is 7: both hooks read their clocks the same number of times, so timestamps are equal too."""
    captured = captured_raw_ops(monkeypatch)

    def run(native: bool, fn, **options):
        assert recorder.use_native(native) is native
        for module in ("recorder", "modules", "functions", "session"):
            monkeypatch.setattr(f"pyprof_live.capture.{module}._now", itertools.count(10**6).__next__)
        with pyprof_live.profile(**options) as p:
            fn()
        assert p.records.ops  # built on first read
        return captured[-1], p

    def both(make, **options):
        """(Python run, C run) of ``make()``'s function, called from one instruction (call sites
        deeper than the test reach this line)."""
        return [run(native, make(), **options) for native in (False, True)]

    yield both
    recorder.use_native(True)


def _relative(raws: list) -> list:
    """Sequence numbers and ids relative to the run's first op (autograd's counter is process-wide)."""
    peek, first_id = raws[0][R_PEEK], raws[0][R_ID]
    out = []
    for raw in raws:
        raw = list(raw)
        raw[R_PEEK] -= peek
        raw[R_ID] -= first_id
        if raw[R_NODE_SEQ] >= 0:
            raw[R_NODE_SEQ] -= peek
        out.append(tuple(raw))
    return out


def _types(value):
    """The type of every value, recursively (a shape tuple and a list are not the same thing)."""
    if isinstance(value, tuple):
        return (tuple, tuple(_types(v) for v in value))
    return type(value)


def _assert_same(python, native):
    (raw_py, p_py), (raw_c, p_c) = python, native
    assert len(raw_py) == len(raw_c) > 0
    assert _relative(raw_py) == _relative(raw_c)
    assert [_types(r) for r in _relative(raw_py)] == [_types(r) for r in _relative(raw_c)]
    assert p_py.records.ops == p_c.records.ops


def _training_step():
    """A small training step with what the hook must describe: kwargs (alpha=, dim=), lists of tensors
    (cat, stack, AdamW's foreach ops), scalars and None, an in-place op on a view, a record_function
    scope, zero_grad, backward."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step():
        x = torch.randn(5, 8)
        y = model(x)
        y = torch.cat([y, y * 2], dim=1).add(1.5, alpha=2)
        z = torch.stack([y, y]).sum(dim=0, keepdim=True)
        with torch.profiler.record_function("metrics"):
            w = z.clone()
            w[0].add_(1)  # an in-place op on a view of a tensor that requires grad
        loss = (w.mean() + y.std()).clamp(min=None, max=1e9)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    return step


@needs_native
def test_both_hooks_record_the_same_training_step(both_hooks):
    python, native = both_hooks(_training_step)
    _assert_same(python, native)
    ops = native[1].records.ops
    cat = next(op for op in ops if op.name == "aten::cat")
    assert cat.inputs == ((TensorMeta((5, 4), "float32"), TensorMeta((5, 4), "float32")), 1)
    assert {"aten::stack", "aten::add_", "aten::addmm"} <= {op.name for op in ops}


@needs_native
def test_the_c_hook_names_backward_nodes_as_recorder_does():
    """The C hook reads backward facts itself: its node kinds and 'no number' are recorder.py's (a rename
    on one side alone would make the two hooks disagree on every AccumulateGrad or checkpoint)."""
    native = recorder._load_native()
    assert (native.ACCUMULATE_GRAD, native.REENTRANT_CHECKPOINT, native.NO_SEQUENCE) == (
        recorder._ACCUMULATE_GRAD,
        recorder._REENTRANT_CHECKPOINT,
        recorder.NO_SEQUENCE,
    )


@needs_native
@pytest.mark.parametrize("reentrant", [False, True])
def test_both_hooks_record_the_same_checkpointed_backward(both_hooks, reentrant):
    """Backward facts (node, its number, an AccumulateGrad's parameter, recompute) as the Python hook has them."""

    def make():
        torch.manual_seed(0)
        layer = nn.Linear(4, 4)
        x = torch.randn(3, 4, requires_grad=True)
        return lambda: checkpoint(lambda a: layer(a).relu(), x, use_reentrant=reentrant).sum().backward()

    python, native = both_hooks(make)
    _assert_same(python, native)
    ops = native[1].records.ops
    # recomputed forward: linear (t, addmm) and relu run again inside backward
    recomputed = [op.name for op in ops if op.dir == "recompute" and op.name != "aten::detach"]
    assert recomputed == ["aten::t", "aten::addmm", "aten::relu"]
    # AccumulateGrad's detach of each gradient names its parameter ("": x is no parameter)
    params = {op.param for op in ops if op.node == "torch::autograd::AccumulateGrad"}
    assert params == {"", "Linear.weight", "Linear.bias"}


@needs_native
@pytest.mark.e2e
def test_both_hooks_record_the_same_real_model(both_hooks):
    transformers = pytest.importorskip("transformers")
    from .real_models import build

    del transformers

    def fresh():
        step = build("gpt2")
        step()  # AdamW's state exists: both profiled steps run the same ops
        return step

    _assert_same(*both_hooks(fresh))


@needs_native
@pytest.mark.parametrize("stack_depth", [0, 1, 3])
def test_both_hooks_agree_on_call_sites_at_any_depth(both_hooks, stack_depth):
    _assert_same(*both_hooks(_training_step, stack_depth=stack_depth))


def _graph_call(stack_depth: int):
    """Ops run inside a stand-in for a compiled graph call: a plumbing frame that sets what compiled.py's graph-call
    hook sets (context.graph_call: its frame, the profile's stack depth, the call site captured there), one op called
    from it directly and one through a user function in between; then the same with a call site captured at
    another depth, which the C hook must not use. The C hook takes the rest of an op's call site from the graph
    call once its walk reaches that frame; the Python hook walks every frame."""
    a = torch.randn(3, 3)

    def user_code(x):
        return torch.mm(x, x)

    def graph_call(depth):
        outer = context.graph_call
        context.graph_call = (sys._getframe(), depth, callsite.capture(depth))
        try:
            return user_code(torch.mm(a, a))
        finally:
            context.graph_call = outer

    callsite.mark_internal(graph_call.__code__)  # pyprof_live's code, as the real hook is

    def step():
        graph_call(stack_depth)
        graph_call(stack_depth + 1)

    return step


@needs_native
@pytest.mark.parametrize("stack_depth", [1, 2, 4])
def test_an_op_in_a_compiled_graph_call_has_the_call_site_a_full_walk_gives(both_hooks, stack_depth):
    python, native = both_hooks(lambda: _graph_call(stack_depth), stack_depth=stack_depth)
    _assert_same(python, native)
    sites = [op.callsite for op in native[1].records.ops if op.name == "aten::mm"]
    assert len(sites) == 4  # 2 graph calls x 2 mm
    # The mm called from the graph-call frame: step's line, then its callers' (the fixture's, pytest's: all user
    # code); the one in user_code: its own line, then the same ones.
    assert sites[0][0].startswith("test_native_hook.py:") and len(sites[0]) == len(sites[1]) == stack_depth
    assert sites[1][1:] == sites[0][: stack_depth - 1] and sites[1][0] != sites[0][0]
    # The second graph call (a call site captured one frame deeper, unused by the C hook): same callers, next line.
    assert sites[2][1:] == sites[0][1:] and sites[3][0] == sites[1][0]


def _edge_cases():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch: "nested tensors are a prototype"
        nested = torch.nested.nested_tensor([torch.randn(2, 3), torch.randn(4, 3)])
    plain = torch.arange(6.0).reshape(2, 3)

    def run():
        (nested * 2).to_padded_tensor(0.0)  # a tensor without sizes: "nested tensor torch.float32"
        torch.cat([plain, plain], dim=0)  # a list of tensors and a kwarg
        plain.add(3, alpha=2)  # scalars
        torch.full((2,), 1.5, dtype=torch.float64)  # a tuple of ints, kwargs with a dtype
        with pytest.raises(RuntimeError):
            torch.mm(plain, plain)  # the op raises: no record, the error reaches the user
        plain.sum(dim=[0, 1])  # a list of ints

    return run


@needs_native
def test_both_hooks_describe_the_edge_cases_alike(both_hooks):
    python, native = both_hooks(_edge_cases)
    _assert_same(python, native)
    ops = {op.name: op for op in native[1].records.ops}
    print({name: (op.inputs, op.kwargs, op.outputs) for name, op in ops.items()})
    assert ops["aten::mul"].inputs[0] == "nested tensor torch.float32"
    assert "aten::mm" not in ops


@needs_native
def test_the_c_hook_reads_perf_counter_ns_clock():
    """The C hook reads CLOCK_MONOTONIC itself: time.perf_counter_ns's clock, which module hooks read."""
    before = time.perf_counter_ns()
    with pyprof_live.profile() as p:
        torch.ones(3).add(1)
    after = time.perf_counter_ns()
    (op,) = [op for op in p.records.ops if op.name == "aten::add"]
    assert before <= op.start <= op.end <= after


@needs_native
def test_the_c_call_site_capture_is_the_python_one():
    def inner(skip):
        return callsite.capture(5, skip=skip), callsite.python_capture(5, skip)

    assert callsite.capture is not callsite.python_capture
    for skip in (1, 2, 3):
        native, python = inner(skip)
        # the two calls are on one line: the same instruction offsets, except the innermost frame's
        # when it is inner's own (skip=1): the calls are two instructions apart
        assert len(native) == len(python)
        assert native[1:] == python[1:]
        assert native[0][0] == python[0][0]


@needs_native
def test_the_record_cap_holds_in_both_hooks(both_hooks):
    def run():
        for _ in range(5):
            torch.ones(2).add(1)

    with pytest.warns(RuntimeWarning, match="record cap of 3 ops"):
        python, native = both_hooks(lambda: run, max_ops=3)
    _assert_same(python, native)
    assert len(native[0]) == 3


def test_the_python_hook_runs_when_the_c_one_cannot_be_imported():
    code = """
import sys
sys.modules["pyprof_live.capture._hook"] = None  # import fails, as where it was never built
import torch, pyprof_live
from pyprof_live import torch_compat
from pyprof_live.capture import callsite, recorder
with pyprof_live.profile() as p:
    torch.ones(2, 3).sum()
rec = p.session
print(recorder.native, callsite.capture is callsite.python_capture, [op.name for op in p.records.ops])
"""
    assert run_in_a_fresh_process(code).split("\n")[0] == "None True ['aten::ones', 'aten::sum']"


def test_pyprof_live_native_0_selects_the_python_hook():
    code = """
import os
os.environ["PYPROF_LIVE_NATIVE"] = "0"
import torch, pyprof_live
from pyprof_live import torch_compat
from pyprof_live.capture import callsite, recorder
with pyprof_live.profile() as p:
    torch.ones(2, 3).sum()
print(recorder.native, callsite.capture is callsite.python_capture, recorder.use_native(False))
"""
    assert run_in_a_fresh_process(code).strip() == "None True False"


@needs_native
def test_the_c_hook_makes_its_tuples_untracked_by_the_garbage_collector(both_hooks):
    """Every raw tuple of a Linear step holds only ints, strings, dtypes, None and tuples of those: the C
    hook takes each off the collector's lists when it makes it (what a collection visiting it would do),
    so recording adds nothing for later collections to scan."""
    import gc

    def make():
        m = nn.Linear(4, 3)
        x = torch.randn(2, 4)
        return lambda: m(x).sum().backward()

    _, (raw_c, _) = both_hooks(make)
    assert raw_c and not any(gc.is_tracked(r) for r in raw_c)
    assert not any(gc.is_tracked(part) for r in raw_c for part in r if isinstance(part, tuple))


@needs_native
def test_the_c_dispatch_entry_is_bound_to_the_mode_and_passes_the_op_s_error_on():
    """torch calls ``mode.__torch_dispatch__``: with the C hook that is ``_hook.Dispatch`` in the recorder's
    instance dict (torch requires its ``__self__`` to be the mode); an op's error reaches the caller unchanged,
    later ops are still recorded, and the class's Python method takes over once the profile stops."""
    recorder.use_native(True)
    with pyprof_live.profile() as p:
        mode = torch_compat.current_dispatch_mode()
        entry = mode.__dict__["__torch_dispatch__"]
        assert type(entry).__name__ == "Dispatch" and entry.__self__ is mode and entry.recording
        with pytest.raises(RuntimeError, match="size"):
            torch.ones(2) @ torch.ones(3)
        torch.ones(2).add(1)
    assert "__torch_dispatch__" not in mode.__dict__ and not entry.recording
    assert [op.name for op in p.records.ops][-1] == "aten::add"


def test_op_callable_is_the_overload_s_builtin_only_where_its_call_just_forwards():
    """The hooks call ``OpOverload._op`` (a builtin) where ``OpOverload.__call__`` is exactly
    ``return self._op(*args, **kwargs)``; elsewhere (2.15 checks a Python dispatcher first) the overload."""
    add = torch.ops.aten.add.Tensor
    call = torch_compat.op_callable(add)
    if torch_compat._OVERLOAD_CALL_FORWARDS:
        assert call is add._op
    else:
        assert call is add
    assert call(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])).tolist() == [4.0, 6.0]
    assert torch_compat.op_callable(print) is print  # not an OpOverload
