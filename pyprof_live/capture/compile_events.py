"""torch.compile's own compile events while a profile records: compiles, recompiles, graph breaks.

Three sources, all Dynamo's own:
- its compile callbacks (``torch._dynamo.callback``): start and end of each outermost compile on the
  profile's clock, with the compile id (``0/1``) and what triggered it (a frame, or a backward
  graph compiled lazily); the profile's Python hooks are taken off for the duration (``pause``), so
  Dynamo never traces them into a graph or its guards;
- its compilation metrics (``get_compilation_metrics()``): per compile id the function and its
  line, the recompile reason (the guard that failed), the time per phase and the cache hits;
- its ``graph_breaks`` log: each graph break with its line and the reason.
Each event also keeps the user's lines of the call it happened in (Dynamo compiles inside the call it
intercepted): where a compile or a break lies in torch's own code (``torch.compile(optimizer.step)``
breaks inside torch.optim on purpose), that is the line the user can act on.
"""

from __future__ import annotations

import inspect
import logging
import re
import sys
import threading
import time
import weakref
from types import FrameType
from typing import Any

from .. import torch_compat
from ..records import CompileRecord
from . import callsite

_now = time.perf_counter_ns

#: "Graph break in user code at /x/model.py:12\nGraph Break Reason: ..." (also the "duplicate" form);
#: the reason runs to the user traceback.
_GRAPH_BREAK = re.compile(
    r"in user code at (.+?):(\d+)\s*\nGraph Break Reason: (.*?)(?:\n\nUser code traceback|\Z)", re.S
)

#: CompilationMetrics' cumulative times, each phase inside the one before it (microseconds):
#: Dynamo's includes AOTAutograd's, which includes Inductor's.
_PHASES = (
    ("dynamo_cumulative_compile_time_us", "dynamo"),
    ("aot_autograd_cumulative_compile_time_us", "aot"),
    ("inductor_cumulative_compile_time_us", "inductor"),
)
_CACHES = (
    ("inductor_fx_local_cache_hit_count", "fx graph hit"),
    ("inductor_fx_local_cache_miss_count", "fx graph miss"),
    ("aotautograd_local_cache_hit_count", "aot autograd hit"),
    ("aotautograd_local_cache_miss_count", "aot autograd miss"),
)


class _GraphBreaks(logging.Handler):
    """Receives Dynamo's graph-break log lines (nothing else reaches it) into ``events``, the recording
    profile's list. One per process, as one profile records at a time: making a logging handler (its lock,
    its weak reference in logging's registry) at each profile's start cost ~20 us."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.events: list = []
        self.stack_depth = 0  # user lines kept per break: the recording profile's stack_depth

    def emit(self, record):
        try:
            match = _GRAPH_BREAK.search(record.getMessage())
        except Exception:  # a message that does not format: not ours to fail on
            return
        if match is not None:
            filename, line, reason = match.groups()
            self.events.append(
                (
                    _now(),
                    torch_compat.current_compile_id(),
                    (callsite.file_line(filename, int(line)), *callsite.user_lines(self.stack_depth)),
                    _break_reason(reason),
                )
            )


_graph_breaks = _GraphBreaks()


def _break_reason(text: str) -> str:
    """Dynamo's reason in one line: "<what broke>: <its explanation>" ("Call to
    `torch._dynamo.graph_break()`: User-inserted graph break..."); the first line when it has no parts."""
    paragraphs = [p for p in text.strip().split("\n\n") if p.strip()]
    if len(paragraphs) < 2:
        return text.strip().splitlines()[0].strip() if text.strip() else ""
    lines = paragraphs[1].splitlines()
    explanation = next((ln.strip().removeprefix("Explanation:").strip() for ln in lines if "Explanation:" in ln), "")
    return f"{lines[0].strip()}: {explanation}" if explanation else lines[0].strip()


def _weak(function):
    """A callable returning ``function`` (None once its object is gone): weak for a bound method."""
    if inspect.ismethod(function):
        return weakref.WeakMethod(function)
    return lambda: function


def _set_level(logger: logging.Logger, level: int) -> None:
    """``logger.setLevel(level)``, forgetting the cached answers of ``isEnabledFor`` only where the level
    changes them: ``logger`` and the loggers below it. ``setLevel`` clears every logger's cache (torch
    has ~380 loggers): 150 us in a profiled step, twice per profile."""
    logger.level = level
    logger._cache.clear()  # type: ignore[attr-defined]  # logging's cache of isEnabledFor (3.7+)
    loggers = logger.manager.loggerDict
    for name in _names_below(logger.name, loggers):
        other = loggers.get(name)
        if isinstance(other, logging.Logger):
            other._cache.clear()  # type: ignore[attr-defined]


