"""The op of an extern kernel call of a static compiled graph, recorded without dispatching it into the op hook.

A compiled graph's extern calls (``extern_kernels.mm(a, b, out=buf)``) each run one aten op (``aten::mm.out``),
which torch dispatches into the op hook, a Python dispatch mode: ~5-8 us per op for torch's dispatch into Python,
~3 us for the hook. A static graph's call site runs the same op on the same shapes at every call. So when a site's
first call in a profile segment went through the hook and recorded exactly one op, its later calls take the hook
off the thread's mode stack around the call and append that op's raw tuple themselves: the first one's constant
fields (op, argument and output shapes, no in-place view) with this call's start, end, thread, id, sequence peek,
grad mode, direction, backward facts (read once per graph call: one autograd node runs all of it), module, layers,
call site and hook time, each read as the hook reads it (recorder.py, _hook.c). finalize.py then builds the same
records from them. What a site learned is kept with its graph (remember): a later profile at the same call-site
depth makes it again at the site's first call (relearned), which then needs no trip through the hook either.
Where the C extension is in use (recorder.native), ``_hook.ExternOp`` does ExternOp.call's work in
C and ``_hook.ExternCall`` compiled.py's extern call around it (_hook.c): 4.1-4.8 us added per extern call in Python,
2.4-2.8 in C (~0.8 of it torch's pop and push of the mode), on the compiled GPT step's 27 per step. The Python class
below is the fallback and the reference the C one is tested against.

A call goes through the hook as before wherever the result could differ: any other mode on the thread's stack (a
user's, or torch's), the hook not recording or at the record cap, a frame between the call and the graph call that
is not plumbing (the hook's frame walk would include it), a first call that recorded no op or several, or an op that
could create an autograd node (only out= overloads are taken, and only when the first call created none).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from functools import partial
from threading import get_ident

import torch

from .. import torch_compat
from . import recorder as _recorder_module
from .callsite import _internal_code, _is_internal
from .context import context
from .recorder import (
    R_DIR,
    R_FRAMES,
    R_KWARGS,
    R_OP_INFO,
    R_PEEK,
    R_TID,
    R_VIEW_INPLACE,
    backward_facts,
    host_direction,
)

_now = time.perf_counter_ns
_getframe = sys._getframe
_peek_seq = torch_compat.peek_sequence_nr
_graph_task = torch_compat.current_graph_task_id
_grad_enabled = torch.is_grad_enabled
_stack_len = torch_compat.dispatch_stack_len
_stack_at = torch_compat.dispatch_stack_at
_pop = torch_compat.pop_dispatch_stack
_push = torch_compat.push_dispatch_stack
_function_modes = torch_compat.function_stack_len
_function_mode_at = torch_compat.function_stack_at
_key_excluded = torch_compat.dispatch_key_excluded
_AVAILABLE = None not in (_stack_len, _stack_at, _pop, _push, _function_modes, _function_mode_at, _key_excluded)
#: Whether no_dispatch() is on for this thread (the Python dispatch key excluded: no op reaches the hook).
_python_key_excluded: Callable[[], bool] = (
    partial(_key_excluded, torch._C.DispatchKey.Python) if _AVAILABLE else lambda: False
)


def _foreign_function_modes() -> bool:
    """A TorchFunctionMode other than ``torch.set_default_device``'s is on this thread's stack (asked only when
    there is one): it handles the extern call (``torch.mm`` is a torch function) and may run ops the hook must see."""
    device_mode = torch_compat.default_device_mode
    return any(type(_function_mode_at(i)) is not device_mode for i in range(_function_modes()))


#: What ExternOp.call returns when the call must go through the hook (it did not run it).
NOT_TAKEN = object()


class ExternOp:
    """What the first call of an extern call site recorded, for its later calls in the same profile segment."""

    __slots__ = ("args", "calls", "index", "kwargs", "line", "out", "raw", "recorder", "run")

    def __init__(self, recorder, record: tuple, run, line: int, calls: list):
        self.recorder = recorder
        self.raw = recorder.raw
        self.index, self.args, self.kwargs, self.out = record[:4]
        self.run, self.line, self.calls = run, line, calls  # the extern call's own entry (compiled.py)

    def call(self, fn, args, kwargs):
        """``fn(*args, **kwargs)`` with its op's raw tuple and the extern call appended, or NOT_TAKEN (fn not run)."""
        hook_in = _now()
        recorder = self.recorder
        raw = self.raw
        if not (recorder._recording and len(raw) < recorder.max_ops and hook_alone(recorder)):
            return NOT_TAKEN
        ctx = context
        graph_call = ctx.graph_call  # of the compiled graph call this extern call runs in
        if graph_call is None:
            return NOT_TAKEN
        depth = recorder.stack_depth
        site = ()
        if depth:
            # The hook's walk from the op goes through plumbing frames up to the graph call's hook, then takes the
            # call site that hook captured (_hook.c; the Python walk reaches the same frames): so, here, when every
            # frame up to that hook is plumbing.
            if graph_call[1] != depth:
                return NOT_TAKEN
            stop = graph_call[0]
            frame = _getframe(2)  # the caller of compiled.py's extern_call
            while frame is not stop:
                if frame is None or not _is_internal(frame.f_code):
                    return NOT_TAKEN
                frame = frame.f_back
            site = graph_call[2]
        peek = _peek_seq()
        op_id = recorder.next_id()
        gpu = recorder.gpu
        popped = False
        try:
            _pop(None)  # the top mode (None: not one of torch's infra modes); the stack held it alone
            popped = True
            start = _now()
            if gpu is None:
                out = fn(*args, **kwargs)
            else:
                gpu.push(op_id)
                try:
                    out = fn(*args, **kwargs)
                finally:
                    gpu.pop()
            end = _now()
        finally:
            if popped or not _stack_len():  # (an interrupt may come between the pop and popped = True)
                _push(recorder)
        module = ctx.module
        hooks_before = ctx.hook_ns
        if hooks_before:
            ctx.hook_ns = 0
        grad = _grad_enabled()
        if _graph_task() == -1:
            direction = host_direction(ctx.host_dir, grad, module)
            node, node_seq, param = "", -1, None
        else:
            facts = ctx.graph_backward_facts
            if facts is None:
                facts = ctx.graph_backward_facts = backward_facts(ctx, recorder.param_names)
            direction, node, node_seq, param = facts
        tid = get_ident()
        raw.append(
            (
                self.index,
                self.args,
                self.kwargs,
                self.out,
                start,
                end,
                tid,
                peek,
                grad,
                False,
                direction,
                node_seq,
                node,
                param,
                module,
                ctx.layers,
                site if direction != "bwd" else (),
                op_id,
                hook_in,
                _now(),
                # finalize.py adds the cost of torch's dispatch into the hook to every op's overhead; this op made none
                hooks_before - recorder.dispatch_ns,
            )
        )
        self.calls.append((self.run, self.line, start, end, tid))
        return out


