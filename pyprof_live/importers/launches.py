"""The host process that launched a kernel or memory operation, for sources whose GPU rows carry no pid.

Kineto writes a GPU event's ``pid`` as the device, nvprof writes none; both give each GPU row the
``correlation`` id of the CUDA API call that launched it. Correlation joins on ``(pid,
correlation)``, so the GPU row takes the pid of the API call with its id. CUPTI numbers calls per
process, so two processes can use the same id: such a GPU row could belong to either, and a guess
would attach it to the other process's op. It gets :data:`NO_HOST` instead (it stays unlinked) and
the importer says so in ``meta["warnings"]``.
"""

from __future__ import annotations

from bisect import bisect_left
from operator import attrgetter

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
        # The calls sorted by id (stable: the first call of an id comes first): a list of references
        # where a dict of every call's id cost ~70 B a call at the end of a 10 M-event import.
        calls = sorted(apis, key=attrgetter("correlation"))
        self._ids = [api.correlation for api in calls]
        self._pids = [api.pid for api in calls]
        del calls
        ids, pids = self._ids, self._pids
        #: The ids that API calls of several processes carry.
        self._shared = {ids[k] for k in range(1, len(ids)) if ids[k] == ids[k - 1] and pids[k] != pids[k - 1]}
        if self._shared:  # every call of a run with a repeated id of another process
            shared = self._shared
            self._pids = [NO_HOST if i in shared else pid for i, pid in zip(ids, pids)]
        host_pids = set(pids) or set(other_host_pids)
        #: Work whose launch is not in the source: the only host process if there is exactly one.
        self.fallback = next(iter(host_pids)) if len(host_pids) == 1 else NO_HOST
        self.unlaunched = 0  # GPU rows with no API call of their id
        self.ambiguous = 0  # GPU rows whose id several processes' API calls carry

    def pid(self, correlation) -> int:
        ids = self._ids
        k = bisect_left(ids, correlation)
        if k == len(ids) or ids[k] != correlation:
            self.unlaunched += 1
            return self.fallback
        pid = self._pids[k]
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
