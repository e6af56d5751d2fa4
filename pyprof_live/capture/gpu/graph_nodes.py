"""CUDA graph nodes -> the launch call that created them at capture, from CUPTI's callback API.

A kernel replayed by ``cudaGraphLaunch`` carries the launch's correlation id plus ``graph_id`` and
``graph_node_id``; the op that issued it ran while the graph was captured (``torch.cuda.graph``,
``torch.compile(mode="reduce-overhead")``), when its ``cudaLaunchKernel`` made a graph node instead
of running. CUPTI tells which call made which node only through its callback API (the CUPTI
sample ``cuda_graphs_trace`` does the same): ``GRAPHNODE_CREATED`` fires inside the call that adds
a node, ``GRAPHNODE_CLONED`` when instantiation copies it into the executable graph, whose node ids
the replayed kernels carry. The callback records (node id, thread, CUPTI time); after the run the
creating call is the API record of that thread whose interval holds that time, and the kernel gets
its correlation id as ``capture_correlation`` (correlation ties it to that call's op).

CUPTI allows one subscriber per process: :data:`_subscriber` is owned here, by one tracker at a time.
The subscription is taken only when a graph capture begins under the profile (a hook on
``torch.cuda.CUDAGraph.capture_begin``) and dropped when the profile stops: a subscriber held while
torch.profiler initialises breaks Kineto's one-shot initialisation (see cupti_backend.py), so a
profile that captures no graph never holds one. When another subscriber holds CUPTI (torch.profiler,
once used, keeps one; nsys), replayed kernels stay "replay of graph N" and a note says why.
"""

from __future__ import annotations

import bisect
import threading
from collections import defaultdict

import torch
from cupti import cupti

from ...records import NO_LINK

_RESOURCE = int(cupti.CallbackDomain.RESOURCE)
_CREATED = int(cupti.CallbackIdResource.GRAPHNODE_CREATED)
_CLONED = int(cupti.CallbackIdResource.GRAPHNODE_CLONED)
_MULTIPLE_SUBSCRIBERS = int(cupti.Result.ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)

_lock = threading.Lock()
_subscriber = None  # (tracker, CUPTI subscriber handle) while a tracker holds the subscription


