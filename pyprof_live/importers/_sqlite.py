"""Reading profiler SQLite exports (Nsight Systems, nvprof): opening, schema probing, bad files.

Every way a file can be unreadable ends in one :class:`ProfileFormatError` naming the file:
missing, empty, not SQLite, truncated, corrupt, a value of the wrong type where a reader needs a
number (a NULL start time, a text globalTid). Files are opened read-only.

Text columns come back as bytes and are decoded where they are used (:func:`decode`), replacing
what is not UTF-8: exports can hold Latin-1 (Windows user names), on which SQLite's decoder fails
the whole query, and a Python ``text_factory`` costs about 1 µs per value of a million-row
table. Texts that repeat (NVTX markers) are decoded once per distinct value by their reader.
"""

from __future__ import annotations

import sqlite3
from operator import attrgetter
from pathlib import Path

from ..errors import ProfileFormatError
from ..gcpause import paused_gc
from ..record_checks import TIME_LIMIT, drop_reversed, first_problem, in_start_order, reversed_warning
from ..records import MemoryRecord
from .input_files import SQLITE_MAGIC, unreadable

#: CUpti_ActivityMemcpyKind, the ``copyKind`` of nsys and nvprof memcpy rows.
COPY_KINDS = {
    1: "HtoD",
    2: "DtoH",
    3: "HtoA",
    4: "AtoH",
    5: "AtoA",
    6: "AtoD",
    7: "DtoA",
    8: "DtoD",
    9: "HtoH",
    10: "PtoP",
    11: "HtoD",
    12: "DtoH",
    13: "DtoD",
}


def memory_record(kind: str, start, end, size, copy, device, stream, correlation, pid) -> MemoryRecord:
    """One row of a memcpy/memset table (nsys and nvprof share the columns; ``copy`` is the copyKind)."""
    direction = COPY_KINDS.get(copy, "") if kind == "memcpy" else ""
    return MemoryRecord(kind, start, end, size, direction, device, stream, correlation, pid)


