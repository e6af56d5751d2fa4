"""Contract tests: records built with cupti-python's real classes -> normaliser -> correlation.

Constructing and filling cupti-python's record objects needs no driver, so these run on CPU with
the very classes CUPTI's buffers are decoded into.
"""

import pytest

from .cupti_support import cupti_or_skip

cupti = cupti_or_skip()

from pyprof_live.capture.gpu import GpuCapture, widen_thread_ids  # noqa: E402
from pyprof_live.capture.gpu.clock import ClockMap, ClockSample  # noqa: E402
from pyprof_live.capture.gpu.device_work import describe  # noqa: E402
from pyprof_live.capture.gpu.normalize import (  # noqa: E402
    ActivitySink,
    api_name,
    api_record,
    copy_kind_name,
    finish,
    kernel_record,
    memcpy_record,
    memset_record,
)
from pyprof_live.profile import Profile  # noqa: E402
from pyprof_live.records import NO_LINK, OpRecord, Records  # noqa: E402

K = cupti.ActivityKind
CUSTOM2 = int(cupti.ExternalCorrelationKind.CUSTOM2)
CUSTOM0 = int(cupti.ExternalCorrelationKind.CUSTOM0)
OFFSET = 5_000_000  # CUPTI clock - host clock in these tests
MANGLED = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_"
DEMANGLED = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
    "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)"
)
NCCL = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"
#: threading.get_ident() of an autograd device thread (pthread_self: 64 bits); a C++ thread,
#: absent from threading.enumerate(), so only the op records made on it know its whole id.
ENGINE = 0x7F3A_1C2B_4D00
OTHER_THREAD = 0x1234_5678  # a CUPTI thread id no op thread has


def kernel(cls=cupti.ActivityKernel13, *, name=MANGLED, start, end, correlation, stream=7, graph=(0, 0)):
    k = cls()
    k.kind = int(K.CONCURRENT_KERNEL)
    k.name = name
    k.start, k.end = start + OFFSET, end + OFFSET
    k.device_id, k.context_id, k.stream_id, k.correlation_id = 0, 1, stream, correlation
    k.grid_x, k.grid_y, k.grid_z = 120, 2, 1
    k.block_x, k.block_y, k.block_z = 256, 1, 1
    k.registers_per_thread, k.static_shared_memory, k.dynamic_shared_memory = 32, 1024, 2048
    k.graph_id, k.graph_node_id = graph
    return k


def api(cbid, start, end, correlation, thread=ENGINE & 0xFFFFFFFF, kind=K.RUNTIME):
    a = cupti.ActivityAPI()
    a.kind = int(kind)
    a.cbid, a.correlation_id = cbid, correlation
    a.start, a.end = start + OFFSET, end + OFFSET
    a.process_id, a.thread_id = 4242, thread
    return a


def external(correlation, op_id, kind=CUSTOM2):
    e = cupti.ActivityExternalCorrelation()
    e.kind = int(K.EXTERNAL_CORRELATION)
    e.external_kind, e.external_id, e.correlation_id = kind, op_id, correlation
    return e


def memcpy(
    cls=cupti.ActivityMemcpy6, *, copy_kind=cupti.ActivityMemcpyKind.HTOD, nbytes=4096, start=0, end=0, correlation=0
):
    m = cls()
    m.kind = int(K.MEMCPY)
    m.copy_kind, m.bytes = int(copy_kind), nbytes
    m.start, m.end = start + OFFSET, end + OFFSET
    m.device_id, m.stream_id, m.correlation_id = 0, 7, correlation
    return m


def memset(cls=cupti.ActivityMemset4, *, nbytes=512, start=0, end=0, correlation=0):
    m = cls()
    m.kind = int(K.MEMSET)
    m.bytes = nbytes
    m.start, m.end = start + OFFSET, end + OFFSET
    m.device_id, m.stream_id, m.correlation_id = 0, 7, correlation
    return m


