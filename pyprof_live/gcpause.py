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
            if not gc.get_freeze_count():  # the process froze nothing (a user's freeze stays as it is)
                # What the block built goes to the oldest generation without a young collection
                # traversing it all at the first allocation after: ~5 % of a big import's time.
                gc.freeze()
                gc.unfreeze()
            gc.enable()
