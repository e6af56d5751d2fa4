"""Formulas on Kineto records as the real importer builds them: a trace built here (fresh clone) and
the real GPU traces of ../shared/data/kineto (values checked by hand against the files)."""

import json

from pyprof_live.formulas import Cost, evaluate
from pyprof_live.importers.kineto import load_kineto


def _op_event(name, ext, dims, types, concrete, ts=10):
    return {
        "ph": "X",
        "cat": "cpu_op",
        "name": name,
        "pid": 1,
        "tid": 1,
        "ts": ts,
        "dur": 5,
        "args": {"External id": ext, "Input Dims": dims, "Input type": types, "Concrete Inputs": concrete},
    }


def test_concrete_inputs_through_the_importer(tmp_path):
    events = [
        # conv2d(x bf16 (1, 3, 28, 28), w (8, 3, 14, 14), None, stride [14, 14], padding [0, 0], dilation [1, 1], 1):
        # out (1, 8, 2, 2): 2 * 1 * 8 * 3 * 196 * 4 = 37632 flops; bytes 2 * (2352 + 4704 + 32) = 14176.
        _op_event(
            "aten::conv2d",
            1,
            [[1, 3, 28, 28], [8, 3, 14, 14], [], [], [], [], []],
            ["c10::BFloat16", "c10::BFloat16", "", "ScalarList", "ScalarList", "ScalarList", "Scalar"],
            ["", "", "", "[14, 14]", "[0, 0]", "[1, 1]", "1"],
        ),
        # the same op from a 2021 trace: no Concrete Inputs, the lists are unknown.
        _op_event(
            "aten::conv2d",
            2,
            [[1, 3, 28, 28], [8, 3, 14, 14], [], [], [], [], []],
            ["float", "float", "", "GenericList", "GenericList", "GenericList", "Int"],
            [],
            ts=20,
        ),
        # arange.start_out(0, 5, 1, out int64 [0]): 5 elements, 2 flops each, 40 bytes.
        _op_event(
            "aten::arange", 3, [[], [], [], [0]], ["Scalar", "Scalar", "Scalar", "long int"], ["0", "5", "1", ""], ts=30
        ),
        # linalg_norm(x bf16 (1, 768), 2, [-1], True, None): square + add per element, one sqrt: 1536 + 20;
        # bytes 2 * (768 + 1).
        _op_event(
            "aten::linalg_norm",
            4,
            [[1, 768], [], [], [], []],
            ["c10::BFloat16", "Scalar", "ScalarList", "Scalar", ""],
            ["", "2", "[-1]", "True", ""],
            ts=40,
        ),
    ]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    ops = load_kineto(path).records.ops
    assert [evaluate(op) for op in ops] == [
        Cost(37632, 14176, ""),
        Cost(None, None, "inputs lack padding (GenericList)"),
        Cost(10, 40, ""),
        Cost(1556, 1538, ""),
    ]


def test_real_owlv2_patch_embedding_conv(shared_data):
    # tracelens_owlv2 (json scan): the first aten::conv2d has Input Dims [[1, 3, 1008, 1008], [1024, 3, 14, 14]],
    # c10::BFloat16, Concrete Inputs stride "[14, 14]", padding "[0, 0]", dilation "[1, 1]", groups "1".
    # out (1, 1024, 72, 72): 2 * 1024 * 3 * 196 * 5184 = 6242697216 flops;
    # bytes 2 * (3048192 + 602112 + 5308416) = 17917440.
    ops = load_kineto(shared_data / "kineto" / "tracelens_owlv2_h100_infer.json.gz").records.ops
    conv = next(op for op in ops if op.name == "aten::conv2d")
    assert evaluate(conv) == Cost(6242697216, 17917440, "")


def test_real_nccl_allreduce(shared_data):
    # hta_nccl_data (json scan): record_param_comms events are 15 allreduce (Float, group 2), 6 broadcast, 6 wait;
    # one allreduce has "In msg nelems" 2049000: a ring all-reduce adds (2 - 1) / 2 of them on each rank =
    # 1024500 flops; bytes: the input read and the output written, 2049000 floats each = 16392000.
    # A broadcast of 53120 floats moves 2 * 53120 * 4 = 424960 bytes with no arithmetic; a wait is no work.
    ops = load_kineto(shared_data / "kineto" / "hta_nccl_data_a100_ws2_rank0.json.gz").records.ops
    comms = {}
    for op in ops:
        if op.name == "record_param_comms":
            facts = dict(op.kwargs)
            comms.setdefault((facts["collective"], facts["in_msg_nelems"]), evaluate(op))
    assert sum(1 for collective, _ in comms if collective == "allreduce") > 1
    assert comms[("allreduce", 2049000)] == Cost(1024500, 16392000, "")
    assert comms[("broadcast", 53120)] == Cost(0, 424960, "")
    assert {cost for (collective, _), cost in comms.items() if collective == "wait"} == {Cost(0, 0, "")}
