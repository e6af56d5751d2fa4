"""The formula table itself: lookup, user registration, never raising, dtype sizes, and what
happens with inputs that lack what a formula needs (nsys sizes) or that come as Kineto strings."""

import pytest
import torch

from pyprof_live import torch_compat
from pyprof_live.formulas import (
    Cost,
    DuplicateFormulaError,
    canonical_dtype,
    covered_names,
    evaluate,
    has_formula,
    itemsize,
    register_flops,
    registry,
)
from pyprof_live.formulas.views import no_work_names
from pyprof_live.records import OpRecord, TensorMeta, Unknown
from tests.formula_recorder import record_one

# Ops removed from torch that older traces still show (torch 1.x Kineto/nsys exports).
LEGACY_OPS = {
    "_cat",
    "cudnn_convolution_backward",
    "cudnn_convolution_backward_bias",
    "cudnn_convolution_backward_input",
    "cudnn_convolution_backward_weight",
    "l1_loss_backward",
    "miopen_convolution_backward",
    "miopen_convolution_backward_bias",
    "miopen_convolution_backward_input",
    "miopen_convolution_backward_weight",
}


def op(name, inputs=(), outputs=(), overload="", kwargs=()):
    return OpRecord(
        name=name, start=0, end=1, overload=overload, inputs=tuple(inputs), outputs=tuple(outputs), kwargs=tuple(kwargs)
    )


@pytest.fixture
def scratch_registry(monkeypatch):
    """User registrations made by a test (and what was cached under them) vanish after it."""
    monkeypatch.setattr(registry, "_FORMULAS", dict(registry._FORMULAS))
    monkeypatch.setattr(registry, "_CACHE", {})


#: Ops with a formula that older supported releases lack: the first release with each (torch's sources:
#: 2.8 added an MPS-only _fused_rms_norm, 2.9 the general op and its backward).
NEWER_OPS = {"_fused_rms_norm": (2, 8), "_fused_rms_norm_backward": (2, 9)}


def test_every_aten_name_is_a_real_op_so_no_typo_hides_a_formula():
    # PyProf listed "exp1m" for expm1; a name torch does not have is either a typo, a legacy op or one newer
    # than this torch.
    unknown = {
        name[len("aten::") :]
        for name in covered_names()
        if name.startswith("aten::") and not hasattr(torch.ops.aten, name[len("aten::") :])
    }
    assert unknown == LEGACY_OPS | {name for name, since in NEWER_OPS.items() if torch_compat.TORCH < since}


def test_no_formula_is_na_with_the_name_in_the_reason():
    assert evaluate(op("aten::frobnicate")) == Cost(None, None, "no formula for aten::frobnicate")
    assert not has_formula("aten::frobnicate") and has_formula("aten::addmm")


def test_views_are_zero_by_rule():
    # A listed set, not a fallback: view/transpose/expand/... are 0 flops and 0 bytes whatever their inputs.
    names = no_work_names()
    assert {
        "aten::view",
        "aten::_unsafe_view",
        "aten::reshape",
        "aten::transpose",
        "aten::t",
        "aten::expand",
        "aten::permute",
        "aten::as_strided",
        "aten::slice",
        "aten::select",
        "aten::squeeze",
        "aten::unsqueeze",
        "aten::detach",
        "aten::alias",
        "aten::split",
        "aten::unbind",
        "aten::empty",
    } <= set(names)
    view = record_one(lambda x: x.view(4, 6), torch.randn(24))
    assert evaluate(view) == Cost(0, 0, "")
    assert evaluate(op("aten::transpose", [Unknown("sizes")])) == Cost(0, 0, "")


