"""Views across the workers of one run, for the Distributed page.

Per worker: its steps' wall time split as in the overview (kernel, memcpy, memset, runtime,
dataloader, CPU exec, other) and the GPU busy share, so the slowest worker and what it spent its time
on stand out. Built on each worker's ``p.overview()``; the cross-rank views of the runs-and-ranks
work (communication, overlap, stragglers) take over here once a Run offers them.
"""

from __future__ import annotations

from ..render.pages import view_payload
from ..report.columns import OVERVIEW
from ..report.view import View


def workers_view(workers) -> View:
    """``workers``: [(name, Profile)] -> one row per worker, the slowest first."""
    rows, columns = [], ["worker", "steps"]
    for name, profile in workers:
        overview = profile.overview()
        total = overview.rows[-1] if overview.rows else {}
        steps = sum(1 for r in overview.rows if r.get("step") != "total")
        row = {"worker": name, "steps": steps}
        for column in overview.columns[1:]:
            row[column] = total.get(column)
            if column not in columns:
                columns.append(column)
        rows.append(row)
    rows.sort(key=lambda r: -(r.get("dur") or 0))
    notes = []
    if len(rows) > 1 and rows[-1].get("dur"):
        notes.append(
            f"slowest worker {rows[0]['worker']} took {rows[0]['dur'] / rows[-1]['dur']:.2f}x the wall time "
            f"of the fastest, {rows[-1]['worker']}"
        )
    return View("workers", tuple(columns), rows, notes, OVERVIEW)


def workers_payload(workers) -> dict:
    view = workers_view(workers)
    return {"view": view_payload(view), "notes": []}
