"""Turn the recorder's raw tuples into OpRecords, after the run (off the hot path).

Sequence numbers are assigned here, per thread, in call order. The rule (measured on torch 2.13):
an op that runs with grad enabled and observes the thread's sequence counter advanced owns the
last new number (autograd created its node just before dispatching it). The cases the naive rule
gets wrong, each with a test in tests/test_capture.py:
- an in-place op on a view gets its CopySlices node only after it returns, so the NEXT advance
  starts with its number;
- an in-place op that must save its input first clones it inside its autograd kernel: the clone
  sees both numbers and owns the last; the in-place op, dispatched next, owns the one before
  (only after a clone: a view op also sees two numbers when autograd rebuilds its input's node);
- a custom autograd Function numbers its node before its forward runs: that number is the
  Function record's, never an op's;
- ops that cannot have created a node own no number and leave the advance they saw to the next op:
  those run with grad disabled (a Function's forward, a saved-tensor pack hook), those without a
  tensor argument (zeros, randn) and detach; a number they saw may be a view's node that autograd
  rebuilt (AsStridedBackward0), which belongs to no op;
- a thread whose counter went down is a new thread that reused the ident: its counter restarted;
- steps that ``profile(steps=...)`` does not record advance the counter unseen: recording
  resumes from the counter's value at that moment (``resyncs``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import fields as dataclass_fields
from operator import itemgetter

import torch

from ..records import NO_LINK, OpRecord, TensorMeta, Unknown
from . import callsite
from .recorder import (
    NESTED_TENSOR,
    R_ARGS,
    R_DIR,
    R_END,
    R_FRAMES,
    R_GRAD,
    R_HOOK_IN,
    R_HOOK_OUT,
    R_HOOKS_BEFORE,
    R_ID,
    R_KWARGS,
    R_LAYERS,
    R_MODULE,
    R_NODE,
    R_NODE_SEQ,
    R_OP_INFO,
    R_OUT,
    R_PARAM,
    R_PEEK,
    R_START,
    R_TID,
    R_VIEW_INPLACE,
    UNDECIDED,
)

#: What an in-place op's autograd kernel calls to save its input, after numbering its own node.
_CLONE = "aten::clone"

#: Ops that take tensors but never create an autograd node.
_NEVER_NUMBERED = frozenset({"aten::detach", "aten::detach_"})

_dtype_names: dict = {}

#: The raw tuple's fields in the order build_op_records unpacks them (recorder.py's R_* positions).
_RAW_FIELDS = itemgetter(
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
)

#: OpRecord's leading fields, in the order build_op_records passes them (positionally: keywords cost
#: twice as much per record); checked at import, so a field inserted in records.py fails loudly here.
_OP_FIELDS = (
    "name",
    "start",
    "end",
    "tid",
    "pid",
    "overload",
    "kind",
    "dir",
    "seq",
    "altseq",
    "node",
    "seq_thread",
    "inputs",
    "outputs",
    "kwargs",
    "module",
    "layer",
    "callsite",
    "mod",
    "param",
    "external_id",
    "graph",
    "origin",
    "overhead",
)
if tuple(f.name for f in dataclass_fields(OpRecord))[: len(_OP_FIELDS)] != _OP_FIELDS:
    raise ImportError("records.OpRecord's fields changed order: update finalize._OP_FIELDS and build_op_records")


def dtype_name(dtype) -> str:
    name = _dtype_names.get(dtype)
    if name is None:
        name = _dtype_names[dtype] = str(dtype).removeprefix("torch.")
    return name


def _is_tensor_meta(value) -> bool:
    return type(value) is tuple and len(value) == 2 and type(value[0]) is tuple and isinstance(value[1], torch.dtype)


def to_arg(value):
    """A recorded argument as records keep it (see records.Arg)."""
    if _is_tensor_meta(value):
        shape = value[0]
        if not all(type(d) is int for d in shape):  # a jagged tensor's ragged dim is a SymInt ("j1")
            shape = tuple(d if type(d) is int else str(d) for d in shape)
        return TensorMeta(shape, dtype_name(value[1]))
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (tuple, list)):
        return tuple(to_arg(v) for v in value)
    if isinstance(value, torch.dtype):
        return dtype_name(value)
    if isinstance(value, (torch.device, torch.memory_format, torch.layout)):
        return str(value)
    return Unknown(type(value).__name__)


def build_op_records(
    raw_ops,
    op_infos,
    start_peek: int,
    start_tid: int,
    last_peek: dict,
    frame_cache: dict,
    function_numbers=frozenset(),
    resyncs=(),
    dispatch_ns: int = 0,
    attribute=None,
) -> list[OpRecord]:
    """One OpRecord per raw tuple, in the same order; external_id is the id pushed to the GPU backend.

    ``last_peek`` (tid -> counter value seen last on that thread) carries over between start/stop
    segments; a thread not in it starts from its counter's origin. ``function_numbers``: (tid,
    number) of the custom autograd Functions' nodes. ``resyncs``: (raw index, tid, counter value)
    where recording resumed after steps that were not recorded. ``dispatch_ns``: the calibrated cost
    of routing one op into the hook and back (capture/overhead.py), added to each op's ``overhead``,
    with the time the module, scope and Function hooks took since the op before (``R_HOOKS_BEFORE``).
    ``attribute``: (frames, module) -> (module, call site) where ops ran FX graph code (fx_graphs.Attribution).
    """
    records = []
    numbers = _SequenceNumbers(start_peek, start_tid, last_peek, function_numbers)
    resync_at = defaultdict(list)
    for index, tid, peek in resyncs:
        resync_at[index].append((tid, peek))
    # Per overload: (name, overload, writes its first argument, never numbered).
    infos = [(i.name, i.overload, i.writes_first_arg, i.name in _NEVER_NUMBERED) for i in op_infos]
    format_frames = callsite.format_frames
    assign = numbers.assign
    fields = _RAW_FIELDS
    record = OpRecord
    # Training steps repeat the same arguments and outputs; converting each distinct combination
    # once also lets the records share their tuples.
    converted: dict = {}
    get = converted.get
    metas: dict = {}  # tensor (shape, dtype) -> TensorMeta: the same shapes recur across many ops
    for index, raw in enumerate(raw_ops):
        if index in resync_at:
            for tid, peek in resync_at[index]:
                numbers.resync(tid, peek)
        (
            info,
            args,
            raw_kwargs,
            out,
            start,
            end,
            tid,
            peek,
            grad,
            view_inplace,
            direction,
            node_seq,
            node,
            param,
            module,
            layers,
            frames,
            op_id,
            hook_in,
            hook_out,
            hooks_before,
        ) = fields(raw)
        name, overload, in_place, never_numbered = infos[info]
        # Types are part of the key: 1, 1.0 and True are equal (and hash alike) but print differently.
        key: tuple | None = (args, raw_kwargs, tuple(map(type, args)), out)
        try:
            arguments = get(key)
        except TypeError:  # an unhashable argument (a nested list): convert without sharing
            key, arguments = None, None
        if arguments is None:
            kw = tuple([(k, _arg(v, metas)) for k, v in raw_kwargs])
            inputs = tuple([_arg(a, metas) for a in args]) + tuple([v for _, v in kw])
            arguments = (inputs, kw, _outputs(out, metas), any(map(_may_hold_tensors, inputs)))
            if key is not None:
                converted[key] = arguments
        inputs, kw, outputs, takes_tensors = arguments
        if attribute is not None and frames:
            module, sites = attribute(frames, module)
        else:
            sites = format_frames(frames, frame_cache)
        if param:
            module = param.rpartition(".")[0]
        else:
            param = ""
        # Positional, in OpRecord's field order (_OP_FIELDS): keywords cost twice as much per record.
        op = record(
            name,
            start,
            end,
            tid,
            0,  # pid
            overload,
            "op",  # kind
            direction,
            NO_LINK,  # seq: assigned below
            node_seq,  # altseq, raw here; made relative below, once its counter's thread is known
            node,
            tid,  # seq_thread
            inputs,
            outputs,
            kw,
            module,
            layers,
            sites,
            "",  # mod
            param,
            op_id,  # external_id
            "",  # graph
            "",  # origin
            start - hook_in + hook_out - end + dispatch_ns + hooks_before,  # overhead
        )
        assign(op, peek, grad and takes_tensors and not never_numbered, view_inplace, in_place)
        records.append(op)
    _relative_node_numbers(records, start_peek, start_tid)
    _decide_directions(records)
    return records


def undecided_direction(seq: int) -> str:
    """An op outside every module and scope is forward when it created an autograd node (a loss
    computed on the model's output); otherwise it is none of fwd, bwd, opt: "other"."""
    return "other" if seq == NO_LINK else "fwd"


def _decide_directions(records) -> None:
    """undecided_direction() for each op outside modules and scopes; a detach right after a forward
    op on its thread is the dispatch mode's detach of that op's saved output: forward too."""
    previous: dict = {}  # tid -> dir of the thread's last op
    for record in records:
        if record.dir == UNDECIDED:
            if record.name in _NEVER_NUMBERED and previous.get(record.tid) == "fwd":
                record.dir = "fwd"
            else:
                record.dir = undecided_direction(record.seq)
        previous[record.tid] = record.dir


class _SequenceNumbers:
    """The per-thread counter walk of the module docstring: which op owns which node number."""

    def __init__(self, start_peek: int, start_tid: int, last_peek: dict, function_numbers):
        self.start_peek = start_peek
        self.start_tid = start_tid
        self.last_peek = last_peek
        self.function_numbers = function_numbers
        self.copy_slices: dict = {}  # tid -> record of an in-place-on-view op awaiting its number
        self.enclosing: dict = {}  # tid -> number left for the in-place op dispatched next

    def resync(self, tid: int, peek: int) -> None:
        self.last_peek[tid] = peek
        self.copy_slices.pop(tid, None)
        self.enclosing.pop(tid, None)

    def assign(self, record, peek: int, may_number: bool, view_inplace: bool, in_place: bool) -> None:
        """``may_number``: the op could have created a node (grad enabled, a tensor argument)."""
        tid = record.tid
        base = self.start_peek if tid == self.start_tid else 0
        previous = self.last_peek.get(tid, base)  # the profile's start thread is in it from start()
        if peek < previous:  # a new thread with a reused ident: its counter started again
            self.resync(tid, 0)
            previous = 0
        enclosing = self.enclosing.pop(tid, None)
        if peek == previous:
            self.copy_slices.pop(tid, None)
            if (
                enclosing is not None
                and may_number
                and in_place
                and record.dir != "bwd"
                and (tid, enclosing) not in self.function_numbers
            ):
                record.seq = enclosing - base
        elif may_number:
            first_new = previous
            waiting = self.copy_slices.pop(tid, None)
            if waiting is not None:
                waiting.seq = first_new - base
                first_new += 1
            last_new = peek - 1
            if first_new <= last_new and record.dir != "bwd" and (tid, last_new) not in self.function_numbers:
                record.seq = last_new - base
                if first_new < last_new and record.name == _CLONE:
                    self.enclosing[tid] = last_new - 1
            self.last_peek[tid] = peek
        if view_inplace:
            self.copy_slices[tid] = record


def _may_hold_tensors(value) -> bool:
    """A tensor argument, or one that may be (a list holding tensors; a nested tensor is kept as text)."""
    if isinstance(value, TensorMeta) or (isinstance(value, str) and value.startswith(NESTED_TENSOR)):
        return True
    return type(value) is tuple and any(isinstance(v, TensorMeta) for v in value)


def _relative_node_numbers(records, start_peek: int, start_tid: int) -> None:
    """A backward op's node was numbered by the thread that ran its forward op. Backward on CPU runs
    on the thread that called backward(); CUDA backward runs on autograd's own threads, which ran
    no forward op: their nodes come from the thread that started the profile."""
    forward_threads = {r.tid for r in records if r.seq != NO_LINK} | {start_tid}
    for r in records:
        if r.altseq == NO_LINK:
            continue
        r.seq_thread = r.tid if r.tid in forward_threads else start_tid
        r.altseq -= start_peek if r.seq_thread == start_tid else 0


def _outputs(out, metas=None) -> tuple:
    if _is_tensor_meta(out):
        return (_arg(out, metas),)
    if isinstance(out, (tuple, list)):
        return tuple([_arg(o, metas) for o in out])
    return () if out is None else (_arg(out, metas),)


def _arg(value, metas: dict | None):
    """to_arg(value), each tensor's TensorMeta made once per distinct (shape, dtype) through ``metas``."""
    if metas is None:
        return to_arg(value)
    if type(value) is tuple and len(value) == 2 and type(value[0]) is tuple and isinstance(value[1], torch.dtype):
        try:
            meta = metas.get(value)
        except Exception:  # a jagged tensor's SymInt dim may not hash: convert without sharing
            return to_arg(value)
        if meta is None:
            meta = metas[value] = to_arg(value)
        return meta
    if isinstance(value, (tuple, list)):  # a tensor list (aten::cat's): its tensors share too
        return tuple([_arg(v, metas) for v in value])
    return to_arg(value)
