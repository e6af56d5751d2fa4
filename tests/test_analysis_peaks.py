"""The GPU peak table: device names as the sources write them, dense figures, the user override."""

import gzip
import json
import sqlite3

import pytest

import pyprof_live
from pyprof_live.analysis.peaks import PEAKS, GpuPeak, find_peak

from .analysis_fixtures import ProfileBuilder

# Every NVIDIA device name in ../shared/data (its README lists them; test_names_in_the_recordings checks the
# files): name, memory the source reports, the table entry it must resolve to.
RECORDED_NAMES = [
    ("NVIDIA H100 80GB HBM3", 85018279936, "H100 SXM"),
    ("NVIDIA H100", 102085492736, "H100 SXM"),  # Kineto docs trace: 132 SMs, no form factor in the name
    ("Tesla V100-DGXS-32GB", 34084028416, "V100 SXM2"),  # DGX Station: SXM2 GPUs
    ("Tesla V100-SXM2-16GB", 16914055168, "V100 SXM2"),
    ("NVIDIA A100-SXM4-80GB", 84990623744, "A100 SXM 80GB"),
    ("NVIDIA A100-PG509-200", 42297524224, "A100 SXM 40GB"),  # Meta's A100 SXM4 board, 40 GB
    ("A100-PCIE-40GB", 42505273344, "A100 PCIe 40GB"),
    ("NVIDIA H200", 150121545728, "H200 SXM"),
    ("NVIDIA GeForce RTX 2070 SUPER", 8368816128, "GeForce RTX 2070 SUPER"),
    ("NVIDIA GeForce RTX 3060", 12884377600, "GeForce RTX 3060"),
    ("NVIDIA TITAN RTX", 25388515328, "TITAN RTX"),
    ("GeForce GTX 1060 with Max-Q Design", 6442450944, "GeForce GTX 1060 Max-Q"),
]


@pytest.mark.parametrize("name, memory, expected", RECORDED_NAMES)
def test_recorded_device_names_resolve(name, memory, expected):
    assert find_peak(name, memory).name == expected


@pytest.mark.parametrize(
    "name, expected",
    [
        ("NVIDIA H100 PCIe", "H100 PCIe"),
        ("NVIDIA H100 NVL", "H100 NVL"),
        ("NVIDIA H200 NVL", "H200 NVL"),
        ("NVIDIA B200", "B200"),
        ("NVIDIA A100 80GB PCIe", "A100 PCIe 80GB"),
        ("NVIDIA A100-SXM4-40GB", "A100 SXM 40GB"),
        ("NVIDIA A10", "A10"),
        ("NVIDIA L4", "L4"),
        ("NVIDIA L40S", "L40S"),
        ("Tesla T4", "T4"),
        ("Tesla V100-PCIE-32GB", "V100 PCIe"),
        ("Tesla V100S-PCIE-32GB", "V100S PCIe"),
        ("NVIDIA GeForce RTX 2070", "GeForce RTX 2070"),
        ("NVIDIA GeForce RTX 2080 Ti", "GeForce RTX 2080 Ti"),
        ("NVIDIA GeForce RTX 3080", "GeForce RTX 3080"),
        ("NVIDIA GeForce RTX 3090", "GeForce RTX 3090"),
        ("NVIDIA GeForce RTX 4070", "GeForce RTX 4070"),
        ("NVIDIA GeForce RTX 4080", "GeForce RTX 4080"),
        ("NVIDIA GeForce RTX 4090", "GeForce RTX 4090"),
        ("NVIDIA GeForce GTX 1060 6GB", "GeForce GTX 1060"),
        ("H100 SXM", "H100 SXM"),  # a table name
        # not in the table, or not an NVIDIA GPU: no guess
        ("NVIDIA A10G", None),
        ("NVIDIA GeForce RTX 3060 Ti", None),
        ("NVIDIA GeForce RTX 4070 Ti SUPER", None),
        ("NVIDIA GeForce RTX 3060 Laptop GPU", None),
        ("NVIDIA GH200 480GB", None),
        ("Intel(R) HD Graphics 630", None),
        ("Microsoft Basic Render Driver", None),
        ("", None),
    ],
)
def test_other_names(name, expected):
    found = find_peak(name)
    assert (found.name if found else None) == expected


