"""Fuzz cases built from the real recordings in ../shared/data, and the check each case must pass.

A case is a file written into a folder: a real Kineto trace (a slice of it), nsys or nvprof export,
or a saved profile of one, with one field given a wrong value: every field of every event category
and table the importers read, each given wrong types, extremes, NULLs and out-of-order values, in
one event/row or in all of them; and hypothesis-generated traces. :func:`run_case` loads it and, if
it loads, puts it through every view, both exports, save -> load and diff. The only acceptable
outcomes are a clean error (a ProfileFormatError of one line naming the file) or a profile that
does all of that; anything else is a traceback, a hang (past the per-case timeout) or a saved file
(``.pplive``, or a run directory's Parquet) that does not load. Shared by tests/test_fuzz_inputs.py (the CI-sized slice) and
benchmarks/fuzz_inputs.py (the long run).
"""

from __future__ import annotations

import contextlib
import gzip
import itertools
import json
import math
import shutil
import signal
import sqlite3
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from pyprof_live.errors import ProfileFormatError
from pyprof_live.importers import load
from pyprof_live.profile import VIEW_NAMES
from pyprof_live.report.diff import diff
from pyprof_live.safe_text import printable
from pyprof_live.store.columnar import write_profile

# ------------------------------------------------------------------------------------------------
# Wrong values

#: JSON values given to trace fields: wrong types, extremes, non-finite numbers, hostile text.
JSON_VALUES = (
    None,
    True,
    0,
    -1,
    1.5,
    2**63,
    -(2**63) - 1,
    2**62 + 1,
    1e308,
    -1e308,
    math.nan,
    math.inf,
    "",
    "x",
    "\ud800\x1b[2J\n\r\x07",
    "9" * 30,
    [],
    [1, [2, "x"]],
    {"k": [1]},
)
#: SQL literals given to export columns: NULL, text, blobs, reals, 64-bit extremes.
SQL_VALUES = (
    "NULL",
    "'x'",
    "'\x1b[2J' || char(10) || 'row'",
    "x'00ff'",
    "1.5",
    "-1",
    "0",
    "9223372036854775807",
    "-9223372036854775808",
    "1e308",
)

#: The trace categories the Kineto importer reads (the rest it skips whole).
KINETO_CATEGORIES = (
    "cpu_op",
    "Operator",
    "user_annotation",
    "cuda_runtime",
    "Runtime",
    "cuda_driver",
    "kernel",
    "Kernel",
    "gpu_memcpy",
    "Memcpy",
    "gpu_memset",
    "Memset",
    "python_function",
    "cpu_instant_event",
)


@dataclass(frozen=True)
class Case:
    """One input: ``write(folder)`` writes it and returns its path."""

    name: str
    write: Callable[[Path], Path]


# ------------------------------------------------------------------------------------------------
# Kineto traces


def read_trace(path: Path) -> dict:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        trace = json.load(f)
    return trace if isinstance(trace, dict) else {"traceEvents": trace}


def trace_slice(path: Path, events: int = 120) -> dict:
    """The trace's header and the events of its first ``events`` read events' time window (capped at
    4 x ``events``): small enough for hundreds of cases, with the trace's own links inside."""
    trace = read_trace(path)
    timed = [e for e in trace["traceEvents"] if isinstance(e.get("ts"), (int, float))]
    read = sorted((e for e in timed if e.get("cat") in KINETO_CATEGORIES), key=lambda e: e["ts"])
    if not read:
        return trace
    last = read[min(events, len(read)) - 1]["ts"]
    start = read[0]["ts"]
    kept = [e for e in timed if start <= e["ts"] <= last][: 4 * events]
    return {**{k: v for k, v in trace.items() if k != "traceEvents"}, "traceEvents": kept}


def trace_fields(trace: dict) -> list[tuple]:
    """Every (category, "event" or "args", key) the slice holds, plus ("header", key) and
    ("deviceProperties", key): the schema as the real trace writes it."""
    fields = {("header", key) for key in trace if key != "traceEvents"}
    properties = trace.get("deviceProperties")
    if isinstance(properties, list) and properties and isinstance(properties[0], dict):
        fields |= {("deviceProperties", key) for key in properties[0]}
    for event in trace["traceEvents"]:
        category = event.get("cat")
        if category not in KINETO_CATEGORIES:
            continue
        fields |= {(category, "event", key) for key in event if key not in ("args", "cat")}
        fields.add((category, "event", "cat"))
        fields |= {(category, "args", key) for key in event.get("args") or {}}
    return sorted(fields, key=str)


