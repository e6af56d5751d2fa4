"""Profiles the export tests share: one built by hand (GPU records, times picked so the expected
values can be worked out on paper) and a live CPU profile of a small model with modules and steps."""

from __future__ import annotations

import torch

import pyprof_live
from pyprof_live.profile import Profile
from pyprof_live.records import ApiRecord, KernelRecord, MemoryRecord, OpRecord, RangeRecord, TensorMeta

BIG_TID = 2**40  # a Python thread ident: too large for the uint32 tids viewers read


def hand_profile() -> Profile:
    """linear > addmm (same start), a bwd mm tied to addmm by seq 7, 2 kernels, 1 memcpy, 2 ranges.

    pid 0 (as live profiles) clashes with GPU 0; the thread ident does not fit in 32 bits; the
    nvtx range starts inside linear and ends after it, so it cannot nest on the thread's track.
    """
    x, w, b = TensorMeta((8, 16), "float32"), TensorMeta((16, 4), "float32"), TensorMeta((4,), "float32")
    ops = [
        OpRecord("aten::linear", 1000, 5000, tid=BIG_TID, dir="fwd", module="Net.fc"),
        OpRecord(
            "aten::addmm",
            1000,
            4000,
            tid=BIG_TID,
            seq=7,
            inputs=(b, x, w, 1, 1),
            outputs=(TensorMeta((8, 4), "float32"),),
        ),
        OpRecord("aten::mm", 10000, 12000, tid=BIG_TID, dir="bwd", altseq=7, node="AddmmBackward0"),
    ]
    apis = [
        ApiRecord("cudaLaunchKernel", 2000, 2100, correlation=1, tid=BIG_TID),
        ApiRecord("cudaMemcpyAsync", 3000, 3050, correlation=3, tid=BIG_TID),
        ApiRecord("cudaLaunchKernel", 10500, 10600, correlation=2, tid=BIG_TID),
    ]
    kernels = [
        KernelRecord("void gemm_kernel<float>(float*)", 2500, 3500, stream=7, correlation=1),
        KernelRecord("mm_kernel", 11000, 11800, stream=7, correlation=2),
    ]
    memops = [MemoryRecord("memcpy", 3200, 3300, bytes=1000, copy_kind="HtoD", stream=13, correlation=3)]
    ranges = [
        RangeRecord("step 0", 500, 13000, tid=BIG_TID, kind="step"),
        RangeRecord("nvtx overlap", 4500, 11000, tid=BIG_TID),
    ]
    return Profile(ops=ops, apis=apis, kernels=kernels, memops=memops, ranges=ranges, meta={"source": "test"})


class TinyNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU())
        self.head = torch.nn.Linear(16, 2)

    def forward(self, x):
        return self.head(self.body(x))


def live_profile(steps: int = 2):
    """TinyNet trained for ``steps`` steps with SGD under profile(), one p.step() per step."""
    torch.manual_seed(0)
    model = TinyNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pyprof_live.profile() as p:
        for _ in range(steps):
            loss = model(torch.randn(4, 8)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            p.step()
    return p
