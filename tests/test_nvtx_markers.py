"""PyTorch / PyProf NVTX marker texts -> op facts, and NVTX ranges -> records.

The emit_nvtx fixtures follow PyTorch's own format strings:
- ``getNvtxStr`` in torch/csrc/profiler/util.cpp (PyTorch >= 1.13):
  ``"{name}, seq = {seq}"``, then ``", op_id = {op_id}"``, ``", sizes = {shapesToStr}"`` (``[[32, 512], []]``)
  and ``", input_op_ids = {inputOpIdsToStr}"`` (``[(38,0), (39,0)]``); a sequence number of -1 leaves the
  bare name; ``op_id`` is always passed by torch/csrc/profiler/standalone/nvtx_observer.cpp.
- torch/csrc/autograd/profiler.cpp of PyTorch 1.5-1.12: ``name << ", seq = " << seq`` then ``", sizes = [...]"``;
  node ranges get the node's own sequence number (``Node::operator()`` records ``sequence_nr()``).
- torch/csrc/autograd/profiler.cpp of PyTorch 0.4-1.0: ``", seq="`` for ops and ``", stashed seq="`` for nodes.
PyProf/DLProf dict markers follow apex/pyprof/nvtx/nvmarker.py (``traceMarker``, ``modMarker``, ``argMarker``).
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyprof_live.importers.nvtx_markers import (
    MARK,
    PUSH_POP,
    START_END,
    Marker,
    RangesOutOfOrder,
    parse_marker,
    records_from_ranges,
)
from pyprof_live.records import NO_LINK, TensorMeta, Unknown

# --- emit_nvtx -------------------------------------------------------------------------------------


def test_current_pytorch_op_with_every_field():
    m = parse_marker(
        "aten::addmm, seq = 12, op_id = 40, sizes = [[512], [32, 512], [512, 512], [], []], "
        "input_op_ids = [(38,0), (39,0)]"
    )
    assert m == Marker(
        "op",
        "aten::addmm",
        seq=12,
        op_id=40,
        inputs=(
            TensorMeta((512,)),
            TensorMeta((32, 512)),
            TensorMeta((512, 512)),
            Unknown("no shape recorded"),
            Unknown("no shape recorded"),
        ),
    )  # input_op_ids (graph edges) is matched but not kept: no record field holds it


def test_op_without_sequence_number_keeps_its_op_id_and_sizes():
    # getNvtxStr with sequence_nr == -1: the name alone, then the other fields.
    m = parse_marker("aten::empty, op_id = 7, sizes = [[], [], []]")
    assert (m.kind, m.name, m.seq, m.op_id, len(m.inputs)) == ("op", "aten::empty", NO_LINK, 7, 3)


def test_bare_names_are_ops_only_in_pytorch_op_namespaces():
    assert parse_marker("aten::resize_") == Marker("op", "aten::resize_")
    assert parse_marker("prim::TupleConstruct") == Marker("op", "prim::TupleConstruct")
    # nvFuser's and TensorRT's own ranges stay plain ranges.
    assert parse_marker("FusionCache::get") is None
    assert parse_marker("fusion_executor::allocations::inferShape") is None
    assert parse_marker("myelinTensorGetMemory") is None


def test_backward_nodes_carry_the_forward_sequence_number_as_altseq():
    assert parse_marker("AddmmBackward0, seq = 12, op_id = 55") == Marker("node", "AddmmBackward0", altseq=12, op_id=55)
    assert parse_marker("NllLossBackward, seq = 128") == Marker("node", "NllLossBackward", altseq=128)
    assert parse_marker("torch::autograd::CopyBackwards, seq = 92") == Marker(
        "node", "torch::autograd::CopyBackwards", altseq=92
    )
    # AccumulateGrad has no sequence number (UINT64_MAX prints as none); GraphRoot has no forward op.
    assert parse_marker("torch::autograd::AccumulateGrad") == Marker("node", "torch::autograd::AccumulateGrad")
    assert parse_marker("torch::autograd::GraphRoot, seq = 129") == Marker("node", "torch::autograd::GraphRoot")


def test_lowercase_backward_ops_are_ops_not_nodes():
    m = parse_marker("native_layer_norm_backward, seq = 0")
    assert (m.kind, m.name, m.seq) == ("op", "aten::native_layer_norm_backward", 0)


def test_pre_1_6_names_get_the_aten_prefix():
    assert parse_marker("embedding, seq = 115") == Marker("op", "aten::embedding", seq=115)
    m = parse_marker("add_, seq = 3, sizes = [[4, 8], [4, 8], []]")
    assert (m.name, m.inputs[:2]) == ("aten::add_", (TensorMeta((4, 8)), TensorMeta((4, 8))))


def test_pytorch_1_0_forms():
    assert parse_marker("relu, seq=5") == Marker("op", "aten::relu", seq=5)
    assert parse_marker("ThresholdBackward0, stashed seq=5") == Marker("node", "ThresholdBackward0", altseq=5)


def test_texts_that_are_not_emit_nvtx():
    for text in (
        "",
        "step 0",
        "aten::mm, seq = x",
        "aten::mm, seq = 3, extra = 1",
        "aten::mm, sizes = [[1, 2]",
        ", seq = 3",
        "layer:",
    ):
        assert parse_marker(text) is None, text


# --- layer: ----------------------------------------------------------------------------------------


def test_layer_names_keep_everything_after_the_prefix():
    assert parse_marker("layer:Conv1") == Marker("layer", "Conv1")
    assert parse_marker("layer:encoder:attn") == Marker("layer", "encoder:attn")  # PyProf kept only "encoder"


# --- PyProf / DLProf dict markers ------------------------------------------------------------------

# Texts taken from nsys2022.1_pytorch_emitnvtx_dlprof_rtx2070s.sqlite (DLProf 2022, funcStack variant).
TRACE = (
    "{'traceMarker': ['dummy_network.py:41', '/home/u/.local/lib/python3.6/site-packages/torch/nn/modules/"
    "module.py:1102', 'dummy_network.py:25', '/home/u/.local/lib/python3.6/site-packages/torch/nn/modules/"
    "conv.py:446', '/home/u/.local/lib/python3.6/site-packages/apex/pyprof/nvtx/nvmarker.py:95'], "
    "'funcStack': '/<module>/forward/conv2d'}"
)
CONV_ARGS = (
    "{'mod': 'torch.nn.functional', 'op': 'conv2d', 'callid': 7, 'input_callids': [], 'args': ["
    "{'name': '', 'type': 'tensor', 'shape': (1, 3, 32, 32), 'dtype': 'float32'}, "
    "{'name': '', 'type': 'tensor', 'shape': (6, 3, 3, 3), 'dtype': 'float32'}, "
    "{'name': '', 'type': 'tensor', 'shape': (6,), 'dtype': 'float32'}, "
    "{'name': '', 'type': 'tuple', 'value': (1, 1)}, "
    "{'name': 'padding', 'type': 'list', 'value': [0, 0]}, "
    "{'name': 'dilation', 'type': 'int', 'value': 1}, "
    "{'name': 'eps', 'type': 'float', 'value': 'inf'}, "
    "{'name': 'inplace', 'type': 'bool', 'value': False}, "
    "{'name': 'out', 'type': 'NoneType', 'value': None}, "
    "{'name': 'reduction', 'type': 'str', 'value': 'it\\'s mean'}]}"
)


def test_trace_marker_keeps_user_frames_innermost_first():
    assert parse_marker(TRACE) == Marker("trace", callsite=("dummy_network.py:25", "dummy_network.py:41"))


def test_argument_marker_becomes_a_wrapped_call_with_typed_arguments():
    m = parse_marker(CONV_ARGS)
    assert (m.kind, m.name, m.mod) == ("function", "conv2d", "torch.nn.functional")
    assert m.inputs == (
        TensorMeta((1, 3, 32, 32), "float32"),
        TensorMeta((6, 3, 3, 3), "float32"),
        TensorMeta((6,), "float32"),
        (1, 1),
    )
    assert m.kwargs == (
        ("padding", (0, 0)),
        ("dilation", 1),
        ("eps", "inf"),
        ("inplace", False),
        ("out", None),
        ("reduction", "it's mean"),
    )


def test_module_marker_gives_the_module_repr():
    m = parse_marker("{'mod': 'Conv2d', 'strRepr': '3, 6, kernel_size=(3, 3), stride=(1, 1)'}")
    assert m == Marker("module", "Conv2d(3, 6, kernel_size=(3, 3), stride=(1, 1))")


def test_ndarray_and_unreadable_arguments():
    m = parse_marker(
        "{'mod': 'torch', 'op': 'from_numpy', 'args': [{'name': '', 'type': 'ndarray', "
        "'shape': (2, 2), 'dtype': 'float64'}, {'name': '', 'type': 'device'}, 5]}"
    )
    assert m.inputs == (TensorMeta((2, 2), "float64"), Unknown("device"), Unknown("unreadable argument"))


def test_dicts_that_are_not_pyprof_markers():
    for text in (
        '{"model_config": {"emit_nvtx": true}}',  # DLProf's JSON config marker: `true` is not Python
        "{'mod': 'x'",
        "{'op': 'conv2d', 'args': []}",
        "{[1]: 2}",
        "{'mod': 1, 'op': 'x'}",
        "{'traceMarker': 'a.py:1'}",
        "{'mod': 'torch', 'op': 'x', 'args': 3}",
        "{'a': 1} 2",
        "{ForeignNode[/ConstantOfShape_3_output_0.../ScatterND_23]}",
        "[" * 5000,
        "{'a': '\\U99999999'}",
    ):
        assert parse_marker(text) is None, text[:40]


# --- fuzzing ---------------------------------------------------------------------------------------

_MARKER_ALPHABET = "{}[](),:'\"\\ =_-.eE0123456789abmodpsqtrxyzBackward"
_texts = st.one_of(
    st.text(),
    st.text(alphabet=_MARKER_ALPHABET),
    st.builds(lambda tail: "{'mod': 'torch', 'op': " + tail, st.text(alphabet=_MARKER_ALPHABET)),
    st.builds(lambda tail: "aten::mm, seq = 1" + tail, st.text(alphabet=_MARKER_ALPHABET)),
    st.builds(lambda tail: "layer:" + tail, st.text()),
)


@settings(max_examples=2000)
@given(_texts)
def test_any_text_is_parsed_or_rejected_never_raises(text):
    assert parse_marker(text) is None or isinstance(parse_marker(text), Marker)


def _get_nvtx_str(name, seq, op_id, shapes, input_op_ids):
    """A Python rendering of getNvtxStr (torch/csrc/profiler/util.cpp), the format being parsed."""
    text = f"{name}, seq = {seq}" if seq >= 0 else name
    if op_id > 0:
        text += f", op_id = {op_id}"
    if shapes:
        text += ", sizes = [" + ", ".join("[" + ", ".join(map(str, s)) + "]" for s in shapes) + "]"
    if input_op_ids:
        text += ", input_op_ids = [" + ", ".join(f"({a},{b})" for a, b in input_op_ids) + "]"
    return text


@settings(max_examples=500)
@given(
    name=st.sampled_from(["aten::mm", "aten::_to_copy", "aten::add_", "aten::conv2d", "mylib::custom_op"]),
    seq=st.integers(-1, 10**6),
    op_id=st.integers(1, 10**9),
    shapes=st.lists(st.lists(st.integers(0, 10**5), max_size=5), max_size=6),
    input_op_ids=st.lists(st.tuples(st.integers(1, 10**6), st.integers(0, 4)), max_size=4),
)
def test_get_nvtx_str_round_trips(name, seq, op_id, shapes, input_op_ids):
    m = parse_marker(_get_nvtx_str(name, seq, op_id, shapes, input_op_ids))
    assert (m.kind, m.name, m.seq, m.op_id) == ("op", name, seq, op_id)
    assert m.inputs == tuple(TensorMeta(tuple(s)) if s else Unknown("no shape recorded") for s in shapes)


# --- ranges -> records -----------------------------------------------------------------------------

THREADS = {"main": (7, 70), "other": (7, 71)}
DOMAINS = {0: "", 3: "MyLib"}


def test_context_ranges_fold_into_the_ops_they_enclose():
    rows = [  # (start, end, thread, text, domain, how), sorted by start then longest first
        (0, 1000, "main", "layer:Encoder", 0, PUSH_POP),
        (10, 500, "main", TRACE, 0, PUSH_POP),
        (15, 495, "main", "{'mod': 'Conv2d', 'strRepr': '3, 6, kernel_size=(3, 3)'}", 0, PUSH_POP),
        (20, 490, "main", CONV_ARGS, 0, PUSH_POP),
        (30, 480, "main", "aten::conv2d, seq = 0, op_id = 9", 0, PUSH_POP),
        (30, 40, "other", "aten::relu, seq = 4", 0, PUSH_POP),
        (600, 900, "main", "layer:FFN", 0, PUSH_POP),
        (610, 890, "main", "aten::relu, seq = 1", 0, PUSH_POP),
        (950, 960, "main", "just a range", 3, PUSH_POP),
        (1100, 1200, "main", "aten::empty", 0, PUSH_POP),
        (1300, 1400, "main", "warmup", 3, START_END),
        (1500, 1500, "main", "checkpoint", 0, MARK),
    ]
    ops, ranges = records_from_ranges(rows, THREADS, DOMAINS)
    assert [(o.name, o.kind, o.seq, o.external_id, o.layer, o.callsite, o.module) for o in ops] == [
        (
            "conv2d",
            "function",
            NO_LINK,
            NO_LINK,
            ("Encoder",),
            ("dummy_network.py:25", "dummy_network.py:41"),
            "Conv2d(3, 6, kernel_size=(3, 3))",
        ),
        (
            "aten::conv2d",
            "op",
            0,
            9,
            ("Encoder",),
            ("dummy_network.py:25", "dummy_network.py:41"),
            "Conv2d(3, 6, kernel_size=(3, 3))",
        ),
        ("aten::relu", "op", 4, NO_LINK, (), (), ""),  # another thread: none of main's context
        ("aten::relu", "op", 1, NO_LINK, ("Encoder", "FFN"), (), ""),  # the trace range ended at 500
        ("aten::empty", "op", NO_LINK, NO_LINK, (), (), ""),
    ]
    assert ops[0].mod == "torch.nn.functional" and ops[0].inputs[0] == TensorMeta((1, 3, 32, 32), "float32")
    assert [(o.pid, o.tid, o.dir) for o in ops[1:3]] == [(7, 70, ""), (7, 71, "")]
    assert [(r.name, r.start, r.end, r.kind, r.domain, r.tid) for r in ranges] == [
        ("Encoder", 0, 1000, "layer", "", 70),
        ("FFN", 600, 900, "layer", "", 70),
        ("just a range", 950, 960, "nvtx", "MyLib", 70),
        ("warmup", 1300, 1400, "nvtx", "MyLib", 70),
        ("checkpoint", 1500, 1500, "marker", "", 70),
    ]


def test_node_ranges_are_backward_and_ops_take_direction_from_correlation():
    rows = [
        (0, 100, "other", "MmBackward0, seq = 12, op_id = 60", 0, PUSH_POP),
        (10, 90, "other", "aten::mm, seq = 57, op_id = 61", 0, PUSH_POP),
    ]
    node, op = records_from_ranges(rows, THREADS, DOMAINS)[0]
    assert (node.kind, node.dir, node.seq, node.altseq, node.node) == ("node", "bwd", NO_LINK, 12, "MmBackward0")
    assert (op.kind, op.dir, op.seq, op.altseq, op.node) == ("op", "", 57, NO_LINK, "")


def test_start_end_ranges_never_become_ops():
    ops, ranges = records_from_ranges([(0, 9, "main", "aten::mm, seq = 1", 0, START_END)], THREADS, DOMAINS)
    assert ops == [] and [r.name for r in ranges] == ["aten::mm, seq = 1"]


def test_rows_out_of_order_are_refused():
    for rows in (
        [(5, 9, "main", "a", 0, PUSH_POP), (4, 9, "main", "b", 0, PUSH_POP)],
        [(5, 6, "main", "child", 0, PUSH_POP), (5, 9, "main", "parent", 0, PUSH_POP)],
    ):
        with pytest.raises(RangesOutOfOrder):
            records_from_ranges(rows, THREADS, DOMAINS)


def test_input_op_ids_alone_still_make_an_op():
    # The edges are matched (so the text is an op, not a plain range), not kept.
    assert parse_marker("mylib::custom, input_op_ids = [(3,0), (4, -1)]") == Marker("op", "mylib::custom")


def test_texts_of_any_column_type_become_range_names():
    # An untyped SQLite column can hold a number, bytes, or NULL as an NVTX text.
    rows = [
        (0, 9, "main", 42, 0, PUSH_POP),
        (1, 8, "main", b"aten::mm, seq = 3", 0, PUSH_POP),
        (2, 7, "main", None, 0, PUSH_POP),
    ]
    ops, ranges = records_from_ranges(rows, THREADS, DOMAINS)
    assert [(o.name, o.seq) for o in ops] == [("aten::mm", 3)]
    assert [r.name for r in ranges] == ["42", ""]


def test_a_null_start_is_a_type_error_for_the_caller_to_report():
    with pytest.raises(TypeError):
        records_from_ranges([(None, 9, "main", "a", 0, PUSH_POP)], THREADS, DOMAINS)
