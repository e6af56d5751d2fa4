"""Profile: the records of one run, whatever their source, plus the views over them.

A Profile is what ``profile()`` yields and what every importer returns. It holds raw records
(``records.py``); correlation runs once, lazily, the first time a view needs it, so a better
correlation or formula also applies to old saved profiles.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import ColumnError
from .records import (
    COMPILED,
    AllocRecord,
    ApiRecord,
    CompileRecord,
    DeviceInfo,
    KernelRecord,
    MemoryRecord,
    OpRecord,
    RangeRecord,
    Records,
)
from .report.columns import COLUMN_NAMES, DEFAULT_COLUMNS, TABLE

if TYPE_CHECKING:
    from .analysis.peaks import GpuPeak
    from .correlate import Correlation
    from .report.view import View

#: What :meth:`Profile.view` (and the CLI's ``--view``) can show.
VIEW_NAMES = (
    "table",
    "ops",
    "ops+shape",
    "ops+params",
    "kernels",
    "modules",
    "overview",
    "compiles",
    "recommendations",
    "memory",
)

#: The default table is fitted into this many characters (``p.table(width=...)`` overrides it).
DEFAULT_WIDTH = 100
#: Default columns that only GPU activity fills: left out of the default table of a CPU-only profile.
DEVICE_COLUMNS = ("sub", "kernel", "sil", "tc")

#: Sorting by these puts the largest first; every other column sorts ascending.
_LARGEST_FIRST = ("sil", "host", "flops", "bytes", "ideal")


class Profile:
    """Records of one profiled run (``p.records``) and the views over them (``p.table()``...)."""

    def __init__(
        self,
        ops: list[OpRecord] | None = None,
        apis: list[ApiRecord] | None = None,
        kernels: list[KernelRecord] | None = None,
        memops: list[MemoryRecord] | None = None,
        ranges: list[RangeRecord] | None = None,
        devices: list[DeviceInfo] | None = None,
        meta: dict | None = None,
        compiles: list[CompileRecord] | None = None,
        allocs: list[AllocRecord] | None = None,
    ):
        self.records = Records(
            ops or [],
            apis or [],
            kernels or [],
            memops or [],
            ranges or [],
            devices or [],
            compiles or [],
            allocs or [],
        )
        #: Free-form facts about the run: "source" ("live", "nsys", "nvprof", "kineto", "saved"),
        #: "path", "warnings" (list of str), "truncated", tool versions, distributed info...
        self.meta = meta if meta is not None else {}
        self._correlation: Correlation | None = None

    @property
    def correlation(self) -> Correlation:
        """Link counts; computing them fills every record's link fields (once, on first use)."""
        return self.link()

    def link(self) -> Correlation:
        """Fill every record's link fields (kernel -> launch -> op, bwd -> fwd) unless done since the
        records last changed, and return the link counts. Views call it before reading links."""
        if self._correlation is None:
            from .correlate import correlate

            self._correlation = correlate(self)
        return self._correlation

    def invalidate(self) -> None:
        """Records changed (a live profile stopped again): links are recomputed on next use."""
        self._correlation = None

    # -- views -------------------------------------------------------------------------------------

    def table(
        self,
        sort: str | None = None,
        columns=None,
        width: int | None = None,
        fmt: str = "columns",
        limit: int | None = None,
    ) -> str:
        """One row per kernel plus one per op that launched none, with PyProf's columns.

        :param sort: a column name (``"sil"``: largest device time first); None keeps launch order.
        :param columns: names from :data:`pyprof_live.columns.COLUMNS` (list or ``"idx,op,sil"``).
        :param width: fit the line into this many characters (PyProf's ``-w``), ``fmt="columns"`` only;
            the default columns are fitted into :data:`DEFAULT_WIDTH` unless a width is given.
        :param fmt: ``"columns"`` (aligned, with footer notes), ``"csv"``, ``"space"`` (for awk), or any
            of tabulate's formats (``"github"`` or ``"pipe"`` for Markdown, ``"grid"``, ``"simple"``...;
            the footer notes follow after a blank line).
        :param limit: show only the first rows after sorting.
        """
        from .render.renderer import renderer

        view = self.kernel_view(sort=sort, columns=columns)
        text = renderer("text")
        if width is None and columns is None and fmt == "columns":  # the default, fitted as far as it goes
            return text.render(view, fmt=fmt, width=DEFAULT_WIDTH, limit=limit, best_effort=True)
        return text.render(view, fmt=fmt, width=width, limit=limit)

    def kernel_view(self, sort: str | None = None, columns=None) -> View:
        """The rows of :meth:`table`, as a View (rows are dicts keyed by column name)."""
        from .report.view import View

        columns, rows, facts, notes = self._kernel_rows(sort, columns)
        rows = list(rows)
        notes.extend(_footer(self, rows, facts))
        return View("kernels and ops", columns, rows, notes)

    def export_csv(self, path, sort: str | None = None, columns=None) -> int:
        """Write :meth:`table` as CSV (``fmt="csv"``'s text; gzip'd when ``path`` ends in ``.gz``) and
        return the number of rows written. ``path`` may also be an open text stream (``sys.stdout``).

        Rows are written as they are made, so a report of a million kernels never sits in memory
        whole (with ``sort``, every row is made first, to be sorted). A file is replaced whole or
        left as it was, even when writing fails half-way.
        """
        from .store.files import write_text_atomically

        write = self._csv_writer(sort, columns)
        if hasattr(path, "write"):
            return write(path)
        written = []
        write_text_atomically(path, lambda out: written.append(write(out)))
        return written[0]

    def _csv_writer(self, sort: str | None, columns):
        """``write(stream) -> rows`` for :meth:`export_csv`. In launch order the lines are made by
        report/kernel_csv.py (the same bytes as write_csv on kernel_view's rows, several times faster
        on large profiles); a sorted report needs every row made first, by the reference path."""
        from .render.text import write_csv

        columns = self._kernel_columns(columns)
        if sort is None and len(set(columns)) == len(columns):
            from .report.kernel_csv import write_kernel_csv

            heads = [TABLE[c].header for c in columns]
            return lambda out: write_kernel_csv(out, self, columns, heads)
        columns, rows, _, _ = self._kernel_rows(sort, columns)
        heads = [TABLE[c].header for c in columns]
        return lambda out: write_csv(out, rows, columns, heads)

    def _kernel_rows(self, sort: str | None, columns) -> tuple:
        """The columns, rows (made as they are iterated unless ``sort`` needs them all), the facts for
        the footer and the notes on the sort of :meth:`kernel_view`."""
        from .report.views import kernel_rows

        columns = self._kernel_columns(columns)
        if sort is not None and sort not in COLUMN_NAMES:
            raise ColumnError(f"unknown sort column {sort!r}; valid columns: {', '.join(COLUMN_NAMES)}")
        made, facts = kernel_rows(self, columns if sort is None else (*columns, sort))
        if sort is None:
            return columns, made, facts, []
        notes = []
        if sort == "sil" and not (self.records.kernels or self.records.memops):
            sort = "host"
            notes.append("sorted by host time: this profile has no device time (no GPU kernels recorded)")
        return columns, _sorted(list(made), sort), facts, notes

    def _kernel_columns(self, columns) -> tuple:
        """The columns of :meth:`table` asked for (None: the defaults for this profile), checked."""
        if columns is None:
            columns = DEFAULT_COLUMNS
            if not (self.records.kernels or self.records.memops):
                columns = tuple(c for c in columns if c not in DEVICE_COLUMNS)  # always '-' on CPU
            if any(op.kind == COMPILED for op in self.records.ops):
                columns = _with_fused(columns)  # what each Inductor kernel fused: its point
        return _check_columns(columns)

    def ops(self, by: str = "op", limit: int | None = None) -> View:
        """Summary per op name (``by="op"``) or per op and input shapes and dtypes (``by="op+shape"``;
        float scalars such as a step size are left out of the group, ``by="op+params"`` keeps them).
        ``limit``: the first rows only (each view takes it)."""
        from .report.views import op_summary

        return op_summary(self, by).limited(limit)

    def modules(self, limit: int | None = None) -> View:
        """Summary per nn.Module path (inclusive of children), forward and backward."""
        from .report.views import module_summary

        return module_summary(self).limited(limit)

    def kernels(self, limit: int | None = None) -> View:
        """Summary per kernel name: calls, total/mean/min/max device time, tensor cores."""
        from .report.views import kernel_summary

        return kernel_summary(self).limited(limit)

    def memory(self, by: str = "op", limit: int | None = None) -> View:
        """What was live on each device at its memory peak, by the op (``by="op"``) or module
        (``by="module"``) that allocated it, with what each allocated in all; the notes give each
        device's peak. Sources: Kineto ``[memory]`` events (profile_memory=True), live allocations."""
        from .report.memory import memory_summary

        return memory_summary(self, by).limited(limit)

    def overview(self, limit: int | None = None) -> View:
        """Where the time went, per direction and kind of device work."""
        from .report.views import overview

        return overview(self).limited(limit)

    def compiles(self, limit: int | None = None) -> View:
        """torch.compile's events: compiles and their time per phase, recompiles with the guard that
        failed, lazily compiled backward graphs, graph breaks with their line."""
        from .report.views import compile_summary

        return compile_summary(self).limited(limit)

    # -- speed of light and recommendations --------------------------------------------------------

    def recommendations(self, limit: int | None = None) -> View:
        """What to change, each with the ops/kernels concerned and the time at stake, largest first
        (a View; rules and what each needs: pyprof_live/analysis/recommendations.py)."""
        from .report.recommendations import recommendations

        return recommendations(self).limited(limit)

    def set_peak(self, peak: GpuPeak | str | None) -> None:
        """Use these peak figures for every GPU of this profile instead of the built-in table.

        :param peak: a :class:`~pyprof_live.analysis.peaks.GpuPeak` with your own figures, a name the
            table knows (``"H100 SXM"``, ``"NVIDIA A100-SXM4-80GB"``), or None to go back to the table.
        The choice is kept in ``meta["peak"]``, so a saved profile keeps it.
        """
        from .analysis.peaks import PEAKS, GpuPeak, find_peak

        if peak is None:
            self.meta.pop("peak", None)
            return
        if isinstance(peak, str):
            found = find_peak(peak)
            if found is None:
                raise ValueError(f"no peak figures for {peak!r}; known: {', '.join(PEAKS)}; or pass a GpuPeak")
            peak = found
        if not isinstance(peak, GpuPeak):
            raise TypeError(f"set_peak takes a GpuPeak, a GPU name or None, not {type(peak).__name__}")
        self.meta["peak"] = peak.as_dict()

    def peak(self, device: int | None = None) -> GpuPeak | None:
        """The GpuPeak the roofline uses for ``device`` (default: the first GPU that ran kernels), or None.

        Figures chosen with :meth:`set_peak` are in use for any device, also before any kernel ran
        on it (a CPU-only profile has none), so they are returned for every ``device``.
        """
        from .analysis.peaks import chosen_peak, device_peaks

        chosen = chosen_peak(self)
        if chosen is not None:
            return chosen
        peaks = device_peaks(self)
        if device is None:
            device = next((k.device for k in self.records.kernels), next(iter(sorted(peaks)), None))
        return peaks.get(device)

    def save(self, path) -> None:
        """Write the records to ``path`` (versioned, gzip'd JSON); read back with ``pyprof_live.load``."""
        from .store.savefile import save

        save(self, path)

    def _repr_html_(self):
        return self.kernel_view()._repr_html_()

    def __repr__(self):
        r = self.records
        return (
            f"<Profile source={self.meta.get('source', '?')} ops={len(r.ops)} kernels={len(r.kernels)} "
            f"memops={len(r.memops)} ranges={len(r.ranges)}>"
        )

    # -- exports -----------------------------------------------------------------------------------

    def export_chrome_trace(self, path) -> int:
        """Write a Chrome trace-event JSON (``.json`` or ``.json.gz``) for Perfetto / chrome://tracing.

        Host threads show ops and ranges, GPU streams show kernels and memcpy/memset, with arrows from
        each op to the kernels it launched and from forward ops to their backward ops. Returns the
        number of events written.
        """
        from .render.renderer import renderer

        return len(renderer("chrome").write(self, path)["traceEvents"])

    def save_html(self, path) -> None:
        """Write the dashboard of this profile as one self-contained file (opens offline, fetches nothing):
        the pages of ``pyprof-live serve`` (overview, operators, kernels, modules, trace, memory)."""
        from .render.renderer import renderer

        renderer("html").write(self, path)

    def view(self, name: str) -> View:
        """A view by name (one of :data:`VIEW_NAMES`); ``"table"`` is the per-kernel table, all columns."""
        views = {
            "table": lambda: self.kernel_view(columns=COLUMN_NAMES),
            "ops": self.ops,
            "ops+shape": lambda: self.ops(by="op+shape"),
            "ops+params": lambda: self.ops(by="op+params"),
            "kernels": self.kernels,
            "modules": self.modules,
            "overview": self.overview,
            "compiles": self.compiles,
            "recommendations": self.recommendations,
            "memory": self.memory,
        }
        if name not in views:
            raise ValueError(f"unknown view {name!r}; valid: {', '.join(VIEW_NAMES)}")
        return views[name]()

    def to_dataframe(self, view: str = "table"):
        """A pandas DataFrame of :meth:`view` ``view`` (default: the per-kernel table). Needs pandas."""
        from .render.renderer import renderer

        return renderer("dataframe").render(self.view(view))


