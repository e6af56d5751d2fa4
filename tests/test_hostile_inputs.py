"""Hostile and damaged input (issue 13): one group of tests per numbered defect of the issue, each of
which failed (traceback, hang, wrong output or a saved file that would not load) before its fix.

Everything here is built in tmp_path: well-formed files whose values have the wrong type or size,
control characters, streams that can be read only once, replaced files' modes, damaged saved
profiles. The fuzz suite (test_fuzz_inputs.py) throws thousands more at the same rules.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
import time

import pytest

from pyprof_live.errors import ProfileFormatError
from pyprof_live.formulas.registry import evaluate
from pyprof_live.importers import load
from pyprof_live.profile import Profile
from pyprof_live.records import KernelRecord, OpRecord, TensorMeta
from pyprof_live.report.diff import diff

from .test_import_nsys import build_export as build_nsys_export
from .test_import_nvprof import build_export as build_nvprof_export


def event(cat, name="aten::mm", **fields):
    return {"ph": "X", "cat": cat, "name": name, "ts": 1, "dur": 1, "pid": 1, "tid": 1, **fields}


OP = event("cpu_op", args={"External id": 9})
LAUNCH = event("cuda_runtime", "cudaLaunchKernel", args={"correlation": 5, "External id": 9})


def kernel(**args):
    return event("kernel", "gemm", args={"correlation": 5, "device": 0, "stream": 7, **args})


def write_trace(tmp_path, events, name="trace.json", **header):
    path = tmp_path / name
    path.write_text(json.dumps({**header, "traceEvents": events}))
    return path


def load_error(path, loader=load) -> str:
    with pytest.raises(ProfileFormatError) as raised:
        loader(path)
    message = str(raised.value)
    assert "\n" not in message
    return message


def every_output(profile, tmp_path) -> None:
    """What a user can do with a loaded profile: every view, both exports, save -> load, diff."""
    for name in ("table", "ops", "ops+shape", "kernels", "modules", "overview", "recommendations"):
        str(profile.view(name))
    profile.table(fmt="csv")
    profile.table(fmt="space")
    profile.export_chrome_trace(tmp_path / "out.json")
    profile.save_html(tmp_path / "out.html")
    profile.save(tmp_path / "out.pplive")
    again = load(tmp_path / "out.pplive")
    str(diff(profile, again))


@contextlib.contextmanager
def within(seconds: int):
    """Fail, instead of hanging the suite, when the block runs longer than ``seconds``."""

    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def altered_copy(source, tmp_path, *statements, name="altered.sqlite"):
    path = tmp_path / name
    path.write_bytes(source.read_bytes())
    with sqlite3.connect(path) as db:
        for statement in statements:
            db.execute(statement)
    return path


@pytest.fixture(scope="module")
def nsys_export(tmp_path_factory):
    return build_nsys_export(tmp_path_factory.mktemp("nsys") / "small.sqlite")


@pytest.fixture(scope="module")
def nvprof_export(tmp_path_factory):
    return build_nvprof_export(tmp_path_factory.mktemp("nvprof") / "small.sql")


# ------------------------------------------------------------------------------------------------
# 1. SQLite schema text: not UTF-8, or a multi-line damaged CREATE TABLE


def _damaged_schema(tmp_path, sql: bytes):
    path = tmp_path / "schema.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT)")
        db.execute("PRAGMA writable_schema=ON")
        db.execute("UPDATE sqlite_master SET sql = CAST(? AS TEXT) WHERE name = 'CUPTI_ACTIVITY_KIND_KERNEL'", (sql,))
    return path


def test_schema_text_that_is_not_utf8_is_a_corrupt_database(tmp_path):
    # SQLite's error quotes the damaged text; the sqlite3 module could not decode its own message.
    path = _damaged_schema(tmp_path, b"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, x INT DEFAULT 'ab\xff\nc)")
    assert load_error(path) == f"{path}: corrupt SQLite database (malformed schema text, not UTF-8)"


def test_a_damaged_multiline_schema_is_a_one_line_error(tmp_path):
    path = _damaged_schema(tmp_path, b"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (\n start INT DEFAULT 'x\nline2)")
    assert load_error(path) == (
        f"{path}: corrupt SQLite database (malformed database schema (CUPTI_ACTIVITY_KIND_KERNEL) - "
        'unrecognized token: "\'x\\nline2)")'
    )


# ------------------------------------------------------------------------------------------------
# 2. Kineto values of the wrong type, accepted and crashing a later stage


@pytest.mark.parametrize(
    "events, header, problem",
    [
        (
            [OP, LAUNCH, kernel()],
            {"deviceProperties": [{"id": 0, "name": 7}]},
            "the trace header's deviceProperties[0]: 'name' is 7, expected a string",
        ),
        (
            [event("cpu_op", tid=None)],
            {},
            "cpu_op event traceEvents[0]: 'tid' is null, expected an integer or a string",
        ),
        (
            [event("cpu_op", args={"External id": [1]})],
            {},
            "cpu_op event traceEvents[0]: args 'External id' is an array, expected an integer",
        ),
        (
            [event("cpu_op", args={"Sequence number": [3]})],
            {},
            "cpu_op event traceEvents[0]: args 'Sequence number' is an array, expected an integer",
        ),
        (
            [OP, LAUNCH, event("kernel", 5, args={"correlation": 5})],
            {},
            "kernel event traceEvents[2]: 'name' is 5, expected a string",
        ),
        (
            [event("user_annotation", ["step"])],
            {},
            "user_annotation event traceEvents[0]: 'name' is an array, expected a string",
        ),
        (
            [OP, LAUNCH, kernel(device=[0])],
            {},
            "kernel event traceEvents[2]: args 'device' is an array, expected an integer",
        ),
        (
            [OP, LAUNCH, event("gpu_memcpy", "Memcpy HtoD", args={"correlation": 5, "bytes": "8"})],
            {},
            "gpu_memcpy event traceEvents[2]: args 'bytes' is a string, expected an integer",
        ),
    ],
)
def test_a_kineto_value_of_the_wrong_type_is_named_at_load(tmp_path, events, header, problem):
    path = write_trace(tmp_path, events, **header)
    assert load_error(path) == f"{path}: {problem}"


# ------------------------------------------------------------------------------------------------
# 3. Floats, strings, None or bools in integer fields: refused at load, never saved unloadable


@pytest.mark.parametrize(
    "events, problem",
    [
        ([event("cpu_op", pid=1.5)], "cpu_op event traceEvents[0]: 'pid' is 1.5, expected an integer or a string"),
        (
            [event("cpu_op", tid=True)],
            "cpu_op event traceEvents[0]: 'tid' is a boolean, expected an integer or a string",
        ),
        (
            [event("cpu_op", ts=1e300)],
            "cpu_op event traceEvents[0]: 'ts' is 1e+300, expected a time of at most 2**62 ns",
        ),
        (
            [OP, event("cuda_runtime", args={"correlation": 5.0})],
            "cuda_runtime event traceEvents[1]: args 'correlation' is 5.0, expected an integer",
        ),
        ([OP, LAUNCH, kernel(stream=None)], "kernel event traceEvents[2]: args 'stream' is null, expected an integer"),
        (
            [OP, LAUNCH, kernel(grid=[1.5, 1, 1])],
            "kernel event traceEvents[2]: args 'grid' is an array, expected a tuple of integers of at most 64 bits",
        ),
        (
            [event("cpu_op", args={"Input Dims": [[-1, 3]], "Input type": ["float"]})],
            "cpu_op event traceEvents[0]: args 'Input Dims'[0] is [-1, 3], "
            "expected tensor shapes of at most 64 sizes (integers from 0 to 2**63 - 1, or symbols)",
        ),
    ],
)
def test_a_kineto_number_of_the_wrong_kind_is_refused(tmp_path, events, problem):
    path = write_trace(tmp_path, events)
    assert load_error(path) == f"{path}: {problem}"


@pytest.mark.parametrize(
    "statement, problem",
    [
        (
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET contextId = 'ctx' WHERE correlationId = 2",
            "CUPTI_ACTIVITY_KIND_KERNEL rowid 2: contextId is text 'ctx', expected an integer",
        ),
        (
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET streamId = x'07' WHERE correlationId = 2",
            "CUPTI_ACTIVITY_KIND_KERNEL rowid 2: streamId is a blob, expected an integer",
        ),
        (
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET staticSharedMemory = 1.5 WHERE correlationId = 2",
            "CUPTI_ACTIVITY_KIND_KERNEL rowid 2: staticSharedMemory is a real number 1.5, expected an integer",
        ),
        (
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridY = 'two' WHERE correlationId = 2",
            "CUPTI_ACTIVITY_KIND_KERNEL rowid 2: gridY is text 'two', expected an integer",
        ),
        (
            "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = '168 B'",
            "CUPTI_ACTIVITY_KIND_MEMCPY rowid 1: bytes is text '168 B', expected an integer",
        ),
    ],
)
def test_an_nsys_column_of_the_wrong_type_is_named_with_its_row(nsys_export, tmp_path, statement, problem):
    path = altered_copy(nsys_export, tmp_path, statement)
    assert load_error(path) == f"{path}: {problem}"


def test_null_memcpy_device_stream_and_bytes_read_as_not_recorded_and_save(nsys_export, tmp_path):
    path = altered_copy(
        nsys_export, tmp_path, "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET deviceId = NULL, streamId = NULL, bytes = NULL"
    )
    profile = load(path)
    memcpy = next(m for m in profile.records.memops if m.kind == "memcpy")
    assert (memcpy.device, memcpy.stream, memcpy.bytes) == (0, 0, 0)
    every_output(profile, tmp_path)


# ------------------------------------------------------------------------------------------------
# 4. nvprof: a NULL string, an NVTX time of INT64_MIN, duplicate marker ids


def test_a_null_nvprof_string_names_the_kernel_by_its_id(nvprof_export, tmp_path):
    # String 1 is the first kernel's mangled name; c10::demangle used to get None and raise.
    path = altered_copy(nvprof_export, tmp_path, "UPDATE StringTable SET value = NULL WHERE _id_ = 1")
    profile = load(path)
    assert [k.name for k in profile.records.kernels] == ["<string 1>", "embed_backward()", "relu(int)", "orphan()"]
    every_output(profile, tmp_path)


def test_an_nvtx_start_of_int64_min_is_refused_with_its_row(nsys_export, tmp_path):
    path = altered_copy(
        nsys_export, tmp_path, "UPDATE NVTX_EVENTS SET start = -9223372036854775808 WHERE text = 'warmup'"
    )
    assert (
        load_error(path)
        == f"{path}: NVTX_EVENTS rowid 10: start is -9223372036854775808, expected a time of at most 2**62 ns"
    )


def test_duplicate_nvprof_marker_ids_are_left_out_not_joined_with_each_other(nvprof_export, tmp_path):
    # Markers 1-4 nest on the main thread (layer:Embed > traceMarker > PyProf's embedding > aten::embedding,
    # 8 start/end rows). Giving all four id 1 used to join 4 starts x 4 ends into 16 ranges (on a real
    # export, half of them ending before they start); now those 4 ranges are left out and counted.
    path = altered_copy(
        nvprof_export, tmp_path, "UPDATE CUPTI_ACTIVITY_KIND_MARKER SET id = 1 WHERE id IN (1, 2, 3, 4)"
    )
    profile = load(path)
    assert [op.name for op in profile.records.ops] == [
        "aten::add_",
        "EmbeddingBackward",
        "aten::embedding_backward",
        "torch::autograd::AccumulateGrad",
    ]
    assert [r.name for r in profile.records.ranges] == ["step"]
    assert profile.meta["warnings"][-1] == (
        "4 NVTX ranges share their marker id with another range (their start and end rows cannot be paired): left out"
    )


# ------------------------------------------------------------------------------------------------
# 5. A negative duration


def test_an_event_that_ends_before_it_starts_is_left_out_and_counted(tmp_path):
    path = write_trace(tmp_path, [event("cpu_op", dur=-1_000_000), event("cpu_op", "aten::relu", ts=5)])
    profile = load(path)
    assert [op.name for op in profile.records.ops] == ["aten::relu"]
    table = profile.table()
    assert "-1000000000" not in table
    assert table.splitlines()[-1] == "1 events end before they start (negative duration) and were left out: 1 ops"


# ------------------------------------------------------------------------------------------------
# 6. Lone surrogates, non-UTF-8 file names, an ASCII terminal


def test_a_lone_surrogate_in_a_name_is_shown_escaped_everywhere(tmp_path):
    path = write_trace(tmp_path, [event("cpu_op", "aten::\ud800mm")])
    profile = load(path)
    assert "aten::\\ud800mm" in profile.table()
    assert "aten::\\ud800mm" in profile.table(fmt="csv")
    assert "aten::\\ud800mm" in str(diff(profile, profile))
    every_output(profile, tmp_path)
    assert "aten::\\ud800mm" in (tmp_path / "out.html").read_text()


def _run_cli(*args, **kwargs):
    return subprocess.run([sys.executable, "-m", "pyprof_live", *args], capture_output=True, timeout=120, **kwargs)


@pytest.mark.e2e
def test_a_non_utf8_file_name_and_an_ascii_terminal_give_no_traceback(tmp_path):
    name = os.fsencode(tmp_path) + b"/caf\xe9.json"  # Latin-1, not UTF-8: a surrogate escape in Python
    with open(name, "w") as out:
        json.dump({"traceEvents": [event("cpu_op", "aten::caf\u00e9")]}, out)
    html = os.fsencode(tmp_path) + b"/r\xe9port.html"
    done = _run_cli(os.fsdecode(name), "--html", os.fsdecode(html))
    assert (done.returncode, done.stderr.count(b"\n")) == (0, 1)
    assert os.path.exists(html)
    done = _run_cli(os.fsdecode(name), env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0
    assert b"aten::caf\\xe9" in done.stdout


# ------------------------------------------------------------------------------------------------
# 7. Formulas do bounded work whatever sizes a file gives


def _op(name, *inputs, outputs=()):
    return OpRecord(name, 0, 1, inputs=inputs, outputs=outputs)


def test_adaptive_pooling_to_a_huge_output_is_counted_in_closed_form():
    # Pooling 4x4 to 10**12 x 10 windows: along a dim of size S pooled to O the windows hold
    # S + O - gcd(S, O) elements: 4 + 10**12 - 4 = 10**12 and 4 + 10 - 2 = 12, so 1.2e13 summed,
    # plus one divide per output element (10**13): 2.2e13 flops.
    op = _op("aten::adaptive_avg_pool2d", TensorMeta((1, 1, 4, 4), "float32"), (10**12, 10))
    with within(5):
        cost = evaluate(op)
    assert cost.flops == 10**12 * 12 + 10**13


def test_adaptive_pooling_matches_the_window_by_window_sum():
    # 5 pooled to 3: windows [0,2) [1,4) [3,5) hold 2 + 3 + 2 = 7 = 5 + 3 - gcd(5, 3); per dim, so 7 x 7 = 49
    # summed + 9 divides.
    cost = evaluate(_op("aten::adaptive_avg_pool2d", TensorMeta((1, 1, 5, 5), "float32"), (3, 3)))
    assert cost.flops == 49 + 9


def test_an_lstm_of_a_huge_layer_count_is_counted_in_closed_form():
    # input (5, 1, 8), h0 and c0 (L, 1, 16), params not needed for the count, num_layers = L = 10**12.
    # Per token and direction: layer 0 2*4*16*(8+16) = 3072 GEMM flops, each later layer 2*4*16*(16+16)
    # = 4096; pointwise (5T+14+8)*16 per layer. With 5 tokens: flops grow linearly in L, computed once.
    layers = 10**12
    h = TensorMeta((layers, 1, 16), "float32")
    op = _op("aten::lstm", TensorMeta((5, 1, 8), "float32"), (h, h), (), True, layers, 0.0, False, False, False)
    with within(5):
        cost = evaluate(op)
    small = evaluate(_op("aten::lstm", TensorMeta((5, 1, 8), "float32"), (h, h), (), True, 2, 0.0, False, False, False))
    per_later_layer = (
        evaluate(
            _op("aten::lstm", TensorMeta((5, 1, 8), "float32"), (h, h), (), True, 3, 0.0, False, False, False)
        ).flops
        - small.flops
    )
    assert cost.flops == small.flops + (layers - 2) * per_later_layer


def test_a_varlen_attention_of_a_huge_sequence_count_is_multiplied_not_listed():
    # cum_seq_q of 2**40 + 1 entries: 2**40 sequences, each counted once and multiplied.
    q = TensorMeta((8, 2, 64), "float16")
    cum = TensorMeta((2**40 + 1,), "int32")
    op = _op("aten::_flash_attention_forward", q, q, q, cum, cum, 8, 8, 0.0, False, False)
    with within(5):
        cost = evaluate(op)
    one = evaluate(
        _op("aten::_flash_attention_forward", q, q, q, TensorMeta((2,), "int32"), cum, 8, 8, 0.0, False, False)
    )
    assert cost.flops == one.flops * 2**40


def test_a_count_beyond_64_bits_is_na_with_the_reason():
    # 20 dims of 2**40: 2**800 elements, 1 flop each (2**800 has 801 bits); 4 bytes read and 4 written
    # per element: 2**803 bytes, 804 bits.
    op = _op("aten::relu", TensorMeta((2**40,) * 20, "float32"))
    cost = evaluate(op)
    assert (cost.flops, cost.bytes) == (None, None)
    assert cost.reason == "flops out of range (a 801-bit number); bytes out of range (a 804-bit number)"


# ------------------------------------------------------------------------------------------------
# 8. Inputs that can be read only once


def _gzip_trace(tmp_path):
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(json.dumps({"traceEvents": [event("cpu_op")]}).encode()))
    return path


@pytest.mark.e2e
@pytest.mark.parametrize(
    "command",
    [
        "pyprof-live <(zcat {t})",
        "pyprof-live <(cat {t})",
        "zcat {t} | pyprof-live /dev/stdin",
        "cat {t} | pyprof-live -",
        "pyprof-live - < {t}",
        "rm -f {fifo}; mkfifo {fifo}; (cat {t} > {fifo} &); pyprof-live {fifo}",
    ],
)
def test_the_cli_reads_pipes_fifos_and_stdin_once(tmp_path, command):
    trace = _gzip_trace(tmp_path)
    cli = f"{sys.executable} -m pyprof_live"
    line = command.replace("pyprof-live", cli).format(t=trace, fifo=tmp_path / "fifo")
    done = subprocess.run(["bash", "-c", line], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines()[-1].split() == ["1", "fwd", "-", "-", "aten::mm", "-", "-", "-"]


def test_load_reads_a_fifo_once(tmp_path):
    fifo = tmp_path / "trace.fifo"
    os.mkfifo(fifo)
    data = _gzip_trace(tmp_path).read_bytes()
    writer = threading.Thread(target=lambda: fifo.write_bytes(data))
    writer.start()
    with within(20):
        profile = load(fifo)
    writer.join()
    assert ([op.name for op in profile.records.ops], profile.meta["path"]) == (["aten::mm"], str(fifo))


def test_a_stream_that_is_no_profile_is_refused_after_its_head(tmp_path):
    with within(10):
        assert load_error("/dev/zero") == (
            "/dev/zero: not a profile pyprof_live can read (expected a saved profile, an Nsight Systems "
            "or nvprof SQLite export, or a PyTorch profiler JSON trace)"
        )


# ------------------------------------------------------------------------------------------------
# 9. A byte-order mark; data after the trace


def test_a_trace_with_a_utf8_bom_loads(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"traceEvents": [event("cpu_op")]}).encode())
    assert [op.name for op in load(path).records.ops] == ["aten::mm"]


def test_two_concatenated_traces_are_refused(tmp_path):
    one = json.dumps({"traceEvents": [event("cpu_op")]}).encode()
    plain = tmp_path / "two.json"
    plain.write_bytes(one + b"\n" + one)
    members = tmp_path / "two.json.gz"
    members.write_bytes(gzip.compress(one) + gzip.compress(one))
    for path in (plain, members):
        assert (
            load_error(path)
            == f"{path}: not a Kineto trace: data after the end of the trace (two traces concatenated?)"
        )


# ------------------------------------------------------------------------------------------------
# 10. Control characters reach no terminal


NASTY = "\x1b]0;owned\x07aten::mm\r\n\x1b[2J\x9b"


def test_control_characters_in_names_are_escaped_in_every_text_format(tmp_path):
    path = write_trace(tmp_path, [event("cpu_op", NASTY)])
    profile = load(path)
    shown = "\\x1b]0;owned\\x07aten::mm\\r\\n\\x1b[2J\\x9b"
    for text in (profile.table(), profile.table(fmt="space"), str(profile.ops()), str(diff(profile, profile))):
        assert shown in text
        assert not any(c in text for c in "\x1b\x07\r\x9b")
    rows = list(csv.reader(io.StringIO(profile.table(fmt="csv", columns="idx,op"))))
    assert rows == [["Idx", "Op"], ["1", shown]]


def test_an_error_for_a_file_name_with_a_newline_is_one_line(tmp_path):
    path = tmp_path / "evil\nname.json"
    path.write_text("{}")
    shown = str(path).replace("\n", "\\n")
    assert load_error(path) == f"{shown}: not a Kineto trace: no traceEvents array"


# ------------------------------------------------------------------------------------------------
# 11. A replaced file keeps its permission bits


@pytest.mark.parametrize("write", ["save", "export_chrome_trace", "save_html"])
def test_replacing_a_file_keeps_its_mode(tmp_path, write):
    profile = Profile(ops=[OpRecord("aten::mm", 0, 10)], meta={"source": "test"})
    path = tmp_path / {"save": "p.pplive", "export_chrome_trace": "t.json", "save_html": "r.html"}[write]
    path.write_text("old")
    path.chmod(0o600)
    getattr(profile, write)(path)
    assert (stat.S_IMODE(path.stat().st_mode), path.read_bytes() != b"old") == (0o600, True)


# ------------------------------------------------------------------------------------------------
# 12. stop() on another thread than the one that started the profile


def test_stop_on_another_thread_refuses_and_leaves_no_hook_behind():
    import torch
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    import pyprof_live
    from pyprof_live.errors import CaptureError

    profile = pyprof_live.profile()
    profile.start()
    torch.ones(2).add(1)
    refused = []

    def stop_elsewhere():
        try:
            profile.stop()
        except CaptureError as error:
            refused.append(str(error))

    other = threading.Thread(target=stop_elsewhere)
    other.start()
    other.join()
    assert len(refused) == 1 and "only that thread can take the hook off, so call stop() there" in refused[0]
    torch.ones(2).mul(3)  # still recording: the refused stop() changed nothing
    profile.stop()
    assert _get_current_dispatch_mode_stack() == []
    assert [op.name for op in profile.records.ops] == ["aten::ones", "aten::add", "aten::ones", "aten::mul"]


def test_a_profile_whose_thread_ended_stops_on_any_thread():
    import torch
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    import pyprof_live

    profile = pyprof_live.profile()

    def record():
        profile.start()
        torch.ones(3).neg()

    worker = threading.Thread(target=record)
    worker.start()
    worker.join()
    profile.stop()
    assert [op.name for op in profile.records.ops] == ["aten::ones", "aten::neg"]
    assert _get_current_dispatch_mode_stack() == []


# ------------------------------------------------------------------------------------------------
# 13. Damaged saved profiles


def _saved_document(tmp_path) -> dict:
    path = tmp_path / "good.pplive"
    ops = [OpRecord("aten::mm", 0, 10, layer=("FFN",), callsite=("m.py:3",), kwargs=(("alpha", 1),))]
    Profile(ops=ops, kernels=[KernelRecord("gemm", 2, 8)], meta={"source": "test", "warnings": ["w"]}).save(path)
    return json.loads(gzip.decompress(path.read_bytes()))


def _column(document, table, field):
    records = document["records"][table]
    return records["rows"][0], records["fields"].index(field)


def _set_meta(document, key, value):
    document["meta"]["D"][key] = value


def _set_op(field, value):
    def damage(document):
        row, at = _column(document, "ops", field)
        row[at] = value

    return damage


@pytest.mark.parametrize(
    "damage, problem",
    [
        (lambda d: _set_meta(d, "warnings", [1, None]), "meta.warnings must be a list of text lines"),
        (lambda d: _set_meta(d, "peak", "A100"), "meta.peak must be an object of peak figures"),
        (
            lambda d: _set_meta(d, "peak", {"D": {"name": "x", "bandwidth": -1, "fp32": 1, "fp64": 1}}),
            "meta.peak: GpuPeak 'x': bandwidth must be a finite positive number (or None for a unit the GPU "
            "lacks), not -1",
        ),
        (_set_op("layer", [1]), "ops[0]: layer is a tuple, expected a tuple of strings"),
        (_set_op("callsite", [["m.py:3"]]), "ops[0]: callsite is a tuple, expected a tuple of strings"),
        (_set_op("kwargs", [[1, 2, 3]]), "ops[0]: kwargs is a tuple, expected (name, value) pairs"),
        (
            _set_op("inputs", [{"T": [[8.0], "float32", None]}]),
            "ops[0]: inputs is a tuple, expected tensor shapes of at most 64 sizes (integers from 0 to 2**63 - 1, "
            "or symbols)",
        ),
        (_set_op("start", 2**70), "ops[0]: start is 1180591620717411303424, expected a time of at most 2**62 ns"),
    ],
)
def test_a_damaged_saved_value_is_refused_at_load(tmp_path, damage, problem):
    document = _saved_document(tmp_path)
    damage(document)
    path = tmp_path / "damaged.pplive"
    path.write_bytes(gzip.compress(json.dumps(document).encode()))
    assert load_error(path) == f"{path}: saved profile is damaged ({problem})"


def test_a_saved_profile_that_inflates_a_thousandfold_is_refused_quickly(tmp_path):
    # 4 MiB of blanks compress to about 4 KiB; 256 such gzip members inflate to 1 GiB from ~1 MB.
    head = gzip.compress(b'{"format":"pyprof_live.profile","version":1,"meta":')
    blanks = gzip.compress(b" " * (4 << 20), 9)
    path = tmp_path / "bomb.pplive"
    path.write_bytes(head + blanks * 256)
    size = path.stat().st_size
    started = time.perf_counter()
    message = load_error(path)
    assert message == (
        f"{path}: not a readable saved profile: it inflates to more than 200 times its {size} compressed bytes "
        "(a decompression bomb, or damaged)"
    )
    assert time.perf_counter() - started < 5
