"""Nsight Systems SQLite import: a small export built here (fresh clones), every real export in
../shared/data/nsys (counts checked by hand with sqlite3, queries in the comments), and bad files."""

import hashlib
import sqlite3

import pytest

from pyprof_live.correlate import correlate
from pyprof_live.errors import ProfileFormatError
from pyprof_live.importers import nvtx_markers
from pyprof_live.importers.nsys import load_nsys
from pyprof_live.importers.nvtx_markers import RangesOutOfOrder, records_from_ranges
from pyprof_live.records import NO_LINK, TensorMeta

# --- a small export, in the layout of nsys 2024-2025 -----------------------------------------------


def gtid(pid, tid):
    """nsys globalTid: a VM id in bits 48+, the pid in bits 24..47, the tid in bits 0..23."""
    return (1 << 48) | (pid << 24) | tid


A1, A2, B1 = gtid(100, 100), gtid(100, 101), gtid(200, 200)  # process A main + autograd threads, process B
STRINGS = {
    1: "cudaLaunchKernel_v7000",
    2: "cuLaunchKernel",
    3: "cudaMemcpyAsync_v3020",
    4: "cudaMemsetAsync_v3020",
    5: "cudaGetDevice_v3020",
    6: "cudaLaunchKernel",
    10: "void gemm_kernel<float>(float*)",
    11: "relu_kernel",
    12: "mm_backward_kernel",
    13: "orphan_kernel",
    14: "data loading",
}
TRACE = (
    "{'traceMarker': ['/home/u/train.py:52', '/usr/lib/python3/site-packages/torch/nn/modules/module.py:1102', "
    "'/home/u/model.py:17']}"
)
LINEAR = (
    "{'mod': 'torch.nn.functional', 'op': 'linear', 'args': [{'name': '', 'type': 'tensor', "
    "'shape': (32, 512), 'dtype': 'float16'}, {'name': '', 'type': 'tensor', 'shape': (512, 512), "
    "'dtype': 'float16'}, {'name': 'bias', 'type': 'NoneType', 'value': None}]}"
)
NVTX = [  # start, end, eventType, globalTid, text, textId, domainId
    (0, 1000, 59, A1, "layer:Encoder", None, 0),
    (10, 500, 59, A1, TRACE, None, 0),
    (20, 490, 59, A1, LINEAR, None, 0),
    (
        30,
        480,
        59,
        A1,
        "aten::linear, seq = 12, op_id = 40, sizes = [[32, 512], [512, 512], []], input_op_ids = [(38,0), (39,0)]",
        None,
        0,
    ),
    (40, 470, 59, A1, "aten::mm, seq = 12, op_id = 41, sizes = [[32, 512], [512, 512]]", None, 0),
    (600, 900, 59, A1, "layer:FFN", None, 0),
    (610, 890, 59, A1, "aten::relu, seq = 13, op_id = 43, sizes = [[32, 512]]", None, 0),
    (1100, 1200, 59, A1, "aten::empty, op_id = 44, sizes = [[], [], []]", None, 0),
    (None, None, 75, A1, "MyDomain", None, 1),  # domain creation
    (1300, 1400, 60, A1, "warmup", None, 1),
    (1500, None, 34, A1, "checkpoint", None, 0),
    (1600, 1700, 59, A1, None, 14, 0),  # registered string
    (1750, 1760, 59, A1, b"\xc9tape 1", None, 0),  # Latin-1, not UTF-8
    (1800, None, 59, A1, "step 0", None, 0),  # never popped
    (2000, 2500, 59, A2, "MmBackward0, seq = 12, op_id = 60", None, 0),
    (2010, 2490, 59, A2, "aten::mm, seq = 57, op_id = 61, sizes = [[32, 512], [512, 512]]", None, 0),
    (2600, 2700, 59, A2, "torch::autograd::AccumulateGrad", None, 0),
    (2610, 2690, 59, A2, "aten::add_, op_id = 63, sizes = [[512, 512], [512, 512], []]", None, 0),
    (0, 300, 59, B1, "aten::relu, seq = 0, op_id = 1, sizes = [[8]]", None, 0),
]
RUNTIME = [  # start, end, eventClass, globalTid, correlationId, nameId
    (45, 60, 0, A1, 1, 1),
    (45, 60, 67, A1, 1, 6),  # old exports repeat calls as CUDA backtrace rows (class 67)
    (615, 630, 1, A1, 2, 2),  # driver launch
    (1110, 1120, 0, A1, 3, 3),
    (2020, 2030, 0, A2, 4, 1),
    (2620, 2630, 0, A2, 5, 4),
    (5, 6, 0, A1, 6, 5),  # launches nothing: not imported
    (100, 110, 0, B1, 1, 1),  # process B reuses correlation id 1
]
KERNELS = [  # start, end, deviceId, streamId, correlationId, globalPid, demangledName, grid, block
    (70, 90, 0, 7, 1, gtid(100, 0), 10, (4, 1, 1), (128, 1, 1)),
    (640, 650, 0, 7, 2, gtid(100, 0), 11, (8, 1, 1), (256, 1, 1)),
    (2040, 2060, 0, 7, 4, gtid(100, 0), 12, (4, 1, 1), (128, 1, 1)),
    (2900, 2950, 0, 7, 7, gtid(100, 0), 13, (1, 1, 1), (32, 1, 1)),  # no API row launched it
    (120, 130, 1, 9, 1, gtid(200, 0), 11, (8, 1, 1), (256, 1, 1)),
]


