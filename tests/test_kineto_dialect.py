"""The Kineto dialect of the torch these tests run on: a trace it writes loads, with shapes, flops, call sites,
modules and backward links.

CI runs this file on the oldest supported torch, on 2.13.0+cpu and on the newest release, so every dialect in
the supported range is read; ../shared/data holds no trace whose torch version is known. The trace is recorded
here by torch.profiler on CPU (a tiny CNN, record_shapes, with_stack), in a temporary folder, never committed.
"""

import json

import pytest
import torch
import torch.nn as nn

import pyprof_live
from pyprof_live.formulas import evaluate
from pyprof_live.records import TensorMeta

CPU = torch.profiler.ProfilerActivity.CPU


def _step(model, x):
    model(x).sum().backward()


#: The innermost user frame of every op of the step: Kineto names a Python frame by its function's first line.
STEP_LINE = _step.__code__.co_firstlineno


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 5))
    path = tmp_path_factory.mktemp("kineto") / "trace.json"
    with torch.profiler.profile(activities=[CPU], record_shapes=True, with_stack=True) as prof:
        _step(model, torch.randn(2, 3, 8, 8))
    prof.export_chrome_trace(str(path))
    return path


@pytest.fixture(scope="module")
def trace(recorded):
    profile = pyprof_live.load_kineto(recorded)
    profile.correlation
    return profile


def _one(profile, name):
    found = [op for op in profile.records.ops if op.name == name]
    assert len(found) == 1, (name, len(found))
    return found[0]


def test_the_trace_is_this_torchs_kineto_dialect(recorded):
    header = json.loads(recorded.read_bytes().decode("utf-8", "replace"), strict=False)
    assert header["schemaVersion"] == 1 and header["record_shapes"] == 1 and header["with_stack"] == 1
    categories = {event.get("cat") for event in header["traceEvents"]}
    assert {"cpu_op", "python_function"} <= categories


def test_ops_of_a_cnn_step_with_their_counts(trace):
    names = [op.name for op in trace.records.ops]
    # Forward: conv2d -> convolution (one each); Linear's addmm; backward: addmm's two mm (grad input, grad
    # weight) and one convolution_backward; one AccumulateGrad per parameter (2 weights, 2 biases).
    assert {name: names.count(name) for name in ("aten::conv2d", "aten::convolution", "aten::addmm")} == {
        "aten::conv2d": 1,
        "aten::convolution": 1,
        "aten::addmm": 1,
    }
    assert names.count("aten::mm") == 2 and names.count("aten::convolution_backward") == 1
    assert names.count("torch::autograd::AccumulateGrad") == 4


def test_shapes_dtypes_and_formulas_of_recorded_ops(trace):
    addmm = _one(trace, "aten::addmm")
    assert addmm.inputs[:3] == (
        TensorMeta((5,), "float32", (1,)),
        TensorMeta((2, 144), "float32", (144, 1)),
        TensorMeta((144, 5), "float32", (1, 144)),
    )
    # addmm: 2 * 2 * 144 * 5 = 2880 flops; bytes 4 * (5 + 288 + 720 read + 10 written) = 4092.
    assert (evaluate(addmm).flops, evaluate(addmm).bytes) == (2880, 4092)
    # convolution: 2 * (2 * 4 * 6 * 6 outputs) * (3 * 3 * 3 per output) = 15552 flops;
    # bytes 4 * (384 input + 108 weight + 4 bias + 288 output) = 3136.
    convolution = evaluate(_one(trace, "aten::convolution"))
    assert (convolution.flops, convolution.bytes) == (15552, 3136)


def test_call_sites_and_modules_from_with_stack(trace):
    addmm, convolution = _one(trace, "aten::addmm"), _one(trace, "aten::convolution")
    assert addmm.callsite[0] == f"test_kineto_dialect.py:{STEP_LINE}"
    assert (addmm.module, convolution.module) == ("Sequential_0.Linear_0", "Sequential_0.Conv2d_0")


def test_backward_ops_are_tied_to_their_forward_op(trace):
    ops = trace.records.ops
    forward_of = {op.name: ops[op.fwd].name for op in ops if op.dir == "bwd" and op.fwd >= 0}
    assert forward_of["AddmmBackward0"] == "aten::addmm"
    assert forward_of["aten::convolution_backward"] == "aten::convolution"
    assert {op.dir for op in ops if op.name == "aten::mm"} == {"bwd"}


def test_a_function_name_with_raw_control_characters_loads(tmp_path):
    # torch 2.6's Python tracer (with_stack) can write a function name read from freed memory, raw bytes in a
    # JSON string: "torch/_inductor/custom_graph_pass.py(0): \x10\x1a\xcdAE\x7f" (seen on 2.6.0+cu124).
    events = (
        b'{"ph": "X", "cat": "python_function", "name": "custom_graph_pass.py(0): \x10\x1a\xcdAE\x7f", "pid": 1, '
        b'"tid": 1, "ts": 1, "dur": 5, "args": {"Python id": 1}},'
        b'{"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 2, "dur": 1, "args": {}}'
    )
    path = tmp_path / "trace.json"
    path.write_bytes(b'{"schemaVersion": 1, "traceEvents": [' + events + b"]}")
    assert [op.name for op in pyprof_live.load_kineto(path).records.ops] == ["aten::relu"]
