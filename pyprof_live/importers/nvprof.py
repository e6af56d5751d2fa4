"""nvprof SQLite exports (``nvprof -o net.sql``, ``.nvvp``) -> Profile.

The nvprof dialect differs from Nsight Systems' in every table: strings live in StringTable
(``_id_``, ``value``); kernels in CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (or _KERNEL, when
nvprof ran with ``--analysis-metrics``) with mangled names; API calls in _RUNTIME and _DRIVER,
named only by CUPTI callback id (``cbid``), with ``processId`` and a signed 32-bit ``threadId``;
NVTX ranges in _MARKER as a start row (flags 2) and an end row (flags 4) sharing an ``id``, the
thread packed in ``objectId`` (pid then tid, little-endian). Device rows carry no pid: they get
the pid of the API call that launched them. Only API calls that launched GPU work are kept, as
for Nsight Systems.

Kernel names are demangled with the C++ runtime's ``__cxa_demangle`` where it can be loaded;
API names come from cupti-python's callback id enums where it is installed, else read
``cudaRuntime#211``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from operator import attrgetter

from ..profile import Profile
from ..records import ApiRecord, DeviceInfo, KernelRecord, MemoryRecord
from ._sqlite import COPY_KINDS, Schema, Strings, api_name
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
_by_start = attrgetter("start")


def is_nvprof(schema: Schema) -> bool:
    return schema.has("StringTable") or schema.has("CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL")


def read_nvprof(db, schema: Schema, path, progress) -> Profile:
    strings = Strings(db.execute("SELECT _id_, value FROM StringTable")) if schema.has("StringTable") else Strings()
    progress(0.0, "API calls")
    apis = _apis(db, schema)
    pid_of_launch = {api.correlation: api.pid for api in apis}
    any_pid = apis[0].pid if apis else 0
    progress(0.3, "kernels")
    kernels = _kernels(db, schema, strings, pid_of_launch, any_pid)
    progress(0.5, "memory copies")
    memops = _memops(db, schema, pid_of_launch, any_pid)
    progress(0.6, "NVTX ranges")
    ops, ranges = _markers(db, schema, strings)
    progress(0.95, "devices")
    version = db.execute("SELECT version FROM Version").fetchone() if schema.has("Version") else None
    meta = {"source": "nvprof", "path": str(path), "export": {"nvprof_version": version[0]} if version else {}}
    used = {k.device for k in kernels} | {m.device for m in memops}
    devices = _devices(db, schema, strings, used)
    progress(1.0, "done")
    return Profile(ops=ops, apis=apis, kernels=kernels, memops=memops, ranges=ranges, devices=devices, meta=meta)


def _gpu_work_correlations(schema: Schema) -> str:
    tables = [t for t in _KERNEL_TABLES if schema.has(t)] + [t for t, _ in _MEMORY_TABLES if schema.has(t)]
    return " UNION ALL ".join(f"SELECT correlationId FROM {t}" for t in tables)


def _apis(db, schema: Schema) -> list:
    correlations = _gpu_work_correlations(schema)
    apis = []
    for table, kind in _API_TABLES:
        if not schema.has(table) or not correlations:
            continue
        name_of = _CallbackNames(kind)
        rows = db.execute(
            f"SELECT cbid, start, end, correlationId, processId, threadId & 4294967295 FROM {table} "
            f"WHERE correlationId IN ({correlations})"
        )
        apis.extend(
            ApiRecord(name_of[cbid], start, end, correlation, tid, pid, kind)
            for cbid, start, end, correlation, pid, tid in rows
        )
    apis.sort(key=_by_start)
    return apis


def _kernels(db, schema: Schema, strings: Strings, pid_of_launch: dict, any_pid: int) -> list:
    names = _KernelNames(strings)
    kernels = []
    for table in _KERNEL_TABLES:
        if not schema.has(table):
            continue
        rows = db.execute(
            f"SELECT name, start, end, deviceId, streamId, correlationId, contextId, gridX, gridY, gridZ, "
            f"blockX, blockY, blockZ, registersPerThread, staticSharedMemory, dynamicSharedMemory FROM {table}"
        )
        kernels.extend(
            KernelRecord(names[name], start, end, device, stream, correlation, pid_of_launch.get(correlation, any_pid),
                         context, (gx, gy, gz), (bx, by, bz), registers, shared_static, shared_dynamic)
            for (name, start, end, device, stream, correlation, context, gx, gy, gz, bx, by, bz, registers,
                 shared_static, shared_dynamic) in rows
        )
    kernels.sort(key=_by_start)
    return kernels


def _memops(db, schema: Schema, pid_of_launch: dict, any_pid: int) -> list:
    memops = []
    for table, kind in _MEMORY_TABLES:
        if not schema.has(table):
            continue
        rows = db.execute(
            f"SELECT start, end, bytes, {schema.column(table, 'copyKind', '0')}, deviceId, streamId, correlationId "
            f"FROM {table}"
        )
        memops.extend(
            MemoryRecord(kind, start, end, size, COPY_KINDS.get(copy, "") if kind == "memcpy" else "",
                         device, stream, correlation, pid_of_launch.get(correlation, any_pid))
            for start, end, size, copy, device, stream, correlation in rows
        )
    memops.sort(key=_by_start)
    return memops


class _ObjectThreads(dict):
    """MARKER.objectId blob -> (pid, tid): 4 bytes pid then the thread id, little-endian."""

    def __missing__(self, object_id):
        blob = bytes(object_id or b"")
        ids = self[object_id] = (int.from_bytes(blob[0:4], "little"), int.from_bytes(blob[4:8], "little"))
        return ids


def _markers(db, schema: Schema, strings: Strings) -> tuple[list, list]:
    if not schema.has(_MARKER, "flags", "timestamp", "id", "objectId", "name"):
        return [], []
    capture_end = db.execute(f"SELECT max(timestamp) FROM {_MARKER}").fetchone()[0] or 0
    domain = "s.domain" if schema.has(_MARKER, "domain") else "0"
    query = (
        f"SELECT s.timestamp, "
        f"CASE WHEN s.flags = {_MARKER_INSTANT} THEN s.timestamp ELSE COALESCE(e.timestamp, ?) END AS stop, "
        f"s.objectId, t.value, {domain}, CASE WHEN s.flags = {_MARKER_INSTANT} THEN {MARK} ELSE {PUSH_POP} END "
        f"FROM {_MARKER} AS s "
        f"LEFT JOIN {_MARKER} AS e ON e.id = s.id AND e.flags = {_MARKER_END} "
        f"LEFT JOIN StringTable AS t ON t._id_ = s.name "
        f"WHERE s.flags IN ({_MARKER_START}, {_MARKER_INSTANT})"
    )
    # A marker's domain is a StringTable id; 0 is the default domain.
    domains = {d: strings[d] if d else "" for (d,) in db.execute(f"SELECT DISTINCT {domain} FROM {_MARKER} AS s")}
    return ranges_from_query(db, query, "s.timestamp, stop DESC, s.objectId", (capture_end,), _ObjectThreads(),
                             domains)


def _devices(db, schema: Schema, strings: Strings, used: set) -> list:
    table = "CUPTI_ACTIVITY_KIND_DEVICE"
    if not schema.has(table):
        return []
    rows = db.execute(
        f"SELECT id, name, computeCapabilityMajor, computeCapabilityMinor, numMultiprocessors, globalMemorySize "
        f"FROM {table} ORDER BY id"
    )
    return [
        DeviceInfo(device, strings[name], (major, minor), sms, memory, {"used": device in used})
        for device, name, major, minor, sms, memory in rows
    ]


class _CallbackNames(dict):
    """CUPTI callback id -> API name ("cudaLaunchKernel"), from cupti-python's enums when installed."""

    def __init__(self, kind: str):
        super().__init__()
        self.kind = kind
        self.enum = _cupti_enum(kind)

    def __missing__(self, cbid):
        name = f"{'cudaRuntime' if self.kind == 'runtime' else 'cuDriver'}#{cbid}"
        if self.enum is not None:
            try:
                name = self.enum(cbid).name
            except ValueError:
                pass
        self[cbid] = name = api_name(name)
        return name


