"""Inductor provenance (TORCH_TRACE logs) -> kernel -> fused ATen ops and user lines, on the 4 real tlparse logs.

Every kernel of every log is checked, whole: expected values were read by hand from the logs'
``inductor_provenance_tracking_node_mappings`` / ``inductor_triton_kernel_to_post_grad_nodes`` (nodes),
``after_post_grad_graph`` (each node's ``torch.ops.aten.*`` target and the ``# File: ...:LINE`` comment
above it), ``inductor_provenance_tracking_kernel_stack_traces`` (innermost ``File "...", line N`` of each
stack) and the wrapper's ``Original ATen: [...]`` comment before each call.
"""

import pytest

from pyprof_live.errors import ProfileFormatError
from pyprof_live.importers.provenance import read_provenance, tensor_type
from pyprof_live.records import TensorMeta

MUL, ADD, MM = "aten::mul.Tensor", "aten::add.Tensor", "aten::mm.default"
GELU_NODES = (
    ("mul_3", MUL),
    ("mul_1", MUL),
    ("add_tensor", ADD),
    ("add", ADD),
    ("erf", "aten::erf.default"),
    ("mul_2", MUL),
)
SIGMOID_NODES = (("sigmoid", "aten::sigmoid.default"), ("relu", "aten::relu.default"), ("add_tensor_1", ADD))


def kernels(path):
    graphs = read_provenance(path)
    return graphs, {(k.kernel, k.handle): k for g in graphs for k in g.kernels}


def nodes(k):
    return tuple((n.name, n.op) for n in k.nodes)


def test_jit_cuda_log(shared_data):
    graphs, found = kernels(shared_data / "provenance" / "tlparse_inductor_provenance_jit_cuda_log.txt")
    (graph,) = graphs
    # frame_id 0 / frame_compile_id 0; "# AOT ID: ['0_inference']"; fx_graph_cache_miss "key"
    assert (graph.compile_id, graph.aot_id) == ("0/0", "0_inference")
    assert graph.cache_key == "fe6uirnxbbjcbd7ao6a5occ2sz7cm4qn4q3xiqyfijin6vil572i"
    assert set(found) == {
        ("triton_poi_fused_addmm_relu_sigmoid_0", None),
        ("triton_poi_fused_mul_1", None),
        ("triton_poi_fused_addmm_gelu_2", None),
        ("extern_kernels.mm", None),
    }
    k = found["triton_poi_fused_addmm_relu_sigmoid_0", None]
    # sigmoid <- "# File: ...aot.py:31 ... x = self.sigmoid(x)"; relu and add_tensor_1 <- aot.py:30 / fc1 line
    assert nodes(k) == SIGMOID_NODES and k.lines == ("aot.py:31", "aot.py:30")
    assert k.original_aten == ("aten::addmm", "aten::relu", "aten::sigmoid")
    assert k.ops == ("aten::sigmoid.default", "aten::relu.default", ADD) and not k.extern
    k = found["triton_poi_fused_mul_1", None]
    assert (nodes(k), k.lines, k.original_aten) == ((("mul", MUL),), ("aot.py:32",), ("aten::mul",))
    assert k.nodes[0].output == TensorMeta((10, 20), "float32", (20, 1))  # mul: "f32[10, 20][20, 1]cuda:0"
    k = found["triton_poi_fused_addmm_gelu_2", None]
    assert (nodes(k), k.lines, k.original_aten) == (GELU_NODES, ("aot.py:34",), ("aten::addmm", "aten::gelu"))
    k = found["extern_kernels.mm", None]
    # one entry for both mm calls (no debug handles in this log): its first call site's comment
    assert nodes(k) == (("mm_default_1", MM), ("mm_default", MM), ("mul", MUL)) and k.extern
    assert k.lines == ("aot.py:32",) and k.original_aten == ("aten::addmm",)


def test_jit_debug_handle_log_has_one_entry_per_call_site(shared_data):
    graphs, found = kernels(shared_data / "provenance" / "tlparse_inductor_provenance_jit_debug_handle_log.txt")
    (graph,) = graphs
    assert (graph.compile_id, graph.aot_id, graph.cache_key) == ("0/0", "0_forward", "")  # cache bypassed
    assert sorted(found, key=lambda key: key[1]) == [
        ("triton_poi_fused_addmm_relu_sigmoid_threshold_backward_0", 1),
        ("triton_poi_fused_mul_1", 2),
        ("triton_poi_fused_addmm_gelu_2", 3),
        ("extern_kernels.mm", 4),
        ("extern_kernels.mm", 5),
    ]
    line = "test_provenance_tracing.py:{}".format
    k = found["triton_poi_fused_addmm_relu_sigmoid_threshold_backward_0", 1]
    # the stack-trace artifact: 3 stacks, innermost frames at lines 81, 80, 79
    assert nodes(k) == (*SIGMOID_NODES, ("le", "aten::le.Scalar")) and k.lines == (line(81), line(80), line(79))
    assert k.original_aten == ("aten::addmm", "aten::relu", "aten::sigmoid", "aten::threshold_backward")
    k = found["triton_poi_fused_mul_1", 2]
    assert (nodes(k), k.lines, k.original_aten) == ((("mul", MUL),), (line(82),), ("aten::mul",))
    k = found["triton_poi_fused_addmm_gelu_2", 3]
    assert (nodes(k), k.lines, k.original_aten) == (GELU_NODES, (line(84), line(83)), ("aten::addmm", "aten::gelu"))
    k = found["extern_kernels.mm", 4]
    assert (nodes(k), k.lines, k.original_aten) == ((("mm_default_1", MM),), (line(79),), ("aten::t", "aten::addmm"))
    k = found["extern_kernels.mm", 5]
    assert (nodes(k), k.lines, k.original_aten) == ((("mm_default", MM),), (line(83),), ("aten::mul", "aten::addmm"))


