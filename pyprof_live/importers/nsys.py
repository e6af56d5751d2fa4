"""Nsight Systems SQLite exports (``nsys export --type sqlite``) -> Profile.

One query per table, streamed into records; joins happen in SQLite or in dicts, never a query or
a Python scan per kernel. Works across export schema generations (2020 to 2025 layouts), with
tables missing (NVTX only, no kernels, no export metadata), extra columns (DLProf) and several
processes and GPUs. nvprof exports are recognised and read by :mod:`.nvprof`.

What is read, and what it becomes:

- CUPTI_ACTIVITY_KIND_KERNEL -> KernelRecord (names through StringIds); kept even when no API
  row launched them (correlation counts them as unattributed).
- CUPTI_ACTIVITY_KIND_MEMCPY / _MEMSET -> MemoryRecord (``copyKind`` -> "HtoD", ...).
- CUPTI_ACTIVITY_KIND_RUNTIME -> ApiRecord, runtime (eventClass 0) and driver (1) calls, only
  those that launched a kernel, memcpy or memset of the same process: the rest (cudaGetDevice,
  cudaEventRecord, ...) links no GPU work and would triple the memory of a large import. Rows
  of other classes (67: CUDA backtraces in old exports) repeat the same calls and are skipped.
- NVTX_EVENTS (text, or ``textId`` through StringIds; domains) -> OpRecords and RangeRecords,
  see :mod:`.nvtx_markers`. A range still open at the end of the capture ends with it.
- TARGET_INFO_GPU (+ TARGET_INFO_CUDA_GPU in old exports, TARGET_INFO_CUDA_DEVICE) ->
  DeviceInfo. Display adapters that are not CUDA GPUs (compute capability 0, listed on Windows)
  are left out; GPUs that ran nothing are kept with ``extra["used"] = False``.
- EXPORT_META_DATA / META_DATA_EXPORT -> ``meta["export"]``.

``globalTid`` and ``globalPid`` pack ``pid`` in bits 24..47 and ``tid`` in bits 0..23.
"""

from __future__ import annotations

import re
from functools import partial
from operator import attrgetter

from ..api_names import strip_added_version
from ..errors import ProfileFormatError
from ..profile import Profile
from ..records import ApiRecord, DeviceInfo, KernelRecord, MemoryRecord
from . import nvprof
from ._sqlite import (
    FIELDS_FROM_EXPORT,
    LAUNCH_COLUMNS,
    Schema,
    Strings,
    decode,
    memory_record,
    read_export,
    require_activity,
    sort_by_start,
)
from .launches import unlaunched_warning
from .nvtx_markers import MARK, PUSH_POP, START_END, ranges_from_query
from .spool import read_once

KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
MEMCPY = "CUPTI_ACTIVITY_KIND_MEMCPY"
MEMSET = "CUPTI_ACTIVITY_KIND_MEMSET"
NVTX = "NVTX_EVENTS"

_RUNTIME_CLASS, _DRIVER_CLASS = 0, 1
_NVTX_MARK, _NVTX_PUSH_POP, _NVTX_START_END, _NVTX_DOMAIN_CREATE = 34, 59, 60, 75
_NVTX_RANGE_TYPES = f"({_NVTX_MARK}, {_NVTX_PUSH_POP}, {_NVTX_START_END})"


class _GlobalIds(dict):
    """globalTid / globalPid -> (pid, tid), decoded once per thread so records share the ints."""

    def __missing__(self, global_id):
        ids = self[global_id] = ((global_id >> 24) & 0xFFFFFF, global_id & 0xFFFFFF)
        return ids


class _Dims(dict):
    """A grid or block packed by the query as x << 32 | y << 16 | z (y, z < 65536 in CUDA) -> one
    shared (x, y, z) tuple: kernels repeat a few shapes, and a tuple of three ints costs ~150 bytes."""

    def __missing__(self, packed):
        dims = self[packed] = (packed >> 32, packed >> 16 & 0xFFFF, packed & 0xFFFF)
        return dims


def load_nsys(path, progress=None) -> Profile:
    """Read an Nsight Systems (or nvprof) SQLite export.

    ``progress``, when given, is called as ``progress(fraction, stage)`` between the stages of
    the import (``fraction`` from 0 to 1). Raises ProfileFormatError, naming the file, for a
    file that is missing, empty, not SQLite, truncated, corrupt, not a profiler export, or an
    export that holds no GPU or NVTX activity. A pipe or FIFO is read once, into a temporary file.
    """
    return read_once(_load_file, path, progress=progress)


