"""The record model of torch.compile'd code on hand-built records: kernel calls, fused ops, compile events."""

import gzip
import json

from pyprof_live import load
from pyprof_live.profile import Profile
from pyprof_live.records import NO_LINK, CompileRecord, OpRecord, TensorMeta


def _compiled_profile():
    """Thread 1: CompiledFunction [0,100] holds addmm (extern, [10,30]) and two kernel calls:
    cpp_fused_gelu_1 [40,50] fusing 3 nodes (all at t=40, no time), cpp_fused_add_2 [60,70] fusing 1 node.
    Backward (thread 1): cpp_fused_gelu_backward_0 [200,230], linked by seq to CompiledFunction."""
    x = TensorMeta((32, 256), "float32")
    ops = [
        OpRecord("CompiledFunction", 0, 100, tid=1, kind="function", seq=7, module="MLP", callsite=("train.py:9",)),
        OpRecord("aten::addmm", 10, 30, tid=1, overload="out", graph="0/0 forward", module="MLP.fc1"),
        OpRecord("cpp_fused_gelu_1", 40, 50, tid=1, kind="compiled", graph="0/0 forward", inputs=(x,), outputs=(x,)),
        OpRecord("aten::mul", 40, 40, tid=1, kind="fused", overload="Tensor", graph="0/0 forward", origin="aten::gelu"),
        OpRecord("aten::erf", 40, 40, tid=1, kind="fused", graph="0/0 forward", origin="aten::gelu"),
        OpRecord("aten::mul", 40, 40, tid=1, kind="fused", overload="Tensor", graph="0/0 forward", origin="aten::gelu"),
        OpRecord("cpp_fused_add_2", 60, 70, tid=1, kind="compiled", graph="0/0 forward", module="MLP"),
        OpRecord("aten::add", 60, 60, tid=1, kind="fused", overload="Tensor", graph="0/0 forward", module="MLP"),
        OpRecord(
            "cpp_fused_gelu_backward_0",
            200,
            230,
            tid=1,
            kind="compiled",
            dir="bwd",
            altseq=7,
            graph="0/0 backward",
            module="MLP.act",
            callsite=("model.py:12",),
        ),
    ]
    compiles = [
        CompileRecord("compile", -5000, -10, compile_id="0/0", name="forward", callsite=("model.py:10",), graphs=1),
        CompileRecord("graph_break", -3000, -3000, compile_id="0/0", reason="print", callsite=("model.py:11",)),
    ]
    return Profile(ops=ops, compiles=compiles, meta={"source": "test"})


def test_fused_ops_hang_from_their_kernel_call_and_are_never_parents():
    p = _compiled_profile()
    p.correlation
    parents = [op.parent for op in p.records.ops]
    # The three nodes of cpp_fused_gelu_1 (index 2) all hang from it, not from one another; the
    # add node from cpp_fused_add_2 (index 6); kernel calls and the extern from CompiledFunction.
    assert parents == [NO_LINK, 0, 0, 2, 2, 2, 0, 6, NO_LINK]


def test_compiled_ops_keep_their_own_module_and_call_site_when_linked_to_a_forward_op():
    p = _compiled_profile()
    p.correlation
    backward = p.records.ops[8]
    assert backward.fwd == 0  # tied to CompiledFunction by its autograd sequence number...
    assert (backward.module, backward.callsite) == ("MLP.act", ("model.py:12",))  # ...but not overwritten


def test_compiled_records_and_compile_events_survive_save_and_load(tmp_path):
    p = _compiled_profile()
    p.save(tmp_path / "c.pyprof.gz")
    q = load(tmp_path / "c.pyprof.gz")
    assert [(o.kind, o.graph, o.origin) for o in q.records.ops] == [(o.kind, o.graph, o.origin) for o in p.records.ops]
    assert q.records.compiles == p.records.compiles


def test_a_profile_saved_before_compile_events_existed_loads_with_none(tmp_path):
    p = _compiled_profile()
    p.save(tmp_path / "new.pyprof.gz")
    document = json.loads(gzip.decompress((tmp_path / "new.pyprof.gz").read_bytes()))
    del document["records"]["compiles"]
    for name in ("graph", "origin"):  # older files lack the new op fields too
        index = document["records"]["ops"]["fields"].index(name)
        del document["records"]["ops"]["fields"][index]
        for row in document["records"]["ops"]["rows"]:
            del row[index]
    (tmp_path / "old.pyprof.gz").write_bytes(gzip.compress(json.dumps(document).encode()))
    q = load(tmp_path / "old.pyprof.gz")
    assert q.records.compiles == []
    assert {o.graph for o in q.records.ops} == {""}
