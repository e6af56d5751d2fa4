"""The record model of torch.compile'd code on hand-built records: kernel calls, fused ops, compile events."""

import gzip
import json

import pytest

from pyprof_live import load
from pyprof_live.capture.compile_events import _first_reason
from pyprof_live.profile import Profile
from pyprof_live.records import NO_LINK, CompileRecord, OpRecord, RangeRecord, TensorMeta
from pyprof_live.report.recompile_advice import recompile_fix


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


# -- views over hand-built compiled records -------------------------------------------------------


def test_a_kernel_call_is_one_row_with_its_fused_ops_and_their_flops():
    p = _compiled_profile()
    rows = p.kernel_view(columns="op,fused,graph,host,flops,bytes").rows
    # Rows: addmm (extern, no formula args: na), the two kernel calls, the backward kernel; no fused op
    # rows and no CompiledFunction row (it encloses ops).
    assert [r["op"] for r in rows] == [
        "aten::addmm",
        "cpp_fused_gelu_1",
        "cpp_fused_add_2",
        "cpp_fused_gelu_backward_0",
    ]
    gelu = rows[1]
    assert gelu["fused"] == "gelu(mul erf mul)" and gelu["graph"] == "0/0 forward" and gelu["host"] == 10
    # Fused nodes recorded without arguments: their formulas give na, so the kernel's flops are na;
    # bytes are the kernel's own: (32, 256) float32 read and written, 2 * 32768.
    assert gelu["flops"] == "na" and gelu["bytes"] == 65536
    assert rows[2]["fused"] == "add"
    assert rows[3]["fused"] is None and rows[3]["flops"] == "na"  # what it fused is not known


def test_kernel_flops_are_the_sum_of_the_fused_ops_formulas():
    x = TensorMeta((4, 8), "float32")
    ops = [
        OpRecord("cpp_fused_mul_relu_0", 0, 50, kind="compiled", inputs=(x,), outputs=(x,)),
        OpRecord("aten::mul", 0, 0, kind="fused", overload="Tensor", inputs=(x, x), outputs=(x,)),
        OpRecord("aten::relu", 0, 0, kind="fused", inputs=(x,), outputs=(x,)),
    ]
    p = Profile(ops=ops, meta={"source": "test"})
    (row,) = p.kernel_view(columns="op,flops,bytes").rows
    # mul: 32 flops, relu: 32 flops (1 per element each); bytes: 32 float32 read + 32 written = 256.
    assert (row["flops"], row["bytes"]) == (64, 256)
    (summary,) = p.ops().rows
    assert (summary["op"], summary["calls"], summary["flops"]) == ("cpp_fused_mul_relu_0", 1, 64)


def test_ops_view_groups_kernel_calls_by_graph_and_never_counts_fused_ops():
    p = _compiled_profile()
    rows = {(r["op"], r["graph"]): r for r in p.ops().rows}
    assert ("aten::mul", None) not in rows and ("aten::erf", None) not in rows
    assert rows[("cpp_fused_gelu_1", "0/0 forward")]["calls"] == 1
    assert rows[("cpp_fused_gelu_backward_0", "0/0 backward")]["host"] == 30
    assert "graph" in p.ops().columns


def test_modules_count_a_kernel_call_once_at_its_module():
    p = _compiled_profile()
    modules = {r["module"]: r for r in p.modules().rows}
    # MLP: addmm 20 (in MLP.fc1) + add kernel 10 + gelu kernel 10 (no module of its own: it takes
    # CompiledFunction's, MLP) + the backward kernel 30 (MLP.act). Fused ops add nothing.
    assert modules["MLP"]["host"] == 20 + 10 + 10 + 30
    assert modules["MLP"]["ops"] == 4 and modules["MLP.act"]["bwd"] == 30


