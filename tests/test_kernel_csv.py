"""report/kernel_csv.py: export_csv in launch order writes text lines without a dict per row; the
bytes must be those of the reference (write_csv on views.kernel_rows' rows), on hand-built profiles
and on every real export and trace."""

import io

import pytest

from pyprof_live.importers.kineto import load_kineto
from pyprof_live.importers.nsys import load_nsys
from pyprof_live.profile import Profile
from pyprof_live.records import NO_LINK, ApiRecord, KernelRecord, MemoryRecord, OpRecord
from pyprof_live.render.text import write_csv
from pyprof_live.report.columns import COLUMN_NAMES, TABLE
from pyprof_live.report.kernel_csv import _op_keys, write_kernel_csv
from pyprof_live.report.views import kernel_rows


def _reference(p: Profile, columns) -> str:
    rows, _ = kernel_rows(p, columns)
    out = io.StringIO()
    write_csv(out, rows, columns, [TABLE[c].header for c in columns])
    return out.getvalue()


def _fast(p: Profile, columns) -> str:
    out = io.StringIO()
    write_kernel_csv(out, p, columns, [TABLE[c].header for c in columns])
    return out.getvalue()


def _hand_built() -> Profile:
    # Thread 1: op 'say "hi"' [0, 100] launches a kernel named "a\nb" (corr 1, 200..230) and a second,
    # "gemm" (corr 2, 240..250, grid 2x1x1); op "x\x1by" [110, 150] a memcpy HtoD (corr 3, 260..270,
    # 64 bytes); op "aten::mm" [160, 190] launches nothing. One kernel (corr 9) has no launching call.
    ops = [
        OpRecord('say "hi"', 0, 100, tid=1),
        OpRecord("x\x1by", 110, 150, tid=1),
        OpRecord("aten::mm", 160, 190, tid=1),
    ]
    apis = [
        ApiRecord("cudaLaunchKernel", 10, 20, 1, tid=1),
        ApiRecord("cudaLaunchKernel", 30, 40, 2, tid=1),
        ApiRecord("cudaMemcpyAsync", 120, 130, 3, tid=1),
    ]
    kernels = [
        KernelRecord("a\nb", 200, 230, correlation=1),
        KernelRecord("gemm", 240, 250, correlation=2, grid=(2, 1, 1)),
        KernelRecord("lost", 280, 285, correlation=9),
    ]
    memops = [MemoryRecord("memcpy", 260, 270, bytes=64, correlation=3, copy_kind="HtoD")]
    return Profile(ops=ops, apis=apis, kernels=kernels, memops=memops)


def test_rows_with_quotes_control_characters_memcpy_and_unattributed_work():
    p = _hand_built()
    columns = ("idx", "sub", "op", "kernel", "sil", "grid", "host")
    assert _fast(p, columns) == (
        '"Idx","Sub","Op","Kernel","Sil(ns)","Grid","Host(ns)"\n'
        '"1","0","say ""hi""","a\\nb","30","0,0,0","100"\n'  # quote doubled, newline escaped; first row: host
        '"2","1","say ""hi""","gemm","10","2,1,1","-"\n'  # second kernel of the op: sub 1, no host
        '"3","0","x\\x1by","[memcpy HtoD]","10","-","40"\n'
        '"4","-","aten::mm","-","-","-","30"\n'  # an op that launched nothing: one row, no device cells
        '"5","-","(unattributed)","lost","5","0,0,0","-"\n'
    )
    assert _fast(p, columns) == _reference(p, columns)
    assert _fast(p, COLUMN_NAMES) == _reference(p, COLUMN_NAMES)


def test_export_csv_writes_the_fast_lines_and_sorted_reports_the_reference(tmp_path):
    p = _hand_built()
    out = tmp_path / "r.csv"
    assert p.export_csv(out, columns=COLUMN_NAMES) == 5
    assert out.read_text() == _reference(p, COLUMN_NAMES)
    # A sorted report, and one naming a column twice, take the reference path.
    assert p.export_csv(out, sort="sil", columns="op,sil") == 5
    assert out.read_text().splitlines()[1:3] == ['"say ""hi""","30"', '"say ""hi""","10"']  # ties keep launch order
    assert p.export_csv(out, columns="op,op,sil") == 5
    assert out.read_text().splitlines()[1] == '"say ""hi""","say ""hi""","30"'


_SUBSET = ("idx", "op", "kernel", "sil", "params", "flops", "sol%", "sub")


