"""What a new user meets first: usage errors for options that cannot mean anything (checked before
the input is read), and load errors that say what is wrong with the file in its own terms (which
event, row or field), never a Python exception's name or message."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest

from pyprof_live.cli import main
from pyprof_live.errors import ProfileFormatError
from pyprof_live.importers.kineto import load_kineto
from pyprof_live.importers.nsys import load_nsys

from .export_fixtures import hand_profile
from .test_import_nvprof import build_export


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "run.pplive"
    hand_profile().save(path)
    return path


def usage_error(capsys, *argv) -> str:
    """The one line argparse prints for a usage error (exit code 2), without its usage lines."""
    with pytest.raises(SystemExit) as exit_:
        main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    return err.splitlines()[-1]


# ------------------------------------------------------------------------------------------------
# Output paths


@pytest.mark.parametrize(
    "flag, name, expected",
    [
        ("--chrome", "x.txt", "a Chrome trace is .json or .json.gz"),
        ("--chrome", "x.gz", "a Chrome trace is .json or .json.gz"),
        ("--html", "x.json", "an HTML report is .html or .htm"),
    ],
)
def test_an_output_path_with_the_wrong_extension_is_refused_before_loading(capsys, tmp_path, flag, name, expected):
    out = tmp_path / name
    line = usage_error(capsys, tmp_path / "not-read.json", flag, out)  # the input is not read: no "no such file"
    assert line == f"pyprof-live: error: {flag} {out}: {expected}"
    assert not out.exists()


@pytest.mark.parametrize("flag", ["--chrome", "--html"])
def test_an_empty_output_path_is_refused(capsys, saved, flag):
    assert usage_error(capsys, saved, flag, "") == f"pyprof-live: error: {flag} needs a file name"


def test_outputs_with_their_extensions_are_written(saved, tmp_path, capsys):
    paths = [tmp_path / "t.json", tmp_path / "t.json.gz", tmp_path / "r.html", tmp_path / "r.htm"]
    assert main([str(saved), "--chrome", str(paths[0]), "--html", str(paths[2])]) == 0
    assert main([str(saved), "--chrome", str(paths[1]), "--html", str(paths[3])]) == 0
    assert all(p.stat().st_size > 0 for p in paths)
    assert capsys.readouterr().out == ""


def test_a_fifo_is_written_into_whatever_its_name(saved, tmp_path):
    fifo = tmp_path / "trace-pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader waiting, as `cat pipe` would
    try:
        assert main([str(saved), "--chrome", str(fifo)]) == 0
        assert json.loads(os.read(reader, 1 << 20))["traceEvents"]
    finally:
        os.close(reader)


def test_a_descriptor_link_is_written_into_whatever_its_name(saved, tmp_path):
    """/dev/stdout of a run redirected to a file (here /proc/self/fd/N, where /dev/stdout leads)."""
    log = tmp_path / "out.log"
    with open(log, "w") as redirected:
        assert main([str(saved), "--html", f"/proc/self/fd/{redirected.fileno()}"]) == 0
    assert log.read_text().startswith("<!DOCTYPE html>")


# ------------------------------------------------------------------------------------------------
# Options that apply to the printed report only


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["--view", "modules", "--chrome", "t.json"], "--view applies to the printed report, not to --chrome"),
        (
            ["--html", "r.html", "--sort", "sil", "--limit", "3"],
            "--sort and --limit apply to the printed report, not to --html",
        ),
        (
            ["-c", "idx,op", "--csv", "--chrome", "t.json", "--html", "r.html"],
            "-c and --csv apply to the printed report, not to --chrome and --html",
        ),
        (["-w", "80", "--chrome", "t.json"], "-w applies to the printed report, not to --chrome"),
    ],
)
def test_report_options_with_an_export_are_refused(capsys, saved, tmp_path, argv, expected):
    argv = [str(tmp_path / a) if a.endswith((".json", ".html")) else a for a in argv]
    assert usage_error(capsys, saved, *argv) == f"pyprof-live: error: {expected}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.pplive"]


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["--view", "ops", "--sort", "sil"], "--sort applies to the kernel table, not to --view ops"),
        (["--view", "modules", "-c", "idx,op"], "-c applies to the kernel table, not to --view modules"),
        (
            ["--view", "kernels", "-c", "op", "--sort", "sil"],
            "-c and --sort apply to the kernel table, not to --view kernels",
        ),
    ],
)
def test_table_options_with_a_view_name_only_the_flags_given(capsys, saved, argv, expected):
    assert usage_error(capsys, saved, *argv) == f"pyprof-live: error: {expected}"


def test_table_options_still_apply_to_the_default_table(saved, capsys):
    assert main([str(saved), "-c", "op,kernel", "--sort", "sil"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "aten::addmm gemm_kernel",
        "aten::mm mm_kernel",
        "aten::addmm [memcpy_HtoD]",
    ]  # 1000, 800, 100 ns


@pytest.mark.parametrize("command", [[], ["diff"]])
@pytest.mark.parametrize(
    "width, problem",
    [
        ("0", "must be 1 or more, not 0"),
        ("-5", "must be 1 or more, not -5"),
        ("wide", "must be a whole number, not 'wide'"),
    ],
)
def test_a_width_below_one_is_refused(capsys, saved, command, width, problem):
    inputs = [saved, saved] if command else [saved]
    prog = "pyprof-live diff" if command else "pyprof-live"
    assert usage_error(capsys, *command, *inputs, "-w", width) == f"{prog}: error: argument -w/--width: {problem}"


# ------------------------------------------------------------------------------------------------
# Kineto traces


def write_trace(tmp_path, events, **header) -> str:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**header, "traceEvents": events}))
    return str(path)


def event(cat, name="a", **fields):
    return {"ph": "X", "cat": cat, "name": name, "ts": 1, "dur": 1, "pid": 1, "tid": 1, **fields}


def load_error(load, path) -> str:
    with pytest.raises(ProfileFormatError) as raised:
        load(path)
    return str(raised.value)


@pytest.mark.parametrize(
    "events, problem",
    [
        ([event("cpu_op"), 1], "traceEvents[1] is a number, not an event object"),
        ([["cpu_op"]], "traceEvents[0] is an array, not an event object"),
        ([event("kernel")], "kernel event traceEvents[0] has no 'args'"),
        (
            [event("cpu_op"), {"ph": "X", "cat": "cpu_op", "name": "aten::mm"}],
            "cpu_op event traceEvents[1] has no 'ts'",
        ),
        ([event("cpu_op", ts="12")], "cpu_op event traceEvents[0]: 'ts' is a string, expected a finite number"),
        ([event("cpu_op", dur=None)], "cpu_op event traceEvents[0]: 'dur' is null, expected a finite number"),
        (
            [event("cuda_runtime", name=5, args={})],
            "cuda_runtime event traceEvents[0]: 'name' is 5, expected a string",
        ),
        (
            [event("kernel", args={"grid": 4})],
            "kernel event traceEvents[0]: args 'grid' is 4, expected an array of numbers",
        ),
        ([event("cpu_op", args=[1])], "cpu_op event traceEvents[0]: 'args' is an array, expected an object"),
        (
            [event("cpu_op", args={"Input Dims": [[2]], "Input type": 5})],
            "cpu_op event traceEvents[0]: args 'Input type' is 5, expected an array of strings",
        ),
        (
            [event("cpu_op", args={"Input Dims": [4]})],
            "cpu_op event traceEvents[0]: args 'Input Dims' is an array holding a number, expected an array of shapes",
        ),
        (
            [event("cpu_op", args={"Fwd thread id": None})],
            "cpu_op event traceEvents[0]: args 'Fwd thread id' is null, expected a finite number",
        ),
        (
            [event("cpu_op", args={"Call stack": ["a.py(1): f"]})],
            "cpu_op event traceEvents[0]: args 'Call stack' is an array, expected a string",
        ),
        (
            [{"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "args": {"Total Allocated": "1"}}],
            "cpu_instant_event event traceEvents[0]: args 'Total Allocated' is a string, expected a finite number",
        ),
        ([event("cpu_op"), {"ph": "X", "cat": ["cpu_op"]}], "traceEvents[1]: 'cat' is an array, expected a string"),
        ([event("cpu_op", ts=float("inf"))], "cpu_op event traceEvents[0]: 'ts' is Infinity, expected a finite number"),
        # found only once every event is in: the offending event is looked for again
        (
            [event("cpu_op"), event("cuda_runtime", args={"correlation": [7]})],
            "cuda_runtime event traceEvents[1]: args 'correlation' is an array, expected an integer",
        ),
        (
            [event("cpu_op", pid={"host": 1})],
            "cpu_op event traceEvents[0]: 'pid' is an object, expected an integer or a string",
        ),
        (
            [event("cpu_op"), event("python_function", name=3, args={"Python id": 1})],
            "python_function event traceEvents[1]: 'name' is 3, expected a string",
        ),
    ],
)
def test_a_malformed_trace_event_is_named_with_its_field(tmp_path, events, problem):
    path = write_trace(tmp_path, events)
    assert load_error(load_kineto, path) == f"{path}: {problem}"


def test_a_malformed_trace_header_is_named_with_its_field(tmp_path):
    path = write_trace(tmp_path, [event("cpu_op")], deviceProperties=5)
    assert (
        load_error(load_kineto, path) == f"{path}: the trace header's 'deviceProperties' is a number, expected an array"
    )


def test_a_value_no_field_check_describes_still_names_the_event(tmp_path):
    """A TensorList's shape that is not a list of shapes: deeper than the field checks look."""
    path = write_trace(tmp_path, [event("cpu_op", args={"Input Dims": [[2, 3]], "Input type": ["TensorList"]})])
    assert load_error(load_kineto, path) == f"{path}: cpu_op event traceEvents[0] has a value of an unexpected type"