def test_bad_shapes_and_dtypes_give_na_with_the_reason_and_never_raise():
    good = TensorMeta((4, 8), "float32")
    assert evaluate(op("aten::mm", [TensorMeta((4, -8), "float32"), good])) == Cost(
        None, None, "bad shape for self: (4, -8)"
    )
    assert evaluate(op("aten::mm", [TensorMeta("4x8", "float32"), good])).reason == "bad shape for self: '4x8'"
    # mm of (4, 8) @ (4, 8): torch's own count asserts on the inner dims; the assertion becomes a reason.
    mismatch = evaluate(op("aten::mm", [good, good]))
    assert mismatch.flops is None and "AssertionError" in mismatch.reason
    # Unknown dtype: flops 2*4*8*8 = 512 still computed, bytes na.
    weird = evaluate(op("aten::mm", [TensorMeta((4, 8), "float17"), TensorMeta((8, 8), "float17")]))
    assert weird == Cost(512, None, "unknown dtype 'float17'")
    assert evaluate(op("aten::relu", [42])).reason == "aten::relu: no tensor operand recorded"
    # a trace taken without record_shapes: nothing recorded at all.
    assert evaluate(op("aten::relu")) == Cost(None, None, "inputs not recorded")


def test_dtype_not_recorded_keeps_flops_and_says_why_bytes_are_na():
    # nsys `sizes = [[64, 32], [32, 16]]` carries no dtype: 2 * 64 * 16 * 32 = 65536 flops, bytes unknown.
    mm = op("aten::mm", [TensorMeta((64, 32)), TensorMeta((32, 16))])
    assert evaluate(mm) == Cost(65536, None, "dtype not recorded")


def test_nsys_conv_without_stride_or_padding_is_na_with_that_reason():
    # nsys emit_nvtx `sizes = [[1, 3, 8, 8], [4, 3, 3, 3], [], [], [], [], []]`: the ints are not recorded.
    sizes_only = op(
        "aten::conv2d",
        [
            TensorMeta((1, 3, 8, 8)),
            TensorMeta((4, 3, 3, 3)),
            Unknown("sizes only"),
            Unknown("sizes only"),
            Unknown("sizes only"),
            Unknown("sizes only"),
            Unknown("sizes only"),
        ],
    )
    assert evaluate(sizes_only) == Cost(None, None, "inputs lack padding (sizes only)")


def test_kineto_concrete_inputs_as_strings_are_computed():
    # Kineto `Concrete Inputs`: ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "1"] for conv2d(x, w, None, stride 2,
    # padding 1, dilation 1, groups 1). Output spatial = (8 + 2 - 2 - 1) // 2 + 1 = 4, so out (1, 4, 4, 4).
    # flops = 2 * out positions 16 * kernel 9 * batch 1 * c_out 4 * c_in 3 = 3456.
    # bytes (bf16) = 2 * (x 192 + w 108 + out 64) = 728.
    kineto = op(
        "aten::conv2d",
        [
            TensorMeta((1, 3, 8, 8), "c10::BFloat16"),
            TensorMeta((4, 3, 3, 3), "c10::BFloat16"),
            None,
            "[2, 2]",
            "[1, 1]",
            "[1, 1]",
            "1",
        ],
    )
    assert evaluate(kineto) == Cost(3456, 728, "")


def test_modifiers_take_their_default_when_only_sizes_were_recorded():
    # add(x, y, alpha) from nsys: alpha unknown -> counted as the default 1: 1 flop per element, 6 elements.
    add = op("aten::add", [TensorMeta((2, 3)), TensorMeta((2, 3)), Unknown("sizes only")])
    assert evaluate(add) == Cost(6, None, "dtype not recorded")


def test_keyword_arguments_named_by_the_source_are_found():
    # add(x, y, alpha=2) recorded as positional inputs + kwargs naming alpha: 2 flops per element (mul, add).
    x = TensorMeta((5,), "float32")
    named = op("aten::add", [x, x, 2], kwargs=[("alpha", 2)])
    assert evaluate(named) == Cost(10, 60, "")  # bytes: 3 tensors * 5 * 4


def test_register_flops_for_a_custom_op_and_a_wrapped_function(scratch_registry):
    register_flops(
        "mylib::scale",
        flops=lambda inputs, outputs, kwargs: inputs[0].shape[0] * kwargs["factor"],
        bytes=lambda inputs, outputs, kwargs: 8 * inputs[0].shape[0],
    )

    @register_flops("MyFunction.forward")
    def my_flops(inputs, outputs, kwargs):
        return 7

    scale = op("mylib::scale", [TensorMeta((10,), "float32")], kwargs=[("factor", 3)])
    assert evaluate(scale) == Cost(30, 80, "")
    fn = OpRecord(name="MyFunction.forward", start=0, end=1, kind="function")
    assert evaluate(fn) == Cost(7, None, "no bytes formula registered for MyFunction.forward")
    assert {"mylib::scale", "MyFunction.forward"} <= set(covered_names())