def build_export(path, legacy=False, nvtx_rows=NVTX, reverse=False):
    """An export with the tables and traps of real ones; ``legacy``: the pre-2021 layout;
    ``reverse``: kernel and runtime rows stored last first."""
    order = reversed if reverse else list
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)")
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", STRINGS.items())
    text_cols = "text TEXT, globalTid INT, domainId INT" + ("" if legacy else ", textId INT, jsonText TEXT")
    db.execute(f"CREATE TABLE NVTX_EVENTS (start INT, end INT, eventType INT, rangeId INT, {text_cols})")
    for start, end, kind, tid, text, text_id, domain in nvtx_rows:
        if legacy and text is None:
            continue
        values = (start, end, kind, None, text, tid, domain) + (() if legacy else (text_id, None))
        # CAST stores bytes as TEXT as they are, as an exporter writing Latin-1 does.
        db.execute(f"INSERT INTO NVTX_EVENTS VALUES (?, ?, ?, ?, CAST(? AS TEXT){', ?' * (len(values) - 5)})", values)
    db.execute(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INT, end INT, eventClass INT, globalTid INT, "
        "correlationId INT, nameId INT, returnValue INT, callchainId INT)"
    )
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, ?, ?, ?, ?, 0, NULL)", order(RUNTIME))
    db.execute(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, deviceId INT, contextId INT, "
        "streamId INT, correlationId INT, globalPid INT, demangledName INT, shortName INT, gridX INT, "
        "gridY INT, gridZ INT, blockX INT, blockY INT, blockZ INT, registersPerThread INT, "
        "staticSharedMemory INT, dynamicSharedMemory INT, graphNodeId INT, dlprofExtra TEXT)"
    )
    for start, end, device, stream, corr, gpid, name, grid, block in order(KERNELS):
        db.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
            "32, 0, 1024, NULL, 'x')",
            (start, end, device, stream, corr, gpid, name, name, *grid, *block),
        )
    db.execute(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INT, end INT, deviceId INT, streamId INT, "
        "correlationId INT, globalPid INT, bytes INT, copyKind INT)"
    )
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (1130, 1140, 0, 7, 3, ?, 4096, 1)", (gtid(100, 0),))
    db.execute(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INT, end INT, deviceId INT, streamId INT, "
        "correlationId INT, globalPid INT, bytes INT, value INT)"
    )
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (2640, 2645, 0, 7, 5, ?, 2048, 0)", (gtid(100, 0),))
    if legacy:
        db.execute("CREATE TABLE TARGET_INFO_GPU (vmId INT, deviceId INT, name TEXT, busLocation TEXT, isDiscrete INT)")
        db.executemany("INSERT INTO TARGET_INFO_GPU VALUES (1, ?, 'A100-PCIE-40GB', '', 1)", [(0,), (1,)])
        db.execute(
            "CREATE TABLE TARGET_INFO_CUDA_GPU (deviceId INT, computeCapabilityMajor INT, "
            "computeCapabilityMinor INT, numMultiprocessors INT, globalMemorySize INT, pid INT)"
        )
        db.executemany("INSERT INTO TARGET_INFO_CUDA_GPU VALUES (?, 8, 0, 108, 42505273344, 1)", [(0,), (1,)])
    else:
        db.execute(
            "CREATE TABLE TARGET_INFO_GPU (id INT, name TEXT, busLocation TEXT, totalMemory INT, smCount INT, "
            "computeMajor INT, computeMinor INT, cuDevice INT, uuid TEXT, chipName TEXT)"
        )
        db.executemany(
            "INSERT INTO TARGET_INFO_GPU VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'u', 'GH100')",
            [
                (0, "NVIDIA H100", "0000:01:00.0", 85e9, 132, 9, 0, 0),
                (1, "NVIDIA H100", "0000:02:00.0", 85e9, 132, 9, 0, 1),
                (2, "Microsoft Basic Render Driver", "", 0, 0, 0, 0, 0),
            ],
        )
        db.execute("CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INT, cudaId INT, pid INT)")
        db.executemany("INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (?, 0, ?)", [(0, 100), (1, 200)])
        db.execute("CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT)")
        db.execute("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2025.1.1.110')")
        # A Latin-1 user name, as Windows exports hold: not UTF-8.
        db.execute("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_USER', CAST(X'416C657820476569DF' AS TEXT))")
    db.commit()
    db.close()
    return path


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    return build_export(tmp_path_factory.mktemp("nsys") / "small.sqlite")