LAUNCH = int(cupti.RuntimeApiTraceCbid.cudaLaunchKernel_v7000)  # 211
MEMCPY_ASYNC = int(cupti.RuntimeApiTraceCbid.cudaMemcpyAsync_v3020)  # 41
GRAPH_LAUNCH = int(cupti.RuntimeApiTraceCbid.cudaGraphLaunch_v10000)  # 311


# -- field by field ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cls", ["ActivityKernel9", "ActivityKernel10", "ActivityKernel11", "ActivityKernel12", "ActivityKernel13"]
)
def test_kernel_record_copies_every_field_of_each_record_version(cls):
    k = kernel(getattr(cupti, cls), start=1_300, end=1_800, correlation=10, graph=(3, 9))
    record = kernel_record(k, pid=0)
    assert record.name == DEMANGLED  # torch's __cxa_demangle of CUPTI's mangled name
    assert (record.start, record.end) == (1_300 + OFFSET, 1_800 + OFFSET)  # still CUPTI's clock: finish() converts
    assert (record.device, record.context, record.stream, record.correlation) == (0, 1, 7, 10)
    assert (record.grid, record.block) == ((120, 2, 1), (256, 1, 1))
    assert (record.registers, record.shared_static, record.shared_dynamic) == (32, 1024, 2048)
    assert (record.graph_id, record.graph_node_id) == (3, 9)


def test_kernel_names_that_are_not_mangled_stay_as_given():
    assert (
        kernel_record(kernel(name="triton_poi_fused_add_0", start=0, end=1, correlation=1)).name
        == "triton_poi_fused_add_0"
    )


def test_api_names_come_from_the_cbid_enums_without_a_driver():
    assert api_name(int(K.RUNTIME), LAUNCH) == "cudaLaunchKernel"  # cudaLaunchKernel_v7000: the _v7000 goes
    assert api_name(int(K.RUNTIME), GRAPH_LAUNCH) == "cudaGraphLaunch"
    assert api_name(int(K.DRIVER), int(cupti.DriverApiTraceCbid.cuLaunchKernel)) == "cuLaunchKernel"
    # A driver function's _v2 is part of its name (cuMemcpyHtoD_v2 is the exported symbol).
    assert api_name(int(K.DRIVER), int(cupti.DriverApiTraceCbid.cuMemcpyHtoD_v2)) == "cuMemcpyHtoD_v2"
    assert api_name(int(K.RUNTIME), 99_999) == "runtime cbid 99999"


@pytest.mark.parametrize(
    "kind, expected",
    [
        ("HTOD", "HtoD"),
        ("DTOH", "DtoH"),
        ("DTOD", "DtoD"),
        ("HTOH", "HtoH"),
        ("PTOP", "PtoP"),
        ("ATOD", "AtoD"),
        ("UNKNOWN", ""),
    ],
)
def test_copy_kinds_are_spelled_as_nsys_and_kineto_spell_them(kind, expected):
    assert copy_kind_name(int(getattr(cupti.ActivityMemcpyKind, kind))) == expected


@pytest.mark.parametrize("cls", ["ActivityMemcpy5", "ActivityMemcpy6", "ActivityMemcpy7"])
def test_memcpy_record_of_each_version(cls):
    record = memcpy_record(
        memcpy(getattr(cupti, cls), copy_kind=cupti.ActivityMemcpyKind.DTOH, nbytes=96, start=5, end=9, correlation=4),
        pid=3,
    )
    assert (record.kind, record.copy_kind, record.bytes, record.correlation, record.pid) == ("memcpy", "DtoH", 96, 4, 3)
    assert (record.start, record.end, record.device, record.stream) == (5 + OFFSET, 9 + OFFSET, 0, 7)


@pytest.mark.parametrize("cls", ["ActivityMemset4", "ActivityMemset5"])
def test_memset_record_of_each_version(cls):
    record = memset_record(memset(getattr(cupti, cls), nbytes=512, start=1, end=2, correlation=6))
    assert (record.kind, record.copy_kind, record.bytes, record.correlation) == ("memset", "", 512, 6)


