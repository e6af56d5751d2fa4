"""Saved profiles: ``p.save(path)`` and reading them back, the structured successor of PyProf's net.dict.

A gzip'd JSON document holding the raw records and meta, versioned: a file from a newer
pyprof_live is refused with a message saying so. Records are stored column-wise per type (field
names once, then one list of values per record). Link fields are not stored: they are recomputed
on load, so a newer pyprof_live links old files its own way; the facts correlation copies down the
op tree or from forward to backward ops (dir, module, layer, call site, mod) are stored as they
were when the profile was saved. Writing goes to a temporary file that replaces the target only
when complete, so a failed save never leaves half a file.

Loading checks each table against its record type (field names, row lengths, the JSON type of each
field's values) and refuses a file that does not fit: a field missing from a file takes its default
(the file predates it), anything else that does not fit is damage. The checks run per table and
per column in C (``zip``, ``map(type, ...)``), not per value in Python, so loading stays fast.
"""

from __future__ import annotations

import dataclasses
import json
import re
import zlib

from ..errors import ProfileFormatError, ProfileVersionError
from ..gcpause import paused_gc
from ..record_checks import drop_reversed, first_problem, reversed_warning
from ..records import RECORD_TYPES, Records, TensorMeta, Unknown
from .files import write_text_atomically
from .inflate import InflationError, read_gzip

FORMAT_NAME = "pyprof_live.profile"
FORMAT_VERSION = 1
_LINK_FIELDS = {"parent", "fwd", "launch", "op"}
#: Record lists added after format version 1's first files: a file without one holds none of them.
_ADDED_LATER = {"compiles", "allocs"}
#: How a record field's annotated type is written by :func:`encode_value` (tuples become lists).
_JSON_TYPES = {"int": int, "str": str, "tuple": list, "dict": dict, "bool": bool}


def _stored_fields(cls) -> dict:
    """Field name -> JSON type of its saved values, for the fields a saved profile holds, in order."""
    return {f.name: _JSON_TYPES[str(f.type)] for f in dataclasses.fields(cls) if f.name not in _LINK_FIELDS}


#: Per record list: the fields saved, and those a file must hold (no default to fall back on).
_STORED = {name: _stored_fields(cls) for name, cls in RECORD_TYPES.items()}
_REQUIRED = {
    name: [
        f.name
        for f in dataclasses.fields(cls)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    for name, cls in RECORD_TYPES.items()
}


def encode_value(value):
    """Record field values -> JSON: TensorMeta and Unknown are tagged, tuples become lists."""
    if isinstance(value, TensorMeta):
        return {"T": [list(value.shape), value.dtype, None if value.stride is None else list(value.stride)]}
    if isinstance(value, Unknown):
        return {"U": value.what}
    if isinstance(value, (tuple, list)):
        return [encode_value(v) for v in value]
    if isinstance(value, dict):
        return {"D": {str(k): encode_value(v) for k, v in value.items()}}
    if isinstance(value, float) and value != value:
        return {"F": "nan"}
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return {"F": "inf" if value > 0 else "-inf"}
    return value


def decode_value(value):
    if isinstance(value, list):
        return tuple(decode_value(v) for v in value)
    if isinstance(value, dict):
        if "T" in value:
            shape, dtype, stride = value["T"]
            return TensorMeta(tuple(shape), dtype, None if stride is None else tuple(stride))
        if "U" in value:
            return Unknown(value["U"])
        if "D" in value:
            return {k: decode_value(v) for k, v in value["D"].items()}
        if "F" in value:
            return float(value["F"])
    return value


def save(profile, path) -> None:
    """Write ``profile`` to ``path`` (gzip'd JSON), atomically."""
    records = {}
    for name in RECORD_TYPES:
        fields = list(_STORED[name])
        rows = [[encode_value(getattr(r, f)) for f in fields] for r in getattr(profile.records, name)]
        records[name] = {"fields": fields, "rows": rows}
    document = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "meta": encode_value(profile.meta),
        "records": records,
    }
    write_text_atomically(path, lambda out: json.dump(document, out, separators=(",", ":")), compress=True)


_FORMAT_KEY = re.compile(rb'"format"\s*:\s*"' + re.escape(FORMAT_NAME.encode()) + rb'"')


def is_saved_profile(head: bytes) -> bool:
    """Does this decompressed start of a file look like a saved profile?"""
    return _FORMAT_KEY.search(head[:400]) is not None


