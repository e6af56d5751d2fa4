"""Turn the recorder's raw tuples into OpRecords, after the run (off the hot path).

Sequence numbers are assigned here, per thread, in call order. The rule (see api-brief §4.3):
an op that runs with grad enabled and observes the thread's sequence counter advanced owns the
last new number (autograd created its node just before dispatching it). Two cases the naive rule
gets wrong are handled: an in-place op on a view gets its CopySlices node only after it returns,
so the NEXT advance starts with its number; and numbers taken while grad is disabled belong to an
enclosing custom autograd Function, which has its own record.
"""

from __future__ import annotations

import torch

from ..records import NO_LINK, OpRecord, TensorMeta, Unknown
from . import callsite
from .recorder import (
    R_ARGS, R_DIR, R_END, R_FRAMES, R_OP_INFO, R_GRAD, R_KWARGS, R_LAYERS, R_MODULE, R_NODE,
    R_ID, R_NODE_SEQ, R_OUT, R_PARAM, R_PEEK, R_START, R_TID, R_VIEW_INPLACE,
)

_dtype_names: dict = {}


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
        return TensorMeta(value[0], dtype_name(value[1]))
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (tuple, list)):
        return tuple(to_arg(v) for v in value)
    if isinstance(value, torch.dtype):
        return dtype_name(value)
    if isinstance(value, (torch.device, torch.memory_format, torch.layout)):
        return str(value)
    return Unknown(type(value).__name__)


def build_op_records(raw_ops, op_infos, start_peek: int, start_tid: int, last_peek: dict,
                     frame_cache: dict) -> list[OpRecord]:
    """One OpRecord per raw tuple, in the same order; external_id is the id pushed to the GPU backend.

    ``last_peek`` (tid -> counter value seen last on that thread) carries over between start/stop
    segments; a thread not in it starts from its counter's origin.
    """
    records = []
    pending_copy_slices: dict = {}  # tid -> record of an in-place-on-view op awaiting its number
    # Training steps repeat the same arguments; converting each distinct tuple once also lets the
    # records share their argument tuples.
    converted: dict = {}
    for raw in raw_ops:
        info = op_infos[raw[R_OP_INFO]]
        tid = raw[R_TID]
        base = start_peek if tid == start_tid else 0
        # Types are part of the key: 1, 1.0 and True are equal (and hash alike) but print differently.
        key = (raw[R_ARGS], raw[R_KWARGS], tuple(map(type, raw[R_ARGS])))
        try:
            args_kw = converted.get(key)
        except TypeError:  # an unhashable argument (a nested list): convert without sharing
            key, args_kw = None, None
        if args_kw is None:
            args_kw = (tuple(to_arg(a) for a in raw[R_ARGS]), tuple((k, to_arg(v)) for k, v in raw[R_KWARGS]))
            if key is not None:
                converted[key] = args_kw
        args, kw = args_kw
        node_seq = raw[R_NODE_SEQ]
        param = raw[R_PARAM] or ""
        record = OpRecord(
            name=info.name,
            start=raw[R_START],
            end=raw[R_END],
            tid=tid,
            overload=info.overload,
            dir=raw[R_DIR],
            altseq=node_seq,  # raw here; made relative below, once its counter's thread is known
            node=raw[R_NODE],
            seq_thread=tid,
            inputs=args + tuple(v for _, v in kw),
            outputs=_outputs(raw[R_OUT]),
            kwargs=kw,
            module=raw[R_MODULE] if not param else param.rpartition(".")[0],
            layer=raw[R_LAYERS],
            callsite=callsite.format_frames(raw[R_FRAMES], frame_cache),
            param=param,
            external_id=raw[R_ID],
        )
        peek = raw[R_PEEK]
        previous = last_peek.get(tid, base)  # the profile's start thread is in it from start()
        if peek > previous:
            first_new = previous
            waiting = pending_copy_slices.pop(tid, None)
            if waiting is not None:
                waiting.seq = first_new - base
                first_new += 1
            if first_new < peek and raw[R_GRAD] and record.dir != "bwd":
                record.seq = peek - 1 - base
        else:
            pending_copy_slices.pop(tid, None)
        last_peek[tid] = peek
        if raw[R_VIEW_INPLACE]:
            pending_copy_slices[tid] = record
        records.append(record)
    _relative_node_numbers(records, start_peek, start_tid)
    return records


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


def _outputs(out) -> tuple:
    if _is_tensor_meta(out):
        return (to_arg(out),)
    if isinstance(out, (tuple, list)):
        return tuple(to_arg(o) for o in out)
    return () if out is None else (to_arg(out),)