#: (C module, what it was handed) of the last set_extern_ops call.
_handed: tuple = ()


def _native_extern_op():
    """``_hook.ExternOp`` (ExternOp.call in C) where the C extension is in use (recorder.native), else None. It makes
    the torch calls this module names, handed to it again whenever one changed (a test replaces one)."""
    global _handed
    native = _recorder_module.native
    if native is None:
        return None
    calls = {
        "stack_len": _stack_len,
        "stack_at": _stack_at,
        "pop": _pop,
        "push": _push,
        "function_modes": _function_modes,
        "foreign_function_modes": _foreign_function_modes,
        "python_key_excluded": _python_key_excluded,
        "peek_seq": _peek_seq,
        "graph_task": _graph_task,
        "grad_enabled": _grad_enabled,
        "backward_facts": backward_facts,
        "clock": None if _now is time.perf_counter_ns else _now,  # None: the C clock, perf_counter_ns's
    }
    if _handed != (native, calls):
        native.set_extern_ops(
            **calls, context=context, internal_code=_internal_code, is_internal=_is_internal, not_taken=NOT_TAKEN
        )
        _handed = (native, calls)
    return native.ExternOp


def native_extern_call(fn, capture, sites: dict, known: dict, extern_call, hooked_call):
    """``_hook.ExternCall``: compiled.py's ``extern_call`` in C for the calls of sites that learned a C ExternOp (the
    rest go to ``extern_call``, the not-taken ones to ``hooked_call``), or None where the C extension is not in use."""
    if _native_extern_op() is None:
        return None
    return _recorder_module.native.ExternCall(fn, capture, sites, known, extern_call, hooked_call)


