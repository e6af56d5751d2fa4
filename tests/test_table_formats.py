"""tabulate's table formats for the text report: p.table(fmt=...), View.table(fmt=...), --format."""

import pytest

import pyprof_live
from pyprof_live.cli import main
from pyprof_live.profile import Profile
from pyprof_live.records import OpRecord
from tests.test_report import _gpu_profile

_NOTES = (
    "4 rows: 3 kernels, 0 memcpy/memset, 2 ops (test)\n"
    "1 kernels/memops (300 ns) were launched outside any recorded op: shown as (unattributed)\n"
    "no peak figures for device 0 (unknown GPU): ideal, sol% and bound are '-'; give them with p.set_peak(...)"
)


def test_github_format_byte_for_byte():
    """Markdown: numbers right-aligned (Idx, Sil), text left; '-' where a value is absent; sorted by sil
    (500, 300, 100 ns, then relu with no kernel); a blank line ends the table before the notes."""
    text = _gpu_profile().table(columns="idx,op,kernel,sil", fmt="github", sort="sil")
    assert text == (
        "|   Idx | Op             | Kernel                |   Sil(ns) |\n"
        "|-------|----------------|-----------------------|-----------|\n"
        "|     1 | aten::addmm    | gemm_kernel           |       500 |\n"
        "|     4 | (unattributed) | ampere_sgemm_64x64_nn |       300 |\n"
        "|     2 | aten::addmm    | splitKreduce_kernel   |       100 |\n"
        "|     3 | aten::relu     | -                     |         - |\n"
        "\n" + _NOTES
    )


def test_grid_format_byte_for_byte_with_limit():
    text = _gpu_profile().table(columns="idx,op,kernel,sil", fmt="grid", limit=2)
    assert text == (
        "+-------+-------------+---------------------+-----------+\n"
        "|   Idx | Op          | Kernel              |   Sil(ns) |\n"
        "+=======+=============+=====================+===========+\n"
        "|     1 | aten::addmm | gemm_kernel         |       500 |\n"
        "+-------+-------------+---------------------+-----------+\n"
        "|     2 | aten::addmm | splitKreduce_kernel |       100 |\n"
        "+-------+-------------+---------------------+-----------+\n"
        "\nshowing 2 of 4 rows\n" + _NOTES
    )


def test_cells_are_the_columns_format_text_not_reparsed_numbers():
    """tabulate would print 1e-05 for the string "1e-05" and drop the zeros of "1.50"; cells stay as
    the aligned format writes them: a float as .4g (2/3 -> 0.6667), "na", "-"."""
    p = Profile(ops=[OpRecord("aten::a", 0, 10)], meta={"source": "test"})
    view = p.ops()
    view.rows[0]["host"] = 2 / 3
    simple = view.table(fmt="simple").splitlines()
    columns = view.table().splitlines()
    assert "0.6667" in simple[2] and "0.6667" in columns[1]
    assert simple[0].split() == columns[0].split()  # the same headers


def test_every_tabulate_format_renders_and_unknown_ones_list_the_valid():
    from tabulate import tabulate_formats

    p = _gpu_profile()
    for fmt in tabulate_formats:
        assert "aten::addmm" in p.table(fmt=fmt), fmt
    with pytest.raises(
        pyprof_live.ColumnError, match="unknown format 'markdown'; valid: columns, csv, space, asciidoc"
    ):
        p.table(fmt="markdown")
    with pytest.raises(pyprof_live.ColumnError, match='width fits fmt="columns" only'):
        p.table(fmt="github", width=80)


def test_cli_format_option(tmp_path, capsys):
    path = tmp_path / "p.pplive"
    _gpu_profile().save(path)
    assert main([str(path), "-c", "idx,op", "--format", "pipe", "--limit", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:3] == ["|   Idx | Op          |", "|------:|:------------|", "|     1 | aten::addmm |"]
    with pytest.raises(SystemExit) as exit_info:
        main([str(path), "--format", "markdown"])
    assert exit_info.value.code == 2
    assert "unknown table format 'markdown'; valid: asciidoc" in capsys.readouterr().err
