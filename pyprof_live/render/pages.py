"""What the dashboard's pages show of one profile, as JSON-ready dicts: every table view with its
numbers both raw (for sorting, charts and CSV) and as text a person reads (human units).

The same payloads feed the served app (``pyprof-live serve``) and the one-file export
(``p.save_html()``), so both show the same pages. Views come from the profile's own methods
(``p.overview()``, ``p.ops()``...); this module only lays their cells out.
"""

from __future__ import annotations

from ..analysis.memory import device_memory
from .page_units import UNIT_RULES, human

#: Points of a memory curve sent to the page; longer curves keep each bucket's lowest and highest.
CURVE_POINTS = 4000

#: Columns that hold a time in ns, whatever view they are in (the overview's ``kernel`` is time, the
#: kernel view's ``kernel`` is a name: text columns are never formatted, see ``column_quantity``).
_TIME_COLUMNS = frozenset(
    "host host_self dev dev_self sil mean min max ideal dur kernel memcpy memset runtime dataloader cpu_exec profiler "
    "other gpu_busy gpu_idle fwd bwd dev_fwd dev_bwd at_stake host_self_a host_self_b d_host_self "
    "dev_self_a dev_self_b d_dev_self compile time dynamo aot inductor".split()
)
_FLOP_COLUMNS = frozenset({"flops", "flops_a", "flops_b", "d_flops"})
_BYTE_COLUMNS = frozenset({"bytes", "live_bytes", "allocated", "reserved", "peak"})
_PERCENT_COLUMNS = frozenset({"sol%", "busy%", "share%", "kernel%"})

#: Table views of one profile, by the name the page uses, and how to get each from a Profile.
TABLE_VIEWS = {
    "overview": lambda p: p.overview(),
    "recommendations": lambda p: p.recommendations(),
    "ops": lambda p: p.ops(),
    "ops+shape": lambda p: p.ops(by="op+shape"),
    "kernels": lambda p: p.kernels(),
    "modules": lambda p: p.modules(),
    "memory": lambda p: p.memory(),
    "memory+module": lambda p: p.memory(by="module"),
}


def column_quantity(view, name: str) -> str:
    """How a column's numbers read: "time", "flops", "bytes", "percent", "count" or "text"."""
    if view.column(name).kind == "text":
        return "text"
    if name in _TIME_COLUMNS:
        return "time"
    if name in _FLOP_COLUMNS:
        return "flops"
    if name in _BYTE_COLUMNS:
        return "bytes"
    if name in _PERCENT_COLUMNS:
        return "percent"
    return "count"


def cell_text(value, quantity: str) -> str:
    """A cell as the page shows it: '-' for no value, 'na' kept, numbers in human units."""
    if value is None:
        return "-"
    if isinstance(value, str) or isinstance(value, bool):
        return str(value)
    if quantity in UNIT_RULES or quantity == "time":
        return human(value, quantity)
    if quantity == "percent":
        return f"{value:.1f}%"
    if isinstance(value, float):
        return f"{value:.4g}"
    return f"{value:,}"


def view_payload(view, hide=()) -> dict:
    """A View as the page reads it: columns (name, header, quantity), rows of raw values, rows of text."""
    columns = [c for c in view.columns if c not in hide]
    quantities = [column_quantity(view, c) for c in columns]
    raw, text = [], []
    for row in view.rows:
        values = [_raw(row.get(c)) for c in columns]
        raw.append(values)
        text.append([cell_text(v, q) for v, q in zip(values, quantities)])
    return {
        "title": view.title,
        # headers lose "(ns)": the cells carry their own unit
        "columns": [
            {"name": c, "header": view.column(c).header.replace("(ns)", ""), "quantity": q}
            for c, q in zip(columns, quantities)
        ],
        "rows": raw,
        "text": text,
        "notes": [str(n) for n in view.notes],
    }


def _raw(value):
    """JSON-safe raw value: numbers and text stay, anything else (a tuple) becomes its text."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def profile_payload(profile) -> dict:
    """Every table view of a profile plus the summary cards."""
    views = {name: view_payload(get(profile), hide=("items",)) for name, get in TABLE_VIEWS.items()}
    return {"summary": summary(profile), "views": views, "memory": memory_curves(profile)}


def summary(profile) -> dict:
    """The cards at the top of the overview: counts and what the source is."""
    records = profile.records
    linked = profile.correlation
    cards = [
        ["ops", f"{len(records.ops):,}"],
        ["kernels", f"{len(records.kernels):,}"],
        ["memcpy/memset", f"{len(records.memops):,}"],
    ]
    if records.kernels:
        cards.append(["kernels tied to an op", f"{linked.kernels_with_op:,} / {linked.kernels:,}"])
    if linked.bwd_ops:
        cards.append(["bwd ops tied to a fwd op", f"{linked.bwd_ops_with_fwd:,} / {linked.bwd_ops:,}"])
    devices = [f"{d.id}: {d.name}" for d in records.devices]
    return {
        "source": str(profile.meta.get("source", "?")),
        "path": str(profile.meta.get("path", "")),
        "cards": cards,
        "devices": devices,
        "device_time": bool(records.kernels or records.memops),
    }


def memory_curves(profile) -> list:
    """Per device: allocated (and reserved) bytes over time, at most CURVE_POINTS points, and the peak."""
    curves = []
    devices = [m for m in device_memory(profile) if m.peak_index >= 0]
    ops = profile.records.ops
    origin = min([m.times[0] for m in devices] + ([min(op.start for op in ops)] if ops else []), default=0)
    for memory in devices:
        times, allocated, reserved = memory.times, memory.allocated, memory.reserved
        keep = _downsample(allocated, CURVE_POINTS)
        if memory.peak_index not in keep:
            keep = sorted({*keep, memory.peak_index})
        curves.append(
            {
                "device": memory.device,
                "times": [times[i] - origin for i in keep],
                "allocated": [allocated[i] for i in keep],
                "reserved": [reserved[i] for i in keep] if reserved else None,
                "peak": memory.peak,
                "peak_time": memory.peak_time - origin,
                "events": len(times),
            }
        )
    return curves


def _downsample(values: list, points: int) -> list:
    """Indices to keep: all when few; else the first, the last, and each bucket's lowest and highest."""
    if len(values) <= points:
        return list(range(len(values)))
    step = len(values) / (points // 2)
    keep = {0, len(values) - 1}
    for b in range(points // 2):
        lo, hi = int(b * step), min(int((b + 1) * step), len(values))
        if lo < hi:
            bucket = range(lo, hi)
            keep.add(max(bucket, key=values.__getitem__))
            keep.add(min(bucket, key=values.__getitem__))
    return sorted(keep)
