"""Optimizer ops (_foreach_* overloads, fused Adam/AdamW/SGD) and recurrent layers."""

import torch

from pyprof_live.formulas import TRANSCENDENTAL as T
from pyprof_live.formulas import Cost, evaluate
from pyprof_live.records import OpRecord, TensorMeta
from tests.formula_models import LSTMTagger
from tests.formula_recorder import checked_evaluate, cost_of, record


def _params():
    return [torch.randn(3), torch.randn(2, 2)]  # 7 elements in all


def test_foreach_overloads():
    a, b = _params(), _params()
    # List with alpha 2: multiply and add, 14 flops; reads both lists (14 floats), writes the first (7): 84 bytes.
    assert cost_of(torch._foreach_add_, a, b, alpha=2) == Cost(14, 84, "")
    assert cost_of(torch._foreach_mul_, a, 0.9) == Cost(7, 56, "")  # Scalar: reads and writes self
    # Tensor: one 0-dim tensor operand, read once (4 bytes).
    assert cost_of(torch._foreach_mul_, a, torch.tensor(0.5)) == Cost(7, 60, "")
    # ScalarList addcdiv: self + s * t1 / t2 = 3 flops per element; three lists read, one written.
    assert cost_of(torch._foreach_addcdiv_, a, b, _params(), [0.1, 0.2]) == Cost(21, 112, "")
    # out of place sqrt: one transcendental each, new tensors written.
    assert cost_of(torch._foreach_sqrt, a) == Cost(7 * T, 56, "")
    assert cost_of(torch._foreach_lerp_, a, b, 0.1) == Cost(21, 84, "")
    assert cost_of(torch._foreach_zero_, a) == Cost(0, 28, "")  # writes only


def test_mismatched_foreach_lists_are_na():
    three, two = (TensorMeta((2,), "float32"),) * 3, (TensorMeta((2,), "float32"),) * 2
    op = OpRecord("aten::_foreach_add_", 0, 1, inputs=(three, two))
    assert evaluate(op) == Cost(None, None, "aten::_foreach_add_: operand lists of lengths 3 and 2")


def test_fused_adamw_and_sgd():
    params, grads, m, v = _params(), _params(), _params(), _params()
    steps = [torch.tensor(1.0), torch.tensor(1.0)]
    # AdamW with weight decay: decay 1 + m 3 + v 4 + sqrt/denominator T + 2 + update 3 = 33 per element: 231.
    # Bytes: params, grads, exp_avg, exp_avg_sq (28 floats) + 2 step scalars read; params, exp_avg, exp_avg_sq
    # (21) written: 4 * (30 + 21) = 204.
    adamw = cost_of(
        torch._fused_adamw_,
        params,
        grads,
        m,
        v,
        [],
        steps,
        lr=1e-3,
        beta1=0.9,
        beta2=0.999,
        weight_decay=0.01,
        eps=1e-8,
        amsgrad=False,
        maximize=False,
    )
    assert adamw == Cost(7 * (T + 13), 204, "")
    # SGD with momentum, no decay: buf = m * buf + (1 - d) * g 3, p -= lr * g 2: 35; params, grads, buffers read
    # (21), params and buffers written (14): 140.
    sgd = cost_of(
        torch._fused_sgd_,
        _params(),
        _params(),
        _params(),
        weight_decay=0.0,
        momentum=0.9,
        lr=0.1,
        dampening=0.0,
        nesterov=False,
        maximize=False,
        is_first_step=False,
    )
    assert sgd == Cost(35, 140, "")


def test_lstm_layer_forward_and_backward_hand_computed():
    model = LSTMTagger()  # LSTM(12 -> 16, 2 layers), input (3, 7, 12): 21 tokens
    x = torch.randn(3, 7, 12)
    ops, _ = record(lambda: model(x).sum().backward())
    first, second = (op for op in ops if op.name == "aten::mkldnn_rnn_layer")
    # Layer 0: GEMMs 2 * 4 gates * 16 * (12 + 16) * 21 = 75264; pointwise (5 T + 14 + 8 bias adds) * 21 * 16 = 40992.
    # Bytes: input 252 + w_ih 768 + w_hh 1024 + biases 128 + h0, c0 96 read; output 336 + hy, cy 96 written:
    # 4 * (2268 + 432) = 10800.
    assert checked_evaluate(first) == Cost(75264 + 40992, 10800, "")
    # Layer 1 takes 16 inputs: 2 * 64 * 32 * 21 = 86016 + 40992.
    assert checked_evaluate(second).flops == 86016 + 40992
    backward = [op for op in ops if op.name == "aten::mkldnn_rnn_layer_backward"]
    # backward = 2 x GEMMs + 2 x pointwise, per layer: 2 * (75264 + 86016 + 2 * 40992) = 486528.
    assert sum(checked_evaluate(op).flops for op in backward) == 486528


