"""The CUPTI backend's life cycle, clock alignment, fallbacks and coexistence with torch.profiler, on CPU.

Failure paths use the real cupti-python on this driverless machine (its NotSupportedError is real);
CUPTI's process-wide state is played by gpu_replay.ReplayProcess, and torch.profiler's use of it by
KinetoStandIn below (what libkineto's CuptiActivityApi does: register its callbacks and enable
kinds at start, flush and disable every kind at stop).
"""

import _thread
import importlib.metadata
import threading

import pytest
import torch

cupti = pytest.importorskip("cupti").cupti

import pyprof_live  # noqa: E402
import pyprof_live.capture.session  # noqa: E402
from pyprof_live.capture.gpu import (  # noqa: E402
    cupti_backend,
    select_backend,
    widen_thread_ids,
)
from pyprof_live.capture.gpu.clock import ClockMap, ClockSample, sample  # noqa: E402
from pyprof_live.capture.gpu.cupti_backend import ACTIVITY_KINDS, CuptiBackend  # noqa: E402
from pyprof_live.correlate import correlate  # noqa: E402
from pyprof_live.errors import GpuUnavailableError  # noqa: E402
from pyprof_live.profile import Profile  # noqa: E402
from pyprof_live.records import NO_LINK, OpRecord  # noqa: E402

from .gpu_replay import ReplayBackend, ReplayProcess  # noqa: E402

K = cupti.ActivityKind
CUSTOM0 = int(cupti.ExternalCorrelationKind.CUSTOM0)
LAUNCH = int(cupti.RuntimeApiTraceCbid.cudaLaunchKernel_v7000)
OUR_KINDS = {int(getattr(K, name)) for name in ACTIVITY_KINDS}
CUPTI_VERSION = importlib.metadata.version("cupti-python")
CUPTI_MAJOR = CUPTI_VERSION.split(".")[0]
now = __import__("time").perf_counter_ns


class KinetoStandIn:
    """torch.profiler's use of CUPTI's activity state."""

    def __init__(self, process):
        self.process = process
        self.received = []

    def start(self):
        self.process.activity_register_callbacks(lambda: (1 << 20, 0), self.received.extend)
        for kind in OUR_KINDS:
            self.process.activity_enable(kind)

    def stop(self):
        self.process.activity_flush_all(1)
        for kind in OUR_KINDS:
            self.process.activity_disable(kind)


class LaunchingProcess(ReplayProcess):
    """Every push launches one kernel from the pushing thread, named after the pushed id."""

    @property
    def thread(self):
        return threading.get_ident() & 0xFFFFFFFF

    @thread.setter
    def thread(self, _value):
        pass

    def activity_push_external_correlation_id(self, kind, external_id):
        super().activity_push_external_correlation_id(kind, external_id)
        self.launch(f"kernel of op {external_id}")

    def launch(self, name):
        self._next_correlation += 1
        start = now()
        self.api_call("runtime", LAUNCH, start, start + 1, self._next_correlation, 0)
        k = cupti.ActivityKernel13()
        k.kind, k.name, k.correlation_id = int(K.CONCURRENT_KERNEL), name, self._next_correlation
        k.start, k.end = start + 10, start + 20
        self.device_activity(k)


