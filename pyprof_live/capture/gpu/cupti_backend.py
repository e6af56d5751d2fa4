"""In-process kernel, memcpy and memset collection with cupti-python's Activity API.

Only the Activity API is used, never ``cupti.subscribe`` (a subscriber held across a later
torch.profiler run breaks Kineto's one-shot initialisation for good). CUPTI's activity state is
process-wide (one pair of buffer callbacks, global enable flags), so one backend at a time owns
it: :data:`_owner`, which a second concurrent start is refused.

Linking work to ops is CUPTI's external correlation, as Kineto does it: the op id is pushed on
CUPTI's per-thread stack around each op (``push``/``pop``), and CUPTI then emits, before each
runtime/driver API record, an external-correlation record ``(API correlation id, top of stack)``;
kernels carry their launching API call's correlation id.

Coexistence: torch.profiler (Kineto) re-registers the callbacks and, when it stops, disables every
activity kind, so a torch.profiler run inside ours silently ends our collection. ``stop`` detects
it, whatever tool did it: it pushes a sentinel id around a CUDA synchronise; if that call's record
does not come back, someone else took CUPTI over and the capture is marked incomplete.
"""

from __future__ import annotations

import bisect
import functools
import importlib.metadata
import threading
import time
from collections.abc import Callable

import torch
from cupti import cupti

from ...records import DeviceInfo, Records
from ...torch_compat import has_primary_context, torch_profiler_running
from .backend import GpuCapture, report_unavailable
from .clock import ClockMap, ClockSample, sample
from .device_work import describe
from .graph_nodes import GraphNodeTracker
from .graph_nodes import describe as describe_graph_nodes
from .normalize import OUR_EXTERNAL_KIND, ActivitySink, finish

#: Enabled at start, disabled at stop (only those that were enabled). Kineto enables the same ones.
ACTIVITY_KINDS = (
    "CONCURRENT_KERNEL",
    "MEMCPY",
    "MEMSET",
    "RUNTIME",
    "DRIVER",
    "EXTERNAL_CORRELATION",
    "SYNCHRONIZATION",
)
BUFFER_BYTES = 8 << 20  # CUPTI's advice is 1-10 MB; 0 records limit = as many as fit
FLUSH_FORCED = 1  # CUPTI_ACTIVITY_FLAG_FLUSH_FORCED: also buffers still being filled
#: Op id pushed around the synchronise at stop; no op gets it (op ids count up from 0).
SENTINEL_ID = 2**64 - 2
_MULTIPLE_SUBSCRIBERS = int(cupti.Result.ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)

_owner_lock = threading.Lock()
_owner = None  # the CuptiBackend holding CUPTI's activity state, if any


def _buffer_requested():
    return BUFFER_BYTES, 0


def _buffer_completed(activities) -> None:
    """Runs on CUPTI's thread or inside a flush; hands the records to the owner's sink."""
    owner = _owner
    sink = owner.sink if owner is not None else None
    if sink is not None:
        sink.add(activities)


def _inert(*_args) -> None:
    """push/pop of a backend that is not collecting."""


def cuda_major(version: str | None) -> int | None:
    try:
        return int(version.split(".")[0]) if version else None
    except ValueError:
        return None


def unusable_reason() -> str:
    """Why a new collection cannot work here, known before starting; "" when none is known.

    The driver's absence and other CUPTI clients (nsys, ncu) show only when CUPTI is first called.
    """
    package = _package_version()
    torch_major = cuda_major(torch.version.cuda)
    package_major = cuda_major(package)
    if torch_major is not None and package_major is not None and torch_major != package_major:
        return (
            f"cupti-python {package} is for CUDA {package_major} but torch {torch.__version__} uses CUDA "
            f"{torch.version.cuda} (two CUPTI libraries in one process collide); "
            f"install the matching one: pip install 'cupti-python=={torch_major}.*'"
        )
    if torch_profiler_running():
        return "torch.profiler is recording and owns CUPTI; stop it first"
    if _owner is not None:
        return "another pyprof_live profile is collecting GPU activity in this process"
    return ""


def failure_reason(exc: BaseException) -> str:
    """A CUPTI error at start, as a reason and what to do about it."""
    if isinstance(exc, cupti.cuptiError):
        status = exc.status  # type: ignore[attr-defined]  # set by cupti-python; its stub lacks it
        if status == _MULTIPLE_SUBSCRIBERS:
            return (
                "another CUPTI client already owns CUPTI in this process (Nsight Systems, Nsight Compute, "
                "compute-sanitizer or a CUPTI monitor); run without it, or load its report with pyprof_live.load()"
            )
        return f"CUPTI failed to start: {cupti.Result(status).name}"
    return f"cupti-python cannot use the CUDA driver ({exc})"