def remember(recorder, op, fn) -> tuple:
    """What a later profile needs to make a learned ExternOp again without the hook (relearned): the extern kernel,
    its op and that op's shapes. A static graph's call site runs the same op on the same shapes at every call, and
    what learn() checked of it holds for every later call (those ExternOp.call checks at each call aside)."""
    return (fn, recorder.op_infos[op.index].func, op.args, op.kwargs, op.out)


def relearned(recorder, remembered: tuple | None, fn, run, line: int, calls: list):
    """The ExternOp an earlier profile learned at a call site (``remembered``: remember()'s), made for this one
    without running the site's first call through the op hook; None where none was learned for ``fn`` or the hook
    records nothing."""
    if remembered is None or remembered[0] is not fn or not _AVAILABLE or recorder is None or recorder.raw is None:
        return None
    _, func, args, kwargs, out = remembered
    record = (recorder.op_info(func).index, args, kwargs, out)
    return (_native_extern_op() or ExternOp)(recorder, record, run, line, calls)


#: What learn() returns when a site's first call tells nothing for good (the hook was not alone on the thread, or
#: another thread recorded during the call: AOTAutograd's first-call mode, a user's mode): its next call learns.
RELEARN = object()


def hook_alone(recorder) -> bool:
    """The op hook alone sees this thread's ops: the only mode on its dispatch stack, no TorchFunctionMode in front of
    it (but ``torch.set_default_device``'s), the Python dispatch key not excluded (``no_dispatch()``)."""
    return (
        _AVAILABLE
        and _stack_len() == 1
        and _stack_at(0) is recorder
        and not (_function_modes() and _foreign_function_modes())
        and not _python_key_excluded()
    )


def learn(recorder, before: int, peek: int, run, line: int, calls: list, alone: bool):
    """The ExternOp of a call site from its first call, which ran through the hook (``before``: how many raw ops
    there were, ``peek``: the sequence peek, ``alone``: hook_alone(), all taken before it), None: its calls keep the
    hook, or RELEARN. The C one where the C extension is in use, the Python one above otherwise."""
    if not _AVAILABLE or recorder is None or recorder.raw is None:
        return None
    if not alone:
        return RELEARN
    new = recorder.raw[before:]
    tid = get_ident()
    if any(record[R_TID] != tid for record in new):
        return RELEARN
    if len(new) != 1:
        return None
    record = new[0]
    if record[R_VIEW_INPLACE] or not record[R_PEEK] == peek == _peek_seq():
        return None
    info = recorder.op_infos[record[R_OP_INFO]]
    if info.writes_first_arg or not any(key == "out" for key, _ in record[R_KWARGS]):
        return None
    # The call site ExternOp.call gives its op (the graph call's) must be the one the hook's frame walk found: a Python
    # extern kernel outside torch (a user's, or a library's wrapper) is a frame of its own in the hook's.
    graph_call = context.graph_call
    depth = recorder.stack_depth
    if graph_call is None or record[R_FRAMES] != (graph_call[2] if depth and record[R_DIR] != "bwd" else ()):
        return None
    return (_native_extern_op() or ExternOp)(recorder, record, run, line, calls)
