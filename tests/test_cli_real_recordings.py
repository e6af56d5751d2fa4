"""The command line on real recordings of every importer's dialect: each report, a summary view and both exports.

CI runs it on the oldest supported torch, on 2.13.0+cpu and on the newest release (.ci/run). Kernel and
memcpy/memset counts are the hand-checked ones of the importer tests (sqlite3 on the exports, event counts
in the traces): the table has one row per kernel and per memcpy/memset, never dropping unattributed ones.
"""

import csv
import gzip
import io
import json

import pytest

from pyprof_live.cli import main

pytestmark = pytest.mark.e2e

#: recording -> kernels + memcpy/memset rows of its table.
DEVICE_ROWS = {
    "nsys/nsys2022.1_pytorch_emitnvtx_dlprof_rtx2070s.sqlite": 46 + 16,  # test_import_nsys.REAL
    "nsys/nvprof_pytorch_pyprof_lm_v100_17ed9e2.sql": 160 + 29,  # test_import_nvprof (21 memcpy + 8 memset)
    "kineto/hta_alexnet_a100_benchmark_trace.json.gz": 79 + 19,  # test_import_kineto.REAL_COUNTS
    "kineto/kineto_tbplugin_resnet50_v100dgxs_oldformat.pt.trace.json.gz": 8772 + 324,  # the 2021 dialect
}


@pytest.mark.parametrize("recording", sorted(DEVICE_ROWS))
def test_cli_reports_a_real_recording(shared_data, recording, tmp_path, capsys):
    path = str(shared_data / recording)
    chrome, html = tmp_path / "trace.json.gz", tmp_path / "report.html"
    assert main([path, "-c", "idx,op,kernel", "--csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == ["Idx", "Op", "Kernel"]
    assert sum(1 for row in rows[1:] if row[2] != "-") == DEVICE_ROWS[recording]
    assert [int(row[0]) for row in rows[1:]] == list(range(1, len(rows)))
    assert main([path, "--chrome", str(chrome), "--html", str(html)]) == 0
    events = json.loads(gzip.decompress(chrome.read_bytes()))["traceEvents"]
    assert len(events) > DEVICE_ROWS[recording]  # every kernel, plus the host side
    assert html.read_text().startswith("<!DOCTYPE html>")
    assert main([path, "--view", "ops"]) == 0
    assert capsys.readouterr().out.splitlines()[0].split()[:2] == ["Op", "calls"]


@pytest.mark.parametrize("sort", [None, "sil"])
def test_cli_csv_is_streamed_with_the_text_of_the_table(shared_data, sort, capsys):
    """`--csv` writes rows as they are made (a million-kernel export would otherwise be one string of
    gigabytes); what it prints is byte for byte the table's CSV, with and without a sort."""
    from pyprof_live.cli import PYPROF_DEFAULT_COLUMNS
    from pyprof_live.importers.nsys import load_nsys

    path = str(shared_data / "nsys/nsys2022.1_pytorch_emitnvtx_dlprof_rtx2070s.sqlite")
    assert main([path, "--csv"] + (["--sort", sort] if sort else [])) == 0
    expected = load_nsys(path).table(fmt="csv", sort=sort, columns=PYPROF_DEFAULT_COLUMNS)
    printed = capsys.readouterr().out
    assert printed == expected
    assert len(printed.splitlines()) == 1 + 46 + 16 + 23  # header, kernels, memcpy/memset, kernel-less ops
