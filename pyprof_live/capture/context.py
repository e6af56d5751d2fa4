"""Per-thread capture context: what every op record snapshots about where it ran.

Hooks (module, NVTX/layer, record_function, optimizer, checkpoint) update this state; the op hook
only reads it. Every field an op snapshots is an immutable value (str, tuple, int) replaced on
change, so a snapshot is a reference copy, never a copy of a list.
"""

from __future__ import annotations

import threading


class ThreadContext(threading.local):
    """State of one thread; ``threading.local`` gives each thread its own defaults."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        """Back to the state of a thread that never ran under a profile."""
        self.module = ""  # nn.Module path of the innermost running module
        self.module_stack: list = []  # (module object, path) of the enclosing modules, while they run
        self.layers: tuple = ()  # `layer:` names, outermost first
        self.nvtx_stack: list = []  # (message, start ns) of open NVTX push ranges
        self.scopes: list = []  # (name, start ns, dir it sets or "") of open record_function ranges
        self.host_dir = "fwd"  # dir of ops outside autograd's engine: "opt" in the optimizer, "other" in the DataLoader
        self.scope_dirs: list = []  # dirs set by the open record_function ranges, innermost last
        self.recompute = 0  # depth of non-reentrant checkpoint recomputation
        #: ns the module, scope and Function hooks spent since the last recorded op; the op hook adds it
        #: to that op's ``overhead`` and zeroes it (so it is the profiler's time, not "other").
        self.hook_ns = 0
        #: (frame, stack depth, call site) of the running compiled graph call's hook (compiled.py), or None: an op
        #: inside it whose frames up to that frame are all plumbing has the call site captured there (_hook.c).
        self.graph_call = None
        #: Serial number of the call site of the running extern kernel call of a static compiled graph
        #: (compiled.py), or None: the C op hook reuses the shapes of that site's first op (_hook.c).
        self.extern_site = None
        #: recorder.backward_facts of the running compiled graph call inside autograd's engine, read by its first
        #: extern call that does not go through the op hook (extern_ops.py), or None: one autograd node runs the
        #: whole call, so its ops all have the same.
        self.graph_backward_facts = None


context = ThreadContext()