def test_compile_events_view_overview_and_step_times():
    ops = [OpRecord("aten::add", 100, 200, tid=1)]
    compiles = [
        CompileRecord("compile", 10, 60, compile_id="0/0", name="forward", callsite=("m.py:3",), graphs=1, kernels=4),
        CompileRecord("recompile", 300, 350, compile_id="0/1", name="forward", callsite=("m.py:3",), reason="x"),
        CompileRecord("graph_break", 30, 30, compile_id="0/0", callsite=("m.py:5",), reason="print"),
    ]
    ranges = [RangeRecord("step 0", 0, 250, kind="step"), RangeRecord("step 1", 250, 400, kind="step")]
    p = Profile(ops=ops, ranges=ranges, compiles=compiles, meta={"source": "test"})
    overview = p.overview()
    steps = {r["step"]: r for r in overview.rows}
    # step 0: 250 ns, 50 of them compiling -> dur 200; step 1: 150 ns, 50 compiling -> 100.
    assert (steps["step 0"]["dur"], steps["step 0"]["compile"]) == (200, 50)
    assert (steps["step 1"]["dur"], steps["step 1"]["compile"]) == (100, 50)
    assert "compile" in overview.columns
    note = next(n for n in overview.notes if n.startswith("torch.compile:"))
    assert "2 frame compiles, 1 of them recompiles, 1 graph breaks" in note and "100 ns compiling" in note
    view = p.compiles()
    assert [(r["event"], r["where"], r["time"]) for r in view.rows] == [
        ("compile", "m.py:3", 50),
        ("graph_break", "m.py:5", None),
        ("recompile", "m.py:3", 50),
    ]


def _graph_break_advice(compiles) -> str:
    ranges = [RangeRecord("step 0", 0, 1000, kind="step")]
    p = Profile(ops=[OpRecord("aten::add", 0, 1000, tid=1)], ranges=ranges, compiles=compiles, meta={"source": "test"})
    (row,) = [r for r in p.recommendations().rows if r["rule"] == "graph-breaks"]
    return row["advice"]


def test_a_users_graph_break_is_named_before_torchs_own_and_torchs_alone_are_not_theirs_to_remove():
    torch_break = CompileRecord(
        "graph_break", 5, 5, callsite=("torch/optim/optimizer.py:79", "train.py:40"), reason="Call to graph_break()"
    )
    user_break = CompileRecord("graph_break", 7, 7, callsite=("model.py:12", "train.py:38"), reason="print")
    # compiling the frames the breaks resumed in: 60 + 40 ns of the 1000 ns step
    resumes = [
        CompileRecord("compile", 10, 70, name="torch_dynamo_resume_in_wrapper_at_80"),
        CompileRecord("compile", 80, 120, name="torch_dynamo_resume_in_forward_at_12"),
    ]
    # torch's break twice and the user's once: the user's is the one named, with the advice to remove it
    advice = _graph_break_advice([torch_break, torch_break, user_break, *resumes])
    assert advice.startswith("3 graph breaks, first at model.py:12 <- train.py:38 (print): code after a break")
    assert "remove the cause" in advice
    advice = _graph_break_advice([torch_break, resumes[0]])
    assert advice == (
        "1 graph break, all in torch's own code, first at torch/optim/optimizer.py:79 <- train.py:40 (Call to "
        "graph_break()): torch breaks the graph there itself (torch.optim's step does so on purpose, to run its "
        "update under no_grad); nothing in your code to remove"
    )


