"""Saved profiles (``p.save(path)``) -> Profile; the file format itself is ``store/savefile.py``'s."""

from __future__ import annotations

from ..profile import Profile
from ..store.savefile import read_saved


def load_saved(path) -> Profile:
    """Read a profile written by ``Profile.save``."""
    lists, meta = read_saved(path)
    return Profile(meta=meta, **lists)