#: logger name -> (how many names the logging manager knew, the names below that logger among them).
_below: dict = {}


def _names_below(name: str, loggers: dict) -> list:
    """Names of the loggers (or placeholders, which become loggers under the same name) below ``name``.
    The manager only ever adds names, so they are looked for again only when it knows more of them:
    walking all ~380 of torch's took ~60 us, at each start and stop of a profile."""
    known = _below.get(name)
    if known is None or known[0] != len(loggers):
        prefix = name + "."
        known = _below[name] = (len(loggers), [other for other in list(loggers) if other.startswith(prefix)])
    return known[1]


class CompileEvents:
    """Dynamo's compile events for one profile; ``pause``/``resume`` take its hooks off while compiling."""

    def __init__(self, pause, resume, stack_depth: int):
        # Held weakly when they are a session's methods: a strong hold made the session and this a
        # reference cycle, so a dropped profile's records waited for a garbage collection, which then
        # ran inside a later profiled step (~11 ms for 12,000 records of a compiled GPT step).
        self._pause = _weak(pause)
        self._resume = _weak(resume)
        self.stack_depth = stack_depth  # user lines kept per event
        self.compiles: list = []  # (trigger, compile id, start, end, tid, user lines, inside compiled code)
        self.breaks: list = []  # (time, compile id, ("model.py:12", user lines...), reason)
        self._open: dict = {}  # thread -> (trigger, compile id, start, user lines, inside compiled code)
        self._since_us = 0
        self._callbacks: Any = None  # Dynamo's callback handler while installed
        self._logger: logging.Logger | None = None
        self._logger_state: tuple = (logging.NOTSET, True)  # the graph-break logger's (level, propagate) before

    def pause(self) -> None:
        pause = self._pause()
        if pause is not None:
            pause()

    def resume(self) -> None:
        resume = self._resume()
        if resume is not None:
            resume()

    def install(self) -> None:
        callback_handler = torch_compat.compile_callbacks()
        self._since_us = time.time_ns() // 1000
        callback_handler.register_start_callback(self._started)
        callback_handler.register_end_callback(self._ended)
        self._callbacks = callback_handler
        self._watch_graph_breaks()

    def remove(self) -> None:
        handler, self._callbacks = self._callbacks, None
        if handler is not None:  # torch may have cleared its callbacks itself
            if self._started in handler.start_callbacks:
                handler.remove_start_callback(self._started)
            if self._ended in handler.end_callbacks:
                handler.remove_end_callback(self._ended)
        if self._logger is not None:
            self._logger.removeHandler(_graph_breaks)
            _graph_breaks.events = []  # lets go of this profile's list
            _set_level(self._logger, self._logger_state[0])
            self._logger.propagate = self._logger_state[1]
            self._logger = None

    def _watch_graph_breaks(self) -> None:
        """Listen to Dynamo's graph_breaks log without printing it (unless the user turned it on)."""
        logger = torch_compat.graph_break_logger()
        if logger is None:
            return
        _graph_breaks.events = self.breaks
        _graph_breaks.stack_depth = self.stack_depth
        self._logger = logger
        self._logger_state = (logger.level, logger.propagate)
        if not logger.isEnabledFor(logging.DEBUG):  # off: turn it on for us only
            _set_level(logger, logging.DEBUG)
            logger.propagate = False
        logger.addHandler(_graph_breaks)

    def _started(self, args=None) -> None:
        # torch before 2.8 calls the callbacks with no argument (torch_compat.compile_callbacks): the compile
        # id is then the current one
        compile_id = getattr(args, "compile_id", None)
        self._open[threading.get_ident()] = (
            _trigger(args),
            str(compile_id or torch_compat.current_compile_id()),
            _now(),
            callsite.user_lines(self.stack_depth),
            _inside_compiled_code(),
        )
        self.pause()

    def _ended(self, args=None) -> None:
        end = _now()
        self.resume()
        tid = threading.get_ident()
        opened = self._open.pop(tid, None)
        if opened is not None:
            trigger, compile_id, start, users, nested = opened
            self.compiles.append((trigger, compile_id, start, end, tid, users, nested))

    def records(self, graphs) -> list[CompileRecord]:
        """The compile events so far, with Dynamo's metrics; ``graphs``: compile id -> [GraphInfo]."""
        if not self.compiles and not self.breaks:
            return []  # most stops: nothing compiled, Dynamo's metrics need no walk
        metrics = _metrics_since(self._since_us)
        records = []
        for trigger, compile_id, start, end, tid, users, nested in self.compiles:
            backward = trigger == "backward"
            m = metrics.get((compile_id, not backward)) or (metrics.get((compile_id, True)) if backward else None)
            mine = [g for g in graphs.get(compile_id, ()) if g.backward == backward]
            reason = (getattr(m, "recompile_reason", None) or "") if not backward else ""
            kind = "backward" if backward else "recompile" if reason or not compile_id.endswith("/0") else "compile"
            records.append(
                CompileRecord(
                    kind=kind,
                    start=start,
                    end=end,
                    compile_id=compile_id,
                    name=getattr(m, "co_name", None) or "",
                    callsite=_then(_function_line(m), users),
                    reason=_first_reason(reason),
                    graphs=len(mine),
                    kernels=sum(g.kernels for g in mine),
                    phases=_phases(m),
                    cache=_cache_text(m),
                    after_break=nested and not backward,
                    tid=tid,
                )
            )
        for at, compile_id, lines, reason in self.breaks:
            records.append(
                CompileRecord(
                    kind="graph_break", start=at, end=at, compile_id=compile_id, callsite=lines, reason=reason
                )
            )
        self.compiles.clear()
        self.breaks.clear()
        return records


