"""p.export_csv(): the per-kernel table written as CSV row by row, atomically, byte for byte what
table(fmt="csv") shows; and the per-op device totals the table's roofline columns read."""

import io

import pytest

from pyprof_live.analysis.devicework import DeviceWork
from pyprof_live.importers.nsys import load_nsys
from pyprof_live.profile import Profile
from pyprof_live.records import ApiRecord, KernelRecord, OpRecord
from pyprof_live.render.text import write_csv
from pyprof_live.report import views
from pyprof_live.report.columns import COLUMN_NAMES

EMIT_NVTX = "nsys/nsys2022.1_pytorch_emitnvtx_dlprof_rtx2070s.sqlite"


def test_the_full_report_of_a_real_export_is_what_table_shows(shared_data, tmp_path):
    p = load_nsys(shared_data / EMIT_NVTX)
    out = tmp_path / "report.csv"
    rows = p.export_csv(out, columns=COLUMN_NAMES)
    # 46 kernels + 16 memcpy/memset (test_import_nsys.REAL) + 23 innermost ops that launched nothing.
    assert rows == 46 + 16 + 23
    text = out.read_text()
    assert text == p.table(fmt="csv", columns=COLUMN_NAMES)
    assert len(text.splitlines()) == 1 + rows
    assert text.startswith('"Idx","SeqId","AltSeqId","TId",')


def test_csv_quotes_and_escapes_as_the_csv_module_does():
    columns = ("op", "kernel", "sil", "sol%", "tc")
    rows = [
        {"op": "aten::mm", "kernel": "gemm", "sil": 1500, "sol%": 0.5, "tc": None},
        {"op": 'say "hi"', "kernel": "a\nb", "sil": 2},  # a quote doubled; the newline escaped
        {"op": "x\x1by", "kernel": "k", "sil": 3, "tc": 1},  # ESC escaped
        {"op": "aten::add", "kernel": "na", "sil": 4, "sol%": 12.5},
    ]
    out = io.StringIO()
    assert write_csv(out, rows, columns, ["Op", "Kernel", "Sil(ns)", "SOL%", "TC"]) == 4
    assert out.getvalue() == (
        '"Op","Kernel","Sil(ns)","SOL%","TC"\n'
        '"aten::mm","gemm","1500","0.5","-"\n'
        '"say ""hi""","a\\nb","2","-","-"\n'
        '"x\\x1by","k","3","-","1"\n'
        '"aten::add","na","4","12.5","-"\n'
    )


def test_a_report_that_fails_half_way_leaves_the_old_file(shared_data, tmp_path, monkeypatch):
    p = load_nsys(shared_data / EMIT_NVTX)
    out = tmp_path / "report.csv"
    out.write_text("the old report\n")
    made = []
    device_cells = views._device_cells

    def failing(item):
        made.append(item)
        if len(made) == 30:
            raise RuntimeError("disk full")
        return device_cells(item)

    monkeypatch.setattr(views, "_device_cells", failing)
    with pytest.raises(RuntimeError, match="disk full"):
        p.export_csv(out, columns=COLUMN_NAMES)
    assert out.read_text() == "the old report\n"
    assert [f.name for f in tmp_path.iterdir()] == ["report.csv"]  # no temporary file left


def test_an_ops_device_totals_include_its_callees_and_its_first_kernels_gpu():
    # parent [0, 100] holds child a [10, 40] and child b [50, 90] on one thread; a's launch (corr 1)
    # runs a kernel on GPU 1 at 300..340, b's (corr 2) one on GPU 0 at 200..210, and parent's own
    # (corr 3, after b) one on GPU 2 at 400..420 (kernels in start order).
    ops = [OpRecord("parent", 0, 100), OpRecord("a", 10, 40), OpRecord("b", 50, 90)]
    apis = [
        ApiRecord("cudaLaunchKernel", 20, 25, 1),
        ApiRecord("cudaLaunchKernel", 60, 65, 2),
        ApiRecord("cudaLaunchKernel", 95, 98, 3),
    ]
    kernels = [
        KernelRecord("volta_h884gemm_64x64_nn", 200, 210, device=0, correlation=2),
        KernelRecord("elementwise_kernel", 300, 340, device=1, correlation=1),
        KernelRecord("elementwise_kernel", 400, 420, device=2, correlation=3),
    ]
    p = Profile(ops=ops, apis=apis, kernels=kernels)
    p.link()
    work = DeviceWork(p)
    parent, a, b = work.get(0), work.get(1), work.get(2)
    assert (a.kernel_self, a.kernel_total, a.kernels_total, a.device) == (40, 40, 1, 1)
    assert (b.kernel_self, b.kernel_total, b.kernels_total, b.device) == (10, 10, 1, 0)
    # parent: 20 ns of its own, + 40 + 10 of its callees'; GPU 0, that of the first kernel (at 200), not
    # that of its own.
    assert (parent.kernel_self, parent.dev_total, parent.kernels_total, parent.device) == (20, 70, 3, 0)
    # h884 (HMMA) is a tensor-core GEMM, elementwise_kernel is not: b and, through it, parent used them.
    assert (a.tensor_cores, b.tensor_cores, parent.tensor_cores) == (False, True, True)