@pytest.fixture
def cuda_visible(monkeypatch):
    """torch says CUDA is there (cu13 build, matching the installed cupti-python); the driver is not."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.version, "cuda", f"{CUPTI_MAJOR}.0")


@pytest.fixture
def replay_backend_in_live(monkeypatch):
    """pyprof_live.profile() gets a ReplayBackend on a LaunchingProcess; the test can reach both."""
    made = {}

    def select(option, warnings):
        made["process"] = LaunchingProcess()
        made["backend"] = ReplayBackend(option, warnings, made["process"])
        return made["backend"]

    monkeypatch.setattr(pyprof_live.capture.session, "select_backend", select)
    return made


def small_training_step():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU())
    loss = model(torch.randn(2, 4)).sum()
    loss.backward()


# -- clock ---------------------------------------------------------------------------------------


def test_sample_keeps_the_narrowest_bracket():
    host = iter([0, 100, 200, 210, 300, 400])  # brackets 100, 10, 100 ns wide
    cupti_reads = iter([5_050, 5_204, 5_350])
    best = sample(lambda: next(cupti_reads), lambda: next(host), tries=3)
    assert best == ClockSample(cupti_ns=5_204, host_ns=205, width_ns=10)  # (200 + 210) // 2
    assert best.offset_ns == 4_999


def test_clock_map_interpolates_the_drift_between_start_and_stop():
    # Offset 1_000_000 at start, 1_000_100 at stop 1 ms later (CLOCK_REALTIME slewed by 100 ns).
    clock = ClockMap(ClockSample(1_000_000, 0, 40), ClockSample(2_000_100, 1_000_000, 60))
    assert clock.to_host(1_000_000) == 0
    assert clock.to_host(2_000_100) == 1_000_000
    # Half way in CUPTI time (500_050 ns after start) the offset has drifted by 50: 1_500_050 - 1_000_050.
    assert clock.to_host(1_500_050) == 500_000
    # Outside the window the nearest measured offset holds (no extrapolated drift).
    assert clock.to_host(500_000) == 500_000 - 1_000_000
    assert clock.to_host(3_000_100) == 3_000_100 - 1_000_100
    assert clock.uncertainty_ns == 30  # half the widest bracket, (60 + 1) // 2
    assert clock.facts() == {"clock_offset_ns": 1_000_000, "clock_drift_ns": 100, "clock_uncertainty_ns": 30}


def test_clock_offset_is_recovered_within_the_bracket():
    process = ReplayProcess(clock_offset_ns=1_700_000_000_000_000_000)
    measured = sample(process.get_timestamp)
    assert abs(measured.offset_ns - process.clock_offset_ns) <= measured.width_ns // 2 + 1


# -- choosing a backend, and failing ----------------------------------------------------------------


def test_auto_without_cuda_is_a_silent_cpu_only_profile():
    warnings = []
    assert select_backend("auto", warnings) is None and warnings == []
    assert select_backend("off", warnings) is None


def test_cupti_without_cuda_raises():
    with pytest.raises(GpuUnavailableError, match=r"needs a CUDA device.*a CPU build"):
        select_backend("cupti", [])


def test_missing_driver_turns_the_real_cupti_error_into_one_warning(cuda_visible):
    warnings = []
    backend = select_backend("auto", warnings)
    assert isinstance(backend, CuptiBackend) and warnings == []  # nothing known to be wrong before CUPTI is called
    with pytest.warns(RuntimeWarning, match="libcuda.so.1"):
        backend.start()  # the real cupti-python: get_timestamp raises NotSupportedError here
    assert len(warnings) == 1
    assert warnings[0].startswith(
        "GPU kernels were not collected, this is a CPU-only report: cupti-python cannot "
        "use the CUDA driver (CUDA driver is not found (libcuda.so.1"
    )
    backend.push(3)
    backend.pop()  # inert, not raising
    capture = backend.stop()
    assert capture.records.kernels == [] and capture.incomplete == ""
    assert capture.meta["gpu"]["backend"] == "none" and "libcuda.so.1" in capture.meta["gpu"]["reason"]
    assert cupti_backend._owner is None


def test_missing_driver_raises_a_typed_error_with_gpu_cupti(cuda_visible):
    backend = select_backend("cupti", [])
    with pytest.raises(GpuUnavailableError, match=r"gpu='cupti' cannot collect GPU kernels: .*libcuda.so.1"):
        backend.start()
    assert cupti_backend._owner is None


def test_profile_falls_back_to_cpu_only_and_says_why(cuda_visible):
    with pytest.warns(RuntimeWarning, match="CPU-only report"):
        with pyprof_live.profile(gpu="auto") as p:
            small_training_step()
    assert p.records.ops and p.records.kernels == []
    footer = p.table()
    assert (
        "GPU kernels were not collected, this is a CPU-only report: cupti-python cannot use the CUDA driver" in footer
    )
    with pytest.raises(GpuUnavailableError):
        with pyprof_live.profile(gpu="cupti"):
            pass
    with pyprof_live.profile(gpu="off") as again:  # the failed start left no hook behind
        small_training_step()
    assert again.records.ops


def test_cuda_major_mismatch_is_refused(cuda_visible, monkeypatch):
    monkeypatch.setattr(torch.version, "cuda", "12.4")
    warnings = []
    with pytest.warns(RuntimeWarning):
        assert select_backend("auto", warnings) is None
    assert warnings == [
        f"GPU kernels were not collected, this is a CPU-only report: cupti-python {CUPTI_VERSION} is for CUDA "
        f"{CUPTI_MAJOR} but torch {torch.__version__} uses CUDA 12.4 (two CUPTI libraries in one process collide); "
        "install the matching one: pip install 'cupti-python==12.*'"
    ]
    with pytest.raises(GpuUnavailableError, match="is for CUDA"):
        select_backend("cupti", [])


def test_cupti_python_not_installed(cuda_visible, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "cupti", None)  # import cupti -> ImportError
    monkeypatch.delitem(sys.modules, "pyprof_live.capture.gpu.cupti_backend")
    monkeypatch.delattr(pyprof_live.capture.gpu, "cupti_backend")
    warnings = []
    with pytest.warns(RuntimeWarning):
        assert select_backend("auto", warnings) is None
    assert (
        "cupti-python is not installed" in warnings[0] and f"pip install 'cupti-python=={CUPTI_MAJOR}.*'" in warnings[0]
    )


def test_a_running_torch_profiler_is_refused(cuda_visible):
    warnings = []
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        with pytest.warns(RuntimeWarning):
            assert select_backend("auto", warnings) is None
    assert warnings[0].endswith("torch.profiler is recording and owns CUPTI; stop it first")


def test_another_cupti_client_gives_the_multiple_subscribers_reason():
    nsys_owns_cupti = ReplayProcess(fail_with=cupti.cuptiError(39))  # CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
    warnings = []
    with pytest.warns(RuntimeWarning):
        ReplayBackend("auto", warnings, nsys_owns_cupti).start()
    assert "another CUPTI client already owns CUPTI in this process (Nsight Systems" in warnings[0]
    with pytest.raises(GpuUnavailableError, match="another CUPTI client"):
        ReplayBackend("cupti", [], ReplayProcess(fail_with=cupti.cuptiError(39))).start()
    with pytest.raises(GpuUnavailableError, match="CUPTI failed to start: ERROR_NOT_INITIALIZED"):
        ReplayBackend(
            "cupti", [], ReplayProcess(fail_with=cupti.cuptiError(int(cupti.Result.ERROR_NOT_INITIALIZED)))
        ).start()
    assert cupti_backend._owner is None


def test_one_owner_of_cupti_per_process():
    first = ReplayBackend("cupti", [])
    first.start()
    try:
        with pytest.raises(GpuUnavailableError, match="another pyprof_live profile is collecting"):
            ReplayBackend("cupti", []).start()
        warnings = []
        with pytest.warns(RuntimeWarning):
            ReplayBackend("auto", warnings).start()
        assert warnings[0].endswith("another pyprof_live profile is collecting GPU activity in this process")
    finally:
        first.stop()
    second = ReplayBackend("cupti", [])
    second.start()  # free again
    second.stop()


# -- collecting ------------------------------------------------------------------------------------------


def test_start_enables_our_kinds_and_stop_disables_them_and_leaves_no_id_pushed():
    process = ReplayProcess(buffer_records=3)  # buffers handed over during the run too
    backend = ReplayBackend("cupti", [], process)
    backend.start()
    assert process.enabled == OUR_KINDS and cupti_backend._owner is backend
    backend.push(0)
    for correlation in (1, 2, 3, 4):
        t = now()
        process.api_call("runtime", LAUNCH, t, t + 5, correlation, 0)
    backend.pop()
    capture = backend.stop()
    assert process.enabled == set() and cupti_backend._owner is None
    assert all(not stack for stack in process.stacks.values())
    # 4 launches, each with op id 0 pushed; the stop's sentinel synchronise is not reported.
    assert [(a.correlation, a.external_id) for a in capture.records.apis] == [(1, 0), (2, 0), (3, 0), (4, 0)]
    assert capture.incomplete == "" and capture.meta["gpu"]["backend"] == "cupti"


def test_work_launched_while_not_recording_is_dropped():
    process = ReplayProcess()
    backend = ReplayBackend("cupti", [], process)
    backend.start()

    def launch(correlation):
        t = now()
        process.api_call("runtime", LAUNCH, t, t + 1, correlation, 0)
        k = cupti.ActivityKernel13()
        k.kind, k.name, k.correlation_id, k.start, k.end = (
            int(K.CONCURRENT_KERNEL),
            f"k{correlation}",
            correlation,
            t + 10,
            t + 20,
        )
        process.device_activity(k)

    launch(1)
    backend.set_recording(False)
    launch(2)  # a step profile(steps=...) does not record
    backend.set_recording(True)
    launch(3)
    capture = backend.stop()
    assert [a.correlation for a in capture.records.apis] == [1, 3]
    assert [k.name for k in capture.records.kernels] == ["k1", "k3"]


def test_live_profile_links_every_pushed_id_to_its_kernel(replay_backend_in_live):
    with pyprof_live.profile(gpu="cupti") as p:
        small_training_step()
    ops, kernels, apis = p.records.ops, p.records.kernels, p.records.apis
    assert len(kernels) == len(ops) > 10  # one push per recorded op and function scope, one kernel per push
    p.correlation
    for k in kernels:
        op = ops[k.op]
        assert k.name == f"kernel of op {op.external_id}"
        launch = apis[k.launch]
        uncertainty = p.meta["gpu"]["clock_uncertainty_ns"]
        assert op.start - uncertainty <= launch.start <= op.end + uncertainty  # clocks aligned
    directions = {ops[k.op].dir for k in kernels}
    assert {"fwd", "bwd"} <= directions


# -- coexistence with torch.profiler -----------------------------------------------------------------------


def test_torch_profiler_after_ours_still_gets_its_records():
    process = ReplayProcess()
    ours = ReplayBackend("cupti", [], process)
    ours.start()
    ours.stop()
    kineto = KinetoStandIn(process)
    kineto.start()
    process.api_call("runtime", LAUNCH, 10, 20, 77, 0)
    kineto.stop()
    assert [a.correlation_id for a in kineto.received if a.kind == int(K.RUNTIME)] == [77]


def test_torch_profiler_run_inside_ours_marks_our_capture_incomplete():
    process = ReplayProcess(buffer_records=1)  # call 1's buffer reaches us before torch.profiler starts
    ours = ReplayBackend("cupti", [], process)
    ours.start()
    process.api_call("runtime", LAUNCH, 10, 20, 1, 0)
    kineto = KinetoStandIn(process)
    kineto.start()  # takes the callbacks: call 2 goes to it
    process.api_call("runtime", LAUNCH, 30, 40, 2, 0)
    kineto.stop()  # and disables every kind: our collection is over
    capture = ours.stop()
    assert capture.incomplete.startswith(
        "another CUPTI client (torch.profiler, or a tool attached to the process) took CUPTI over"
    )
    assert [a.correlation for a in capture.records.apis] == [1]


def test_torch_profiler_still_running_at_our_stop_keeps_cupti():
    process = ReplayProcess()
    ours = ReplayBackend("cupti", [], process)
    ours.start()
    kineto = KinetoStandIn(process)
    real_profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
    real_profiler.start()
    try:
        kineto.start()
        capture = ours.stop()
        assert capture.incomplete.startswith("torch.profiler was started inside the profile and is still running")
        assert process.enabled == OUR_KINDS  # not disabled under it
        process.api_call("runtime", LAUNCH, 50, 60, 9, 0)
        kineto.stop()
    finally:
        real_profiler.stop()
    assert [a.correlation_id for a in kineto.received if a.kind == int(K.RUNTIME)] == [9]
    assert cupti_backend._owner is None


def test_live_report_says_the_gpu_data_is_incomplete(replay_backend_in_live):
    with pyprof_live.profile(gpu="cupti") as p:
        small_training_step()
        kineto = KinetoStandIn(replay_backend_in_live["process"])
        kineto.start()
        kineto.stop()
    assert "GPU data is incomplete: another CUPTI client (torch.profiler" in p.table()
    assert all(k.op != NO_LINK for k in p.records.kernels)  # what arrived before the take-over is linked


def test_cpu_torch_profiler_still_records_ops_after_our_hooks_are_removed(replay_backend_in_live):
    """Only the op hooks: this CPU-only torch.profiler never touches CUPTI. Sharing CUPTI with it is
    checked with KinetoStandIn above and, on a GPU, by test_gpu_e2e.py's both_profiles."""
    with pyprof_live.profile(gpu="cupti"):
        small_training_step()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        small_training_step()
    assert "aten::addmm" in {e.key for e in prof.key_averages()}


