"""Live capture: sequence numbers, backward -> forward, direction, modules, layers, threads, hooks."""

import logging
import re
import sys
import threading
import time
import warnings

import nvtx
import pytest
import torch
import torch.nn as nn
from torch.utils._python_dispatch import _get_current_dispatch_mode
from torch.utils.checkpoint import checkpoint

import pyprof_live
from pyprof_live import torch_compat
from pyprof_live.records import TensorMeta

from .compiled_models import needs_compiled_runs
from .fresh_process import run_in_a_fresh_process


def _ops(p):
    p.correlation
    return p.records.ops


def _fwd_name(p, op):
    return p.records.ops[op.fwd].name if op.fwd >= 0 else None


def test_linear_forward_backward_ties_each_backward_op_to_its_forward_op():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    with pyprof_live.profile() as p:
        model(torch.randn(2, 8)).sum().backward()
    ops = _ops(p)
    fwd = [(op.name, op.seq, op.module) for op in ops if op.dir == "fwd" and op.seq >= 0]
    # Linear = t (TBackward0) + addmm (AddmmBackward0); the nodes are created in call order.
    assert fwd == [
        ("aten::t", 0, "Sequential.0"),
        ("aten::addmm", 1, "Sequential.0"),
        ("aten::relu", 2, "Sequential.1"),
        ("aten::t", 3, "Sequential.2"),
        ("aten::addmm", 4, "Sequential.2"),
        ("aten::sum", 5, ""),
    ]
    bwd = [op for op in ops if op.dir == "bwd"]
    by_node = {(op.node, _fwd_name(p, op), op.altseq) for op in bwd if not op.param}
    assert by_node == {
        ("SumBackward0", "aten::sum", 5),
        ("AddmmBackward0", "aten::addmm", 4),
        ("TBackward0", "aten::t", 3),
        ("ReluBackward0", "aten::relu", 2),
        ("AddmmBackward0", "aten::addmm", 1),
        ("TBackward0", "aten::t", 0),
    }
    # AccumulateGrad runs aten::detach once per parameter from torch 2.10, twice before (seen on 2.6, 2.8, 2.9.1;
    # once on 2.10, 2.13, 2.15). No torch name tells them apart, hence the release.
    detaches = 2 if torch_compat.TORCH < (2, 10) else 1
    assert sorted(op.param for op in bwd if op.param) == sorted(
        ["Sequential.0.bias", "Sequential.0.weight", "Sequential.2.bias", "Sequential.2.weight"] * detaches
    )
    # Backward ops carry the module of their forward op; AccumulateGrad that of its parameter.
    assert {op.module for op in bwd if op.node == "ReluBackward0"} == {"Sequential.1"}
    assert {op.module for op in bwd if op.param == "Sequential.2.weight"} == {"Sequential.2"}


def test_shapes_dtypes_params_and_outputs_are_exact():
    a = torch.randn(3, 5, dtype=torch.float64)
    b = torch.randn(5, 7, dtype=torch.float64)
    bias = torch.randn(7, dtype=torch.float64)
    with pyprof_live.profile() as p:
        torch.addmm(bias, a, b, beta=0.5, alpha=2.0)
        torch.cat([a, a], dim=1)
    addmm, cat = _ops(p)
    assert (addmm.name, addmm.overload) == ("aten::addmm", "default")
    assert addmm.inputs == (
        TensorMeta((7,), "float64"),
        TensorMeta((3, 5), "float64"),
        TensorMeta((5, 7), "float64"),
        0.5,
        2.0,
    )
    assert addmm.kwargs == (("beta", 0.5), ("alpha", 2.0))
    assert addmm.outputs == (TensorMeta((3, 7), "float64"),)
    assert cat.inputs == ((TensorMeta((3, 5), "float64"), TensorMeta((3, 5), "float64")), 1)
    assert cat.outputs == (TensorMeta((3, 10), "float64"),)


def test_in_place_op_on_a_view_owns_its_copyslices_node():
    x = torch.randn(4, 4, requires_grad=True)
    with pyprof_live.profile() as p:
        y = x * 2
        y[0].mul_(3)  # CopySlices is created after mul_ returns: the naive rule gives it to sum
        y.sum().backward()
    ops = _ops(p)
    copy_slices = [op for op in ops if op.node == "torch::autograd::CopySlices"]
    assert copy_slices and {_fwd_name(p, op) for op in copy_slices} == {"aten::mul_"}
    assert {_fwd_name(p, op) for op in ops if op.node == "SumBackward0"} == {"aten::sum"}
    assert {_fwd_name(p, op) for op in ops if op.node == "MulBackward0"} == {"aten::mul"}


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * 2 * a


