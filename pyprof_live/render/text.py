"""Text renderers for views: aligned columns (with PyProf's ``-w`` width fitting), CSV, space-separated,
and every table format of tabulate (``"github"``, ``"grid"``, ``"simple"``...).

``"columns"`` stays hand-made: tabulate pads columns whose header is their widest cell by two more
spaces (its ``plain`` format cannot print today's bytes), does not cut cells to fit ``-w``, and takes
9-19x as long (``benchmarks/table_render.py``: 3820 rows in 20 ms here, 180-370 ms through tabulate).
"""

from __future__ import annotations

import csv
import io
from operator import itemgetter

from ..errors import ColumnError
from ..gcpause import paused_gc
from ..safe_text import is_printable, printable, printable_cells, printable_rows
from . import units as _units
from .units import column_unit, human, human_cell

#: Formats made here; any of tabulate's ``tabulate_formats`` is accepted too.
OWN_FORMATS = ("columns", "csv", "space")
_MIN_SHRUNK = 8


def cell(value) -> str:
    if value is None:
        return "-"
    if type(value) is float:
        return f"{value:.4g}"
    return value if type(value) is str else str(value)


@paused_gc()
def render_view(
    view, fmt: str = "columns", width: int | None = None, limit: int | None = None, best_effort: bool = False
) -> str:
    """The view's rows as text."""
    if limit is not None and limit < 0:
        raise ColumnError(f"limit must be 0 or more, not {limit}")
    columns = view.columns
    heads = [view.column(c).header for c in columns]
    if fmt == "csv":
        return render_csv(view.rows if limit is None else view.rows[:limit], columns, heads)
    shown = view.rows if limit is None else view.rows[:limit]
    if fmt == "columns":  # made column by column, text made printable per column (printable_rows' result)
        by_column = _printable_columns(_by_column(shown, columns))
    else:
        rows = printable_rows(shown, columns)
    if fmt == "space":
        return "\n".join(" ".join(cell(r.get(c)).replace(" ", "_") or "-" for c in columns) for r in rows)
    notes = [printable(note) for note in view.notes]
    if limit is not None and len(view.rows) > limit:
        notes.insert(0, f"showing {limit} of {len(view.rows)} rows")
    # Formats for people show numbers in their units (the header's "(ns)" goes: the cell says it).
    units = [column_unit(view.column(c).kind) for c in columns]
    heads = [h.removesuffix("(ns)") if u else h for h, u in zip(heads, units)]
    if fmt == "columns":
        text = _render_by_column(by_column, columns, heads, width, units, best_effort)
        return text + ("\n" + "\n".join(notes) if notes else "")
    if fmt not in formats():
        raise ColumnError(f"unknown format {fmt!r}; valid: {', '.join(formats())}")
    if width is not None:
        raise ColumnError(f'width fits fmt="columns" only, not fmt={fmt!r}')
    aligns = ["left" if view.column(c).kind == "text" else "right" for c in columns]
    text = render_tabulate(rows, columns, heads, aligns, fmt, units)
    # A blank line ends the table first: a Markdown table would take the notes as more rows.
    return text + ("\n\n" + "\n".join(notes) if notes else "")


def formats() -> tuple:
    """Every ``fmt`` the text renderer accepts: its own, then tabulate's."""
    from tabulate import tabulate_formats

    return OWN_FORMATS + tuple(tabulate_formats)


def render_tabulate(rows, columns, heads, aligns, fmt: str, units) -> str:
    """One of tabulate's formats; cells are the same text as in ``"columns"`` (no number re-parsing)."""
    from tabulate import tabulate

    cells = [[cell(human_cell(r.get(c), u)) for c, u in zip(columns, units)] for r in rows]
    return tabulate(
        cells, headers=heads, tablefmt=fmt, colalign=aligns, disable_numparse=True, preserve_whitespace=True
    )


def render_csv(rows, columns, heads) -> str:
    out = io.StringIO()
    write_csv(out, rows, columns, heads)
    return out.getvalue()


