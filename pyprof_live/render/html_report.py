"""The HTML report of a run (``Run.save_html``, ``pyprof-live RUNDIR --html``): one file, inline CSS,
SVG and script, no network; its cross-rank views as stacked bars and sortable tables. Every piece of
text from the profiles is escaped (render.html.escape: control characters too). (One profile's page
is the dashboard's: ``html_app.py``.)
"""

from __future__ import annotations

from .._version import __version__
from .html import escape
from .units import column_unit, duration, human

TOP = 15  # bars per chart
TABLE_ROWS = 100  # rows per table
TREE_NODES = 1000  # module tree nodes

COLORS = {
    "kernel": "#4e79a7",
    "memcpy": "#f28e2b",
    "memset": "#e15759",
    "runtime": "#76b7b2",
    "dataloader": "#59a14f",
    "cpu_exec": "#edc948",
    "profiler": "#b07aa1",
    "other": "#bab0ac",
    "fwd": "#4e79a7",
    "bwd": "#f28e2b",
    "rest": "#bab0ac",
    "tc": "#59a14f",
    "no_tc": "#4e79a7",
    # a run's time per rank
    "compute": "#4e79a7",
    "overlap": "#9c755f",
    "comm": "#e15759",
    "memory": "#f28e2b",
    "idle": "#bab0ac",
}

_CSS = """
:root { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #222; background: #fafafa; }
body { margin: 0 auto; max-width: 1180px; padding: 16px 24px 48px; }
h1 { font-size: 22px; margin: 8px 0 2px; } h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; }
.sub { color: #666; margin: 0 0 12px; word-break: break-all; }
nav a { margin-right: 14px; color: #36c; text-decoration: none; font-size: 14px; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 12px 0; }
.card { background: #fff; border: 1px solid #e3e3e3; border-radius: 6px; padding: 8px 14px; min-width: 120px; }
.card .k { font-size: 12px; color: #777; } .card .v { font-size: 18px; font-weight: 600; }
svg.chart { background: #fff; border: 1px solid #e3e3e3; border-radius: 6px; display: block; margin: 6px 0; }
svg.chart text { font-size: 12px; fill: #333; } svg.chart .value { fill: #555; }
.legend span { display: inline-block; margin-right: 14px; font-size: 12px; }
.legend i { display: inline-block; width: 11px; height: 11px; margin-right: 4px; vertical-align: -1px; border-radius: 2px; }
table { border-collapse: collapse; background: #fff; font-size: 12.5px; margin: 6px 0; width: 100%; }
th, td { border: 1px solid #e3e3e3; padding: 3px 6px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; cursor: pointer; user-select: none; white-space: nowrap; }
th[aria-sort=descending]::after { content: " \\25BC"; } th[aria-sort=ascending]::after { content: " \\25B2"; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.text { max-width: 520px; overflow-wrap: anywhere; }
.note { color: #666; font-size: 12.5px; margin: 3px 0; }
.tree { background: #fff; border: 1px solid #e3e3e3; border-radius: 6px; padding: 8px 12px; font-size: 13px; }
.tree summary, .tree .leaf { display: flex; align-items: center; gap: 10px; padding: 1px 0; cursor: default; }
.tree summary { list-style: none; cursor: pointer; } .tree summary::-webkit-details-marker { display: none; }
.tree .name { width: 320px; flex: none; box-sizing: border-box; overflow-wrap: anywhere; }
.tree summary .name::before { content: "▸ "; color: #888; } .tree details[open] > summary .name::before { content: "▾ "; }
.tree .leaf .name::before { content: "• "; color: #bbb; }
.mbar { display: inline-flex; width: 320px; height: 11px; background: #f1f1f1; border-radius: 2px; overflow: hidden; }
.mbar span { display: block; height: 100%; } .tree .num { color: #555; font-variant-numeric: tabular-nums; }
button { font-size: 12px; margin: 4px 6px 4px 0; }
"""

# Sortable tables and tree buttons; sets data-ready on <html> once wired (the browser test checks it).
_SCRIPT = """
(function () {
  function key(cell) {
    var v = cell.getAttribute('data-value');
    return v === null ? null : parseFloat(v);
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener('click', function () {
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var descending = th.getAttribute('aria-sort') !== 'descending';
        rows.sort(function (a, b) {
          var x = key(a.cells[col]), y = key(b.cells[col]), order;
          if (x !== null && y !== null) { order = x - y; }
          else if (x !== null || y !== null) { return x === null ? 1 : -1; }
          else { order = a.cells[col].textContent.localeCompare(b.cells[col].textContent); }
          return descending ? -order : order;
        });
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  document.querySelectorAll('button[data-tree]').forEach(function (button) {
    button.addEventListener('click', function () {
      var open = button.getAttribute('data-tree') === 'expand';
      document.querySelectorAll('.tree details').forEach(function (d) { d.open = open; });
    });
  });
  document.documentElement.setAttribute('data-ready', '1');
})();
"""


