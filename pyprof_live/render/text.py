"""Text renderers for views: aligned columns (with PyProf's ``-w`` width fitting), CSV, space-separated."""

from __future__ import annotations

import csv
import io

from ..columns import BY_NAME
from ..errors import ColumnError

FORMATS = ("columns", "csv", "space")
_MIN_SHRUNK = 8


def header(name: str) -> str:
    column = BY_NAME.get(name)
    return column.header if column else name


def cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def render_view(view, columns=None, fmt: str = "columns", width: int | None = None, limit: int | None = None) -> str:
    """The view's rows as text; ``columns`` defaults to the view's own."""
    columns = tuple(columns or view.columns)
    rows = view.rows if limit is None else view.rows[:limit]
    if fmt == "csv":
        return render_csv(rows, columns)
    if fmt == "space":
        return "\n".join(
            " ".join(cell(r.get(c)).replace(" ", "_") or "-" for c in columns) for r in rows
        )
    if fmt != "columns":
        raise ColumnError(f"unknown format {fmt!r}; valid: {', '.join(FORMATS)}")
    text = render_columns(rows, columns, width)
    notes = list(view.notes)
    if limit is not None and len(view.rows) > limit:
        notes.insert(0, f"showing {limit} of {len(view.rows)} rows")
    return text + ("\n" + "\n".join(notes) if notes else "")


def render_csv(rows, columns) -> str:
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow([header(c) for c in columns])
    for r in rows:
        writer.writerow([cell(r.get(c)) for c in columns])
    return out.getvalue()


def render_columns(rows, columns, width: int | None) -> str:
    table = [[cell(r.get(c)) for c in columns] for r in rows]
    heads = [header(c) for c in columns]
    widths = [max([len(h)] + [len(row[i]) for row in table]) for i, h in enumerate(heads)]
    numeric = [all(_is_number(r.get(c)) for r in rows) and bool(rows) for c in columns]
    if width is not None:
        widths = _fit(widths, heads, columns, numeric, width)

    def line(values):
        parts = []
        for i, v in enumerate(values):
            if len(v) > widths[i]:
                v = v[: max(widths[i] - 1, 0)] + "…"
            parts.append(v.rjust(widths[i]) if numeric[i] else v.ljust(widths[i]))
        return "  ".join(parts).rstrip()

    return "\n".join([line(heads)] + [line(row) for row in table])


def _is_number(value) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)) or value == "na"


def _fit(widths, heads, columns, numeric, width: int) -> list:
    """Shrink the widest text column, one character at a time, until the line fits ``width`` (PyProf's
    ``-w`` shrank kernel and params the same way); numbers are never cut."""
    widths = list(widths)
    total = lambda: sum(widths) + 2 * (len(widths) - 1)  # noqa: E731
    shrinkable = [i for i in range(len(columns)) if not numeric[i]]
    while total() > width:
        candidates = [i for i in shrinkable if widths[i] > max(_MIN_SHRUNK, len(heads[i]))]
        if not candidates:
            needed = total()
            raise ColumnError(f"width {width} is too small for columns {','.join(columns)}: they need at least {needed}")
        widest = max(candidates, key=lambda i: widths[i])
        widths[widest] -= 1
    return widths
