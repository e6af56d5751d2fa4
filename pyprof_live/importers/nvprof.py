"""nvprof SQLite exports (``nvprof -o net.sql``, ``.nvvp``) -> Profile.

The nvprof dialect differs from Nsight Systems' in every table: strings live in StringTable
(``_id_``, ``value``); kernels in CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (or _KERNEL, when
nvprof ran with ``--analysis-metrics``) with mangled names; API calls in _RUNTIME and _DRIVER,
named only by CUPTI callback id (``cbid``), with ``processId`` and a signed 32-bit ``threadId``;
NVTX ranges in _MARKER as a start row (flags 2) and an end row (flags 4) sharing an ``id``, the
thread packed in ``objectId`` (pid then tid, little-endian). Device rows carry no pid: they get
the pid of the API call that launched them (see :mod:`.launches`). Only API calls that launched
GPU work are kept, as for Nsight Systems.

Kernel names are demangled by the C++ runtime's ``__cxa_demangle`` through cxxfilt (the function
torch's c10::demangle calls in live capture, so names read the same, without importing torch; names
it cannot read stay as they are). API names come from
:func:`pyprof_live.api_names.cupti_api_name` (cupti-python's callback id enums, as for live CUPTI
capture) where cupti-python is installed, else read ``runtime cbid 211``.
"""

from __future__ import annotations

from functools import partial

from ..api_names import cupti_api_name, cupti_names_api_calls
from ..profile import Profile
from ..records import ApiRecord, DeviceInfo, KernelRecord, MemoryRecord
from ._sqlite import LAUNCH_COLUMNS, Schema, Strings, memory_record, require_activity, sort_by_start
from .launches import LaunchingPids
from .nvtx_markers import MARK, PUSH_POP, ranges_from_query

_KERNEL_TABLES = ("CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL", "CUPTI_ACTIVITY_KIND_KERNEL")
_API_TABLES = (("CUPTI_ACTIVITY_KIND_RUNTIME", "runtime"), ("CUPTI_ACTIVITY_KIND_DRIVER", "driver"))
_MEMORY_TABLES = (
    ("CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy"),
    ("CUPTI_ACTIVITY_KIND_MEMCPY2", "memcpy"),
    ("CUPTI_ACTIVITY_KIND_MEMSET", "memset"),
)
_MARKER = "CUPTI_ACTIVITY_KIND_MARKER"
_MARKER_INSTANT, _MARKER_START, _MARKER_END = 1, 2, 4


_KERNEL_INTEGERS = ("start", "end", "deviceId", "streamId", "correlationId", "contextId", *LAUNCH_COLUMNS)
_API_INTEGERS = ("start", "end", "correlationId", "processId", "threadId")
_MEMORY_INTEGERS = ("start", "end", "bytes", "deviceId", "streamId", "correlationId")
_DEVICE_INTEGERS = ("id", "computeCapabilityMajor", "computeCapabilityMinor", "numMultiprocessors", "globalMemorySize")


def integer_columns(schema: Schema) -> list:
    """What this reader reads as integers, for read_export's errors: (table, the rows read, ((column,
    NULL allowed), ...))."""
    required = lambda columns: tuple((column, False) for column in columns)  # noqa: E731
    return [
        *((table, "1", required(_KERNEL_INTEGERS)) for table in _KERNEL_TABLES),
        *((table, _api_rows(schema) or "0", required(_API_INTEGERS)) for table, _ in _API_TABLES),
        *((table, "1", required(_MEMORY_INTEGERS) + (("copyKind", True),)) for table, _ in _MEMORY_TABLES),
        (_MARKER, f"flags IN ({_MARKER_INSTANT}, {_MARKER_START}, {_MARKER_END})", (("timestamp", False),)),
        ("CUPTI_ACTIVITY_KIND_DEVICE", "1", (("id", False),) + tuple((c, True) for c in _DEVICE_INTEGERS[1:])),
    ]


def is_nvprof(schema: Schema) -> bool:
    return schema.has("StringTable") or schema.has("CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL")