def mutated_trace(trace: dict, field: tuple, value, every: bool) -> dict:
    """A copy of ``trace`` with ``field`` set to ``value`` in the first (or ``every``) event holding it."""
    trace = json.loads(json.dumps(trace))
    if field[0] == "header":
        trace[field[1]] = value
        return trace
    if field[0] == "deviceProperties":
        for prop in trace["deviceProperties"][: None if every else 1]:
            prop[field[1]] = value
        return trace
    category, where, key = field
    for event in trace["traceEvents"]:
        if event.get("cat") != category:
            continue
        holder = event.get("args") if where == "args" else event
        if not isinstance(holder, dict) or key not in holder:
            continue
        holder[key] = value
        if not every:
            break
    return trace


def reordered_traces(trace: dict) -> Iterator[tuple[str, dict]]:
    """Out-of-order values: each read category's first event moved 1 s earlier, given a negative
    duration, and the event list reversed."""
    for category in sorted({e.get("cat") for e in trace["traceEvents"]} & set(KINETO_CATEGORIES)):
        for name, change in (
            ("1 s earlier", lambda e: e["ts"] - 1e6),
            ("negative dur", lambda e: -abs(e.get("dur", 1))),
        ):
            copy = json.loads(json.dumps(trace))
            event = next(e for e in copy["traceEvents"] if e.get("cat") == category)
            event["ts" if name == "1 s earlier" else "dur"] = change(event)
            yield f"{category} {name}", copy
    yield "events reversed", {**trace, "traceEvents": trace["traceEvents"][::-1]}


def _trace_writer(trace: dict, name: str, compress: bool) -> Callable[[Path], Path]:
    def write(folder: Path) -> Path:
        path = folder / (name + (".json.gz" if compress else ".json"))
        text = json.dumps(trace).encode("utf-8", "surrogatepass")
        path.write_bytes(gzip.compress(text, 1) if compress else text)
        return path

    return write


def kineto_cases(trace: dict, label: str, values=JSON_VALUES, per_field: int | None = None) -> Iterator[Case]:
    """Every field of ``trace`` given each of ``values`` (or ``per_field`` of them, rotating through
    the list so that every value is used), in the first event and in every event; then reorderings."""
    rotation = itertools.count()
    for field in trace_fields(trace):
        chosen = values if per_field is None else [values[next(rotation) % len(values)] for _ in range(per_field)]
        for value, every in itertools.product(chosen, (False, True)):
            name = f"{label} {'/'.join(map(str, field))}={_short(value)}{' (all)' if every else ''}"
            yield Case(name, _trace_writer(mutated_trace(trace, field, value, every), "trace", every))
    for what, reordered in reordered_traces(trace):
        yield Case(f"{label} {what}", _trace_writer(reordered, "trace", False))


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 24 else text[:21] + "..."


# ------------------------------------------------------------------------------------------------
# SQLite exports (nsys, nvprof)

#: The tables the nsys and nvprof importers read.
SQLITE_TABLES = (
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_DRIVER",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMCPY2",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_MARKER",
    "CUPTI_ACTIVITY_KIND_DEVICE",
    "NVTX_EVENTS",
    "StringIds",
    "StringTable",
    "TARGET_INFO_GPU",
    "TARGET_INFO_CUDA_GPU",
    "TARGET_INFO_CUDA_DEVICE",
    "EXPORT_META_DATA",
    "META_DATA_EXPORT",
    "Version",
)


def export_columns(path: Path) -> list[tuple[str, str]]:
    """(table, column) of every column of the tables the importers read, that ``path`` holds."""
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return [
            (table, column)
            for table in SQLITE_TABLES
            if table in tables
            for (column,) in db.execute(f"SELECT name FROM pragma_table_info('{table}')")
        ]


def _export_writer(source: Path, statements: list[str]) -> Callable[[Path], Path]:
    def write(folder: Path) -> Path:
        path = folder / "export.sqlite"
        shutil.copyfile(source, path)
        with contextlib.closing(sqlite3.connect(path)) as db:
            # Views and triggers (an Extra-P export has some) would stop a table being rebuilt or
            # renamed; the importers read neither.
            for kind, name in db.execute(
                "SELECT type, name FROM sqlite_master WHERE type IN ('view', 'trigger')"
            ).fetchall():
                db.execute(f'DROP {kind.upper()} "{name}"')
            for statement in statements:
                _execute_unconstrained(db, statement)
            db.commit()
        return path

    return write


