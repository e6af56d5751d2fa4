"""nvprof SQLite import (read by load_nsys): a small export built here, and the real PyProf run."""

import sqlite3
import struct
import sys

import pytest

from pyprof_live import api_names
from pyprof_live.api_names import cupti_names_api_calls
from pyprof_live.correlate import correlate
from pyprof_live.errors import ProfileFormatError
from pyprof_live.importers.nsys import load_nsys
from pyprof_live.records import NO_LINK, TensorMeta

PID = 15938
MAIN_TID, BWD_TID = 0xEADC3740, 0x1AFFD700  # nvprof stores threadId as a signed 32-bit int
STRINGS = {
    0: "-- null --",
    1: "_Z11gemm_kernelPf",
    2: "_Z14embed_backwardv",
    3: "_Z4relui",
    4: "_Z6orphanv",
    5: "layer:Embed",
    6: "{'traceMarker': ['/home/u/lm.py:106', '/usr/lib/python3/site-packages/torch/nn/functional.py:1484']}",
    7: "{'mod': 'torch.nn.functional', 'op': 'embedding', 'args': [{'name': '', 'type': 'tensor', 'shape': (35, 20), "
    "'dtype': 'int64'}, {'name': '', 'type': 'tensor', 'shape': (33278, 200), 'dtype': 'float32'}]}",
    8: "embedding, seq = 65",
    9: "step",
    10: "add_, seq = 66",
    11: "EmbeddingBackward, seq = 65",
    12: "embedding_backward, seq = 0",
    13: "torch::autograd::AccumulateGrad",
    14: "Tesla V100-SXM2-16GB",
}


def object_id(tid):
    """MARKER.objectId of a thread: the pid (4 bytes) then the thread id (8 bytes), little-endian."""
    return struct.pack("<iq", PID, tid)


def signed32(value):
    return value - (1 << 32) if value >= 1 << 31 else value


MARKERS = [  # flags (2 start, 4 end, 1 instant), timestamp, id, thread, name
    (2, 100, 1, MAIN_TID, 5),
    (2, 110, 2, MAIN_TID, 6),
    (2, 120, 3, MAIN_TID, 7),
    (2, 130, 4, MAIN_TID, 8),
    (4, 780, 4, MAIN_TID, 0),
    (4, 790, 3, MAIN_TID, 0),
    (4, 800, 2, MAIN_TID, 0),
    (4, 900, 1, MAIN_TID, 0),
    (1, 950, 5, MAIN_TID, 9),
    (2, 960, 9, MAIN_TID, 10),  # never ended
    (2, 1000, 6, BWD_TID, 11),
    (2, 1010, 7, BWD_TID, 12),
    (4, 1490, 7, BWD_TID, 0),
    (4, 1500, 6, BWD_TID, 0),
    (2, 1600, 8, BWD_TID, 13),
    (4, 1700, 8, BWD_TID, 0),
]
RUNTIME = [
    (211, 140, 150, MAIN_TID, 10),
    (211, 1020, 1030, BWD_TID, 11),
    (41, 200, 210, MAIN_TID, 12),
    (16, 90, 95, MAIN_TID, 13),
]  # cbid 16 (cudaSetDevice) launches nothing: not imported
DRIVER = [(307, 1620, 1630, BWD_TID, 14)]  # cuLaunchKernel
KERNELS = [(1, 160, 170, 10), (2, 1040, 1050, 11), (3, 1640, 1650, 14), (4, 1800, 1810, 99)]  # name, start, end, corr


