"""One shape for every output format: a :class:`Renderer`, found by name in :data:`RENDERERS`.

Each renderer turns what it takes (a View; a Profile for the trace and the page; a Run for the run's
report) into its output with ``render(subject, **options)``, and writes that output to a file with
``write`` (atomically; gzip'd for ``.gz``). Profile, View, Run and the CLI reach every format through
here, so a new format is one entry below. The function behind a renderer is imported on first use:
the trace and the pages pull in the formulas and the dashboard's code, which the text report and
``pyprof-live --help`` never need.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import import_module
from typing import Any

from ..store.files import write_text_atomically


@dataclass(frozen=True)
class Renderer:
    """An output format: its name, the function that renders it (``"module:function"`` under
    ``pyprof_live.render``; ``function(subject, **options) -> output``) and the file endings it
    writes. Output is text, or a dict written as JSON (the Chrome trace), or a DataFrame."""

    name: str
    function: str
    suffixes: tuple[str, ...] = ()

    def render(self, subject, **options) -> Any:
        module, function = self.function.split(":")
        return getattr(import_module(f"{__package__}.{module}"), function)(subject, **options)

    def write(self, subject, path, **options) -> Any:
        """Render ``subject`` into the file ``path`` (replaced whole or left as it was); returns the output."""
        output = self.render(subject, **options)
        if isinstance(output, dict):
            write_text_atomically(path, lambda out: json.dump(output, out, separators=(",", ":")))
        elif isinstance(output, str):
            write_text_atomically(path, lambda out: out.write(output))
        else:
            raise TypeError(f"the {self.name} renderer makes a {type(output).__name__}, which is not written to files")
        return output


RENDERERS = {
    r.name: r
    for r in (
        # A View's rows as text: aligned columns, CSV, space-separated, tabulate's formats (fmt=...).
        Renderer("text", "text:render_view"),
        # A View as an HTML table (Jupyter's _repr_html_) and as a pandas DataFrame.
        Renderer("html_table", "html:view_html"),
        Renderer("dataframe", "dataframe:view_dataframe"),
        # A Profile as a Chrome trace (Perfetto) and as the dashboard's self-contained page.
        Renderer("chrome", "chrome_trace:chrome_trace", (".json", ".json.gz")),
        Renderer("html", "html_app:profile_page", (".html", ".htm")),
        # A Run (many ranks) as its HTML report.
        Renderer("run_html", "html_report:run_report_html", (".html", ".htm")),
    )
}


def renderer(name: str) -> Renderer:
    """The renderer called ``name`` (one of :data:`RENDERERS`)."""
    try:
        return RENDERERS[name]
    except KeyError:
        raise ValueError(f"unknown renderer {name!r}; valid: {', '.join(RENDERERS)}") from None
