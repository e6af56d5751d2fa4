"""Any records a source could produce give a report: views and exports never raise for data reasons."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyprof_live.profile import VIEW_NAMES, Profile
from pyprof_live.records import (
    ApiRecord,
    DeviceInfo,
    KernelRecord,
    MemoryRecord,
    OpRecord,
    RangeRecord,
    TensorMeta,
    Unknown,
)
from pyprof_live.render.chrome_trace import chrome_trace
from pyprof_live.render.html_app import one_file_page
from pyprof_live.report.columns import COLUMN_NAMES

_times = st.integers(min_value=0, max_value=10_000)
_small = st.integers(min_value=-1, max_value=4)
_dtypes = st.sampled_from(["float32", "bfloat16", "float16", "int64", "bool", "float8_e4m3fn", None, "weird"])
_shapes = st.lists(st.integers(min_value=0, max_value=64), max_size=4).map(tuple)
_tensors = st.builds(TensorMeta, _shapes, _dtypes)
_args = st.one_of(
    _tensors,
    st.lists(_tensors, max_size=3).map(tuple),
    st.integers(-3, 9),
    st.floats(allow_nan=True),
    st.booleans(),
    st.none(),
    st.text(max_size=4),
    st.builds(Unknown, st.text(max_size=3)),
)
_names = st.sampled_from(
    [
        "aten::addmm",
        "aten::mm",
        "aten::convolution",
        "aten::relu",
        "aten::add",
        "aten::sum",
        "aten::_foreach_add_",
        "aten::cat",
        "AddmmBackward0",
        "aten::unknown_op",
        "MyFn",
        "",
    ]
)


@st.composite
def _ops(draw):
    start = draw(_times)
    return OpRecord(
        name=draw(_names),
        start=start,
        end=start + draw(st.integers(0, 500)),
        tid=draw(st.integers(0, 2)),
        kind=draw(st.sampled_from(["op", "function", "node"])),
        dir=draw(st.sampled_from(["", "fwd", "bwd", "opt"])),
        seq=draw(_small),
        altseq=draw(_small),
        inputs=tuple(draw(st.lists(_args, max_size=5))),
        outputs=tuple(draw(st.lists(_tensors, max_size=2))),
        module=draw(st.sampled_from(["", "Net", "Net.fc.0"])),
        layer=tuple(draw(st.lists(st.sampled_from(["a", "b"]), max_size=2))),
        external_id=draw(_small),
    )


@st.composite
def _profiles(draw):
    ops = draw(st.lists(_ops(), max_size=12))
    apis = [
        ApiRecord("cudaLaunchKernel", t, t + 5, correlation=c, tid=draw(st.integers(0, 2)), external_id=draw(_small))
        for c, t in enumerate(draw(st.lists(_times, max_size=8)))
    ]
    kernels = [
        KernelRecord(
            draw(st.sampled_from(["sm90_xmma_gemm_bf16", "elementwise_kernel", "ncclKernel", ""])),
            t,
            t + draw(st.integers(0, 300)),
            correlation=draw(st.integers(-1, 9)),
        )
        for t in draw(st.lists(_times, max_size=8))
    ]
    memops = [
        MemoryRecord(
            draw(st.sampled_from(["memcpy", "memset"])),
            t,
            t + 10,
            draw(st.integers(0, 4096)),
            copy_kind="HtoD",
            correlation=draw(st.integers(-1, 9)),
        )
        for t in draw(st.lists(_times, max_size=3))
    ]
    ranges = [
        RangeRecord(
            draw(st.sampled_from(["step 0", "ProfilerStep#1", "Optimizer.step#AdamW.step", "enumerate(DataLoader)#x"])),
            t,
            t + 100,
            kind=draw(st.sampled_from(["step", "record_function", "nvtx"])),
        )
        for t in draw(st.lists(_times, max_size=3))
    ]
    devices = draw(
        st.lists(
            st.builds(DeviceInfo, st.just(0), st.sampled_from(["NVIDIA H100 80GB HBM3", "Mystery GPU"])), max_size=1
        )
    )
    return Profile(
        ops=ops, apis=apis, kernels=kernels, memops=memops, ranges=ranges, devices=devices, meta={"source": "fuzz"}
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_profiles(), st.sampled_from([None, "sil", "host", "flops", "idx", "op"]))
def test_every_view_and_export_works_on_any_records(profile, sort):
    text = profile.table(sort=sort, columns=COLUMN_NAMES)
    assert text.count("\n") >= len(profile.records.kernels) + len(profile.records.memops)
    profile.table(fmt="csv")
    for name in VIEW_NAMES:
        str(profile.view(name))
    json.dumps(chrome_trace(profile))
    assert one_file_page([("fuzz", "fuzz", profile)]).startswith("<!DOCTYPE html>")