def test_the_frames_a_nested_break_splits_off_are_what_it_costs_and_one_line_is_one_item(tmp_path):
    """A Hugging Face model's logging call breaks the graph of every frame it is nested in (Dynamo logs it once per
    frame, with that frame's callers); each callee is then compiled on its own (after_break), and none resumes: the
    rule once counted resumed frames only, found 0 ns at stake and said nothing."""
    lines = [("modeling_utils.py:4824", *callers) for callers in (("t.py:9",), ("generic.py:1081", "t.py:9"))]
    breaks = [CompileRecord("graph_break", 5, 5, callsite=line, reason="logging.Logger method") for line in lines * 2]
    frames = [
        CompileRecord("compile", 10, 110, compile_id="0/0", name="wrapper", callsite=("generic.py:1075", "t.py:9")),
        CompileRecord("compile", 120, 420, compile_id="1/0", name="forward", after_break=True),
        CompileRecord("compile", 430, 530, compile_id="2/0", name="loss_function", after_break=True),
    ]
    ranges = [RangeRecord("step 0", 0, 1000, kind="step")]
    p = Profile(ops=[OpRecord("aten::add", 0, 1000, tid=1)], ranges=ranges, compiles=[*frames, *breaks], meta={})
    (row,) = [r for r in p.recommendations().rows if r["rule"] == "graph-breaks"]
    assert row["at_stake"] == 400  # forward 300 + loss_function 100 ns; not wrapper, the frame the user compiled
    assert row["advice"].startswith("4 graph breaks, first at modeling_utils.py:4824 <- t.py:9 (logging.Logger method)")
    assert row["items"] == [("modeling_utils.py:4824 <- t.py:9: logging.Logger method x4", 400)]
    assert "3 frame compiles, 2 split off by graph breaks, 4 graph breaks;" in p.compiles().notes[0]
    reasons = [r["reason"] for r in p.compiles().rows if r["event"] == "compile"]
    assert reasons == [None, *["split off by a graph break: the frame calling it broke its graph there"] * 2]
    p.save(tmp_path / "b.pyprof.gz")
    assert [c.after_break for c in load(tmp_path / "b.pyprof.gz").records.compiles] == [False, True, True] + [False] * 4


def test_a_line_of_torchs_own_code_is_shown_with_its_path_in_torch():
    import os

    import torch

    from pyprof_live.capture import callsite

    optimizer_file = os.path.join(os.path.dirname(torch.__file__), "optim", "optimizer.py")
    assert callsite.file_line(optimizer_file, 79) == "torch/optim/optimizer.py:79"
    assert callsite.file_line("/home/me/project/train.py", 52) == "train.py:52"
    # a user's folder named like torch's is still theirs
    assert callsite.file_line("/home/me/torch/optim/optimizer.py", 79) == "optimizer.py:79"


def test_compile_times_read_in_human_units():
    """Compile times are seconds, not a step's nanoseconds: the overview's compile column, p.compiles()'s
    time and phases and the note read like every other time."""
    ops = [OpRecord("aten::add", 0, 3_000_000_000, tid=1)]
    phases = {"dynamo": 400_000_000, "aot": 300_000_000, "inductor": 1_800_000_000}
    compiles = [CompileRecord("compile", 100, 2_500_000_100, compile_id="0/0", name="f", phases=phases)]
    ranges = [RangeRecord("step 0", 0, 3_000_000_000, kind="step")]
    p = Profile(ops=ops, ranges=ranges, compiles=compiles, meta={"source": "test"})
    overview = p.overview().table()
    # step 0: 3 s, 2.5 s of it compiling -> dur 500 ms, compile 2.5 s
    assert "500 ms" in overview and "2.5 s" in overview and "2500000000" not in overview
    assert "2.5 s compiling (dynamo 400 ms, aot 300 ms, inductor 1.8 s)" in overview
    (row,) = [line.split() for line in p.compiles().table().splitlines() if line.startswith("compile ")]
    # after event, id, function and where ("-"): time, dynamo, aot, inductor
    assert row[4:12] == ["2.5", "s", "400", "ms", "300", "ms", "1.8", "s"]