def aot_kernels(found):
    k = found["triton_poi_fused_addmm_relu_sigmoid_0", None]
    # sigmoid <- torch/nn/modules/activation.py:329, relu <- activation.py:135, add_tensor_1 "No stacktrace"
    assert (nodes(k), k.lines) == (SIGMOID_NODES, ("activation.py:329", "activation.py:135"))
    assert k.original_aten == ("aten::addmm", "aten::relu", "aten::sigmoid")  # the C++ wrapper's // comment
    k = found["triton_poi_fused_mul_1", None]
    assert (nodes(k), k.lines, k.original_aten) == ((("mul", MUL),), ("aot.py:32",), ("aten::mul",))
    k = found["triton_poi_fused_addmm_gelu_2", None]
    assert (nodes(k), k.lines, k.original_aten) == (GELU_NODES, ("aot.py:34",), ("aten::addmm", "aten::gelu"))
    k = found["aoti_torch_cuda_mm_out", None]
    assert nodes(k) == (("mm_default_1", MM), ("mm_default", MM), ("mul", MUL)) and k.extern
    assert (k.lines, k.original_aten) == (("aot.py:32",), ("aten::addmm",))


def test_aot_cuda_log(shared_data):
    graphs, found = kernels(shared_data / "provenance" / "tlparse_inductor_provenance_aot_cuda_log.txt")
    (graph,) = graphs
    assert (graph.compile_id, graph.aot_id, graph.cache_key) == ("", "", "")  # AOTInductor: no frame, no AOT id line
    assert len(found) == 4
    aot_kernels(found)


def test_extended_log_keeps_stack_traces_of_kernels_without_nodes(shared_data):
    """The same AOT run plus a stack-trace artifact for 5 kernels of other programs (tlparse's test input):
    they are reported with their lines and no nodes, never matched to the graph's kernels by name."""
    graphs, found = kernels(shared_data / "provenance" / "tlparse_inductor_provenance_extended_log.txt")
    assert len(graphs) == 1 and len(found) == 4 + 5
    aot_kernels(found)
    k = found["triton_kernel", None]
    assert (k.nodes, k.lines) == ((), ("x.py:1", "x.py:2"))
    k = found["triton_poi_fused_add_cat_mul_neg_slice_unsqueeze_0", None]
    # 10 stacks; innermost frames in order, repeats dropped: 74, 72, 50, 49, 48, 73, 75 (75's rotate_half frames repeat)
    assert k.lines == tuple(f"rope.py:{n}" for n in (74, 72, 50, 49, 48, 73, 75))
    assert found["extern_kernels.mm", None].lines == ("utils.py:92",)
    assert found["triton_poi_fused_view_3", None].lines == ("layer.py:255",)
    k = found["triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0", None]
    assert k.lines == tuple(f"layernorm.py:{n}" for n in (145, 125, 150, 148, 147)) and k.nodes == ()


def test_tensor_types():
    assert tensor_type('"b8[8, 16][16, 1]cuda:0"') == TensorMeta((8, 16), "bool", (16, 1))
    assert tensor_type("bf16[s0, 4][4, 1]cpu") == TensorMeta(("s0", 4), "bfloat16", (4, 1))
    assert tensor_type("Sym(s0)") is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "not a torch.compile structured log (TORCH_TRACE): no log entry found"),
        ("hello\n", "line 1: not a TORCH_TRACE log entry"),
        ("\t{}\n", "line 1: payload line before any log entry"),
        ("V0521 11:50:47.831000 1 f.py:1] {bad}\n", "line 1: entry metadata is not JSON"),
        (
            'V0521 11:50:47.831000 1 f.py:1] {"artifact": {"name": "inductor_triton_kernel_to_post_grad_nodes"}}\n\t[1\n',
            "line 1: artifact payload is not JSON",
        ),
    ],
)
def test_bad_logs_are_one_line_errors(tmp_path, text, problem):
    path = tmp_path / "log.txt"
    path.write_text(text)
    with pytest.raises(ProfileFormatError) as error:
        read_provenance(path)
    assert str(error.value) == f"{path}: {problem}"
