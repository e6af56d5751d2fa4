"""Speed of light: the least time an op could take on its GPU, and how far its kernels were from it.

    ideal = max(flops / peak math rate, bytes / DRAM bandwidth)
    sol%  = 100 * ideal / device time          bound = whichever term is larger

The device time is the sum of the op's kernels (its own and those of the ops it called: a formula
counts an op's whole work); memcpy/memset are left out, their limit is the copy engine or PCIe, not
DRAM. A kernel gets its own roofline only when it is its op's only kernel.

Which peak (``math_peak``) follows the op's dtype and the tensor-core use its kernel names prove
(``kernel_names.uses_tensor_cores``, combined over the op's kernels: any True wins, then None):
  tensor cores used        the dtype's tensor-core rate: float32 -> TF32, float16, bfloat16,
                           float8 -> FP8, int8/uint8 -> INT8, float64 -> FP64 tensor core;
  no tensor cores          the CUDA-core rate: float64 -> FP64, every other dtype -> FP32;
  cannot tell              16- and 8-bit dtypes -> their tensor-core rate (a GEMM in those types
                           runs on tensor cores wherever the GPU has them), float32/float64 ->
                           CUDA cores (PyTorch's default matmul precision is full fp32).
A dtype whose tensor-core rate the GPU lacks (bf16 on a V100) falls back to FP32. An op with no
recorded dtype (nsys ``sizes`` markers) is treated as float32.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..formulas import canonical_dtype
from ..records import TensorMeta

_TENSOR_CORE_FIELD = {
    "float64": "fp64_tc",
    "float32": "tf32",
    "float16": "fp16",
    "bfloat16": "bf16",
    "float8_e4m3fn": "fp8",
    "float8_e5m2": "fp8",
    "float8_e4m3fnuz": "fp8",
    "float8_e5m2fnuz": "fp8",
    "int8": "int8",
    "uint8": "int8",
}
_NARROW = frozenset(d for d in _TENSOR_CORE_FIELD if d not in ("float32", "float64"))
_FLOATING_ORDER = ("float64", "float32", "bfloat16", "float16")


@dataclass(frozen=True)
class Roofline:
    """One op's (or a single-kernel op's kernel's) place under the roofline; times in ns."""

    ideal: float
    sol: float  # percent of speed of light: 100 * ideal / device time
    bound: str  # "compute" or "memory"
    compute: float  # flops / peak math rate
    memory: float  # bytes / DRAM bandwidth
    math: str  # the peak used: "tf32", "fp32", "fp16", ...


def op_dtype(op) -> str | None:
    """The dtype an op computes in: its first floating-point tensor input, else its first typed tensor."""
    typed = []
    for value in tuple(op.inputs) + tuple(op.outputs):
        for meta in (value,) if isinstance(value, TensorMeta) else value if isinstance(value, tuple) else ():
            if isinstance(meta, TensorMeta) and meta.dtype is not None:
                typed.append(canonical_dtype(meta.dtype))
    for dtype in typed:
        if dtype and (dtype in _FLOATING_ORDER or dtype.startswith("float8")):
            return dtype
    return next((d for d in typed if d), None)


def math_peak(peak, dtype: str | None, tensor_cores: bool | None) -> tuple[float, str]:
    """(TFLOP/s, which unit) the op's math could run at on ``peak``'s GPU, by the rule above."""
    dtype = dtype or "float32"
    field = _TENSOR_CORE_FIELD.get(dtype)
    wants_tensor_cores = tensor_cores is True or (tensor_cores is None and dtype in _NARROW)
    if wants_tensor_cores and field and getattr(peak, field) is not None:
        return getattr(peak, field), field
    if dtype == "float64":
        return peak.fp64, "fp64"
    return peak.fp32, "fp32"


def roofline(flops, bytes_, device_ns: int, peak, dtype: str | None, tensor_cores: bool | None) -> Roofline | None:
    """The roofline of work that took ``device_ns`` on the GPU; None when any input is missing."""
    if peak is None or flops is None or bytes_ is None or device_ns <= 0 or not (flops or bytes_):
        return None  # 0 flops and 0 bytes: a view or a composite whose work its children's formulas count
    tflops, math = math_peak(peak, dtype, tensor_cores)
    compute = flops / (tflops * 1e3)  # TFLOP/s = 1e3 flops per ns
    memory = bytes_ / peak.bandwidth  # GB/s = 1 byte per ns
    ideal = max(compute, memory)
    return Roofline(
        ideal, 100.0 * ideal / device_ns, "compute" if compute >= memory else "memory", compute, memory, math
    )


def combine_tensor_cores(values) -> bool | None:
    """One verdict for an op from its kernels' verdicts: any True wins, then any None, else False."""
    verdict: bool | None = False
    for value in values:
        if value is True:
            return True
        if value is None:
            verdict = None
    return verdict


class RooflineSum:
    """Roofline of a group of ops (all calls of one op, one kernel name, one module): sums of ideal and
    of device time over the members that have a roofline."""

    __slots__ = ("compute", "ideal", "memory", "time")

    def __init__(self):
        self.ideal = self.time = self.compute = self.memory = 0.0

    def add(self, line: Roofline | None, device_ns: int) -> None:
        if line is not None:
            self.ideal += line.ideal
            self.time += device_ns
            self.compute += line.compute
            self.memory += line.memory

    def cells(self) -> dict:
        """The ``ideal``, ``sol%`` and ``bound`` cells of the group (None when no member had a roofline)."""
        if not self.time:
            return {"ideal": None, "sol%": None, "bound": None}
        return {
            "ideal": round(self.ideal),
            "sol%": round(100.0 * self.ideal / self.time, 1),
            "bound": "compute" if self.compute >= self.memory else "memory",
        }


def cells(line: Roofline | None) -> dict:
    """The ``ideal``, ``sol%`` and ``bound`` cells of one roofline."""
    if line is None:
        return {"ideal": None, "sol%": None, "bound": None}
    return {"ideal": round(line.ideal), "sol%": round(line.sol, 1), "bound": line.bound}