@pytest.fixture(scope="module")
def profile(export):
    p = load_nsys(export)
    p.summary = correlate(p)
    return p


def test_counts_and_meta(profile, export):
    r = profile.records
    # 5 kernels (one without launch); 6 API calls: class-67 row and cudaGetDevice (no GPU work) left out;
    # ops: A main 5 (linear call, aten::linear, aten::mm, aten::relu, aten::empty), A autograd 4, B 1;
    # ranges: 2 layers, warmup, checkpoint, data loading, Étape 1, step 0 (the trace marker folds into ops).
    assert (len(r.kernels), len(r.apis), len(r.memops), len(r.ops), len(r.ranges)) == (5, 6, 2, 10, 7)
    assert profile.meta["source"] == "nsys" and profile.meta["path"] == str(export)
    assert profile.meta["export"] == {"EXPORT_PRODUCT_VERSION": "2025.1.1.110", "EXPORT_USER": "Alex Gei\ufffd"}


def test_api_calls_are_decoded_per_process(profile):
    apis = profile.records.apis
    assert [(a.name, a.kind, a.pid, a.tid, a.correlation) for a in apis] == [
        ("cudaLaunchKernel", "runtime", 100, 100, 1),
        ("cudaLaunchKernel", "runtime", 200, 200, 1),
        ("cuLaunchKernel", "driver", 100, 100, 2),
        ("cudaMemcpyAsync", "runtime", 100, 100, 3),
        ("cudaLaunchKernel", "runtime", 100, 101, 4),
        ("cudaMemsetAsync", "runtime", 100, 101, 5),
    ]


def test_kernels_and_memory_operations(profile):
    k = profile.records.kernels
    assert [(x.name, x.start, x.pid, x.device, x.stream, x.correlation) for x in k] == [
        ("void gemm_kernel<float>(float*)", 70, 100, 0, 7, 1),
        ("relu_kernel", 120, 200, 1, 9, 1),
        ("relu_kernel", 640, 100, 0, 7, 2),
        ("mm_backward_kernel", 2040, 100, 0, 7, 4),
        ("orphan_kernel", 2900, 100, 0, 7, 7),
    ]
    assert (k[0].grid, k[0].block, k[0].registers, k[0].shared_dynamic, k[0].graph_node_id) == (
        (4, 1, 1),
        (128, 1, 1),
        32,
        1024,
        0,
    )
    assert [(m.kind, m.copy_kind, m.bytes, m.pid) for m in profile.records.memops] == [
        ("memcpy", "HtoD", 4096, 100),
        ("memset", "", 2048, 100),
    ]


def test_ranges(profile):
    # "step 0" was never popped: it lasts to the last NVTX event (2700).
    assert [(r.name, r.start, r.end, r.kind, r.domain) for r in profile.records.ranges] == [
        ("Encoder", 0, 1000, "layer", ""),
        ("FFN", 600, 900, "layer", ""),
        ("warmup", 1300, 1400, "nvtx", "MyDomain"),
        ("checkpoint", 1500, 1500, "marker", ""),
        ("data loading", 1600, 1700, "nvtx", ""),
        ("\ufffdtape 1", 1750, 1760, "nvtx", ""),
        ("step 0", 1800, 2700, "nvtx", ""),
    ]