def test_custom_autograd_function_backward_is_tied_to_the_function():
    x = torch.randn(4, requires_grad=True)
    with pyprof_live.profile() as p:
        Square.apply(x).sum().backward()
    ops = _ops(p)
    square = [op for op in ops if op.name == "Square"]
    assert len(square) == 1 and square[0].kind == "function" and square[0].seq == 0
    inner = [op for op in ops if op.parent == ops.index(square[0])]
    # The mul inside forward runs with grad disabled: it creates no node and owns no number.
    assert [(op.name, op.seq) for op in inner] == [("aten::mul", -1)]
    bwd = [op for op in ops if op.node == "SquareBackward"]
    assert len(bwd) == 2 and {_fwd_name(p, op) for op in bwd} == {"Square"}


@pytest.mark.parametrize("reentrant", [False, True])
def test_activation_checkpointing_recompute_is_not_backward(reentrant):
    x = torch.randn(4, 4, requires_grad=True)
    w = torch.randn(4, 4, requires_grad=True)
    with pyprof_live.profile() as p:
        checkpoint(lambda a: (a @ w).relu(), x, use_reentrant=reentrant).sum().backward()
    ops = _ops(p)
    recompute = [op.name for op in ops if op.dir == "recompute" and op.name != "aten::detach"]
    assert recompute == ["aten::mm", "aten::relu"]
    bwd = [op for op in ops if op.dir == "bwd" and op.node in ("ReluBackward0", "MmBackward0")]
    assert {(op.node, _fwd_name(p, op)) for op in bwd} == {("ReluBackward0", "aten::relu"), ("MmBackward0", "aten::mm")}
    # With reentrant checkpointing the backward graph is the recomputed one: tied to recomputed ops.
    expected_dir = "recompute" if reentrant else "fwd"
    assert {ops[op.fwd].dir for op in bwd} == {expected_dir}


def test_optimizer_ops_are_opt_and_record_function_scopes_are_ranges():
    model = nn.Linear(4, 2)
    opt = torch.optim.AdamW(model.parameters())
    with pyprof_live.profile() as p:
        model(torch.randn(3, 4)).sum().backward()
        opt.step()
        model(torch.randn(3, 4))  # forward again after the step: fwd, not opt
    ops = _ops(p)
    assert {op.dir for op in ops if op.name in ("aten::lerp_", "aten::addcdiv_")} == {"opt"}
    assert ops[-1].name == "aten::addmm" and ops[-1].dir == "fwd"
    scopes = [r.name for r in p.records.ranges if r.kind == "record_function"]
    assert scopes == ["Optimizer.step#AdamW.step"]


def test_dataloader_ops_are_other_and_the_model_after_them_is_fwd():
    data = torch.utils.data.TensorDataset(torch.randn(6, 4))
    loader = torch.utils.data.DataLoader(data, batch_size=3)
    model = nn.Linear(4, 2)
    with pyprof_live.profile() as p:
        for (batch,) in loader:
            model(batch)
    ops = _ops(p)
    # Each batch: 3 row selects (TensorDataset[i]) and a stack (default collate).
    assert {op.dir for op in ops if op.name in ("aten::select", "aten::stack")} == {"other"}
    assert [op.dir for op in ops if op.name == "aten::addmm"] == ["fwd", "fwd"]
    fetches = [r.name for r in p.records.ranges if r.kind == "record_function"]
    assert len(fetches) == 3 and all(  # 2 batches, then the fetch that ends the loop
        name.startswith("enumerate(DataLoader)#") for name in fetches
    )


def test_module_paths_nested_layers_and_wrap():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ffn = nn.Linear(4, 4)

        def forward(self, x):
            with pyprof_live.layer("FFN"):
                nvtx.push_range("layer:LayerNorm")
                x = torch.nn.functional.layer_norm(x, (4,))
                nvtx.pop_range()
                return self.ffn(x)

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block(), Block()])

        @pyprof_live.layer("Encoder_2")
        def forward(self, x):
            return self.blocks[1](self.blocks[0](x))

    pyprof_live.wrap(Block, "forward")
    with pyprof_live.profile() as p:
        Encoder()(torch.randn(2, 4))
    ops = _ops(p)
    norms = [op for op in ops if op.name == "aten::native_layer_norm"]
    assert [op.layer for op in norms] == [("Encoder_2", "FFN", "LayerNorm")] * 2
    assert [op.module for op in norms] == ["Encoder.blocks.0", "Encoder.blocks.1"]
    addmm = [op for op in ops if op.name == "aten::addmm"]
    assert [op.layer for op in addmm] == [("Encoder_2", "FFN")] * 2
    assert [op.module for op in addmm] == ["Encoder.blocks.0.ffn", "Encoder.blocks.1.ffn"]
    # wrap(): the wrapped forward is a function record enclosing the block's ops.
    assert [ops[op.parent].name for op in addmm] == ["Block.forward", "Block.forward"]
    assert [op.mod for op in addmm] == ["Block", "Block"]  # PyProf's mod: the wrapped class
    layer_ranges = [r.name for r in p.records.ranges if r.kind == "layer"]
    assert layer_ranges.count("LayerNorm") == 2 and layer_ranges.count("Encoder_2") == 1


