"""Python-level scopes that own aten ops: wrap()'d functions, custom autograd Functions, and
activation-checkpoint recomputation.

A custom ``torch.autograd.Function`` creates its autograd node before its forward runs, and its
forward runs with grad disabled; without a record of its own, its backward ops would be tied to
whichever aten op ran first inside it. So ``Function.apply`` is wrapped while a profile records
and the Function gets a record (``kind="function"``) carrying the node's sequence number.
"""

from __future__ import annotations

import functools
import inspect
import time

import torch
from torch.autograd.function import Function
from torch.utils import checkpoint as _checkpoint

from .annotations import sink
from .context import context

_now = time.perf_counter_ns
_peek_seq = torch._C._autograd._get_sequence_nr
_WRAPPED = "__pyprof_live_wrapped__"


def _record_call(label: str, mod: str, call, args, kwargs, with_seq: bool = False):
    """Run ``call`` and, while a profile records, add a function record spanning it.

    ``with_seq``: the call is an autograd Function's apply; its record takes the sequence number
    of the node its output hangs from, so the Function's backward ops are tied to it.
    """
    session = sink.session
    if session is None or not session.recording:
        return call(*args, **kwargs)
    scope = session.open_function(label, mod)
    before = _peek_seq()
    try:
        out = call(*args, **kwargs)
    finally:
        session.close_function(scope)
    if with_seq:
        scope.seq = _sequence_of(out)
        if _peek_seq() > before:  # the node is numbered first, before forward runs
            scope.node_number = before
    return out


def wrap(owner, name: str) -> None:
    """Attribute ops run inside ``owner.name`` to it, as PyProf's ``pyprof.wrap`` did.

    ``owner`` is a class (an nn.Module, an autograd Function...) or a module object; the wrapper
    stays in place and costs one check per call when no profile runs. Wrapping twice is a no-op.
    """
    static = inspect.getattr_static(owner, name)
    kind = type(static) if isinstance(static, (staticmethod, classmethod)) else None
    original = static.__func__ if kind else getattr(owner, name)
    if getattr(original, _WRAPPED, False):
        return
    mod = getattr(owner, "__name__", type(owner).__name__)
    label = f"{mod}.{name}"

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        return _record_call(label, mod, original, args, kwargs)

    setattr(wrapper, _WRAPPED, True)
    setattr(owner, name, kind(wrapper) if kind else wrapper)


class FunctionScopes:
    """Installs, for one profile, the Function.apply and checkpoint-recompute hooks."""

    def __init__(self):
        self._apply = None
        self._recompute_enter = None

    def install(self) -> None:
        # A classmethod up to torch 2.14, a C classmethod_descriptor (no __func__) from 2.15: binding
        # through the descriptor protocol serves both.
        self._apply = descriptor = Function.__dict__["apply"]

        def apply(cls, *args, **kwargs):
            return _record_call(cls.__name__, cls.__name__, descriptor.__get__(None, cls), args, kwargs, with_seq=True)

        Function.apply = classmethod(apply)  # type: ignore[method-assign,assignment]  # torch's class, patched
        hook = _checkpoint._recomputation_hook
        self._recompute_enter = (hook.__dict__.get("__enter__"), hook.__dict__.get("__exit__"))
        enter, exit_ = hook.__enter__, hook.__exit__

        def recompute_enter(self_):
            context.recompute += 1
            return enter(self_)

        def recompute_exit(self_, *exc):
            context.recompute -= 1
            return exit_(self_, *exc)

        hook.__enter__, hook.__exit__ = recompute_enter, recompute_exit  # type: ignore[method-assign]

    def remove(self) -> None:
        if self._apply is not None:
            Function.apply = self._apply  # type: ignore[method-assign]
            self._apply = None
        if self._recompute_enter is not None:
            hook = _checkpoint._recomputation_hook
            for attr, value in zip(("__enter__", "__exit__"), self._recompute_enter):
                if value is None:
                    delattr(hook, attr)
                else:
                    setattr(hook, attr, value)
            self._recompute_enter = None


def _sequence_of(out) -> int:
    """Sequence number of the autograd node a Function's output hangs from, -1 if none."""
    tensors = out if isinstance(out, (tuple, list)) else (out,)
    for t in tensors:
        if isinstance(t, torch.Tensor) and t.grad_fn is not None:
            return t.grad_fn._sequence_nr()
    return -1
