"""Profiles as Apache Arrow tables, saved as Parquet: one file per worker of a run.

One table holds every record of a profile, one row per record: ``record`` says which list it
belongs to (``ops``, ``apis``, ``kernels``, ``memops``, ``ranges``, any later list of records.py)
and ``row`` its position there (what
the link fields point at). The other columns are the record fields of ``records.py``, named as the
fields are and typed by :data:`COLUMNS` (the store's column contract: one Arrow type per field name,
the same wherever the name appears); a field a record type lacks is null in its rows. Link fields
(``parent``, ``fwd``, ``launch``, ``op``) are stored as correlation filled them, so queries
(DuckDB, Dask) can join kernels to their launches and ops; loading a file back into a Profile
drops them and correlates again, as saved profiles do. Devices and ``meta`` travel in the file's
key-value metadata with the schema version.

Each record type is written as its own row groups, so a query on kernels skips the op rows by the
``record`` column's statistics.
"""

from __future__ import annotations

import dataclasses
import json
from operator import attrgetter

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..errors import ProfileFormatError, ProfileVersionError
from ..records import RECORD_TYPES, DeviceInfo
from .files import write_atomically
from .savefile import decode_value, encode_value

FORMAT_NAME = "pyprof_live.columnar"
#: Version of the column contract; a file of a newer version is refused, an older one read.
SCHEMA_VERSION = 1
METADATA_KEY = b"pyprof_live"

#: Record lists stored as rows (Profile.records attributes; the ``record`` column's values). Devices
#: are few and travel in the metadata.
RECORD_LISTS = tuple(name for name in RECORD_TYPES if name != "devices")
LINK_FIELDS = ("parent", "fwd", "launch", "op")

#: Fields whose values are op arguments (TensorMeta, tuples, scalars, Unknown): JSON text, as saved
#: profiles write them, since no single Arrow type holds them all.
_JSON_FIELDS = {"inputs", "outputs", "kwargs"}
_TEXT_LISTS = frozenset({"layer", "callsite"})
_INT_LISTS = frozenset({"grid", "block"})


def _arrow_type(name: str, annotation: str) -> pa.DataType:
    if name in _TEXT_LISTS:
        return pa.list_(pa.string())
    if name in _INT_LISTS:
        return pa.list_(pa.int64())
    if annotation == "int":
        return pa.int64()
    if annotation == "float":
        return pa.float64()
    if annotation == "bool":
        return pa.bool_()
    return pa.string()  # str, and JSON text for argument values and any other structured field


def _contract() -> tuple[dict, dict]:
    """(column name -> Arrow type, list name -> {field: column}). Record types share a column per field
    name; a field whose type differs from the one a column of its name already has (``AllocRecord.device``
    is text, ``KernelRecord.device`` a number) gets a column of its own, ``<list>_<field>``."""
    columns = {"record": pa.string(), "row": pa.int64()}
    column_of: dict = {}
    for list_name in RECORD_LISTS:
        column_of[list_name] = {}
        for field in dataclasses.fields(RECORD_TYPES[list_name]):
            kind = _arrow_type(field.name, str(field.type))
            column = field.name if columns.setdefault(field.name, kind) == kind else f"{list_name}_{field.name}"
            columns[column] = kind
            column_of[list_name][field.name] = column
            if field.type not in ("int", "str", "float", "bool") and field.name not in _TEXT_LISTS | _INT_LISTS:
                _JSON_FIELDS.add(field.name)
    return columns, column_of


#: The store's column contract: column name -> Arrow type, for every record field of records.py.
COLUMNS, _COLUMN_OF = _contract()
SCHEMA = pa.schema(list(COLUMNS.items()))


class _JsonCodec:
    """Op arguments <-> JSON text, memoised: ops of one shape share their argument tuples."""

    def __init__(self):
        self._text: dict = {}
        self._value: dict = {}

    def encode(self, value) -> str:
        try:
            text = self._text.get(value)
        except TypeError:  # an unhashable value (a list inside a tuple): encoded each time
            return json.dumps(encode_value(value), separators=(",", ":"))
        if text is None:
            text = self._text[value] = json.dumps(encode_value(value), separators=(",", ":"))
        return text

    def decode(self, text: str):
        value = self._value.get(text, self)
        if value is self:
            value = self._value[text] = decode_value(json.loads(text))
        return value


def profile_table(profile) -> pa.Table:
    """The records of ``profile`` as one Arrow table of :data:`SCHEMA` (links filled first)."""
    profile.link()  # fills the link fields the table keeps
    codec = _JsonCodec()
    parts = []
    for list_name in RECORD_LISTS:
        records = getattr(profile.records, list_name)
        if not records:
            continue
        field_of = {column: field for field, column in _COLUMN_OF[list_name].items()}
        arrays = []
        for name, kind in COLUMNS.items():
            field = field_of.get(name)
            if name == "record":
                arrays.append(pa.array([list_name] * len(records), kind))
            elif name == "row":
                arrays.append(pa.array(range(len(records)), kind))
            elif field is None:
                arrays.append(pa.nulls(len(records), kind))
            elif field in _JSON_FIELDS:
                arrays.append(pa.array(list(map(codec.encode, map(attrgetter(field), records))), kind))
            else:
                arrays.append(_array(list(map(attrgetter(field), records)), kind))
        parts.append(pa.Table.from_arrays(arrays, schema=SCHEMA))
    table = pa.concat_tables(parts) if parts else SCHEMA.empty_table()
    return table.replace_schema_metadata({METADATA_KEY: json.dumps(_file_metadata(profile)).encode()})


