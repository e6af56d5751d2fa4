"""Pause Python's cyclic garbage collector while pyprof_live itself builds records.

Records hold no reference cycles, but building hundreds of thousands of them makes the collector
rescan the growing heap again and again (a third of an import, most of a live profile's stop).
Only our own code (and the user's registered formulas it calls) runs inside: the profiled code
never runs with the collector paused.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def paused_gc():
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