def test_sink_keeps_only_our_external_kind_and_counts_what_it_does_not_keep():
    sink = ActivitySink()
    sync = cupti.ActivitySynchronization2()
    sync.kind, sync.start, sync.end = int(K.SYNCHRONIZATION), 100, 350
    overhead = cupti.ActivityOverhead3()
    overhead.kind = int(K.OVERHEAD)
    sink.add([external(1, 5), external(2, 6, kind=CUSTOM0), sync, sync, overhead])
    assert sink.external == {1: 5}  # Kineto's CUSTOM0 id for call 2 is not ours
    assert sink.synchronization == [2, 500]  # 2 records x (350 - 100) ns
    assert sink.other_kinds == {int(K.OVERHEAD): 1}


# -- a small run, end to end through correlation ---------------------------------------------------


def captured_run():
    """What CUPTI delivers for: aten::addmm (op id 0) and aten::relu (op id 1) on an engine thread,
    an NCCL kernel launched by another thread, one CUDA graph replay outside any op, and a memset
    whose launching call was not recorded. Buffers arrive split and out of order, as CUPTI's may."""
    first_buffer = [
        external(10, 0),
        api(LAUNCH, 1_100, 1_150, 10),
        external(11, 1),
        api(LAUNCH, 2_200, 2_230, 11),
        # Call 12 carries only Kineto's kind: it links by time containment on its thread instead.
        external(12, 1, kind=CUSTOM0),
        api(LAUNCH, 2_300, 2_320, 12),
        kernel(name="launched_by_call_12", start=2_600, end=2_700, correlation=12),
        external(13, 1),
        api(MEMCPY_ASYNC, 2_400, 2_450, 13),
        api(LAUNCH, 3_000, 3_010, 14, thread=OTHER_THREAD),
        api(GRAPH_LAUNCH, 3_500, 3_520, 15),
    ]
    second_buffer = [
        kernel(start=1_300, end=1_800, correlation=10),
        kernel(name="relu_kernel", start=2_250, end=2_350, correlation=11),
        memcpy(start=2_460, end=2_560, correlation=13),
        kernel(name=NCCL, start=3_100, end=4_100, correlation=14, stream=40),
        kernel(name="graph_kernel_a", start=3_600, end=3_700, correlation=15, graph=(7, 1)),
        kernel(name="graph_kernel_b", start=3_700, end=3_900, correlation=15, graph=(7, 2)),
        memset(start=4_000, end=4_010, correlation=16),
    ]
    sink = ActivitySink(pid=0)
    sink.add(second_buffer)
    sink.add(first_buffer)
    clock = ClockMap(ClockSample(OFFSET + 1_000, 1_000, 0), ClockSample(OFFSET + 9_000, 9_000, 0))
    apis, kernels, memops = finish(sink, clock.to_host)
    capture = GpuCapture(Records(apis=apis, kernels=kernels, memops=memops))
    ops = [
        OpRecord("aten::addmm", 1_000, 2_000, tid=ENGINE, external_id=0),
        OpRecord("aten::relu", 2_100, 2_500, tid=ENGINE, external_id=1),
    ]
    widen_thread_ids(capture, {op.tid for op in ops})  # as the live profile does with its ops
    return Profile(ops=ops, apis=capture.records.apis, kernels=capture.records.kernels, memops=capture.records.memops)


def by_correlation(items):
    return {item.correlation: item for item in items}


