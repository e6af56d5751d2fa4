"""Small profiles the analysis tests build by hand: ops launching named kernels on a named GPU."""

from __future__ import annotations

from pyprof_live.profile import Profile
from pyprof_live.records import ApiRecord, DeviceInfo, KernelRecord, MemoryRecord, OpRecord, RangeRecord


class ProfileBuilder:
    """Appends ops, each launching kernels back to back on device 0; times are ns and chosen by the test."""

    def __init__(self, device_name: str = "NVIDIA H100 80GB HBM3", memory_bytes: int = 0):
        self.ops, self.apis, self.kernels, self.memops, self.ranges = [], [], [], [], []
        self.devices = [DeviceInfo(0, device_name, memory_bytes=memory_bytes)] if device_name else []
        self._correlation = 0

    def op(
        self,
        name: str,
        start: int,
        end: int,
        inputs=(),
        outputs=(),
        kernels=(),
        memcpy=(),
        apis=(),
        launch_ns: int = 1,
        **fields,
    ):
        """An op on thread 1 with kernels ``(name, start, end)``, memcpys ``(kind, start, end)`` and extra
        API calls ``(name, start, end)`` (syncs); launches take ``launch_ns`` each, from ``start + 1`` on."""
        self.ops.append(OpRecord(name, start, end, tid=1, inputs=tuple(inputs), outputs=tuple(outputs), **fields))
        launch = start + 1
        for kernel_name, k_start, k_end in kernels:
            self._launch(launch, launch_ns)
            self.kernels.append(KernelRecord(kernel_name, k_start, k_end, correlation=self._correlation))
            launch += launch_ns + 1
        for copy_kind, m_start, m_end in memcpy:
            self._launch(launch, launch_ns, "cudaMemcpyAsync")
            self.memops.append(
                MemoryRecord("memcpy", m_start, m_end, 1024, copy_kind=copy_kind, correlation=self._correlation)
            )
            launch += launch_ns + 1
        for api_name, a_start, a_end in apis:
            self._correlation += 1
            self.apis.append(ApiRecord(api_name, a_start, a_end, correlation=self._correlation, tid=1))
        return self

    def _launch(self, at: int, duration: int, name: str = "cudaLaunchKernel") -> None:
        self._correlation += 1
        self.apis.append(ApiRecord(name, at, at + duration, correlation=self._correlation, tid=1))

    def range(self, name: str, start: int, end: int, kind: str = "record_function"):
        self.ranges.append(RangeRecord(name, start, end, tid=1, kind=kind))
        return self

    def build(self) -> Profile:
        return Profile(
            ops=self.ops,
            apis=self.apis,
            kernels=self.kernels,
            memops=self.memops,
            ranges=self.ranges,
            devices=self.devices,
            meta={"source": "test"},
        )