@pytest.mark.parametrize("domain", ["2", "2.5", "'d2'"])
def test_domain_names_of_every_form(export, tmp_path, domain):
    # Domains are read with the capture's last time in one scan, as text: a name holding the separators of
    # that text, a NULL name, a Latin-1 name; a domainId stored as a real or as text is read apart.
    path = _altered(
        export,
        tmp_path,
        f"INSERT INTO NVTX_EVENTS (start, end, eventType, text, domainId) VALUES (NULL, NULL, 75, 'a,b c', {domain})",
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, domainId) VALUES (NULL, NULL, 75, NULL, 3)",
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, domainId) VALUES (NULL, NULL, 75, CAST(X'C9' AS TEXT), 4)",
        f"INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, text, domainId) VALUES (2800, 2900, 60, {A1}, 'r2', {domain})",
        f"INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, text, domainId) VALUES (2800, 2900, 60, {A1}, 'r3', 3)",
        f"INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, text, domainId) VALUES (2800, 2900, 60, {A1}, 'r4', 4)",
    )
    ranges = {r.name: r for r in load_nsys(path).records.ranges}
    assert [ranges[name].domain for name in ("warmup", "r2", "r3", "r4")] == ["MyDomain", "a,b c", "", "\ufffd"]
    # "step 0", never popped, lasts to the last time of any NVTX row: now the new ranges' end.
    assert ranges["step 0"].end == 2900


def test_devices(profile):
    # The display adapter (compute capability 0.0) is left out.
    assert [
        (d.id, d.name, d.compute_capability, d.sm_count, d.extra["used"], d.extra["cuda_id_by_pid"])
        for d in profile.records.devices
    ] == [(0, "NVIDIA H100", (9, 0), 132, True, {100: 0}), (1, "NVIDIA H100", (9, 0), 132, True, {200: 0})]


def _op_of(profile, kernel):
    return profile.records.ops[kernel.op] if kernel.op != NO_LINK else None


def test_correlation_attributes_kernels_to_ops(profile):
    r = profile.records
    assert (profile.summary.kernels_with_launch, profile.summary.kernels_with_op) == (4, 4)  # orphan_kernel: neither
    fwd_mm, relu_b, relu_a, bwd_mm, orphan = (_op_of(profile, k) for k in r.kernels)
    assert (fwd_mm.name, fwd_mm.dir, fwd_mm.seq, fwd_mm.external_id) == ("aten::mm", "fwd", 12, 41)
    assert fwd_mm.layer == ("Encoder",) and fwd_mm.callsite == ("model.py:17", "train.py:52")
    assert fwd_mm.inputs == (TensorMeta((32, 512)), TensorMeta((512, 512)))
    linear_call = r.ops[r.ops[fwd_mm.parent].parent]
    assert (linear_call.name, linear_call.kind, linear_call.mod) == ("linear", "function", "torch.nn.functional")
    assert linear_call.inputs == (TensorMeta((32, 512), "float16"), TensorMeta((512, 512), "float16"))
    assert linear_call.kwargs == (("bias", None),)
    assert (relu_a.name, relu_a.seq, relu_a.layer, relu_a.pid) == ("aten::relu", 13, ("Encoder", "FFN"), 100)
    assert (relu_b.name, relu_b.seq, relu_b.pid, relu_b.layer) == ("aten::relu", 0, 200, ())
    # Backward: the op inside MmBackward0 gets its altseq, and through it the forward aten::mm.
    assert (bwd_mm.name, bwd_mm.dir, bwd_mm.altseq, bwd_mm.node) == ("aten::mm", "bwd", 12, "MmBackward0")
    assert r.ops[bwd_mm.fwd] is fwd_mm
    assert orphan is None
    memcpy, memset = r.memops
    assert (_op_of(profile, memcpy).name, _op_of(profile, memset).name) == ("aten::empty", "aten::add_")
    assert _op_of(profile, memset).node == "torch::autograd::AccumulateGrad"


