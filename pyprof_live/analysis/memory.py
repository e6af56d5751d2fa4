"""Memory over time, its peak, and what was live at the peak, per device, from a profile's allocations.

Allocated memory after each event is the allocator's own total where the source gives it (Kineto
``Total Allocated``, the CUDA allocator history); otherwise the running sum of the events' bytes,
which starts at 0 when the profile starts (memory allocated before that is not seen: the notes say
so). The peak is the first event at which allocated memory is highest. What was live at the peak:
the allocations made up to it whose block had not been freed by then (a free names its block by
address); each is charged to the op that made it: the op the source says (live capture), else the
innermost op of the same thread whose time span holds the event, and to that op's module.

A live CPU profile has no allocator events: there, each op's outputs that its schema does not
declare aliases of its inputs (views, in-place and ``out=`` results are aliases) are new storage,
numel x element size, charged to the op. Frees are not seen, so the CPU then has what each op
allocated, and no curve and no peak.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache

from ..formulas.dtypes import itemsize
from ..records import NO_LINK, AllocRecord, TensorMeta


@dataclass
class DeviceMemory:
    """One device's memory curve and its peak."""

    device: str
    times: list = field(default_factory=list)  # ns, one per allocation or free
    allocated: list = field(default_factory=list)  # bytes after each event
    reserved: list = field(default_factory=list)  # bytes after each event, or empty when not known
    peak_index: int = -1
    totals_known: bool = True  # allocated comes from the allocator, not from summing events
    live_at_peak: list = field(default_factory=list)  # AllocRecord indices
    addresses_known: bool = True
    frees_known: bool = True  # else the records say what was allocated, not what was live when

    @property
    def peak(self) -> int:
        return self.allocated[self.peak_index] if self.peak_index >= 0 else 0

    @property
    def peak_time(self) -> int:
        return self.times[self.peak_index] if self.peak_index >= 0 else 0


def device_memory(profile) -> list[DeviceMemory]:
    """Per device (CPU first, then GPUs by name), the curve, the peak and the allocations live at it."""
    by_device = defaultdict(list)
    allocs = allocations(profile)
    for i, a in enumerate(allocs):
        by_device[a.device].append(i)
    result = []
    for device in sorted(by_device, key=lambda d: (d != "cpu", d)):
        indices = sorted(by_device[device], key=lambda i: allocs[i].time)
        memory = DeviceMemory(device)
        memory.totals_known = all(allocs[i].total_allocated >= 0 for i in indices)
        memory.frees_known = any(allocs[i].bytes < 0 for i in indices)
        running = 0
        for i in indices:
            a = allocs[i]
            running += a.bytes
            memory.times.append(a.time)
            memory.allocated.append(a.total_allocated if memory.totals_known else running)
        if not memory.frees_known and not memory.totals_known:
            result.append(memory)  # allocations only (live CPU outputs): no curve, no peak
            continue
        if all(allocs[i].total_reserved >= 0 for i in indices):
            memory.reserved = [allocs[i].total_reserved for i in indices]
        top = max(memory.allocated)
        memory.peak_index = memory.allocated.index(top)
        memory.addresses_known = all(allocs[i].addr for i in indices)
        if memory.addresses_known:
            live = {}
            for i in indices[: memory.peak_index + 1]:
                a = allocs[i]
                if a.bytes > 0:
                    live[a.addr] = i
                else:
                    live.pop(a.addr, None)
            memory.live_at_peak = sorted(live.values(), key=lambda i: allocs[i].time)
        result.append(memory)
    return result


@lru_cache(maxsize=4096)
def _fresh_outputs(name: str, overload: str) -> tuple | None:
    """Per return of the op's schema: True when it is new storage (no alias annotation); None when the
    op has no schema torch knows (a wrapped function, a custom op of another library)."""
    import torch

    namespace, _, op = name.partition("::")
    try:
        schema = getattr(getattr(getattr(torch.ops, namespace), op), overload or "default")._schema
    except (AttributeError, RuntimeError):
        return None
    return tuple(r.alias_info is None for r in schema.returns)


def output_allocations(ops) -> list:
    """AllocRecords for the new storage of each op's outputs (CPU, live), in time order."""
    allocs = []
    for i, op in enumerate(ops):
        if op.kind != "op" or not op.outputs:
            continue
        fresh = _fresh_outputs(op.name, op.overload)
        if fresh is None:
            continue
        total = 0
        for is_new, out in zip(fresh, op.outputs):
            metas = (out,) if isinstance(out, TensorMeta) else out if isinstance(out, tuple) else ()
            for meta in metas:
                size = itemsize(meta.dtype) if isinstance(meta, TensorMeta) else None
                if is_new and size:
                    total += math.prod(meta.shape) * size
        if total:
            allocs.append(AllocRecord(op.end, total, "cpu", tid=op.tid, pid=op.pid, by_op=i))
    allocs.sort(key=lambda a: a.time)
    return allocs


def allocations(profile) -> list:
    """The profile's allocation records; for a live CPU profile (no GPU, no allocator events), what
    each op's outputs allocated, derived from its records (see :func:`output_allocations`)."""
    records = profile.records
    if records.allocs or profile.meta.get("source") != "live" or records.kernels:
        return records.allocs
    return output_allocations(records.ops)


class OpFinder:
    """The innermost op of a thread whose span holds a time (ops must be correlated: parent links)."""

    def __init__(self, profile):
        profile.correlation  # noqa: B018 - parent links are followed below
        self.ops = profile.records.ops
        per_thread = defaultdict(list)
        for i, op in enumerate(self.ops):
            per_thread[(op.pid, op.tid)].append((op.start, -op.end, i))
        self.threads = {key: sorted(items) for key, items in per_thread.items()}
        self.starts = {key: [s for s, _, _ in items] for key, items in self.threads.items()}

    def op_at(self, pid: int, tid: int, time: int) -> int:
        """The innermost op of that thread running at ``time``; when the source names no thread that
        ran ops (the CUDA allocator's history), the innermost op running then on any thread."""
        if (pid, tid) not in self.threads:
            found = [self._on_thread(key, time) for key in self.threads]
            return max((i for i in found if i != NO_LINK), key=lambda i: self.ops[i].start, default=NO_LINK)
        return self._on_thread((pid, tid), time)

    def _on_thread(self, key, time: int) -> int:
        items = self.threads.get(key)
        if not items:
            return NO_LINK
        position = bisect_right(self.starts[key], time) - 1
        if position < 0:
            return NO_LINK
        # the last op to start before ``time`` (the shortest of those starting together), or the
        # nearest op enclosing it that still runs at ``time``
        i = items[position][2]
        while i != NO_LINK and self.ops[i].end < time:
            i = self.ops[i].parent
        return i

    def op_of(self, alloc) -> int:
        return alloc.by_op if alloc.by_op != NO_LINK else self.op_at(alloc.pid, alloc.tid, alloc.time)
