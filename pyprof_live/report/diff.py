"""Op-by-op comparison of two profiles (a baseline A and a new run B): what got slower, faster, more frequent.

Both sides are the per-op summary (``p.ops()``), matched by op name (or op and input shapes).
Times compared are self times, so an op and the ops it calls are never counted twice: device time
of the op's own kernels when both profiles have GPU activity, else host self time.
"""

from __future__ import annotations

from .columns import SUMMARY
from .view import View
from .views import has_device_time


def diff(before, after, by: str = "op") -> View:
    """Rows per op present in either profile, sorted by the largest absolute change of time first.

    Columns: calls, host self time, device self time and flops of A and B, and their deltas
    (``d_*`` = B - A; None where a side has no formula for flops).
    """
    rows_a = {_key(r): r for r in before.ops(by=by).rows}
    rows_b = {_key(r): r for r in after.ops(by=by).rows}
    device_a, device_b = has_device_time(before), has_device_time(after)
    time = "dev_self" if device_a and device_b else "host_self"
    rows = []
    for key in rows_a.keys() | rows_b.keys():
        a, b = rows_a.get(key, {}), rows_b.get(key, {})
        row = {"op": key[0], "params": key[1] or None}
        for name in ("calls", "host_self", "dev_self", "flops"):
            va, vb = a.get(name, 0), b.get(name, 0)
            row[f"{name}_a"], row[f"{name}_b"] = va, vb
            row[f"d_{name}"] = vb - va if isinstance(va, int) and isinstance(vb, int) else None
        rows.append(row)
    rows.sort(key=lambda r: (-abs(r[f"d_{time}"]), -abs(r["d_calls"]), r["op"], r["params"] or ""))
    columns: tuple[str, ...] = ("op", "params") if by == "op+shape" else ("op",)
    columns += ("calls_a", "calls_b", "d_calls", "host_self_a", "host_self_b", "d_host_self")
    if device_a or device_b:
        columns += ("dev_self_a", "dev_self_b", "d_dev_self")
    columns += ("flops_a", "flops_b", "d_flops")
    notes = [f"A = {_source(before)}; B = {_source(after)}", _total_note(rows, "host_self", "host self time")]
    if device_a or device_b:
        notes.append(_total_note(rows, "dev_self", "device time"))
    if device_a != device_b:
        notes.append("only one profile has GPU activity: rows are sorted by the change of host self time")
    only_a = sum(1 for k in rows_a if k not in rows_b)
    only_b = sum(1 for k in rows_b if k not in rows_a)
    notes.append(f"{len(rows)} ops by {by}: {only_a} only in A, {only_b} only in B; sorted by |d_{time}|")
    return View(f"diff by {by}", columns, rows, notes, SUMMARY)


def _key(row) -> tuple:
    return row["op"], row.get("params") or ""


def _source(profile) -> str:
    return str(profile.meta.get("path") or profile.meta.get("source", "?"))


def _total_note(rows, name: str, label: str) -> str:
    a = sum(r[f"{name}_a"] for r in rows)
    b = sum(r[f"{name}_b"] for r in rows)
    change = f" ({100.0 * (b - a) / a:+.1f}%)" if a else ""
    return f"total {label}: A {a} ns, B {b} ns, B - A = {b - a:+d} ns{change}"
