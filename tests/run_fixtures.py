"""A hand-built 4-rank job with known delays, written as per-rank Kineto traces.

Global time, µs, per rank r (each rank's file adds its clock offset ``OFFSETS_US[r]`` to every ts):
- ProfilerStep#1: [0, 1000]; aten::mm [4, 8] on the host, launching gemm (corr 1) at 5;
- gemm (compute, stream 7): [10, 10 + COMPUTE_US[r]]; the rank reaches the collective when it ends:
  arrival a_r = 10 + COMPUTE_US[r] = 110, 130, 310, 160;
- ncclKernel_AllReduce (stream 20, launched at 8, corr 2): [a_r, 400]: every rank leaves at 400;
- add (compute, stream 8, launched at 9, corr 3): [a_r + 20, a_r + 70], under the collective;
- Memcpy DtoH (stream 7, launched at 11, corr 4): [400, 420].
"""

from __future__ import annotations

import gzip
import json

OFFSETS_US = (0, 100, 200, 300)
COMPUTE_US = (100, 120, 300, 150)
WORLD = 4


def arrival_us(rank: int) -> int:
    return 10 + COMPUTE_US[rank]


def rank_events(rank: int) -> list:
    a = arrival_us(rank)
    host = {"pid": 1, "tid": 1}

    def x(cat, name, ts, dur, args=None, **ids):
        return {"ph": "X", "cat": cat, "name": name, "ts": ts + OFFSETS_US[rank], "dur": dur, "args": args or {}, **ids}

    def launch(ts, correlation):
        return x("cuda_runtime", "cudaLaunchKernel", ts, 1, {"correlation": correlation}, **host)

    def kernel(name, ts, dur, stream, correlation, cat="kernel"):
        args = {"device": 0, "stream": stream, "correlation": correlation}
        return x(cat, name, ts, dur, args, pid=0, tid=stream)

    return [
        x("user_annotation", "ProfilerStep#1", 0, 1000, **host),
        x("cpu_op", "aten::mm", 4, 4, {"External id": 1}, **host),
        launch(5, 1),
        launch(8, 2),
        launch(9, 3),
        launch(11, 4),
        kernel("gemm_kernel", 10, COMPUTE_US[rank], 7, 1),
        kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", a, 400 - a, 20, 2),
        kernel("add_kernel", a + 20, 50, 8, 3),
        kernel("Memcpy DtoH (Device -> Pageable)", 400, 20, 7, 4, cat="gpu_memcpy"),
    ]


def write_rank(directory, rank: int, world: int = WORLD, name: str | None = None):
    path = directory / (name or f"rank-{rank}.json.gz")
    trace = {
        "schemaVersion": 1,
        "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": world},
        "traceEvents": rank_events(rank),
    }
    with gzip.open(path, "wt") as f:
        json.dump(trace, f)
    return path


def write_run(directory, ranks=range(WORLD)) -> list:
    return [write_rank(directory, r) for r in ranks]