def read_saved(path) -> tuple[dict, dict]:
    """Read a file written by :func:`save`: (record lists by name, meta); ``importers.saved`` makes the Profile."""
    try:
        document = json.loads(read_gzip(path))
    except InflationError as e:
        raise ProfileFormatError(path, f"not a readable saved profile: it {e}") from None
    except (OSError, EOFError, zlib.error, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ProfileFormatError(path, f"not a readable saved profile ({e})") from None
    except (ValueError, RecursionError) as e:  # an integer of over 4300 digits, arrays nested too deep
        raise ProfileFormatError(path, f"not a readable saved profile ({type(e).__name__}: {e})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT_NAME:
        raise ProfileFormatError(path, "not a pyprof_live saved profile")
    version = document.get("version")
    if not isinstance(version, int):
        raise ProfileFormatError(path, "saved profile has no format version")
    if version > FORMAT_VERSION:
        raise ProfileVersionError(
            path,
            f"saved by a newer pyprof_live (format version {version}; this one reads up to "
            f"{FORMAT_VERSION}): upgrade pyprof_live to read it",
        )
    try:
        with paused_gc():  # records hold no cycles: rescanning the growing heap is wasted time
            tables = document["records"]
            lists = {
                name: [] if name in _ADDED_LATER and name not in tables else _read_table(name, cls, tables[name])
                for name, cls in RECORD_TYPES.items()
            }
            problem = first_problem(Records(**lists))
        if problem is not None:
            raise Damage(str(problem))
        meta = checked_meta(decode_value(document.get("meta") or {"D": {}}))
        meta["saved_source"] = meta.get("source")
        meta["path"] = str(path)
        left_out = drop_reversed(Records(**lists))
        if left_out:
            meta.setdefault("warnings", []).append(reversed_warning(left_out, "records"))
    except Damage as e:
        raise ProfileFormatError(path, f"saved profile is damaged ({e})") from None
    except (KeyError, TypeError, IndexError, ValueError, AttributeError) as e:
        raise ProfileFormatError(path, f"saved profile is damaged ({type(e).__name__}: {e})") from None
    return lists, meta


class Damage(ValueError):
    """What does not fit in a saved profile (a table, a field, the meta); the reader names the file."""


#: The meta entries the views read, and what each must hold.
_TEXT_LISTS = ("warnings", "gpu_notes")


def checked_meta(meta) -> dict:
    """The saved meta (also of a columnar profile), checked where the views read it: lists of lines as
    lists (a loaded profile may get more warnings), text where text is shown; Damage otherwise."""
    if not isinstance(meta, dict):
        raise Damage(f"meta is {type(meta).__name__}, not an object")
    for key in _TEXT_LISTS:
        if key not in meta:
            continue
        lines = meta[key]
        if not isinstance(lines, tuple) or not all(isinstance(line, str) for line in lines):
            raise Damage(f"meta.{key} must be a list of text lines")
        meta[key] = list(lines)
    for key in ("source", "saved_source"):
        if not isinstance(meta.get(key, ""), (str, type(None))):
            raise Damage(f"meta.{key} must be text")
    if not isinstance(meta.get("peak", {}), dict):
        raise Damage("meta.peak must be an object of peak figures")
    return meta


def _read_table(name: str, cls, table) -> list:
    """The records of one saved table, after checking it against ``cls`` table by table, column by column."""
    fields, rows = (table.get("fields"), table.get("rows")) if isinstance(table, dict) else (None, None)
    if not isinstance(fields, list) or not isinstance(rows, list):
        raise Damage(f"{name}: not a table of fields and rows")
    stored = _STORED[name]
    _check_names(name, fields, stored)
    row_types = set(map(type, rows))
    if row_types - {list}:
        raise Damage(f"{name}: a row is not a list ({_type_names(row_types - {list})})")
    try:
        columns = list(zip(*rows, strict=True))
    except ValueError:
        raise Damage(f"{name}: rows of different lengths") from None
    if rows and len(columns) != len(fields):
        raise Damage(f"{name}: {len(fields)} fields named but rows hold {len(columns)} values")
    decoded = []
    for field, column in zip(fields, columns):
        expected = stored[field]
        wrong = set(map(type, column)) - {expected}
        if wrong:
            raise Damage(f"{name}.{field}: values must be {expected.__name__}, not {_type_names(wrong)}")
        decoded.append(list(map(decode_value, column)) if expected in (list, dict) else column)
    return [cls(**dict(zip(fields, values))) for values in zip(*decoded)]


def _check_names(name: str, fields: list, stored: dict) -> None:
    unknown = [f for f in fields if f not in stored]
    if unknown:
        raise Damage(f"{name}: unknown field(s) {', '.join(map(repr, unknown))}")
    twice = sorted({f for f in fields if fields.count(f) > 1})
    if twice:
        raise Damage(f"{name}: field(s) named twice: {', '.join(map(repr, twice))}")
    missing = [f for f in _REQUIRED[name] if f not in fields]
    if missing:
        raise Damage(f"{name}: required field(s) missing: {', '.join(map(repr, missing))}")


def _type_names(types) -> str:
    return ", ".join(sorted(t.__name__ for t in types))