class CudaProcess:
    """What the backend needs of the real process: cupti-python's calls, torch's CUDA synchronise
    and device facts. The tests' stand-in (``tests/gpu_replay.py``) provides the same names."""

    def __init__(self):
        self.get_timestamp = cupti.get_timestamp
        self.activity_register_callbacks = cupti.activity_register_callbacks
        self.activity_enable = cupti.activity_enable
        self.activity_disable = cupti.activity_disable
        self.activity_flush_all = cupti.activity_flush_all
        self.activity_push_external_correlation_id = cupti.activity_push_external_correlation_id
        self.activity_pop_external_correlation_id = cupti.activity_pop_external_correlation_id
        # The callback API, for CUDA graph nodes only (graph_nodes.py)
        self.subscribe = cupti.subscribe
        self.enable_callback = cupti.enable_callback
        self.unsubscribe = cupti.unsubscribe
        self.get_graph_node_id = cupti.get_graph_node_id

    @staticmethod
    def synchronize() -> bool:
        """Wait for every device this process uses; False when CUDA was never initialised (no API call made)."""
        if not torch.cuda.is_initialized():
            return False
        for device in range(torch.cuda.device_count()):
            if has_primary_context(device):
                torch.cuda.synchronize(device)
        return True

    @staticmethod
    def devices(ids) -> list:
        infos = []
        for device in sorted(ids):
            props = torch.cuda.get_device_properties(device)
            infos.append(
                DeviceInfo(
                    device, props.name, (props.major, props.minor), props.multi_processor_count, props.total_memory
                )
            )
        return infos


