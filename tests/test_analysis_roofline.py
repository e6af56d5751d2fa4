"""Roofline numbers by hand: a GEMM, a convolution and a pointwise kernel, each on two GPUs; the peak
selection rule; per-op (summed kernels) versus per-kernel (single-kernel ops only) rooflines.

Units: a peak in TFLOP/s is 1e3 flops per ns, a bandwidth in GB/s is 1 byte per ns.
"""

import pytest

from pyprof_live.analysis.peaks import A100_SXM_80GB, GTX_1060, H100_SXM, T4, V100_SXM2
from pyprof_live.analysis.roofline import math_peak, op_dtype, roofline
from pyprof_live.records import OpRecord, TensorMeta

from .analysis_fixtures import ProfileBuilder

H100_GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off"
A100_GEMM = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_nn"
V100_CONV = "volta_fp16_s884cudnn_fp16_256x128_ldg8_relu_f2f_exp_small_nhwc_tn_v1"
T4_CONV = "turing_fp16_s1688cudnn_fp16_256x128_ldg8_relu_f2f_exp_small_nhwc_tn_v1"
ADD_KERNEL = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)"
)

BF16_SQUARE = TensorMeta((4096, 4096), "bfloat16")
CONV_ARGS = (
    TensorMeta((32, 64, 56, 56), "float16"),
    TensorMeta((64, 64, 3, 3), "float16"),
    None,
    (1, 1),
    (1, 1),
    (1, 1),
    False,
    (0, 0),
    1,
)
FP32_SQUARE = TensorMeta((4096, 4096), "float32")


def _first_row(device_name, op_name, inputs, kernel, duration, memory_bytes=0, **fields):
    p = (
        ProfileBuilder(device_name, memory_bytes)
        .op(op_name, 0, 10 * duration, inputs=inputs, kernels=[(kernel, 100, 100 + duration)], **fields)
        .build()
    )
    return p.kernel_view(columns="idx,op,flops,bytes,ideal,sol%,bound").rows[0]


@pytest.mark.parametrize(
    "device, kernel, duration, ideal, sol",
    [
        # mm [4096,4096]bf16 @ [4096,4096]bf16: flops 2*4096^3 = 137,438,953,472; bytes 3 tensors * 4096^2 * 2
        # = 100,663,296. H100 SXM bf16 989.5 TFLOP/s, 3,350 GB/s: compute 137438953472 / 989500 = 138,897.4 ns,
        # memory 100663296 / 3350 = 30,048.7 ns -> ideal 138,897 ns, compute-bound; in 200,000 ns: 69.4%.
        ("NVIDIA H100 80GB HBM3", H100_GEMM, 200_000, 138_897, 69.4),
        # A100 SXM 80GB bf16 312 TFLOP/s, 2,039 GB/s: 137438953472 / 312000 = 440,509.47 ns vs
        # 100663296 / 2039 = 49,368.95 ns -> 440,509 ns, compute-bound; in 500,000 ns: 88.1%.
        ("NVIDIA A100-SXM4-80GB", A100_GEMM, 500_000, 440_509, 88.1),
    ],
)
def test_gemm_roofline_on_two_gpus(device, kernel, duration, ideal, sol):
    row = _first_row(device, "aten::mm", (BF16_SQUARE, BF16_SQUARE), kernel, duration)
    assert (row["flops"], row["bytes"]) == (137_438_953_472, 100_663_296)
    assert (row["ideal"], row["sol%"], row["bound"]) == (ideal, sol, "compute")