def _load_file(path, progress=None) -> Profile:
    return read_export(
        path, lambda db, schema: _read(db, schema, path, progress or _silent), _integer_columns, _fields_checked
    )


#: Fields of nsys records this reader makes itself, so they have their type by construction (or the reader
#: fails on the row and read_export names it): pid and tid, bit fields of globalPid/globalTid; a kernel's
#: grid and block, split from one integer its query packs; an op's seq, altseq and external_id, digits of
#: its NVTX text, and its layer names (nvtx_markers parses and bounds them); names and texts, decoded and
#: looked up by the reader (a string-table id it lacks reads "<string N>"). The checks after import skip
#: them (0.11 of their 0.26 s on the emit_nvtx export x2000).
_MADE_BY_READER = {
    "ops": ("name", "tid", "pid", "seq", "altseq", "external_id", "layer"),
    "apis": ("name", "tid", "pid"),
    "kernels": ("name", "pid", "grid", "block"),
    "memops": ("copy_kind", "pid"),
    "ranges": ("name", "tid", "pid", "domain"),
}
_NSYS_FIELDS = {
    records: fields if fields is None else tuple(f for f in fields if f not in _MADE_BY_READER.get(records, ()))
    for records, fields in FIELDS_FROM_EXPORT.items()
}


def _fields_checked(schema: Schema) -> dict:
    """read_export's ``fields``: what the records take from the export as it is stored (nvprof's readers
    store every field as read)."""
    return FIELDS_FROM_EXPORT if nvprof.is_nvprof(schema) else _NSYS_FIELDS


#: Kernel columns read as integers, NULL read as 0 ("not recorded"); the launch dimensions are packed
#: into one integer by the query, so a value of another type must fail there (see ``_dimension``).
_KERNEL_OPTIONAL = ("deviceId", "streamId", "globalPid", "contextId", *LAUNCH_COLUMNS, "graphId", "graphNodeId")
_MEMORY_OPTIONAL = ("bytes", "copyKind", "deviceId", "streamId", "globalPid")


def _integer_columns(schema: Schema) -> list:
    """What the readers read as integers, for read_export's errors: (table, the rows read, ((column,
    NULL allowed), ...))."""
    if nvprof.is_nvprof(schema):
        return nvprof.integer_columns(schema)
    work = (("start", False), ("end", False), ("correlationId", False))
    gpu = ("id", "computeMajor", "computeMinor", "smCount", "totalMemory", "cuDevice")
    return [
        (KERNEL, "1", work + tuple((column, True) for column in _KERNEL_OPTIONAL)),
        (MEMCPY, "1", work + tuple((column, True) for column in _MEMORY_OPTIONAL)),
        (MEMSET, "1", work + tuple((column, True) for column in _MEMORY_OPTIONAL)),
        (RUNTIME, _api_rows(schema) or "0", work + (("globalTid", False),)),
        (NVTX, f"eventType IN {_NVTX_RANGE_TYPES}", (("start", False), ("end", True), ("globalTid", True))),
        ("TARGET_INFO_GPU", "1", tuple((column, column != "id") for column in gpu)),
        ("TARGET_INFO_CUDA_GPU", "1", tuple((column, True) for column in _LEGACY_GPU_COLUMNS)),
        ("TARGET_INFO_CUDA_DEVICE", "1", (("gpuId", True), ("cudaId", True), ("pid", True))),
    ]


def _silent(fraction: float, stage: str) -> None:
    pass


def _read(db, schema: Schema, path, progress) -> Profile:
    if nvprof.is_nvprof(schema):
        return nvprof.read_nvprof(db, schema, path, progress)
    if not any(schema.has(t) for t in (KERNEL, RUNTIME, MEMCPY, MEMSET, NVTX)):
        raise ProfileFormatError(path, "not an Nsight Systems or nvprof export (no CUPTI activity or NVTX tables)")
    strings = Strings(db.execute("SELECT id, value FROM StringIds")) if schema.has("StringIds") else Strings()
    ids = _GlobalIds()
    progress(0.0, "kernels")
    kernels = _kernels(db, schema, strings, ids)
    progress(0.2, "memory copies")
    memops = _memops(db, schema, ids)
    progress(0.3, "API calls")
    apis = _apis(db, schema, strings, ids, kernels + memops)
    progress(0.5, "NVTX ranges")
    ops, ranges = _nvtx(db, schema, ids, max((a.end for a in apis), default=0))
    progress(0.95, "devices")
    require_activity(path, kernels, memops, apis, ops, ranges)
    meta = {
        "source": "nsys",
        "path": str(path),
        "export": _export_meta(db, schema),
    }
    unlaunched = _unlaunched(apis, kernels + memops)
    if unlaunched:
        meta["warnings"] = [unlaunched_warning(unlaunched)]
    devices = _devices(db, schema, {k.device for k in kernels} | {m.device for m in memops})
    progress(1.0, "done")
    return Profile(ops=ops, apis=apis, kernels=kernels, memops=memops, ranges=ranges, devices=devices, meta=meta)


