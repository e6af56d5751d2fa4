"""How a replayed graph is matched to its capture when a Kineto trace has no graph node ids: the
cases the real traces (tests/test_kineto_graphs.py) do not hold, on small hand-built traces.

A capture here is ``hipStreamBeginCapture``, then per kernel an op around a launch call naming the
kernel (ROCm) or not (CUDA), then ``hipStreamEndCapture``; a replay is one graph launch whose
kernels carry its correlation id.
"""

from pyprof_live.importers.kineto import load_kineto
from pyprof_live.records import NO_LINK
from tests.test_import_kineto import write_trace, x_event

ROCM = ("hip", "hipModuleLaunchKernel")
CUDA = ("cuda", "cudaLaunchKernel")


class Trace:
    """Builds the events of captures and replays, one id counter for correlations and external ids."""

    def __init__(self, api=ROCM):
        self.prefix, self.launch_call = api
        self.events: list = []
        self.next_id = 1

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id

    def capture(self, ts, kernels, shape=(8, 4)) -> list:
        """Capture ``kernels`` (one op ``op_<kernel>`` of input ``shape`` each); returns the launch correlations."""
        self.events.append(x_event("cuda_runtime", f"{self.prefix}StreamBeginCapture", ts, 1, {"correlation": 1}))
        correlations = []
        for i, name in enumerate(kernels):
            start, ext, correlation = ts + 10 * (i + 1), self._id(), self._id()
            op_args = {"External id": ext, "Input Dims": [list(shape)], "Input type": ["float"]}
            self.events.append(x_event("cpu_op", f"op_{name}", start, 5, op_args))
            launch_args = {"External id": ext, "correlation": correlation}
            if self.prefix == "hip":
                launch_args["kernel"] = name
            self.events.append(x_event("cuda_runtime", self.launch_call, start + 1, 2, launch_args))
            correlations.append(correlation)
        end = ts + 10 * (len(kernels) + 1)
        self.events.append(x_event("cuda_runtime", f"{self.prefix}StreamEndCapture", end, 1, {"correlation": 1}))
        return correlations

    def replay(self, ts, kernels, graph_id=0) -> None:
        correlation = self._id()
        self.events.append(x_event("cuda_runtime", f"{self.prefix}GraphLaunch", ts, 2, {"correlation": correlation}))
        for i, name in enumerate(kernels):
            args = {"device": 0, "stream": 7, "correlation": correlation}
            if graph_id:
                args["graph id"] = graph_id
            self.events.append(x_event("kernel", name, ts + 10 + 5 * i, 4, args, pid=0, tid=7))

    def load(self, tmp_path, name="trace.json", **options):
        return load_kineto(write_trace(tmp_path, self.events, name), **options)


def replays_of(profile) -> list:
    """Per graph launch, in order: the capture-time launch correlation of each replayed kernel."""
    profile.correlation
    by_launch: dict = {}
    for k in profile.records.kernels:
        by_launch.setdefault(k.correlation, []).append(k.capture_correlation)
    return [by_launch[c] for c in sorted(by_launch)]


def notes(profile) -> str:
    return "\n".join(profile.meta.get("gpu_notes", []))


def test_alike_captures_are_tied_in_capture_order(tmp_path):
    trace = Trace()
    first = trace.capture(0, ["a", "b"])
    second = trace.capture(100, ["a", "b"])  # the same kernels and ops (two layers of one model)
    for ts in (1000, 2000, 3000):
        trace.replay(ts, ["a", "b"])
    profile = trace.load(tmp_path)
    # the n-th replay <- the n-th capture, cycling: 1st, 2nd, then 1st again
    assert replays_of(profile) == [first, second, first]
    ops = profile.records.ops
    assert [ops[k.op].name for k in profile.records.kernels] == ["op_a", "op_b"] * 3


def test_the_same_kernels_captured_with_other_shapes_are_not_tied(tmp_path):
    """One graph captured at two batch sizes: same kernel names, ops of other shapes; the replay could be
    either, so no kernel is tied rather than half of them tied to the wrong shapes."""
    trace = Trace()
    trace.capture(0, ["a", "b"], shape=(8, 4))
    trace.capture(100, ["a", "b"], shape=(16, 4))
    trace.replay(1000, ["a", "b"])
    profile = trace.load(tmp_path)
    assert replays_of(profile) == [[NO_LINK, NO_LINK]]
    assert profile.meta["graph_replays"]["kernels_of_ambiguous_replays"] == 2
    assert "2 replayed kernels fit several captures whose ops differ" in notes(profile)
    # numbered past the 2 captures: graph 3, a row of its own
    assert {k.graph_id for k in profile.records.kernels} == {3}
    assert profile.table(columns="op,kernel").count("replay of graph 3") == 2