def _array(values: list, kind: pa.DataType) -> pa.Array:
    """An Arrow column; text that is not valid Unicode (a trace's lone surrogate "\\ud800", a file name
    decoded with surrogateescape) cannot be UTF-8 and is stored with "?" in its place."""
    try:
        return pa.array(values, kind)
    except (UnicodeEncodeError, pa.ArrowInvalid):
        if not pa.types.is_string(kind):
            raise
        return pa.array([v.encode("utf-8", "replace").decode() if isinstance(v, str) else v for v in values], kind)


def _file_metadata(profile) -> dict:
    devices = [
        [encode_value(getattr(d, f.name)) for f in dataclasses.fields(DeviceInfo)] for d in profile.records.devices
    ]
    return {
        "format": FORMAT_NAME,
        "version": SCHEMA_VERSION,
        "meta": encode_value(profile.meta),
        "devices": devices,
    }


def write_profile(profile, path) -> None:
    """Save ``profile`` as one Parquet file (atomically: a reader sees no half-written file)."""
    table = profile_table(profile)

    def write(stream) -> None:
        with pq.ParquetWriter(stream, table.schema, compression="zstd") as writer:
            for list_name in RECORD_LISTS:  # one record type per row group
                part = table.filter(pc.equal(table["record"], list_name))
                if part.num_rows:
                    writer.write_table(part, row_group_size=1 << 20)
            if not table.num_rows:
                writer.write_table(table)

    write_atomically(path, write)


def file_metadata(path) -> dict:
    """The pyprof_live metadata of a Parquet file (format, version, meta, devices), checked."""
    try:
        metadata = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowException) as e:
        raise ProfileFormatError(path, f"not a readable Parquet file ({e})") from None
    try:
        document = json.loads(metadata[METADATA_KEY])
    except (KeyError, ValueError):
        raise ProfileFormatError(
            path, "a Parquet file, but not one pyprof_live wrote (no pyprof_live metadata)"
        ) from None
    if not isinstance(document, dict) or document.get("format") != FORMAT_NAME:
        raise ProfileFormatError(path, "a Parquet file, but not a pyprof_live profile")
    version = document.get("version")
    if not isinstance(version, int):
        raise ProfileFormatError(path, "pyprof_live Parquet file without a schema version")
    if version > SCHEMA_VERSION:
        raise ProfileVersionError(
            path,
            f"written by a newer pyprof_live (schema version {version}; this one reads up to "
            f"{SCHEMA_VERSION}): upgrade pyprof_live to read it",
        )
    return document


def read_profile(path) -> tuple[dict, dict]:
    """(record lists by name, meta) of a file written by :func:`write_profile`; links left to correlation."""
    document = file_metadata(path)
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as e:
        raise ProfileFormatError(path, f"damaged Parquet data ({e})") from None
    missing = [name for name in ("record", "row", "name", "start", "end") if name not in table.column_names]
    if missing:
        raise ProfileFormatError(path, f"columnar profile lacks column(s) {', '.join(missing)}")
    try:
        lists = {name: _records(table, name) for name in RECORD_LISTS}
        lists["devices"] = [DeviceInfo(*map(decode_value, values)) for values in document.get("devices") or ()]
        meta = decode_value(document.get("meta") or {"D": {}})
    except (TypeError, ValueError, KeyError, AttributeError) as e:
        raise ProfileFormatError(path, f"columnar profile is damaged ({type(e).__name__}: {e})") from None
    meta["saved_source"] = meta.get("source")
    meta["path"] = str(path)
    return lists, meta


def _records(table: pa.Table, list_name: str) -> list:
    part = table.filter(pc.equal(table["record"], list_name)).sort_by("row")
    # A column missing from the file (it predates the field) leaves the field at its default.
    column_of = _COLUMN_OF[list_name]
    fields = [f for f, column in column_of.items() if f not in LINK_FIELDS and column in table.column_names]
    codec = _JsonCodec()
    columns = []
    for name in fields:
        values = part[column_of[name]].to_pylist()
        if name in _JSON_FIELDS:
            values = list(map(codec.decode, values))
        elif name in _TEXT_LISTS or name in _INT_LISTS:
            values = list(map(tuple, values))
        columns.append(values)
    cls = RECORD_TYPES[list_name]
    return [cls(**dict(zip(fields, values))) for values in zip(*columns)]
