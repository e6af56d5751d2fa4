"""The one renderer shape (render/renderer.py) and the column kinds every renderer formats by
(report/columns.py): hand-built profiles, a hand-built 4-rank run, hand-worked numbers."""

from __future__ import annotations

import gzip
import json

import pytest

import pyprof_live
from pyprof_live.errors import ColumnError
from pyprof_live.profile import VIEW_NAMES, Profile
from pyprof_live.records import CompileRecord
from pyprof_live.render.chrome_trace import chrome_trace
from pyprof_live.render.html_app import one_file_page
from pyprof_live.render.pages import view_payload
from pyprof_live.render.renderer import RENDERERS, renderer
from pyprof_live.report import columns
from pyprof_live.report.view import View

from .export_fixtures import hand_profile
from .run_fixtures import write_run

MS = 1_000_000  # ns per ms


def test_renderers_are_the_profile_and_view_methods():
    profile = hand_profile()
    ops = profile.ops()
    assert renderer("text").render(ops, fmt="github") == ops.table(fmt="github")
    assert renderer("html_table").render(ops) == ops._repr_html_()
    assert renderer("chrome").render(profile) == chrome_trace(profile)
    assert renderer("html").render(profile) == one_file_page([("profile", "test", profile)])  # named by its source
    frame = renderer("dataframe").render(ops)
    assert list(frame.columns) == list(ops.columns) and len(frame) == len(ops.rows)


def test_write_is_atomic_json_or_text_and_refuses_a_dataframe(tmp_path):
    profile = hand_profile()
    trace = renderer("chrome").write(profile, tmp_path / "t.json.gz")
    assert json.loads(gzip.decompress((tmp_path / "t.json.gz").read_bytes())) == trace
    page = renderer("html").write(profile, tmp_path / "p.html")
    assert (tmp_path / "p.html").read_text(encoding="utf-8") == page
    with pytest.raises(TypeError, match="dataframe renderer makes a DataFrame"):
        renderer("dataframe").write(profile.ops(), tmp_path / "ops.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.html", "t.json.gz"]


def test_unknown_renderer_names_the_valid_ones():
    with pytest.raises(ValueError, match="unknown renderer 'svg'; valid: text, html_table, dataframe, chrome"):
        renderer("svg")


def test_cli_export_endings_are_the_renderers():
    assert RENDERERS["chrome"].suffixes == (".json", ".json.gz")
    assert RENDERERS["html"].suffixes == RENDERERS["run_html"].suffixes == (".html", ".htm")


def test_run_report_renders_the_run(tmp_path):
    write_run(tmp_path)
    run = pyprof_live.load_run(tmp_path)
    page = renderer("run_html").write(run, tmp_path / "run.html")
    assert 'data-chart="ranks"' in page and 'data-table="kernels"' in page


def test_every_declared_kind_is_one_the_renderers_know():
    kinds = {columns.TEXT, columns.COUNT, columns.PERCENT, columns.TIME, columns.BYTES, columns.FLOPS}
    for table in (columns.TABLE, columns.SUMMARY, columns.OVERVIEW, columns.RUN):
        assert {c.kind for c in table.values()} <= kinds
    assert columns.OVERVIEW["kernel"].kind == columns.TIME and columns.SUMMARY["kernel"].kind == columns.TEXT
    # a summary column the per-kernel table also has keeps that table's header
    assert columns.SUMMARY["host"].header == "Host(ns)" and columns.SUMMARY["calls"].header == "calls"


def test_every_view_declares_its_columns():
    profile = hand_profile()
    for name in VIEW_NAMES:
        view = profile.view(name)
        assert [view.column(c).name for c in view.columns] == list(view.columns), name


def test_an_undeclared_column_is_an_error():
    view = View("mine", ("op", "speed"), [{"op": "aten::mm", "speed": 3}], declared=columns.SUMMARY)
    with pytest.raises(ColumnError, match="column 'speed' of view 'mine' is not declared"):
        view.table()


def test_compile_times_show_in_units_everywhere_but_raw_data():
    # 5 ms compiling: Dynamo 2 ms, AOTAutograd 1 ms, Inductor 1.5 ms (ns in the record)
    phases = {"dynamo": 2 * MS, "aot": 1 * MS, "inductor": 3 * MS // 2}
    record = CompileRecord("compile", 1000, 1000 + 5 * MS, "0/0", "forward", ("m.py:3",), phases=phases)
    view = Profile(compiles=[record], meta={"source": "kineto"}).compiles()
    row = view.table().splitlines()[1].split()
    assert row[4:8] == ["5", "ms", "2", "ms"] and row[8:12] == ["1", "ms", "1.5", "ms"]
    assert view.table(fmt="csv").splitlines()[1].split(",")[4:8] == ['"5000000"', '"2000000"', '"1000000"', '"1500000"']
    payload = view_payload(view)
    assert [c["quantity"] for c in payload["columns"]][4:8] == ["time"] * 4
    assert payload["text"][0][4:8] == ["5 ms", "2 ms", "1 ms", "1.5 ms"]


def test_run_views_show_every_time_in_units(tmp_path):
    write_run(tmp_path)
    kernels = pyprof_live.load_run(tmp_path).kernels()
    line = next(line for line in kernels.table().splitlines() if line.startswith("gemm_kernel"))
    # gemm per rank: 100, 120, 300, 150 µs -> total 670 µs, min 100 µs (rank 0), median 135 µs, max 300 µs (rank 2)
    assert line.split() == ["gemm_kernel", "4", "670", "µs", "4", "100", "µs", "0", "135", "µs", "300", "µs", "2"]


def test_columns_text_is_the_same_whether_or_not_every_row_has_every_column():
    """The aligned text takes the rows column by column (in C when every row is a dict holding every
    column); a row lacking a cell shows '-', a control character is escaped, a long cell is cut."""
    from pyprof_live.render.text import render_view

    full = [
        {"idx": 1, "op": "aten::mm", "host": 1500, "module": "model.layer.0.attn"},
        {"idx": 2, "op": "aten::add\x1b", "host": 2_500_000, "module": "m"},
    ]
    cols = ("idx", "op", "host", "module")
    # Unfitted: 3 + 13 + 6 + 18 + 3 * 2 = 46 characters; fitting into 40 takes 6 from the widest text
    # column each time: ModulePath 18 -> 13, then Op (13, first of the tie) -> 12.
    expected = (
        "Idx  Op              Host  ModulePath\n  1  aten::mm      1.5 µs  …layer.0.attn\n  2  aten::add\\x…  2.5 ms  m"
    )
    assert render_view(View("t", cols, full), width=40) == expected
    partial = [dict(full[0]), {k: v for k, v in full[1].items() if k != "module"}]
    assert render_view(View("t", cols, partial), width=40) == expected.removesuffix("m") + "-"