def test_legacy_layout(tmp_path):
    p = load_nsys(build_export(tmp_path / "legacy.sqlite", legacy=True))
    r = p.records
    assert p.meta["export"] == {}
    # Compute capability, SMs and memory come from TARGET_INFO_CUDA_GPU in this layout.
    assert [(d.id, d.compute_capability, d.sm_count, d.memory_bytes) for d in r.devices] == [
        (0, (8, 0), 108, 42505273344),
        (1, (8, 0), 108, 42505273344),
    ]
    assert (len(r.kernels), len(r.apis), len(r.ops)) == (5, 6, 10)
    assert "data loading" not in [x.name for x in r.ranges]  # no textId column in this layout


def test_nvtx_rows_stored_in_any_order(export, tmp_path, monkeypatch):
    # The fixture stores process B's range (start 0) last, so reading it needs a sort; exports stored in
    # start order are read as stored. Both give the same records.
    refused = []

    def spy(rows, threads, domains):
        try:
            return records_from_ranges(rows, threads, domains)
        except RangesOutOfOrder:
            refused.append(1)
            raise

    monkeypatch.setattr(nvtx_markers, "records_from_ranges", spy)
    a = load_nsys(export).records
    assert refused == [1]
    stored_sorted = sorted(NVTX, key=lambda row: (row[0] is not None, row[0] or 0, -(row[1] or 1 << 62)))
    b = load_nsys(build_export(tmp_path / "sorted.sqlite", nvtx_rows=stored_sorted)).records
    assert refused == [1]
    assert (a.ops, a.ranges) == (b.ops, b.ranges)


def test_records_do_not_depend_on_the_storage_order_of_rows(export, tmp_path):
    # Kernels and API calls stored last first come out in start order all the same.
    reversed_rows = load_nsys(build_export(tmp_path / "reversed.sqlite", reverse=True)).records
    assert [k.start for k in reversed_rows.kernels] == [70, 120, 640, 2040, 2900]
    assert [a.start for a in reversed_rows.apis] == [45, 100, 615, 1110, 2020, 2620]
    stored = load_nsys(export).records
    assert (reversed_rows.kernels, reversed_rows.apis) == (stored.kernels, stored.apis)


def test_progress_is_reported(export):
    seen = []
    load_nsys(export, progress=lambda fraction, stage: seen.append((fraction, stage)))
    assert seen[0][0] == 0.0 and seen[-1] == (1.0, "done")
    assert [f for f, _ in seen] == sorted(f for f, _ in seen)


# --- bad files -------------------------------------------------------------------------------------


def _error(path) -> str:
    with pytest.raises(ProfileFormatError) as info:
        load_nsys(path)
    message = str(info.value)
    assert message.startswith(str(path)) and "\n" not in message
    return message


def test_missing_empty_and_non_sqlite_files(tmp_path):
    assert _error(tmp_path / "nope.sqlite").endswith("no such file")
    (tmp_path / "empty.sqlite").write_bytes(b"")
    assert _error(tmp_path / "empty.sqlite").endswith("empty file")
    (tmp_path / "text.sqlite").write_text("Name,Duration\naten::mm,5\n")
    assert _error(tmp_path / "text.sqlite").endswith("not an SQLite database")
    (tmp_path / "stub.sqlite").write_bytes(b"SQLite format 3\x00\x10\x00")
    assert _error(tmp_path / "stub.sqlite").endswith("truncated SQLite database (header incomplete)")


