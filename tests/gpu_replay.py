"""Test double: the live GPU path (the real CuptiBackend) run against a stand-in CUDA process, on CPU.

:class:`ReplayProcess` plays CUPTI's part: it keeps CUPTI's process-wide activity state (the one
registered pair of buffer callbacks, the enabled kinds, a per-thread stack of external ids per
external kind) and delivers records built with cupti-python's real classes (ActivityAPI,
ActivityExternalCorrelation, ActivityKernel13, ActivityMemcpy6, ActivityMemset4), exactly as
CUPTI would: an external-correlation record ``(API correlation id, top of the thread's stack)``
before each API record made while that stack is not empty, device records carrying the
correlation id of the call that launched them, everything only for enabled kinds and only to the
callbacks registered last.

:func:`load_trace` turns a real Kineto trace into what a live run would have done: the ops a
TorchDispatchMode would record (dispatcher ops, innermost first), pushed and popped per thread
from their ``cpu_op`` intervals, the trace's runtime/driver calls and its kernels, memcpys and
memsets. The trace's own ``External id`` links are NOT read, so comparing the links the live
path makes (:class:`ReplayBackend` -> normaliser -> ``correlate``) with them is a real test.
"""

from __future__ import annotations

import heapq
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field

from cupti import cupti

from pyprof_live.capture.gpu.cupti_backend import CuptiBackend
from pyprof_live.importers.kineto import devices_from_properties, event_times, host_ids, read_trace_events
from pyprof_live.profile import Profile
from pyprof_live.records import OpRecord

_KIND = cupti.ActivityKind
_RUNTIME_CBID = {re.sub(r"_v\d{4,}$", "", m.name): int(m) for m in reversed(cupti.RuntimeApiTraceCbid)}
_DRIVER_CBID = {m.name: int(m) for m in cupti.DriverApiTraceCbid}
_COPY_KIND = {m.name: int(m) for m in cupti.ActivityMemcpyKind}
_SYNCHRONIZE_CBID = _RUNTIME_CBID["cudaDeviceSynchronize"]
#: Op names a TorchDispatchMode sees: registered operators, ``namespace::name`` (aten::mm,
#: c10d::allreduce_), not autograd engine ranges, record_function scopes or Inductor kernels.
_DISPATCHER_OP = re.compile(r"(?!autograd::|profiler::)[a-z_][a-z0-9_]*::[A-Za-z0-9_]+")
_OP_CATEGORIES = ("cpu_op", "Operator")
_API_CATEGORIES = {"cuda_runtime": "runtime", "cuda_driver": "driver", "Runtime": None}
_DEVICE_CATEGORIES = {
    "kernel": "kernel",
    "Kernel": "kernel",
    "gpu_memcpy": "memcpy",
    "Memcpy": "memcpy",
    "gpu_memset": "memset",
    "Memset": "memset",
}


def seen_by_dispatch_mode(name: str) -> bool:
    return _DISPATCHER_OP.fullmatch(name) is not None


