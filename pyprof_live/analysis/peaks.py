"""Peak math rates and DRAM bandwidth of NVIDIA GPUs (and AMD's MI300X, which most public torch.compile
recordings come from), looked up from the device name a profile reports.

Every figure is DENSE (no 2:4 structured sparsity): NVIDIA's datasheets print tensor-core rates
"with sparsity" (marked *) for Ampere and later; those are halved here. Rates are boost-clock
peaks, as the datasheets give them.

GeForce and TITAN figures are for fp16/bf16 tensor-core math with FP32 accumulate, which is what
PyTorch's cuBLAS/cuDNN calls use: GeForce cards run it at half their FP16-accumulate rate (the
Turing, GA102 and Ada whitepapers list both); TITAN RTX runs it at full rate. Consumer FP64 is the
architecture's fixed fraction of FP32 (Pascal/Turing 1/32, GA10x/Ada 1/64) when the datasheet
does not print it.

Units: TFLOP/s (TOP/s for int8) and GB/s (10^9 bytes/s), so ``flops / (tflops * 1e3)`` and
``bytes / gbs`` are nanoseconds. ``None`` = the GPU has no such unit (V100 has no TF32/BF16/FP8/
INT8 tensor cores).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields
from typing import Any

_GIB = 1 << 30


@dataclass(frozen=True)
class GpuPeak:
    """Dense peak rates of one GPU model. Build one to override the table: ``p.set_peak(GpuPeak(...))``."""

    name: str
    bandwidth: float  # DRAM GB/s
    fp32: float  # CUDA-core TFLOP/s
    fp64: float  # CUDA-core TFLOP/s
    fp64_tc: float | None = None  # FP64 tensor core (DMMA)
    tf32: float | None = None  # TF32 tensor core (float32 tensors with allow_tf32)
    fp16: float | None = None  # FP16 tensor core, FP32 accumulate
    bf16: float | None = None  # BF16 tensor core, FP32 accumulate
    fp8: float | None = None  # FP8 tensor core
    int8: float | None = None  # INT8 tensor core, TOP/s
    source: str = ""

    def __post_init__(self):
        if not isinstance(self.name, str) or not isinstance(self.source, str):
            raise TypeError(f"GpuPeak name and source must be text, not {self.name!r} and {self.source!r}")
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("name", "source") or (value is None and f.default is None):
                continue
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 < value < float("inf"):
                raise ValueError(
                    f"GpuPeak {self.name!r}: {f.name} must be a finite positive number "
                    f"(or None for a unit the GPU lacks), not {value!r}"
                )

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> GpuPeak:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


# -- the table ------------------------------------------------------------------------------------

_VOLTA = "https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf"
_A100 = (
    "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
    "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf"
)
_HOPPER = "https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet"
_TURING_WP = (
    "https://images.nvidia.com/aem-dam/en-zz/Solutions/design-visualization/technologies/"
    "turing-architecture/NVIDIA-Turing-Architecture-Whitepaper.pdf"
)
_GA102_WP = "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf"
_ADA_WP = "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf"

# Volta: V100 datasheet (tensor = FP16 mixed precision). No TF32/BF16/INT8 tensor cores.
V100_SXM2 = GpuPeak("V100 SXM2", 900, 15.7, 7.8, fp16=125, source=_VOLTA)
V100_PCIE = GpuPeak("V100 PCIe", 900, 14, 7, fp16=112, source=_VOLTA)
V100S_PCIE = GpuPeak("V100S PCIe", 1134, 16.4, 8.2, fp16=130, source=_VOLTA)
# Turing T4 datasheet: FP32 8.1, mixed FP16/FP32 65, INT8 130; FP64 = 8.1 / 32.
T4 = GpuPeak(
    "T4",
    320,
    8.1,
    0.25,
    fp16=65,
    int8=130,
    source="https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-t4/"
    "t4-tensor-core-datasheet-951643.pdf",
)
# A10 datasheet: TF32 62.5 (125*), BF16/FP16 125 (250*), INT8 250 (500*); FP64 = 31.2 / 64.
A10 = GpuPeak(
    "A10",
    600,
    31.2,
    0.49,
    tf32=62.5,
    fp16=125,
    bf16=125,
    int8=250,
    source="https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a10/pdf/a10-datasheet.pdf",
)
# A100 datasheet: FP64 9.7, FP64 TC 19.5, FP32 19.5, TF32 156 (312*), BF16/FP16 312 (624*), INT8 624
# (1248*); same math for SXM and PCIe; bandwidth 40GB PCIe 1,555, 80GB PCIe 1,935, 40GB SXM 1,555,
# 80GB SXM 2,039 GB/s.
_A100_MATH: dict[str, Any] = dict(
    fp32=19.5, fp64=9.7, fp64_tc=19.5, tf32=156, fp16=312, bf16=312, int8=624, source=_A100
)
A100_SXM_40GB = GpuPeak("A100 SXM 40GB", 1555, **_A100_MATH)
A100_SXM_80GB = GpuPeak("A100 SXM 80GB", 2039, **_A100_MATH)
A100_PCIE_40GB = GpuPeak("A100 PCIe 40GB", 1555, **_A100_MATH)
A100_PCIE_80GB = GpuPeak("A100 PCIe 80GB", 1935, **_A100_MATH)
# L4 datasheet: FP32 30.3, TF32 120*, FP16/BF16 242*, FP8/INT8 485*; FP64 = 30.3 / 64.
L4 = GpuPeak(
    "L4",
    300,
    30.3,
    0.47,
    tf32=60,
    fp16=121,
    bf16=121,
    fp8=242.5,
    int8=242.5,
    source="https://resources.nvidia.com/en-us-data-center-overview/l4-gpu-datasheet",
)
# L40S datasheet: FP32 91.6, TF32 183 (366*), BF16/FP16 362.05 (733*), FP8/INT8 733 (1,466*); FP64 = 91.6 / 64.
L40S = GpuPeak(
    "L40S",
    864,
    91.6,
    1.43,
    tf32=183,
    fp16=362.05,
    bf16=362.05,
    fp8=733,
    int8=733,
    source="https://resources.nvidia.com/en-us-l40s/l40s-datasheet-28413",
)
# H100 datasheet, SXM / PCIe / NVL: FP64 34/26/30, FP64 TC 67/51/60, FP32 67/51/60, TF32 989*/756*/835*,
# BF16 = FP16 1,979*/1,513*/1,671*, FP8 = INT8 3,958*/3,026*/3,341*; 3.35 / 2.0 / 3.9 TB/s.
H100_SXM = GpuPeak(
    "H100 SXM", 3350, 67, 34, fp64_tc=67, tf32=494.5, fp16=989.5, bf16=989.5, fp8=1979, int8=1979, source=_HOPPER
)
H100_PCIE = GpuPeak(
    "H100 PCIe", 2000, 51, 26, fp64_tc=51, tf32=378, fp16=756.5, bf16=756.5, fp8=1513, int8=1513, source=_HOPPER
)
H100_NVL = GpuPeak(
    "H100 NVL", 3900, 60, 30, fp64_tc=60, tf32=417.5, fp16=835.5, bf16=835.5, fp8=1670.5, int8=1670.5, source=_HOPPER
)
# H200 product page, SXM / NVL: the H100 SXM / NVL math with 4.8 TB/s HBM3e.
_H200_PAGE = "https://www.nvidia.com/en-us/data-center/h200/"
H200_SXM = GpuPeak(
    "H200 SXM", 4800, 67, 34, fp64_tc=67, tf32=494.5, fp16=989.5, bf16=989.5, fp8=1979, int8=1979, source=_H200_PAGE
)
H200_NVL = GpuPeak(
    "H200 NVL", 4800, 60, 30, fp64_tc=60, tf32=417.5, fp16=835.5, bf16=835.5, fp8=1670.5, int8=1670.5, source=_H200_PAGE
)
# HGX B200 page, 8-GPU totals / 8: FP64 (and FP64 TC) 296 -> 37, FP32 600 -> 75, TF32 18 P* -> 1,125,
# FP16/BF16 36 P* -> 2,250, FP8 and INT8 72 P* -> 4,500; 8 TB/s HBM3e per GPU.
B200 = GpuPeak(
    "B200",
    8000,
    75,
    37,
    fp64_tc=37,
    tf32=1125,
    fp16=2250,
    bf16=2250,
    fp8=4500,
    int8=4500,
    source="https://www.nvidia.com/en-us/data-center/hgx/",
)

# AMD Instinct MI300X, ROCm "MI300 series microarchitecture" table (dense; the sparsity figures are double):
# FP64 vector 81.7, FP64 matrix 163.4, FP32 vector 163.4, TF32 matrix 653.7, FP16/BF16 matrix 1307.4,
# FP8 and INT8 2614.9; 5.3 TB/s HBM3. "Tensor core" columns here mean its matrix cores.
MI300X = GpuPeak(
    "MI300X",
    5300,
    163.4,
    81.7,
    fp64_tc=163.4,
    tf32=653.7,
    fp16=1307.4,
    bf16=1307.4,
    fp8=2614.9,
    int8=2614.9,
    source="https://rocm.docs.amd.com/en/latest/conceptual/gpu-arch/mi300.html",
)


def _unnamed_peak(device) -> GpuPeak | None:
    """ROCm traces of some runtimes leave the device name empty: an MI300X is then told by gfx94x
    (compute capability 9.4), 304 compute units and 192 GB (206,141,652,992 bytes in the vLLM traces)."""
    if tuple(device.compute_capability) == (9, 4) and device.sm_count == 304 and 190e9 < device.memory_bytes < 210e9:
        return MI300X
    return None


# Pascal: no tensor cores. GTX 1060 6GB: 1,280 cores x 2 x 1.708 GHz boost = 4.37 TFLOP/s, 8 Gbps x 192 bit;
# the Max-Q laptop part boosts to 1.48 GHz: 3.79. FP64 = FP32 / 32.
GTX_1060 = GpuPeak(
    "GeForce GTX 1060",
    192,
    4.37,
    0.14,
    source="https://www.nvidia.com/en-gb/geforce/products/10series/geforce-gtx-1060/",
)
GTX_1060_MAX_Q = GpuPeak(
    "GeForce GTX 1060 Max-Q", 192, 3.79, 0.12, source="https://www.nvidia.com/en-us/geforce/gaming-laptops/max-q/"
)
# Turing whitepaper, appendix tables (reference clocks): FP32, FP16 tensor with FP32 accumulate, INT8.
RTX_2070 = GpuPeak("GeForce RTX 2070", 448, 7.5, 0.23, fp16=29.9, int8=119.4, source=_TURING_WP)
RTX_2080_TI = GpuPeak("GeForce RTX 2080 Ti", 616, 13.4, 0.42, fp16=53.8, int8=215.2, source=_TURING_WP)
# RTX 2070 SUPER (not in the whitepaper): 40 SMs (2,560 cores, 320 tensor cores), 1.770 GHz boost,
# 14 Gbps x 256 bit = 448 GB/s (NVIDIA spec page). FP32 2560 x 2 x 1.77 = 9.06; FP16 tensor FP32-acc
# 320 x 64 FMA x 2 x 1.77 / 2 = 36.2; INT8 4x that = 145.
RTX_2070_SUPER = GpuPeak(
    "GeForce RTX 2070 SUPER",
    448,
    9.06,
    0.28,
    fp16=36.2,
    int8=145,
    source="https://www.nvidia.com/en-us/geforce/graphics-cards/compare/?section=compare-20",
)
# TITAN RTX: 576 tensor cores at 1.770 GHz, full-rate FP32 accumulate: 576 x 64 x 2 x 1.77 = 130.5
# ("130 teraFLOPS"); FP32 4,608 x 2 x 1.77 = 16.3; 672 GB/s.
TITAN_RTX = GpuPeak(
    "TITAN RTX",
    672,
    16.3,
    0.51,
    fp16=130.5,
    int8=261,
    source="https://www.nvidia.com/en-us/deep-learning-ai/products/titan-rtx/",
)
# GA102 whitepaper tables: RTX 3080 FP32 29.8, TF32 29.8, FP16/BF16 FP32-acc 59.5, INT8 238, 760 GB/s;
# RTX 3090 35.6, 35.6, 71, 284, 936 GB/s.
RTX_3080 = GpuPeak("GeForce RTX 3080", 760, 29.8, 0.47, tf32=29.8, fp16=59.5, bf16=59.5, int8=238, source=_GA102_WP)
RTX_3090 = GpuPeak("GeForce RTX 3090", 936, 35.6, 0.56, tf32=35.6, fp16=71, bf16=71, int8=284, source=_GA102_WP)
# RTX 3060 (GA106, not in the whitepaper): 28 SMs at 1.777 GHz with the GA10x per-SM rates of the
# whitepaper (per clock: 256 FP32, 256 TF32, 512 FP16 FP32-acc, 2048 INT8 ops): 12.7, 12.7, 25.5, 101.9;
# 15 Gbps x 192 bit = 360 GB/s.
RTX_3060 = GpuPeak(
    "GeForce RTX 3060",
    360,
    12.7,
    0.2,
    tf32=12.7,
    fp16=25.5,
    bf16=25.5,
    int8=101.9,
    source=_GA102_WP + " (GA10x per-SM rates) and "
    "https://www.nvidia.com/en-us/geforce/graphics-cards/30-series/rtx-3060-3060ti/",
)
# Ada whitepaper tables: RTX 4090 FP32 82.6, TF32 82.6, FP16/BF16 FP32-acc 165.2, FP8 FP32-acc 330.3,
# INT8 660.6, 1,008 GB/s; RTX 4080 48.7, 48.7, 97.5, 194.9, 389.9, 716.8 GB/s.
RTX_4090 = GpuPeak(
    "GeForce RTX 4090", 1008, 82.6, 1.29, tf32=82.6, fp16=165.2, bf16=165.2, fp8=330.3, int8=660.6, source=_ADA_WP
)
RTX_4080 = GpuPeak(
    "GeForce RTX 4080", 716.8, 48.7, 0.76, tf32=48.7, fp16=97.5, bf16=97.5, fp8=194.9, int8=389.9, source=_ADA_WP
)
# RTX 4070 (AD104, after the whitepaper): 46 SMs at 2.475 GHz with Ada per-SM rates (per clock: 256 FP32,
# 256 TF32, 512 FP16 FP32-acc, 1024 FP8 FP32-acc, 2048 INT8): 29.1, 29.1, 58.3, 116.6, 233.2;
# 21 Gbps x 192 bit = 504 GB/s.
RTX_4070 = GpuPeak(
    "GeForce RTX 4070",
    504,
    29.1,
    0.45,
    tf32=29.1,
    fp16=58.3,
    bf16=58.3,
    fp8=116.6,
    int8=233.2,
    source=_ADA_WP + " (Ada per-SM rates) and "
    "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/rtx-4070-family/",
)

# Device names as CUPTI / nsys / Kineto write them, lower-cased; first match wins, so more specific
# patterns come first. A100s whose name does not say the memory size are told apart by memory.
_BY_NAME = (
    (r"(?<!g)h100.*\bnvl\b", H100_NVL),
    (r"(?<!g)h100.*\bpcie\b", H100_PCIE),
    (r"(?<!g)h100\b", H100_SXM),  # "NVIDIA H100 80GB HBM3", "NVIDIA H100" (132 SMs), "H100 SXM5"
    (r"(?<!g)h200.*\bnvl\b", H200_NVL),
    (r"(?<!g)h200\b", H200_SXM),
    (r"(?<!g)b200\b", B200),
    (r"\bmi300x\b", MI300X),  # "AMD Instinct MI300X"
    (r"a100.*\bpci-?e\b", (A100_PCIE_40GB, A100_PCIE_80GB)),
    (r"a100\b", (A100_SXM_40GB, A100_SXM_80GB)),  # "A100-SXM4-80GB", "A100-PG509-200" (Meta's SXM4 board)
    (r"\ba10\b", A10),
    (r"\bl40s\b", L40S),
    (r"\bl4\b", L4),
    (r"\bt4\b", T4),
    (r"v100s\b", V100S_PCIE),
    (r"v100.*\bpcie\b", V100_PCIE),
    (r"v100\b", V100_SXM2),  # "Tesla V100-SXM2-16GB", "Tesla V100-DGXS-32GB" (DGX Station, SXM2 clocks)
    (r"\btitan rtx\b", TITAN_RTX),
    (r"\brtx 2070 super\b", RTX_2070_SUPER),
    (r"\brtx 2070$", RTX_2070),
    (r"\brtx 2080 ti$", RTX_2080_TI),
    (r"\brtx 3060$", RTX_3060),
    (r"\brtx 3080$", RTX_3080),
    (r"\brtx 3090$", RTX_3090),
    (r"\brtx 4070$", RTX_4070),
    (r"\brtx 4080$", RTX_4080),
    (r"\brtx 4090$", RTX_4090),
    (r"\bgtx 1060 with max-q design$", GTX_1060_MAX_Q),
    (r"\bgtx 1060(?: \d+gb)?$", GTX_1060),
)
_COMPILED = tuple((re.compile(pattern), peak) for pattern, peak in _BY_NAME)
_SEPARATORS = re.compile(r"[\s_]+")

#: Every GPU model in the table, by its name.
PEAKS = {peak.name: peak for _, entry in _BY_NAME for peak in (entry if isinstance(entry, tuple) else (entry,))}


def find_peak(device_name: str, memory_bytes: int = 0) -> GpuPeak | None:
    """The table's entry for a device name as profiles report it, or a table name; None when unknown.

    ``memory_bytes`` (DeviceInfo.memory_bytes) picks the 40 or 80 GB A100 when the name does not say.
    Laptop parts and cards not in the table (RTX 3060 Ti, A10G, ...) are None rather than a guess.
    """
    if device_name in PEAKS:
        return PEAKS[device_name]
    name = _SEPARATORS.sub(" ", device_name.strip().lower())
    if "laptop" in name:
        return None
    for pattern, entry in _COMPILED:
        if pattern.search(name):
            if isinstance(entry, tuple):
                forty, eighty = entry
                return eighty if "80gb" in name or memory_bytes > 60 * _GIB else forty
            return entry
    return None


def chosen_peak(profile):
    """The GpuPeak the user chose with ``p.set_peak`` (kept in meta, so saved profiles keep it), or None."""
    override = profile.meta.get("peak")
    return GpuPeak.from_dict(override) if override else None


def device_peaks(profile) -> dict:
    """Device id -> GpuPeak (or None) for every device of ``profile``; ``p.set_peak`` overrides all."""
    chosen = chosen_peak(profile)
    if chosen is not None:
        ids = {d.id for d in profile.records.devices} | {k.device for k in profile.records.kernels}
        return {i: chosen for i in ids}
    peaks = {d.id: find_peak(d.name, d.memory_bytes) if d.name else _unnamed_peak(d) for d in profile.records.devices}
    for k in profile.records.kernels:
        peaks.setdefault(k.device, None)
    return peaks