def test_the_cli_prints_the_trace_error_on_one_line(tmp_path, capsys):
    path = write_trace(tmp_path, [event("kernel")])
    with pytest.raises(SystemExit) as exit_:
        main([path])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == f"pyprof-live: error: {path}: kernel event traceEvents[0] has no 'args'\n"


# ------------------------------------------------------------------------------------------------
# SQLite exports


NSYS_TABLES = {
    "CUPTI_ACTIVITY_KIND_KERNEL": "start INT, end INT, deviceId INT, streamId INT, correlationId INT, globalPid INT, "
    "demangledName INT",
    "CUPTI_ACTIVITY_KIND_RUNTIME": "start INT, end INT, correlationId INT, globalTid INT, nameId INT",
    "NVTX_EVENTS": "start INT, end INT, eventType INT, globalTid INT, text TEXT",
    "TARGET_INFO_GPU": "id INT, name TEXT",
    "StringIds": "id INT, value TEXT",
}
PID = 7 << 24


def nsys_export(tmp_path, *statements) -> str:
    """Two kernels launched by two cudaLaunchKernel calls, one NVTX range; then ``statements`` spoil it."""
    path = tmp_path / "bad.sqlite"
    with sqlite3.connect(path) as db:
        for table, columns in NSYS_TABLES.items():
            db.execute(f"CREATE TABLE {table} ({columns})")
        db.execute("INSERT INTO StringIds VALUES (1, 'gemm'), (2, 'cudaLaunchKernel_v7000')")
        db.execute(
            f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (200, 300, 0, 7, 11, {PID}, 1), "
            f"(310, 350, 0, 7, 12, {PID}, 1)"
        )
        db.execute(
            f"INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (100, 150, 11, {PID | 1}, 2), (160, 170, 12, {PID | 1}, 2)"
        )
        db.execute(f"INSERT INTO NVTX_EVENTS VALUES (50, 400, 59, {PID | 1}, 'step')")
        db.execute("INSERT INTO TARGET_INFO_GPU VALUES (0, 'H100'), (1, 'H100')")
        for statement in statements:
            db.execute(statement)
    db.close()
    return str(path)