class CuptiBackend:
    """The GPU backend of a live profile (see ``gpu/__init__.py`` for how it is driven).

    When CUPTI cannot start, ``gpu="auto"`` turns it into a warning and an inert backend (its
    ``stop`` returns an empty capture); ``gpu="cupti"`` raises :class:`GpuUnavailableError`.
    """

    def __init__(self, option: str = "auto", warnings: list | None = None, process=None, pid: int = 0):
        self.option = option
        self.warnings = [] if warnings is None else warnings
        self.process = process  # CudaProcess() unless given (tests); made at start, as it needs cupti calls
        self.pid = pid  # the pid of the op records (0 in live profiles)
        self.sink: ActivitySink | None = None
        # Bound to CUPTI's push/pop once collecting.
        self.push: Callable[[int], object] = _inert
        self.pop: Callable[[], object] = _inert
        self.failure = ""
        self._enabled: list = []
        self._clock_start: ClockSample | None = None
        self._toggles: list = []  # (host ns, recording?) from set_recording
        self.graph_nodes: GraphNodeTracker | None = None

    # -- control ---------------------------------------------------------------------------------

    def start(self) -> None:
        global _owner
        with _owner_lock:
            busy = _owner is not None
            if not busy:
                _owner = self
        if busy:
            self._unavailable("another pyprof_live profile is collecting GPU activity in this process")
            return
        self.sink = ActivitySink(self.pid)
        try:
            process = self.process = self.process or CudaProcess()
            self._clock_start = sample(process.get_timestamp)
            process.activity_register_callbacks(_buffer_requested, _buffer_completed)
            for name in ACTIVITY_KINDS:
                kind = int(getattr(cupti.ActivityKind, name))
                process.activity_enable(kind)
                self._enabled.append(kind)
        except (RuntimeError, cupti.cuptiError) as exc:  # NotSupportedError (no driver) is a RuntimeError
            self._release(disable=True)
            self.sink = None
            self._unavailable(failure_reason(exc))
            return
        self.push = functools.partial(process.activity_push_external_correlation_id, OUR_EXTERNAL_KIND)
        self.pop = functools.partial(process.activity_pop_external_correlation_id, OUR_EXTERNAL_KIND)
        self.graph_nodes = GraphNodeTracker(process)
        self.graph_nodes.install()

    def set_recording(self, on: bool) -> None:
        """Keep only GPU work launched while the profile records (``profile(steps=...)``); without
        any call everything between start and stop is kept."""
        self._toggles.append((time.perf_counter_ns(), on))

    def stop(self) -> GpuCapture:
        if self.sink is None:
            return GpuCapture(meta={"gpu": {"backend": "none", "reason": self.failure}})
        process = self.process
        graph_nodes = self.graph_nodes
        assert graph_nodes is not None  # made with the sink at start()
        self.push = self.pop = _inert
        # A torch.profiler still running owns CUPTI now: flushing would feed it our buffers and
        # disabling would end its collection, so both are left to it.
        profiler_running = torch_profiler_running()
        incomplete = ""
        try:
            if profiler_running:
                incomplete = (
                    "torch.profiler was started inside the profile and is still running: it took CUPTI "
                    "over, so GPU work after its start is in its trace, not here"
                )
            elif not self._still_owned(process):
                incomplete = (
                    "another CUPTI client (torch.profiler, or a tool attached to the process) took CUPTI "
                    "over during the profile: GPU work after that point is missing"
                )
            last: ClockSample | None = sample(process.get_timestamp)
        except (RuntimeError, cupti.cuptiError) as exc:
            incomplete = f"CUPTI failed while stopping ({exc}): GPU work may be missing"
            last = self._clock_start
        finally:
            try:
                graph_nodes.remove()
            finally:
                self._release(disable=not profiler_running)
        assert self._clock_start is not None and last is not None and self.sink is not None  # start() set them
        clock = ClockMap(self._clock_start, last)
        apis, kernels, memops = finish(self.sink, clock.to_host)
        graph_facts = graph_nodes.resolve(apis, kernels, clock.to_host)
        apis, kernels, memops = _without_sentinel(apis, kernels, memops)
        if self._toggles:
            apis, kernels, memops = self._recorded_only(apis, kernels, memops)
        facts, notes = describe(kernels)
        notes += describe_graph_nodes(graph_facts, graph_nodes.failure)
        sync_count, sync_ns = self.sink.synchronization
        meta = {
            "gpu": {
                "backend": "cupti",
                "cupti_python": _package_version(),
                **clock.facts(),
                "synchronization_calls": sync_count,
                "synchronization_ns": sync_ns,
                "records_of_other_kinds": {_kind_name(k): n for k, n in self.sink.other_kinds.items()},
                "graph_nodes": graph_facts,
            },
            **facts,
        }
        if notes:
            meta["gpu_notes"] = notes
        devices = {k.device for k in kernels} | {m.device for m in memops}
        capture = GpuCapture(
            Records(apis=apis, kernels=kernels, memops=memops, devices=process.devices(devices)), meta, incomplete
        )
        self.sink = None
        return capture

    # -- helpers ---------------------------------------------------------------------------------

    def _still_owned(self, process) -> bool:
        """Push the sentinel around a CUDA synchronise and flush: is its API record ours?"""
        process.activity_push_external_correlation_id(OUR_EXTERNAL_KIND, SENTINEL_ID)
        try:
            synchronized = process.synchronize()
        finally:
            process.activity_pop_external_correlation_id(OUR_EXTERNAL_KIND)
        process.activity_flush_all(FLUSH_FORCED)
        assert self.sink is not None  # only called between start() and the release in stop()
        return not synchronized or SENTINEL_ID in self.sink.external.values()

    def _release(self, disable: bool) -> None:
        global _owner
        try:
            if disable:
                for kind in reversed(self._enabled):
                    try:
                        self.process.activity_disable(kind)
                    except (RuntimeError, cupti.cuptiError):  # noqa: PERF203 - already disabled by another client
                        pass
        finally:
            self._enabled.clear()
            with _owner_lock:
                if _owner is self:
                    _owner = None

    def _unavailable(self, reason: str) -> None:
        self.failure = reason
        report_unavailable(self.option, self.warnings, reason)

    def _recorded_only(self, apis, kernels, memops):
        """Drop work launched while the profile was not recording (by the launching call's host time)."""
        edges, states = [], []
        for at, on in self._toggles:
            edges.append(at)
            states.append(on)

        def recorded(t: int) -> bool:
            i = bisect.bisect_right(edges, t) - 1
            return i < 0 or states[i]  # before the first toggle: recording, as started

        kept = [a for a in apis if recorded(a.start)]
        launched = {a.correlation for a in apis}
        kept_launches = {a.correlation for a in kept}

        def keep(item) -> bool:
            return item.correlation in kept_launches if item.correlation in launched else recorded(item.start)

        return kept, [k for k in kernels if keep(k)], [m for m in memops if keep(m)]


def _kind_name(kind: int) -> str:
    try:
        return cupti.ActivityKind(kind).name
    except ValueError:
        return str(kind)


def _without_sentinel(apis, kernels, memops):
    """The stop's own synchronise (and anything it launched) is not the user's work."""
    ours = {a.correlation for a in apis if a.external_id == SENTINEL_ID}
    if not ours:
        return apis, kernels, memops
    return (
        [a for a in apis if a.correlation not in ours],
        [k for k in kernels if k.correlation not in ours],
        [m for m in memops if m.correlation not in ours],
    )


@functools.lru_cache(maxsize=1)
def _package_version() -> str | None:
    try:
        return importlib.metadata.version("cupti-python")
    except importlib.metadata.PackageNotFoundError:
        return None