def test_register_flops_refuses_duplicates_unless_replace(scratch_registry):
    with pytest.raises(DuplicateFormulaError, match="aten::addmm"):
        register_flops("aten::addmm", flops=lambda *_: 1)
    register_flops("aten::addmm", flops=lambda *_: 1, replace=True)
    assert evaluate(op("aten::addmm")).flops == 1


def test_a_failing_user_formula_is_na_with_its_error(scratch_registry):
    register_flops("mylib::broken", flops=lambda inputs, outputs, kwargs: inputs[5].shape[0], bytes=lambda *_: 4)
    assert evaluate(op("mylib::broken")) == Cost(
        None, 4, "flops formula for mylib::broken failed: IndexError: tuple index out of range"
    )


@pytest.mark.parametrize(
    "spelling, canonical, size",
    [
        ("float32", "float32", 4),
        ("torch.float64", "float64", 8),
        ("tf32", "float32", 4),
        ("bfloat16", "bfloat16", 2),
        ("float16", "float16", 2),
        ("half", "float16", 2),
        ("float8_e4m3fn", "float8_e4m3fn", 1),
        ("float8_e5m2", "float8_e5m2", 1),
        ("float8_e4m3fnuz", "float8_e4m3fnuz", 1),
        ("float8_e5m2fnuz", "float8_e5m2fnuz", 1),
        ("float8_e8m0fnu", "float8_e8m0fnu", 1),
        ("int8", "int8", 1),
        ("uint8", "uint8", 1),
        ("int16", "int16", 2),
        ("int32", "int32", 4),
        ("int64", "int64", 8),
        ("bool", "bool", 1),
        ("complex32", "complex32", 4),
        ("complex64", "complex64", 8),
        ("complex128", "complex128", 16),
        ("qint8", "qint8", 1),
        ("quint8", "quint8", 1),
        ("qint32", "qint32", 4),
        # Kineto's C++ spellings and ScalarType codes
        ("float", "float32", 4),
        ("double", "float64", 8),
        ("c10::Half", "float16", 2),
        ("c10::BFloat16", "bfloat16", 2),
        ("long int", "int64", 8),
        ("int", "int32", 4),
        ("unsigned char", "uint8", 1),
        ("signed char", "int8", 1),
        ("c10::complex<float>", "complex64", 8),
        ("c10::Float8_e4m3fn", "float8_e4m3fn", 1),
        ("6", "float32", 4),
        (15, "bfloat16", 2),
    ],
)
def test_dtype_sizes_under_every_spelling(spelling, canonical, size):
    assert canonical_dtype(spelling) == canonical
    assert itemsize(spelling) == size


def test_dtype_sizes_match_torch():
    for name in (
        "float64",
        "float32",
        "float16",
        "bfloat16",
        "float8_e4m3fn",
        "float8_e5m2",
        "int8",
        "uint8",
        "int16",
        "int32",
        "int64",
        "bool",
        "complex64",
        "complex128",
        "uint16",
        "uint32",
        "uint64",
    ):
        assert itemsize(name) == getattr(torch, name).itemsize, name
    assert itemsize("Scalar") is None and itemsize(None) is None


def test_a_registration_is_seen_by_ops_evaluated_before_it(scratch_registry):
    # evaluate() caches by call signature; registering (or replacing) a formula must not leave stale answers.
    custom = op("mylib::late", [TensorMeta((3,), "float32")])
    assert evaluate(custom) == Cost(None, None, "no formula for mylib::late")
    register_flops("mylib::late", flops=lambda inputs, outputs, kwargs: 3)
    assert evaluate(custom).flops == 3
    register_flops("mylib::late", flops=lambda inputs, outputs, kwargs: 4, replace=True)
    assert evaluate(custom).flops == 4


def test_unhashable_argument_values_are_evaluated_without_the_cache():
    # A source that kept a list (not a tuple) for an int[] argument: still computed.
    x = TensorMeta((4, 6), "float32")
    assert evaluate(op("aten::sum", [x, [1], False, None])) == Cost(24, 112, "")