def read_nvprof(db, schema: Schema, path, progress) -> Profile:
    strings = Strings(db.execute("SELECT _id_, value FROM StringTable")) if schema.has("StringTable") else Strings()
    progress(0.0, "API calls")
    apis = _apis(db, schema)
    launching_pids = LaunchingPids(apis)
    progress(0.3, "kernels")
    kernels = _kernels(db, schema, strings, launching_pids.pid)
    progress(0.5, "memory copies")
    memops = _memops(db, schema, launching_pids.pid)
    progress(0.6, "NVTX ranges")
    ops, ranges, markers_left_out = _markers(db, schema, strings)
    progress(0.95, "devices")
    require_activity(path, kernels, memops, apis, ops, ranges)
    version = db.execute("SELECT version FROM Version").fetchone() if schema.has("Version") else None
    meta = {"source": "nvprof", "path": str(path), "export": {"nvprof_version": version[0]} if version else {}}
    warnings = launching_pids.warnings()
    if markers_left_out:
        warnings.append(
            f"{markers_left_out} NVTX ranges share their marker id with another range (their start and end rows "
            "cannot be paired): left out"
        )
    if warnings:
        meta["warnings"] = warnings
    used = {k.device for k in kernels} | {m.device for m in memops}
    devices = _devices(db, schema, strings, used)
    progress(1.0, "done")
    return Profile(ops=ops, apis=apis, kernels=kernels, memops=memops, ranges=ranges, devices=devices, meta=meta)


def _gpu_work_correlations(schema: Schema) -> str:
    tables = [t for t in _KERNEL_TABLES if schema.has(t)] + [t for t, _ in _MEMORY_TABLES if schema.has(t)]
    return " UNION ALL ".join(f"SELECT correlationId FROM {t}" for t in tables)


def _api_rows(schema: Schema) -> str | None:
    """The SQL condition of the API calls read: those that launched GPU work; None when there is none."""
    correlations = _gpu_work_correlations(schema)
    return f"correlationId IN ({correlations})" if correlations else None


def _apis(db, schema: Schema) -> list:
    rows_read = _api_rows(schema)
    apis: list[ApiRecord] = []
    for table, kind in _API_TABLES:
        if not schema.has(table) or rows_read is None:
            continue
        name_of = _CallbackNames(kind)
        rows = db.execute(
            f"SELECT cbid, start, end, correlationId, processId, threadId & 4294967295 FROM {table} WHERE {rows_read}"
        )
        apis.extend(
            ApiRecord(name_of[cbid], start, end, correlation, tid, pid, kind)
            for cbid, start, end, correlation, pid, tid in rows
        )
    sort_by_start(apis)
    return apis


def _kernels(db, schema: Schema, strings: Strings, launching_pid) -> list:
    names = _KernelNames(strings)
    kernels: list[KernelRecord] = []
    for table in _KERNEL_TABLES:
        if not schema.has(table):
            continue
        rows = db.execute(
            f"SELECT name, start, end, deviceId, streamId, correlationId, contextId, gridX, gridY, gridZ, "
            f"blockX, blockY, blockZ, registersPerThread, staticSharedMemory, dynamicSharedMemory FROM {table}"
        )
        kernels.extend(
            KernelRecord(
                names[name],
                start,
                end,
                device,
                stream,
                correlation,
                launching_pid(correlation),
                context,
                (gx, gy, gz),
                (bx, by, bz),
                registers,
                shared_static,
                shared_dynamic,
            )
            for (
                name,
                start,
                end,
                device,
                stream,
                correlation,
                context,
                gx,
                gy,
                gz,
                bx,
                by,
                bz,
                registers,
                shared_static,
                shared_dynamic,
            ) in rows
        )
    sort_by_start(kernels)
    return kernels


def _memops(db, schema: Schema, launching_pid) -> list:
    memops: list[MemoryRecord] = []
    for table, kind in _MEMORY_TABLES:
        if not schema.has(table):
            continue
        rows = db.execute(
            f"SELECT start, end, bytes, {schema.column(table, 'copyKind', '0')}, deviceId, streamId, correlationId "
            f"FROM {table}"
        )
        memops.extend(
            memory_record(kind, start, end, size, copy, device, stream, correlation, launching_pid(correlation))
            for start, end, size, copy, device, stream, correlation in rows
        )
    sort_by_start(memops)
    return memops


class _ObjectThreads(dict):
    """MARKER.objectId blob -> (pid, tid): 4 bytes pid then the thread id, little-endian."""

    def __missing__(self, object_id):
        blob = bytes(object_id or b"")
        ids = self[object_id] = (int.from_bytes(blob[0:4], "little"), int.from_bytes(blob[4:8], "little"))
        return ids


