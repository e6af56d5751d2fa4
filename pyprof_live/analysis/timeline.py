"""Step time breakdown: where each training step's wall time went, as TensorBoard's profiler plugin showed it.

Every instant of a step is charged to the highest-priority activity running then:
kernel > memcpy > memset > runtime (CUDA API calls on the host) > dataloader (``enumerate(DataLoader)#``
ranges) > cpu_exec (host ops) > other (none of these: Python, waiting). So GPU work hides the host
work it overlaps. The GPU is busy when a kernel, memcpy or memset runs (the first three parts); idle
otherwise.

``profiler`` is the time live capture spent in its own hooks (``OpRecord.overhead``: measured around
each op and in the module, record_function and Function hooks before it, plus the calibrated cost of
routing each op into the hook, capture/overhead.py). That time
lies outside every op's own interval, so the sweep first charged it to what was around it: it is
taken back from ``other``, then (inside a DataLoader fetch or a recorded Python function) from
``dataloader`` and ``cpu_exec``. The eight parts add up to the step's duration exactly.

Steps are the live ``p.step()`` ranges (RangeRecord kind ``step``), else Kineto's ``ProfilerStep#N``
record_function ranges, else one window spanning the whole profile.

Time torch.compile spent compiling inside a step (CompileRecords) is cut out of it before anything
else and kept apart (``Step.compile``): a step's duration is what the step takes to run.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

from ..records import DATALOADER_PREFIX

CATEGORIES = ("kernel", "memcpy", "memset", "runtime", "dataloader", "cpu_exec", "profiler", "other")
#: Where the profiler's own time is taken back from, in order (see the module docstring).
_PROFILER_SOURCES = ("other", "dataloader", "cpu_exec")
DEVICE_CATEGORIES = ("kernel", "memcpy", "memset")
WHOLE_PROFILE = "(whole profile)"
_PROFILER_STEP = re.compile(r"ProfilerStep#\d+$")
_SWEPT = tuple(c for c in CATEGORIES if c not in ("profiler", "other"))  # categories with intervals


@dataclass
class Step:
    """One step's window and its time per category (ns)."""

    name: str
    start: int
    end: int
    time: dict = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    compile: int = 0  # ns torch.compile spent compiling inside the window: not part of the step

    @property
    def duration(self) -> int:
        return self.end - self.start - self.compile

    @property
    def gpu_busy(self) -> int:
        return sum(self.time[c] for c in DEVICE_CATEGORIES)


def step_windows(profile) -> list[tuple[str, int, int]]:
    """(name, start, end) of each step, in time order; overlapping steps are cut where the next begins."""
    ranges = profile.records.ranges
    steps = [r for r in ranges if r.kind == "step"] or [r for r in ranges if _PROFILER_STEP.match(r.name)]
    if not steps:
        span = _span(profile)
        return [(WHOLE_PROFILE, *span)] if span else []
    steps = sorted(steps, key=lambda r: (r.start, r.end))
    windows = []
    for i, r in enumerate(steps):
        end = min(r.end, steps[i + 1].start) if i + 1 < len(steps) else r.end
        if end > r.start:
            windows.append((r.name, r.start, end))
    return windows


def _span(profile):
    records = profile.records
    items = [*records.ops, *records.apis, *records.kernels, *records.memops] or list(records.ranges)
    if not items:
        return None
    return min(x.start for x in items), max(x.end for x in items)


def _intervals(profile) -> list[list[tuple[int, int]]]:
    """Intervals of compiling, then of each category in _SWEPT order."""
    records = profile.records
    memops = records.memops
    return [
        [(c.start, c.end) for c in records.compiles],
        [(k.start, k.end) for k in records.kernels],
        [(m.start, m.end) for m in memops if m.kind == "memcpy"],
        [(m.start, m.end) for m in memops if m.kind == "memset"],
        [(a.start, a.end) for a in records.apis],
        [(r.start, r.end) for r in records.ranges if r.name.startswith(DATALOADER_PREFIX)],
        [(o.start, o.end) for o in records.ops],
    ]


def step_breakdown(profile) -> list[Step]:
    """Each step with its wall time split by priority into CATEGORIES (one sweep over all intervals)."""
    steps = [Step(name, start, end) for name, start, end in step_windows(profile)]
    if not steps:
        return []
    starts = [s.start for s in steps]
    events = []  # (time, category, +1 start / -1 end); step edges are (time, -1, 0) cut points
    for category, intervals in enumerate(_intervals(profile)):
        for start, end in intervals:
            if end > start:
                events.append((start, category, 1))
                events.append((end, category, -1))
    for s in steps:
        events.append((s.start, -1, 0))
        events.append((s.end, -1, 0))
    events.sort()
    swept = 1 + len(_SWEPT)
    active = [0] * swept  # compiling, then the _SWEPT categories
    previous = events[0][0]
    for time, category, delta in events:
        if time > previous:
            w = bisect_right(starts, previous) - 1
            if w >= 0 and previous < steps[w].end:
                top = next((c for c in range(swept) if active[c]), None)
                if top == 0:
                    steps[w].compile += time - previous
                else:
                    steps[w].time[_SWEPT[top - 1] if top is not None else "other"] += time - previous
            previous = time
        if category >= 0:
            active[category] += delta
    _charge_profiler_time(profile, steps, starts)
    return steps


def _charge_profiler_time(profile, steps, starts) -> None:
    """Move each step's profiler time (overhead of the ops that started in it) out of what the sweep
    charged it to."""
    own = [0] * len(steps)
    for op in profile.records.ops:
        if op.overhead:
            w = bisect_right(starts, op.start) - 1
            if w >= 0 and op.start < steps[w].end:
                own[w] += op.overhead
    for step, amount in zip(steps, own):
        for source in _PROFILER_SOURCES:
            taken = min(amount, step.time[source])
            step.time[source] -= taken
            step.time["profiler"] += taken
            amount -= taken
