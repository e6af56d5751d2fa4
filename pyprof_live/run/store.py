"""A run's columnar store: every worker as one Parquet file, queried across ranks with DuckDB.

Workers saved by ``profile(logdir=...)`` already are Parquet. Other worker files (Kineto traces,
nsys exports, saved profiles) are imported and correlated once, by the importers every profile goes
through, and cached as Parquet: in ``RUNDIR/.pyprof_live/`` when the run directory is writable (by its mode too), else
under the user's cache directory; a cached file is named after its source's size and mtime, so an
edited source is converted again. Conversions run in ``processes`` worker processes (each holds
one worker's records while it converts them) and show a progress bar in a terminal.

Queries run in DuckDB (embedded) with a memory limit and a spill directory, out of core: memory
stays bounded however many ranks. The same files are what a cluster reads (``dask.dataframe``,
Spark): ``RunStore.files`` lists them with their rank.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

from ..errors import PyprofLiveError

#: DuckDB's memory limit for cross-rank queries; past it, it spills to the cache directory.
MEMORY_LIMIT = "1GB"
CACHE_FOLDER = ".pyprof_live"
#: Sources (bytes on disk, all pending files together) from which conversion runs in worker processes.
PARALLEL_FROM_BYTES = 64 << 20


def _writable(folder: Path) -> bool:
    """May we write into ``folder``? Its mode must allow writing too: root may write into a folder made
    read-only (shared recordings), and must not leave a cache there."""
    return os.access(folder, os.W_OK | os.X_OK) and bool(folder.stat().st_mode & 0o222)


def _cache_directory(run_path: Path) -> Path:
    local = run_path / CACHE_FOLDER
    if _writable(run_path) or (local.is_dir() and _writable(local)):
        return local
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    digest = hashlib.sha1(str(run_path.resolve()).encode()).hexdigest()[:16]
    return base / "pyprof_live" / "runs" / digest


def _cached_name(source: Path) -> str:
    stat = source.stat()
    return f"{source.name}.{stat.st_size}-{stat.st_mtime_ns}.parquet"


def convert(source: str, target: str) -> str | None:
    """Import ``source`` and write it as Parquet at ``target``; the error line instead, if it fails.
    (Runs in a worker process: takes and returns plain strings.)"""
    from ..importers import load
    from ..store.columnar import write_profile

    try:
        write_profile(load(source), target)
    except PyprofLiveError as e:
        return str(e)
    except OSError as e:
        return f"{source}: cannot write its columnar copy {target} ({e.strerror or e})"
    return None


@dataclass
class RunStore:
    """Parquet files of a run's readable workers, with a DuckDB connection over them."""

    files: list  # (Worker, Path of its Parquet file), by rank
    temp_directory: Path
    notes: list = field(default_factory=list)
    #: Whether the views' shared tables (steps, device work, breakdown) are built on the connection.
    prepared: bool = False
    _connection: object = None

    @classmethod
    def open(cls, run, progress=None, processes: int | None = None) -> RunStore:
        cache = _cache_directory(run.path)
        pending = []
        ready = []
        for worker in run.entries:
            if worker.kind == "columnar":
                ready.append((worker, worker.path))
                continue
            target = cache / _cached_name(worker.path)
            if target.exists():
                ready.append((worker, target))
            else:
                pending.append((worker, target))
        if pending:
            cache.mkdir(parents=True, exist_ok=True)
            ready += _convert_all(run, pending, progress, processes)
        ready.sort(key=lambda pair: (pair[0].rank, pair[0].name, pair[0].steps or ()))
        if not ready:
            raise PyprofLiveError(f"{run.path}: no worker could be read ({'; '.join(run.problems[:3])})")
        return cls(ready, cache / "duckdb-spill", list(run.problems))

    def connect(self):
        """The DuckDB connection, with ``records`` (every row of every file, with ``rank`` and
        ``worker``) and ``workers`` (file, rank, worker) ready to query."""
        if self._connection is None:
            import duckdb

            self.temp_directory.mkdir(parents=True, exist_ok=True)
            db = duckdb.connect(
                config={
                    "memory_limit": MEMORY_LIMIT,
                    "temp_directory": str(self.temp_directory),
                    "threads": max(1, min(4, os.cpu_count() or 1)),
                    "preserve_insertion_order": False,
                }
            )
            db.execute("CREATE TEMP TABLE workers (file VARCHAR, rank INTEGER, worker VARCHAR)")
            db.executemany("INSERT INTO workers VALUES (?, ?, ?)", [(str(p), w.rank, w.label) for w, p in self.files])
            paths = ", ".join("'" + str(p).replace("'", "''") + "'" for _, p in self.files)
            db.execute(
                "CREATE TEMP VIEW records AS SELECT w.rank, w.worker, r.* EXCLUDE (filename), r.filename AS file "
                f"FROM read_parquet([{paths}], filename = true, union_by_name = true) r "
                "JOIN workers w ON w.file = r.filename"
            )
            self._connection = db
        return self._connection

    def query(self, sql: str, parameters=None) -> list[dict]:
        """Rows of ``sql`` as dicts keyed by column name."""
        result = self.connect().execute(sql, parameters or [])
        names = [d[0] for d in result.description]
        return [dict(zip(names, row)) for row in result.fetchall()]


def _convert_all(run, pending: list, progress, processes: int | None) -> list:
    """Convert ``pending`` (worker, target) pairs; failures go to ``run.problems``."""
    if processes is None:  # worker processes pay off once a conversion outweighs starting Python + torch
        size = sum(worker.path.stat().st_size for worker, _ in pending)
        processes = min(2, os.cpu_count() or 1) if size > PARALLEL_FROM_BYTES else 1
    bar = _progress_bar(len(pending), progress)
    done = []
    try:
        if processes == 1 or len(pending) == 1:
            results: Iterator[str | None] = (convert(str(w.path), str(t)) for w, t in pending)
            for (worker, target), error in zip(pending, results):
                done += _settle(run, worker, target, error, bar)
        else:
            # A fresh process per file: the heap of one worker's records is given back to the system
            # before the next (a long-lived process keeps its high-water mark, 2.4x a file's peak).
            context = get_context("spawn")
            with ProcessPoolExecutor(processes, mp_context=context, max_tasks_per_child=1) as pool:
                results = pool.map(convert, [str(w.path) for w, _ in pending], [str(t) for _, t in pending])
                for (worker, target), error in zip(pending, results):
                    done += _settle(run, worker, target, error, bar)
    finally:
        if bar is not None:
            bar.close()
    return done


def _settle(run, worker, target, error, bar) -> list:
    if bar is not None:
        bar.update(1)
    if error is not None:
        run.problems.append(error)
        return []
    return [(worker, target)]


def _progress_bar(total: int, progress):
    """tqdm on stderr when it is a terminal (or ``progress=True``); nothing otherwise."""
    show = sys.stderr.isatty() if progress is None else bool(progress)
    if not show:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc="importing workers", unit="worker", file=sys.stderr, leave=False)