# -- thread ids -------------------------------------------------------------------------------------------


def test_a_launch_on_a_thread_python_does_not_list_links_by_its_ops_thread_id():
    """Autograd's device threads are C++ threads: absent from threading.enumerate(), and CUPTI gives
    only the low 32 bits of their id. A raw _thread thread plays one; its launch has no pushed id,
    so only time containment on the op's thread can link it."""
    process = LaunchingProcess()
    backend = ReplayBackend("cupti", [], process)
    backend.start()
    seen = {}
    done = threading.Lock()
    done.acquire()

    def engine_thread():
        seen["tid"], seen["start"] = threading.get_ident(), now()
        process.launch("unpushed")
        seen["end"] = now()
        done.release()

    _thread.start_new_thread(engine_thread, ())
    done.acquire()
    capture = backend.stop()
    assert seen["tid"] not in {t.ident for t in threading.enumerate()}
    assert seen["tid"] > 0xFFFFFFFF  # pthread_self is an address: CUPTI's 32 bits lose the top
    (launch,) = capture.records.apis
    assert launch.tid == seen["tid"] & 0xFFFFFFFF and launch.external_id == NO_LINK
    op = OpRecord("aten::mm", seen["start"], seen["end"], tid=seen["tid"])
    widen_thread_ids(capture, {op.tid})
    profile = Profile(ops=[op], apis=capture.records.apis, kernels=capture.records.kernels)
    correlate(profile)
    assert launch.tid == op.tid and profile.records.kernels[0].op == 0


def test_live_launches_carry_the_thread_id_of_their_op(replay_backend_in_live):
    """CaptureSession._finalize widens CUPTI's 32-bit ids with gpu.widen_thread_ids."""
    with pyprof_live.profile(gpu="cupti") as p:
        small_training_step()
    p.correlation
    apis, ops = p.records.apis, p.records.ops
    assert p.records.kernels and all(apis[k.launch].tid == ops[k.op].tid for k in p.records.kernels)
