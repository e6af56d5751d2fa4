"""CUPTI timestamps -> the host clock of the op records (``time.perf_counter_ns``).

CUPTI stamps activity with its own clock (CLOCK_REALTIME-like on Linux, read by
``cupti.get_timestamp()``); ops are stamped with ``perf_counter_ns`` (CLOCK_MONOTONIC). The two
differ by an offset that can slowly change (NTP slews REALTIME), so the offset is measured at
start and at stop and interpolated in between. Each measurement brackets one CUPTI read between
two host reads and keeps the narrowest of several tries: its error is at most half that width.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

#: Bracketed reads per measurement; the narrowest one is kept.
TRIES = 10


@dataclass(frozen=True)
class ClockSample:
    """One CUPTI timestamp and the host time at the middle of the reads around it."""

    cupti_ns: int
    host_ns: int
    width_ns: int  # host time between the two reads around the CUPTI read: the error bound is half of it

    @property
    def offset_ns(self) -> int:
        return self.cupti_ns - self.host_ns


def sample(
    read_cupti: Callable[[], int], read_host: Callable[[], int] = time.perf_counter_ns, tries: int = TRIES
) -> ClockSample:
    """The narrowest of ``tries`` bracketed reads ``host, cupti, host``."""
    best: ClockSample | None = None
    for _ in range(tries):
        before = read_host()
        cupti_ns = read_cupti()
        after = read_host()
        if best is None or after - before < best.width_ns:
            best = ClockSample(cupti_ns, (before + after) // 2, after - before)
    assert best is not None, "tries must be 1 or more"
    return best


class ClockMap:
    """Maps CUPTI times to host times by the offsets measured at start and stop, linearly in between."""

    def __init__(self, first: ClockSample, last: ClockSample):
        self.first = first
        self.last = last
        span = last.cupti_ns - first.cupti_ns
        self._drift_num = last.offset_ns - first.offset_ns if span > 0 else 0
        self._drift_den = span if span > 0 else 1

    @property
    def uncertainty_ns(self) -> int:
        return (max(self.first.width_ns, self.last.width_ns) + 1) // 2

    def to_host(self, cupti_ns: int) -> int:
        """Outside the measured window the nearest measured offset holds: extrapolating a drift
        measured over milliseconds would multiply its measurement error."""
        since = min(max(cupti_ns - self.first.cupti_ns, 0), self._drift_den)
        return cupti_ns - self.first.offset_ns - since * self._drift_num // self._drift_den

    def facts(self) -> dict:
        """What a report or a reader of the saved profile may want to know about the alignment."""
        return {
            "clock_offset_ns": self.first.offset_ns,
            "clock_drift_ns": self.last.offset_ns - self.first.offset_ns,
            "clock_uncertainty_ns": self.uncertainty_ns,
        }
