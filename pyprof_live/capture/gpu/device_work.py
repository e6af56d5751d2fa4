"""Facts about device work that one row per op cannot tell: CUDA graph replays, communication kernels.

A kernel replayed from a CUDA graph carries the correlation id of the ``cudaGraphLaunch`` that
replayed it; when the graph was captured under the profile, ``graph_nodes.py`` also gives it the
call that issued it at capture, and correlation ties it to that call's op. The replays are
summarised per graph all the same (kernels, time, launches, nodes), with a report line.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ...analysis.kernel_names import kernel_category


def graph_replays(kernels) -> dict:
    """graph id -> {"kernels", "time_ns", "launches", "nodes"} for kernels replayed from a CUDA graph."""
    graphs: defaultdict[int, dict[str, Any]] = defaultdict(
        lambda: {"kernels": 0, "time_ns": 0, "launches": set(), "nodes": set()}
    )
    for k in kernels:
        if k.graph_id:
            graph = graphs[k.graph_id]
            graph["kernels"] += 1
            graph["time_ns"] += k.end - k.start
            graph["launches"].add(k.correlation)
            graph["nodes"].add(k.graph_node_id)
    return {gid: {**g, "launches": len(g["launches"]), "nodes": len(g["nodes"])} for gid, g in sorted(graphs.items())}


def communication(kernels) -> dict:
    """stream -> {"kernels", "time_ns"} for communication (NCCL) kernels."""
    streams: defaultdict[int, dict[str, int]] = defaultdict(lambda: {"kernels": 0, "time_ns": 0})
    for k in kernels:
        if kernel_category(k.name) == "communication":
            stream = streams[k.stream]
            stream["kernels"] += 1
            stream["time_ns"] += k.end - k.start
    return dict(sorted(streams.items()))


def describe(kernels) -> tuple[dict, list]:
    """(facts for Profile.meta, one report line per kind of such work found)."""
    facts, lines = {}, []
    graphs = graph_replays(kernels)
    if graphs:
        count = sum(g["kernels"] for g in graphs.values())
        time_ns = sum(g["time_ns"] for g in graphs.values())
        facts["gpu_graph_replays"] = graphs
        lines.append(
            f"{count} kernels ({time_ns} ns) were replays of CUDA graph(s) {', '.join(map(str, graphs))}: shown under "
            "the op that issued them at capture when the capture was profiled, else under the op that launched "
            "the graph, or as 'replay of graph N'"
        )
    streams = communication(kernels)
    if streams:
        count = sum(s["kernels"] for s in streams.values())
        time_ns = sum(s["time_ns"] for s in streams.values())
        facts["gpu_communication"] = streams
        lines.append(f"{count} communication kernels ({time_ns} ns) on stream(s) {', '.join(map(str, streams))}")
    return facts, lines
