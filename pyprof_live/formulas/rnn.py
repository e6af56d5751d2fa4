"""Recurrent layers (LSTM, GRU, Elman RNN): fused cuDNN/oneDNN ops, the composite ``aten::lstm``
family, single cells, and their backward.

Per layer and direction, over every token (time step x batch):
* GEMMs: 2 * gates*H * (input_size + recurrent_size) flops per token (input and recurrent
  projections; gates = 4 LSTM, 3 GRU, 1 RNN), + 2 * H * proj per token with an LSTM projection;
* pointwise per token and hidden unit: LSTM 5 transcendentals (3 sigmoid, 2 tanh) + 14
  (gate sums, sigmoid arithmetic, c = f*c + i*g, h = o*tanh(c)) + 8 with biases; GRU 3
  transcendentals + 11 (+ 6 with biases); RNN tanh: 1 transcendental + 1 (+ 2), relu 2 (+ 2).
Backward: twice the forward GEMMs (data and weight gradients; only the data half when the weight
gradient is masked off) and twice the forward pointwise work.
Bytes: input, weights, initial states read; output and final states written (intermediate gate
storage, cuDNN's reserve space, is not counted).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from ..records import TensorMeta
from .opargs import OpArgs
from .pointwise import T
from .registry import builtin
from .work import FormulaInputError, Work, numel, present

# cuDNN's mode enum, also used by mkldnn_rnn_layer: 0 RNN_RELU, 1 RNN_TANH, 2 LSTM, 3 GRU.
_GATES = {0: 1, 1: 1, 2: 4, 3: 3}
_POINTWISE = {0: (2, 2), 1: (T + 1, 2), 2: (5 * T + 14, 8), 3: (3 * T + 11, 6)}  # mode -> (per unit, bias adds)
_MODE_OF_NAME = {"lstm": 2, "gru": 3, "rnn_tanh": 1, "rnn_relu": 0}


@dataclass(frozen=True)
class RnnShape:
    tokens: int  # time steps x batch (or packed tokens)
    input_size: int
    hidden: int
    mode: int
    layers: int = 1
    directions: int = 1
    proj: int = 0  # LSTM projection size, 0 = none
    biases: bool = True

    def gemm_flops(self) -> int:
        """Layer 0 reads input_size features, every later layer the previous one's output (out x
        directions): one product per kind of layer, never a loop over the (file-given) layer count."""
        gates, out = _GATES[self.mode], self.proj or self.hidden
        per_direction = lambda layer_input: 2 * gates * self.hidden * (layer_input + out) + 2 * self.hidden * self.proj  # noqa: E731
        first = per_direction(self.input_size) if self.layers > 0 else 0
        later = per_direction(out * self.directions) * max(self.layers - 1, 0)
        return (first + later) * self.directions * self.tokens

    def pointwise_flops(self) -> int:
        per_unit, bias_adds = _POINTWISE[self.mode]
        return (per_unit + bias_adds * self.biases) * self.tokens * self.hidden * self.layers * self.directions

    def forward_flops(self) -> int:
        return self.gemm_flops() + self.pointwise_flops()

    def backward_flops(self, weight_grad: bool = True) -> int:
        return self.gemm_flops() * (2 if weight_grad else 1) + 2 * self.pointwise_flops()


def _mode(value: int) -> int:
    if value not in _GATES:
        raise FormulaInputError(f"unknown RNN mode {value}")
    return value


def _tokens(x: TensorMeta) -> int:
    if len(x.shape) not in (2, 3):
        raise FormulaInputError(f"RNN input must be 2-d (packed) or 3-d, got {x.shape}")
    return prod(x.shape[:-1])


# -- oneDNN: one layer, one direction per op ---------------------------------------------------


# mkldnn_rnn_layer(input, weight0, weight1, weight2, weight3, hx_, cx_, reverse, batch_sizes, mode, hidden_size,
#                  num_layers, has_biases, bidirectional, batch_first, train) -> (output, hy, cy, workspace)
@builtin("aten::mkldnn_rnn_layer")
def _mkldnn_rnn_layer(a: OpArgs) -> Work:
    x = a.tensor(0, "input")
    weights = tuple(a.tensor(1 + i, f"weight{i}") for i in range(4))
    hx, cx = a.tensor(5, "hx_"), a.tensor(6, "cx_")
    hidden = a.int(10, "hidden_size")
    shape = RnnShape(_tokens(x), x.shape[-1], hidden, _mode(a.int(9, "mode")), biases=a.bool(12, "has_biases"))
    out = a.output(0) or TensorMeta(x.shape[:-1] + (hidden,), x.dtype)
    return Work(shape.forward_flops(), (x,) + weights + (hx, cx), (out, a.output(1) or hx, a.output(2) or cx))


# mkldnn_rnn_layer_backward(input, weight1, weight2, weight3, weight4, hx_, cx_tmp, output, hy_, cy_, grad_output,
#   grad_hy, grad_cy, reverse, mode, hidden_size, num_layers, has_biases, train, bidirectional, batch_sizes,
#   batch_first, workspace) -> (grad_input, grad_w1, grad_w2, grad_w3, grad_w4, grad_hx, grad_cx)
@builtin("aten::mkldnn_rnn_layer_backward")
def _mkldnn_rnn_layer_backward(a: OpArgs) -> Work:
    x = a.tensor(0, "input")
    weights = tuple(a.tensor(1 + i, f"weight{i + 1}") for i in range(4))
    hx, cx, output = a.tensor(5, "hx_"), a.tensor(6, "cx_tmp"), a.tensor(7, "output")
    grads = present(a.opt_tensor(10, "grad_output"), a.opt_tensor(11, "grad_hy"), a.opt_tensor(12, "grad_cy"))
    shape = RnnShape(
        _tokens(x), x.shape[-1], a.int(15, "hidden_size"), _mode(a.int(14, "mode")), biases=a.bool(17, "has_biases")
    )
    written = (x,) + weights + (hx, cx)
    writes = tuple(a.output(i) or TensorMeta(t.shape, t.dtype) for i, t in enumerate(written))
    return Work(shape.backward_flops(), (x,) + weights + (hx, cx, output) + grads, writes)


# -- cuDNN / MIOpen: every layer and direction in one op ---------------------------------------


def _cudnn_shape(a: OpArgs, x: TensorMeta, offset: int) -> RnnShape:
    """RnnShape from _cudnn_rnn-style arguments; ``offset`` shifts the positions after ``cx``."""
    mode = _mode(a.int(6 + offset, "mode"))
    hidden, proj = a.int(7 + offset, "hidden_size"), a.int(8 + offset, "proj_size")
    layers, bidirectional = a.int(9 + offset, "num_layers"), a.bool(13 + offset, "bidirectional")
    weights = a.tensor_list(1, "weight")
    gates = _GATES[mode]
    biases = any(len(w.shape) == 1 and w.shape[0] == gates * hidden for w in weights)
    return RnnShape(_tokens(x), x.shape[-1], hidden, mode, layers, 2 if bidirectional else 1, proj, biases)


# _cudnn_rnn(input, weight, weight_stride0, weight_buf, hx, cx, mode, hidden_size, proj_size, num_layers,
#            batch_first, dropout, train, bidirectional, batch_sizes, dropout_state)
#   -> (output, hy, cy, reserve, weight_buf)
@builtin("aten::_cudnn_rnn")
def _cudnn_rnn(a: OpArgs) -> Work:
    x, weights, hx, cx = a.tensor(0, "input"), a.tensor_list(1, "weight"), a.tensor(4, "hx"), a.opt_tensor(5, "cx")
    shape = _cudnn_shape(a, x, 0)
    out_size = (shape.proj or shape.hidden) * shape.directions
    out = a.output(0) or TensorMeta(x.shape[:-1] + (out_size,), x.dtype)
    finals = (a.output(1) or hx,) + ((a.output(2) or cx,) if cx is not None else ())
    return Work(shape.forward_flops(), (x,) + weights + present(hx, cx), (out,) + finals)


# _cudnn_rnn_backward(input, weight, weight_stride0, weight_buf, hx, cx, output, grad_output, grad_hy, grad_cy,
#   mode, hidden_size, proj_size, num_layers, batch_first, dropout, train, bidirectional, batch_sizes, dropout_state,
#   reserve, output_mask) -> (grad_input, grad_hx, grad_cx, grad_weight[])
@builtin("aten::_cudnn_rnn_backward")
def _cudnn_rnn_backward(a: OpArgs) -> Work:
    x, weights, hx, cx = a.tensor(0, "input"), a.tensor_list(1, "weight"), a.tensor(4, "hx"), a.opt_tensor(5, "cx")
    shape = _cudnn_shape(a, x, 4)
    mask = a.bools(21, "output_mask")
    reads = (
        (x,)
        + weights
        + present(
            hx,
            cx,
            a.tensor(6, "output"),
            a.opt_tensor(7, "grad_output"),
            a.opt_tensor(8, "grad_hy"),
            a.opt_tensor(9, "grad_cy"),
        )
    )
    grads = ((x,) if mask[0] else ()) + ((hx,) if mask[1] else ()) + ((cx,) if mask[2] and cx is not None else ())
    grads += weights if mask[3] else ()
    return Work(shape.backward_flops(weight_grad=mask[3]), reads, tuple(TensorMeta(t.shape, t.dtype) for t in grads))


# -- composite aten::lstm / gru / rnn_tanh / rnn_relu (what Kineto and nsys show above the fused op) ---


@builtin("aten::lstm", "aten::gru", "aten::rnn_tanh", "aten::rnn_relu")
def _rnn(a: OpArgs) -> Work:
    # .input(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first);
    # .data(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional): packed input.
    x = a.tensor(0, "input")
    if a.op.overload:
        packed = a.op.overload == "data"
    else:  # Kineto: .data has its params list at 3, where .input has the bool has_biases
        packed = (
            a.has(3, "params")
            and isinstance(a.recorded(3, "params"), tuple)
            and not isinstance(a.recorded(3, "params"), TensorMeta)
        )
    shift = 1 if packed else 0
    mode = _MODE_OF_NAME[a.name.removeprefix("aten::")]
    states = a.tensor_list(1 + shift, "hx") if mode == 2 else (a.tensor(1 + shift, "hx"),)
    params = a.tensor_list(2 + shift, "params")
    biases = a.bool(3 + shift, "has_biases")
    layers, bidirectional = a.int(4 + shift, "num_layers"), a.bool(7 + shift, "bidirectional")
    directions = 2 if bidirectional else 1
    h_size = states[0].shape[-1]
    hidden = states[1].shape[-1] if mode == 2 else h_size
    shape = RnnShape(
        _tokens(x), x.shape[-1], hidden, mode, layers, directions, h_size if h_size != hidden else 0, biases
    )
    out = TensorMeta(x.shape[:-1] + (h_size * directions,), x.dtype)
    return Work(
        shape.forward_flops(), (x,) + states + params, (out,) + tuple(TensorMeta(s.shape, s.dtype) for s in states)
    )


# -- cells ------------------------------------------------------------------------------------


@builtin("aten::lstm_cell", "aten::gru_cell", "aten::rnn_tanh_cell", "aten::rnn_relu_cell")
def _cell(a: OpArgs) -> Work:
    # (input, hx, w_ih, w_hh, b_ih, b_hh); lstm_cell's hx is the list [h, c].
    x = a.tensor(0, "input")
    mode = _MODE_OF_NAME[a.name.removeprefix("aten::").removesuffix("_cell")]
    states = a.tensor_list(1, "hx") if mode == 2 else (a.tensor(1, "hx"),)
    w_ih, w_hh = a.tensor(2, "w_ih"), a.tensor(3, "w_hh")
    biases = present(a.opt_tensor(4, "b_ih"), a.opt_tensor(5, "b_hh"))
    hidden = w_hh.shape[-1]
    shape = RnnShape(numel(x.shape[:-1]), x.shape[-1], hidden, mode, biases=bool(biases))
    return Work(
        shape.forward_flops(),
        (x,) + states + (w_ih, w_hh) + biases,
        tuple(TensorMeta(s.shape, s.dtype) for s in states),
    )


# _thnn_fused_lstm_cell(input_gates, hidden_gates, cx, input_bias, hidden_bias) -> (hy, cy, workspace);
# _thnn_fused_gru_cell(input_gates, hidden_gates, hx, input_bias, hidden_bias) -> (hy, workspace)
@builtin("aten::_thnn_fused_lstm_cell", "aten::_thnn_fused_gru_cell")
def _fused_cell(a: OpArgs) -> Work:
    # The GEMMs ran before (as addmm/mm); this is the cell's pointwise part.
    input_gates, hidden_gates, state = a.tensor(0, "input_gates"), a.tensor(1, "hidden_gates"), a.tensor(2, "cx")
    biases = present(a.opt_tensor(3, "input_bias"), a.opt_tensor(4, "hidden_bias"))
    mode = 2 if "lstm" in a.name else 3
    rows, hidden = numel(state.shape[:-1]), state.shape[-1]
    per_unit, bias_adds = _POINTWISE[mode]
    flops = (per_unit + (bias_adds if biases else 0)) * rows * hidden
    states = 2 if mode == 2 else 1
    writes = tuple(a.output(i) or TensorMeta(state.shape, state.dtype) for i in range(states))
    writes += (a.output(states) or TensorMeta((rows, (4 if mode == 2 else 5) * hidden), state.dtype),)
    return Work(flops, (input_gates, hidden_gates, state) + biases, writes)


# _thnn_fused_lstm_cell_backward(_impl)(grad_hy, grad_cy, cx, cy, workspace, has_bias);
# _thnn_fused_gru_cell_backward(grad_hy, workspace, has_bias)
@builtin(
    "aten::_thnn_fused_lstm_cell_backward_impl",
    "aten::_thnn_fused_lstm_cell_backward",
    "aten::_thnn_fused_gru_cell_backward",
)
def _fused_cell_backward(a: OpArgs) -> Work:
    lstm = "lstm" in a.name
    workspace = a.tensor(4 if lstm else 1, "workspace")
    reads = (workspace,) + (
        present(a.opt_tensor(0, "grad_hy"), a.opt_tensor(1, "grad_cy"), a.tensor(2, "cx"), a.tensor(3, "cy"))
        if lstm
        else (a.tensor(0, "grad_hy"),)
    )
    rows, gate_width = workspace.shape[0], workspace.shape[-1]
    hidden = gate_width // (4 if lstm else 5)
    per_unit, _ = _POINTWISE[2 if lstm else 3]
    gates = TensorMeta((rows, gate_width if lstm else 3 * hidden), workspace.dtype)
    state = TensorMeta((rows, hidden), workspace.dtype)
    writes = (gates, state) if lstm else (gates, gates, state)
    return Work(2 * per_unit * rows * hidden, reads, writes)