class GraphNodeTracker:
    """Graph nodes made or cloned while a profile runs, resolved to their creating call at stop.

    ``process`` gives CUPTI's calls (``subscribe``, ``enable_callback``, ``unsubscribe``,
    ``get_graph_node_id``, ``get_timestamp``): cupti-python's in a real run, a stand-in in tests.
    """

    def __init__(self, process):
        self.process = process
        self.created: list = []  # (node id, CUPTI thread id, CUPTI ns)
        self.cloned: dict = {}  # node id in the executable graph -> id of the node it was cloned from
        self.failure = ""  # why capture-time calls are unknown, when they are
        self.captures = 0
        self._original = None  # CUDAGraph.capture_begin while hooked

    # -- control -----------------------------------------------------------------------------------

    def install(self) -> None:
        """Hook graph capture: the first capture under the profile takes the CUPTI subscription."""
        graph = torch.cuda.CUDAGraph
        original = graph.capture_begin
        tracker = self

        def capture_begin(self, *args, **kwargs):
            tracker.captures += 1
            tracker.subscribe()
            return original(self, *args, **kwargs)

        graph.capture_begin = capture_begin  # type: ignore[method-assign]  # undone by remove()
        self._original = original

    def remove(self) -> None:
        """Unhook and give the subscription back (safe to call twice, or after a failed install)."""
        if self._original is not None:
            torch.cuda.CUDAGraph.capture_begin = self._original  # type: ignore[method-assign]
            self._original = None
        self._release()

    def _release(self) -> None:
        global _subscriber
        with _lock:
            held = _subscriber if _subscriber is not None and _subscriber[0] is self else None
            if held is not None:
                _subscriber = None
        if held is not None:
            try:
                self.process.unsubscribe(held[1])
            except (RuntimeError, cupti.cuptiError) as exc:  # the driver went away: nothing left to release
                self.failure = self.failure or f"CUPTI unsubscribe failed ({exc})"

    def subscribe(self) -> None:
        global _subscriber
        with _lock:
            if _subscriber is not None:
                if _subscriber[0] is not self:
                    self.failure = "another pyprof_live profile holds CUPTI's callback subscription"
                return
            if self.failure:
                return  # tried once already
            try:
                handle = self.process.subscribe(self.callback, None)
            except cupti.cuptiError as exc:
                status = getattr(exc, "status", None)  # cupti-python's stub does not declare it
                if status == _MULTIPLE_SUBSCRIBERS:
                    self.failure = (
                        "another CUPTI subscriber holds CUPTI's callback API (torch.profiler keeps one once used "
                        "in a process; Nsight tools too)"
                    )
                else:
                    self.failure = f"CUPTI subscribe failed: {exc}"
                return
            except RuntimeError as exc:
                self.failure = f"CUPTI subscribe failed ({exc})"
                return
            _subscriber = (self, handle)
        try:
            for cbid in (_CREATED, _CLONED):
                self.process.enable_callback(1, handle, _RESOURCE, cbid)
        except (RuntimeError, cupti.cuptiError) as exc:
            self.failure = f"CUPTI graph-node callbacks could not be enabled ({exc})"
            self._release()

    # -- CUPTI's thread or the capturing thread --------------------------------------------------------

    def callback(self, userdata, domain, cbid, data) -> None:
        """CUPTI resource callback: copy the node ids out at once (the data dies with the call)."""
        if int(domain) != _RESOURCE or int(cbid) not in (_CREATED, _CLONED):
            return
        process = self.process
        if not hasattr(data, "resource_descriptor"):  # cupti-python may hand the raw pointer
            data = cupti.ResourceData.from_ptr(int(data), owner=self)
        graph = cupti.GraphData.from_ptr(int(data.resource_descriptor), owner=data)
        node = process.get_graph_node_id(graph.node)
        if int(cbid) == _CREATED:
            self.created.append((node, threading.get_ident() & 0xFFFFFFFF, process.get_timestamp()))
        else:
            self.cloned[node] = process.get_graph_node_id(graph.original_node)

    # -- after the run ---------------------------------------------------------------------------------

    def resolve(self, apis, kernels, to_host) -> dict:
        """Give replayed kernels the correlation id of the call that created their node; returns facts
        for ``Profile.meta`` (``apis`` carry CUPTI thread ids and host-clock times; ``to_host`` maps
        CUPTI ns to host ns as for the activity records)."""
        creator = self._creating_calls(apis, to_host)
        replayed = tied = 0
        for kernel in kernels:
            if not kernel.graph_id:
                continue
            replayed += 1
            node = kernel.graph_node_id
            for _ in range(8):  # an executable graph's node -> the captured node it was cloned from
                if node in creator or node not in self.cloned:
                    break
                node = self.cloned[node]
            correlation = creator.get(node, NO_LINK)
            if correlation != NO_LINK:
                kernel.capture_correlation = correlation
                tied += 1
        return {"captures": self.captures, "nodes_created": len(self.created), "kernels": replayed, "tied": tied}

    def _creating_calls(self, apis, to_host) -> dict:
        """node id -> correlation of the innermost API call, on the node's thread, open when it was made."""
        by_thread = defaultdict(list)
        for api in apis:
            by_thread[api.tid].append((api.start, api.end, api.correlation))
        for calls in by_thread.values():
            calls.sort()
        creator = {}
        for node, thread, stamp in self.created:
            calls = by_thread.get(thread, [])
            if not calls:
                continue
            at = to_host(stamp)
            i = bisect.bisect_right(calls, (at, float("inf"), 0)) - 1
            # The latest-starting call that still holds `at` is the innermost; calls of one thread only
            # nest (runtime > driver), so a few steps back reach the outermost.
            for j in range(i, max(i - 4, -1), -1):
                _start, end, correlation = calls[j]
                if end >= at:
                    creator[node] = correlation
                    break
        return creator


def describe(facts: dict, failure: str) -> list:
    """Report lines for the capture-time ties of a live profile."""
    if not facts.get("kernels"):
        return []
    lines = [
        f"{facts['tied']} of {facts['kernels']} kernels replayed from CUDA graphs tied to the ops that issued them "
        f"at capture ({facts['captures']} graph capture(s) in the profile; by CUPTI graph node ids)"
    ]
    if failure:
        lines.append(f"capture-time ops of graph replays unknown: {failure}")
    elif facts["tied"] < facts["kernels"]:
        lines.append("replays of graphs captured before the profile started are shown as 'replay of graph N'")
    return lines