def test_torch_cuda_nvtx_ranges_are_seen(monkeypatch):
    """torch.cuda.nvtx reaches C only; the CPU wheel has no NVTX library, so a stub stands in for it."""
    import torch.cuda.nvtx as torch_nvtx

    class FakeNvtx:
        def rangePushA(self, msg):
            return 0

        def rangePop(self):
            return 0

    monkeypatch.setattr(torch_nvtx, "_nvtx", FakeNvtx())
    with pyprof_live.profile() as p:
        torch.cuda.nvtx.range_push("layer:head")
        torch.ones(2).sum()
        torch.cuda.nvtx.range_pop()
        with torch.cuda.nvtx.range("other"):
            torch.ones(2)
    ops = _ops(p)
    assert [(op.name, op.layer) for op in ops] == [
        ("aten::ones", ("head",)),
        ("aten::sum", ("head",)),
        ("aten::ones", ()),
    ]
    assert [(r.name, r.kind) for r in p.records.ranges if r.kind != "step"] == [("head", "layer"), ("other", "nvtx")]


def test_call_sites_point_at_user_code_innermost_first():
    def model_line(x):
        return x.relu()  # the op's call site

    with pyprof_live.profile() as p:
        call_line = sys._getframe().f_lineno + 1
        model_line(torch.randn(3))
    (relu,) = [op for op in _ops(p) if op.name == "aten::relu"]
    # the exact lines: model_line's return (the line after its def), then the line calling it
    assert relu.callsite == (
        f"test_capture.py:{model_line.__code__.co_firstlineno + 1}",
        f"test_capture.py:{call_line}",
    )
    with pyprof_live.profile(stack_depth=0) as p:
        model_line(torch.randn(3))
    assert [op.callsite for op in _ops(p)] == [(), ()]


def test_ops_on_other_threads_are_captured_with_their_thread_id():
    result = {}

    def work():
        result["tid"] = threading.get_ident()
        torch.ones(3).relu()

    with pyprof_live.profile() as p:
        torch.zeros(2)
        t = threading.Thread(target=work)
        t.start()
        t.join()
    tids = {op.name: op.tid for op in _ops(p)}
    assert tids["aten::relu"] == result["tid"] != tids["aten::zeros"]


def test_exception_propagates_and_every_hook_is_removed():
    model = nn.Linear(3, 3)
    with pytest.raises(ZeroDivisionError):
        with pyprof_live.profile() as p:
            model(torch.randn(2, 3))
            1 / 0
    assert [op.name for op in p.records.ops][-1] == "aten::addmm"  # what ran before is kept
    with pyprof_live.profile() as again:  # and profiling works again
        model(torch.randn(2, 3))
    assert [op.name for op in again.records.ops] == ["aten::randn", "aten::t", "aten::addmm"]


def test_nested_profile_is_a_clear_error():
    with pyprof_live.profile():
        with pytest.raises(pyprof_live.CaptureError, match="already recording"):
            pyprof_live.profile().start()


def test_hundred_profiles_in_a_row_each_start_at_sequence_zero():
    model = nn.Linear(4, 4)
    for _ in range(100):
        with pyprof_live.profile(stack_depth=0) as p:
            model(torch.randn(2, 4)).sum().backward()
        ops = _ops(p)
        assert [op.seq for op in ops if op.seq >= 0] == [0, 1, 2]  # t, addmm, sum
        bwd = [op for op in ops if op.dir == "bwd" and not op.param]
        assert bwd and all(op.fwd >= 0 for op in bwd)


def test_step_schedule_records_only_chosen_steps():
    hooked = []
    with pyprof_live.profile(steps=[1]) as p:
        for step in range(3):
            hooked.append(_get_current_dispatch_mode() is not None)
            torch.full((2,), float(step)).sum()
            p.step()
    assert hooked == [False, True, False]  # steps not recorded run without the op hook
    ops = _ops(p)
    assert [op.name for op in ops] == ["aten::full", "aten::sum"]
    assert [op.inputs[1] for op in ops if op.name == "aten::full"] == [1.0]
    assert [r.name for r in p.records.ranges if r.kind == "step"] == ["step 1"]


def test_record_cap_warns_once_and_marks_the_profile_truncated():
    with pytest.warns(RuntimeWarning, match="record cap of 5 ops"):
        with pyprof_live.profile(max_ops=5) as p:
            for _ in range(10):
                torch.ones(1)
    assert len(p.records.ops) == 5 and p.meta["truncated"] is True


class _Five:
    """An integer type of another library (numpy's int64, say): usable as an index, not an int."""

    def __index__(self) -> int:
        return 5


def test_the_record_cap_and_stack_depth_take_any_integer_type_and_refuse_the_rest():
    with pytest.warns(RuntimeWarning, match="record cap of 5 ops"):
        with pyprof_live.profile(max_ops=_Five(), stack_depth=_Five()) as p:
            for _ in range(10):
                torch.ones(1)
    assert len(p.records.ops) == 5 and type(p.session.max_ops) is int and p.session.stack_depth == 5
    with pytest.raises(TypeError, match="max_ops must be an integer, not '5'"):
        pyprof_live.profile(max_ops="5")
    with pytest.raises(ValueError, match="stack_depth must be 0 or more, not -1"):
        pyprof_live.profile(stack_depth=-1)


