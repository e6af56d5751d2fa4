"""The runs and workers of a log directory, as the dashboard lists and loads them.

A run is a folder under LOGDIR (LOGDIR itself is the run "."); its workers are the files in it that
``pyprof_live.load_run`` reads (``profile(logdir=...)``'s Parquet files, one per worker or per recorded
window of steps; Kineto traces as torch.profiler's tensorboard_trace_handler writes them; saved
profiles, nsys/nvprof exports), named as ``store/layout.py`` names them. Only files under LOGDIR are
ever opened: folders reached through a symlink are not walked, and a file that is a symlink is
listed only when its target lies under LOGDIR too. Names the page sends back are looked up in this
listing; they are never joined to a path.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass

from ..store.layout import parse_worker_file

MAX_DEPTH = 4  # folders below LOGDIR that are searched for runs
MAX_FILES = 20_000  # entries looked at per scan: a huge unrelated tree must not stall the page
CACHED_PROFILES = 6


@dataclass(frozen=True)
class Worker:
    name: str
    paths: tuple  # absolute, resolved paths under LOGDIR
    version: str  # changes whenever a file of the worker changes (mtime, size)


@dataclass(frozen=True)
class Run:
    name: str  # folder relative to LOGDIR, "/"-separated; "." for LOGDIR itself
    workers: tuple


class LogDir:
    """Lists runs (cheap: a walk and a stat per file) and loads workers (cached by version)."""

    def __init__(self, path):
        self.root = os.path.realpath(os.fspath(path))
        if not os.path.isdir(self.root):
            raise NotADirectoryError(self.root)
        self._cache: OrderedDict = OrderedDict()  # (paths, version) -> Profile
        self._lock = threading.Lock()
        self._loading: dict = {}  # key -> Lock, so two requests never load one worker twice

    def inside(self, path: str) -> bool:
        """Whether ``path`` (resolved, symlinks followed) lies under LOGDIR."""
        real = os.path.realpath(path)
        return real == self.root or real.startswith(self.root + os.sep)

    def runs(self) -> list:
        """Every run with at least one worker, sorted by name."""
        found = []
        seen = 0
        for folder, dirs, files in os.walk(self.root, followlinks=False):
            depth = 0 if folder == self.root else os.path.relpath(folder, self.root).count(os.sep) + 1
            dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if depth < MAX_DEPTH else []
            seen += len(files) + len(dirs)
            workers = []
            for name in sorted(files):
                parsed = parse_worker_file(name) if not name.startswith(".") else None
                if parsed is None:
                    continue
                path = os.path.join(folder, name)
                if not self.inside(path):
                    continue  # a symlink out of LOGDIR: never opened
                try:
                    info = os.stat(path)
                except OSError:
                    continue  # removed while we looked
                if not os.path.isfile(path):
                    continue
                version = hashlib.sha1(f"{info.st_mtime_ns}:{info.st_size}:{info.st_ino}".encode()).hexdigest()[:12]
                label = (
                    parsed.worker
                    if parsed.steps is None
                    else f"{parsed.worker}[steps {parsed.steps[0]}-{parsed.steps[1]}]"
                )
                workers.append(Worker(label, (os.path.realpath(path),), version))
            if workers:
                relative = os.path.relpath(folder, self.root).replace(os.sep, "/")
                found.append(Run(relative, tuple(_unique_names(workers))))
            if seen > MAX_FILES:
                break
        return sorted(found, key=lambda r: r.name)

    def worker(self, run: str, worker: str) -> Worker | None:
        """The worker of that name in that run, as listed now; None when there is none."""
        for r in self.runs():
            if r.name == run:
                return next((w for w in r.workers if w.name == worker), None)
        return None

    def load(self, worker: Worker):
        """The worker's Profile (one file today), loaded once per version."""
        key = (worker.paths, worker.version)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
            gate = self._loading.setdefault(key, threading.Lock())
        with gate:
            with self._lock:
                if key in self._cache:
                    return self._cache[key]
            from ..importers import load

            profile = load(worker.paths[0])
            with self._lock:
                self._cache[key] = profile
                self._loading.pop(key, None)
                while len(self._cache) > CACHED_PROFILES:
                    self._cache.popitem(last=False)
            return profile


def _unique_names(workers: list) -> list:
    """Two files can give one name (w0.json and w0.pplive): the later ones keep their file name."""
    seen = set()
    unique = []
    for w in workers:
        name = w.name if w.name not in seen else os.path.basename(w.paths[0])
        seen.add(name)
        unique.append(Worker(name, w.paths, w.version))
    return unique