def _execute_unconstrained(db, statement: str) -> None:
    """Run an UPDATE even where the table forbids its value (NOT NULL, a primary key): a hostile file
    has no such rules, so the table is rebuilt without them (CREATE TABLE ... AS) and it runs again."""
    try:
        db.execute(statement)
    except sqlite3.IntegrityError:
        table = statement.split()[1]
        db.execute(f"CREATE TABLE fuzz_copy AS SELECT * FROM {table}")
        db.execute(f"DROP TABLE {table}")
        db.execute(f"ALTER TABLE fuzz_copy RENAME TO {table}")
        db.execute(statement)


def sqlite_cases(source: Path, label: str, values=SQL_VALUES, per_field: int | None = None) -> Iterator[Case]:
    """Every column of the read tables set to each of ``values`` (or ``per_field`` of them, rotating),
    in the first row and in every row; then each read table's times swapped (end before start),
    rows stored in reverse order, a column renamed and the table dropped."""
    rotation = itertools.count()
    columns = export_columns(source)
    for table, column in columns:
        chosen = values if per_field is None else [values[next(rotation) % len(values)] for _ in range(per_field)]
        for value, every in itertools.product(chosen, (False, True)):
            where = "" if every else f" WHERE rowid = (SELECT min(rowid) FROM {table})"
            statement = f'UPDATE {table} SET "{column}" = {value}{where}'
            yield Case(
                f"{label} {table}.{column}={value}{' (all)' if every else ''}", _export_writer(source, [statement])
            )
    for table in sorted({t for t, _ in columns}):
        names = [c for t, c in columns if t == table]
        if {"start", "end"} <= set(names):
            swap = f"UPDATE {table} SET start = end, end = start WHERE rowid = (SELECT min(rowid) FROM {table})"
            yield Case(f"{label} {table} end before start", _export_writer(source, [swap]))
        reverse = [
            f"CREATE TABLE fuzz_copy AS SELECT * FROM {table} ORDER BY rowid DESC",
            f"DELETE FROM {table}",
            f"INSERT INTO {table} SELECT * FROM fuzz_copy",
            "DROP TABLE fuzz_copy",
        ]
        yield Case(f"{label} {table} rows reversed", _export_writer(source, reverse))
        yield Case(
            f"{label} {table}.{names[0]} renamed",
            _export_writer(source, [f'ALTER TABLE {table} RENAME COLUMN "{names[0]}" TO fuzz_renamed']),
        )
        yield Case(f"{label} {table} dropped", _export_writer(source, [f"DROP TABLE {table}"]))


# ------------------------------------------------------------------------------------------------
# Saved profiles


def saved_document(path: Path) -> dict:
    return json.loads(gzip.decompress(path.read_bytes()))


def saved_cases(document: dict, label: str, values=JSON_VALUES, per_field: int | None = None) -> Iterator[Case]:
    """Every field of every non-empty saved table (first row, every row) and every meta entry given
    each of ``values`` (or ``per_field`` of them, rotating)."""
    rotation = itertools.count()

    def pick():
        return values if per_field is None else [values[next(rotation) % len(values)] for _ in range(per_field)]

    for table, stored in document["records"].items():
        if not stored["rows"]:
            continue
        for at, field in enumerate(stored["fields"]):
            for value, every in itertools.product(pick(), (False, True)):
                damaged = json.loads(json.dumps(document))
                for row in damaged["records"][table]["rows"][: None if every else 1]:
                    row[at] = value
                name = f"{label} saved {table}.{field}={_short(value)}{' (all)' if every else ''}"
                yield Case(name, _saved_writer(damaged))
    for key in document["meta"].get("D", {}):
        for value in pick():
            damaged = json.loads(json.dumps(document))
            damaged["meta"]["D"][key] = value
            yield Case(f"{label} saved meta.{key}={_short(value)}", _saved_writer(damaged))


def _saved_writer(document: dict) -> Callable[[Path], Path]:
    def write(folder: Path) -> Path:
        path = folder / "damaged.pplive"
        path.write_bytes(gzip.compress(json.dumps(document).encode("utf-8", "surrogatepass"), 1))
        return path

    return write


# ------------------------------------------------------------------------------------------------
# Generated traces (hypothesis): what no recording holds

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=6,
)


def _mostly(good):
    """A field that is right 39 times in 40, else any JSON value at all: about one wrong field per
    trace, so that about half of them load and go on through every output."""
    return st.integers(0, 39).flatmap(lambda n: _json if n == 0 else good)


