"""``profile()``: live, in-process capture of a PyTorch run into a Profile.

A LiveProfile is a Profile (records, views, exports) that holds a :class:`CaptureSession`, which
owns the hooks and what they record (``session.py``); ``start``/``stop``/``step`` drive it, and each
stop appends the session's new records to the profile's.

``profile(report=...)`` prints a report at each stop. It is printed also when the profiled block
raises (what ran before the error is often what the user came for; the traceback still comes
last), and the exception propagates unchanged: a report that fails then is a warning, not a second
error. A profile started and never stopped is stopped at interpreter exit (its hooks and the CUPTI
subscription released in order) and prints its report there if it has one; without ``report=``
nothing is printed.
"""

from __future__ import annotations

import atexit
import time
import warnings
from collections.abc import Callable

import torch

from .. import torch_compat
from ..profile import VIEW_NAMES, Profile
from ..records import Records
from . import logdir as logdir_module
from .allocations import CudaHistory
from .session import CaptureSession

#: What profile(report=...) takes besides a callable: a view name, True (= "table") or None/False.
Report = str | bool | Callable[["LiveProfile"], object] | None


class LiveProfile(Profile):
    """A Profile filled by running the PyTorch code inside ``with profile() as p:``; then ``print(p.table())``.

    :param steps: indices of the ``p.step()`` iterations to record (``range(2, 5)``); None = all.
    :param stack_depth: user frames kept per op for the ``trace`` column; 0 turns call sites off.
    :param max_ops: record cap (records take about 0.8 kB per op, 1.4 kB while stop() converts
        them); past it ops are no longer recorded and the report says so.
    :param gpu: ``"auto"`` (GPU kernels when CUDA and CUPTI can be used, else a CPU-only report
        with a warning saying why), ``"cupti"`` (raise if they cannot), ``"off"``.
    :param report: print a report at stop (also when the block raises; the exception propagates
        unchanged): ``True`` or ``"table"`` (``p.table(sort="sil")``), another view name
        (``"overview"``, ``"ops"``, ``"modules"``, ``"kernels"``, ``"recommendations"``), or a
        callable, called with the profile instead. None (default): silent.
    :param logdir: a run directory: when the profile stops, this worker's profile is saved there
        (Parquet, named after its rank, else host and pid; with ``steps``, one file per recorded
        window of consecutive steps); ``pyprof_live.load_run(logdir)`` reads every worker back.
    :param flush_every: with ``logdir``, seconds between rewrites of the worker's files at ``p.step()``
        while the job runs, so ``pyprof-live serve`` shows its steps live (0: at every step; None: only
        at stop). Each rewrite writes the whole profile so far.
    """

    def __init__(
        self,
        steps=None,
        stack_depth: int = 2,
        max_ops: int = 1_000_000,
        gpu: str = "auto",
        report: Report = None,
        logdir=None,
        flush_every: float | None = 2.0,
    ):
        torch_compat.require_supported()
        super().__init__(meta={"source": "live", "torch": torch.__version__, "warnings": []})
        if flush_every is not None and flush_every < 0:
            raise ValueError(f"flush_every must be 0 or more seconds, or None, not {flush_every!r}")
        #: With logdir: p.step() rewrites this worker's files when this many seconds passed since the
        #: last write, so `pyprof-live serve` shows the steps so far while the job runs (None: at stop only).
        self.flush_every = flush_every
        self._flushed_at = time.monotonic()
        self.report = _checked_report(report)
        #: The run directory each stop() saves this worker's profile into (None: not saved).
        self.logdir = None if logdir is None else logdir_module.prepare_logdir(logdir)
        #: Files written into ``logdir`` by the last stop().
        self.saved_files: list = []
        self._saved_names: dict = {}  # window -> file, so a second stop rewrites instead of adding copies
        #: The hooks and raw capture state; it writes into this profile's records and meta.
        self.session = CaptureSession(
            self.records, self.meta, steps=steps, stack_depth=stack_depth, max_ops=max_ops, gpu=gpu
        )
        #: The CUDA allocator's history while recording (when CUDA is there), for p.memory().
        self._cuda_memory = CudaHistory(self.meta["warnings"]) if gpu != "off" else None

    @property
    def records(self) -> Records:
        """The profile's records, built on first use rather than in stop(): a CPU profile's op, kernel-call and
        graph-call records (as torch.profiler builds its events when first asked), and the ops each Inductor
        kernel call fused (compiled.py: most records of a compiled profile are those). See CaptureSession.complete."""
        session = self.__dict__.get("session")
        if session is not None:
            session.complete()
        return self._records

    @records.setter
    def records(self, records: Records) -> None:
        self._records = records

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        self._stop(raised=exc_type)
        return False

    def start(self) -> LiveProfile:
        """Install every hook and start recording (unless a step schedule says to wait)."""
        self.session.start()
        if self._cuda_memory is not None:
            self._cuda_memory.start()
        atexit.register(self._stop_at_exit)
        return self

    def stop(self) -> LiveProfile:
        """Remove every hook and build the records; safe to call after an exception."""
        self._stop(raised=None)
        return self

    def _stop(self, raised: type[BaseException] | None, report: bool = True) -> None:
        try:
            self.session.stop()
        finally:
            if not self.session.active:  # still recording when stop() refused to run on this thread
                atexit.unregister(self._stop_at_exit)
            allocs = self._cuda_memory.stop(time.perf_counter_ns) if self._cuda_memory is not None else []
            if allocs:
                self.records.allocs.extend(allocs)
                self.records.allocs.sort(key=lambda a: a.time)
        self.invalidate()
        if self.logdir is not None:
            windows = self.session.steps is not None
            self.saved_files = logdir_module.save_worker(self, self.logdir, windows, self._saved_names)
        if self.report is not None and report:
            self._print_report(raised)

    def _stop_at_exit(self) -> None:
        if self.session.active:
            self._stop(raised=None)

    def _print_report(self, raised: type[BaseException] | None) -> None:
        """The report chosen with ``report=``; when the block raised, a failing report only warns."""
        report = self.report
        try:
            if callable(report):
                report(self)
                return
            assert isinstance(report, str)  # _checked_report: a view name when not callable
            text = self.table(sort="sil") if report == "table" else str(self.view(report))
            if raised is not None:
                text = f"pyprof_live: the profiled code raised {raised.__name__}; what ran before it:\n{text}"
            print(text, flush=True)
        except Exception as e:
            if raised is None:
                raise
            warnings.warn(f"pyprof_live: no report ({type(e).__name__}: {e})", RuntimeWarning, stacklevel=4)

    def step(self) -> None:
        """Mark the end of one training iteration; with ``steps=``, only chosen ones are recorded.

        With ``logdir=``, the worker's files are rewritten here once ``flush_every`` seconds have passed
        since the last write: the profile stops (records built, files written, no report) and starts
        again, between two steps, where no op is running."""
        self.session.step()
        if self.logdir is None or self.flush_every is None or not self.session.active:
            return
        if time.monotonic() - self._flushed_at >= self.flush_every:
            self._stop(raised=None, report=False)
            self.start()
            self._flushed_at = time.monotonic()


#: The public name: ``with profile() as p:`` makes a LiveProfile (torch.profiler.profile is a class too).
profile = LiveProfile


def _checked_report(report: Report) -> str | Callable | None:
    if report is None or report is False:
        return None
    if report is True:
        return "table"
    if callable(report) or report in VIEW_NAMES:
        return report
    raise ValueError(f"report must be True, a view name ({', '.join(VIEW_NAMES)}) or a callable, not {report!r}")
