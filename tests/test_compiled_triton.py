"""The Triton launch path of compiled code, on the CPU: a stand-in for Inductor's CachingAutotuner and a
GPU backend that notes what is pushed. The real thing runs in the gpu-marked tests/test_compiled_gpu.py."""

import types

import torch

from pyprof_live.capture import compiled, inductor
from pyprof_live.records import COMPILED, NO_LINK


class Autotuner:
    """What the wrapper touches of Inductor's CachingAutotuner: run(), launchers, _cached_launcher, triton_meta."""

    def __init__(self, ready: bool):
        self.launchers = [object()] if ready else [object(), object()]
        self._cached_launcher = object() if ready else None
        self.triton_meta = {"signature": {"in_ptr0": "*fp32", "out_ptr0": "*fp32", "xnumel": "i32"}}
        self.launched = []

    def run(self, *args, stream=None):
        self.launched.append(args)


class Backend:
    """A GPU backend that notes the external ids pushed and popped around launches."""

    def __init__(self):
        self.events = []

    def push(self, op_id):
        self.events.append(("push", op_id))

    def pop(self):
        self.events.append(("pop",))


class _Session(types.SimpleNamespace):
    """Stands for the capture session, which owns its capture: the capture holds it weakly, so the
    session must be kept alive (in _sessions) while the capture runs."""


_sessions: list = []


def _capture(gpu):
    ids = iter(range(100, 200))
    session = _Session(
        _gpu=gpu, next_id=lambda: next(ids), max_ops=1000, stack_depth=2, _frame_cache={}, meta={"warnings": []}
    )
    _sessions.append(session)
    capture = compiled.CompiledCapture(session)
    capture.recording = True
    return capture


def _launch_twice(ready: bool):
    gpu = Backend()
    capture = _capture(gpu)
    info = inductor.GraphInfo("0/0 forward", "0/0", False)
    run = compiled.GraphRun(info, optimizer=False)
    kernel = Autotuner(ready)
    run.roles["triton_poi_fused_gelu_0"] = inductor.triton_roles(kernel)
    kernel.run = capture._triton_wrapper(run, "triton_poi_fused_gelu_0", kernel)
    x, y = torch.ones(4), torch.zeros(4)
    kernel.run(x, y, 4, stream=0)
    kernel.run(x, y, 4, stream=0)
    return capture, gpu, kernel


def test_each_launch_pushes_its_own_external_id_around_the_launch():
    capture, gpu, kernel = _launch_twice(ready=True)
    assert len(kernel.launched) == 2  # the real launch ran, with the user's arguments
    assert gpu.events == [("push", 100), ("pop",), ("push", 101), ("pop",)]
    records = capture.build_records([])
    assert [(r.kind, r.name, r.external_id) for r in records] == [
        (COMPILED, "triton_poi_fused_gelu_0", 100),
        (COMPILED, "triton_poi_fused_gelu_0", 101),
    ]
    # Roles from the Triton signature: in_ptr0 read, out_ptr0 written, xnumel no tensor.
    assert [(len(r.inputs), len(r.outputs)) for r in records] == [(1, 1), (1, 1)]


def test_a_launch_that_may_autotune_pushes_no_id():
    capture, gpu, _ = _launch_twice(ready=False)
    assert gpu.events == []  # benchmark launches of autotuning stay unattributed
    records = capture.build_records([])
    assert [r.external_id for r in records] == [NO_LINK, NO_LINK]
