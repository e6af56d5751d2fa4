"""Profile: the records of one run, whatever their source, plus the views over them.

A Profile is what ``profile()`` yields and what every importer returns. It holds raw records
(``records.py``); correlation runs once, lazily, the first time a view needs it, so a better
correlation or formula also applies to old saved profiles.
"""

from __future__ import annotations

from .records import ApiRecord, DeviceInfo, KernelRecord, MemoryRecord, OpRecord, RangeRecord


class Profile:
    """Records of one profiled run and the views over them."""

    def __init__(
        self,
        ops: list[OpRecord] | None = None,
        apis: list[ApiRecord] | None = None,
        kernels: list[KernelRecord] | None = None,
        memops: list[MemoryRecord] | None = None,
        ranges: list[RangeRecord] | None = None,
        devices: list[DeviceInfo] | None = None,
        meta: dict | None = None,
    ):
        self.ops = ops if ops is not None else []
        self.apis = apis if apis is not None else []
        self.kernels = kernels if kernels is not None else []
        self.memops = memops if memops is not None else []
        self.ranges = ranges if ranges is not None else []
        self.devices = devices if devices is not None else []
        #: Free-form facts about the run: "source" ("live", "nsys", "nvprof", "kineto", "saved"),
        #: "path", "warnings" (list of str), "truncated", tool versions, distributed info...
        self.meta = meta if meta is not None else {}
