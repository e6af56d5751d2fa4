"""File names in a run directory (``profile(logdir=...)``), as torch.profiler's tensorboard_trace_handler
names its traces: ``{worker}.{time_ms}.pt.trace.json`` there, ``{worker}[.steps-A-B].{time_ms}.parquet``
here, so one directory can hold several runs of a worker and each recorded window of steps.

Worker files of other tools open in a run too: per-rank Kineto traces (``rank-N.json.gz``, HTA's and
scale_kineto's layout; ``{worker}.{time_ms}.pt.trace.json[.gz]``, the handler's), Nsight Systems
exports and saved profiles. Which rank a file is comes from the file when it says
(``distributedInfo``), else from its name (``rank-3``, ``worker3``, ``rank3``).
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import NamedTuple

_OURS = re.compile(r"(?P<worker>.+?)(?:\.steps-(?P<first>\d+)-(?P<last>\d+))?\.(?P<time>\d+)\.parquet\Z")
#: Endings of worker files and what is left of the name when the ending is cut (the worker name).
_ENDINGS = (".pt.trace.json.gz", ".pt.trace.json", ".json.gz", ".json", ".parquet", ".pplive", ".sqlite", ".sql")
_TIMESTAMP = re.compile(r"\.\d{10,}\Z")  # tensorboard_trace_handler's ".{time_ms}"
_RANK_IN_NAME = re.compile(r"(?:^|[^a-z])(?:rank|worker)[-_]?(\d+)(?:\D|\Z)", re.IGNORECASE)


class WorkerFile(NamedTuple):
    """One file of a run directory: whose it is and, for a recorded window, which steps."""

    path: Path
    worker: str
    steps: tuple | None  # (first, last) step of a recorded window, else None


def worker_file_name(worker: str, steps: tuple | None = None, now_ms: int | None = None) -> str:
    """The name ``profile(logdir=...)`` gives a worker's file (``steps``: (first, last) of a window)."""
    stamp = int(time.time() * 1000) if now_ms is None else now_ms
    window = f".steps-{steps[0]}-{steps[1]}" if steps is not None else ""
    return f"{worker}{window}.{stamp}.parquet"


def parse_worker_file(path) -> WorkerFile | None:
    """Whose file ``path`` is by its name, or None when the name is not a worker file's."""
    path = Path(path)
    name = path.name
    match = _OURS.fullmatch(name)
    if match:
        steps = (int(match["first"]), int(match["last"])) if match["first"] is not None else None
        return WorkerFile(path, match["worker"], steps)
    for ending in _ENDINGS:
        if name.endswith(ending) and len(name) > len(ending):
            return WorkerFile(path, _TIMESTAMP.sub("", name[: -len(ending)]), None)
    return None


def rank_in_name(worker: str) -> int | None:
    """The rank a worker name states (``rank-3``, ``worker3_step_12``), or None."""
    match = _RANK_IN_NAME.search(worker)
    return int(match.group(1)) if match else None
