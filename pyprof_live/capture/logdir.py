"""``profile(logdir=...)``: each worker of a job saves its profile into one run directory.

The worker's name follows torch.profiler's tensorboard_trace_handler habit, made rank-aware: the
torch.distributed rank when a process group is up (``rank-3``), else ``RANK`` / ``LOCAL_RANK`` from
the launcher's environment (``rank-3``, ``host_local-rank-1``), else host and pid (``host_4242``).
With ``steps=``, each recorded window of consecutive steps gets its own file; ``load_run(logdir)``
reads them all back as one Run.
"""

from __future__ import annotations

import os
import socket
from copy import copy
from pathlib import Path

import torch

from ..errors import CaptureError
from ..profile import Profile
from ..records import Records
from ..store.columnar import write_profile
from ..store.layout import worker_file_name


def distributed_info() -> dict:
    """Rank and world size of this process: torch.distributed's, else the launcher's environment."""
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return {"rank": dist.get_rank(), "world_size": dist.get_world_size(), "backend": str(dist.get_backend())}
    info = {}
    for key, name in (("RANK", "rank"), ("WORLD_SIZE", "world_size"), ("LOCAL_RANK", "local_rank")):
        value = os.environ.get(key, "")
        if value.isdigit():
            info[name] = int(value)
    return info


def worker_name(info: dict | None = None) -> str:
    """This process's worker name in a run directory."""
    info = distributed_info() if info is None else info
    if "rank" in info:
        return f"rank-{info['rank']}"
    host = socket.gethostname() or "host"
    if "local_rank" in info:
        return f"{host}_local-rank-{info['local_rank']}"
    return f"{host}_{os.getpid()}"


def prepare_logdir(logdir) -> Path:
    """Create the run directory now, so a path that cannot be one fails at start(), not after training."""
    path = Path(logdir)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CaptureError(f"logdir {path}: cannot create the run directory ({e.strerror or e})") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise CaptureError(f"logdir {path}: the run directory is not writable")
    return path


def save_worker(profile: Profile, logdir: Path, windows: bool, names: dict) -> list[Path]:
    """Write ``profile`` into ``logdir``: whole, or one file per window of recorded steps.

    ``names`` (window or None -> path) is kept by the caller across stops, so a profile stopped
    again rewrites its files instead of adding copies of the same records.
    """
    info = distributed_info()
    profile.meta["distributed"] = {**profile.meta.get("distributed", {}), **info}
    worker = worker_name(info)
    profile.meta["worker"] = worker
    parts = step_windows(profile) if windows else []
    written = []
    if not parts:
        path = names.setdefault(None, logdir / worker_file_name(worker))
        write_profile(profile, path)
        return [path]
    for first, last, start, end in parts:
        part = window(profile, start, end)
        part.meta["steps"] = [first, last]
        path = names.setdefault((first, last), logdir / worker_file_name(worker, (first, last)))
        write_profile(part, path)
        written.append(path)
    return written


def step_windows(profile: Profile) -> list[tuple]:
    """(first step, last step, start, end) of each run of consecutive recorded steps."""
    steps = sorted(
        (int(r.name.split()[1]), r.start, r.end)
        for r in profile.records.ranges
        if r.kind == "step" and r.name.split()[-1].isdigit()
    )
    windows: list = []
    for number, start, end in steps:
        if windows and number == windows[-1][1] + 1:
            first, _, first_start, _ = windows[-1]
            windows[-1] = (first, number, first_start, end)
        else:
            windows.append((number, number, start, end))
    return windows


def window(profile: Profile, start: int, end: int) -> Profile:
    """Copies of the records of ``profile`` whose host time starts in [start, end]; GPU work goes with
    its launch. Copies, as correlating the window rewrites their link fields."""
    profile.correlation  # noqa: B018 - kernels and memops need their launch to know their window
    records = profile.records
    apis = records.apis

    def host(r) -> bool:
        return start <= r.start <= end

    def device(r) -> bool:
        launched = apis[r.launch].start if r.launch >= 0 else r.start
        return start <= launched <= end

    part = Records(
        ops=[copy(r) for r in records.ops if host(r)],
        apis=[copy(r) for r in apis if host(r)],
        kernels=[copy(r) for r in records.kernels if device(r)],
        memops=[copy(r) for r in records.memops if device(r)],
        ranges=[r for r in records.ranges if host(r)],
        devices=list(records.devices),
    )
    return Profile(**vars(part), meta=dict(profile.meta))