def test_a_replay_with_kernels_missing_is_aligned_by_name(tmp_path):
    trace = Trace()
    a, b, _c, d = trace.capture(0, ["a", "b", "c", "d"])
    trace.replay(1000, ["a", "b", "d"])  # the trace ended, or the graph skipped a node: 3 of the 4
    profile = trace.load(tmp_path)
    assert replays_of(profile) == [[a, b, d]]
    assert profile.meta["graph_replays"]["kernels_tied_to_capture"] == 3


def test_a_replay_matching_less_than_half_of_any_capture_is_not_tied(tmp_path):
    trace = Trace()
    trace.capture(0, ["a", "b", "c", "d"])
    trace.replay(1000, ["a", "x", "y", "z"])  # 1 of 4 names in common
    profile = trace.load(tmp_path)
    assert replays_of(profile) == [[NO_LINK] * 4]
    assert "graph 2: 4 kernels" in notes(profile)


def test_cuda_traces_tie_by_position_only_when_the_counts_agree(tmp_path):
    trace = Trace(CUDA)  # cudaLaunchKernel names no kernel
    first, second = trace.capture(0, ["a", "b"])
    trace.replay(1000, ["a", "b", "c"], graph_id=5)  # 3 kernels: not this 2-launch capture
    trace.replay(2000, ["a", "b"], graph_id=6)
    profile = trace.load(tmp_path)
    assert replays_of(profile) == [[NO_LINK] * 3, [first, second]]
    assert profile.meta["graph_replays"]["method"] == "position in the capture"


def test_cuda_replays_of_one_graph_id_stay_with_one_capture(tmp_path):
    trace = Trace(CUDA)
    first = trace.capture(0, ["a", "b"])
    second = trace.capture(100, ["a", "b"])
    for ts, graph in ((1000, 7), (2000, 8), (3000, 8)):
        trace.replay(ts, ["a", "b"], graph_id=graph)
    profile = trace.load(tmp_path)
    # graph 7 <- 1st capture, graph 8 <- 2nd, and its second replay too (cycling would give the 1st)
    assert replays_of(profile) == [first, second, second]


def test_cuda_captures_of_the_same_size_with_other_ops_are_not_guessed(tmp_path):
    trace = Trace(CUDA)
    trace.capture(0, ["a", "b"])
    trace.capture(100, ["c", "d"])  # another graph of 2 kernels: position alone cannot tell them apart
    trace.replay(1000, ["c", "d"], graph_id=9)
    profile = trace.load(tmp_path)
    assert replays_of(profile) == [[NO_LINK, NO_LINK]]


def test_a_capture_file_adds_only_the_captures_its_replays_were_tied_to(tmp_path):
    capture_file = Trace()
    capture_file.capture(0, ["a", "b"])
    capture_file.capture(100, ["p", "q"])
    capture_path = write_trace(tmp_path, capture_file.events, "capture.json")
    replay_file = Trace()
    replay_file.next_id = 1000  # ids of another process
    replay_file.replay(5000, ["a", "b"])
    profile = replay_file.load(tmp_path, "replay.json", capture=capture_path)
    profile.correlation
    ops = profile.records.ops
    assert [op.name for op in ops] == ["op_a", "op_b"]  # not op_p, op_q: that capture was not replayed
    assert [ops[k.op].name for k in profile.records.kernels] == ["op_a", "op_b"]
    assert "keep the host times of the capture" in notes(profile)


def test_a_capture_file_for_a_trace_without_replays_adds_nothing(tmp_path):
    capture_file = Trace()
    capture_file.capture(0, ["a", "b"])
    capture_path = write_trace(tmp_path, capture_file.events, "capture.json")
    plain = Trace()
    plain.events.append(x_event("cpu_op", "aten::relu", 0, 5, {"External id": 1}))
    profile = plain.load(tmp_path, "plain.json", capture=capture_path)
    assert [op.name for op in profile.records.ops] == ["aten::relu"]
    assert f"no CUDA/HIP graph replay in this trace: the capture trace {capture_path} was not used" in notes(profile)