def test_truncated_and_corrupt_exports(export, tmp_path):
    data = export.read_bytes()
    truncated = tmp_path / "truncated.sqlite"
    truncated.write_bytes(data[: len(data) // 2])
    assert "truncated SQLite database" in _error(truncated)
    corrupt = tmp_path / "corrupt.sqlite"
    page = int.from_bytes(data[16:18], "big")
    corrupt.write_bytes(data[:100] + b"\xff" * (2 * page - 100) + data[2 * page :])  # schema and page 2 overwritten
    assert "SQLite database" in _error(corrupt)


def test_sqlite_files_that_are_not_exports(tmp_path):
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE users (name TEXT)")
    assert _error(other).endswith("not an Nsight Systems or nvprof export (no CUPTI activity or NVTX tables)")
    empty = tmp_path / "empty_export.sqlite"
    with sqlite3.connect(empty) as db:
        db.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, correlationId INT, demangledName INT)")
        db.execute("CREATE TABLE NVTX_EVENTS (start INT, end INT, eventType INT, globalTid INT, text TEXT)")
    assert _error(empty).endswith("the export holds no kernels, memory operations, API calls or NVTX ranges")


def _altered(export, tmp_path, *statements):
    """A copy of the small export with ``statements`` applied."""
    path = tmp_path / "altered.sqlite"
    path.write_bytes(export.read_bytes())
    with sqlite3.connect(path) as db:
        for statement in statements:
            db.execute(statement)
    return path


def test_null_launch_dimensions_read_as_not_recorded(export, tmp_path):
    # A NULL grid or block size reads 0, as a column the layout lacks does.
    path = _altered(
        export,
        tmp_path,
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = NULL, blockZ = NULL, "
        "registersPerThread = NULL WHERE correlationId = 2",
    )
    relu = load_nsys(path).records.kernels[2]
    assert (relu.name, relu.grid, relu.block, relu.registers) == ("relu_kernel", (0, 1, 1), (256, 1, 0), 0)


@pytest.mark.parametrize("global_tid", ["NULL", "'junk'", f"{gtid(100, 100)}.5"])
def test_calls_of_a_one_process_export_are_those_that_launched_its_work(export, tmp_path, global_tid):
    # Process B's kernel removed: all GPU work is process A's (read by correlation id alone). B's call
    # with A's id 1 launched nothing of its own process, and a call whose globalTid is not an integer
    # (NULL, a text, a real) has no process: neither is read, as when several processes launch work
    # (the (id, pid) pair test), so the export imports as it did before the selection by id alone.
    path = _altered(
        export,
        tmp_path,
        f"DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE globalPid = {gtid(200, 0)}",
        f"INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (50, 55, 0, {global_tid}, 2, 1, 0, NULL)",
    )
    apis = load_nsys(path).records.apis
    assert [(a.pid, a.tid, a.correlation) for a in apis] == [
        (100, 100, 1),
        (100, 100, 2),
        (100, 100, 3),
        (100, 101, 4),
        (100, 101, 5),
    ]


@pytest.mark.parametrize(
    "statement, problem",
    [
        (
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = NULL WHERE correlationId = 2",
            "CUPTI_ACTIVITY_KIND_KERNEL rowid 2: start is NULL, expected an integer",
        ),
        (
            "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = NULL WHERE correlationId = 4",
            "CUPTI_ACTIVITY_KIND_RUNTIME rowid 5: end is NULL, expected an integer",
        ),
        (
            "UPDATE CUPTI_ACTIVITY_KIND_MEMSET SET start = NULL",
            "CUPTI_ACTIVITY_KIND_MEMSET rowid 1: start is NULL, expected an integer",
        ),
        # rowid 9, a domain's creation, has no start either: it is not a range, and not blamed
        (
            "UPDATE NVTX_EVENTS SET start = NULL WHERE text = 'warmup'",
            "NVTX_EVENTS rowid 10: start is NULL, expected an integer",
        ),
        (
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET globalPid = 'host-a' WHERE correlationId = 2",
            "CUPTI_ACTIVITY_KIND_KERNEL rowid 2: globalPid is text 'host-a', expected an integer",
        ),
        (
            "UPDATE NVTX_EVENTS SET globalTid = 'main' WHERE text = 'warmup'",
            "NVTX_EVENTS rowid 10: globalTid is text 'main', expected an integer",
        ),
        # Fields computed from such columns (pid, tid, a kernel's grid) are not checked again after
        # import: their reader fails on the column instead.
        (
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET blockY = 2.5 WHERE correlationId = 2",
            "CUPTI_ACTIVITY_KIND_KERNEL rowid 2: blockY is a real number 2.5, expected an integer",
        ),
        (
            f"UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = {A2}.5 WHERE correlationId = 4",
            f"CUPTI_ACTIVITY_KIND_RUNTIME rowid 5: globalTid is a real number {A2}.5, expected an integer",
        ),
        (
            f"UPDATE CUPTI_ACTIVITY_KIND_MEMSET SET globalPid = {gtid(100, 0)}.5",
            f"CUPTI_ACTIVITY_KIND_MEMSET rowid 1: globalPid is a real number {gtid(100, 0)}.5, expected an integer",
        ),
    ],
)
def test_ill_typed_values_are_a_format_error(export, tmp_path, statement, problem):
    path = _altered(export, tmp_path, statement)
    assert _error(path) == f"{path}: {problem}"


def test_numeric_nvtx_text_is_a_range_name(tmp_path):
    # A column without a declared type keeps a number as a number.
    path = tmp_path / "untyped.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE NVTX_EVENTS (start, end, eventType, globalTid, text)")
        db.execute("INSERT INTO NVTX_EVENTS VALUES (0, 10, 59, ?, 42)", (A1,))
    assert [(r.name, r.pid, r.tid) for r in load_nsys(path).records.ranges] == [("42", 100, 100)]


