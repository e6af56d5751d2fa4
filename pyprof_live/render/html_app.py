"""The dashboard's page, served (``pyprof-live serve``) or as one self-contained file (``p.save_html()``).

Both are the same page (``web/app.html`` with ``app.js``, ``trace.js``, ``app.css``): served, it
loads its script and style from the server and its data from ``/api``; as one file, the script,
style and data are inline (traces gzip'd and base64'd, unpacked by the browser's
DecompressionStream), so it opens offline and fetches nothing.
"""

from __future__ import annotations

import base64
import gzip
import json
from importlib import resources

from .page_units import UNIT_RULES
from .pages import profile_payload
from .trace_data import trace_bytes

#: Files of the page, as the server names them under /static/ (nothing else is served from there).
ASSETS = {"app.js": "text/javascript", "trace.js": "text/javascript", "app.css": "text/css"}


def asset(name: str) -> bytes:
    """One of :data:`ASSETS`, or the page itself (``app.html``)."""
    if name not in ASSETS and name != "app.html":
        raise KeyError(name)
    return resources.files(__package__).joinpath("web", name).read_bytes()


def served_page() -> bytes:
    """The page as the server sends it: script and style are separate files (no inline script, so a
    strict Content-Security-Policy holds)."""
    page = asset("app.html").decode()
    page = page.replace("<!--STYLE-->", '<link rel="stylesheet" href="static/app.css">')
    page = page.replace("<!--DATA-->", "")
    page = page.replace(
        "<!--SCRIPTS-->", '<script src="static/trace.js"></script><script src="static/app.js"></script>'
    )
    return page.encode()


def json_for_script(data) -> str:
    """JSON that can sit inside <script>: no "<", ">" or "&" at all (as Django's json_script does), so
    nothing in it can end the element or open a comment; and no U+2028/2029."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    for raw, escaped in _SCRIPT_SAFE:
        text = text.replace(raw, escaped)
    return text


_SCRIPT_SAFE = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def one_file_page(workers, distributed=None) -> str:
    """The page with everything inline. ``workers``: [(run name, worker name, Profile)]."""
    runs: dict[str, list] = {}
    entries = []
    for run, worker, profile in workers:
        runs.setdefault(run, []).append({"name": worker, "version": "static"})
        trace = base64.b64encode(gzip.compress(trace_bytes(profile), compresslevel=6, mtime=0)).decode()
        entries.append({"run": run, "worker": worker, "views": profile_payload(profile), "trace": trace})
    data = {
        "units": UNIT_RULES,
        "runs": [{"name": name, "workers": ws} for name, ws in runs.items()],
        "workers": entries,
        "distributed": distributed or {},
    }
    page = asset("app.html").decode()
    style = asset("app.css").decode()
    scripts = asset("trace.js").decode() + "\n" + asset("app.js").decode()
    page = page.replace("<!--STYLE-->", f"<style>{style}</style>")
    page = page.replace(
        "<!--DATA-->", f'<script type="application/json" id="pyprof-data">{json_for_script(data)}</script>'
    )
    scripts = scripts.replace("</script", "<\\/script")  # our own code never says it, but be sure
    return page.replace("<!--SCRIPTS-->", f"<script>{scripts}</script>")


def profile_page(profile) -> str:
    """``p.save_html(path)``: the dashboard of one profile as one page (the ``html`` renderer)."""
    return one_file_page([("profile", str(profile.meta.get("source", "profile")), profile)])