class ReplayProcess:
    """Stands in for :class:`~pyprof_live.capture.gpu.cupti_backend.CudaProcess` (same names)."""

    def __init__(
        self,
        clock_offset_ns: int | None = None,
        fail_with: BaseException | None = None,
        buffer_records: int = 4096,
        devices: list | None = None,
    ):
        #: CUPTI's clock minus the host clock: like CLOCK_REALTIME - CLOCK_MONOTONIC by default.
        self.clock_offset_ns = time.time_ns() - time.perf_counter_ns() if clock_offset_ns is None else clock_offset_ns
        self.fail_with = fail_with  # raised by every CUPTI call (a missing driver, nsys owning CUPTI...)
        self.buffer_records = buffer_records  # a buffer is handed over when this many records wait
        self.device_infos = devices or []
        self.callbacks = None
        self.enabled: set = set()
        self.stacks = defaultdict(list)  # (thread, external kind) -> pushed ids
        self.thread = 0  # CUPTI's 32-bit id of the thread that makes the next call
        self.pending: list = []
        self.subscriber = None  # (callback, userdata) of the one callback-API subscriber
        self.enabled_callbacks: set = set()  # (domain, cbid)
        self.subscribe_error: BaseException | None = None  # raised by subscribe (another subscriber)
        self._stamp: int | None = None  # host ns get_timestamp returns while a callback runs
        self._next_correlation = 1 << 31  # for calls the replay makes itself (the stop synchronise)

    # -- the calls CuptiBackend makes -------------------------------------------------------------

    def _check(self) -> None:
        if self.fail_with is not None:
            raise self.fail_with

    def get_timestamp(self) -> int:
        self._check()
        return (time.perf_counter_ns() if self._stamp is None else self._stamp) + self.clock_offset_ns

    def activity_register_callbacks(self, requested, completed) -> None:
        self._check()
        self.callbacks = (requested, completed)

    def activity_enable(self, kind: int) -> None:
        self._check()
        self.enabled.add(int(kind))

    def activity_disable(self, kind: int) -> None:
        self._check()
        self.enabled.discard(int(kind))

    def activity_flush_all(self, flag: int) -> None:
        self._check()
        self._deliver()

    def activity_push_external_correlation_id(self, kind: int, external_id: int) -> None:
        self.stacks[(self.thread, int(kind))].append(external_id)

    def activity_pop_external_correlation_id(self, kind: int) -> int:
        return self.stacks[(self.thread, int(kind))].pop()

    # -- the callback API (CUDA graph nodes) --------------------------------------------------------

    def subscribe(self, callback, userdata) -> int:
        self._check()
        if self.subscribe_error is not None:
            raise self.subscribe_error
        if self.subscriber is not None:
            raise cupti.cuptiError(int(cupti.Result.ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED))
        self.subscriber = (callback, userdata)
        return 0x5B

    def enable_callback(self, enable: int, subscriber: int, domain: int, cbid: int) -> None:
        (self.enabled_callbacks.add if enable else self.enabled_callbacks.discard)((int(domain), int(cbid)))

    def unsubscribe(self, subscriber: int) -> None:
        self.subscriber = None
        self.enabled_callbacks.clear()

    @staticmethod
    def get_graph_node_id(node: int) -> int:
        """CUPTI's unique id of a node handle: here the handle's value plus a fixed offset."""
        return node + 1_000_000

    def graph_node_event(self, cbid, node: int, at: int, original: int = 0) -> None:
        """CUPTI calling the subscriber about a graph node, with cupti-python's real record classes,
        on ``self.thread`` at host time ``at`` (inside the call that made the node)."""
        key = (int(cupti.CallbackDomain.RESOURCE), int(cbid))
        if self.subscriber is None or key not in self.enabled_callbacks:
            return
        graph = cupti.GraphData()
        graph.node, graph.original_node = node, original
        data = cupti.ResourceData()
        data.resource_descriptor = graph.ptr
        self._stamp = at
        try:
            self.subscriber[0](self.subscriber[1], key[0], key[1], data)
        finally:
            self._stamp = None

    def synchronize(self) -> bool:
        """A cudaDeviceSynchronize made now on the current thread."""
        now = time.perf_counter_ns()
        self._next_correlation += 1
        self.api_call("runtime", _SYNCHRONIZE_CBID, now, now, self._next_correlation, 0)
        return True

    def devices(self, ids) -> list:
        return [d for d in self.device_infos if d.id in ids]

    # -- what the simulated process does -----------------------------------------------------------

    def api_call(self, kind: str, cbid: int, start: int, end: int, correlation: int, pid: int) -> None:
        """A runtime/driver call on ``self.thread``; times on the host clock."""
        activity_kind = int(_KIND.RUNTIME if kind == "runtime" else _KIND.DRIVER)
        if activity_kind not in self.enabled:
            return
        if int(_KIND.EXTERNAL_CORRELATION) in self.enabled:
            for (thread, external_kind), stack in self.stacks.items():
                if thread == self.thread and stack:
                    record = cupti.ActivityExternalCorrelation()
                    record.kind = int(_KIND.EXTERNAL_CORRELATION)
                    record.external_kind = external_kind
                    record.external_id = stack[-1]
                    record.correlation_id = correlation
                    self._emit(record)
        record = cupti.ActivityAPI()
        record.kind = activity_kind
        record.cbid = cbid
        record.start = start + self.clock_offset_ns
        record.end = end + self.clock_offset_ns
        record.process_id = pid & 0xFFFFFFFF
        record.thread_id = self.thread
        record.correlation_id = correlation
        self._emit(record)

    def device_activity(self, record) -> None:
        """A kernel/memcpy/memset record whose times are on the host clock."""
        if record.kind in self.enabled:
            record.start += self.clock_offset_ns
            record.end += self.clock_offset_ns
            self._emit(record)

    def _emit(self, record) -> None:
        self.pending.append(record)
        if len(self.pending) >= self.buffer_records:
            self._deliver()  # a full buffer, as CUPTI's own thread hands it over while the run goes on

    def _deliver(self) -> None:
        pending, self.pending = self.pending, []
        if pending and self.callbacks is not None:
            self.callbacks[1](pending)


