"""Saved profiles (``p.save(path)``) -> Profile; the file format itself is ``store/savefile.py``'s."""

from __future__ import annotations

from ..analysis.peaks import GpuPeak
from ..errors import ProfileFormatError
from ..profile import Profile
from ..store.savefile import read_saved


def load_saved(path) -> Profile:
    """Read a profile written by ``Profile.save``."""
    lists, meta = read_saved(path)
    if "peak" in meta:  # figures chosen with set_peak: the roofline divides by them
        try:
            GpuPeak.from_dict(meta["peak"])
        except (TypeError, ValueError) as error:
            raise ProfileFormatError(path, f"saved profile is damaged (meta.peak: {error})") from None
    return Profile(meta=meta, **lists)