def _cupti_enum(kind: str):
    try:
        from cupti import cupti
    except (ImportError, OSError):
        return None
    return cupti.RuntimeApiTraceCbid if kind == "runtime" else cupti.DriverApiTraceCbid


class _KernelNames(dict):
    """StringTable id of a mangled kernel name -> its demangled name, each demangled once."""

    def __init__(self, strings: Strings):
        super().__init__()
        self.strings = strings
        self.demangle = _demangler()

    def __missing__(self, string_id):
        mangled = self.strings[string_id]
        self[string_id] = name = self.demangle(mangled) if self.demangle else mangled
        return name


def _demangler():
    """``__cxa_demangle`` of the C++ runtime through ctypes, or None where it cannot be loaded."""
    try:
        cxx = ctypes.CDLL(ctypes.util.find_library("stdc++") or "libstdc++.so.6")
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        cxa_demangle, free = cxx.__cxa_demangle, libc.free
    except (OSError, AttributeError):
        return None
    cxa_demangle.restype = ctypes.c_void_p
    cxa_demangle.argtypes = (ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int))
    free.argtypes = (ctypes.c_void_p,)

    def demangle(name: str) -> str:
        status = ctypes.c_int()
        result = cxa_demangle(name.encode(), None, None, ctypes.byref(status))
        if not result:
            return name
        try:
            return ctypes.string_at(result).decode("utf-8", "replace")
        finally:
            free(result)

    return demangle