def test_profiling_does_not_change_results():
    def run(profiled: bool):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(6, 6), nn.GELU(), nn.Linear(6, 1))
        opt = torch.optim.AdamW(model.parameters())
        losses = []
        for _ in range(3):
            x = torch.randn(5, 6)
            if profiled:
                with pyprof_live.profile():
                    loss = model(x).pow(2).mean()
                    loss.backward()
                    opt.step()
            else:
                loss = model(x).pow(2).mean()
                loss.backward()
                opt.step()
            opt.zero_grad()
            losses.append(loss.detach().clone())
        return losses, [q.detach().clone() for q in model.parameters()]

    plain_losses, plain_params = run(False)
    prof_losses, prof_params = run(True)
    assert all(torch.equal(a, b) for a, b in zip(plain_losses, prof_losses))
    assert all(torch.equal(a, b) for a, b in zip(plain_params, prof_params))


@needs_compiled_runs
def test_torch_compile_under_profile_runs_compiled_and_reports_its_recompiles():
    @torch.compile(backend="eager")
    def f(x):
        return torch.sin(x) + 1

    model = torch.compile(nn.Linear(3, 3), backend="eager")
    f(torch.randn(3))  # compiled once outside the profile
    model(torch.randn(1, 3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pyprof_live.profile() as p:
            f(torch.randn(4))  # a new shape: recompiled under the profile, and run compiled
            model(torch.randn(2, 3))
    # No "ran eagerly" warning, nor torch's own about global module hooks (the profile's).
    assert not [str(w.message) for w in caught if "compile" in str(w.message)]
    recompiled = {c.name: c for c in p.records.compiles if c.kind == "recompile"}
    assert len(recompiled) == 2 and "f" in recompiled  # and the module's (torch's wrapper frame for nn.Linear)
    assert recompiled["f"].reason.endswith("tensor 'x' size mismatch at index 0. expected 3, actual 4")
    assert re.fullmatch(r"test_capture\.py:\d+", recompiled["f"].callsite[0])  # f's def line
    # The eager backend runs the graph's torch calls: the op hook sees them, inside the compiled graph.
    assert [op.name for op in p.records.ops][:3] == ["aten::randn", "aten::sin", "aten::add"]
    # The compiled module has the path of the module it wraps, not OptimizedModule._orig_mod.
    assert [op.module for op in p.records.ops if op.name == "aten::addmm"] == ["Linear"]


@needs_compiled_runs
@pytest.mark.e2e
def test_torch_compile_graph_compiled_before_the_profile_runs_compiled_and_its_kernels_are_rows():
    """A graph Inductor compiled before the profile runs compiled under it; its fused kernel is
    timed, but what it fused is not known (Inductor kept no provenance), and the report says so."""

    @torch.compile
    def f(x):
        return (x.sin() + 1).cos() @ x

    x = torch.randn(4, 4)
    expected = f(x)  # compiled (Inductor) before the profile
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pyprof_live.profile() as p:
            got = f(x)
            f(x)
    assert torch.equal(got, expected)  # it ran the user's compiled code, untouched
    messages = [str(w.message) for w in caught if "torch.compile" in str(w.message)]
    assert len(messages) == 1 and "compiled before the profile started" in messages[0]
    ops = p.records.ops
    kernels = [op for op in ops if op.kind == "compiled"]
    assert [k.name for k in kernels] == [kernels[0].name] * 2 and kernels[0].name.startswith("cpp_fused_")
    assert [op.name for op in ops if op.kind == "op"] == ["aten::mm", "aten::mm"]  # the extern calls
    assert {op.graph for op in kernels} == {op.graph for op in ops if op.name == "aten::mm"}
    assert re.fullmatch(r"aot\d+ inference", kernels[0].graph)
    assert all(re.fullmatch(r"test_capture\.py:\d+", k.callsite[0]) for k in kernels)  # where f was called


def test_gpu_cupti_without_cuda_is_a_typed_error():
    with pytest.raises(pyprof_live.GpuUnavailableError, match="needs a CUDA device"):
        pyprof_live.profile(gpu="cupti").start()


def test_start_stop_again_appends_to_the_same_profile():
    p = pyprof_live.profile()
    p.start()
    torch.ones(2)
    p.stop()
    p.start()
    torch.zeros(3)
    p.stop()
    assert [op.name for op in _ops(p)] == ["aten::ones", "aten::zeros"]
    assert p.session.raw_ops == []  # the raw tuples are dropped once they are records


@needs_compiled_runs
@pytest.mark.e2e
def test_torch_compile_first_called_inside_the_profile_is_compiled_under_it():
    """Dynamo not imported before the profile: start() imports it (not the user's first op)."""
    code = (
        "import sys, warnings, torch, pyprof_live\n"
        "assert 'torch._dynamo.convert_frame' not in sys.modules\n"
        "original = torch.compile\n"
        "with warnings.catch_warnings():\n"
        "    warnings.simplefilter('ignore')\n"
        "    with pyprof_live.profile() as p:\n"
        "        torch.compile(lambda x: torch.sin(x) + 1, backend='eager')(torch.randn(3))\n"
        "assert torch.compile is original\n"
        "print([(c.kind, c.name, c.callsite) for c in p.records.compiles])\n"
    )
    assert "('compile', '<lambda>', ('<string>:7',))" in run_in_a_fresh_process(code)


def test_backward_on_another_thread_is_tied_to_that_threads_forward_ops():
    """Autograd numbers nodes per thread: a worker's seq 0 is not the main thread's seq 0."""
    main_model, worker_model = nn.Linear(4, 4), nn.Linear(4, 4)

    def worker():
        worker_model(torch.randn(2, 4)).sum().backward()

    with pyprof_live.profile() as p:
        loss = main_model(torch.randn(2, 4)).sum()  # main thread: seq 0, 1, 2 (t, addmm, sum)
        t = threading.Thread(target=worker)  # worker thread: its own seq 0, 1, 2
        t.start()
        t.join()
        loss.backward()
    ops = _ops(p)
    bwd = [op for op in ops if op.dir == "bwd" and not op.param]
    assert len({op.tid for op in bwd}) == 2  # backward ran on both threads
    assert all(op.fwd >= 0 for op in bwd)
    # Each backward op is tied to a forward op of its own thread, and to the same kind of op.
    assert [(op.tid, op.node) for op in bwd if ops[op.fwd].tid != op.tid] == []
    assert {(op.node, ops[op.fwd].name) for op in bwd} == {
        ("SumBackward0", "aten::sum"),
        ("AddmmBackward0", "aten::addmm"),
        ("TBackward0", "aten::t"),
    }


def test_start_stop_again_keeps_ids_steps_and_sequence_numbers_distinct():
    p = pyprof_live.profile()
    for _ in range(2):
        p.start()
        nn.Linear(2, 2)(torch.randn(1, 2)).sum()
        p.step()
        p.stop()
    ops = _ops(p)
    assert len({op.external_id for op in ops}) == len(ops)
    assert [op.seq for op in ops if op.seq >= 0] == [0, 1, 2, 3, 4, 5]  # relative to the first start
    assert [r.name for r in p.records.ranges if r.kind == "step"] == ["step 0", "step 1"]


def test_nested_tensors_do_not_break_the_users_code():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch: "nested tensors are a prototype"
        nested = torch.nested.nested_tensor([torch.randn(2, 3), torch.randn(4, 3)])
        expected = (nested * 2).to_padded_tensor(0.0)
        with pyprof_live.profile() as p:
            got = (nested * 2).to_padded_tensor(0.0)
    assert torch.equal(got, expected)
    mul = [op for op in p.records.ops if op.name == "aten::mul"]
    assert mul and mul[0].inputs[0] == "nested tensor torch.float32"


def test_equal_scalars_of_different_types_keep_their_type():
    with pyprof_live.profile() as p:
        torch.full((2,), 1.0)
        torch.full((2,), 1)
        torch.full((2,), True)
    assert [type(op.inputs[1]) for op in p.records.ops] == [float, int, bool]


def test_in_place_op_that_saves_its_input_owns_the_node_its_clone_saw_first():
    """mul_ on a tensor that needs grad clones its input inside the autograd kernel: MulBackward0 is
    numbered (1), then the clone's own node (2); the clone is dispatched first and sees both."""
    x, y = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    with pyprof_live.profile() as p:
        a = x + 1  # seq 0
        a.mul_(y)
        a.sum().backward()
    ops = _ops(p)
    assert [(op.name, op.seq) for op in ops if op.dir == "fwd" and op.seq >= 0] == [
        ("aten::add", 0),
        ("aten::clone", 2),
        ("aten::mul_", 1),
        ("aten::sum", 3),
    ]
    mul_backward = [op for op in ops if op.node == "MulBackward0"]
    assert len(mul_backward) == 2 and {_fwd_name(p, op) for op in mul_backward} == {"aten::mul_"}


def test_ops_in_a_saved_tensor_pack_hook_leave_the_number_to_the_op_that_saves():
    """Pack hooks run with grad disabled after mm's node is numbered, before mm is dispatched."""
    w, x = torch.randn(4, 4, requires_grad=True), torch.randn(3, 4)
    with pyprof_live.profile() as p:
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            y = (x @ w).sum()
        y.backward()
    ops = _ops(p)
    # Outside any module, ops that create no node are "other": the pack hook's clone, backward()'s seed.
    assert [(op.name, op.seq, op.dir) for op in ops if op.dir != "bwd"] == [
        ("aten::clone", -1, "other"),
        ("aten::mm", 0, "fwd"),
        ("aten::sum", 1, "fwd"),
        ("aten::ones_like", -1, "other"),
    ]
    mm_backward = [op for op in ops if op.node == "MmBackward0"]
    assert len(mm_backward) == 2 and {_fwd_name(p, op) for op in mm_backward} == {"aten::mm"}


def test_nodes_numbered_in_steps_not_recorded_belong_to_no_recorded_op():
    w, x = torch.ones(3, requires_grad=True), torch.ones(3)
    with pyprof_live.profile(steps=[1]) as p:
        h = w.exp()  # step 0, not recorded: ExpBackward0 takes number 0 unseen
        p.step()
        x + 1  # creates no node: must not own exp's number
        (h * 3).sum().backward()
    ops = _ops(p)
    assert [(op.name, op.seq) for op in ops if op.dir != "bwd"] == [
        ("aten::add", -1),
        ("aten::mul", 1),
        ("aten::sum", 2),
        ("aten::ones_like", -1),
    ]
    # ExpBackward0's forward op ran in a step not recorded: its backward ops are tied to nothing.
    exp_backward = [op for op in ops if op.node == "ExpBackward0"]
    assert exp_backward and all(op.fwd == -1 for op in exp_backward)


def test_a_thread_ident_reused_by_a_new_thread_restarts_its_counter():
    """Python reuses the ident of a thread that ended; the new thread's counter starts at 0 again."""
    from pyprof_live.capture.finalize import _SequenceNumbers
    from pyprof_live.records import OpRecord

    numbers = _SequenceNumbers(start_peek=100, start_tid=1, last_peek={1: 100}, function_numbers=set())
    first = [OpRecord(name=n, start=0, end=0, tid=7, dir="fwd") for n in ("aten::exp", "aten::mul", "aten::sum")]
    for op, peek in zip(first, (1, 2, 3)):  # the first thread: exp, mul, sum number nodes 0, 1, 2
        numbers.assign(op, peek, may_number=True, view_inplace=False, in_place=False)
    sin = OpRecord(name="aten::sin", start=0, end=0, tid=7, dir="fwd")
    numbers.assign(sin, 1, may_number=True, view_inplace=False, in_place=False)  # a new thread, same ident
    assert [op.seq for op in first] + [sin.seq] == [0, 1, 2, 0]


@pytest.mark.e2e
def test_the_first_op_of_a_process_is_not_charged_with_importing_dynamo():
    """The dispatch mode imports torch._dynamo on its first op (1-2 s): start() does it beforehand."""
    code = (
        "import sys, torch, pyprof_live\n"
        "assert 'torch._dynamo' not in sys.modules\n"
        "x = torch.randn(3)\n"
        "with pyprof_live.profile() as p:\n"
        "    x.sin()\n"
        "(op,) = p.records.ops\n"
        "print(op.name, op.end - op.start)\n"
    )
    name, host_ns = run_in_a_fresh_process(code).split()
    assert name == "aten::sin" and int(host_ns) < 100_000_000  # 0.1 s: the import alone takes over 1 s


def test_a_keyboard_interrupt_inside_a_module_leaves_no_reference_to_the_model():
    import gc
    import weakref

    from pyprof_live.capture.context import context

    def interrupt(module, args):
        raise KeyboardInterrupt

    model = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
    model[1].register_forward_pre_hook(interrupt)
    model_ref = weakref.ref(model)
    with pytest.raises(KeyboardInterrupt):
        with pyprof_live.profile():
            model(torch.randn(2, 3))
    assert (context.module, context.module_stack) == ("", [])
    del model
    gc.collect()
    assert model_ref() is None


def test_a_jagged_tensor_shape_keeps_its_ragged_dimension_as_text_and_saves(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch: "nested tensors are a prototype"
        jagged = torch.nested.nested_tensor([torch.randn(2, 4), torch.randn(3, 4)], layout=torch.jagged)
    with pyprof_live.profile() as p:
        jagged.sin()
    (sin,) = [op for op in p.records.ops if op.name == "aten::sin"]
    batch, ragged, features = sin.inputs[0].shape
    assert (batch, features) == (2, 4) and re.fullmatch(r"j\d+", ragged)
    p.save(tmp_path / "jagged.pplive")
    loaded = pyprof_live.load(tmp_path / "jagged.pplive")
    assert [op.inputs for op in loaded.records.ops if op.name == "aten::sin"] == [sin.inputs]


def test_nvtx_message_given_by_keyword_after_another_keyword_names_the_layer():
    with pyprof_live.profile() as p:
        nvtx.push_range(color="red", message="layer:A")
        torch.ones(2)
        nvtx.pop_range()
    assert [(op.name, op.layer) for op in p.records.ops] == [("aten::ones", ("A",))]
    assert [(r.name, r.kind) for r in p.records.ranges if r.kind == "layer"] == [("A", "layer")]


def test_stop_takes_only_its_own_hook_off_the_mode_stack_and_keeps_the_users_thread_hook():
    from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode_stack

    class Counting(TorchDispatchMode):
        seen = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            Counting.seen += 1
            return func(*args, **(kwargs or {}))

    def users_thread_hook(frame, event, arg):
        pass

    p = pyprof_live.profile().start()
    users_mode = Counting()
    users_mode.__enter__()  # entered after start(), left after stop()
    threading.setprofile(users_thread_hook)  # set while recording
    p.stop()
    try:
        assert _get_current_dispatch_mode_stack() == [users_mode]
        torch.ones(2)
        assert Counting.seen == 1  # the user's mode still sees ops
        assert threading.getprofile() is users_thread_hook
    finally:
        users_mode.__exit__(None, None, None)
        threading.setprofile(None)
    assert _get_current_dispatch_mode_stack() == []


def test_a_view_that_sees_its_inputs_node_rebuilt_leaves_no_number_to_the_next_in_place_op():
    """h += x on a view of a Linear output makes transpose see two numbers (autograd rebuilds h's node as
    AsStridedBackward0, then numbers transpose's): the first belongs to no op dispatched later. (The view is
    explicit: a 3-D Linear output is a view up to torch 2.14, aten::_unsafe_view's non-view from 2.15.)"""
    torch.manual_seed(0)
    linear, norm = nn.Linear(8, 8), nn.BatchNorm1d(8)
    x = torch.randn(2, 5, 8)
    with pyprof_live.profile() as p:
        h = linear(x.view(10, 8)).view(2, 5, 8)
        h += x
        norm(h.transpose(1, 2)).sum().backward()
    ops = _ops(p)
    as_strided = [op for op in ops if op.node == "AsStridedBackward0"]
    assert as_strided and all(op.fwd == -1 for op in as_strided)
    # BatchNorm's num_batches_tracked += 1 (in place, grad enabled) owns no number.
    assert [op.seq for op in ops if op.name == "aten::add_" and op.module == "BatchNorm1d"] == [-1]


class Doubled(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        return t * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


def test_a_function_whose_output_needs_no_grad_still_owns_its_node_number():
    w, buffer = torch.randn(3, requires_grad=True), torch.zeros(1)
    with pyprof_live.profile() as p:
        c = Doubled.apply(torch.randn(3))  # numbers a node (0), though c needs no grad
        d = w * c  # 1
        buffer.add_(1)  # creates no node: must not own the Function's number
        d.sin().sum().backward()
    ops = _ops(p)
    assert [(op.name, op.seq) for op in ops if op.dir == "fwd" and op.seq >= 0] == [
        ("aten::mul", 1),
        ("aten::sin", 2),
        ("aten::sum", 3),
    ]


def test_a_closures_forward_inside_an_optimizer_step_is_fwd_and_its_backward_is_tied_to_it():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    x, y = torch.randn(4, 3), torch.randn(4, 1)
    opt = torch.optim.LBFGS(model.parameters(), max_iter=2)

    def closure():
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        return loss

    with pyprof_live.profile() as p:
        opt.step(closure)
    ops = _ops(p)
    assert {op.dir for op in ops if op.name in ("aten::addmm", "aten::mse_loss")} == {"fwd"}
    bwd = [op for op in ops if op.dir == "bwd" and not op.param]
    assert bwd and all(op.fwd >= 0 for op in bwd)
    assert {(op.node, _fwd_name(p, op)) for op in bwd} == {
        ("MseLossBackward0", "aten::mse_loss"),
        ("AddmmBackward0", "aten::addmm"),
        ("TBackward0", "aten::t"),
    }
    assert "opt" in {op.dir for op in ops}  # LBFGS's own math is still the optimizer's


def test_ops_that_cannot_create_a_node_leave_a_rebuilt_views_number_alone():
    """h.mul_ on a view of a Linear's output: reading h's grad_fn later rebuilds it as AsStridedBackward0, a
    number seen first by nn.GRU's zeros (hx), which takes no tensor. (The view is explicit: a 3-D Linear output
    is a view up to torch 2.14, aten::_unsafe_view's non-view from 2.15.)"""
    torch.manual_seed(0)
    linear, gru = nn.Linear(6, 8), nn.GRU(8, 8, batch_first=True)
    x = torch.randn(2, 3, 6)
    with pyprof_live.profile() as p:
        h = linear(x.view(6, 6)).view(2, 3, 8)
        h.mul_(2)
        gru(h)[0].sum().backward()
    ops = _ops(p)
    assert [op.seq for op in ops if op.name == "aten::zeros"] == [-1]
    as_strided = [op for op in ops if op.node == "AsStridedBackward0"]
    assert len(as_strided) == 4 and all(op.fwd == -1 for op in as_strided)
    tied = [op for op in ops if op.dir == "bwd" and op.fwd >= 0]
    assert {_fwd_name(p, op) for op in tied if op.node == "TransposeBackward0"} == {"aten::transpose"}


def test_a_dropped_profile_frees_its_records_without_the_garbage_collector():
    """The capture session's hooks hold it in reference cycles; it holds the records weakly, so they
    go when the profile goes, not at the collector's next full pass (which would walk them all)."""
    import gc
    import weakref

    lin = nn.Linear(4, 2)
    with pyprof_live.profile() as p:
        lin(torch.randn(3, 4)).sum().backward()
    assert [op.name for op in p.records.ops][:2] == ["aten::randn", "aten::t"]
    gone = weakref.ref(p.records)
    session = p.session
    gc.disable()
    try:
        del p
        assert gone() is None
    finally:
        gc.enable()
    with pytest.raises(pyprof_live.errors.CaptureError, match="no longer exists"):
        print(session.records)


def test_the_graph_break_log_level_is_set_for_the_profile_and_put_back_as_setlevel_would():
    """compile_events sets the graph-break logger's level without Logger.setLevel (which clears all of torch's
    ~380 loggers' caches): its own cached answers, and those of a logger below it, follow each change, also
    for a logger made after an earlier profile looked for the ones below (they are looked for again)."""
    from pyprof_live import torch_compat

    logger = torch_compat.graph_break_logger()
    with pyprof_live.profile():
        pass
    below = logging.getLogger(f"{logger.name}.test_below_{time.perf_counter_ns()}")  # a new name at each run
    if logger.isEnabledFor(logging.DEBUG):
        pytest.skip("the graph-break log is on (TORCH_LOGS): the profile leaves its level alone")
    before = (logger.level, logger.propagate)
    assert not logger.isEnabledFor(logging.DEBUG) and not below.isEnabledFor(logging.DEBUG)  # cached: False
    with pyprof_live.profile():
        assert logger.isEnabledFor(logging.DEBUG) and below.isEnabledFor(logging.DEBUG)
    assert (logger.level, logger.propagate) == before
    assert not logger.isEnabledFor(logging.DEBUG) and not below.isEnabledFor(logging.DEBUG)


def test_module_paths_and_parameter_names_are_learnt_as_named_parameters_names_them():
    """Parameters are named in the walk over modules, as nn.Module.named_parameters() names them: a tied
    parameter and a module at two paths keep their first name, a None bias has none, a compiled wrapper's
    ``_orig_mod`` is left out; a module that names its parameters its own way is asked for them."""
    from pyprof_live.capture.modules import ModuleNames

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(10, 4)
            self.head = nn.Linear(4, 10, bias=False)
            self.head.weight = self.embed.weight  # tied: named once, at its first module
            self.shared = nn.Linear(4, 4)
            self.again = self.shared  # one module at two paths: its first

    class NamesItsOwn(nn.Module):  # as FSDP does, leaving out the wrapper's own attribute
        def __init__(self):
            super().__init__()
            self.inner = nn.Linear(2, 2)

        def named_parameters(self, *args, **kwargs):
            for name, param in super().named_parameters(*args, **kwargs):
                yield name.removeprefix("inner."), param

    tied = Tied()
    compiled = torch.compile(tied)
    names = ModuleNames([])
    assert names._learn(compiled, []) == "Tied"
    assert {names.param_names[id(p)] for p in tied.parameters()} == {
        "Tied.embed.weight",
        "Tied.shared.weight",
        "Tied.shared.bias",
    }
    assert len(names.param_names) == 3
    assert names.param_names[id(tied.head.weight)] == "Tied.embed.weight"
    modules = {id(m): path for m, path in [(compiled, "Tied"), (tied, "Tied"), (tied.embed, "Tied.embed")]}
    modules.update({id(tied.head): "Tied.head", id(tied.shared): "Tied.shared"})
    assert names.paths == modules
    own = NamesItsOwn()
    assert names._learn(own, []) == "NamesItsOwn"
    assert names.param_names[id(own.inner.weight)] == "NamesItsOwn.weight"
    assert names.param_names[id(own.inner.bias)] == "NamesItsOwn.bias"
    assert names.paths[id(own.inner)] == "NamesItsOwn.inner"


def test_the_op_hook_a_compile_took_off_comes_back_at_the_next_step_when_dynamo_ends_it_on_another_thread():
    """A compile takes the op hook off its thread's mode stack (torch's DDP path leaves dispatch modes on while it
    traces); Dynamo tells only the outermost of concurrent compiles' end, on the thread that ends last."""
    with pyprof_live.profile() as p:
        session = p.session
        session._pause_hooks()  # Dynamo starts compiling on this thread
        assert _get_current_dispatch_mode() is not session._recorder
        ended = threading.Thread(target=session._resume_hooks)  # ...and ends it on another
        ended.start()
        ended.join()
        torch.ones(2).add(1)  # the hook is still off here
        p.step()
        torch.ones(2).mul(3)
    names = {op.name for op in p.records.ops}
    assert "aten::mul" in names and "aten::add" not in names
