"""Saved profiles (``p.save(path)``, a run directory's Parquet files) -> Profile; the file formats
themselves are ``store/savefile.py``'s and ``store/columnar.py``'s."""

from __future__ import annotations

from ..analysis.peaks import GpuPeak
from ..errors import ProfileFormatError
from ..profile import Profile
from ..record_checks import drop_reversed, first_problem, reversed_warning
from ..records import Records
from ..store.columnar import read_profile
from ..store.savefile import Damage, checked_meta, read_saved


def load_saved(path) -> Profile:
    """Read a profile written by ``Profile.save`` (read_saved checks its records and meta)."""
    lists, meta = read_saved(path)
    _check_peak(path, meta, "saved profile")
    return Profile(meta=meta, **lists)


def load_columnar(path) -> Profile:
    """Read one worker's Parquet file of a run directory (``profile(logdir=...)``, ``Run.save``),
    checked as a saved profile is (pyprof_live.record_checks, the meta the views read)."""
    lists, meta = read_profile(path)
    try:
        problem = first_problem(Records(**lists))
        if problem is not None:
            raise Damage(str(problem))
        meta = checked_meta(meta)
    except Damage as error:
        raise ProfileFormatError(path, f"columnar profile is damaged ({error})") from None
    _check_peak(path, meta, "columnar profile")
    left_out = drop_reversed(Records(**lists))
    if left_out:
        meta.setdefault("warnings", []).append(reversed_warning(left_out, "records"))
    return Profile(meta=meta, **lists)


def _check_peak(path, meta: dict, what: str) -> None:
    """Figures chosen with set_peak (kept in meta): the roofline divides by them."""
    if "peak" in meta:
        try:
            GpuPeak.from_dict(meta["peak"])
        except (TypeError, ValueError) as error:
            raise ProfileFormatError(path, f"{what} is damaged (meta.peak: {error})") from None
