"""View: the rows a summary or the per-kernel table produces, ready for any renderer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from .columns import BY_NAME

#: Numbers with a fraction (percentages, rounded to 0.1); every other number is an integer.
_REAL = frozenset({"sol%", "busy%", "share%", "kernel%"})


class ColumnType(NamedTuple):
    """What a renderer needs to know of a column: its header and whether it holds text or numbers."""

    header: str
    kind: str  # "text" | "int" | "real"


@dataclass
class View:
    """Rows (dicts keyed by column name) with the columns to show and notes for the footer.

    ``text`` names the view's text columns (the others hold numbers, '-' or 'na'); None means the
    per-kernel table, whose column contract (``report/columns.py``) says which are text. Names mean
    other things in other views (the overview's ``kernel`` is time, the modules' ``ops`` a count),
    so each view says its own.
    """

    title: str
    columns: tuple
    rows: list
    notes: list = field(default_factory=list)
    text: frozenset | None = None

    def column(self, name: str) -> ColumnType:
        known = BY_NAME.get(name)
        if self.text is None:
            is_text = known is not None and not known.numeric
        else:
            is_text = name in self.text
        kind = "text" if is_text else "real" if name in _REAL else "int"
        return ColumnType(known.header if known else name, kind)

    def __len__(self):
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __getitem__(self, i):
        return self.rows[i]

    def table(self, fmt: str = "columns", width: int | None = None, limit: int | None = None) -> str:
        """The rows as text, in any format :meth:`Profile.table` takes (``p.ops().table(fmt="github")``)."""
        from ..render.text import render_view

        return render_view(self, fmt=fmt, width=width, limit=limit)

    def __str__(self):
        return self.table()

    def _repr_html_(self):
        from ..render.html import view_html

        return view_html(self)
