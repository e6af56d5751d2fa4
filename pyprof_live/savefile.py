"""Saved profiles: ``p.save(path)`` and reading them back, the structured successor of PyProf's net.dict.

A gzip'd JSON document holding the raw records and meta, versioned: a file from a newer
pyprof_live is refused with a message saying so. Records are stored column-wise per type (field
names once, then one list of values per record). Link fields are not stored: they are recomputed
on load, so a newer pyprof_live links old files its own way; the facts correlation copies down the
op tree or from forward to backward ops (dir, module, layer, call site, mod) are stored as they
were when the profile was saved. Writing goes to a temporary file that replaces the target only
when complete, so a failed save never leaves half a file.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import re
import zlib

from .errors import ProfileFormatError, ProfileVersionError
from .records import RECORD_TYPES, TensorMeta, Unknown
from .render.files import write_text_atomically

FORMAT_NAME = "pyprof_live.profile"
FORMAT_VERSION = 1
_LINK_FIELDS = {"parent", "fwd", "launch", "op"}


def _encode(value):
    """Record field values -> JSON: TensorMeta and Unknown are tagged, tuples become lists."""
    if isinstance(value, TensorMeta):
        return {"T": [list(value.shape), value.dtype, None if value.stride is None else list(value.stride)]}
    if isinstance(value, Unknown):
        return {"U": value.what}
    if isinstance(value, (tuple, list)):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {"D": {str(k): _encode(v) for k, v in value.items()}}
    if isinstance(value, float) and value != value:
        return {"F": "nan"}
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return {"F": "inf" if value > 0 else "-inf"}
    return value


def _decode(value):
    if isinstance(value, list):
        return tuple(_decode(v) for v in value)
    if isinstance(value, dict):
        if "T" in value:
            shape, dtype, stride = value["T"]
            return TensorMeta(tuple(shape), dtype, None if stride is None else tuple(stride))
        if "U" in value:
            return Unknown(value["U"])
        if "D" in value:
            return {k: _decode(v) for k, v in value["D"].items()}
        if "F" in value:
            return float(value["F"])
    return value


def save(profile, path) -> None:
    """Write ``profile`` to ``path`` (gzip'd JSON), atomically."""
    records = {}
    for name, cls in RECORD_TYPES.items():
        fields = [f.name for f in dataclasses.fields(cls) if f.name not in _LINK_FIELDS]
        rows = [[_encode(getattr(r, f)) for f in fields] for r in getattr(profile.records, name)]
        records[name] = {"fields": fields, "rows": rows}
    document = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "meta": _encode(profile.meta), "records": records}
    write_text_atomically(path, lambda out: json.dump(document, out, separators=(",", ":")), compress=True)


_FORMAT_KEY = re.compile(rb'"format"\s*:\s*"' + re.escape(FORMAT_NAME.encode()) + rb'"')


def is_saved_profile(head: bytes) -> bool:
    """Does this decompressed start of a file look like a saved profile?"""
    return _FORMAT_KEY.search(head[:400]) is not None


def load_saved(path):
    """Read a file written by :func:`save`."""
    from .profile import Profile

    try:
        with gzip.open(path, "rb") as f:
            document = json.loads(f.read())
    except (OSError, EOFError, zlib.error, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ProfileFormatError(path, f"not a readable saved profile ({e})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT_NAME:
        raise ProfileFormatError(path, "not a pyprof_live saved profile")
    version = document.get("version")
    if not isinstance(version, int):
        raise ProfileFormatError(path, "saved profile has no format version")
    if version > FORMAT_VERSION:
        raise ProfileVersionError(
            path, f"saved by a newer pyprof_live (format version {version}; this one reads up to "
                  f"{FORMAT_VERSION}): upgrade pyprof_live to read it")
    try:
        lists = {}
        for name, cls in RECORD_TYPES.items():
            block = document["records"][name]
            known = {f.name for f in dataclasses.fields(cls)}
            fields = block["fields"]
            keep = [i for i, f in enumerate(fields) if f in known]
            lists[name] = [cls(**{fields[i]: _decode(row[i]) for i in keep}) for row in block["rows"]]
        meta = _decode(document.get("meta") or {"D": {}})
        meta["saved_source"] = meta.get("source")
        meta["path"] = str(path)
    except (KeyError, TypeError, IndexError, ValueError, AttributeError) as e:
        raise ProfileFormatError(path, f"saved profile is damaged ({type(e).__name__}: {e})") from None
    return Profile(meta=meta, **lists)
