"""Run: the workers (ranks) of one job, each a Profile, from one directory.

A directory written by ``profile(logdir=...)`` (Parquet, one file per worker and recorded window), a
folder of per-rank Kineto traces (``rank-N.json.gz``: HTA's layout; ``{worker}.{time}.pt.trace.json.gz``:
tensorboard_trace_handler's), of Nsight Systems exports or of saved profiles all open the same way.
Workers are loaded when first asked for, so a Run of 128 ranks costs nothing until used; cross-rank
views read the columnar store (:mod:`.store`) instead, never all workers at once.

A file that cannot be read (truncated, foreign, damaged) is named in ``run.problems`` and left out;
the other workers still load. Ranks a world size promises but no file holds are named there too.
Files that disagree on the world size are refused: they are not one job.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ProfileFormatError, PyprofLiveError
from ..importers import file_kind, load
from ..profile import Profile
from ..store.columnar import file_metadata, write_profile
from ..store.layout import parse_worker_file, rank_in_name, worker_file_name
from ..store.savefile import decode_value


@dataclass
class Worker:
    """One worker file of a run: its name, rank (when known), recorded window and source kind."""

    name: str
    path: Path
    kind: str  # "columnar" | "kineto" | "nsys" | "saved"
    rank: int | None = None
    world_size: int | None = None
    steps: tuple | None = None

    @property
    def label(self) -> str:
        """Key in ``Run.workers``: the worker's name, with its window when it has several files."""
        return self.name if self.steps is None else f"{self.name}[steps {self.steps[0]}-{self.steps[1]}]"


class _Workers(Mapping):
    """``run.workers``: label -> Profile, each read on first access and kept."""

    def __init__(self, run: Run):
        self._run = run
        self._loaded: dict = {}

    def __getitem__(self, label: str) -> Profile:
        if label not in self._loaded:
            worker = self._run.worker(label)
            self._loaded[label] = load(worker.path)
        return self._loaded[label]

    def __iter__(self) -> Iterator[str]:
        return (w.label for w in self._run.entries)

    def __len__(self) -> int:
        return len(self._run.entries)


