"""Element sizes of tensor dtypes, under every spelling a profile source uses for them.

Live capture writes torch's names (``float32``, ``bfloat16``); Kineto's ``Input type`` uses C++
names (``float``, ``c10::BFloat16``, ``long int``); older tools write ``torch.float16`` or
``Half``. All of them map to one canonical torch name, so a formula never sees two spellings.
Sizes are torch's ``dtype.itemsize`` (one element, packed sub-byte types count as one byte per
stored element, as torch stores them).
"""

from __future__ import annotations

#: Canonical torch dtype name -> bytes per element.
ITEMSIZE = {
    "float64": 8,
    "float32": 4,
    "float16": 2,
    "bfloat16": 2,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
    "float8_e4m3fnuz": 1,
    "float8_e5m2fnuz": 1,
    "float8_e8m0fnu": 1,
    "float4_e2m1fn_x2": 1,
    "complex32": 4,
    "complex64": 8,
    "complex128": 16,
    "int8": 1,
    "int16": 2,
    "int32": 4,
    "int64": 8,
    "uint8": 1,
    "uint16": 2,
    "uint32": 4,
    "uint64": 8,
    "bool": 1,
    "qint8": 1,
    "quint8": 1,
    "qint32": 4,
    "quint4x2": 1,
    "quint2x4": 1,
    "bits8": 1,
    "bits16": 2,
    "bits1x8": 1,
    "bits2x4": 1,
    "bits4x2": 1,
}

# Other spellings -> canonical name. TF32 is a matmul mode, not a storage type: its tensors are float32.
_ALIASES = {
    "float": "float32",
    "double": "float64",
    "half": "float16",
    "tf32": "float32",
    "tensorfloat32": "float32",
    "cfloat": "complex64",
    "cdouble": "complex128",
    "chalf": "complex32",
    "long": "int64",
    "int": "int32",
    "short": "int16",
    "char": "int8",
    "byte": "uint8",
    # c10::ScalarType names (Kineto's record_param_comms ``dtype``) not already spelled above
    "complexfloat": "complex64",
    "complexdouble": "complex128",
    "complexhalf": "complex32",
    # Kineto / c10 C++ spellings (caffe2 TypeMeta: GCC's "long int", MSVC's "__int64")
    "long int": "int64",
    "long long": "int64",
    "int64_t": "int64",
    "__int64": "int64",
    "short int": "int16",
    "signed char": "int8",
    "unsigned char": "uint8",
    "unsigned short": "uint16",
    "short unsigned int": "uint16",
    "unsigned int": "uint32",
    "unsigned long": "uint64",
    "long unsigned int": "uint64",
    "unsigned __int64": "uint64",
    "c10::half": "float16",
    "c10::bfloat16": "bfloat16",
    "c10::complex<float>": "complex64",
    "c10::complex<double>": "complex128",
    "c10::complex<c10::half>": "complex32",
    "c10::float8_e4m3fn": "float8_e4m3fn",
    "c10::float8_e5m2": "float8_e5m2",
    "c10::float8_e4m3fnuz": "float8_e4m3fnuz",
    "c10::float8_e5m2fnuz": "float8_e5m2fnuz",
    "c10::float8_e8m0fnu": "float8_e8m0fnu",
    "c10::float4_e2m1fn_x2": "float4_e2m1fn_x2",
    "c10::qint8": "qint8",
    "c10::quint8": "quint8",
    "c10::qint32": "qint32",
    "c10::quint4x2": "quint4x2",
    "c10::quint2x4": "quint2x4",
}

# c10::ScalarType enum codes: Kineto's Concrete Inputs write a ``dtype`` argument as one ("6").
_SCALAR_TYPE_CODES = {
    0: "uint8",
    1: "int8",
    2: "int16",
    3: "int32",
    4: "int64",
    5: "float16",
    6: "float32",
    7: "float64",
    8: "complex32",
    9: "complex64",
    10: "complex128",
    11: "bool",
    12: "qint8",
    13: "quint8",
    14: "qint32",
    15: "bfloat16",
    16: "quint4x2",
    17: "quint2x4",
    23: "float8_e5m2",
    24: "float8_e4m3fn",
    25: "float8_e5m2fnuz",
    26: "float8_e4m3fnuz",
    27: "uint16",
    28: "uint32",
    29: "uint64",
    44: "float8_e8m0fnu",
    45: "float4_e2m1fn_x2",
}

#: Kinds, for result-type promotion when an op's output dtype was not recorded.
FLOATING = {
    "float64",
    "float32",
    "float16",
    "bfloat16",
    "float8_e4m3fn",
    "float8_e5m2",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float4_e2m1fn_x2",
}
COMPLEX = {"complex32", "complex64", "complex128"}


def canonical_dtype(name: str | int | None) -> str | None:
    """torch's name for a dtype spelled any known way (``c10::BFloat16``, ``6``) -> ``bfloat16``, else None."""
    if isinstance(name, int) and not isinstance(name, bool):
        return _SCALAR_TYPE_CODES.get(name)
    if not isinstance(name, str):
        return None
    key = name.strip().removeprefix("torch.").lower()
    if key.isdigit():
        return _SCALAR_TYPE_CODES.get(int(key))
    if key in ITEMSIZE:
        return key
    return _ALIASES.get(key)


def itemsize(name: str | None) -> int | None:
    """Bytes per element of ``name`` (any known spelling), None when unknown or not recorded."""
    canonical = canonical_dtype(name)
    return ITEMSIZE[canonical] if canonical else None


def kind_rank(name: str | None) -> int:
    """0 bool, 1 integer, 2 floating, 3 complex: the category order of type promotion."""
    canonical = canonical_dtype(name)
    if canonical == "bool":
        return 0
    if canonical in FLOATING:
        return 2
    if canonical in COMPLEX:
        return 3
    return 1
