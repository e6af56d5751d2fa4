"""torch_compat: the private torch names, the supported range, and what each release changed."""

import ast
import re
import warnings
from pathlib import Path

import pytest
import tomllib
import torch

import pyprof_live
from pyprof_live import torch_compat
from pyprof_live.errors import CaptureError, UnsupportedTorchError

MANGLED = "_ZN2at6native6detail4fillEv"
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(torch_compat, "_warned", set())


def test_release_reads_every_version_form():
    assert torch_compat.release("2.15.0+cu132") == (2, 15)
    assert torch_compat.release("2.6.0") == (2, 6)
    assert torch_compat.release("2.16.0.dev20261201+cpu") == (2, 16)
    assert torch_compat.release("garbage") == (0, 0)


def test_this_torch_is_in_the_supported_range_and_has_every_required_name():
    # CI runs the suite on the oldest supported release, 2.13.0+cpu and the newest on the registry:
    # each must be inside the range the README states, and lack nothing capture needs.
    assert torch_compat.OLDEST <= torch_compat.TORCH <= torch_compat.NEWEST_TESTED, (
        f"torch {torch.__version__} is outside {torch_compat.supported_range()}: on a new release, run the suite "
        "on it, fix what breaks and raise torch_compat.NEWEST_TESTED (and the README)"
    )
    assert [name for name, value in torch_compat._REQUIRED if value is None] == []
    torch_compat.require_supported()


def test_an_older_torch_is_refused_at_profile_with_the_range(monkeypatch):
    monkeypatch.setattr(torch_compat, "TORCH", (2, 5))
    with pytest.raises(UnsupportedTorchError) as caught:
        pyprof_live.profile()
    message = str(caught.value)
    assert message.startswith("pyprof_live needs torch 2.6 to 2.15 for live capture; torch ")
    assert "it is older than the supported range" in message
    assert isinstance(caught.value, CaptureError)


def test_a_torch_missing_a_required_internal_is_refused_naming_it(monkeypatch):
    monkeypatch.setattr(torch_compat, "_REQUIRED", (*torch_compat._REQUIRED, ("torch._C._current_autograd_node", None)))
    with pytest.raises(
        UnsupportedTorchError, match=r"torch 2\.6 to 2\.15 .*it lacks torch\._C\._current_autograd_node"
    ):
        pyprof_live.profile()


