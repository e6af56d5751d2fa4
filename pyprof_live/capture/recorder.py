"""The op hook: a TorchDispatchMode that records every aten op, forward, backward and optimizer.

This is the hot path (it runs per aten op), so it appends one flat tuple per op and does nothing
else: no pytree walk, no string formatting, no autograd Node or tensor kept (shapes and dtypes
only). ``finalize.py`` turns the tuples into OpRecords after the run.

``_hook.c`` is ``OpRecorder._record`` and ``__torch_dispatch__`` in C (built by ``pip install``, optional): same tuples, same
objects, with every torch call and every rare path handed in from here. Where it is not built, or with
``PYPROF_LIVE_NATIVE=0`` in the environment, or after ``use_native(False)``, the Python below runs.
"""

from __future__ import annotations

import os
import time
import warnings
from threading import get_ident

import torch

from .. import torch_compat
from ..records import SCOPE_DIRS
from . import callsite
from .context import context
from .gpu import GpuBackend
from .overhead import dispatch_cost_ns

_Tensor = torch.Tensor
_now = time.perf_counter_ns
_peek_seq = torch_compat.peek_sequence_nr
_graph_task = torch_compat.current_graph_task_id
_current_node = torch_compat.current_autograd_node
_node_seq = torch_compat.node_sequence_nr
_is_view = torch_compat.is_view
_grad_enabled = torch.is_grad_enabled
_set_eval_frame = torch_compat.set_eval_frame
_op_callable = torch_compat.op_callable


def _load_native():
    """The C hook module, or None where it is not built (or not wanted: ``PYPROF_LIVE_NATIVE=0``)."""
    if os.environ.get("PYPROF_LIVE_NATIVE", "1") == "0":
        return None
    try:
        from . import _hook
    except ImportError:
        return None
    return _hook


#: The C op hook (``_hook.c``) new recorders use; None: the pure-Python hook.
native = _load_native()


def use_native(on: bool) -> bool:
    """Use the C hook (if built) or the pure-Python one for recorders made from now on, and the matching
    ``callsite.capture``. Returns whether the C hook is now in use."""
    global native
    native = _load_native() if on else None
    callsite.use_native(native is not None)
    return native is not None


#: How a tensor without sizes (nested) is described in a record: this prefix, then its dtype.
NESTED_TENSOR = "nested tensor "

#: Sequence number autograd gives nodes that have none (AccumulateGrad).
NO_SEQUENCE = 2**64 - 1
_ACCUMULATE_GRAD = "torch::autograd::AccumulateGrad"
_REENTRANT_CHECKPOINT = "CheckpointFunctionBackward"
#: dir of an op outside autograd's engine, in no module and no scope, decided after the run: "fwd"
#: if it created an autograd node (a loss computed on the model's output), else "other" (input
#: creation, grad clipping, metrics under no_grad, ``.item()``) (finalize.py).
UNDECIDED = ""
#: Scope dir of ``zero_grad``: every op inside is "opt" (a step's ops with grad enabled are a
#: closure's forward, those of zero_grad never are).
_ZERO_GRAD = "zero_grad"
_ZERO_GRAD_PREFIX = "Optimizer.zero_grad#"

# Positions in a raw op tuple (finalize.py reads them by these names).
(
    R_OP_INFO,
    R_ARGS,
    R_KWARGS,
    R_OUT,
    R_START,
    R_END,
    R_TID,
    R_PEEK,
    R_GRAD,
    R_VIEW_INPLACE,
    R_DIR,
    R_NODE_SEQ,
    R_NODE,
    R_PARAM,
    R_MODULE,
    R_LAYERS,
    R_FRAMES,
    R_ID,
    R_HOOK_IN,
    R_HOOK_OUT,
    R_HOOKS_BEFORE,
) = range(21)


_SEQUENCES = (list, tuple)


def tensor_meta(value):
    """Shape and dtype of a tensor (or of each tensor in a list); other values kept as they are.

    Lists are always copied element-wise so no tensor inside them outlives the op. Shapes become
    plain tuples (torch.Size is a tracked container; plain tuples of ints are not), so the garbage
    collector stops visiting the records after one pass instead of rescanning all of them.
    """
    if isinstance(value, _Tensor):
        return (tuple(value.shape), value.dtype)
    if type(value) in _SEQUENCES:
        return tuple([(tuple(v.shape), v.dtype) if isinstance(v, _Tensor) else v for v in value])
    return value


