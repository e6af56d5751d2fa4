"""GPU allocations seen by live capture, for ``p.memory()`` and the dashboard's Memory view (the CPU
side, what each op's outputs allocated, is derived from the op records when asked: analysis/memory.py).

The CUDA caching allocator's own history (``torch.cuda.memory._record_memory_history``, without
stacks, the cheap setting): every block allocated and freed with its address, size and time, on top
of the allocator's totals when recording started, so the curve and the peak are the allocator's.
History someone else was already recording is read, and left running.
"""

from __future__ import annotations

import time

import torch

from ..records import AllocRecord

MAX_HISTORY = 1_000_000  # allocator events kept by torch (a ring buffer)


class CudaHistory:
    """The CUDA allocator's history between start() and stop(), as AllocRecords on the capture clock."""

    def __init__(self, warnings: list):
        self.warnings = warnings  # the profile's: a history that cannot be read is said, never raised
        self.enabled_here = False
        self.baseline: dict = {}
        self.started_us = 0

    def start(self) -> None:
        if not torch.cuda.is_available():
            return
        try:
            devices = range(torch.cuda.device_count())
            self.baseline = {d: (torch.cuda.memory_allocated(d), torch.cuda.memory_reserved(d)) for d in devices}
            self.started_us = time.time_ns() // 1000
            if not any(torch.cuda.memory._snapshot()["device_traces"]):
                torch.cuda.memory._record_memory_history(
                    enabled="all", context=None, stacks="python", max_entries=MAX_HISTORY
                )
                self.enabled_here = True
        except (RuntimeError, AttributeError, AssertionError) as e:
            self.baseline = {}
            self.warnings.append(f"GPU memory was not recorded: the CUDA allocator's history is unavailable ({e})")

    def stop(self, now_ns) -> list:
        """The allocations and frees since start(), their times moved onto ``now_ns``'s clock."""
        if not self.baseline:
            return []
        try:
            traces = torch.cuda.memory._snapshot()["device_traces"]
        finally:
            if self.enabled_here:
                torch.cuda.memory._record_memory_history(enabled=None)
                self.enabled_here = False
        offset = now_ns() - time.time_ns()  # the history's times are wall-clock µs
        allocs = []
        for device, events in enumerate(traces):
            allocated, reserved = self.baseline.get(device, (0, 0))
            for event in events:
                if event.get("time_us", 0) < self.started_us:
                    continue
                action, size = event["action"], event["size"]
                if action == "segment_alloc":
                    reserved += size
                elif action == "segment_free":
                    reserved -= size
                elif action in ("alloc", "free_completed"):
                    change = size if action == "alloc" else -size
                    allocated += change
                    allocs.append(
                        AllocRecord(
                            event["time_us"] * 1000 + offset,
                            change,
                            f"cuda:{device}",
                            event["addr"],
                            allocated,
                            reserved,
                        )
                    )
        self.baseline = {}
        return allocs