_pid, _correlation = attrgetter("pid"), attrgetter("correlation")


def _unlaunched(apis: list, work: list) -> int:
    """How many of the kernels and memcpy/memsets ``work`` no API call of their process launched."""
    pids = set(map(_pid, apis))
    if len(pids) == 1 and set(map(_pid, work)) <= pids:  # one process (the usual export): counted in C
        return len(work) - sum(map(set(map(_correlation, apis)).__contains__, map(_correlation, work)))
    launched: dict = {}  # pid -> correlation ids of its API calls (ints: no tuple per call)
    for api in apis:
        launched.setdefault(api.pid, set()).add(api.correlation)
    return sum(w.correlation not in launched.get(w.pid, ()) for w in work)


def _kernels(db, schema: Schema, strings: Strings, ids: _GlobalIds) -> list:
    if not schema.has(KERNEL):
        return []

    # A column a layout lacks, or a NULL in it, reads 0 ("not recorded"), as in KernelRecord.
    def col(name: str) -> str:
        return f"COALESCE({schema.column(KERNEL, name, '0')}, 0)"

    dim = partial(_dimension, schema)
    name_id = "demangledName" if schema.has(KERNEL, "demangledName") else col("shortName")
    rows = db.execute(
        f"SELECT start, end, {col('deviceId')}, {col('streamId')}, correlationId, {col('globalPid')}, "
        f"{col('contextId')}, {name_id}, ({dim('gridX')} << 32) | ({dim('gridY')} << 16) | {dim('gridZ')}, "
        f"({dim('blockX')} << 32) | ({dim('blockY')} << 16) | {dim('blockZ')}, "
        f"{col('registersPerThread')}, {col('staticSharedMemory')}, "
        f"{col('dynamicSharedMemory')}, {col('graphId')}, {col('graphNodeId')} "
        f"FROM {KERNEL}"
    )
    kernels: list[KernelRecord] = []
    append = kernels.append
    dims = _Dims()
    for (
        start,
        end,
        device,
        stream,
        correlation,
        global_pid,
        context,
        name,
        grid,
        block,
        registers,
        shared_static,
        shared_dynamic,
        graph,
        graph_node,
    ) in rows:
        append(
            KernelRecord(
                strings[name],
                start,
                end,
                device,
                stream,
                correlation,
                ids[global_pid][0],
                context,
                dims[grid],
                dims[block],
                registers,
                shared_static,
                shared_dynamic,
                graph,
                graph_node,
            )
        )
    sort_by_start(kernels)
    return kernels


def _dimension(schema: Schema, name: str) -> str:
    """SQL of a launch dimension: NULL or absent reads 0; any other non-integer makes the packed value
    NULL (SQLite would read text as 0), so the reader fails and read_export names the row."""
    column = schema.column(KERNEL, name, "0")
    return f"(CASE WHEN typeof({column}) IN ('integer', 'null') THEN COALESCE({column}, 0) END)"


def _memops(db, schema: Schema, ids: _GlobalIds) -> list:
    memops: list[MemoryRecord] = []
    for table, kind in ((MEMCPY, "memcpy"), (MEMSET, "memset")):
        if not schema.has(table):
            continue
        col = lambda name, table=table: f"COALESCE({schema.column(table, name, '0')}, 0)"  # noqa: E731
        rows = db.execute(
            f"SELECT start, end, {col('bytes')}, {col('copyKind')}, {col('deviceId')}, {col('streamId')}, "
            f"correlationId, {col('globalPid')} FROM {table}"
        )
        memops.extend(
            memory_record(kind, start, end, size, copy, device, stream, correlation, ids[global_pid][0])
            for start, end, size, copy, device, stream, correlation, global_pid in rows
        )
    sort_by_start(memops)
    return memops


def _gpu_work_keys(schema: Schema, ids_only: bool = False) -> str:
    """SQL listing (correlationId, pid) of every kernel, memcpy and memset (``ids_only``: correlationId)."""
    selects = []
    for table in (KERNEL, MEMCPY, MEMSET):
        if schema.has(table, "correlationId"):
            pid = "" if ids_only else f", ({schema.column(table, 'globalPid', '0')} >> 24) & 16777215"
            selects.append(f"SELECT correlationId{pid} FROM {table}")
    return " UNION ALL ".join(selects)