def test_a_newer_torch_warns_once_and_profiles(monkeypatch):
    monkeypatch.setattr(torch_compat, "TORCH", (2, 16))
    monkeypatch.setattr(torch_compat, "_told_newer", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            with pyprof_live.profile(gpu="off") as p:
                torch.ones(2)
    told = [str(w.message) for w in caught if "tested with" in str(w.message)]
    assert told == [
        f"pyprof_live was tested with torch 2.6 to 2.15; torch {torch.__version__} is newer. Profiling goes "
        "ahead, but results may be incomplete where torch changed its internals: please report problems."
    ]
    assert [op.name for op in p.records.ops] == ["aten::ones"]


def test_function_apply_binds_on_every_release():
    # 2.6-2.13: a Python classmethod; 2.14.1 and 2.15 (2.14.0 not run): torch._C._FunctionBase's own C
    # classmethod_descriptor (no __func__). Both bind the same way.
    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    apply = torch_compat.bind_apply(torch_compat.function_apply(), Double)
    assert apply(torch.ones(2)).tolist() == [2.0, 2.0]
    stored = torch_compat.function_apply()
    c_apply = torch._C._FunctionBase.__dict__["apply"]
    if torch_compat.TORCH >= (2, 15) or stored is c_apply:  # which releases changed is told by torch itself
        assert stored is c_apply and type(stored).__name__ == "classmethod_descriptor"
    else:
        assert type(stored) is classmethod


def test_grouped_query_attention_flops_on_every_release():
    # q (1, 8 heads, 16, 64), k/v (1, 2 heads, 16, 64): each kv head serves 4 query heads, so the count is
    # that of 8 full heads: 2 matmuls of (8 x 16 x 64) @ (64 x 16) = 2 * 2*8*16*64*16 = 524,288 (2.6-2.11's
    # torch counter asserts equal heads; the broadcast makes every release agree).
    q, kv = (1, 8, 16, 64), (1, 2, 16, 64)
    assert torch_compat.sdpa_flop_count(q, kv, kv) == 2 * 2 * 8 * 16 * 64 * 16
    # backward: 5 such matmuls (scores recomputed, grad_v, grad_scores, grad_q, grad_k) = 1,310,720
    assert torch_compat.sdpa_backward_flop_count(q, q, kv, kv) == 5 * 2 * 8 * 16 * 64 * 16


def test_op_schema_of_known_and_unknown_ops():
    assert [a.name for a in torch_compat.op_schema("aten::add", "Tensor").arguments] == ["self", "other", "alpha"]
    assert torch_compat.op_schema("aten::add", "no_such_overload") is None
    assert torch_compat.op_schema("mylib::nothing", "") is None


def test_module_hooks_do_nothing_while_dynamo_traces(monkeypatch):
    # torch 2.6 compiles code run under our op hook and traces the global module hooks; they must
    # leave the module stack alone then (their bookkeeping broke Dynamo's side-effect tracking).
    from pyprof_live.capture import modules
    from pyprof_live.capture.context import context

    names = modules.ModuleNames([])
    monkeypatch.setattr(modules, "_compiling", lambda: True)
    layer = torch.nn.Linear(2, 2)
    names._enter(layer, ())
    assert context.module_stack == [] and names.paths == {}
    monkeypatch.setattr(modules, "_compiling", lambda: False)
    names._enter(layer, ())
    assert context.module == "Linear"
    names._exit(layer, (), None)
    assert context.module_stack == [] and context.module == ""


def test_present_optional_functions_answer(monkeypatch):
    assert torch_compat.demangle(MANGLED) == "at::native::detail::fill()"
    assert torch_compat.torch_profiler_running() is False
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        assert torch_compat.torch_profiler_running() is True
    monkeypatch.setattr(torch._C, "_cuda_hasPrimaryContext", lambda device: device == 1, raising=False)
    assert [torch_compat.has_primary_context(d) for d in (0, 1)] == [False, True]


def test_missing_optional_functions_fall_back_and_warn_once_each(monkeypatch, fresh_warnings):
    from torch.utils import checkpoint

    monkeypatch.delattr(torch.autograd.profiler, "_is_profiler_enabled")
    monkeypatch.delattr(torch._C, "_demangle")
    monkeypatch.delattr(torch._C, "_cuda_hasPrimaryContext", raising=False)  # CPU builds lack it anyway
    monkeypatch.delattr(checkpoint, "_recomputation_hook")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            assert torch_compat.torch_profiler_running() is False
            assert torch_compat.demangle(MANGLED) == MANGLED
            assert torch_compat.has_primary_context(0) is True
            assert torch_compat.recomputation_hook() is None
    assert [str(w.message).split(";")[0] for w in caught] == [
        f"pyprof_live: torch {torch.__version__} has no torch.autograd.profiler._is_profiler_enabled",
        f"pyprof_live: torch {torch.__version__} has no torch._C._demangle",
        f"pyprof_live: torch {torch.__version__} has no torch._C._cuda_hasPrimaryContext",
        f"pyprof_live: torch {torch.__version__} has no torch.utils.checkpoint._recomputation_hook",
    ]
    assert all(w.category is RuntimeWarning for w in caught)


def test_profile_without_the_checkpoint_hook_still_records_and_removes_its_hooks(monkeypatch, fresh_warnings):
    from torch.utils import checkpoint

    monkeypatch.delattr(checkpoint, "_recomputation_hook")
    with pytest.warns(RuntimeWarning, match="recomputed by non-reentrant activation checkpointing"):
        with pyprof_live.profile(gpu="off") as p:
            torch.ones(2)
    assert [op.name for op in p.records.ops] == ["aten::ones"]


def test_pyproject_and_readme_state_the_range_torch_compat_enforces():
    dependencies = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    floor = [re.fullmatch(r"torch>=(\d+)\.(\d+)", d) for d in dependencies if d.startswith("torch")]
    assert [tuple(int(n) for n in m.groups()) for m in floor if m] == [torch_compat.OLDEST]
    assert f"**{torch_compat.supported_range()}**" in (REPO / "README.md").read_text()


def test_only_capture_imports_torch_compat_at_module_level():
    # torch_compat imports torch: outside capture/ it is imported inside the functions that need it, so that
    # ``import pyprof_live`` and reading an export never load torch.
    package = REPO / "pyprof_live"
    eager = []
    for path in package.rglob("*.py"):
        if path.parts[len(package.parts)] in ("capture", "torch_compat.py"):
            continue
        for node in ast.parse(path.read_text()).body:
            names = (
                [node.module or ""] + [a.name for a in node.names]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            if any("torch_compat" in name for name in names):
                eager.append(str(path.relative_to(REPO)))
    assert eager == []


def test_compiled_code_under_the_op_hook_runs_compiled_or_eagerly_by_release():
    # 2.10+: Dynamo compiles code called under the op hook (2.6-2.10 do not see the hook, 2.11+ see that it ignores
    # compile internals) and its guards ignore the hook's dispatch keys, so the graph runs. 2.6-2.9: Dynamo is off
    # while the profile is installed (each call would fail its guards and recompile), so the code runs eagerly.
    compiles = []

    def backend(graph_module, example_inputs):
        compiles.append(graph_module)
        return graph_module.forward

    f = torch.compile(lambda x: torch.sin(x) + 1, backend=backend)
    with pyprof_live.profile(gpu="off") as p:
        out = f(torch.zeros(3))
        f(torch.zeros(3))
    assert out.tolist() == [1.0, 1.0, 1.0]
    compiled = torch_compat.compiled_code_runs_compiled_under_the_op_hook()
    assert len(compiles) == (1 if compiled else 0)  # compiled once, not at each call
    assert p.meta.get("compiled_code_runs_eagerly", False) is not compiled
    # The eager backend runs the graph's torch calls: the op hook sees them either way.
    assert [op.name for op in p.records.ops if op.name in ("aten::sin", "aten::add")] == ["aten::sin", "aten::add"] * 2


def test_compiled_code_runs_compiled_from_torch_2_10():
    # pytorch PR 164992 (2.10) made Dynamo's tensor guards mask the Python dispatch keys a mode adds.
    assert torch_compat.compiled_code_runs_compiled_under_the_op_hook() is (torch_compat.TORCH >= (2, 10))


def test_where_compiled_code_cannot_run_compiled_dynamo_is_off_during_the_profile_only(monkeypatch):
    from torch._dynamo import config

    from pyprof_live.capture import session

    monkeypatch.setattr(torch_compat, "compiled_code_runs_compiled_under_the_op_hook", lambda: False)
    monkeypatch.setattr(session, "_told_eager", [])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            with pyprof_live.profile(gpu="off") as p:
                assert config.disable is True
    assert config.disable is False
    told = [str(w.message) for w in caught if "runs eagerly" in str(w.message)]
    assert len(told) == 1 and told[0].startswith(f"pyprof_live: torch {torch.__version__}: torch.compile'd code")
    assert p.meta["compiled_code_runs_eagerly"] is True and p.meta["warnings"] == [
        told[0].removeprefix("pyprof_live: ")
    ]


def test_inductor_provenance_tracking_from_torch_2_9():
    assert torch_compat.inductor_tracks_provenance() is (torch_compat.TORCH >= (2, 9))


def test_the_profiling_compile_settings_are_looked_up_once_per_process_and_set_from_the_users_values(monkeypatch):
    """Which of the profile's compile settings this torch has is asked of its config modules once (their
    ``__getattr__`` cost ~60 us at each profile's start); the values put back are read at each start, so a
    value the user changes between profiles is the one restored."""
    from torch._functorch import config

    asked = []
    real = torch_compat._has_setting
    monkeypatch.setattr(torch_compat, "_has_setting", lambda owner, key: asked.append(key) or real(owner, key))
    torch_compat._settings_this_torch_has.cache_clear()
    first = torch_compat.profiling_compile_config()
    assert torch_compat.profiling_compile_config() == first
    # 3 settings in _PROFILING_COMPILE_CONFIG, each asked once (twice before the lookup was kept)
    assert sorted(asked) == ["enable_autograd_cache", "fx_graph_cache", "trace.provenance_tracking_level"]
    assert ("enable_autograd_cache", False) in [(key, value) for _, key, value in first]
    before = config.enable_autograd_cache
    try:
        for users in (True, False):
            config.enable_autograd_cache = users
            with pyprof_live.profile(gpu="off"):
                assert config.enable_autograd_cache is False
            assert config.enable_autograd_cache is users
    finally:
        config.enable_autograd_cache = before