def test_unexpected_layout_is_a_format_error(tmp_path):
    odd = tmp_path / "odd.sqlite"
    with sqlite3.connect(odd) as db:
        db.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (begin INT)")
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1)")
    assert "cannot read the export" in _error(odd)


# --- real exports ----------------------------------------------------------------------------------

# Counts checked by hand with sqlite3 on each file:
#   kernels   SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL
#   apis      SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE eventClass IN (0, 1) AND EXISTS
#             (SELECT 1 FROM <kernel, memcpy, memset correlationIds> g WHERE g.correlationId = r.correlationId)
#   memops    count(*) of _MEMCPY + _MEMSET
#   ranges    NVTX_EVENTS rows of eventType 34, 59, 60 that are not PyTorch/PyProf markers
#   launched  kernels with a runtime row: NOT EXISTS (...) finds 2 without in the Windows export
REAL = {  # file: (kernels, apis, memops, ops, ranges, devices, kernels with launch, kernels with op)
    # ops: 19 ", seq = " texts + 8 bare aten:: names + 27 {'mod': ..., 'op': ...} = 54; 27 traceMarkers fold;
    # the one range left is DLProf's JSON {"model_config": ...}.
    "nsys2022.1_pytorch_emitnvtx_dlprof_rtx2070s.sqlite": (46, 62, 16, 54, 1, 1, 46, 46),
    # 21998 NVTX rows, 2 of them domain creations (eventType 75).
    "nsys2022.4_tensorrt_centerformer_nvtxonly.sqlite": (0, 0, 0, 0, 21996, 1, 0, 0),
    "nsys2024.5_cloverleaf_cuda_a100x4.sqlite": (1312, 1591, 279, 0, 0, 4, 1312, 0),
    # nvFuser's own ranges (FusionCache::get, fusion_executor::...) are not ops.
    "nsys2025.1_pytorch_nvfuser_h200.sqlite": (18, 24, 6, 0, 13513, 1, 18, 0),
    "nsys2025.5_vecadd_rtx3060_schema3.24.sqlite": (1, 4, 3, 0, 0, 1, 1, 0),
    # every call appears twice (eventClass 0 and 67): 6 launches, not 12.
    "nsys_legacy_nometa_exgpu_a100x4.sqlite": (6, 6, 0, 0, 0, 4, 6, 0),
    # 2 of 9 kernels have no runtime row; Intel HD 630 and Microsoft Basic Render Driver are left out.
    "nsys_windows_nonutf8meta_gtx1060.sqlite": (9, 18, 12, 0, 0, 1, 7, 0),
}


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_export_counts(shared_data, name):
    p = load_nsys(shared_data / "nsys" / name)
    summary = correlate(p)
    r = p.records
    assert (
        len(r.kernels),
        len(r.apis),
        len(r.memops),
        len(r.ops),
        len(r.ranges),
        len(r.devices),
        summary.kernels_with_launch,
        summary.kernels_with_op,
    ) == REAL[name]
    assert p.meta["source"] == "nsys"


def test_real_windows_export_decodes_latin1_metadata(shared_data):
    p = load_nsys(shared_data / "nsys" / "nsys_windows_nonutf8meta_gtx1060.sqlite")
    assert p.meta["export"]["EXPORT_PLATFORM"] == "windows-desktop"
    assert "\ufffd" in "".join(p.meta["export"].values())
    assert [d.name for d in p.records.devices] == ["GeForce GTX 1060 with Max-Q Design"]
    # SELECT count(*) FROM <KERNEL | MEMCPY | MEMSET> g WHERE NOT EXISTS (SELECT 1 FROM
    # CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = g.correlationId): 2 + 1 + 0
    assert p.meta["warnings"] == ["3 kernels/memops have no runtime or driver event with their correlation id"]