def _api_rows(schema: Schema, ids_only: bool = False) -> str | None:
    """The SQL condition of the API calls read: runtime and driver calls that launched GPU work of
    their process (``ids_only``: of any process); None when there is no such work."""
    keys = _gpu_work_keys(schema, ids_only)
    if not keys:
        return None
    event_class = f"eventClass IN ({_RUNTIME_CLASS}, {_DRIVER_CLASS})" if schema.has(RUNTIME, "eventClass") else "1"
    if ids_only:  # only an integer globalTid has a pid: the pair never matches NULL, and no text or real is a thread
        return f"{event_class} AND correlationId IN ({keys}) AND typeof(globalTid) = 'integer'"
    return f"{event_class} AND (correlationId, (globalTid >> 24) & 16777215) IN ({keys})"


def _apis(db, schema: Schema, strings: Strings, ids: _GlobalIds, work: list) -> list:
    """The API calls that launched ``work`` (the kernels and memcpy/memsets read), by _api_rows."""
    if not schema.has(RUNTIME) or _api_rows(schema) is None:
        return []
    # One process (its pid not 0: no GPU row's globalPid was NULL) launched all the work: its calls
    # are found by correlation id alone, cheaper to test in SQL than the (id, pid) pair; another
    # process's calls with a launching id are then dropped here, which leaves what the pair selects.
    work_pids = set(map(_pid, work))
    one_process = len(work_pids) == 1 and 0 not in work_pids
    rows_read = _api_rows(schema, ids_only=one_process)
    event_class = schema.column(RUNTIME, "eventClass", str(_RUNTIME_CLASS))
    rows = db.execute(
        f"SELECT start, end, correlationId, globalTid, nameId, {event_class} FROM {RUNTIME} WHERE {rows_read}"
    )
    names: dict = {}
    apis: list[ApiRecord] = []
    append = apis.append
    for start, end, correlation, global_tid, name_id, event_class in rows:
        name = names.get(name_id)
        if name is None:
            name = names[name_id] = strip_added_version(strings[name_id])
        pid, tid = ids[global_tid]
        kind = "driver" if event_class == _DRIVER_CLASS else "runtime"
        append(ApiRecord(name, start, end, correlation, tid, pid, kind))
    if one_process and set(map(_pid, apis)) - work_pids:
        apis = [api for api in apis if api.pid in work_pids]
    sort_by_start(apis)
    return apis


def _nvtx(db, schema: Schema, ids: _GlobalIds, last_api_end: int) -> tuple[list, list]:
    if not schema.has(NVTX):
        return [], []
    col = partial(schema.column, NVTX)
    last_nvtx, domains = _last_time_and_domains(db, schema)
    # A range never closed lasts to the end of the capture: past every NVTX event and API call.
    capture_end = max(last_nvtx or 0, last_api_end)
    text = "COALESCE(n.text, s.value)" if schema.has(NVTX, "textId") and schema.has("StringIds") else "n.text"
    join = "LEFT JOIN StringIds AS s ON s.id = n.textId" if text != "n.text" else ""
    query = (
        f"SELECT n.start, COALESCE(n.end, CASE WHEN n.eventType = {_NVTX_MARK} THEN n.start ELSE ? END) AS stop, "
        f"COALESCE(n.globalTid, 0), {text}, {col('domainId')}, "
        f"CASE n.eventType WHEN {_NVTX_PUSH_POP} THEN {PUSH_POP} WHEN {_NVTX_START_END} THEN {START_END} "
        f"ELSE {MARK} END "
        f"FROM {NVTX} AS n {join} "
        f"WHERE n.eventType IN {_NVTX_RANGE_TYPES}"
    )
    return ranges_from_query(db, query, "n.start, stop DESC, n.globalTid", (capture_end,), ids, domains)


#: A domain's creation row as _last_time_and_domains' scan writes it: the domainId (an integer or NULL),
#: then the type of its text and the text's bytes in hex.
_DOMAIN_ROW = re.compile(r"(-?\d+|NULL) (text|null) ([0-9A-F]*)\Z")