def run_report_html(run) -> str:
    """The report of a run (many ranks, ``load_run``) from its cross-rank views (pyprof_live/run/views.py):
    ``ranks``, ``stragglers``, ``skew``, ``ops`` and ``kernels`` (the ``run_html`` renderer)."""
    title, problems = str(run.path), run.problems
    views = {name: run.view(name) for name in ("ranks", "stragglers", "skew", "ops", "kernels")}
    ranks = views["ranks"]
    parts = ("compute", "overlap", "comm", "memory", "idle")
    bars = [
        (
            f"rank {row['rank']} step {row['step']}",
            [
                ("compute", row["compute"] - row["overlap"]),
                ("overlap", row["overlap"]),
                ("comm", row["comm"] - row["overlap"]),
                ("memory", row["memory"]),
                ("idle", row["idle"]),
            ],
        )
        for row in ranks.rows[:TABLE_ROWS]
    ]
    summary = [f"{len({row['rank'] for row in ranks.rows})} ranks"] + [f"left out: {p}" for p in problems]
    sections = [
        ("summary", "Summary", "".join(_p(line) for line in summary)),
        (
            "ranks",
            "Time per rank and step",
            _legend(parts) + _stacked_chart("ranks", bars) + _view_table(ranks, "ranks"),
        ),
        ("stragglers", "Stragglers", _view_table(views["stragglers"], "stragglers")),
        ("skew", "Collective skew", _view_table(views["skew"], "skew")),
        ("ops", "Ops across ranks", _view_table(views["ops"], "ops")),
        ("kernels", "Kernels across ranks", _view_table(views["kernels"], "kernels")),
    ]
    return _page(f"pyprof_live run report: {title}", title, sections)


def _page(heading: str, source: str, sections: list) -> str:
    nav = "".join(f'<a href="#{anchor}">{escape(title)}</a>' for anchor, title, _ in sections)
    body = "".join(
        f'<section id="{anchor}"><h2>{escape(title)}</h2>{content}</section>' for anchor, title, content in sections
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(heading)}</title><style>{_CSS}</style></head><body>"
        f'<h1>pyprof_live report</h1><p class="sub">{escape(source)}</p><nav>{nav}</nav>{body}'
        f'<p class="note">generated by pyprof_live {escape(__version__)}; times, bytes and flops in their units (sorting uses the raw numbers).</p>'
        f"<script>{_SCRIPT}</script></body></html>"
    )


# -- sections ----------------------------------------------------------------------------------------


# -- building blocks ---------------------------------------------------------------------------------


def _stacked_chart(name: str, bars) -> str:
    """Horizontal bars, one per ``(label, [(part, ns), ...])``, parts stacked left to right."""
    label_width, bar_width, row_height, top = 300, 560, 22, 6
    width = label_width + bar_width + 110
    height = top * 2 + row_height * len(bars)
    scale = max((sum(v for _, v in parts) for _, parts in bars), default=0) or 1
    out = [
        f'<svg class="chart" data-chart="{escape(name)}" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">'
    ]
    for i, (label, parts) in enumerate(bars):
        y = top + i * row_height
        shown = label if len(label) <= 40 else label[:39] + "\u2026"
        out.append(
            f'<text class="label" x="{label_width - 8}" y="{y + 15}" text-anchor="end">'
            f"<title>{escape(label)}</title>{escape(shown)}</text>"
        )
        x = float(label_width)
        for part, value in parts:
            w = bar_width * value / scale
            if w > 0:
                out.append(
                    f'<rect class="bar" data-part="{escape(part)}" data-value="{value}" x="{x:.2f}" '
                    f'y="{y + 3}" width="{w:.2f}" height="{row_height - 6}" fill="{COLORS[part]}">'
                    f"<title>{escape(label)}: {escape(part)} {escape(_duration(value))}</title></rect>"
                )
                x += w
        total = sum(v for _, v in parts)
        out.append(f'<text class="value" x="{x + 6:.2f}" y="{y + 15}">{escape(_duration(total))}</text>')
    out.append("</svg>")
    return "".join(out)


def _view_table(view, name: str, hide=()) -> str:
    columns = [c for c in view.columns if c not in hide]
    rows = view.rows[:TABLE_ROWS]
    if not rows:
        return _p(f"No {view.title}.") + "".join(_p(n) for n in view.notes)
    units = {c: column_unit(view.column(c).kind) for c in columns}
    head = "".join(
        f"<th>{escape(view.column(c).header.removesuffix('(ns)') if units[c] else view.column(c).header)}</th>"
        for c in columns
    )
    body = "".join("<tr>" + "".join(_cell(r.get(c), units[c]) for c in columns) + "</tr>" for r in rows)
    more = _p(f"showing {len(rows)} of {len(view.rows)} rows") if len(view.rows) > len(rows) else ""
    notes = "".join(_p(n) for n in view.notes) if name != "steps" else ""
    return (
        f'<table class="sortable" data-table="{escape(name)}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table>{more}{notes}"
    )


def _cell(value, unit=None) -> str:
    """A table cell; numbers sort by ``data-value`` (the raw number) and show in their unit."""
    if isinstance(value, bool) or value is None:
        return f'<td class="text">{"-" if value is None else escape(str(value))}</td>'
    if unit is not None and isinstance(value, (int, float)):
        return f'<td class="num" data-value="{value!r}">{escape(human(value, unit))}</td>'
    if isinstance(value, int):
        return f'<td class="num" data-value="{value}">{value:,}</td>'
    if isinstance(value, float):
        return f'<td class="num" data-value="{value!r}">{value:.4g}</td>'
    return f'<td class="text">{escape(str(value))}</td>'


def _legend(parts) -> str:
    return '<div class="legend">' + "".join(_swatch(p, p) for p in parts) + "</div>"


def _swatch(color_key: str, label: str) -> str:
    return f'<span><i style="background:{COLORS[color_key]}"></i>{escape(label)}</span>'


def _p(text: str) -> str:
    return f'<p class="note">{escape(text)}</p>'


def _duration(ns) -> str:
    """950 ns, 12.3 µs, 4.56 ms, 1.23 s (render/units.py)."""
    return duration(ns or 0)