def test_real_multi_gpu_export_keeps_idle_gpus(shared_data):
    p = load_nsys(shared_data / "nsys" / "nsys2024.5_cloverleaf_cuda_a100x4.sqlite")
    # SELECT id, cuDevice FROM TARGET_INFO_GPU: 4 A100s; SELECT DISTINCT deviceId FROM ..._KERNEL: 0 only.
    assert [(d.id, d.extra["used"], d.extra["cuda_device"]) for d in p.records.devices] == [
        (0, True, 3),
        (1, False, 2),
        (2, False, 1),
        (3, False, 0),
    ]
    assert p.meta["export"]["EXPORT_SCHEMA_VERSION"] == "3.13.2"


def test_real_kernel_launch_configuration(shared_data):
    p = load_nsys(shared_data / "nsys" / "nsys2024.5_cloverleaf_cuda_a100x4.sqlite")
    # SELECT gridX, gridY, gridZ, blockX, blockY, blockZ, registersPerThread, correlationId ... ORDER BY start LIMIT 1
    first = p.records.kernels[0]
    assert (first.grid, first.block, first.registers, first.correlation) == ((115426, 1, 1), (256, 1, 1), 32, 452)
    # GROUP BY the six dims: (16,1,1)x(256,1,1) 484 times, (31,1,1)x(256,1,1) 484 times.
    assert sum(k.grid == (16, 1, 1) and k.block == (256, 1, 1) for k in p.records.kernels) == 484


def test_real_driver_launches(shared_data):
    p = load_nsys(shared_data / "nsys" / "nsys2025.1_pytorch_nvfuser_h200.sqlite")
    correlate(p)
    r = p.records
    # Kernels whose runtime row has eventClass 1: 6 cuLaunchKernel + 3 cuLaunchKernelEx (nvFuser, nvjet).
    launches = [r.apis[k.launch] for k in r.kernels]
    assert sum(a.kind == "driver" for a in launches) == 9
    assert {a.name for a in launches if a.kind == "driver"} == {"cuLaunchKernel", "cuLaunchKernelEx"}


def test_real_emit_nvtx_kernels(shared_data):
    p = load_nsys(shared_data / "nsys" / "nsys2022.1_pytorch_emitnvtx_dlprof_rtx2070s.sqlite")
    correlate(p)
    r = p.records

    def row(i):
        k = r.kernels[i]
        op = r.ops[k.op]
        chain, j = [], k.op
        while j != NO_LINK:
            chain.append(r.ops[j].name)
            j = r.ops[j].parent
        return k.name[:32], op.name, op.dir, op.seq, " > ".join(reversed(chain)), op.callsite

    conv = "conv2d > aten::conv2d > aten::convolution > aten::_convolution"
    # Kernels in start order; checked against NVTX_EVENTS: correlationId 534's cudaLaunchKernel starts at
    # 2792634095, inside "aten::cudnn_convolution, seq = 0" [2791200266, 2793578104]; the add_ kernel
    # (correlationId 663, launch at 2793645312) inside "aten::add_, seq = 2" [2793617606, 2793654981].
    assert row(0) == (
        "void cudnn::detail::implicit_con",
        "aten::cudnn_convolution",
        "fwd",
        0,
        conv + " > aten::cudnn_convolution",
        ("dummy_network.py:25", "dummy_network.py:41"),
    )
    assert row(23) == (
        "void at::native::unrolled_elemen",
        "aten::add_",
        "fwd",
        2,
        conv + " > aten::add_",
        ("dummy_network.py:25", "dummy_network.py:41"),
    )
    assert row(24)[1:4] == ("aten::cudnn_convolution", "fwd", 3)  # second conv: "aten::conv2d, seq = 3"
    assert row(45)[1:4] == ("aten::add_", "fwd", 5)
    conv_call = r.ops[r.ops[r.ops[r.kernels[0].op].parent].parent]
    while conv_call.parent != NO_LINK:
        conv_call = r.ops[conv_call.parent]
    assert (conv_call.name, conv_call.mod, conv_call.inputs[:2]) == (
        "conv2d",
        "torch.nn.functional",
        (TensorMeta((1, 3, 32, 32), "float32"), TensorMeta((6, 3, 3, 3), "float32")),
    )


def test_reading_never_writes(export):
    """The export is opened read-only: its bytes and mtime are unchanged and no journal appears beside it
    (a chmod 0o444 test cannot fail when the tests run as root)."""

    def state():
        return (
            export.stat().st_mtime_ns,
            hashlib.sha256(export.read_bytes()).hexdigest(),
            sorted(p.name for p in export.parent.iterdir()),
        )

    before = state()
    load_nsys(export)
    assert state() == before