class ReplayBackend(CuptiBackend):
    """The real CuptiBackend driving a :class:`ReplayProcess` instead of CUDA."""

    def __init__(self, option: str = "auto", warnings: list | None = None, process: ReplayProcess | None = None):
        super().__init__(option, warnings, process or ReplayProcess())

    def run(self, trace: Trace) -> None:
        """Do what the traced process did, between ``start()`` and ``stop()``."""
        process = self.process
        for _at, _order, thread, action, payload in trace.steps:
            process.thread = thread
            if action == "push":
                self.push(payload)
            elif action == "pop":
                self.pop()
            elif action == "api":
                process.api_call(*payload)
            else:
                process.device_activity(_device_record(payload))


@dataclass
class Trace:
    """A Kineto trace as a live run would have produced it (see the module docstring)."""

    ops: list  # OpRecords of the dispatcher ops, external_id = their position
    op_events: list  # the cpu_op event each op was built from, same order
    steps: list = field(default_factory=list)  # (host ns, order, thread, action, payload), time order
    devices: list = field(default_factory=list)

    def profile(self, capture) -> Profile:
        """The ops with what the backend captured, ready for correlation."""
        return Profile(
            ops=list(self.ops),
            apis=capture.records.apis,
            kernels=capture.records.kernels,
            memops=capture.records.memops,
            devices=capture.records.devices,
            meta={"source": "replay", **capture.meta},
        )


def load_trace(path) -> Trace:
    """Read a Kineto trace (``.json``/``.json.gz``, either dialect) into the steps a live run would make."""
    header: dict = {}
    threads = defaultdict(lambda: ([], []))  # thread -> (ops, api calls)
    device_events = []
    op_events = []
    for event in read_trace_events(path, header):
        if event.get("ph") != "X":
            continue
        category = event.get("cat")
        if category in _OP_CATEGORIES and seen_by_dispatch_mode(event["name"]):
            op_events.append(event)
        elif category in _API_CATEGORIES:
            pid, tid = host_ids(event)
            threads[tid & 0xFFFFFFFF][1].append((*event_times(event), pid, event))
        elif category in _DEVICE_CATEGORIES:
            device_events.append(event)
    ops = []
    for event in op_events:
        start, end = event_times(event)
        tid = host_ids(event)[1]
        op = OpRecord(event["name"], start, end, tid & 0xFFFFFFFF, external_id=len(ops))
        ops.append(op)
        threads[op.tid][0].append(op)
    per_thread = [_thread_steps(thread, ops_of, calls) for thread, (ops_of, calls) in threads.items()]
    device_steps = [(event_times(e)[1], 0, 0, "device", e) for e in device_events]
    device_steps.sort(key=lambda s: s[0])
    steps = list(heapq.merge(*per_thread, device_steps, key=lambda s: (s[0], s[1])))
    return Trace(ops, op_events, steps, devices_from_properties(header.get("deviceProperties") or []))


