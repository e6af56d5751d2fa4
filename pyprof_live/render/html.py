"""HTML table of a view, for Jupyter's ``_repr_html_`` (self-contained, no scripts)."""

from __future__ import annotations

from html import escape as _html_escape

from ..safe_text import printable
from .text import cell


def escape(text: str) -> str:
    """Text from the profile in HTML: control characters and lone surrogates escaped, then markup."""
    return _html_escape(printable(text))


def view_html(view, limit: int = 500) -> str:
    columns = view.columns
    head = "".join(f"<th>{escape(view.column(c).header)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(cell(r.get(c)))}</td>" for c in columns) + "</tr>" for r in view.rows[:limit]
    )
    notes = "".join(f"<p>{escape(n)}</p>" for n in view.notes)
    more = f"<p>showing {limit} of {len(view.rows)} rows</p>" if len(view.rows) > limit else ""
    return f"<div><b>{escape(view.title)}</b><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}{notes}</div>"