def decode(value):
    """A text column's bytes -> str (bad bytes replaced); other values pass through."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


class Strings(dict):
    """A string table (id -> text) that names an id it does not hold (or holds as NULL) instead of
    failing; a number stored as the text reads as its digits."""

    def __init__(self, rows=()):
        super().__init__((key, str(decode(text))) for key, text in rows if text is not None)

    def __missing__(self, key):
        return f"<string {key}>"


class Schema:
    """The tables of an export and their columns, read once from sqlite_master."""

    def __init__(self, db: sqlite3.Connection):
        self.columns: dict[str, set] = {}
        rows = db.execute(
            "SELECT m.name, p.name FROM sqlite_master AS m JOIN pragma_table_info(m.name) AS p WHERE m.type = 'table'"
        )
        for table, column in rows:
            self.columns.setdefault(decode(table), set()).add(decode(column))

    def has(self, table: str, *columns: str) -> bool:
        present = self.columns.get(table)
        return present is not None and all(c in present for c in columns)

    def column(self, table: str, column: str, default: str = "NULL") -> str:
        """``column`` when the table has it, else an SQL literal, so one query fits every schema."""
        return f'"{column}"' if column in self.columns.get(table, ()) else default


_start = attrgetter("start")


def sort_by_start(records: list) -> None:
    """Sort a table's records by start time (exports are near-sorted already: this costs little). A NULL
    start fails the sort (TypeError: None < int), a NULL end the record checks; read_export names the row.
    Records already in order (checked in C where built) are not sorted again."""
    if not in_start_order(records):
        records.sort(key=_start)


def require_activity(path, *records: list) -> None:
    """An export with none of the record kinds a profile is made of is an error, not an empty profile."""
    if not any(records):
        raise ProfileFormatError(path, "the export holds no kernels, memory operations, API calls or NVTX ranges")


def _check_header(path: Path) -> None:
    """Empty, non-SQLite and truncated files are told apart here, before SQLite guesses."""
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            header = f.read(100)
    except OSError as error:
        raise unreadable(path, error) from None
    if size == 0:
        raise ProfileFormatError(path, "empty file")
    if not header.startswith(SQLITE_MAGIC):
        raise ProfileFormatError(path, "not an SQLite database")
    if len(header) < 100:
        raise ProfileFormatError(path, "truncated SQLite database (header incomplete)")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    # The page count in the header is valid when its version number matches the change counter.
    if header[24:28] == header[92:96] and pages * page_size > size:
        raise ProfileFormatError(path, f"truncated SQLite database ({size} of {pages * page_size} bytes)")


def read_export(path, reader, integer_columns, fields):
    """``reader(db, schema)`` on the export at ``path``, opened read-only; bad files raise
    ProfileFormatError, never sqlite3 errors nor the TypeError of a NULL where a number belongs.

    The Profile the reader returns is checked against :mod:`pyprof_live.record_checks` (``fields(schema)``:
    {record list: the fields the reader takes from the export}); rows that end before they start
    are left out and counted in ``meta["warnings"]``. ``integer_columns(schema)`` lists what the
    reader reads as integers, as ``(table, SQL condition of the rows it reads, ((column, NULL
    allowed), ...))``: when a value of another type (or a time out of range) fails the reader or
    the checks, the error names the first such value (table, rowid, column), not the Python error.
    """
    path = Path(path)
    _check_header(path)
    with paused_gc(long_lived=True):  # the records stay: no young-generation scans of them after
        profile = _read(path, reader, integer_columns, fields)
    left_out = drop_reversed(profile.records)
    if left_out:
        profile.meta.setdefault("warnings", []).append(reversed_warning(left_out, "rows"))
    return profile


def _read(path: Path, reader, integer_columns, fields):
    try:
        db = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise ProfileFormatError(path, f"cannot open the SQLite database ({error})") from None
    db.text_factory = bytes
    try:
        schema = _schema(path, db)
        try:
            profile = reader(db, schema)
        except (TypeError, ValueError, OverflowError):  # SQLite columns hold any type, NULL too
            problem = None
        else:
            problem = first_problem(profile.records, fields(schema))
            if problem is None:
                return profile
        located = _ill_typed_value(db, schema, integer_columns(schema))
        raise ProfileFormatError(path, located or str(problem or "a value in the export has an unexpected type"))
    except sqlite3.OperationalError as error:  # a table or column this reader needs is not there
        raise ProfileFormatError(path, f"cannot read the export ({error})") from None
    except sqlite3.DatabaseError as error:
        raise ProfileFormatError(path, f"corrupt SQLite database ({error})") from None
    finally:
        db.close()


def _schema(path: Path, db) -> Schema:
    """The export's Schema; a damaged schema text is a corrupt database (SQLite's message quotes the
    text, which may not even be UTF-8: the sqlite3 module then fails to decode its own error)."""
    try:
        return Schema(db)
    except sqlite3.DatabaseError as error:
        raise ProfileFormatError(path, f"corrupt SQLite database ({error})") from None
    except UnicodeDecodeError:
        raise ProfileFormatError(path, "corrupt SQLite database (malformed schema text, not UTF-8)") from None


#: The launch configuration columns of CUPTI's kernel activity record, as both nsys and nvprof name them.
LAUNCH_COLUMNS = (
    "gridX",
    "gridY",
    "gridZ",
    "blockX",
    "blockY",
    "blockZ",
    "registersPerThread",
    "staticSharedMemory",
    "dynamicSharedMemory",
)

#: The record fields nsys and nvprof exports give (read_export's ``fields``): the rest are constants.
FIELDS_FROM_EXPORT = {
    "ops": ("name", "start", "end", "tid", "pid", "seq", "altseq", "external_id", "inputs", "kwargs", "layer"),
    "apis": ("name", "start", "end", "correlation", "tid", "pid"),
    "kernels": (
        "name",
        "start",
        "end",
        "device",
        "stream",
        "correlation",
        "pid",
        "context",
        "grid",
        "block",
        "registers",
        "shared_static",
        "shared_dynamic",
        "graph_id",
        "graph_node_id",
    ),
    "memops": ("start", "end", "bytes", "copy_kind", "device", "stream", "correlation", "pid"),
    "ranges": ("name", "start", "end", "tid", "pid", "domain"),
    "devices": None,
}

#: The SQL list of SQLite types (typeof) an integer column may hold, by whether NULL is allowed.
_ALLOWED_TYPES = {False: "('integer')", True: "('integer', 'null')"}
#: Columns that hold times: their integers must also be within record_checks.TIME_LIMIT.
_TIME_COLUMNS = frozenset({"start", "end", "timestamp"})


def _ill_typed_value(db, schema: Schema, integer_columns: list) -> str | None:
    """The first value of ``integer_columns`` that is not an integer (or a NULL where none is
    allowed, or a time out of range), as "TABLE rowid N: column is text 'x', expected an integer".
    One scan per table; None when every value fits."""
    for table, rows_read, columns in integer_columns:
        columns = [(column, nullable) for column, nullable in columns if schema.has(table, column)]
        if not columns:
            continue
        wrong = " OR ".join(_wrong(column, nullable) for column, nullable in columns)
        types_and_values = ", ".join(f'typeof("{column}"), "{column}"' for column, _ in columns)
        try:
            row = db.execute(
                f"SELECT rowid, {types_and_values} FROM {table} WHERE ({rows_read}) AND ({wrong}) LIMIT 1"
            ).fetchone()
        except sqlite3.Error:  # no rowid, or damage this scan reaches and the reader did not
            continue
        if row is not None:
            for (column, nullable), kind, value in zip(columns, row[1::2], row[2::2]):
                if kind != b"integer" and (kind != b"null" or not nullable):
                    return f"{table} rowid {row[0]}: {column} is {_sqlite_value(kind, value)}, expected an integer"
                if kind == b"integer" and column in _TIME_COLUMNS and abs(value) > TIME_LIMIT:
                    return f"{table} rowid {row[0]}: {column} is {value}, expected a time of at most 2**62 ns"
    return None


def _wrong(column: str, nullable: bool) -> str:
    condition = f'typeof("{column}") NOT IN {_ALLOWED_TYPES[nullable]}'
    if column in _TIME_COLUMNS:
        condition += f' OR "{column}" NOT BETWEEN {-TIME_LIMIT} AND {TIME_LIMIT}'
    return condition


def _sqlite_value(kind: bytes, value) -> str:
    """A value as SQLite types it: NULL, text 'x', a real number 1.5, a blob."""
    if kind == b"text":
        text = decode(value)
        return f"text {text if len(text) <= 40 else text[:39] + '…'!r}"
    return {b"null": "NULL", b"real": f"a real number {value}"}.get(kind, "a blob")