def test_cudnn_rnn_and_composite_lstm_count_every_layer():
    # _cudnn_rnn as Kineto shows it: input (7, 3, 12), 2-layer LSTM, hidden 16, weights as 8 tensors.
    x, h = TensorMeta((7, 3, 12), "float32"), TensorMeta((2, 3, 16), "float32")
    weights = (
        TensorMeta((64, 12), "float32"),
        TensorMeta((64, 16), "float32"),
        TensorMeta((64,), "float32"),
        TensorMeta((64,), "float32"),
        TensorMeta((64, 16), "float32"),
        TensorMeta((64, 16), "float32"),
        TensorMeta((64,), "float32"),
        TensorMeta((64,), "float32"),
    )
    op = OpRecord(
        "aten::_cudnn_rnn", 0, 1, inputs=(x, weights, 4, None, h, h, 2, 16, 0, 2, False, 0.0, True, False, (), None)
    )
    # GEMMs (75264 + 86016) + pointwise 2 layers * 40992 = 243264.
    assert evaluate(op).flops == 243264
    lstm = OpRecord("aten::lstm", 0, 1, inputs=(x, (h, h), weights, True, 2, 0.0, True, False, False))
    assert evaluate(lstm).flops == 243264


def test_fused_lstm_cell_is_its_pointwise_part():
    # gates (3, 64) for hidden 16: (5 T + 14 + 8) * 3 * 16 = 5856; the GEMMs ran before it as addmm/mm.
    # A CUDA-only op: meta tensors give its real schema-ordered record without a GPU.
    gates, c, bias = (torch.empty(*shape, device="meta") for shape in ((3, 64), (3, 16), (64,)))
    cost = cost_of(torch.ops.aten._thnn_fused_lstm_cell, gates, gates, c, bias, bias)
    assert cost.flops == 5856


def test_cudnn_rnn_recorded_on_meta_tensors_matches_the_onednn_layer():
    # One LSTM layer 12 -> 16 over 21 tokens through cuDNN: the same 116256 flops and 10800 bytes as the
    # oneDNN layer 0 above (the 4 weights; hx, cx read; output, hy, cy written).
    def meta(*shape):
        return torch.empty(*shape, device="meta")

    weights = [meta(64, 12), meta(64, 16), meta(64), meta(64)]
    ops, _ = record(
        lambda: torch.ops.aten._cudnn_rnn(
            meta(7, 3, 12),
            weights,
            4,
            None,
            meta(1, 3, 16),
            meta(1, 3, 16),
            2,
            16,
            0,
            1,
            False,
            0.0,
            True,
            False,
            [],
            None,
        )
    )
    assert checked_evaluate(ops[-1]) == Cost(116256, 10800, "")


def test_cells_as_importers_show_them():
    # aten::lstm_cell(input (2, 4), [h, c] (2, 5), w_ih (20, 4), w_hh (20, 5), b_ih, b_hh): GEMMs
    # 2 * 20 * (4 + 5) per row * 2 rows = 720; pointwise (5 T + 14 + 8) * 2 * 5 = 1220.
    # Bytes: input 8 + h, c 20 + weights 180 + biases 40 read; h', c' 20 written: 4 * 268 = 1072.
    f32 = "float32"
    state = TensorMeta((2, 5), f32)
    lstm = OpRecord(
        "aten::lstm_cell",
        0,
        1,
        inputs=(
            TensorMeta((2, 4), f32),
            (state, state),
            TensorMeta((20, 4), f32),
            TensorMeta((20, 5), f32),
            TensorMeta((20,), f32),
            TensorMeta((20,), f32),
        ),
    )
    assert evaluate(lstm) == Cost(1940, 1072, "")
    # gru_cell without biases: 3 gates, GEMMs 2 * 15 * (4 + 5) * 2 = 540; pointwise (3 T + 11) * 2 * 5 = 710.
    gru = OpRecord(
        "aten::gru_cell",
        0,
        1,
        inputs=(TensorMeta((2, 4), f32), state, TensorMeta((15, 4), f32), TensorMeta((15, 5), f32), None, None),
    )
    assert evaluate(gru).flops == 1250