def host_direction(scope_dir: str, grad: bool, module: str) -> str:
    """dir of an op outside autograd's engine. Optimizers run their math with grad disabled; ops
    with grad enabled inside a step are a closure's forward (LBFGS, ``step(closure)``). Outside
    any scope, an op inside an nn.Module is forward; elsewhere it is UNDECIDED until the run ends."""
    if scope_dir == "fwd":
        return "fwd" if module else UNDECIDED
    if scope_dir == "opt":
        return "fwd" if grad else "opt"
    return "opt" if scope_dir == _ZERO_GRAD else scope_dir


def backward_facts(ctx, param_names: dict) -> tuple:
    """(direction, node name, node sequence number, parameter name) inside autograd's engine."""
    current = _current_node()
    if current is None:
        return "bwd", "", -1, None
    node = current.name()
    node_seq = _node_seq(current)
    param = None
    if node_seq == NO_SEQUENCE:
        node_seq = -1
        if node == _ACCUMULATE_GRAD:
            param = param_names.get(id(current.variable))  # type: ignore[attr-defined]  # AccumulateGrad's tensor
    # Reentrant checkpointing re-runs forward inside its Function's backward node.
    direction = "recompute" if ctx.recompute or node == _REENTRANT_CHECKPOINT else "bwd"
    return direction, node, node_seq, param


def _described(value):
    """tensor_meta for values whose shape cannot be read (nested tensors have no sizes)."""
    if isinstance(value, _Tensor):
        try:
            return (tuple(value.shape), value.dtype)
        except RuntimeError:
            return f"{NESTED_TENSOR}{value.dtype}"
    if type(value) in _SEQUENCES:
        return tuple([_described(v) for v in value])
    return value


def _creates_copy_slices(args) -> bool:
    """An in-place op on a view that autograd records: its CopySlices node is created only after
    the op returns, so the next op sees that sequence number bump (finalize.py gives it back)."""
    target = args[0]
    return (
        isinstance(target, _Tensor)
        and _is_view(target)
        and _grad_enabled()
        and any(isinstance(a, _Tensor) and a.requires_grad for a in args)
    )


class _OpInfo:
    """What the recorder needs to know of an OpOverload: its facts, read once per process (_overload_facts),
    and its index in this profile's ``op_infos``."""

    __slots__ = ("call", "func", "index", "kind", "name", "overload", "writes_first_arg")

    def __init__(self, func, index: int):
        self.func = func
        self.index = index  # what raw tuples hold instead of the OpOverload (an int is not GC-tracked)
        facts = _overload_facts.get(id(func))
        if facts is None or facts[0] is not func:
            facts = _overload_facts[id(func)] = (func, *_read_overload(func))
        _, self.call, self.name, self.overload, self.writes_first_arg, self.kind = facts


#: id(OpOverload) -> (the overload, held so its id stays its own, then what _read_overload says). Reading
#: a schema's arguments builds a Python object per argument: 15-70 us per overload in a profiled step, paid
#: by every profile's first call of each overload before this cache.
_overload_facts: dict = {}


def _read_overload(func) -> tuple:
    """(call, name, overload name, writes_first_arg, kind) of an OpOverload."""
    call = _op_callable(func)  # what func(...) calls, minus OpOverload.__call__'s Python frame
    schema = func._schema
    name = schema.name
    first = schema.arguments[0] if schema.arguments else None
    writes_first_arg = bool(first is not None and first.alias_info is not None and first.alias_info.is_write)
    if name.startswith("profiler::_record_function_enter"):
        kind = "scope_enter"
    elif name.startswith("profiler::_record_function_exit"):
        kind = "scope_exit"
    else:
        kind = "op"
    return call, name, func._overloadname, writes_first_arg, kind