def test_the_unspoilt_export_loads(tmp_path):
    records = load_nsys(nsys_export(tmp_path)).records
    assert (len(records.kernels), len(records.apis), len(records.ranges), len(records.devices)) == (2, 2, 1, 2)


@pytest.mark.parametrize(
    "statement, problem",
    [
        (
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET globalPid = 'host-a'",
            "CUPTI_ACTIVITY_KIND_KERNEL rowid 1: globalPid is text 'host-a', expected an integer",
        ),
        (
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = x'0102' WHERE rowid = 2",
            "CUPTI_ACTIVITY_KIND_KERNEL rowid 2: start is a blob, expected an integer",
        ),
        (
            "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = NULL WHERE rowid = 2",
            "CUPTI_ACTIVITY_KIND_RUNTIME rowid 2: start is NULL, expected an integer",
        ),
        ("UPDATE NVTX_EVENTS SET end = 'later'", "NVTX_EVENTS rowid 1: end is text 'later', expected an integer"),
        ("UPDATE NVTX_EVENTS SET start = NULL", "NVTX_EVENTS rowid 1: start is NULL, expected an integer"),
        (
            "UPDATE NVTX_EVENTS SET globalTid = 1.5",
            "NVTX_EVENTS rowid 1: globalTid is a real number 1.5, expected an integer",
        ),
        (
            "UPDATE TARGET_INFO_GPU SET id = 'gpu0' WHERE rowid = 2",
            "TARGET_INFO_GPU rowid 2: id is text 'gpu0', expected an integer",
        ),
    ],
)
def test_an_ill_typed_value_is_named_with_its_table_row_and_column(tmp_path, statement, problem):
    path = nsys_export(tmp_path, statement)
    assert load_error(load_nsys, path) == f"{path}: {problem}"


def test_a_missing_time_is_named_with_its_row(tmp_path):
    path = nsys_export(tmp_path, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = NULL")
    assert (
        load_error(load_nsys, path) == f"{path}: CUPTI_ACTIVITY_KIND_KERNEL rowid 1: end is NULL, expected an integer"
    )


def nvprof_export(tmp_path, statement: str):
    """The nvprof test export, then ``statement`` spoils it."""
    path = tmp_path / "net.sql"
    build_export(path)
    with sqlite3.connect(path) as db:
        db.execute(statement)
    db.close()
    return path


def test_nvprof_exports_are_diagnosed_by_their_own_tables(tmp_path):
    path = nvprof_export(tmp_path, "UPDATE CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL SET start = 'late' WHERE _id_ = 2")
    assert load_error(load_nsys, path) == (
        f"{path}: CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL rowid 2: start is text 'late', expected an integer"
    )


def test_a_value_no_column_check_describes_still_says_what_is_wrong(tmp_path):
    """A marker's thread (objectId) must be bytes: a real number there is deeper than the column checks look."""
    path = nvprof_export(tmp_path, "UPDATE CUPTI_ACTIVITY_KIND_MARKER SET objectId = 2.5")
    assert load_error(load_nsys, path) == f"{path}: a value in the export has an unexpected type"