#: What Dynamo's rewritten bytecode of a frame calls: its graph (``__compiled_fn_3``) and, after a graph break, the
#: function resuming the frame (``__resume_at_30_4``). Same names in 2.6, 2.13 and 2.15.
_DYNAMO_CALLS = ("__compiled_fn", "__resume_at")


def _inside_compiled_code() -> bool:
    """Is a frame on the stack running Dynamo's rewrite of a frame? A frame compiling inside one is a call that the
    outer frame's graph broke at: without the break, Dynamo would have inlined it, and not compiled it on its own."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if any(name.startswith(_DYNAMO_CALLS) for name in frame.f_code.co_names):
            return True
        frame = frame.f_back
    return False


def _trigger(args) -> str:
    name = getattr(getattr(args, "callback_trigger", None), "name", "")
    return {"DYNAMO": "frame", "LAZY_BACKWARD": "backward"}.get(name, name.lower() or "frame")


def _metrics_since(since_us: int) -> dict:
    """(compile id, is forward) -> Dynamo's CompilationMetrics of compiles that started since then."""
    found = {}
    for m in torch_compat.compilation_metrics():
        if (getattr(m, "start_time_us", None) or 0) >= since_us:
            found[(str(m.compile_id), getattr(m, "is_forward", True) is not False)] = m
    return found


def _function_line(m) -> tuple:
    filename, line = getattr(m, "co_filename", None), getattr(m, "co_firstlineno", None)
    return (callsite.file_line(filename, line),) if filename and line else ()


def _then(lines: tuple, users: tuple) -> tuple:
    """``lines`` then the user's lines, less a first one that repeats the last of ``lines``: a resumed frame's
    function starts at the line of its graph break, where the user's frame is calling it."""
    return lines + (users[1:] if lines and users and users[0] == lines[-1] else users)


def _first_reason(reason: str) -> str:
    """Dynamo lists every failed guard, one per line ("0/0: tensor 'x' size mismatch ..."): keep the first, without
    the padding that aligns a Python guard's source comment ("self.flag is None      # if self.flag ...")."""
    return re.sub(r"\s{3,}", "  ", reason.strip().splitlines()[0].strip()) if reason.strip() else ""


def _phases(m) -> dict:
    """ns spent in each phase itself: {"dynamo": tracing, "aot": AOTAutograd, "inductor": Inductor}."""
    cumulative = [(name, getattr(m, field, None) or 0) for field, name in _PHASES]
    phases = {}
    for (name, total), (_, inner) in zip(cumulative, cumulative[1:] + [("", 0)]):
        if total:
            phases[name] = max(total - inner, 0) * 1000
    return phases


def _cache_text(m) -> str:
    return ", ".join(f"{label} {getattr(m, field)}" for field, label in _CACHES if getattr(m, field, None))