_ids = _mostly(st.integers(-1, 20))
_names = _mostly(
    st.sampled_from(["aten::mm", "aten::addmm", "aten::lstm", "aten::adaptive_avg_pool2d", "ProfilerStep#1", "k"])
)
_shapes = _mostly(st.lists(_mostly(st.lists(st.integers(0, 2**62), max_size=4)), max_size=3))
_args = st.fixed_dictionaries(
    {},
    optional={
        "External id": _ids,
        "external id": _ids,
        "correlation": _ids,
        "Sequence number": _ids,
        "Fwd thread id": _ids,
        "Input Dims": _shapes,
        "Input type": _mostly(
            st.lists(st.sampled_from(["float", "c10::Half", "Scalar", "TensorList", ""]), max_size=3)
        ),
        "Concrete Inputs": _mostly(st.lists(st.sampled_from(["", "1", "[10**12, 4]", "1e308", "True"]), max_size=3)),
        "device": _ids,
        "stream": _ids,
        "bytes": _mostly(st.integers(0, 2**40)),
        "grid": _mostly(st.lists(st.integers(0, 2**31), min_size=3, max_size=3)),
        "Python id": _ids,
        "Python parent id": _ids,
        "Call stack": _mostly(st.sampled_from(["a.py(1): f;b.py(2): g", ""])),
        "Total Allocated": _mostly(st.integers(0, 2**40)),
    },
)
_events = st.fixed_dictionaries(
    {
        "ph": st.just("X"),
        "cat": _mostly(st.sampled_from(KINETO_CATEGORIES)),
        "name": _names,
        "ts": _mostly(st.integers(0, 10**6) | st.floats(0, 1e6)),
        "dur": _mostly(st.integers(-5, 1000)),
        "pid": _ids,
        "tid": _ids,
        "args": _mostly(_args),
    }
)
_devices = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "id": _ids,
            "name": _mostly(st.sampled_from(["NVIDIA H100 80GB HBM3", "Mystery"])),
            "computeMajor": _ids,
            "computeMinor": _ids,
            "numSms": _ids,
            "totalGlobalMem": _ids,
        },
    ),
    max_size=2,
)
_TRACES = st.fixed_dictionaries(
    {"traceEvents": st.lists(_events, max_size=10)}, optional={"deviceProperties": _devices}
)


def generated_traces():
    """Traces of up to 10 events whose fields are usually right and sometimes any JSON value."""
    return _TRACES


# ------------------------------------------------------------------------------------------------
# Running a case


@dataclass(frozen=True)
class Outcome:
    """``kind``: "clean" (refused with a one-line error naming the file), "loaded" (and every output
    worked), "traceback", "hang" or "unloadable" (saved, then refused by load); ``detail`` says
    what happened for the last three."""

    kind: str
    detail: str = ""


class _Expired(BaseException):
    """The per-case deadline passed (a BaseException: no ``except Exception`` of the code under test
    swallows it)."""


@contextlib.contextmanager
def _deadline(seconds: float):
    def expire(signum, frame):
        raise _Expired

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_case(case: Case, folder: Path, timeout: float = 20.0) -> Outcome:
    """Write ``case`` into ``folder`` (emptied first), load it and use it (main thread only: the
    timeout is a SIGALRM)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    path = case.write(folder)
    try:
        with _deadline(timeout):
            return _load_and_use(path, folder)
    except _Expired:
        return Outcome("hang", f"still running after {timeout} s")


def _load_and_use(path: Path, folder: Path) -> Outcome:
    try:
        profile = load(path)
    except ProfileFormatError as error:
        message = str(error)
        if "\n" in message or not message.startswith(printable(str(path)) + ": "):
            return Outcome("traceback", f"error not one line naming the file: {message!r}")
        return Outcome("clean")
    except Exception:  # any other exception is what the fuzz suite looks for
        return Outcome("traceback", "load: " + _last_frame())
    step = "views"
    try:
        for name in VIEW_NAMES:
            str(profile.view(name))
        for fmt in ("csv", "space"):
            profile.table(fmt=fmt)
        step = "exports"
        profile.export_chrome_trace(folder / "out.json.gz")
        profile.save_html(folder / "out.html")
        step = "save"
        profile.save(folder / "saved.pplive")
        write_profile(profile, folder / "worker.parquet")  # a run directory's per-worker file
    except Exception:
        return Outcome("traceback", f"{step}: " + _last_frame())
    try:
        again = load(folder / "saved.pplive")
        load(folder / "worker.parquet")
    except ProfileFormatError as error:
        return Outcome("unloadable", str(error))
    except Exception:
        return Outcome("unloadable", "load of the saved file: " + _last_frame())
    try:
        str(diff(profile, again))
        str(again.table())
    except Exception:
        return Outcome("traceback", "diff: " + _last_frame())
    return Outcome("loaded")


def _last_frame() -> str:
    """The exception and where it was raised, on one line."""
    lines = traceback.format_exc().strip().splitlines()
    frames = [line.strip() for line in lines if line.strip().startswith("File ")]
    return f"{lines[-1]} at {frames[-1] if frames else '?'}"