@pytest.mark.parametrize("columns", [None, COLUMN_NAMES, _SUBSET], ids=["default", "all", "subset"])
def test_every_real_export_and_trace_gives_the_reference_bytes(shared_data, columns):
    recordings = [load_nsys(f) for f in sorted((shared_data / "nsys").iterdir())]
    # Kineto traces too (export_csv serves every profile): the small ones, compiled programs (the
    # fused column) and a CUDA-graph replay (rows labelled "replay of graph N").
    traces = sorted((shared_data / "kineto").iterdir())[:4] + [
        shared_data / "kineto_compiled" / "hta_triton_example_a100.json.gz",
        shared_data / "kineto_compiled" / "tracelens_torch_compile_triton_mi300x.json.gz",
        shared_data / "kineto_graphs" / "tracelens_vllm_piecewise_replay_mi300x.json.gz",
    ]
    recordings += [load_kineto(f) for f in traces]
    assert len(recordings) >= 10
    for p in recordings:
        wanted = p._kernel_columns(columns)
        fast = _fast(p, wanted)
        assert fast == _reference(p, wanted)
        assert fast == p.table(fmt="csv", columns=wanted)


class _Spy:
    """An op that notes which of its fields are read."""

    def __init__(self, op, seen: set):
        self.__dict__.update(_op=op, _seen=seen)

    def __getattr__(self, name):
        self._seen.add(name)
        return getattr(self._op, name)


def test_an_ops_cells_read_only_the_fields_its_memo_key_holds(shared_data):
    # kernel_csv reuses an op's cell texts for every op with the same OP_CELL_FIELDS and the same
    # enclosing ops: _op_cells must read nothing else (its times, fwd link, overhead) of any op.
    from pyprof_live.report import kernel_csv, views

    p = load_nsys(shared_data / "nsys" / "nsys2022.1_pytorch_emitnvtx_dlprof_rtx2070s.sqlite")
    p.link()
    seen: set = set()
    spies = [_Spy(op, seen) for op in p.records.ops]
    for i in range(len(spies)):
        views._op_cells(spies, i, COLUMN_NAMES)
    assert seen and seen <= set(kernel_csv.OP_CELL_FIELDS) | {"parent"}


def test_ops_alike_share_their_texts_ops_under_other_parents_do_not():
    # Two steps of the same program: "step" [0, 100] and [200, 300], each holding "aten::add" (the
    # same fields, other times); a third "aten::add" [400, 450] under "other" [390, 460].
    ops = [
        OpRecord("step", 0, 100, tid=1),
        OpRecord("aten::add", 10, 20, tid=1),
        OpRecord("step", 200, 300, tid=1),
        OpRecord("aten::add", 210, 220, tid=1),
        OpRecord("other", 390, 460, tid=1),
        OpRecord("aten::add", 400, 450, tid=1),
    ]
    p = Profile(ops=ops)
    p.link()
    keys = _op_keys(p.records.ops)
    assert keys[1] == keys[3] != keys[5]
    assert keys[0] == keys[2] != keys[4]
    assert _fast(p, ("idx", "op", "ops", "host")) == (
        '"Idx","Op","Ops","Host(ns)"\n'
        '"1","aten::add","step > aten::add","10"\n'
        '"2","aten::add","step > aten::add","10"\n'
        '"3","aten::add","other > aten::add","50"\n'
    )


def test_ops_listed_before_their_parent_are_keyed_after_it():
    # A source whose ops are not in start order: each "aten::add" listed before the "step" holding it.
    ops = [
        OpRecord("aten::add", 10, 20, tid=1),
        OpRecord("step", 0, 100, tid=1),
        OpRecord("aten::add", 210, 220, tid=1),
        OpRecord("step", 200, 300, tid=1),
    ]
    p = Profile(ops=ops)
    p.link()
    assert [op.parent for op in p.records.ops] == [1, NO_LINK, 3, NO_LINK]
    keys = _op_keys(p.records.ops)
    assert None not in keys and keys[0] == keys[2] != keys[1] == keys[3]


def test_launch_order_breaks_tied_keys_by_sub_then_op_order():
    """Rows sorted by (launch key, sub), ties in op order: rows of two ops launched at the same ns (two
    threads) must not come out in list order, which the sort by the key alone first gives."""
    from pyprof_live.report.views import _sort_by_launch

    # (key, sub, op, item, cost): op 1's 2nd kernel and op 2's 1st share key 5; op 3's row is earliest.
    order = [(5, 1, 1, "a", None), (5, 0, 2, "b", None), (3, 0, 3, "c", None), (5, 0, 4, "d", None)]
    _sort_by_launch(order)
    # key 3 first; among key 5: sub 0 rows (ops 2 then 4, list order), then the sub 1 row.
    assert [row[3] for row in order] == ["c", "b", "d", "a"]
    distinct = [(7, 0, 1, "x", None), (2, 3, 2, "y", None)]
    _sort_by_launch(distinct)
    assert [row[3] for row in distinct] == ["y", "x"]