def _last_time_and_domains(db, schema: Schema) -> tuple:
    """The latest time of any NVTX row, ``max(COALESCE(end, start))``, and the domain names {domainId: name},
    from one scan of NVTX_EVENTS (a scan each cost 0.15 s of the x20000 export): the domain rows come back
    as one text, read back here. Rows that text cannot hold as they are (a domainId or a name that SQLite
    stores as a number or blob) or a database whose text is not UTF-8 are read by a query of their own."""
    domains = {None: "", 0: ""}
    last = f"max(COALESCE(end, start)) FROM {NVTX}"
    if not schema.has(NVTX, "domainId"):
        return db.execute(f"SELECT {last}").fetchone()[0], domains
    written, last_time = db.execute(
        f"SELECT group_concat(CASE WHEN eventType = {_NVTX_DOMAIN_CREATE} THEN "
        f"quote(domainId) || ' ' || typeof(text) || ' ' || hex(text) END, ','), {last}"
    ).fetchone()
    parsed = [_DOMAIN_ROW.match(row) for row in decode(written).split(",")] if written else []
    if all(parsed) and db.execute("PRAGMA encoding").fetchone()[0] == b"UTF-8":
        for domain, kind, hex_text in (row.groups() for row in parsed if row is not None):
            name = bytes.fromhex(hex_text).decode("utf-8", "replace") if kind == "text" else ""
            domains[None if domain == "NULL" else int(domain)] = name
    else:
        rows = db.execute(f"SELECT domainId, text FROM {NVTX} WHERE eventType = {_NVTX_DOMAIN_CREATE}")
        domains.update((domain, str(decode(name) or "")) for domain, name in rows)
    return last_time, domains


def _devices(db, schema: Schema, used: set) -> list:
    table = "TARGET_INFO_GPU"
    if not schema.has(table):
        return []
    col = partial(schema.column, table)
    rows = db.execute(
        f"SELECT {col('id', col('deviceId', '0'))}, name, {col('computeMajor')}, {col('computeMinor')}, "
        f"{col('smCount')}, {col('totalMemory')}, {col('busLocation')}, {col('uuid')}, {col('cuDevice')}, "
        f"{col('chipName')} FROM {table}"
    ).fetchall()
    legacy = _legacy_cuda_gpus(db, schema)
    cuda_ids = _cuda_ids_by_pid(db, schema)
    devices = {}
    for gpu_id, name, major, minor, sms, memory, bus, uuid, cu_device, chip in rows:
        name, bus, uuid, chip = decode(name), decode(bus), decode(uuid), decode(chip)
        if gpu_id in devices:
            continue
        if major is None and gpu_id in legacy:
            major, minor, sms, memory = legacy[gpu_id]
        if major == 0 and not sms:
            continue  # a display adapter that is not a CUDA GPU
        extra = {"used": gpu_id in used}
        for key, value in (("bus_location", bus), ("uuid", uuid), ("cuda_device", cu_device), ("chip", chip)):
            if value is not None:
                extra[key] = value
        if gpu_id in cuda_ids:
            extra["cuda_id_by_pid"] = cuda_ids[gpu_id]
        capability = (major, minor) if major is not None and minor is not None else ()
        devices[gpu_id] = DeviceInfo(gpu_id, str(name or ""), capability, sms or 0, memory or 0, extra)
    return sorted(devices.values(), key=attrgetter("id"))


_LEGACY_GPU_COLUMNS = (
    "deviceId",
    "computeCapabilityMajor",
    "computeCapabilityMinor",
    "numMultiprocessors",
    "globalMemorySize",
)


def _legacy_cuda_gpus(db, schema: Schema) -> dict:
    """Old exports keep compute capability, SMs and memory in TARGET_INFO_CUDA_GPU."""
    table = "TARGET_INFO_CUDA_GPU"
    if not schema.has(table, *_LEGACY_GPU_COLUMNS):
        return {}
    rows = db.execute(f"SELECT {', '.join(_LEGACY_GPU_COLUMNS)} FROM {table}")
    return {row[0]: row[1:] for row in rows}


def _cuda_ids_by_pid(db, schema: Schema) -> dict:
    """TARGET_INFO_CUDA_DEVICE: the CUDA ordinal each process saw for a GPU -> {gpu: {pid: ordinal}}."""
    table = "TARGET_INFO_CUDA_DEVICE"
    if not schema.has(table, "gpuId", "cudaId", "pid"):
        return {}
    out: dict = {}
    for gpu_id, cuda_id, pid in db.execute(f"SELECT gpuId, cudaId, pid FROM {table} ORDER BY pid"):
        out.setdefault(gpu_id, {})[pid] = cuda_id
    return out


def _export_meta(db, schema: Schema) -> dict:
    for table in ("META_DATA_EXPORT", "EXPORT_META_DATA"):
        if schema.has(table, "name", "value"):
            return {decode(name): decode(value) for name, value in db.execute(f"SELECT name, value FROM {table}")}
    return {}