def test_an_a100_without_size_in_its_name_is_told_apart_by_memory():
    assert find_peak("NVIDIA A100-PG509-210", 85_000_000_000).name == "A100 SXM 80GB"
    assert find_peak("NVIDIA A100-PG509-210", 42_000_000_000).name == "A100 SXM 40GB"


def test_figures_are_dense_and_sourced():
    # Datasheets print sparse tensor rates for Ampere and later: H100 SXM BF16 1,979* -> 989.5 dense,
    # FP8 3,958* -> 1,979; A100 TF32 156 dense (312*); L4 FP16 242* -> 121.
    assert (PEAKS["H100 SXM"].bf16, PEAKS["H100 SXM"].fp8, PEAKS["H100 SXM"].bandwidth) == (989.5, 1979, 3350)
    assert (PEAKS["A100 SXM 80GB"].tf32, PEAKS["A100 SXM 80GB"].bandwidth, PEAKS["A100 PCIe 80GB"].bandwidth) == (
        156,
        2039,
        1935,
    )
    assert PEAKS["L4"].fp16 == 121
    assert PEAKS["V100 SXM2"].tf32 is None and PEAKS["V100 SXM2"].bf16 is None  # Volta: fp16 tensor cores only
    for peak in PEAKS.values():
        assert peak.source.startswith("https://"), peak.name
        assert peak.fp32 > peak.fp64 > 0 and peak.bandwidth > 0
        tensor = [v for v in (peak.tf32, peak.fp16, peak.bf16, peak.fp8, peak.int8) if v is not None]
        assert all(v >= peak.fp32 for v in tensor), peak.name  # no tensor rate below the CUDA-core rate


def test_set_peak_overrides_every_gpu_and_survives_save(tmp_path):
    p = ProfileBuilder("NVIDIA A10G").op("aten::relu", 0, 100, kernels=[("relu_kernel", 10, 20)]).build()
    assert p.peak() is None
    p.set_peak("NVIDIA H100 80GB HBM3")
    assert p.peak().name == "H100 SXM"
    own = GpuPeak("my card", bandwidth=100, fp32=1, fp64=0.5)
    p.set_peak(own)
    assert p.peak() == own and p.peak(device=0) == own
    p.save(tmp_path / "run.pplive")
    assert pyprof_live.load(tmp_path / "run.pplive").peak() == own
    p.set_peak(None)
    assert p.peak() is None
    with pytest.raises(ValueError, match="no peak figures for .RTX 9090.; known: H100 NVL, H100 PCIe, H100 SXM, "):
        p.set_peak("RTX 9090")
    with pytest.raises(TypeError):
        p.set_peak(3.5)


def _names_in_recordings(data) -> set:
    """NVIDIA device names of every recording, read independently: nsys TARGET_INFO_GPU, nvprof
    CUPTI_ACTIVITY_KIND_DEVICE, Kineto deviceProperties."""
    names = set()
    for path in sorted((data / "nsys").iterdir()):
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        db.text_factory = lambda b: b.decode("utf-8", "replace")
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "TARGET_INFO_GPU" in tables:
            names |= {r[0] for r in db.execute("SELECT name FROM TARGET_INFO_GPU")}
        if "CUPTI_ACTIVITY_KIND_DEVICE" in tables:
            names |= {
                r[0]
                for r in db.execute(
                    "SELECT s.value FROM CUPTI_ACTIVITY_KIND_DEVICE d JOIN StringTable s ON s._id_ = d.name"
                )
            }
    for path in sorted((data / "kineto").iterdir()):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt") as f:
            trace = json.load(f)
        if isinstance(trace, dict):
            names |= {d["name"] for d in trace.get("deviceProperties", [])}
    return {n for n in names if "Intel" not in n and "Microsoft" not in n}


@pytest.mark.e2e
def test_names_in_the_recordings(shared_data):
    assert _names_in_recordings(shared_data) == {name for name, _, _ in RECORDED_NAMES}
