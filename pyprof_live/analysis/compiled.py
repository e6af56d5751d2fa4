"""What torch.compile'd records mean for the views (records.py: kinds ``compiled`` and ``fused``).

A kernel call is an innermost op: the ATen ops fused into it hang from it but have no time, so
they never make it a parent for time, rows or module totals, and are never rows themselves. Its
flops are the sum of its fused ops' formulas on their nodes' shapes; its bytes are its own
arguments', read and written once (fusion removes the intermediate traffic).
"""

from __future__ import annotations

from collections import defaultdict

from ..formulas import Cost, evaluate
from ..formulas.work import FormulaInputError, Work, traffic_bytes
from ..records import COMPILED, FUSED, NO_LINK, TensorMeta


def timed_parents(ops) -> set:
    """Indices of the ops that enclose another op in time (a kernel call's fused ops do not count)."""
    return {op.parent for op in ops if op.parent != NO_LINK and op.kind != FUSED}


def fused_children(ops) -> dict:
    """Kernel call index -> indices of the ATen ops fused into it, in record order."""
    children = defaultdict(list)
    for i, op in enumerate(ops):
        if op.kind == FUSED and op.parent != NO_LINK:
            children[op.parent].append(i)
    return children


class OpCosts:
    """``costs(i)``: flops and bytes of op ``i``, a kernel call's from its fused ops (correlation must have run)."""

    def __init__(self, ops):
        self.ops = ops
        self.fused = fused_children(ops) if any(op.kind == COMPILED for op in ops) else {}

    def __call__(self, i: int) -> Cost:
        op = self.ops[i]
        if op.kind != COMPILED:
            return evaluate(op)
        return kernel_call_cost(op, [self.ops[j] for j in self.fused.get(i, ())])


def kernel_call_cost(call, fused) -> Cost:
    """Flops = the sum of the fused ops' (na if one has no formula, or none is known); bytes = the
    tensors the kernel reads and writes, each once."""
    flops: int | None = 0
    reason = ""
    if not fused:
        flops, reason = None, "the ops fused into this kernel are not known"
    for op in fused:
        cost = evaluate(op)
        if cost.flops is None:
            flops, reason = None, f"fused {op.name}: {cost.reason}"
            break
        flops = (flops or 0) + cost.flops
    try:
        tensors = [t for t in (*call.inputs, *call.outputs) if isinstance(t, TensorMeta)]
        size = traffic_bytes(Work(0, reads=tuple(tensors[: _reads(call)]), writes=tuple(tensors[_reads(call) :])))
    except FormulaInputError as e:
        size, reason = None, reason or e.reason
    return Cost(flops, size, reason)


def _reads(call) -> int:
    return sum(1 for t in call.inputs if isinstance(t, TensorMeta))


def fused_text(ops, indices) -> str:
    """The fused ops of a kernel call as the table shows them, grouped by the user's op they came
    from: ``native_layer_norm(var_mean rsqrt add mul sub) add``."""
    groups: dict = {}
    for j in indices:
        op = ops[j]
        origin = _short(op.origin or op.name)
        groups.setdefault(origin, []).append(_short(op.name))
    parts = []
    for origin, names in groups.items():
        if all(name == origin for name in names):
            parts.append(origin if len(names) == 1 else f"{origin}x{len(names)}")
        else:
            parts.append(f"{origin}({' '.join(names)})")
    return " ".join(parts)


def _short(name: str) -> str:
    return name.removeprefix("aten::")