def _with_fused(columns) -> tuple:
    at = columns.index("op") + 1 if "op" in columns else len(columns)
    return (*columns[:at], "fused", *columns[at:])


def _check_columns(columns) -> tuple:
    if columns is None:
        return DEFAULT_COLUMNS
    if isinstance(columns, str):
        columns = [c.strip() for c in columns.split(",") if c.strip()]
    if not columns:
        raise ColumnError(f"no columns given; valid columns: {', '.join(COLUMN_NAMES)}")
    unknown = [c for c in columns if c not in COLUMN_NAMES]
    if unknown:
        raise ColumnError(
            f"unknown column(s) {', '.join(map(repr, unknown))}; valid columns: {', '.join(COLUMN_NAMES)}"
        )
    return tuple(columns)


def _sorted(rows, column: str) -> list:
    """Sort by one column; rows without a value ('-', 'na') go last whatever the direction."""
    present = [r for r in rows if r.get(column) not in (None, "na")]
    missing = [r for r in rows if r.get(column) in (None, "na")]
    present.sort(key=lambda r: r[column], reverse=column in _LARGEST_FIRST)
    return present + missing


def _footer(profile, rows, facts) -> list:
    from .render.units import duration
    from .report.views import profiler_time_notes

    records = profile.records
    notes = [
        f"{len(rows)} rows: {len(records.kernels)} kernels, {len(records.memops)} memcpy/memset, "
        f"{len(records.ops)} ops ({profile.meta.get('source', '?')})"
    ]
    if facts["unattributed"]:
        notes.append(
            f"{facts['unattributed']} kernels/memops ({duration(facts['unattributed_time'])}) were launched "
            "outside any recorded op: shown as (unattributed)"
        )
    if facts["ops_without_formula"]:
        share = 100.0 * facts["time_without_formula"] / facts["time_total"] if facts["time_total"] else 0.0
        notes.append(
            f"{facts['ops_without_formula']} ops ({share:.1f}% of their time) have no flops/bytes formula: shown as na"
        )
    notes.extend(facts.get("notes", []))
    notes.extend(profiler_time_notes(profile))
    notes.extend(profile.meta.get("warnings", []))
    notes.extend(profile.meta.get("gpu_notes", []))
    return notes