def _thread_steps(thread: int, ops: list, calls: list) -> list:
    """push/pop/api steps of one thread: ops nest by time containment, as correlate.py nests them."""
    ops = sorted(ops, key=lambda op: (op.start, -op.end, op.external_id))
    calls.sort(key=lambda c: c[0])
    steps, open_ops = [], []

    def close(until) -> None:
        while open_ops and until(open_ops[-1]):
            steps.append((open_ops.pop().end, len(steps), thread, "pop", None))

    def open_op(op) -> None:
        close(lambda top: top.end < op.end or (top.end <= op.start and top.start < op.start))
        steps.append((op.start, len(steps), thread, "push", op.external_id))
        open_ops.append(op)

    i = 0
    for start, end, pid, event in calls:
        while i < len(ops) and ops[i].start <= start:  # an op starting with the call contains it
            open_op(ops[i])
            i += 1
        close(lambda top, start=start: top.end < start)
        steps.append((start, len(steps), thread, "api", _api_payload(event, start, end, pid)))
    for op in ops[i:]:
        open_op(op)
    close(lambda top: True)
    return steps


def _api_payload(event: dict, start: int, end: int, pid: int) -> tuple:
    name = event["name"]
    kind = _API_CATEGORIES[event["cat"]]
    if kind is None:  # the 2021 dialect's "Runtime" holds driver calls too (same rule as the Kineto
        # importer's, which has it inline in a collector method and exposes no function to reuse)
        kind = "driver" if name.startswith("cu") and not name.startswith("cuda") else "runtime"
    cbid = (_RUNTIME_CBID if kind == "runtime" else _DRIVER_CBID).get(name, 0)
    args = event.get("args") or {}
    return kind, cbid, start, end, args.get("correlation", 0), pid


def _device_record(event: dict):
    """A Kineto GPU event as the cupti-python record CUPTI would have delivered (host-clock times)."""
    args = event.get("args") or {}
    what = _DEVICE_CATEGORIES[event["cat"]]
    start, end = event_times(event)
    if what == "kernel":
        record = cupti.ActivityKernel13()
        record.kind = int(_KIND.CONCURRENT_KERNEL)
        record.name = event["name"]
        record.grid_x, record.grid_y, record.grid_z = args.get("grid", (0, 0, 0))
        record.block_x, record.block_y, record.block_z = args.get("block", (0, 0, 0))
        record.registers_per_thread = args.get("registers per thread", 0)
        record.static_shared_memory = args.get("shared memory", 0)  # Kineto writes static + dynamic summed
        record.graph_id = args.get("graph id", 0)
        record.graph_node_id = args.get("graph node id", 0)
    elif what == "memcpy":
        record = cupti.ActivityMemcpy6()
        record.kind = int(_KIND.MEMCPY)
        words = event["name"].split()  # "Memcpy HtoD (Pageable -> Device)"; inline in the importer too, not exposed
        record.copy_kind = _COPY_KIND.get(words[1].upper() if len(words) > 1 else "", 0)
        record.bytes = args.get("bytes", 0)
    else:
        record = cupti.ActivityMemset4()
        record.kind = int(_KIND.MEMSET)
        record.bytes = args.get("bytes", 0)
    record.start, record.end = start, end
    record.device_id = args.get("device", 0)
    record.context_id = args.get("context", 0)
    record.stream_id = args.get("stream", 0)
    record.correlation_id = args.get("correlation", 0)
    return record
