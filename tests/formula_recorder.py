"""Real, schema-ordered OpRecords for formula tests, from a tiny TorchDispatchMode of our own.

Formula tests must not hand-type argument layouts they could get wrong; running the real torch op
and recording what the dispatcher saw gives the exact schema order with every default filled in
(as Kineto records them) and strides, the real output shapes and dtypes. Live capture records
only the arguments passed (no defaults, no strides); tests that need that form use it directly.
"""

from __future__ import annotations

import torch

from pyprof_live.formulas import Cost, opargs, registry
from pyprof_live.records import OpRecord, TensorMeta
from pyprof_live.torch_compat import TorchDispatchMode, current_autograd_node, op_schema

# Metadata queries the dispatcher routes through a mode; they are not ops a profile shows.
_METADATA_OPS = {
    "aten::sym_size",
    "aten::sym_stride",
    "aten::sym_numel",
    "aten::sym_storage_offset",
    "aten::is_contiguous",
    "aten::size",
    "aten::stride",
    "aten::dim",
    "prim::layout",
    "prim::device",
    "aten::numel",
    "aten::storage_offset",
    "aten::is_non_overlapping_and_dense",
    "aten::is_strides_like_format",
    "aten::sym_is_contiguous",
}


def to_arg(value):
    """A torch argument as records keep it: TensorMeta, tuple of args, or a plain value."""
    if isinstance(value, torch.Tensor):
        return TensorMeta(tuple(value.shape), str(value.dtype).removeprefix("torch."), tuple(value.stride()))
    if isinstance(value, (list, tuple)):
        return tuple(to_arg(v) for v in value)
    if isinstance(value, torch.dtype):
        return str(value).removeprefix("torch.")
    if isinstance(value, (torch.device, torch.layout, torch.memory_format)):
        return str(value)
    return value


def live_style_record(func, args, kwargs, out, dir: str = "") -> OpRecord:
    """The OpRecord as live capture makes it: the arguments as passed (no defaults), keyword-only ones also
    named in ``kwargs``, tensors without strides."""

    def strip(value):
        if isinstance(value, TensorMeta):
            return value._replace(stride=None)
        return tuple(strip(v) for v in value) if isinstance(value, tuple) else value

    full = op_record(func, args, kwargs, out, dir)
    named = tuple((k, strip(to_arg(v))) for k, v in kwargs.items())
    return OpRecord(
        name=full.name,
        overload=full.overload,
        start=0,
        end=0,
        dir=dir,
        inputs=tuple(strip(to_arg(a)) for a in args) + tuple(v for _, v in named),
        kwargs=named,
        outputs=strip(full.outputs),
    )


def op_record(func, args, kwargs, out, dir: str = "") -> OpRecord:
    """The OpRecord of one dispatched call: every schema argument in order, defaults filled in."""
    schema = func._schema
    values = []
    for index, argument in enumerate(schema.arguments):
        if index < len(args):
            values.append(args[index])
        elif argument.name in kwargs:
            values.append(kwargs[argument.name])
        else:
            values.append(argument.default_value if argument.has_default_value() else None)
    # Outputs flattened as live capture keeps them: a list return (split, _foreach_add) is its tensors.
    outputs = () if out is None else tuple(out) if isinstance(out, (tuple, list)) else (out,)
    return OpRecord(
        name=schema.name,
        overload=func._overloadname,
        start=0,
        end=0,
        dir=dir,
        inputs=tuple(to_arg(v) for v in values),
        outputs=tuple(to_arg(v) for v in outputs),
    )


class OpRecorder(TorchDispatchMode):
    """Records every aten call made while active (list ``ops``), tagging backward ones ``bwd``."""

    def __init__(self, live_style: bool = False):
        super().__init__()
        self.ops: list[OpRecord] = []
        self._make = live_style_record if live_style else op_record

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if func._schema.name not in _METADATA_OPS:
            direction = "bwd" if current_autograd_node() is not None else "fwd"
            self.ops.append(self._make(func, args, kwargs, out, direction))
        return out


def record(fn, *args, live_style: bool = False, **kwargs) -> tuple[list[OpRecord], object]:
    """Run ``fn(*args, **kwargs)`` under the recorder; its OpRecords and its result. ``live_style``: record
    as live capture does (arguments as passed) instead of Kineto's every-argument form."""
    with OpRecorder(live_style) as recorder:
        result = fn(*args, **kwargs)
    return recorder.ops, result


def record_one(fn, *args, **kwargs) -> OpRecord:
    """The OpRecord of the single aten op ``fn`` dispatches (fails loudly if it is not one op)."""
    ops, _ = record(fn, *args, **kwargs)
    assert len(ops) == 1, [op.name for op in ops]
    return ops[0]


def checked_evaluate(op: OpRecord) -> Cost:
    """evaluate(op), failing if the formula read an argument under a position and name that torch's
    schema of the recorded overload disagrees on (positions past the overload's arguments are fine:
    the formula's default applies)."""
    accessed = []
    original = opargs.OpArgs.value

    def spy(self, index, name, *default):
        accessed.append((index, name))
        return original(self, index, name, *default)

    opargs.OpArgs.value = spy
    try:
        cost = registry._evaluate(op)  # not evaluate(): a cached answer would skip the formula and the check
    finally:
        opargs.OpArgs.value = original
    schema = op_schema(op.name, "" if op.overload == "default" else op.overload)
    wrong = [
        (index, name, schema.arguments[index].name)
        for index, name in accessed
        if index < len(schema.arguments) and schema.arguments[index].name != name
    ]
    assert not wrong, f"{op.name}.{op.overload}: formula reads (position, name, schema name) {wrong}"
    return cost


def cost_of(fn, *args, **kwargs) -> Cost:
    """Cost of the single aten op ``fn`` dispatches, with its argument positions checked against the schema,
    and checked to be the same when recorded as live capture does (only a broadcast, stride-0 input may
    change the bytes: without strides it cannot be read once per stored element)."""
    live_ops, _ = record(fn, *args, live_style=True, **kwargs)
    return checked_evaluate_both(record_one(fn, *args, **kwargs), live_ops[0])


def checked_evaluate_both(full: OpRecord, live: OpRecord) -> Cost:
    """checked_evaluate of the full (Kineto-style) record, asserting the live-style record of the same call
    costs the same (the bytes may differ only when an input was broadcast with stride 0)."""
    cost, live_cost = checked_evaluate(full), checked_evaluate(live)
    broadcast = any(0 in (t.stride or ()) for t in full.inputs if isinstance(t, TensorMeta))
    assert live_cost == (cost._replace(bytes=live_cost.bytes) if broadcast else cost), (full.name, cost, live_cost)
    return cost
