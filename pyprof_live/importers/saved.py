"""Saved profiles (``p.save(path)``, a run directory's Parquet files) -> Profile; the file formats
themselves are ``store/savefile.py``'s and ``store/columnar.py``'s."""

from __future__ import annotations

from ..analysis.peaks import GpuPeak
from ..errors import ProfileFormatError
from ..profile import Profile
from ..store.columnar import read_profile
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


def load_columnar(path) -> Profile:
    """Read one worker's Parquet file of a run directory (``profile(logdir=...)``, ``Run.save``)."""
    lists, meta = read_profile(path)
    return Profile(meta=meta, **lists)