def test_recompiles_are_recommended_against_with_the_dimension_to_mark_dynamic():
    reason = "0/0: tensor 'x' size mismatch at index 0. expected 8, actual 16"
    compiles = [
        CompileRecord("compile", 0, 100, compile_id="0/0", name="f", callsite=("model.py:42",)),
        CompileRecord("recompile", 200, 300, compile_id="0/1", name="f", callsite=("model.py:42",), reason=reason),
        CompileRecord("recompile", 400, 600, compile_id="0/2", name="f", callsite=("model.py:42",), reason=reason),
    ]
    p = Profile(ops=[OpRecord("aten::add", 0, 1000)], compiles=compiles, meta={"source": "test"})
    (row,) = [r for r in p.recommendations().rows if r["rule"] == "recompiles"]
    assert row["at_stake"] == 300  # the two recompiles: 100 + 200 ns
    assert row["advice"].startswith(f"recompiled 2 times at model.py:42 ({reason}): dim 0 of x changed")
    assert "torch._dynamo.mark_dynamic(x, 0)" in row["advice"]


#: Dynamo's reasons (first failed guard) for the same recompiles on torch 2.6 and on 2.13/2.15, as recorded there:
#: a model's argument x resized, its attribute flag set, argument y given a rank, grad mode switched, an int n
#: changed, x cast to float64, a tensor behind *args resized, a keyword tensor resized, BERT's config read.
_REASONS_2_6 = (
    "0/0: tensor 'L['x']' size mismatch at index 0. expected 2, actual 3",
    "0/1: ___check_obj_id(L['self'].flag, 140676893621216)",
    "0/3: tensor 'L['y']' rank mismatch. expected 2, actual 3",
    "0/4: GLOBAL_STATE changed: grad_mode",
    "1/0: L['n'] == 2",
    "1/1: tensor 'L['x']' dtype mismatch. expected Float, actual Double",
    "2/0: tensor 'L['args'][0]' size mismatch at index 0. expected 2, actual 3",
    "0/0: tensor 'L['kwargs']['input_ids']' size mismatch at index 1. expected 64, actual 48",
)
_REASONS_2_13 = (
    "0/0: tensor 'x' size mismatch at index 0. expected 2, actual 3",
    "0/1: self.flag is None  # if self.flag is None:  # mp/s3/reasons.py:15 in forward",
    "0/3: tensor 'y' rank mismatch. expected 2, actual 3",
    "0/4: GLOBAL_STATE changed: grad_mode",
    "1/0: n == 2  # def f(x, n): return x * n  # mp/s3/reasons.py:22 in f",
    "1/1: tensor 'x' dtype mismatch. expected Float, actual Double",
    "2/0: tensor 'args[0]' size mismatch at index 0. expected 2, actual 3",
    "0/0: tensor 'kwargs['input_ids']' size mismatch at index 1. expected 64, actual 48",
    "0/0: self.config.problem_type is None  # if self.config.problem_type is None:  "
    "# transformers/models/bert/modeling_bert.py:1119 in forward",
)


@pytest.mark.parametrize("reasons", [_REASONS_2_6, _REASONS_2_13], ids=["torch-2.6", "torch-2.13"])
def test_recompile_advice_fits_the_guard_that_failed_in_either_of_dynamos_spellings(reasons):
    size, flag, rank, grad, integer, dtype, star_args, keyword, *bert = map(recompile_fix, reasons)
    assert size.startswith("dim 0 of x changed: torch._dynamo.mark_dynamic(x, 0) before the first call")
    assert star_args.startswith("dim 0 of args[0] changed: torch._dynamo.mark_dynamic(args[0], 0)")
    assert keyword.startswith("dim 1 of input_ids changed: torch._dynamo.mark_dynamic(input_ids, 1)")
    # Only sizes can be marked dynamic: no other guard's advice says so.
    assert all("mark_dynamic" not in fix for fix in (flag, rank, grad, integer, dtype, *bert))
    assert flag.startswith("a Python value the compiled code reads changed between calls: ")
    assert "self.flag" in flag and "set it before the first call and keep it" in flag
    assert rank.startswith("y changed its number of dimensions")
    assert grad.startswith("torch's global state changed between calls (grad_mode)")
    assert integer.startswith("the int n") and "torch.compile(dynamic=True)" in integer
    assert dtype.startswith("x changed dtype (Float to Double)")
    if bert:  # 2.13+ names the line that read the value
        assert "(read at reasons.py:15)" in flag
        assert bert[0].endswith(
            "`self.config.problem_type is None` (read at modeling_bert.py:1119); each value compiles a graph of its "
            "own: set it before the first call and keep it (only tensor sizes can be marked dynamic)"
        )