@dataclass
class Run:
    """The workers of one job (``run.workers``: name -> Profile) and the views across them."""

    path: Path
    entries: list = field(default_factory=list)  # Worker, by rank then name
    problems: list = field(default_factory=list)  # "path: what is wrong", one line each

    def __post_init__(self):
        self.workers = _Workers(self)
        self._store = None

    def worker(self, label: str) -> Worker:
        for worker in self.entries:
            if worker.label == label:
                return worker
        raise KeyError(f"no worker {label!r} in {self.path}; workers: {', '.join(w.label for w in self.entries)}")

    @property
    def world_size(self) -> int | None:
        sizes = {w.world_size for w in self.entries if w.world_size is not None}
        return sizes.pop() if sizes else None

    def __repr__(self):
        return f"<Run {self.path} workers={len(self.entries)} problems={len(self.problems)}>"

    # -- the columnar store and the views across ranks --------------------------------------------

    def store(self, progress=None, processes: int | None = None):
        """The run's records on Parquet (converted once, cached), queried with DuckDB; see run/store.py."""
        if self._store is None:
            from .store import RunStore

            self._store = RunStore.open(self, progress=progress, processes=processes)
        return self._store

    def ranks(self):
        """Per rank and step: wall time split into computation, communication, their overlap, memory
        copies and idle (a View)."""
        from .views import rank_breakdown

        return rank_breakdown(self.store())

    def stragglers(self):
        """Per rank and step, slowest first, with ``at_stake``: the time the other ranks waited for it."""
        from .views import stragglers

        return stragglers(self.store())

    def skew(self):
        """Per collective: how far apart the ranks started and ended it, who came last, the wait it cost."""
        from .views import collective_skew

        return collective_skew(self.store())

    def ops(self):
        """Per op name across ranks: calls, total, and min / median / max per rank with the rank of each."""
        from .views import merged_summary

        return merged_summary(self.store(), "ops")

    def kernels(self):
        """Per kernel name across ranks: calls, total, and min / median / max per rank with the rank of each."""
        from .views import merged_summary

        return merged_summary(self.store(), "kernels")

    def view(self, name: str):
        """A cross-rank view by name (one of :data:`RUN_VIEW_NAMES`)."""
        views = {"ranks": self.ranks, "stragglers": self.stragglers, "skew": self.skew, "ops": self.ops}
        views["kernels"] = self.kernels
        if name not in views:
            raise ValueError(f"unknown run view {name!r}; valid: {', '.join(RUN_VIEW_NAMES)}")
        return views[name]()

    def export_chrome_trace(self, path) -> int:
        """One Chrome trace with one process per rank, clocks aligned on the first collective."""
        from .trace import write_merged_trace

        return write_merged_trace(self, path)

    def save_html(self, path) -> None:
        """Write a self-contained HTML report of the run: time per rank and step (stacked bars),
        stragglers, collective skew, ops and kernels across ranks."""
        from ..render.renderer import renderer

        renderer("run_html").write(self, path)

    def save(self, directory) -> list[Path]:
        """Write every worker as Parquet into ``directory`` (a run directory ``load_run`` reads back)."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        written = []
        for worker in self.entries:
            profile = self.workers[worker.label]
            path = directory / worker_file_name(worker.name, worker.steps, now_ms=0)
            write_profile(profile, path)
            written.append(path)
        return written


RUN_VIEW_NAMES = ("ranks", "stragglers", "skew", "ops", "kernels")


def load_run(path) -> Run:
    """Open a run directory: every worker file in it, by rank. Raises ProfileFormatError when the
    directory holds no worker file or its files disagree on the world size."""
    directory = Path(path)
    if not directory.is_dir():
        raise ProfileFormatError(directory, "not a directory (load_run opens a run directory)")
    run = Run(directory)
    for candidate in sorted(directory.iterdir()):
        if candidate.name.startswith(".") or not candidate.is_file():
            continue
        parsed = parse_worker_file(candidate)
        if parsed is None:
            continue
        try:
            run.entries.append(_describe(parsed))
        except PyprofLiveError as e:
            run.problems.append(str(e))
    if not run.entries:
        detail = f" ({len(run.problems)} unreadable: {run.problems[0]})" if run.problems else ""
        raise ProfileFormatError(directory, f"no worker profiles in this directory{detail}")
    _check_world(run)
    return run


def _describe(parsed) -> Worker:
    """What a worker file is and which rank, from as little of it as says so."""
    path = parsed.path
    worker = Worker(parsed.worker, path, file_kind(path), steps=parsed.steps)
    info: dict = {}
    if worker.kind == "columnar":
        meta = decode_value(file_metadata(path).get("meta") or {"D": {}})
        info = meta.get("distributed") or {}
        if worker.steps is None and meta.get("steps"):
            worker.steps = tuple(meta["steps"])
    elif worker.kind == "kineto":
        info = _kineto_distributed_info(path)
    rank = info.get("rank") if isinstance(info, dict) else None
    worker.rank = rank if isinstance(rank, int) else rank_in_name(worker.name)
    size = info.get("world_size") if isinstance(info, dict) else None
    worker.world_size = size if isinstance(size, int) and size > 0 else None
    return worker


def _kineto_distributed_info(path) -> dict:
    """``distributedInfo`` of a Kineto trace when its header holds it before the events (Kineto
    writes it there), read without reading the events; {} otherwise."""
    from ..importers.trace_json import read_trace_events

    header: dict = {}
    events = read_trace_events(path, header)
    try:
        next(events, None)
    finally:
        events.close()
    info = header.get("distributedInfo")
    return info if isinstance(info, dict) else {}


def _check_world(run: Run) -> None:
    sizes: dict = {}
    for worker in run.entries:
        if worker.world_size is not None:
            sizes.setdefault(worker.world_size, []).append(worker.path.name)
    if len(sizes) > 1:
        said = "; ".join(
            f"world size {size}: {', '.join(names[:3])}{' ...' if len(names) > 3 else ''}"
            for size, names in sorted(sizes.items())
        )
        raise ProfileFormatError(run.path, f"files of different jobs (mixed world sizes: {said})")
    run.entries.sort(key=lambda w: (w.rank is None, w.rank if w.rank is not None else 0, w.name, w.steps or ()))
    if sizes:
        (size,) = sizes
        present = {w.rank for w in run.entries}
        missing = [r for r in range(size) if r not in present]
        if missing:
            run.problems.append(f"{run.path}: no file for rank(s) {', '.join(map(str, missing))} of world size {size}")
    _number_unranked(run)


def _number_unranked(run: Run) -> None:
    """Workers whose rank nothing states (host_pid names, nsys exports) get the next free numbers, in
    name order, so every view has a rank to show."""
    taken = {w.rank for w in run.entries if w.rank is not None}
    given: dict = {}  # worker name -> number: the windows of one worker are one rank
    number = 0
    for worker in run.entries:
        if worker.rank is None:
            if worker.name not in given:
                while number in taken:
                    number += 1
                given[worker.name] = number
                taken.add(number)
            worker.rank = given[worker.name]