@pytest.mark.parametrize(
    "device, kernel, duration, ideal, sol",
    [
        # convolution input [32,64,56,56]fp16, weight [64,64,3,3], stride 1, padding 1: output [32,64,56,56];
        # flops 2 * 32 * 64 * 64 * 3*3 * 56*56 = 7,398,752,256; bytes (6,422,528 in + 36,864 weight + 6,422,528 out)
        # * 2 = 25,763,840. V100 SXM2 fp16 tensor 125 TFLOP/s, 900 GB/s: 7398752256 / 125000 = 59,190.0 ns vs
        # 25763840 / 900 = 28,626.5 ns -> 59,190 ns compute-bound; in 100,000 ns: 59.2%.
        ("Tesla V100-SXM2-16GB", V100_CONV, 100_000, 59_190, 59.2),
        # T4 fp16 tensor 65 TFLOP/s, 320 GB/s: 7398752256 / 65000 = 113,827.0 ns vs 25763840 / 320 = 80,512 ns
        # -> 113,827 ns compute-bound; in 200,000 ns: 56.9%.
        ("Tesla T4", T4_CONV, 200_000, 113_827, 56.9),
    ],
)
def test_conv_roofline_on_two_gpus(device, kernel, duration, ideal, sol):
    row = _first_row(device, "aten::convolution", CONV_ARGS, kernel, duration)
    assert (row["flops"], row["bytes"]) == (7_398_752_256, 25_763_840)
    assert (row["ideal"], row["sol%"], row["bound"]) == (ideal, sol, "compute")


@pytest.mark.parametrize(
    "device, duration, ideal, sol",
    [
        # add [4096,4096]fp32 + [4096,4096]fp32: 16,777,216 flops, 3 * 16,777,216 * 4 = 201,326,592 bytes.
        # H100 SXM: memory 201326592 / 3350 = 60,097.49 ns, compute (fp32 CUDA cores, 67 TFLOP/s)
        # 16777216 / 67000 = 250.4 ns -> ideal 60,097 ns, memory-bound; in 80,000 ns: 75.1%.
        ("NVIDIA H100 80GB HBM3", 80_000, 60_097, 75.1),
        # A100 SXM 80GB: 201326592 / 2039 = 98,737.9 ns vs 16777216 / 19500 = 860.4 ns -> 98,738 ns; in 120,000: 82.3%.
        ("NVIDIA A100-SXM4-80GB", 120_000, 98_738, 82.3),
    ],
)
def test_pointwise_roofline_on_two_gpus(device, duration, ideal, sol):
    row = _first_row(device, "aten::add", (FP32_SQUARE, FP32_SQUARE, 1), ADD_KERNEL, duration, overload="Tensor")
    assert (row["flops"], row["bytes"]) == (16_777_216, 201_326_592)
    assert (row["ideal"], row["sol%"], row["bound"]) == (ideal, sol, "memory")


def test_peak_follows_dtype_and_tensor_core_use():
    assert math_peak(H100_SXM, "float32", True) == (494.5, "tf32")  # TF32 tensor cores
    assert math_peak(H100_SXM, "float32", None) == (67, "fp32")  # cannot tell: full fp32 (PyTorch's default)
    assert math_peak(H100_SXM, "bfloat16", None) == (989.5, "bf16")  # cannot tell: 16-bit -> tensor cores
    assert math_peak(H100_SXM, "bfloat16", False) == (67, "fp32")  # proven CUDA cores
    assert math_peak(H100_SXM, "float64", True) == (67, "fp64_tc") and math_peak(H100_SXM, "float64", False) == (
        34,
        "fp64",
    )
    assert math_peak(H100_SXM, "float8_e4m3fn", True) == (1979, "fp8")
    assert math_peak(A100_SXM_80GB, "int8", True) == (624, "int8")
    assert math_peak(V100_SXM2, "bfloat16", True) == (15.7, "fp32")  # no bf16 tensor cores: falls back
    assert math_peak(GTX_1060, "float16", None) == (4.37, "fp32")  # no tensor cores at all
    assert math_peak(T4, None, False) == (8.1, "fp32")  # dtype not recorded: float32


def test_op_dtype_is_the_first_floating_tensor():
    embedding = OpRecord(
        "aten::embedding", 0, 1, inputs=(TensorMeta((10, 4), "c10::BFloat16"), TensorMeta((3,), "long int"))
    )
    assert op_dtype(embedding) == "bfloat16"
    gather = OpRecord("aten::index", 0, 1, inputs=(TensorMeta((3,), "int64"),))
    assert op_dtype(gather) == "int64"
    assert op_dtype(OpRecord("aten::mm", 0, 1, inputs=(TensorMeta((2, 2)),))) is None


