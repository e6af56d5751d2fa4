"""profile(report=...): the report printed when the block exits, also when it raises, and at exit."""

import warnings

import pytest
import torch

import pyprof_live

from .fresh_process import run_in_a_fresh_process


def _run():
    torch.ones(2, 3).sum()


def test_silent_by_default(capsys):
    with pyprof_live.profile():
        _run()
    assert capsys.readouterr().out == ""


def test_true_prints_the_table_sorted_by_device_time(capsys):
    with pyprof_live.profile(report=True) as p:
        _run()
    assert capsys.readouterr().out == p.table(sort="sil") + "\n"


def test_a_view_name_prints_that_view_and_start_stop_prints_at_each_stop(capsys):
    p = pyprof_live.profile(report="overview")
    p.start()
    _run()
    p.stop()
    first = capsys.readouterr().out
    assert first == str(p.overview()) + "\n" and first.startswith("step ")


def test_a_callable_is_called_with_the_profile_and_nothing_is_printed(capsys):
    seen = []
    with pyprof_live.profile(report=seen.append) as p:
        _run()
    assert seen == [p] and capsys.readouterr().out == ""


def test_when_the_block_raises_the_report_still_prints_and_the_exception_propagates_unchanged(capsys):
    error = KeyError("batch 3")
    with pytest.raises(KeyError) as raised, pyprof_live.profile(report=True) as p:
        _run()
        raise error
    assert raised.value is error and raised.value.__context__ is None  # not wrapped, not chained
    out = capsys.readouterr().out
    assert out == "pyprof_live: the profiled code raised KeyError; what ran before it:\n" + p.table(sort="sil") + "\n"
    assert [op.name for op in p.records.ops] == ["aten::ones", "aten::sum"]


def test_a_failing_report_warns_when_the_block_raised_and_raises_when_it_did_not():
    def broken(profile):
        raise ZeroDivisionError("in the user's report")

    with pytest.raises(KeyError), pytest.warns(RuntimeWarning, match=r"no report \(ZeroDivisionError: in the"):
        with pyprof_live.profile(report=broken):
            raise KeyError("x")
    with pytest.raises(ZeroDivisionError), warnings.catch_warnings():
        warnings.simplefilter("error")
        with pyprof_live.profile(report=broken):
            _run()


def test_unknown_report_lists_the_valid_ones():
    with pytest.raises(ValueError, match=r"report must be True, a view name \(table, ops, .*\) or a callable, not 'x'"):
        pyprof_live.profile(report="x")


def test_started_and_never_stopped_stops_at_interpreter_exit():
    """With a report it prints there; without one the profile is stopped silently."""
    code = (
        "import torch, pyprof_live\n"
        "p = pyprof_live.profile(report={report!r})\n"
        "p.start()\n"
        "torch.ones(2)\n"
        "print('end of script')\n"
    )
    out = run_in_a_fresh_process(code.format(report="ops")).splitlines()
    assert out[0] == "end of script"  # then the ops view: one call of aten::ones
    assert out[1].split()[0] == "Op" and out[2].split()[:2] == ["aten::ones", "1"]
    assert run_in_a_fresh_process(code.format(report=None)) == "end of script\n"
