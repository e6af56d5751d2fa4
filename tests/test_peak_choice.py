"""``p.peak()``: the figures chosen with ``p.set_peak`` whatever the profile ran on (also nothing), else the
table's entry for the GPU that ran kernels."""

import pytest

import pyprof_live
from pyprof_live.analysis.peaks import PEAKS, GpuPeak
from pyprof_live.profile import Profile
from pyprof_live.records import OpRecord

from .analysis_fixtures import ProfileBuilder

OWN = GpuPeak("A100 at 1.2 GHz", bandwidth=1555, fp32=15, fp64=7.5, tf32=120, fp16=240, bf16=240)


def _cpu_profile() -> Profile:
    """Ops only: no kernels, no devices, as a CPU-only live profile."""
    return Profile(ops=[OpRecord("aten::relu", 0, 100)], meta={"source": "live"})


@pytest.mark.parametrize("chosen, expected", [("A100 SXM 80GB", PEAKS["A100 SXM 80GB"]), (OWN, OWN)])
def test_chosen_figures_are_in_use_on_a_profile_without_kernels(chosen, expected, tmp_path):
    p = _cpu_profile()
    assert p.peak() is None
    p.set_peak(chosen)
    assert p.peak() == expected and p.peak(device=0) == expected and p.peak(device=3) == expected
    p.save(tmp_path / "run.pplive")
    assert pyprof_live.load(tmp_path / "run.pplive").peak(device=1) == expected
    p.set_peak(None)
    assert p.peak() is None


def test_chosen_figures_apply_to_devices_that_ran_nothing():
    p = ProfileBuilder("NVIDIA H100 80GB HBM3").op("aten::relu", 0, 100, kernels=[("relu_kernel", 10, 20)]).build()
    assert p.peak() == PEAKS["H100 SXM"] and p.peak(device=5) is None
    p.set_peak(OWN)
    assert p.peak() == OWN and p.peak(device=5) == OWN
    p.set_peak(None)
    assert p.peak() == PEAKS["H100 SXM"]
