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
    if "::" not in op_name:
        return ()
    from ..torch_compat import op_schema

    schema = op_schema(op_name, "" if overload in ("", "default") else overload)
    return tuple(a.name for a in schema.arguments) if schema is not None else ()


_params_texts: dict = {}


_by_identity: dict = {}  # (id(inputs), id(kwargs), name, overload, floats) -> (inputs, kwargs, text)


def params_text(op, floats: bool = True) -> str:
    """Tensor inputs first (shape + dtype), then non-tensor arguments by name: PyProf's params.
    ``floats=False`` leaves out float arguments (a step size, a scale that changes every step).

    Memoised: a training step repeats the same calls, step after step. Live capture gives the calls
    with the same arguments one shared ``inputs`` tuple, so they are found by identity first
    (hashing the arguments again for each call was the costliest part of a table)."""
    ident = (id(op.inputs), id(op.kwargs), op.name, op.overload, floats)
    hit = _by_identity.get(ident)
    if hit is not None and hit[0] is op.inputs and hit[1] is op.kwargs:
        return hit[2]
    text = _params_text_by_value(op, floats)
    if len(_by_identity) > 100_000:
        _by_identity.clear()
    _by_identity[ident] = (op.inputs, op.kwargs, text)  # holding them keeps their ids theirs
    return text


def _params_text_by_value(op, floats: bool) -> str:
    key = (op.name, op.overload, op.inputs, op.kwargs, tuple(map(type, op.inputs)), floats)  # 1 == 1.0 == True
    try:
        text = _params_texts.get(key)
    except TypeError:  # an unhashable value inside the arguments
        return _params_text(op, floats)
    if text is None:
        if len(_params_texts) > 100_000:
            _params_texts.clear()
        text = _params_texts[key] = _params_text(op, floats)
    return text


def _params_text(op, floats: bool = True) -> str:
    """Live capture appends keyword values to ``inputs`` (schema order); importers keep them only in
    ``kwargs``. Either way each value is shown once, under its schema or keyword name."""
    positional = positional_inputs(op)
    tensors, others = [], []
    names: tuple | None = None  # schema names, looked up (torch's schemas: its import) only when needed
    for i, value in enumerate(positional):
        if _is_tensor_value(value):
            tensors.append(value_text(value))
        elif value is not None and (floats or type(value) is not float):
            if names is None:
                names = argument_names(op.name, op.overload)
            others.append(f"{names[i] if i < len(names) else f'arg{i}'}={value_text(value)}")
    for name, value in op.kwargs:
        if _is_tensor_value(value):
            tensors.append(value_text(value))
        elif value is not None and (floats or type(value) is not float):
            others.append(f"{name}={value_text(value)}")
    return " ".join(tensors + others)


def _is_tensor_value(value) -> bool:
    return isinstance(value, TensorMeta) or (
        isinstance(value, tuple) and bool(value) and isinstance(value[0], TensorMeta)
    )


_xyz_texts: dict = {}


def xyz_text(xyz: tuple) -> str:
    """ "1,2,3": memoised, as kernels repeat a few launch shapes (a table of a million kernels asks a
    million times)."""
    try:
        text = _xyz_texts.get(xyz)
    except TypeError:  # a list, from a source that did not make it a tuple
        return ",".join(map(str, xyz))
    if text is None:
        if len(_xyz_texts) > 100_000:
            _xyz_texts.clear()
        text = _xyz_texts[xyz] = ",".join(map(str, xyz))
    return text
