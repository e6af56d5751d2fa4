"""paused_gc: the collector is off inside and back on after; long_lived hands what was built to the
oldest generation without a collection, frees the caller's young cyclic garbage first (not promoted
with it), and leaves a process's own frozen objects frozen."""

import gc
import weakref

import pytest

from pyprof_live.gcpause import paused_gc


class _Node:
    """A tracked object (instances of a class are always tracked by the collector)."""


def _in_generation(obj, generation: int) -> bool:
    return any(o is obj for o in gc.get_objects(generation=generation))


@pytest.fixture
def collecting():
    """The collector on, but never run by itself during a test (a collection would move young objects)."""
    was, thresholds = gc.isenabled(), gc.get_threshold()
    gc.set_threshold(1 << 30, 1 << 30, 1 << 30)
    gc.enable()
    yield
    gc.set_threshold(*thresholds)
    (gc.enable if was else gc.disable)()


def test_paused_inside_and_enabled_after(collecting):
    with paused_gc():
        assert not gc.isenabled()
        young = _Node()
    assert gc.isenabled()
    assert _in_generation(young, 0)  # a plain pause leaves new objects young


def test_long_lived_objects_join_the_oldest_generation(collecting):
    with paused_gc(long_lived=True):
        kept = _Node()
        assert _in_generation(kept, 0)
    assert gc.isenabled()
    assert _in_generation(kept, 2) and not _in_generation(kept, 0)


def test_long_lived_frees_young_cyclic_garbage_instead_of_promoting_it(collecting):
    gc.collect()
    cycle = _Node()
    cycle.self = cycle  # unreachable once the name is gone, freed only by a collection
    gone = weakref.ref(cycle)
    del cycle
    assert gone() is not None  # young garbage: no collection ran since (thresholds are huge)
    with paused_gc(long_lived=True):
        pass
    # promoted with the records, it would wait in the oldest generation for a full collection
    assert gone() is None


def test_long_lived_keeps_a_frozen_heap_frozen(collecting):
    frozen = _Node()
    gc.freeze()
    try:
        count = gc.get_freeze_count()
        with paused_gc(long_lived=True):
            young = _Node()
        # not unfrozen (that empties the permanent generation); the count itself may drop by the few
        # frozen objects freed meanwhile by their reference count (frames, another thread's objects)
        assert gc.get_freeze_count() > count // 2
        assert not _in_generation(frozen, 2)
        assert _in_generation(young, 0)  # nothing moved: that would need an unfreeze
    finally:
        gc.unfreeze()


def test_long_lived_keeps_a_heap_frozen_while_it_ran_frozen(collecting):
    # As when another thread freezes (before forking workers) while an import runs: the move at the end
    # would unfreeze that heap, so it is not made.
    frozen = _Node()
    try:
        with paused_gc(long_lived=True):
            gc.freeze()
        # still frozen (the count may drop by a few frozen objects freed since, such as frames)
        assert gc.get_freeze_count() > 0 and not _in_generation(frozen, 2)
    finally:
        gc.unfreeze()


def test_long_lived_not_applied_when_the_body_raises(collecting):
    with pytest.raises(ValueError), paused_gc(long_lived=True):
        young = _Node()
        raise ValueError
    assert gc.isenabled() and _in_generation(young, 0)


def test_collector_left_off_when_it_was_off(collecting):
    gc.disable()
    with paused_gc(long_lived=True):
        young = _Node()
    assert not gc.isenabled()
    assert _in_generation(young, 0)