def test_records_arrive_on_the_host_clock_with_their_pushed_op_id():
    profile = captured_run()
    apis = by_correlation(profile.records.apis)
    assert {c: a.external_id for c, a in apis.items()} == {10: 0, 11: 1, 12: NO_LINK, 13: 1, 14: NO_LINK, 15: NO_LINK}
    assert (apis[10].name, apis[10].start, apis[10].end) == ("cudaLaunchKernel", 1_100, 1_150)  # OFFSET removed
    assert apis[13].name == "cudaMemcpyAsync" and apis[15].name == "cudaGraphLaunch"
    assert apis[10].tid == ENGINE  # CUPTI's low 32 bits, widened back to the op records' thread id
    assert apis[14].tid == OTHER_THREAD  # no op thread has it: kept as CUPTI gave it
    assert {a.pid for a in profile.records.apis} == {0}  # the op records' pid, not CUPTI's process_id 4242


def test_correlation_links_kernel_to_launch_to_op():
    profile = captured_run()
    summary = profile.correlation
    ops, apis = profile.records.ops, profile.records.apis
    kernels = {k.name: k for k in profile.records.kernels}
    addmm_kernel = kernels[DEMANGLED]
    assert apis[addmm_kernel.launch].correlation == 10 and addmm_kernel.op == 0
    assert addmm_kernel.start - apis[addmm_kernel.launch].start == 200  # launch latency: 1_300 - 1_100
    assert ops[kernels["relu_kernel"].op].name == "aten::relu"
    # Call 12 (no CUSTOM2 id) starts at 2_300, inside aten::relu [2_100, 2_500] on the same thread.
    assert kernels["launched_by_call_12"].op == 1
    memcpy_record_, memset_record_ = profile.records.memops
    assert (memcpy_record_.copy_kind, memcpy_record_.bytes, memcpy_record_.op) == ("HtoD", 4096, 1)
    assert (memset_record_.launch, memset_record_.op) == (NO_LINK, NO_LINK)  # call 16 was never recorded
    # Unattributed, never dropped: the NCCL kernel (other thread) and both graph-replay kernels.
    assert kernels[NCCL].op == NO_LINK and kernels[NCCL].launch != NO_LINK
    assert kernels["graph_kernel_a"].op == kernels["graph_kernel_b"].op == NO_LINK
    # 6 kernels, all with a recorded launch; linked to an op: correlations 10, 11, 12 -> 3.
    assert (summary.kernels, summary.kernels_with_launch, summary.kernels_with_op) == (6, 6, 3)
    assert (summary.kernels_unattributed, summary.memops_with_op) == (3, 1)


def test_graph_replays_and_communication_are_described():
    facts, notes = describe(captured_run().records.kernels)
    # graph 7: kernels a [3_600, 3_700] and b [3_700, 3_900] -> 100 + 200 ns, one launch (call 15), nodes 1 and 2
    assert facts["gpu_graph_replays"] == {7: {"kernels": 2, "time_ns": 300, "launches": 1, "nodes": 2}}
    assert facts["gpu_communication"] == {40: {"kernels": 1, "time_ns": 1_000}}  # NCCL [3_100, 4_100] on stream 40
    assert notes[0].startswith("2 kernels (300 ns) were replays of CUDA graph(s) 7")
    assert notes[1] == "1 communication kernels (1000 ns) on stream(s) 40"


def test_thread_ids_are_widened_only_where_one_op_thread_matches():
    twin = ENGINE + (1 << 32)  # same low 32 bits as ENGINE
    capture = GpuCapture(
        Records(
            apis=[
                api_record(api(LAUNCH, 0, 1, 1, thread=ENGINE & 0xFFFFFFFF)),
                api_record(api(LAUNCH, 0, 1, 2, thread=OTHER_THREAD)),
            ]
        )
    )
    widen_thread_ids(capture, [ENGINE, 0x7F3A_0000_0001])
    assert [a.tid for a in capture.records.apis] == [ENGINE, OTHER_THREAD]
    ambiguous = GpuCapture(Records(apis=[api_record(api(LAUNCH, 0, 1, 1))]))
    widen_thread_ids(ambiguous, [ENGINE, twin])
    assert ambiguous.records.apis[0].tid == ENGINE & 0xFFFFFFFF  # two candidates: which one launched is unknown
