"""NVTX and `layer:` ranges seen in-process, and ``pyprof_live.layer()``.

The ``nvtx`` package does nothing in Python when no tool is attached (its decorator even returns
the undecorated function), and ``torch.cuda.nvtx`` only reaches C. So the Python entry points of
both are wrapped once (at import of pyprof_live when already loaded, else when a profile starts or
``layer()`` is first used): each wrapper forwards to the original and, only while a profile records,
notes the range on the calling thread. ``layer:NAME`` ranges nest into
the ``layer`` column (``Encoder_2:FFN:LayerNorm``); other ranges are kept as NVTX ranges.
"""

from __future__ import annotations

import functools
import inspect
import sys
import time
from threading import get_ident
from typing import Any

from .context import context

LAYER_PREFIX = "layer:"
_now = time.perf_counter_ns


class _Sink:
    """Where ranges go: the recording profile, or nowhere."""

    session: Any = None  # a CaptureSession while one records


sink = _Sink()
_started: dict = {}  # start_range ids -> (message, start, tid)


def pushed(message) -> None:
    """A push range opened on this thread."""
    if sink.session is None:
        return
    ctx = context
    message = message if isinstance(message, str) else str(message)
    ctx.nvtx_stack.append((message, _now()))
    if message.startswith(LAYER_PREFIX):
        ctx.layers = ctx.layers + (message[len(LAYER_PREFIX) :],)


def popped() -> None:
    """The innermost push range of this thread closed."""
    session = sink.session
    ctx = context
    if session is None or not ctx.nvtx_stack:
        return
    message, start = ctx.nvtx_stack.pop()
    is_layer = message.startswith(LAYER_PREFIX)
    if is_layer and ctx.layers:
        ctx.layers = ctx.layers[:-1]
    session.add_range(
        message[len(LAYER_PREFIX) :] if is_layer else message,
        start,
        _now(),
        get_ident(),
        "layer" if is_layer else "nvtx",
    )


def started(range_id, message) -> None:
    """A start/end range (not nested, may end on another thread) opened."""
    if sink.session is not None:
        _started[_range_key(range_id)] = (str(message), _now(), get_ident())


def ended(range_id) -> None:
    opened = _started.pop(_range_key(range_id), None)
    if opened is not None and sink.session is not None:
        message, start, tid = opened
        sink.session.add_range(message, start, _now(), tid, "nvtx")


def _range_key(range_id):
    return range_id if isinstance(range_id, (int, tuple)) else id(range_id)


class layer:
    """Name a region of the model; its ops get the name in the ``layer`` column.

    Works as ``with pyprof_live.layer("FFN"):`` and as ``@pyprof_live.layer("FFN")``, with or
    without an NVTX tool attached, and nests (``Encoder_2:FFN``). It also pushes the NVTX range
    ``layer:FFN`` so Nsight Systems sees the same names.
    """

    def __init__(self, name: str):
        self.name = name
        self.message = LAYER_PREFIX + name

    def __enter__(self):
        install()  # an attached NVTX tool sees the range too; costs one set lookup once wrapped
        pushed(self.message)
        _forward_push(self.message)
        return self

    def __exit__(self, *exc):
        _forward_pop()
        popped()
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def inner(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return inner


def _forward_push(message) -> None:
    """Tell an attached NVTX tool too (nothing happens without one)."""
    if _originals.get("nvtx.push_range"):
        _originals["nvtx.push_range"](message)


def _forward_pop() -> None:
    if _originals.get("nvtx.pop_range"):
        _originals["nvtx.pop_range"]()


_originals: dict = {}  # the nvtx functions we wrapped, so layer() can reach an attached tool
_installed: set = set()  # which of "nvtx", "torch.cuda.nvtx" are wrapped


def install(only_imported: bool = False) -> None:
    """Wrap the nvtx and torch.cuda.nvtx entry points, each once.

    ``only_imported``: wrap only those whose module is loaded already, importing nothing (at
    ``import pyprof_live``, which must not import torch or nvtx's numpy); a profile's start wraps
    the rest. Code that binds a function (``from nvtx import push_range``) before it is wrapped
    keeps the unwrapped one.
    """
    if "nvtx" not in _installed and (not only_imported or "nvtx.nvtx" in sys.modules):
        _installed.add("nvtx")
        try:
            import nvtx
            import nvtx.nvtx as nvtx_impl
        except ImportError:  # nvtx is a dependency, but a broken install must not break profiling
            pass
        else:
            _patch_nvtx(nvtx, nvtx_impl)
    if "torch.cuda.nvtx" not in _installed and (not only_imported or "torch.cuda.nvtx" in sys.modules):
        _installed.add("torch.cuda.nvtx")
        import torch.cuda.nvtx as torch_nvtx

        _patch_torch_nvtx(torch_nvtx)


def _then(original, note):
    """``original``, then ``note(result, first_argument)``: the recording half of every NVTX wrapper.

    The first argument (the message, or the range id) may come by keyword, in any order.
    """
    first = next(iter(inspect.signature(original).parameters), None)  # pop_range() takes none

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        result = original(*args, **kwargs)
        note(result, args[0] if args else kwargs.get(first))
        return result

    return wrapper


# What each kind of NVTX entry point tells us, whichever package it comes from.
def _on_push(result, message):
    pushed(message)


def _on_pop(result, _):
    popped()


def _on_start(range_id, message):
    started(range_id, message)


def _on_end(result, range_id):
    ended(range_id)


def _patch_nvtx(nvtx, nvtx_impl) -> None:
    _originals.update({"nvtx.push_range": nvtx_impl.push_range, "nvtx.pop_range": nvtx_impl.pop_range})
    push_range, pop_range = _then(nvtx_impl.push_range, _on_push), _then(nvtx_impl.pop_range, _on_pop)
    start_range, end_range = _then(nvtx_impl.start_range, _on_start), _then(nvtx_impl.end_range, _on_end)

    class recorded_annotate(nvtx_impl.annotate):
        """nvtx.annotate that is seen in-process, as a context manager and as a decorator."""

        def __enter__(self):
            result = super().__enter__()
            pushed(self.init_args[0])
            return result

        def __exit__(self, *exc):
            popped()
            return super().__exit__(*exc)

        def __call__(self, func):
            wrapped = super().__call__(func)
            message = self.init_args[0] or func.__name__

            @functools.wraps(func)
            def inner(*args, **kwargs):
                pushed(message)
                try:
                    return wrapped(*args, **kwargs)
                finally:
                    popped()

            return inner

    for module in (nvtx, nvtx_impl):
        module.push_range, module.pop_range = push_range, pop_range
        module.start_range, module.end_range = start_range, end_range
        module.annotate = recorded_annotate


def _patch_torch_nvtx(torch_nvtx) -> None:
    torch_nvtx.range_push = _then(torch_nvtx.range_push, _on_push)
    torch_nvtx.range_pop = _then(torch_nvtx.range_pop, _on_pop)
    torch_nvtx.range_start = _then(torch_nvtx.range_start, _on_start)
    torch_nvtx.range_end = _then(torch_nvtx.range_end, _on_end)
