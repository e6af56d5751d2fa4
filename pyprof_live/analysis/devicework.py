"""What each op ran on the GPU: its own kernels and memcpy/memset, and those of the ops it called.

Correlation ties every kernel to the innermost op that launched it; views and recommendations
also need an op's inclusive device time (``aten::linear`` owns nothing, its ``aten::addmm`` child
owns the GEMM) and its rooflines. Built once per view from one pass over the device records and
one walk up each op's parent chain.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..records import NO_LINK
from .kernel_names import uses_tensor_cores
from .peaks import device_peaks
from .roofline import Roofline, combine_tensor_cores, op_dtype, roofline


@dataclass(slots=True)
class OpDevice:
    """Device activity of one op; ``*_self`` = launched by the op itself, ``*_total`` = with its callees."""

    dev_self: int = 0  # ns of kernels + memcpy/memset
    dev_total: int = 0
    kernel_self: int = 0  # ns of kernels only (what the roofline compares with)
    kernel_total: int = 0
    kernels_total: int = 0  # how many kernels
    device: int = NO_LINK  # GPU of the op's first kernel
    tensor_cores: bool | None = False  # combined verdict over all its kernels


class DeviceWork:
    """Per-op device time and rooflines of one profile (correlation must have run)."""

    def __init__(self, profile):
        ops = profile.records.ops
        self.ops = ops
        self.peaks = device_peaks(profile)
        self.by_op: dict[int, OpDevice] = {}
        # Each op's own work first, then charged up its parent chain once per op, not once per kernel.
        first: dict[int, int] = {}  # op -> position of the first kernel of its own or its callees'
        by_op = self.by_op
        names: dict[int, set] = {}  # op -> names of its own kernels, their verdicts combined once per op
        last = None  # the previous kernel's op: an op's kernels mostly follow each other
        for position, kernel in enumerate(profile.records.kernels):
            i = kernel.op
            if i != last:  # looked up once per run of kernels of one op, not once per kernel
                if i == NO_LINK:
                    continue
                last = i
                # _entry inlined, no method call: a million kernels of a big import.
                entry = by_op.get(i)
                if entry is None:
                    entry = by_op[i] = OpDevice()
                    own_names = names[i] = set()
                else:
                    own_names = names[i]
            if entry.device == NO_LINK:
                first[i] = position
                entry.device = kernel.device
            # dev_self and kernel_total start equal to kernel_self: set from it after the loop
            entry.kernel_self += kernel.end - kernel.start
            entry.kernels_total += 1
            own_names.add(kernel.name)
        for i, entry in by_op.items():
            entry.dev_self = entry.kernel_total = entry.kernel_self
            entry.tensor_cores = combine_tensor_cores(map(uses_tensor_cores, names[i]))
        for memop in profile.records.memops:
            if memop.op != NO_LINK:
                self._entry(memop.op).dev_self += memop.end - memop.start
        owners = [(i, e.dev_self, e.kernel_self, e.kernels_total, e.device, e.tensor_cores) for i, e in by_op.items()]
        for i, dev, kernel, kernels, device, tensor_cores in owners:
            by_op[i].dev_total += dev
            position = first.get(i)
            j = ops[i].parent
            while j != NO_LINK:  # _entry inlined: once per op and enclosing op of a big import
                entry = by_op.get(j)
                if entry is None:
                    entry = by_op[j] = OpDevice()
                entry.dev_total += dev
                entry.kernel_total += kernel
                entry.kernels_total += kernels
                if kernels:
                    entry.tensor_cores = combine_tensor_cores((entry.tensor_cores, tensor_cores))
                    if position < first.get(j, position + 1):
                        first[j], entry.device = position, device
                j = ops[j].parent

    def _entry(self, i: int) -> OpDevice:
        entry = self.by_op.get(i)
        if entry is None:
            entry = self.by_op[i] = OpDevice()
        return entry

    def get(self, i: int) -> OpDevice:
        return self.by_op.get(i) or OpDevice()

    def peak_of(self, i: int):
        """The GpuPeak of the GPU op ``i`` ran its kernels on (None: no kernels or unknown GPU)."""
        entry = self.by_op.get(i)
        return self.peaks.get(entry.device) if entry and entry.device != NO_LINK else None

    def roofline(self, i: int, cost) -> Roofline | None:
        """Op ``i``'s roofline against all its kernels' time, from its formula's ``cost``."""
        entry = self.by_op.get(i)
        if entry is None or not entry.kernels_total:
            return None
        return roofline(
            cost.flops, cost.bytes, entry.kernel_total, self.peak_of(i), op_dtype(self.ops[i]), entry.tensor_cores
        )
