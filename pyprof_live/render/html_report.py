"""A self-contained HTML report of a profile: one file, inline CSS, SVG and script, no network.

Sections: summary, step breakdown (stacked bars per step), recommendations, top ops, top kernels
(bar charts and sortable tables) and the nn.Module tree. Everything shown comes from the views
(``p.overview()``, ``p.ops()``, ``p.kernels()``, ``p.modules()``, ``p.recommendations()``); this
module only lays them out. Every piece of text from the profile is escaped (render.html.escape).
"""

from __future__ import annotations

from .._version import __version__
from ..analysis.timeline import CATEGORIES
from ..store.files import write_text_atomically
from .html import escape

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


def report_html(profile) -> str:
    """The whole report as one HTML document (a string)."""
    records = profile.records
    device = bool(records.kernels or records.memops)
    overview, ops, kernels, modules = profile.overview(), profile.ops(), profile.kernels(), profile.modules()
    advice = profile.recommendations()
    source = str(profile.meta.get("source", "?"))
    sections = [
        ("summary", "Summary", _summary(profile, overview)),
        ("steps", "Step breakdown", _steps(overview)),
        ("recommendations", "Recommendations", _view_table(advice, "recommendations", hide=("items",))),
        ("ops", "Top ops", _top_ops(ops, device)),
        ("kernels", "Top kernels", _top_kernels(kernels) if kernels.rows else _p("No GPU kernels in this profile.")),
        ("modules", "Module tree", _module_tree(modules, device)),
    ]
    nav = "".join(f'<a href="#{anchor}">{escape(title)}</a>' for anchor, title, _ in sections)
    body = "".join(
        f'<section id="{anchor}"><h2>{escape(title)}</h2>{content}</section>' for anchor, title, content in sections
    )
    path = profile.meta.get("path")
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>pyprof_live report: {escape(source)}</title><style>{_CSS}</style></head><body>"
        f'<h1>pyprof_live report</h1><p class="sub">source: {escape(source)}'
        + (f" &middot; {escape(str(path))}" if path else "")
        + f"</p><nav>{nav}</nav>{body}"
        f'<p class="note">generated by pyprof_live {escape(__version__)}; times in the tables are ns.</p>'
        f"<script>{_SCRIPT}</script></body></html>"
    )


def write_html_report(profile, path) -> None:
    """Write :func:`report_html` to ``path`` atomically."""
    html = report_html(profile)
    write_text_atomically(path, lambda out: out.write(html))


def run_report_html(title: str, views: dict, problems: list) -> str:
    """The report of a run (many ranks) from its cross-rank views: ``views`` holds the Views
    ``ranks``, ``stragglers``, ``skew``, ``ops`` and ``kernels`` (pyprof_live/run/views.py)."""
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


def write_run_report(title: str, views: dict, problems: list, path) -> None:
    """Write :func:`run_report_html` to ``path`` atomically."""
    html = run_report_html(title, views, problems)
    write_text_atomically(path, lambda out: out.write(html))


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
        f'<p class="note">generated by pyprof_live {escape(__version__)}; times in the tables are ns.</p>'
        f"<script>{_SCRIPT}</script></body></html>"
    )


# -- sections ----------------------------------------------------------------------------------------


def _summary(profile, overview) -> str:
    records = profile.records
    linked = profile.correlation
    totals = overview.rows[-1] if overview.rows else {}  # the "total" row, or the only step
    cards = [
        ("ops", f"{len(records.ops):,}"),
        ("kernels", f"{len(records.kernels):,}"),
        ("memcpy/memset", f"{len(records.memops):,}"),
    ]
    if records.kernels:
        cards.append(("kernels tied to an op", f"{linked.kernels_with_op:,} / {linked.kernels:,}"))
    if linked.bwd_ops:
        cards.append(("bwd ops tied to a fwd op", f"{linked.bwd_ops_with_fwd:,} / {linked.bwd_ops:,}"))
    if overview.rows:
        cards.append(("steps", str(sum(1 for r in overview.rows if r.get("step") != "total"))))
        cards.append(("wall time", _duration(totals.get("dur", 0))))
    if "busy%" in overview.columns and totals.get("busy%") is not None:
        cards.append(("GPU busy", f"{totals['busy%']:g}%"))
    html = (
        '<div class="cards">'
        + "".join(
            f'<div class="card" data-card="{escape(k)}"><div class="k">{escape(k)}</div><div class="v">{escape(v)}</div></div>'
            for k, v in cards
        )
        + "</div>"
    )
    # The overview's notes name the source and GPUs; its recommendations have their own section.
    return html + "".join(_p(n) for n in overview.notes if not n.startswith("recommendation ["))