def write_csv(stream, rows, columns, heads) -> int:
    """Write the header and ``rows`` (any iterable of dicts keyed by column name, consumed once) to the
    text ``stream`` as CSV, every field quoted, each row as it comes; returns the rows written."""
    writer = csv.writer(stream, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(heads)
    written = 0
    lines: list = []  # rows made here, written in batches
    for r in rows:
        # cell() inlined for the common types: a million rows of 28 cells make this the hot loop.
        texts = [
            v if v.__class__ is str else "-" if v is None else str(v) if v.__class__ is int else cell(v)
            for v in map(r.get, columns)
        ]
        joined = "".join(texts)
        if '"' in joined or not is_printable(joined):
            stream.write("".join(lines))
            lines.clear()
            writer.writerow(printable_cells(texts))  # quotes doubled by the csv module
        else:
            lines.append('"' + '","'.join(texts) + '"\n')  # csv's QUOTE_ALL line for text without quotes
            if len(lines) == _CSV_BATCH:
                stream.write("".join(lines))
                lines.clear()
        written += 1
    stream.write("".join(lines))
    return written


_CSV_BATCH = 4096


def render_columns(rows, columns, heads, width: int | None, units=None, best_effort: bool = False) -> str:
    """Aligned columns; ``units[i]``: the unit kind of column i's numbers (render/units.py), or None.

    Cells too long for ``width`` are cut at the end, except module paths and op chains, cut at the
    start: their last part (the leaf module, the innermost op) is what tells rows apart."""
    return _render_by_column(_by_column(rows, columns), columns, heads, width, units, best_effort)


def _by_column(rows, columns) -> list:
    """The rows' values as one tuple per column (None where a row has no such cell)."""
    if not rows:
        return [()] * len(columns)
    if len(columns) > 1 and set(map(type, rows)) == _DICT:
        try:  # every row has every column (the common case): taken in C
            return list(zip(*map(itemgetter(*columns), rows)))
        except KeyError:
            pass
    return list(zip(*[[r.get(c) for c in columns] for r in rows]))


def _printable_columns(by_column: list) -> list:
    """:func:`printable_rows` done per column: each column's text searched once, as one joined string."""
    for i, col in enumerate(by_column):
        if not is_printable("".join([v for v in col if v.__class__ is str])):
            by_column[i] = tuple([printable(v) if v.__class__ is str else v for v in col])
    return by_column


def _render_by_column(by_column: list, columns, heads, width: int | None, units, best_effort: bool) -> str:
    """:func:`render_columns` of the rows' values column by column (:func:`_by_column`)."""
    # Column by column: a column's value types decide both its alignment and how its text is made,
    # so whole columns of str or int convert in C instead of one cell() call per value.
    kinds = [set(map(type, col)) for col in by_column]
    numeric = [bool(col) and _is_numeric(col, k) for col, k in zip(by_column, kinds)]
    for i, unit in enumerate(units or ()):
        if unit is not None and numeric[i]:
            by_column[i] = _in_unit(by_column[i], unit)
            kinds[i] = set(map(type, by_column[i]))
    texts: list = [
        col if k <= _STR else tuple(map(str, col)) if k <= _INT else tuple(map(cell, col))
        for col, k in zip(by_column, kinds)
    ]
    longest = [max(map(len, col), default=0) for col in texts]
    widths = [max(len(h), n) for h, n in zip(heads, longest)]
    if width is not None:
        widths = _fit(widths, heads, columns, numeric, width, best_effort)
        texts = [
            col if n <= w else tuple([v if len(v) <= w else _cut(v, w, c in CUT_AT_START) for v in col])
            for col, w, c, n in zip(texts, widths, columns, longest)
        ]
    line = "  ".join(f"{{:{'>' if n else '<'}{w}}}" for n, w in zip(numeric, widths)).format
    return "\n".join([line(*heads).rstrip()] + [line(*row).rstrip() for row in zip(*texts)])


def _in_unit(col: tuple, unit: str) -> tuple:
    """``human_cell(v, unit)`` of each value, the texts of repeated values taken from human()'s memo."""
    memo = _units._memo[unit]  # human()'s own memo: what it would return for a value seen before
    out = []
    for v in col:
        if (v.__class__ is int or v.__class__ is float) and v == v:
            text = memo.get(v)
            out.append(text if text is not None else human(v, unit))
        else:
            out.append(v)
    return tuple(out)


#: Columns whose cells are cut at the start: a module path keeps its leaf (…layer.3.attention.self.query),
#: an op chain its innermost op.
CUT_AT_START = frozenset({"module", "ops"})


def _cut(text: str, width: int, at_start: bool) -> str:
    if width <= 1:
        return "…"[:width]
    return "…" + text[len(text) - width + 1 :] if at_start else text[: width - 1] + "…"


_STR = {str}
_DICT = {dict}
_INT = {int}
_NUMBER_TYPES = {int, float, type(None)}


def _is_numeric(col, kinds: set) -> bool:
    """Numbers, '-' (None) and 'na' only: such a column is right-aligned and never cut."""
    if kinds <= _NUMBER_TYPES:
        return True
    return kinds <= _NUMBER_TYPES | _STR and all(v == "na" for v in col if type(v) is str)


def _fit(widths, heads, columns, numeric, width: int, best_effort: bool = False) -> list:
    """Shrink the widest text column, one character at a time, until the line fits ``width`` (PyProf's
    ``-w`` shrank kernel and params the same way); numbers are never cut. A line that cannot fit raises
    ColumnError, or with ``best_effort`` (a default width, not the user's) stays as narrow as it gets."""
    widths = list(widths)

    def total() -> int:
        return sum(widths) + 2 * (len(widths) - 1)

    shrinkable = [i for i in range(len(columns)) if not numeric[i]]
    while total() > width:
        candidates = [i for i in shrinkable if widths[i] > max(_MIN_SHRUNK, len(heads[i]))]
        if not candidates:
            if best_effort:
                break
            needed = total()
            raise ColumnError(
                f"width {width} is too small for columns {','.join(columns)}: they need at least {needed}"
            )
        widest = max(candidates, key=lambda i: widths[i])
        widths[widest] -= 1
    return widths
