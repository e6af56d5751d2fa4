"""View: the rows a summary or the per-kernel table produces, ready for any renderer."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class View:
    """Rows (dicts keyed by column name) with the columns to show and notes for the footer."""

    title: str
    columns: tuple
    rows: list
    notes: list = field(default_factory=list)

    def __len__(self):
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __getitem__(self, i):
        return self.rows[i]

    def __str__(self):
        from .render.text import render_view

        return render_view(self)

    def _repr_html_(self):
        from .render.html import view_html

        return view_html(self)