def build_export(path):
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE StringTable (_id_ INTEGER PRIMARY KEY, value TEXT)")
    db.executemany("INSERT INTO StringTable VALUES (?, ?)", STRINGS.items())
    db.execute("CREATE TABLE Version (version INT)")
    db.execute("INSERT INTO Version VALUES (12)")
    kernel_cols = (
        "_id_ INTEGER PRIMARY KEY, start INT, end INT, deviceId INT, contextId INT, streamId INT, "
        "gridX INT, gridY INT, gridZ INT, blockX INT, blockY INT, blockZ INT, registersPerThread INT, "
        "staticSharedMemory INT, dynamicSharedMemory INT, correlationId INT, name INT, launchType INT"
    )
    db.execute(f"CREATE TABLE CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ({kernel_cols})")
    db.execute(f"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL ({kernel_cols})")  # empty unless --analysis-metrics
    db.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL VALUES (NULL, ?, ?, 0, 1, 7, 640, 1, 1, "
        "128, 1, 1, 32, 0, 0, ?, ?, 0)",
        [(s, e, c, n) for n, s, e, c in KERNELS],
    )
    for table, rows in (("RUNTIME", RUNTIME), ("DRIVER", DRIVER)):
        db.execute(
            f"CREATE TABLE CUPTI_ACTIVITY_KIND_{table} (_id_ INTEGER PRIMARY KEY, cbid INT, start INT, "
            "end INT, processId INT, threadId INT, correlationId INT, returnValue INT)"
        )
        db.executemany(
            f"INSERT INTO CUPTI_ACTIVITY_KIND_{table} VALUES (NULL, ?, ?, ?, ?, ?, ?, 0)",
            [(cbid, s, e, PID, signed32(tid), c) for cbid, s, e, tid, c in rows],
        )
    db.execute(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (_id_ INTEGER PRIMARY KEY, copyKind INT, srcKind INT, "
        "dstKind INT, flags INT, bytes INT, start INT, end INT, deviceId INT, contextId INT, streamId INT, "
        "correlationId INT, runtimeCorrelationId INT)"
    )
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (NULL, 2, 3, 1, 0, 168, 220, 230, 0, 1, 7, 12, 0)")
    db.execute(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MARKER (_id_ INTEGER PRIMARY KEY, flags INT, timestamp INT, id INT, "
        "objectKind INT, objectId BLOB, name INT, domain INT)"
    )
    db.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_MARKER VALUES (NULL, ?, ?, ?, 2, ?, ?, 0)",
        [(f, t, i, object_id(tid), n) for f, t, i, tid, n in MARKERS],
    )
    db.execute(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_DEVICE (_id_ INTEGER PRIMARY KEY, globalMemorySize INT, "
        "numMultiprocessors INT, computeCapabilityMajor INT, computeCapabilityMinor INT, id INT, name INT)"
    )
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_DEVICE VALUES (NULL, 16914055168, 80, 7, 0, 0, 14)")
    db.commit()
    db.close()
    return path


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    p = load_nsys(build_export(tmp_path_factory.mktemp("nvprof") / "net.sql"))
    p.summary = correlate(p)
    return p


def test_counts_and_meta(profile):
    r = profile.records
    # ops: embedding call, aten::embedding, aten::add_ (never ended), EmbeddingBackward, aten::embedding_backward,
    # AccumulateGrad; ranges: layer Embed and the "step" mark; the trace marker folds into the ops.
    assert (len(r.kernels), len(r.apis), len(r.memops), len(r.ops), len(r.ranges)) == (4, 4, 1, 6, 2)
    assert profile.meta == {
        "source": "nvprof",
        "path": profile.meta["path"],
        "export": {"nvprof_version": 12},
        "warnings": ["1 kernels/memops have no runtime or driver event with their correlation id"],
    }
    assert [(d.id, d.name, d.compute_capability, d.sm_count, d.memory_bytes, d.extra) for d in r.devices] == [
        (0, "Tesla V100-SXM2-16GB", (7, 0), 80, 16914055168, {"used": True})
    ]


def test_threads_and_markers(profile):
    r = profile.records
    assert [(a.kind, a.pid, a.tid, a.correlation) for a in r.apis] == [
        ("runtime", PID, MAIN_TID, 10),
        ("runtime", PID, MAIN_TID, 12),
        ("runtime", PID, BWD_TID, 11),
        ("driver", PID, BWD_TID, 14),
    ]
    assert [(o.name, o.start, o.end, o.tid) for o in r.ops] == [
        ("embedding", 120, 790, MAIN_TID),
        ("aten::embedding", 130, 780, MAIN_TID),
        ("aten::add_", 960, 1700, MAIN_TID),  # open to the last marker
        ("EmbeddingBackward", 1000, 1500, BWD_TID),
        ("aten::embedding_backward", 1010, 1490, BWD_TID),
        ("torch::autograd::AccumulateGrad", 1600, 1700, BWD_TID),
    ]
    assert [(x.name, x.kind, x.start, x.end) for x in r.ranges] == [
        ("Embed", "layer", 100, 900),
        ("step", "marker", 950, 950),
    ]
    assert r.memops[0].copy_kind == "DtoH" and r.memops[0].pid == PID


def test_api_names_from_cupti_callback_ids(profile):
    if not cupti_names_api_calls():
        pytest.skip("no cupti-python with callback id enums (absent, or 13.2.0)")
    assert [a.name for a in profile.records.apis] == [
        "cudaLaunchKernel",
        "cudaMemcpyAsync",
        "cudaLaunchKernel",
        "cuLaunchKernel",
    ]


def test_api_names_without_cupti_python(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "cupti", None)  # import cupti -> ImportError
    apis = load_nsys(build_export(tmp_path / "net.sql")).records.apis
    assert [a.name for a in apis] == ["runtime cbid 211", "runtime cbid 41", "runtime cbid 211", "driver cbid 307"]


def test_api_names_with_a_cupti_python_lacking_the_callback_id_enums(tmp_path, monkeypatch):
    # cupti-python 13.2.0 (what pip installs beside torch 2.15) has no RuntimeApiTraceCbid/DriverApiTraceCbid.
    cupti = pytest.importorskip("cupti.cupti")
    for enum in api_names.CALLBACK_ID_ENUMS.values():
        monkeypatch.delattr(cupti, enum, raising=False)
    api_names.cupti_api_name.cache_clear()
    try:
        apis = load_nsys(build_export(tmp_path / "net.sql")).records.apis
        assert [a.name for a in apis] == ["runtime cbid 211", "runtime cbid 41", "runtime cbid 211", "driver cbid 307"]
        assert api_names.cupti_api_name("runtime", 211) == "runtime cbid 211"  # the live path's naming too
    finally:
        api_names.cupti_api_name.cache_clear()


def test_kernel_names_are_demangled(profile):
    assert [k.name for k in profile.records.kernels] == [
        "gemm_kernel(float*)",
        "embed_backward()",
        "relu(int)",
        "orphan()",
    ]


def test_correlation(profile):
    r = profile.records
    assert (profile.summary.kernels_with_launch, profile.summary.kernels_with_op) == (3, 3)
    fwd, bwd, accumulate, orphan = (r.ops[k.op] if k.op != NO_LINK else None for k in r.kernels)
    assert (fwd.name, fwd.dir, fwd.seq, fwd.layer, fwd.callsite) == (
        "aten::embedding",
        "fwd",
        65,
        ("Embed",),
        ("lm.py:106",),
    )
    call = r.ops[fwd.parent]
    assert (call.name, call.kind, call.mod, call.inputs) == (
        "embedding",
        "function",
        "torch.nn.functional",
        (TensorMeta((35, 20), "int64"), TensorMeta((33278, 200), "float32")),
    )
    assert (bwd.name, bwd.dir, bwd.altseq, bwd.node, r.ops[bwd.fwd].name) == (
        "aten::embedding_backward",
        "bwd",
        65,
        "EmbeddingBackward",
        "aten::embedding",
    )
    assert (accumulate.name, accumulate.kind, accumulate.dir) == ("torch::autograd::AccumulateGrad", "node", "bwd")
    assert orphan is None
    assert r.ops[r.memops[0].op].name == "aten::embedding"


def test_correlation_id_of_two_processes_links_its_kernel_to_neither(tmp_path):
    # Another process's cudaLaunchKernel reuses correlation 10: gemm_kernel may be either's launch, so
    # it gets pid 0 and stays unlinked (it went to whichever row came last).
    path = build_export(tmp_path / "net.sql")
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (NULL, 211, 141, 151, ?, 7, 10, 0)", (PID + 1,))
    p = load_nsys(path)
    summary = correlate(p)
    gemm = p.records.kernels[0]
    assert (gemm.correlation, gemm.pid, gemm.launch, gemm.op) == (10, 0, NO_LINK, NO_LINK)
    assert (summary.kernels_with_launch, summary.kernels_with_op) == (2, 2)  # 3 before, less gemm_kernel
    assert p.meta["warnings"][1] == (
        "1 kernels/memops have a correlation id that API calls of several processes "
        "carry (1 such ids): left unattributed"
    )


def test_export_without_activity_is_an_error(tmp_path):
    # As for Nsight Systems: an empty export is a bad input, not an empty profile.
    path = tmp_path / "empty.sql"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE StringTable (_id_ INTEGER PRIMARY KEY, value TEXT)")
        db.execute(
            "CREATE TABLE CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (_id_ INTEGER PRIMARY KEY, start INT, end INT, "
            "deviceId INT, contextId INT, streamId INT, gridX INT, gridY INT, gridZ INT, blockX INT, blockY INT, "
            "blockZ INT, registersPerThread INT, staticSharedMemory INT, dynamicSharedMemory INT, "
            "correlationId INT, name INT)"
        )
    with pytest.raises(ProfileFormatError) as caught:
        load_nsys(path)
    assert str(caught.value) == (f"{path}: the export holds no kernels, memory operations, API calls or NVTX ranges")


def test_null_kernel_time_is_a_format_error(tmp_path):
    path = build_export(tmp_path / "net.sql")
    with sqlite3.connect(path) as db:
        db.execute("UPDATE CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL SET end = NULL WHERE correlationId = 11")
    with pytest.raises(ProfileFormatError) as caught:
        load_nsys(path)
    assert (
        str(caught.value) == f"{path}: CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL rowid 2: end is NULL, expected an integer"
    )


# Counts checked by hand with sqlite3 on net.sql:
#   kernels  SELECT count(*) FROM CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL                              -> 160
#   apis     SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId IN (kernel, memcpy and
#            memset correlationIds)                                                                   -> 189
#   memops   21 memcpy + 8 memset                                                                      -> 29
#   ops      start markers (flags 2) whose text has ", seq = " (387), is torch::autograd::AccumulateGrad
#            (16) or starts with {'mod' (140) -> 543; the 140 {'traceMarker' ones fold; no range is left
#   nodes    GLOB '*Backward*, seq = *' OR 'torch::autograd::*'                                         -> 78
def test_real_nvprof_export(shared_data):
    p = load_nsys(shared_data / "nsys" / "nvprof_pytorch_pyprof_lm_v100_17ed9e2.sql")
    summary = correlate(p)
    r = p.records
    assert (len(r.kernels), len(r.apis), len(r.memops), len(r.ops), len(r.ranges), len(r.devices)) == (
        160,
        189,
        29,
        543,
        0,
        1,
    )
    assert sum(o.kind == "node" for o in r.ops) == 78
    assert (summary.kernels_with_launch, summary.kernels_with_op) == (160, 160)
    assert p.meta["source"] == "nvprof" and r.devices[0].name == "Tesla V100-SXM2-16GB"

    def row(kernel):
        op = r.ops[kernel.op]
        return op.name, op.dir, op.seq, op.altseq, op.node

    by_name = {}
    for k in r.kernels:
        by_name.setdefault(k.name.split("(")[0].split("<")[0].replace("void ", ""), []).append(k)
    # correlationId 2743: cudaLaunchKernel at ...8645343258 on thread 3940300608, inside
    # "embedding, seq = 65" [...8645288063, ...10959774050].
    assert row(by_name["indexSelectLargeIndex"][0]) == ("aten::embedding", "fwd", 65, NO_LINK, "")
    # correlationId 3314: launch at ...10995653727, inside "nll_loss_forward, seq = 128" [...10995606962, ...10995696100].
    assert row(by_name["cunn_ClassNLLCriterion_updateOutput_kernel"][0]) == (
        "aten::nll_loss_forward",
        "fwd",
        128,
        NO_LINK,
        "",
    )
    # correlationId 3374: launch at ...10997224169 on the autograd thread 452974336, inside
    # "nll_loss_backward, seq = 0" [...10997140380, ...10997258210], inside "NllLossBackward, seq = 128".
    nll_bwd = by_name["cunn_ClassNLLCriterion_updateGradInput_kernel"][0]
    assert row(nll_bwd) == ("aten::nll_loss_backward", "bwd", 0, 128, "NllLossBackward")
    assert r.ops[r.ops[nll_bwd.op].fwd].name == "aten::nll_loss_forward"
    assert r.apis[nll_bwd.launch].tid == 452974336
