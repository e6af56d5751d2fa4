"""The one table from op name to formula, and :func:`evaluate`, which never raises.

Built-in formulas (this package's family modules) and user formulas (:func:`register_flops`) live
in the same table, keyed by the op name a profile shows (``"aten::addmm"``,
``"MyFunction.forward"``). There is deliberately no fallback: a name without an entry gets
``Cost(None, None, "no formula for ...")``, shown as ``na`` and counted in the report footer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from ..errors import PyprofLiveError
from .opargs import OpArgs
from .work import FormulaInputError, Work, traffic_bytes


class Cost(NamedTuple):
    """Flops and bytes of one op call; None means ``na`` and ``reason`` says why."""

    flops: int | None
    bytes: int | None
    reason: str = ""


class DuplicateFormulaError(PyprofLiveError, ValueError):
    """A formula is already registered under this name (pass ``replace=True`` to override it)."""


# name -> callable(op) -> Cost
_FORMULAS: dict[str, Callable] = {}
# Training steps repeat the same calls: (name, overload, inputs, outputs, kwargs) -> Cost, emptied on registration.
_CACHE: dict = {}


def evaluate(op) -> Cost:
    """Flops and bytes of ``op`` (an OpRecord) from the formula registered for ``op.name``.

    Never raises: missing arguments, bad shapes or dtypes, or a failing user formula give
    ``None`` with the reason kept.
    """
    key = (op.name, op.overload, op.inputs, op.outputs, op.kwargs)
    try:
        return _CACHE[key]
    except TypeError:  # an unhashable argument value: compute without the cache
        return _evaluate(op)
    except KeyError:
        cost = _CACHE[key] = _evaluate(op)
        return cost


def _evaluate(op) -> Cost:
    compute = _FORMULAS.get(op.name)
    if compute is None:
        return Cost(None, None, f"no formula for {op.name}")
    try:
        return _in_range(compute(op))
    except FormulaInputError as error:
        return Cost(None, None, error.reason)
    except Exception as error:  # a formula meeting arguments it does not expect must not break a report
        return Cost(None, None, f"formula for {op.name} failed: {type(error).__name__}: {error}")


#: Flops and bytes must fit a 64-bit column (DataFrame Int64, Arrow) and be counts: 0 or more.
_MOST = (1 << 63) - 1


def _in_range(cost: Cost) -> Cost:
    """``cost`` with a count that is not an integer from 0 to 2**63 - 1 made ``na``, saying why (shapes
    from a file, or a user formula, can give any number)."""
    bad = [what for what in ("flops", "bytes") if not _is_count(getattr(cost, what))]
    if not bad:
        return cost
    reasons = ([cost.reason] if cost.reason else []) + [
        f"{what} out of range ({_shown(getattr(cost, what))})" for what in bad
    ]
    flops = None if "flops" in bad else cost.flops
    return Cost(flops, None if "bytes" in bad else cost.bytes, "; ".join(reasons))


def _is_count(value) -> bool:
    return value is None or (value.__class__ is int and 0 <= value <= _MOST)


def _shown(value) -> str:
    if value.__class__ is int and value.bit_length() > 64:
        return f"a {value.bit_length()}-bit number"
    return repr(value)


def has_formula(name: str) -> bool:
    return name in _FORMULAS


def covered_names() -> list[str]:
    """Every op name with a formula (built-in or registered), sorted."""
    return sorted(_FORMULAS)


def _add(name: str, compute: Callable, replace: bool) -> None:
    if name in _FORMULAS and not replace:
        raise DuplicateFormulaError(f"a formula for {name!r} is already registered; pass replace=True to override it")
    _FORMULAS[name] = compute
    _CACHE.clear()


def builtin(*names: str):
    """Decorator: register ``fn(OpArgs) -> Work`` as the formula of every name in ``names``."""

    def register(fn: Callable[[OpArgs], Work]):
        def compute(op) -> Cost:
            try:
                work = fn(OpArgs(op))
            except FormulaInputError as error:
                if not (op.inputs or op.outputs or op.kwargs):  # e.g. a Kineto trace taken without record_shapes
                    raise FormulaInputError("inputs not recorded") from error
                raise
            flops = int(work.flops)
            try:
                return Cost(flops, traffic_bytes(work))
            except FormulaInputError as error:
                return Cost(flops, None, error.reason)

        for name in names:
            _add(name, compute, replace=False)
        return fn

    return register


def register_flops(name: str, flops: Callable | None = None, bytes: Callable | None = None, *, replace: bool = False):
    """Register formulas for a custom op or a wrapped function (``"mylib::op"``, ``"MyFunction.forward"``).

    ``flops`` and ``bytes`` are called as ``fn(inputs, outputs, kwargs)`` with the record's
    ``inputs`` and ``outputs`` tuples (TensorMeta for tensors, tuples of them for tensor lists,
    plain values otherwise) and its keyword arguments as a dict; each returns an int. Either may
    be omitted (that column is then ``na``). Registering a name twice raises
    DuplicateFormulaError unless ``replace=True``. With neither given, returns a decorator that
    registers the decorated function as the flops formula::

        @register_flops("mylib::fused_gelu")
        def gelu_flops(inputs, outputs, kwargs):
            return 8 * prod(inputs[0].shape)
    """
    if flops is None and bytes is None:

        def decorator(fn):
            register_flops(name, flops=fn, replace=replace)
            return fn

        return decorator

    def compute(op) -> Cost:
        kwargs = dict(op.kwargs)
        results: list[int | None] = []
        reasons: list[str] = []
        for what, fn in (("flops", flops), ("bytes", bytes)):
            if fn is None:
                results.append(None)
                reasons.append(f"no {what} formula registered for {name}")
                continue
            try:
                results.append(int(fn(op.inputs, op.outputs, kwargs)))
            except Exception as error:  # user code: keep the reason, never break the report
                results.append(None)
                reasons.append(f"{what} formula for {name} failed: {type(error).__name__}: {error}")
        return Cost(results[0], results[1], "; ".join(reasons))

    _add(name, compute, replace)
    return None
