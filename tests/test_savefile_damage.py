"""A saved profile whose tables do not fit the record types is refused in one line naming the file,
instead of loading into records that fail (or, worse, print wrong rows) later."""

import gzip
import json

import pytest

import pyprof_live
from pyprof_live.profile import Profile
from pyprof_live.records import CompileRecord, KernelRecord, OpRecord, TensorMeta


def _profile() -> Profile:
    ops = [
        OpRecord(
            "aten::addmm",
            1000,
            4000,
            tid=5,
            seq=7,
            inputs=(TensorMeta((8, 16), "float32"), 1),
            module="Net.fc",
            callsite=("model.py:17",),
        ),
        OpRecord("aten::relu", 5000, 6000, tid=5, dir="fwd"),
    ]
    kernels = [KernelRecord("gemm_kernel", 2000, 3000, grid=(4, 1, 1), block=(128, 1, 1))]
    return Profile(ops=ops, kernels=kernels, meta={"source": "test"})


def _document(tmp_path) -> dict:
    path = tmp_path / "good.pplive"
    _profile().save(path)
    return json.loads(gzip.decompress(path.read_bytes()))


def _write(tmp_path, document):
    path = tmp_path / "damaged.pplive"
    path.write_bytes(gzip.compress(json.dumps(document).encode()))
    return path


def _cut_fields(ops):
    ops["fields"] = ops["fields"][:3]  # the reviewer's cut: rows still hold every value


def _short_row(ops):
    ops["rows"][1] = ops["rows"][1][:-1]


def _every_row_short(ops):
    ops["rows"] = [row[:-1] for row in ops["rows"]]


def _renamed_field(ops):
    ops["fields"][ops["fields"].index("tid")] = "thread"


def _duplicate_field(ops):
    ops["fields"][ops["fields"].index("tid")] = "pid"


def _string_time(ops):
    ops["rows"][0][ops["fields"].index("start")] = "1000"


def _number_as_name(ops):
    ops["rows"][1][ops["fields"].index("name")] = 17


def _row_not_a_list(ops):
    ops["rows"][0] = dict(zip(ops["fields"], ops["rows"][0]))


def _link_field_stored(ops):
    ops["fields"].append("parent")
    for row in ops["rows"]:
        row.append(-1)


def _missing_required_field(ops):
    at = ops["fields"].index("start")
    del ops["fields"][at]
    for row in ops["rows"]:
        del row[at]


@pytest.mark.parametrize(
    "damage, problem",
    [
        (_cut_fields, "ops: 3 fields named but rows hold 24 values"),
        (_short_row, "ops: rows of different lengths"),
        (_every_row_short, "ops: 24 fields named but rows hold 23 values"),
        (_renamed_field, "ops: unknown field(s) 'thread'"),
        (_duplicate_field, "ops: field(s) named twice: 'pid'"),
        (_string_time, "ops.start: values must be int, not str"),
        (_number_as_name, "ops.name: values must be str, not int"),
        (_row_not_a_list, "ops: a row is not a list (dict)"),
        (_link_field_stored, "ops: unknown field(s) 'parent'"),
        (_missing_required_field, "ops: required field(s) missing: 'start'"),
    ],
)
def test_a_damaged_table_is_refused_in_one_line(tmp_path, damage, problem):
    document = _document(tmp_path)
    damage(document["records"]["ops"])
    path = _write(tmp_path, document)
    with pytest.raises(pyprof_live.ProfileFormatError) as info:
        pyprof_live.load(path)
    assert str(info.value) == f"{path}: saved profile is damaged ({problem})"


def test_a_table_that_is_not_fields_and_rows_is_refused(tmp_path):
    document = _document(tmp_path)
    document["records"]["kernels"] = [["gemm_kernel", 2000, 3000]]
    path = _write(tmp_path, document)
    with pytest.raises(
        pyprof_live.ProfileFormatError,
        match=r"damaged\.pplive: saved profile is damaged "
        r"\(kernels: not a table of fields and rows\)$",
    ):
        pyprof_live.load(path)


def test_a_table_without_an_optional_field_loads_with_its_default(tmp_path):
    """An older file, written before a field with a default existed, still loads."""
    document = _document(tmp_path)
    ops = document["records"]["ops"]
    at = ops["fields"].index("callsite")
    del ops["fields"][at]
    for row in ops["rows"]:
        del row[at]
    loaded = pyprof_live.load(_write(tmp_path, document))
    expected = _profile().records.ops
    assert [op.callsite for op in loaded.records.ops] == [(), ()]
    assert [(op.name, op.start, op.end, op.tid, op.seq, op.inputs, op.module) for op in loaded.records.ops] == [
        (op.name, op.start, op.end, op.tid, op.seq, op.inputs, op.module) for op in expected
    ]


def test_an_undamaged_file_loads_every_record_as_saved(tmp_path):
    path = tmp_path / "run.pplive"
    saved = _profile()
    saved.save(path)
    loaded = pyprof_live.load(path)
    assert loaded.records.ops == saved.records.ops and loaded.records.kernels == saved.records.kernels
    assert loaded.records.ops[0].inputs == (TensorMeta((8, 16), "float32"), 1)
    assert loaded.records.kernels[0].grid == (4, 1, 1)


def test_a_compile_events_flag_that_is_not_a_boolean_is_refused(tmp_path):
    path = tmp_path / "compiled.pplive"
    compiles = [CompileRecord("compile", 0, 10, compile_id="1/0", name="forward", after_break=True)]
    Profile(ops=[OpRecord("aten::add", 0, 10)], compiles=compiles, meta={"source": "test"}).save(path)
    assert pyprof_live.load(path).records.compiles == compiles
    document = json.loads(gzip.decompress(path.read_bytes()))
    table = document["records"]["compiles"]
    table["rows"][0][table["fields"].index("after_break")] = "yes"
    damaged = _write(tmp_path, document)
    with pytest.raises(pyprof_live.ProfileFormatError) as info:
        pyprof_live.load(damaged)
    assert (
        str(info.value) == f"{damaged}: saved profile is damaged (compiles.after_break: values must be bool, not str)"
    )