def _steps(overview) -> str:
    parts = [c for c in overview.columns if c in CATEGORIES]
    steps = [r for r in overview.rows if r.get("step") != "total"]
    if not steps or not parts:
        return _p("No steps recorded.")
    bars = [(str(r["step"]), [(part, r.get(part) or 0) for part in parts]) for r in steps]
    return _legend(parts) + _stacked_chart("steps", bars) + _view_table(overview, "steps")


def _top_ops(ops, device: bool) -> str:
    measure = "dev_self" if device and "dev_self" in ops.columns else "host_self"
    ranked = sorted(ops.rows, key=lambda r: -(r.get(measure) or 0))[:TOP]
    bars = [(str(r["op"]), [("kernel" if device else "cpu_exec", r.get(measure) or 0)]) for r in ranked]
    what = "device time the op's own kernels took" if device else "host self time"
    return (
        _p(f"Top {len(bars)} ops by {what} ({ops.column(measure).header}).")
        + _stacked_chart("ops", bars)
        + _view_table(ops, "ops")
    )


def _top_kernels(kernels) -> str:
    ranked = kernels.rows[:TOP]  # the view sorts by total device time
    bars = [(str(r["kernel"]), [("tc" if r.get("tc") == 1 else "no_tc", r.get("sil") or 0)]) for r in ranked]
    legend = '<div class="legend">' + _swatch("tc", "tensor cores") + _swatch("no_tc", "no / unknown") + "</div>"
    return legend + _stacked_chart("kernels", bars) + _view_table(kernels, "kernels")


def _module_tree(modules, device: bool) -> str:
    rows = modules.rows[:TREE_NODES]
    if not rows:
        return _p("No nn.Module paths in this profile (live capture records them; imports need with_modules).")
    total_key, fwd_key, bwd_key = (
        ("dev", "dev_fwd", "dev_bwd") if device and "dev" in modules.columns else ("host", "fwd", "bwd")
    )
    scale = max(r.get(total_key) or 0 for r in rows) or 1
    html = [
        '<div><button data-tree="expand">expand all</button><button data-tree="collapse">collapse all</button>',
        '<span class="legend">',
        _swatch("fwd", "forward"),
        _swatch("bwd", "backward"),
        _swatch("rest", "other"),
        f"</span> bar = {escape(modules.column(total_key).header)}</div>",
        '<div class="tree" data-chart="modules">',
    ]
    depths = [r["module"].count(".") for r in rows]
    open_depths = []
    for i, row in enumerate(rows):
        depth = depths[i]
        while open_depths and open_depths[-1] >= depth:
            html.append("</details>")
            open_depths.pop()
        has_children = (
            i + 1 < len(rows) and depths[i + 1] > depth and rows[i + 1]["module"].startswith(row["module"] + ".")
        )
        total = row.get(total_key) or 0
        fwd, bwd = row.get(fwd_key) or 0, row.get(bwd_key) or 0
        widths = [(k, 100.0 * v / scale) for k, v in (("fwd", fwd), ("bwd", bwd), ("rest", max(total - fwd - bwd, 0)))]
        bar = (
            '<span class="mbar">'
            + "".join(f'<span style="width:{w:.2f}%;background:{COLORS[k]}"></span>' for k, w in widths if w > 0)
            + "</span>"
        )
        leaf = row["module"].rsplit(".", 1)[-1]
        line = (
            f'<span class="name" style="padding-left:{16 * depth}px" title="{escape(row["module"])}">'
            f"{escape(leaf)}</span>{bar}"
            f'<span class="num">{escape(_duration(total))} &middot; {row.get("ops", 0):,} ops</span>'
        )
        node = f'data-module="{escape(row["module"])}" data-value="{total}"'
        if has_children:
            html.append(f'<details class="tree-node" {node}{" open" if depth < 2 else ""}><summary>{line}</summary>')
            open_depths.append(depth)
        else:
            html.append(f'<div class="tree-node leaf" {node}>{line}</div>')
    html.extend("</details>" for _ in open_depths)
    html.append("</div>")
    if len(modules.rows) > len(rows):
        html.append(_p(f"showing {len(rows)} of {len(modules.rows)} modules"))
    return "".join(html)


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
    head = "".join(f"<th>{escape(view.column(c).header)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(_cell(r.get(c)) for c in columns) + "</tr>" for r in rows)
    more = _p(f"showing {len(rows)} of {len(view.rows)} rows") if len(view.rows) > len(rows) else ""
    notes = "".join(_p(n) for n in view.notes) if name != "steps" else ""
    return (
        f'<table class="sortable" data-table="{escape(name)}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table>{more}{notes}"
    )


def _cell(value) -> str:
    if isinstance(value, bool) or value is None:
        return f'<td class="text">{"-" if value is None else escape(str(value))}</td>'
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
    """ns as the largest unit that keeps a leading digit: 950 ns, 12.3 µs, 4.56 ms, 1.23 s."""
    ns = float(ns or 0)
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if abs(ns) >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.0f} ns"
