"""Typed access to an OpRecord's arguments by schema position and name.

Sources record arguments differently: Kineto keeps every schema argument in order, defaults
filled in (its ``Concrete Inputs`` parsed, or kept as strings such as ``"[1, 1]"`` by older
readers); live capture records the positional arguments the caller passed and names keyword-only
ones in ``op.kwargs``, so an omitted argument takes its default from torch's schema of the
recorded overload (matched by position and name), then from the formula's own default; nsys
``sizes = [...]`` markers carry only shapes, every non-tensor argument
:class:`~pyprof_live.records.Unknown`. A formula asks for ``(index, name)`` and gets a checked
value, or a FormulaInputError saying what is missing.

An argument that decides shapes (stride, padding, dim, kernel_size) is never guessed. A
*modifier* that only refines a count (``add``'s alpha, ``gelu``'s approximate) takes its
default when the source recorded only sizes, so nsys ops are not all ``na`` for want of an alpha:
formulas ask for those with ``modifier=True``.
"""

from __future__ import annotations

import builtins
import re
from functools import cache

from ..records import TensorMeta, Unknown, positional_inputs
from .dtypes import canonical_dtype
from .work import FormulaInputError, check_shape

_REQUIRED = object()
_INT = re.compile(r"\s*-?\d+\s*")
_FLOAT = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*|\s*[-+]?(inf|nan)\s*", re.IGNORECASE)
_INT_LIST = re.compile(r"\s*[\[(]\s*(-?\d+\s*(,\s*-?\d+\s*)*,?)?\s*[\])]\s*")
_BOOL_LIST = re.compile(r"\s*\[\s*((true|false)\s*(,\s*(true|false)\s*)*)?\]\s*", re.IGNORECASE)