def test_no_roofline_without_inputs():
    assert roofline(None, 10, 100, H100_SXM, "float32", False) is None  # no formula
    assert roofline(10, 10, 0, H100_SXM, "float32", False) is None  # no device time
    assert roofline(10, 10, 100, None, "float32", False) is None  # unknown GPU
    assert roofline(0, 0, 100, H100_SXM, "float32", False) is None  # a view: nothing to compare


def test_op_roofline_sums_its_kernels_and_kernel_roofline_needs_a_single_kernel_op():
    # The same H100 GEMM op twice: once as one kernel of 200,000 ns, once split into a 150,000 ns GEMM and a
    # 50,000 ns split-K reduction. Op level: ideal 138,897 ns over 200,000 ns = 69.4% for both.
    builder = ProfileBuilder("NVIDIA H100 80GB HBM3")
    builder.op("aten::mm", 0, 1_000_000, inputs=(BF16_SQUARE, BF16_SQUARE), kernels=[(H100_GEMM, 100, 200_100)])
    builder.op(
        "aten::mm",
        1_000_000,
        2_000_000,
        inputs=(BF16_SQUARE, BF16_SQUARE),
        kernels=[(H100_GEMM, 1_000_100, 1_150_100), ("splitKreduce_kernel", 1_150_100, 1_200_100)],
    )
    p = builder.build()
    rows = p.kernel_view(columns="idx,op,kernel,sil,ideal,sol%").rows
    assert [(r["kernel"], r.get("ideal"), r.get("sol%")) for r in rows] == [
        (H100_GEMM, 138_897, 69.4),
        (H100_GEMM, 138_897, 69.4),
        ("splitKreduce_kernel", None, None),
    ]
    ops = {r["op"]: r for r in p.ops().rows}
    # two calls: ideal 2 * 138,897.37 = 277,794.7 -> 277,795 ns over 400,000 ns of kernels = 69.4%
    assert (ops["aten::mm"]["ideal"], ops["aten::mm"]["sol%"], ops["aten::mm"]["dev"]) == (277_795, 69.4, 400_000)
    kernels = {r["kernel"]: r for r in p.kernels().rows}
    # only the single-kernel call counts for the GEMM kernel: 138,897 / 200,000; the reduction has none
    assert (kernels[H100_GEMM]["calls"], kernels[H100_GEMM]["ideal"], kernels[H100_GEMM]["sol%"]) == (2, 138_897, 69.4)
    assert kernels["splitKreduce_kernel"]["sol%"] is None


def test_composite_op_is_measured_against_its_callees_kernels():
    # aten::linear owns no kernel; its aten::addmm child launches the GEMM. Both formulas count the same
    # work, so each gets the same roofline against the one kernel.
    x, w, b = (
        TensorMeta((4096, 4096), "bfloat16"),
        TensorMeta((4096, 4096), "bfloat16"),
        TensorMeta((4096,), "bfloat16"),
    )
    builder = ProfileBuilder("NVIDIA H100 80GB HBM3")
    builder.op("aten::linear", 0, 1_000_000, inputs=(x, w, b))
    builder.op("aten::addmm", 10, 900_000, inputs=(b, x, w), kernels=[(H100_GEMM, 100, 200_100)])
    ops = {r["op"]: r for r in builder.build().ops().rows}
    assert ops["aten::linear"]["dev"] == 200_000 and ops["aten::linear"]["dev_self"] == 0
    assert ops["aten::addmm"]["dev_self"] == 200_000
    assert ops["aten::linear"]["sol%"] == ops["aten::addmm"]["sol%"] == 69.4


def test_unknown_gpu_leaves_roofline_empty_and_says_so():
    p = (
        ProfileBuilder("NVIDIA A10G")
        .op("aten::mm", 0, 1_000_000, inputs=(BF16_SQUARE, BF16_SQUARE), kernels=[(A100_GEMM, 100, 200_100)])
        .build()
    )
    view = p.kernel_view(columns="idx,op,ideal,sol%")
    assert view.rows[0].get("ideal") is None
    assert any("no peak figures for device 0 (NVIDIA A10G)" in note for note in view.notes)
    p.set_peak("A100 SXM 80GB")  # 137438953472 / 312000 = 440,509.47 ns of 200,000 ns: 220.25 -> 220.3%
    assert p.kernel_view(columns="idx,op,ideal,sol%").rows[0]["sol%"] == 220.3
