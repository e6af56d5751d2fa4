"""Memory over time, its peak, and what was live at the peak, per device, from a profile's allocations.

Allocated memory after each event is the allocator's own total where the source gives it (Kineto
``Total Allocated``, the CUDA allocator history); otherwise the running sum of the events' bytes,
which starts at 0 when the profile starts (memory allocated before that is not seen: the notes say
so). The peak is the first event at which allocated memory is highest. What was live at the peak:
the allocations made up to it whose block had not been freed by then (a free names its block by
address); each is charged to the op that made it: the op the source says (live capture), else the
innermost op of the same thread whose time span holds the event, and to that op's module.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from dataclasses import dataclass, field

from ..records import NO_LINK


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

    @property
    def peak(self) -> int:
        return self.allocated[self.peak_index] if self.peak_index >= 0 else 0

    @property
    def peak_time(self) -> int:
        return self.times[self.peak_index] if self.peak_index >= 0 else 0


def device_memory(profile) -> list[DeviceMemory]:
    """Per device (CPU first, then GPUs by name), the curve, the peak and the allocations live at it."""
    by_device = defaultdict(list)
    allocs = profile.records.allocs
    for i, a in enumerate(allocs):
        by_device[a.device].append(i)
    result = []
    for device in sorted(by_device, key=lambda d: (d != "cpu", d)):
        indices = sorted(by_device[device], key=lambda i: allocs[i].time)
        memory = DeviceMemory(device)
        memory.totals_known = all(allocs[i].total_allocated >= 0 for i in indices)
        running = 0
        for i in indices:
            a = allocs[i]
            running += a.bytes
            memory.times.append(a.time)
            memory.allocated.append(a.total_allocated if memory.totals_known else running)
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
        items = self.threads.get((pid, tid))
        if not items:
            return NO_LINK
        position = bisect_right(self.starts[(pid, tid)], time) - 1
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