class OpArgs:
    """An OpRecord's inputs and outputs as a formula reads them."""

    __slots__ = ("_named", "_positional", "op")

    def __init__(self, op):
        self.op = op
        self._positional = tuple(positional_inputs(op))
        self._named = dict(op.kwargs) if op.kwargs else {}

    @property
    def name(self) -> str:
        return self.op.name

    @property
    def inplace(self) -> builtins.bool:
        """``add_``-style op: writes its first argument instead of a new tensor."""
        return self.op.name.endswith("_") and not self.op.name.endswith("__")

    def has(self, index: builtins.int, name: str) -> builtins.bool:
        return name in self._named or index < len(self._positional)

    def recorded(self, index: builtins.int, name: str):
        """The argument exactly as the source recorded it (Unknown included); it must be present."""
        return self._named[name] if name in self._named else self._positional[index]

    def value(self, index: builtins.int, name: str, default=_REQUIRED):
        """The raw recorded value of argument ``name`` (schema position ``index``)."""
        if name in self._named:
            value = self._named[name]
        elif index < len(self._positional):
            value = self._positional[index]
        else:
            schema_default = _schema_defaults(self.op.name, self.op.overload).get(name, (None, _REQUIRED))
            if schema_default[0] == index:
                return schema_default[1]
            if default is not _REQUIRED:
                return default
            raise FormulaInputError(f"inputs lack {name}")
        if isinstance(value, Unknown):
            raise FormulaInputError(f"inputs lack {name}" + (f" ({value.what})" if value.what else ""))
        return value

    def keyword(self, name: str, default=_REQUIRED):
        """A fact the source recorded only by name in ``op.kwargs`` (Kineto's collective metadata)."""
        if name in self._named:
            return self._named[name]
        if default is _REQUIRED:
            raise FormulaInputError(f"inputs lack {name}")
        return default

    def _scalar(self, index, name, default, modifier=False):
        """A non-tensor argument; a TensorMeta there means the source wrote only sizes (nsys).
        A modifier the source did not record (Unknown, sizes only) takes ``default``."""
        try:
            value = self.value(index, name, default)
        except FormulaInputError:
            if modifier:
                return default
            raise
        if isinstance(value, TensorMeta):
            if modifier:
                return default
            raise FormulaInputError(f"inputs lack {name} (only sizes recorded)")
        return value

    def modifier(self, index: builtins.int, name: str, default):
        """A modifier argument's raw value, its ``default`` when not recorded or sizes-only."""
        return self._scalar(index, name, default, modifier=True)

    # -- tensors ---------------------------------------------------------------------------------

    def tensor(self, index: builtins.int, name: str) -> TensorMeta:
        value = self.value(index, name)
        if not isinstance(value, TensorMeta):
            raise FormulaInputError(f"{name} is not a tensor: {value!r}")
        return _checked(value, name)

    def opt_tensor(self, index: builtins.int, name: str) -> TensorMeta | None:
        """An optional tensor argument (``Tensor? bias``): None when absent or None. A sizes-only source
        writes ``[]`` (Unknown) for an undefined tensor, while a present one would show its dims: absent."""
        if self.has(index, name) and isinstance(self.recorded(index, name), Unknown):
            return None
        value = self.value(index, name, None)
        if value is None:
            return None
        if not isinstance(value, TensorMeta):
            raise FormulaInputError(f"{name} is not a tensor: {value!r}")
        return _checked(value, name)

    def tensor_or_value(self, index: builtins.int, name: str, default=_REQUIRED):
        """A ``Tensor`` or ``Scalar`` operand (``add.Tensor`` vs ``add.Scalar``)."""
        value = self.value(index, name, default)
        return _checked(value, name) if isinstance(value, TensorMeta) else value

    def operand(self, index: builtins.int, name: str):
        """An elementwise operand: TensorMeta, a number, or None when absent or not recorded (a sizes-only
        source writes ``[]`` for a scalar and a 0-dim tensor alike; neither changes the broadcast shape)."""
        try:
            return self.tensor_or_value(index, name, None)
        except FormulaInputError:
            if self.has(index, name) and isinstance(self.recorded(index, name), Unknown):
                return None
            raise

    def tensor_list(self, index: builtins.int, name: str, allow_none: builtins.bool = False) -> tuple:
        """A ``Tensor[]`` argument (``Tensor?[]`` with ``allow_none``) as a tuple of TensorMeta."""
        value = self.value(index, name)
        if value is None:  # Kineto does not record Tensor?[] lists (index's indices)
            raise FormulaInputError(f"inputs lack {name}")
        if isinstance(value, TensorMeta) or not isinstance(value, (tuple, list)):
            raise FormulaInputError(f"{name} is not a tensor list: {value!r}")
        for item in value:
            if not (isinstance(item, TensorMeta) or (allow_none and item is None)):
                raise FormulaInputError(f"{name} holds a non-tensor: {item!r}")
        return tuple(None if item is None else _checked(item, name) for item in value)

    def output(self, index: builtins.int = 0) -> TensorMeta | None:
        """Recorded output ``index`` when the source recorded it (live capture does, Kineto does not)."""
        outputs = self.op.outputs
        if index < len(outputs) and isinstance(outputs[index], TensorMeta):
            return _checked(outputs[index], f"output {index}")
        return None

    def output_list(self) -> tuple | None:
        """The recorded outputs of a ``Tensor[]``-returning op (``_foreach_add``), None when not recorded."""
        outputs = self.op.outputs
        if outputs and all(isinstance(t, TensorMeta) for t in outputs):
            return tuple(_checked(t, "output") for t in outputs)
        return None

    # -- plain values ----------------------------------------------------------------------------

    def int(
        self, index: builtins.int, name: str, default=_REQUIRED, *, modifier: builtins.bool = False
    ) -> builtins.int:
        value = self._scalar(index, name, default, modifier)
        if isinstance(value, str) and _INT.fullmatch(value):
            return int(value)
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if not isinstance(value, int):
            raise FormulaInputError(f"{name} is not an int: {value!r}")
        return int(value)

    def ints(self, index: builtins.int, name: str, default=_REQUIRED) -> tuple:
        """An ``int[]`` argument; a bare int (``stride=2``) counts as a one-element list."""
        value = self._scalar(index, name, default)
        if isinstance(value, str):
            if not _INT_LIST.fullmatch(value):
                if _INT.fullmatch(value):
                    return (int(value),)
                raise FormulaInputError(f"{name} is not an int list: {value!r}")
            return tuple(int(v) for v in re.findall(r"-?\d+", value))
        if isinstance(value, int) and not isinstance(value, bool):
            return (value,)
        if not isinstance(value, (tuple, list)) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            raise FormulaInputError(f"{name} is not an int list: {value!r}")
        return tuple(value)

    def float(
        self, index: builtins.int, name: str, default=_REQUIRED, *, modifier: builtins.bool = False
    ) -> builtins.float:
        value = self._scalar(index, name, default, modifier)
        if isinstance(value, str) and _FLOAT.fullmatch(value):
            return float(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise FormulaInputError(f"{name} is not a number: {value!r}")
        return float(value)

    def bool(
        self, index: builtins.int, name: str, default=_REQUIRED, *, modifier: builtins.bool = False
    ) -> builtins.bool:
        value = self._scalar(index, name, default, modifier)
        if isinstance(value, str) and value.strip().lower() in ("true", "false", "0", "1"):
            return value.strip().lower() in ("true", "1")
        if not isinstance(value, (bool, int)):
            raise FormulaInputError(f"{name} is not a bool: {value!r}")
        return bool(value)

    def bools(self, index: builtins.int, name: str, default=_REQUIRED) -> tuple:
        """A ``bool[N]`` argument such as ``output_mask``."""
        value = self._scalar(index, name, default)
        if isinstance(value, str):
            if not _BOOL_LIST.fullmatch(value):
                raise FormulaInputError(f"{name} is not a bool list: {value!r}")
            return tuple(v.lower() == "true" for v in re.findall(r"true|false", value, re.IGNORECASE))
        if not isinstance(value, (tuple, list)) or not all(isinstance(v, (bool, int)) for v in value):
            raise FormulaInputError(f"{name} is not a bool list: {value!r}")
        return tuple(bool(v) for v in value)

    def dtype(self, index: builtins.int, name: str) -> str | None:
        """A ``ScalarType?`` argument (``dtype=torch.float16``) as a canonical name, None when absent."""
        value = self._scalar(index, name, None)
        if value is None or value == "":
            return None
        canonical = canonical_dtype(value)
        if canonical is None:
            raise FormulaInputError(f"{name} is not a dtype: {value!r}")
        return canonical


@cache
def _schema_defaults(name: str, overload: str) -> dict:
    """{argument name: (position, default)} from torch's schema of ``name.overload``; {} when the source
    did not record the overload (Kineto, nsys: they record every argument anyway) or torch lacks the op."""
    if not overload:
        return {}
    try:
        import torch

        schema = torch._C._get_schema(name, "" if overload == "default" else overload)
    except Exception:  # not an op of this torch (custom, legacy, a wrapped function): no defaults known
        return {}
    return {arg.name: (i, arg.default_value) for i, arg in enumerate(schema.arguments) if arg.has_default_value()}


def _checked(tensor: TensorMeta, name: str) -> TensorMeta:
    check_shape(tensor.shape, name)
    return tensor
