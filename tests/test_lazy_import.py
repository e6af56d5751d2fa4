"""``import pyprof_live`` does not import torch (PEP 562): the CLI reads exports without paying for it."""

import pytest

import pyprof_live

from .fresh_process import run_in_a_fresh_process


def test_import_and_the_cli_on_a_saved_profile_do_not_import_torch(tmp_path):
    path = tmp_path / "p.pplive"
    pyprof_live.Profile(meta={"source": "test"}).save(path)
    out = run_in_a_fresh_process(
        "import sys, io, contextlib\n"
        "import pyprof_live\n"
        "print('torch' in sys.modules, 'nvtx' in sys.modules)\n"
        "from pyprof_live.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main([{str(path)!r}]) == 0\n"
        "print('torch' in sys.modules)\n"
        "profile = pyprof_live.profile\n"  # the function, not the module pyprof_live/profile.py
        "print('torch' in sys.modules, profile.__module__)\n"
    )
    assert out.split("\n") == ["False False", "False", "True pyprof_live.capture.live", ""]


def test_nvprof_kernel_names_are_demangled_without_torch(shared_data):
    out = run_in_a_fresh_process(
        "import sys, pyprof_live\n"
        f"p = pyprof_live.load({str(shared_data / 'nsys/nvprof_pytorch_pyprof_lm_v100_17ed9e2.sql')!r})\n"
        "print('torch' in sys.modules)\n"
        "names = sorted({k.name for k in p.records.kernels})\n"
        "print(sum(n.startswith('_Z') for n in names))\n"
        "print(names[0])\n"
    )
    # None left mangled; the first sorted name, demangled by the C++ runtime (as torch's c10::demangle).
    assert out.split("\n")[:3] == [
        "False",
        "0",
        "void (anonymous namespace)::softmax_warp_backward<float, float, float, 6, false>"
        "(float*, float const*, float const*, int, int, int)",
    ]


def test_public_names_resolve_lazily_and_unknown_ones_raise():
    from pyprof_live.capture.live import LiveProfile

    assert pyprof_live.profile is LiveProfile  # profile() makes a LiveProfile, as torch.profiler.profile is a class
    assert set(pyprof_live.__all__) <= set(dir(pyprof_live))
    for name in pyprof_live.__all__:
        assert getattr(pyprof_live, name) is not None
    with pytest.raises(AttributeError, match="module 'pyprof_live' has no attribute 'nope'"):
        pyprof_live.nope


def test_nvtx_imported_after_pyprof_live_is_wrapped_when_a_profile_starts():
    """nvtx imported after pyprof_live: its functions are wrapped at profile start (torch.cuda.nvtx's
    too, but the CPU wheel has no NVTX library to call)."""
    out = run_in_a_fresh_process(
        "import pyprof_live, torch, nvtx\n"
        "with pyprof_live.profile() as p:\n"
        "    nvtx.push_range('layer:A'); torch.ones(2); nvtx.pop_range()\n"
        "    nvtx.push_range('B'); nvtx.pop_range()\n"
        "print([(r.name, r.kind) for r in p.records.ranges])\n"
        "print(p.records.ops[0].layer)\n"
    )
    assert out.split("\n")[:2] == ["[('A', 'layer'), ('B', 'nvtx'), ('step 0', 'step')]", "('A',)"]


def test_nvtx_bound_by_name_after_importing_torch_and_nvtx_first_is_seen():
    """The documented order: import torch/nvtx, then pyprof_live, then bind names: wrapped at import."""
    out = run_in_a_fresh_process(
        "import torch, nvtx, pyprof_live\n"
        "from nvtx import push_range, pop_range\n"
        "with pyprof_live.profile() as p:\n"
        "    push_range('layer:A'); torch.ones(2); pop_range()\n"
        "print([(r.name, r.kind) for r in p.records.ranges])\n"
    )
    assert out.split("\n")[0] == "[('A', 'layer'), ('step 0', 'step')]"
