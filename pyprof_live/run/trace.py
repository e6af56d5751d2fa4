"""One Chrome trace for a whole run: a process per rank, clocks aligned on a collective.

Ranks' clocks differ (other hosts, other clock origins), but every rank leaves a collective at the
same moment: each rank's times are shifted so that its first collective ends when the first rank's
does (the ``offsets`` table of run/views.py). Host ops and device work (a track per GPU stream) are
read from the store rank by rank and written as they come, so memory stays bounded.
"""

from __future__ import annotations

import json

from ..store.files import write_text_atomically
from .views import Prepared

_BATCH = 50_000

_EVENTS = """
SELECT r.record, coalesce(r.name, r.kind || CASE WHEN r.copy_kind <> '' THEN ' ' || r.copy_kind ELSE '' END) AS name,
       r.start - o.offset AS start, r."end" - r.start AS dur, r.tid, r.stream, r.device
FROM records r JOIN offsets o USING (rank)
WHERE r.rank = ? AND r.record IN ('ops', 'kernels', 'memops', 'ranges')
ORDER BY start
"""


def write_merged_trace(run, path) -> int:
    """Write the run's merged trace to ``path`` (.json or .json.gz); returns the events written."""
    store = run.store()
    prepared = Prepared(store)
    origin = (
        prepared.rows(
            "SELECT min(r.start - o.offset) AS origin FROM records r JOIN offsets o USING (rank) "
            "WHERE r.record IN ('ops', 'kernels', 'memops', 'ranges')"
        )[0]["origin"]
        or 0
    )
    ranks = sorted({worker.rank for worker, _ in store.files})
    written = 0

    def write(out) -> None:
        nonlocal written
        header = {"time_origin_ns": origin, "aligned_on": "the end of each rank's first collective"}
        out.write('{"displayTimeUnit":"ms","otherData":' + json.dumps(header) + ",")
        out.write('"traceEvents":[')
        first = True
        for rank in ranks:
            for event in _rank_events(store, rank, origin):
                out.write(("" if first else ",\n") + json.dumps(event, separators=(",", ":")))
                first = False
                written += 1
        out.write("]}\n")

    write_text_atomically(path, write)
    return written


def _rank_events(store, rank: int, origin: int):
    yield {"ph": "M", "name": "process_name", "pid": rank, "tid": 0, "args": {"name": f"rank {rank}"}}
    yield {"ph": "M", "name": "process_sort_index", "pid": rank, "tid": 0, "args": {"sort_index": rank}}
    threads: dict = {}  # (kind, id) -> small tid: Python thread idents do not fit viewers' 32-bit tids
    result = store.connect().execute(_EVENTS, [rank])
    while batch := result.fetchmany(_BATCH):
        for record, name, start, dur, tid, stream, device in batch:
            host = record in ("ops", "ranges")
            key = ("host", tid) if host else ("stream", device, stream)
            small = threads.get(key)
            if small is None:
                small = threads[key] = len(threads) + 1
                label = f"thread {tid}" if host else f"GPU {device} stream {stream}"
                yield {"ph": "M", "name": "thread_name", "pid": rank, "tid": small, "args": {"name": label}}
            yield {
                "ph": "X",
                "name": name,
                "cat": record,
                "pid": rank,
                "tid": small,
                "ts": (start - origin) / 1000,
                "dur": max(dur, 0) / 1000,
            }
