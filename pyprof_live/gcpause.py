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
def paused_gc(long_lived: bool = False):
    """The collector paused inside. ``long_lived``: what was built inside is there to stay (an
    imported profile's records), so on a normal exit it joins the oldest generation unscanned.
    Left young, every record would be scanned twice more (the first collection after the pause,
    then the middle generation's) only to find no garbage: 1.3 s of a 920k-kernel nsys import.
    The move takes every young object, the caller's too, so the young generations are collected on
    entry: the user's cyclic garbage from before the import is freed now, not promoted unscanned to
    wait for a full collection (cheap: the young generations hold at most a few thousand objects)."""
    collecting = gc.isenabled()
    promote = collecting and long_lived and not gc.get_freeze_count()
    if promote:
        gc.collect(1)
    gc.disable()
    try:
        yield
        if promote and not gc.get_freeze_count():  # again: another thread may have frozen meanwhile
            _into_oldest_generation()
    finally:
        if collecting:
            gc.enable()


def _into_oldest_generation() -> None:
    """Move every tracked object into the oldest generation without a collection: gc.freeze() moves
    them into the permanent generation, gc.unfreeze() puts them into the oldest. Not done when the
    process froze objects itself (unfreezing would hand its frozen heap back to the collector)."""
    gc.freeze()
    gc.unfreeze()