def test_recompile_advice_for_guards_on_traced_sizes_lengths_and_a_value_with_one_comment():
    # As torch 2.13 words them (2.6: L['x'], no comment): a dynamic dim that became 1, a list of another length.
    note = (
        "(user code shown is first use of this value--the guard itself is not due user code but due to 0/1 "
        "specialization in the framework; to avoid specialization try torch._dynamo.decorators.mark_unbacked(tensor, dim))"
    )
    became_one = f"0/0: 2 <= x.size()[0]  # def f(x): return x.sin() * 2  # mp/s3/reasons2.py:4 in f {note}"
    assert recompile_fix(became_one) == (
        "dim 0 of x (read at reasons2.py:4) became 0 or 1, sizes a dynamic dim's graph leaves out (Dynamo specializes "
        "them): torch._dynamo.mark_unbacked(x, 0) compiles one graph for them too"
    )
    assert recompile_fix("0/0: 2 <= L['x'].size()[0]").endswith(
        "torch._dynamo.mark_unbacked(x, 0) compiles one graph for them too"
    )
    assert recompile_fix("0/1: L['x'].size()[1] == 1").startswith(
        "dim 1 of x changed: torch._dynamo.mark_dynamic(x, 1)"
    )
    length = "1/0: len(xs) == 3  # def g(xs): return sum(x * 2 for x in xs)  # mp/s3/reasons2.py:7 in g"
    assert recompile_fix(length).startswith("the length of xs (read at reasons2.py:7) changed")
    assert recompile_fix("1/0: len(L['xs']) == 3").startswith("the length of xs changed")
    # a guard whose source Dynamo cannot show has one comment: the line is still read
    assert "`self.flag is None` (read at model.py:15)" in recompile_fix(
        "0/1: self.flag is None  # m/model.py:15 in forward"
    )


def test_a_python_guards_reason_loses_the_padding_dynamo_aligns_its_comment_with():
    dynamo = "0/1: self.flag is None" + " " * 40 + "# if self.flag is None:  # m/model.py:15 in forward\n0/0: ..."
    assert _first_reason(dynamo) == "0/1: self.flag is None  # if self.flag is None:  # m/model.py:15 in forward"


def test_chrome_trace_draws_kernel_calls_with_what_they_fused_and_compile_events():
    from pyprof_live.render.chrome_trace import chrome_trace

    p = _compiled_profile()
    events = [e for e in chrome_trace(p)["traceEvents"] if e.get("ph") == "X"]
    names = [e["name"] for e in events]
    assert "aten::erf" not in names  # fused ops are no slices of their own
    gelu = next(e for e in events if e["name"] == "cpp_fused_gelu_1")
    assert gelu["cat"] == "compiled" and gelu["args"]["fused"] == "gelu(mul erf mul)"
    assert gelu["args"]["graph"] == "0/0 forward"
    assert {"torch.compile compile 0/0", "graph break"} <= set(names)


def test_kernels_view_lists_host_kernels_per_graph_with_their_host_time():
    p = _compiled_profile()
    rows = p.kernels().rows
    assert [(r["kernel"], r["graph"], r["calls"], r["host"], r["sil"]) for r in rows] == [
        ("cpp_fused_gelu_backward_0", "0/0 backward", 1, 30, None),
        ("cpp_fused_add_2", "0/0 forward", 1, 10, None),
        ("cpp_fused_gelu_1", "0/0 forward", 1, 10, None),
    ]
    assert p.kernels().columns[:4] == ("kernel", "graph", "calls", "host")
