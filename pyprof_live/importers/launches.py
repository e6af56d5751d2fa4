"""The host process that launched a kernel or memory operation, for sources whose GPU rows carry no pid.

Kineto writes a GPU event's ``pid`` as the device, nvprof writes none; both give each GPU row the
``correlation`` id of the CUDA API call that launched it. Correlation joins on ``(pid,
correlation)``, so the GPU row takes the pid of the API call with its id. CUPTI numbers calls per
process, so two processes can use the same id: such a GPU row could belong to either, and a guess
would attach it to the other process's op. It gets :data:`NO_HOST` instead (it stays unlinked) and
the importer says so in ``meta["warnings"]``.
"""

from __future__ import annotations

#: The pid of GPU work whose launching process is not known. The records' default pid; no API call
#: of a real trace has it (0 is the kernel's own scheduler, never a CUDA process).
NO_HOST = 0


def unlaunched_warning(count: int) -> str:
    """The meta["warnings"] line for GPU rows whose launch the source does not hold."""
    return f"{count} kernels/memops have no runtime or driver event with their correlation id"


class LaunchingPids:
    """correlation id -> launching pid, counting the GPU rows it could not place."""

    def __init__(self, apis, other_host_pids=()):
        """``apis``: the source's ApiRecords; ``other_host_pids``: pids of its host records, used
        when there is no API call at all (then GPU rows with a single host process still get it)."""
        pid_of: dict = {}
        shared = set()
        for api in apis:
            pid = pid_of.setdefault(api.correlation, api.pid)
            if pid != api.pid:
                shared.add(api.correlation)
        for correlation in shared:
            pid_of[correlation] = NO_HOST
        self._pid_of = pid_of
        self._shared = shared
        pids = {api.pid for api in apis} or set(other_host_pids)
        #: Work whose launch is not in the source: the only host process if there is exactly one.
        self.fallback = next(iter(pids)) if len(pids) == 1 else NO_HOST
        self.unlaunched = 0  # GPU rows with no API call of their id
        self.ambiguous = 0  # GPU rows whose id several processes' API calls carry

    def pid(self, correlation) -> int:
        pid = self._pid_of.get(correlation)
        if pid is None:
            self.unlaunched += 1
            return self.fallback
        if pid == NO_HOST and correlation in self._shared:
            self.ambiguous += 1
        return pid

    def warnings(self) -> list:
        """meta["warnings"] lines for the rows counted so far."""
        out = []
        if self.unlaunched:
            out.append(unlaunched_warning(self.unlaunched))
        if self.ambiguous:
            out.append(
                f"{self.ambiguous} kernels/memops have a correlation id that API calls of several processes carry "
                f"({len(self._shared)} such ids): left unattributed"
            )
        return out