def _markers(db, schema: Schema, strings: Strings) -> tuple[list, list, int]:
    """(ops, ranges, markers left out): a range's start and end rows are paired by ``id``; an id that
    two start rows or two end rows carry (a damaged export) cannot be paired, so its ranges are left
    out and counted (joining them anyway would pair every start with every end)."""
    if not schema.has(_MARKER, "flags", "timestamp", "id", "objectId", "name"):
        return [], [], 0
    capture_end = db.execute(f"SELECT max(timestamp) FROM {_MARKER}").fetchone()[0] or 0
    shared_ids = f"SELECT id FROM {_MARKER} WHERE flags IN ({_MARKER_START}, {_MARKER_END}) GROUP BY id, flags HAVING count(*) > 1"
    left_out = db.execute(
        f"SELECT count(*) FROM {_MARKER} WHERE flags = {_MARKER_START} AND id IN ({shared_ids})"
    ).fetchone()[0]
    domain = "s.domain" if schema.has(_MARKER, "domain") else "0"
    query = (
        f"SELECT s.timestamp, "
        f"CASE WHEN s.flags = {_MARKER_INSTANT} THEN s.timestamp ELSE COALESCE(e.timestamp, ?) END AS stop, "
        f"s.objectId, t.value, {domain}, CASE WHEN s.flags = {_MARKER_INSTANT} THEN {MARK} ELSE {PUSH_POP} END "
        f"FROM {_MARKER} AS s "
        f"LEFT JOIN {_MARKER} AS e ON e.id = s.id AND e.flags = {_MARKER_END} AND s.flags = {_MARKER_START} "
        f"LEFT JOIN StringTable AS t ON t._id_ = s.name "
        f"WHERE s.flags = {_MARKER_INSTANT} OR (s.flags = {_MARKER_START} AND s.id NOT IN ({shared_ids}))"
    )
    # A marker's domain is a StringTable id; 0 is the default domain.
    domains = {d: strings[d] if d else "" for (d,) in db.execute(f"SELECT DISTINCT {domain} FROM {_MARKER} AS s")}
    ops, ranges = ranges_from_query(
        db, query, "s.timestamp, stop DESC, s.objectId", (capture_end,), _ObjectThreads(), domains
    )
    return ops, ranges, left_out


def _devices(db, schema: Schema, strings: Strings, used: set) -> list:
    table = "CUPTI_ACTIVITY_KIND_DEVICE"
    if not schema.has(table):
        return []
    rows = db.execute(
        f"SELECT id, name, computeCapabilityMajor, computeCapabilityMinor, numMultiprocessors, globalMemorySize "
        f"FROM {table} ORDER BY id"
    )
    return [
        DeviceInfo(
            device,
            strings[name],
            (major, minor) if major is not None and minor is not None else (),
            sms or 0,
            memory or 0,
            {"used": device in used},
        )
        for device, name, major, minor, sms, memory in rows
    ]


class _CallbackNames(dict):
    """CUPTI callback id -> API name ("cudaLaunchKernel"), named as live CUPTI capture names them."""

    def __init__(self, kind: str):
        super().__init__()
        self.kind = kind
        self.cupti_name = _cupti_api_name(kind)

    def __missing__(self, cbid):
        self[cbid] = name = self.cupti_name(cbid) if self.cupti_name else f"{self.kind} cbid {cbid}"
        return name


def _cupti_api_name(kind: str):
    """``cbid -> name`` for runtime or driver calls, as live capture names them; None without a cupti-python
    that has the callback id enums."""
    return partial(cupti_api_name, kind) if cupti_names_api_calls() else None


class _KernelNames(dict):
    """StringTable id of a mangled kernel name -> its demangled name, each demangled once."""

    def __init__(self, strings: Strings):
        super().__init__()
        self.strings = strings

    def __missing__(self, string_id):
        self[string_id] = name = _demangled(self.strings[string_id])
        return name


def _demangled(name: str) -> str:
    import cxxfilt  # 0.1 s (it looks up the C++ runtime): only nvprof exports need it

    try:
        return cxxfilt.demangle(name)
    except cxxfilt.Error:  # not a valid mangled name, or no C++ runtime found: kept as it is
        return name