class OpRecorder(torch_compat.TorchDispatchMode):
    """Records ops while ``recording`` is true; passes them through untouched otherwise."""

    def __init__(self, session, gpu: GpuBackend | None = None):
        super().__init__()
        self.session = session
        self.gpu = gpu  # a GPU backend: push/pop the op's id around it (CUPTI external correlation)
        self.next_id = session.next_id  # record ids: unique across the profile's start/stop segments
        self.raw = session.raw_ops
        self._recording = False
        self.max_ops = session.max_ops - len(session.records.ops)  # the cap counts earlier start/stops too
        self.stack_depth = session.stack_depth
        self.param_names = session.param_names
        self._infos: dict = {}
        self.op_infos = session.op_infos  # _OpInfo by index, for finalize.py
        self.dispatch_ns = dispatch_cost_ns()  # what routing a record_function op into this hook costs
        if native is not None and gpu is None:  # the C hook (with a GPU backend, the Python one pushes ids)
            hook = native.Hook(
                raw=self.raw,
                max_ops=self.max_ops,
                stack_depth=self.stack_depth,
                new_info=self.op_info,
                scope=self._scope,
                hit_cap=session.hit_cap,
                next_id=self.next_id,
                peek_seq=_peek_seq,
                graph_task=_graph_task,
                grad_enabled=_grad_enabled,
                current_node=_current_node,
                node_seq=_node_seq,
                param_names=self.param_names,
                creates_copy_slices=_creates_copy_slices,
                context=context,
                tensor_type=_Tensor,
                internal_code=callsite._internal_code,
                is_internal=callsite._is_internal,
            )
            if _now is not time.perf_counter_ns:  # a test's clock
                hook.clock = _now
            self.__dict__["_record"] = hook  # shadows the method below
            # __torch_dispatch__ in C too (torch reads the attribute off the mode object): no Python frame per op.
            self.__dict__["__torch_dispatch__"] = native.Dispatch(mode=self, hook=hook, set_eval_frame=_set_eval_frame)

    @property
    def recording(self) -> bool:
        """Whether ops are recorded (the session sets it); false: they pass through untouched."""
        return self._recording

    @recording.setter
    def recording(self, on: bool) -> None:
        self._recording = on
        dispatch = self.__dict__.get("__torch_dispatch__")
        if dispatch is not None:
            dispatch.recording = on

    def op_info(self, func) -> _OpInfo:
        """The _OpInfo of an overload, made on its first sight: both hooks come here once per overload (each keeps
        its own map), and so does an extern call site's op made from an earlier profile's (extern_ops.py)."""
        info = self._infos.get(id(func))
        if info is None:
            info = self._infos[id(func)] = _OpInfo(func, len(self.op_infos))
            self.op_infos.append(info)
        return info

    @classmethod
    def ignore_compile_internals(cls) -> bool:
        """torch.compile'd code runs compiled under the profile: Dynamo does not skip frames for this
        mode, which is off while the compiler runs and on for the compiled code (see compiled.py)."""
        return True

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        """False: torch 2.7+ would wrap ``__torch_dispatch__`` in ``torch._disable_dynamo`` (1.3 µs per op);
        the hook turns Dynamo's frame callback off itself, and its own frame is never compiled (session.py)."""
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        """The pure-Python hook's entry (the C one, ``_hook.Dispatch``, shadows it in the instance dict)."""
        prior = _set_eval_frame(None)  # Dynamo traces neither the hook nor the op, as torch's own wrapper did
        try:
            if not self._recording:
                return func(*args, **kwargs) if kwargs else func(*args)
            return self._record(func, args, kwargs)
        finally:
            _set_eval_frame(prior)

    def _record(self, func, args, kwargs):
        hook_in = _now()
        info = self._infos.get(id(func))  # OpOverload.__hash__ is Python code; overloads live forever
        if info is None:
            info = self.op_info(func)
        if info.kind != "op":
            return self._scope(info, func, args, kwargs, hook_in)
        raw = self.raw
        call = info.call
        if len(raw) >= self.max_ops:  # capped: run the op untouched (no id, no GPU push, no clock)
            self.session.hit_cap()
            return call(*args, **kwargs) if kwargs else call(*args)
        peek = _peek_seq()
        op_id = self.next_id()
        gpu = self.gpu
        start = _now()
        if gpu is None:
            out = call(*args, **kwargs) if kwargs else call(*args)
        else:
            gpu.push(op_id)
            try:
                out = call(*args, **kwargs) if kwargs else call(*args)
            finally:
                gpu.pop()
        end = _now()
        ctx = context
        module = ctx.module
        hooks_before = ctx.hook_ns  # the module/scope hooks' time since the previous op: profiler time
        if hooks_before:
            ctx.hook_ns = 0
        grad = _grad_enabled()
        if _graph_task() == -1:
            direction = ctx.host_dir
            if direction == "fwd":  # host_direction(), inlined: this runs for every op
                if not module:
                    direction = UNDECIDED
            elif direction == "opt":
                if grad:
                    direction = "fwd"
            elif direction == _ZERO_GRAD:
                direction = "opt"
            node, node_seq, param = "", -1, None
        else:
            direction, node, node_seq, param = backward_facts(ctx, self.param_names)
        # Backward ops take their forward op's call site at correlation: no frame walk for them.
        frames = callsite.capture(self.stack_depth) if self.stack_depth and direction != "bwd" else ()
        try:
            # tensor_meta inlined for the common cases: this runs for every argument of every op.
            args_meta = tuple(
                [
                    (tuple(a.shape), a.dtype)
                    if isinstance(a, _Tensor)
                    else tensor_meta(a)
                    if type(a) in _SEQUENCES
                    else a
                    for a in args
                ]
            )
            kwargs_meta = tuple([(k, tensor_meta(v)) for k, v in kwargs.items()]) if kwargs else ()
            out_meta = (tuple(out.shape), out.dtype) if isinstance(out, _Tensor) else tensor_meta(out)
        except RuntimeError:  # a tensor without sizes (nested): describe it, never fail the user's op
            args_meta = tuple([_described(a) for a in args])
            kwargs_meta = tuple([(k, _described(v)) for k, v in kwargs.items()]) if kwargs else ()
            out_meta = _described(out)
        raw.append(
            (
                info.index,
                args_meta,
                kwargs_meta,
                out_meta,
                start,
                end,
                get_ident(),
                peek,
                grad,
                info.writes_first_arg and _creates_copy_slices(args),
                direction,
                node_seq,
                node,
                param,
                module,
                ctx.layers,
                frames,
                op_id,
                hook_in,
                _now(),
                hooks_before,
            )
        )
        return out

    def detach(self) -> None:
        """Stop recording for good and let go of the profile (threads may keep this mode on their stack)."""
        self.recording = False
        self.__dict__.pop("__torch_dispatch__", None)  # the class's method passes ops through from now on
        self.__dict__.pop("_record", None)  # the C hook holds the raw list too
        self.session = self.raw = self.gpu = self.op_infos = self.param_names = None

    def _scope(self, info, func, args, kwargs, hook_in: int):
        """record_function enter/exit: kept as ranges, not ops; Optimizer.step# marks dir=opt and
        enumerate(DataLoader)# dir=other. The hook's time around the call (and the calibrated
        dispatch into it) is added to the thread's ``hook_ns``: the next op carries it.

        Scopes are matched by nesting on the thread (the handle object passed to exit is not
        the one enter returned, so it cannot be matched by identity).
        """
        called = _now()
        out = func(*args, **kwargs) if kwargs else func(*args)
        returned = _now()
        ctx = context
        if info.kind == "scope_enter":
            name = args[0] if args and isinstance(args[0], str) else ""
            direction = _scope_dir(name)
            ctx.scopes.append((name, _now(), direction))
            if direction:
                ctx.scope_dirs.append(direction)
                ctx.host_dir = direction
        elif ctx.scopes:
            name, start, direction = ctx.scopes.pop()
            if direction and ctx.scope_dirs:
                ctx.scope_dirs.pop()
                ctx.host_dir = ctx.scope_dirs[-1] if ctx.scope_dirs else "fwd"
            self.session.add_range(name, start, _now(), get_ident(), "record_function")
        ctx.hook_ns += called - hook_in + _now() - returned + self.dispatch_ns
        return out


def _scope_dir(name: str) -> str:
    """The dir a record_function range gives the ops inside it, "" when it gives none (zero_grad's is
    kept apart from the step's: see _ZERO_GRAD)."""
    if name.startswith(_ZERO_GRAD_PREFIX):
        return _ZERO_GRAD
    return next((direction for prefix, direction in SCOPE_DIRS if name.startswith(prefix)), "")


def warn_cap(max_ops: int) -> None:
    warnings.warn(
        f"pyprof_live: the record cap of {max_ops:,} ops was reached; later ops are not recorded. "
        "Profile fewer steps (profile(steps=...)) or raise profile(max_ops=...).",
        RuntimeWarning,
        stacklevel=3,
    )
