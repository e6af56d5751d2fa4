"""CUPTI activity records (cupti-python objects) -> pyprof_live records, at the edge.

CUPTI frees an activity buffer as soon as its completed-callback returns, and the cupti-python
objects handed to the callback point into that buffer: every field is copied out at once, into
KernelRecord / ApiRecord / MemoryRecord. Everything here reads attributes only, so it runs the
same on the objects CUPTI delivers and on objects built by hand (``cupti.ActivityKernel13()``
works without a driver), which is how the tests feed it.

Two stages: :class:`ActivitySink` copies records as buffers arrive (times still on CUPTI's clock,
external ids kept apart, since CUPTI delivers them as separate records); :func:`finish` then puts
the times on the host clock and gives each API call the op id that was pushed around it. API calls
keep CUPTI's 32-bit thread id; ``gpu.widen_thread_ids`` widens it from the op records.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

from cupti import cupti

from ... import torch_compat
from ...api_names import cupti_api_name
from ...records import NO_LINK, ApiRecord, KernelRecord, MemoryRecord

_KIND = cupti.ActivityKind
#: The external-correlation kind pyprof_live pushes op ids with (Kineto uses CUSTOM0 and CUSTOM1).
OUR_EXTERNAL_KIND = int(cupti.ExternalCorrelationKind.CUSTOM2)
_RUNTIME = int(_KIND.RUNTIME)
_DRIVER = int(_KIND.DRIVER)


def api_name(kind: int, cbid: int) -> str:
    """``cudaLaunchKernel`` for a runtime record with cbid 211 (see :mod:`pyprof_live.api_names`)."""
    return cupti_api_name("runtime" if kind == _RUNTIME else "driver", cbid)


@lru_cache(maxsize=16)
def copy_kind_name(value: int) -> str:
    """``ActivityMemcpyKind.HTOD`` -> ``"HtoD"`` (nsys and Kineto spelling); unknown -> ``""``."""
    try:
        name = cupti.ActivityMemcpyKind(value).name
    except ValueError:
        return ""
    return f"{name[0]}to{name[3]}" if len(name) == 4 and name[1:3] == "TO" else ""


@lru_cache(maxsize=65536)
def demangle(name: str) -> str:
    """CUPTI gives kernel names mangled (``_ZN2at6native...``); names that are not stay as they are."""
    return torch_compat.demangle(name) if name.startswith("_Z") else name


def kernel_record(a, pid: int = 0) -> KernelRecord:
    return KernelRecord(
        name=demangle(a.name),
        start=a.start,
        end=a.end,
        device=a.device_id,
        stream=a.stream_id,
        correlation=a.correlation_id,
        pid=pid,
        context=a.context_id,
        grid=(a.grid_x, a.grid_y, a.grid_z),
        block=(a.block_x, a.block_y, a.block_z),
        registers=a.registers_per_thread,
        shared_static=a.static_shared_memory,
        shared_dynamic=a.dynamic_shared_memory,
        graph_id=a.graph_id,
        graph_node_id=a.graph_node_id,
    )


def api_record(a, pid: int = 0) -> ApiRecord:
    """``pid`` is the one the profile's op records use (CUPTI's ``process_id`` is the OS pid)."""
    kind = a.kind
    return ApiRecord(
        name=api_name(kind, a.cbid),
        start=a.start,
        end=a.end,
        correlation=a.correlation_id,
        tid=a.thread_id,
        pid=pid,
        kind="runtime" if kind == _RUNTIME else "driver",
    )


def memcpy_record(a, pid: int = 0) -> MemoryRecord:
    return MemoryRecord(
        "memcpy", a.start, a.end, a.bytes, copy_kind_name(a.copy_kind), a.device_id, a.stream_id, a.correlation_id, pid
    )


def memset_record(a, pid: int = 0) -> MemoryRecord:
    return MemoryRecord("memset", a.start, a.end, a.bytes, "", a.device_id, a.stream_id, a.correlation_id, pid)


class ActivitySink:
    """Where the buffer-completed callback puts records: one list append per record, nothing else."""

    def __init__(self, pid: int = 0):
        self.pid = pid
        self.apis: list = []
        self.kernels: list = []
        self.memops: list = []
        self.external: dict = {}  # API correlation id -> op id pushed around the call (our kind only)
        self.synchronization = [0, 0]  # cudaStreamSynchronize & co: count, total ns
        self.other_kinds: Counter = Counter()  # records of kinds we did not ask for (another client's)
        self._handlers = {
            int(_KIND.CONCURRENT_KERNEL): self._kernel,
            int(_KIND.KERNEL): self._kernel,
            _RUNTIME: self._api,
            _DRIVER: self._api,
            int(_KIND.MEMCPY): self._memcpy,
            int(_KIND.MEMSET): self._memset,
            int(_KIND.EXTERNAL_CORRELATION): self._external,
            int(_KIND.SYNCHRONIZATION): self._synchronization,
        }

    def add(self, activities) -> None:
        handlers = self._handlers
        for a in activities:
            handler = handlers.get(a.kind)
            if handler is None:
                self.other_kinds[a.kind] += 1
            else:
                handler(a)

    def _kernel(self, a) -> None:
        self.kernels.append(kernel_record(a, self.pid))

    def _api(self, a) -> None:
        self.apis.append(api_record(a, self.pid))

    def _memcpy(self, a) -> None:
        self.memops.append(memcpy_record(a, self.pid))

    def _memset(self, a) -> None:
        self.memops.append(memset_record(a, self.pid))

    def _external(self, a) -> None:
        if a.external_kind == OUR_EXTERNAL_KIND:
            self.external[a.correlation_id] = a.external_id

    def _synchronization(self, a) -> None:
        self.synchronization[0] += 1
        self.synchronization[1] += a.end - a.start


def finish(sink: ActivitySink, to_host) -> tuple[list, list, list]:
    """The sink's records with times on the host clock and API calls carrying their pushed op id.

    :param to_host: CUPTI ns -> host ns (``ClockMap.to_host``).
    """
    external = sink.external
    for api in sink.apis:
        api.external_id = external.get(api.correlation, NO_LINK)
    for items in (sink.apis, sink.kernels, sink.memops):
        for item in items:
            item.start = to_host(item.start)
            item.end = to_host(item.end)
    return sink.apis, sink.kernels, sink.memops
