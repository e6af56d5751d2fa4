"""Text of the composite cells (params, grid, layer, trace, ops chain), shared by every view.

Numbers stay numbers in rows; only values that have no numeric form are turned into text here.
"""

from __future__ import annotations

from functools import lru_cache

from ..records import TensorMeta, Unknown, positional_inputs

_SHORT_DTYPES = {
    "float32": "fp32",
    "float16": "fp16",
    "bfloat16": "bf16",
    "float64": "fp64",
    "int64": "int64",
    "int32": "int32",
    "int16": "int16",
    "int8": "int8",
    "uint8": "uint8",
    "bool": "bool",
    "complex64": "c64",
    "complex128": "c128",
    "complex32": "c32",
}


def dtype_text(dtype: str | None) -> str:
    return "" if dtype is None else _SHORT_DTYPES.get(dtype, dtype)


def tensor_text(meta: TensorMeta) -> str:
    return "[" + ",".join(str(d) for d in meta.shape) + "]" + dtype_text(meta.dtype)


def value_text(value) -> str:
    if isinstance(value, TensorMeta):
        return tensor_text(value)
    if isinstance(value, Unknown):
        return "?"
    if isinstance(value, tuple):
        if value and all(isinstance(v, TensorMeta) for v in value):
            return "(" + ",".join(tensor_text(v) for v in value) + ")"
        return "(" + ",".join(value_text(v) for v in value) + ")"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


@lru_cache(maxsize=4096)
def argument_names(op_name: str, overload: str) -> tuple:
    """Schema argument names of an aten-style op, () when torch does not know the op."""
    namespace, _, name = op_name.partition("::")
    if not name:
        return ()
    try:
        import torch

        packet = getattr(getattr(torch.ops, namespace), name)
        return tuple(a.name for a in getattr(packet, overload or "default")._schema.arguments)
    except (AttributeError, RuntimeError):
        return ()


_params_texts: dict = {}


def params_text(op) -> str:
    """Tensor inputs first (shape + dtype), then non-tensor arguments by name: PyProf's params.

    Memoised: a training step repeats the same calls, step after step."""
    key = (op.name, op.overload, op.inputs, op.kwargs, tuple(map(type, op.inputs)))  # 1 == 1.0 == True
    try:
        text = _params_texts.get(key)
    except TypeError:  # an unhashable value inside the arguments
        return _params_text(op)
    if text is None:
        if len(_params_texts) > 100_000:
            _params_texts.clear()
        text = _params_texts[key] = _params_text(op)
    return text


def _params_text(op) -> str:
    """Live capture appends keyword values to ``inputs`` (schema order); importers keep them only in
    ``kwargs``. Either way each value is shown once, under its schema or keyword name."""
    positional = positional_inputs(op)
    tensors, others = [], []
    names: tuple | None = None  # schema names, looked up (torch's schemas: its import) only when needed
    for i, value in enumerate(positional):
        if _is_tensor_value(value):
            tensors.append(value_text(value))
        elif value is not None:
            if names is None:
                names = argument_names(op.name, op.overload)
            others.append(f"{names[i] if i < len(names) else f'arg{i}'}={value_text(value)}")
    for name, value in op.kwargs:
        if _is_tensor_value(value):
            tensors.append(value_text(value))
        elif value is not None:
            others.append(f"{name}={value_text(value)}")
    return " ".join(tensors + others)


def _is_tensor_value(value) -> bool:
    return isinstance(value, TensorMeta) or (
        isinstance(value, tuple) and bool(value) and isinstance(value[0], TensorMeta)
    )


def xyz_text(xyz: tuple) -> str:
    return ",".join(str(v) for v in xyz)
