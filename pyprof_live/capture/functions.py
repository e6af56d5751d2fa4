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

from .. import torch_compat
from .annotations import sink
from .context import context

_now = time.perf_counter_ns
_peek_seq = torch_compat.peek_sequence_nr
_WRAPPED = "__pyprof_live_wrapped__"


def _record_call(label: str, mod: str, call, args, kwargs, with_seq: bool = False):
    """Run ``call`` and, while a profile records, add a function record spanning it.

    ``with_seq``: the call is an autograd Function's apply; its record takes the sequence number
    of the node its output hangs from, so the Function's backward ops are tied to it.
    """
    session = sink.session
    if session is None or not session.recording:
        return call(*args, **kwargs)
    began = _now()
    scope = session.open_function(label, mod)
    before = _peek_seq()
    context.hook_ns += _now() - began  # profiler time, carried by the next op (the first inside)
    try:
        out = call(*args, **kwargs)
    finally:
        returned = _now()
        session.close_function(scope)
    if with_seq:
        scope.seq = _sequence_of(out)
        if _peek_seq() > before:  # the node is numbered first, before forward runs
            scope.node_number = before
    context.hook_ns += _now() - returned
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
        self._ours = None  # (apply, recompute enter, recompute exit) while installed

    def install(self) -> None:
        self._apply = descriptor = torch_compat.function_apply()
        bind = torch_compat.bind_apply

        def apply(cls, *args, **kwargs):
            return _record_call(cls.__name__, cls.__name__, bind(descriptor, cls), args, kwargs, with_seq=True)

        self._ours = (classmethod(apply), *self._recompute_hooks())
        self.resume()

    def _recompute_hooks(self) -> tuple:
        """(enter, exit) that count checkpoint recomputes around torch's own; (None, None) without the hook."""
        hook = torch_compat.recomputation_hook()
        if hook is None:
            return None, None
        self._recompute_enter = (hook.__dict__.get("__enter__"), hook.__dict__.get("__exit__"))
        enter, exit_ = hook.__enter__, hook.__exit__

        def recompute_enter(self_):
            context.recompute += 1
            return enter(self_)

        def recompute_exit(self_, *exc):
            context.recompute -= 1
            return exit_(self_, *exc)

        return recompute_enter, recompute_exit

    def resume(self) -> None:
        """Put the hooks (back) in place."""
        if self._ours is None:
            return
        torch_compat.set_function_apply(self._ours[0])
        hook = torch_compat.recomputation_hook()
        if hook is not None and self._ours[1] is not None:
            hook.__enter__, hook.__exit__ = self._ours[1:]  # type: ignore[method-assign]

    def suspend(self) -> None:
        """Put torch's own back for a while (torch.compile must not trace ours: see compiled.py)."""
        if self._apply is not None:
            torch_compat.set_function_apply(self._apply)
        if self._recompute_enter is not None:
            hook = torch_compat.recomputation_hook()
            for attr, value in zip(("__enter__", "__exit__"), self._recompute_enter):
                if value is not None:
                    setattr(hook, attr, value)
                elif attr in vars(hook):
                    delattr(hook, attr)

    def remove(self) -> None:
        self.suspend()
        self._apply = self._recompute_enter = self._ours = None

    def hook_functions(self) -> tuple:
        """Our functions that run in the user's call stack (compiled.never_compiled skips them)."""
        if self._ours is None:
            return (_record_call,)
        return (_record_call, self._ours[0].__func__, *(f for f in self._ours[1:] if f is not None))


def _sequence_of(out) -> int:
    """Sequence number of the autograd node a Function's output hangs from, -1 if none."""
    tensors = out if isinstance(out, (tuple, list)) else (out,)
    for t in tensors:
        if isinstance(t, torch.Tensor) and t.grad_fn is not None:
            return torch_compat.node_sequence_nr(t.grad_fn)
    return -1
