"""View: the rows a summary or the per-kernel table produces, ready for any renderer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..errors import ColumnError
from .columns import TABLE, Column


@dataclass
class View:
    """Rows (dicts keyed by column name) with the columns to show and notes for the footer.

    ``declared`` is the table of ``report/columns.py`` that declares the view's columns (header
    and kind); the default is the per-kernel table's. Names mean other things in other views (the
    overview's ``kernel`` is time, the modules' ``ops`` a count), so each view names its table.
    """

    title: str
    columns: tuple
    rows: list
    notes: list = field(default_factory=list)
    declared: Mapping[str, Column] = field(default_factory=lambda: TABLE, repr=False)

    def column(self, name: str) -> Column:
        """The declared header and kind of column ``name``: what every renderer goes by."""
        try:
            return self.declared[name]
        except KeyError:
            raise ColumnError(f"column {name!r} of view {self.title!r} is not declared in report/columns.py") from None

    def limited(self, limit: int | None) -> View:
        """This view with its first ``limit`` rows only (the notes say how many there were); None: all."""
        if limit is None:
            return self
        if limit < 0:
            raise ColumnError(f"limit must be 0 or more, not {limit}")
        if len(self.rows) <= limit:
            return self
        note = f"showing {limit} of {len(self.rows)} rows"
        return View(self.title, self.columns, self.rows[:limit], [note, *self.notes], self.declared)

    def __len__(self):
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __getitem__(self, i):
        return self.rows[i]

    def table(self, fmt: str = "columns", width: int | None = None, limit: int | None = None) -> str:
        """The rows as text, in any format :meth:`Profile.table` takes (``p.ops().table(fmt="github")``)."""
        from ..render.renderer import renderer

        return renderer("text").render(self, fmt=fmt, width=width, limit=limit)

    def __str__(self):
        return self.table()

    def _repr_html_(self):
        from ..render.renderer import renderer

        return renderer("html_table").render(self)
