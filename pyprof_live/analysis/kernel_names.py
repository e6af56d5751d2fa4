"""What a GPU kernel's name tells: the short name a report prints, tensor-core use, and the kind of work.

A trace keeps little more than the kernel's name, so everything here reads the name alone (the
demangled name from CUPTI/nsys/Kineto, or an Itanium-mangled one from nvprof). All three functions
are pure, cached and never raise.

short_name: PyProf's kShortName (drop the return type, the template arguments, the parameter list
and the `at::`, `native::`, `cuda::` and anonymous namespaces; keep other namespaces such as
`cudnn::`), done so that modern names stay recognisable: when the function is only a launch wrapper
(`cutlass::Kernel<X>`, `cutlass::device_kernel<X>`, `enable_*<X>`), the name is that of X.

uses_tensor_cores answers True, False or None by one rule:
  True   the name proves tensor-core math: an MMA instruction or op-class token (HMMA/IMMA/DMMA,
         GMMA/WGMMA, UMMA/tcgen05, `tensorop`, `wmma`, MMA shapes such as 884/1688/16816 before
         gemm/cudnn/fprop/dgrad/wgrad, xmma's `tensor16x8x8` and `warpgroupsize`, CuTe MMA atoms
         `SM80_16x8x16_...`/`SM100_MMA_...`, PTX shapes `m16n8k16`); or a kernel family whose every
         member uses them (cuBLASLt `nvjet_*`; the FlashAttention-2/3 main loops, built on SM80 MMA
         atoms; xmma kernels with f16/bf16/tf32/int8/fp8 operands; PyTorch's memory-efficient
         attention `fmha_cutlass[FB]_<dtype>_..._sm<N>` where its DefaultGemmType picks TensorOp).
  False  the name proves CUDA-core math or no matrix math: SIMT markers (`simt`, `ffma`/`hfma2`/
         `dfma`, `UniversalFMA`; sm5x/sm6x xmma; fermi/kepler/maxwell/pascal kernels), SIMT cuBLAS
         and cuDNN families (`*_sgemm`, `*_scudnn_*`, gemv, split-K reduce and other helpers,
         Winograd, FFT, im2col, depthwise), FlashAttention's pre/post-processing kernels, PyTorch's
         own kernels (`at::native`, THC/THCUNN), and every kernel whose kind is elementwise,
         reduction, norm, softmax, pooling, copy or communication.
  None   the name cannot tell: user kernels, Triton templates, `Kernel`, GEMM/conv/attention kernels
         without one of the markers above. PyProf's whitelist entries `conv1x1`, `direct_group`,
         `dgrad_1x1_stride_2x2` and `first_layer_wgrad_kernel` stay None (no evidence either way);
         its `conv2d_c1_k1` is False: cuDNN's depthwise kernels run on CUDA cores (pytorch/pytorch#22302).
An explicit tensor-core marker wins over a CUDA-core one, which wins over a family rule.

kernel_category: gemm, conv, attention, elementwise, reduction, norm, softmax, pooling, copy,
communication (NCCL) or other; the report's recommendations and its communication rows use it.
"""

import re
from functools import lru_cache

# ---------------------------------------------------------------------------------------------
# short names

_ANONYMOUS_NAMESPACES = ("(anonymous namespace)::", "<unnamed>::")
_DROPPED_NAMESPACES = frozenset({"at", "native", "cuda"})
_LAUNCH_WRAPPER = re.compile(r"Kernel2?|device_kernel|enable_\w+")
_NAME_ARGUMENT = re.compile(r"[A-Za-z_][\w:]*")
_BUILTIN_TYPES = frozenset({"int", "unsigned", "long", "short", "char", "float", "double", "bool", "void", "const"})
_OPENERS, _CLOSERS = "<([{", ">)]}"
_MANGLED_LENGTH = re.compile(r"\d+")
_MANGLED_SUBSTITUTION = re.compile(r"S([0-9A-Z]*)_")


@lru_cache(maxsize=65536)
def short_name(name: str) -> str:
    """The kernel's name without return type, template arguments, parameters and ATen namespaces."""
    text = name.strip()
    if text.startswith("_Z"):
        return _short_from_mangled(text) or text
    for anonymous in _ANONYMOUS_NAMESPACES:
        text = text.replace(anonymous, "")
    return _short_from_demangled(text) or text


def _top_level(text: str):
    """Yield (index, character) for the characters outside any bracket; unbalanced text just ends."""
    depth = 0
    for index, character in enumerate(text):
        if character in _OPENERS:
            if depth == 0:
                yield index, character
            depth += 1
        elif character in _CLOSERS:
            depth = max(depth - 1, 0)
        elif depth == 0:
            yield index, character


def _split_top_level(text: str, separator: str) -> list[str]:
    pieces, start = [], 0
    for index, _ in _top_level(text):
        if text.startswith(separator, index) and index >= start:
            pieces.append(text[start:index])
            start = index + len(separator)
    pieces.append(text[start:])
    return pieces


def _template_split(component: str) -> tuple[str, str]:
    """`name<args>` -> (name, args); args run to the matching '>' or, in a truncated name, to the end."""
    opening = component.find("<")
    if opening < 0:
        return component, ""
    depth = 0
    for index in range(opening, len(component)):
        if component[index] in _OPENERS:
            depth += 1
        elif component[index] in _CLOSERS:
            depth -= 1
            if depth == 0:
                return component[:opening], component[opening + 1 : index]
    return component[:opening], component[opening + 1 :]


def _short_from_demangled(text: str) -> str:
    parameters = next((index for index, character in _top_level(text) if character == "("), len(text))
    tokens = [token for token in _split_top_level(text[:parameters], " ") if token]
    return _short_of_qualified(tokens[-1]) if tokens else ""


def _short_of_qualified(qualified: str) -> str:
    components = [_template_split(component) for component in _split_top_level(qualified, "::")]
    bare_names = [bare.strip() for bare, _ in components]
    wrapped = components[-1][1]
    if wrapped and _LAUNCH_WRAPPER.fullmatch(bare_names[-1]):
        first = _split_top_level(wrapped, ",")[0].strip()
        if _NAME_ARGUMENT.match(first) and first.split("<")[0] not in _BUILTIN_TYPES:
            return _short_of_qualified(first)
    return _join_kept(bare_names)


def _join_kept(components: list[str]) -> str:
    kept = [c for c in components[:-1] if c and c not in _DROPPED_NAMESPACES and not c.startswith("_GLOBAL__N")]
    return "::".join(kept + components[-1:])


def _short_from_mangled(text: str) -> str:
    """Enough of the Itanium ABI for kernels: a source name or N...E nested name, and a wrapper's first argument."""
    position = 3 if text.startswith("_ZL") else 2
    prefixes: list[list[str]] = []
    components, position = _read_mangled_name(text, position, prefixes)
    if not components:
        return ""
    if text.startswith("I", position) and _LAUNCH_WRAPPER.fullmatch(components[-1]):
        argument, _ = _read_mangled_name(text, position + 1, prefixes)
        if argument:
            components = argument
    return _join_kept(components)


def _read_mangled_name(text: str, position: int, prefixes: list[list[str]]) -> tuple[list[str], int]:
    nested = text.startswith("N", position)
    position += nested
    components: list[str] = []
    while position < len(text):
        substitution = _MANGLED_SUBSTITUTION.match(text, position)
        length = _MANGLED_LENGTH.match(text, position)
        if text.startswith("St", position):
            components.append("std")
            position += 2
            continue
        if substitution:
            index = int(substitution.group(1), 36) + 1 if substitution.group(1) else 0
            if index >= len(prefixes):
                break
            components.extend(prefixes[index])
            position = substitution.end()
        elif length:
            end = length.end() + int(length.group())
            components.append(text[length.end() : end])
            position = end
        else:
            break
        prefixes.append(list(components))
        if not nested:
            break
    return components, position


# ---------------------------------------------------------------------------------------------
# kinds of kernel

_COMMUNICATION = re.compile(r"(?i)nccl")
_LIBRARY_GEMM = re.compile(r"(?i)cublas")  # cuBLAS/cuBLASLt helpers (split-K reduce, epilogue) belong to the GEMM
# Elementwise kernels whose functor only copies or converts (.to(), .contiguous()).
_COPY_FUNCTOR = re.compile(r"(?i)copy_kernel|copy_device_to_device|CopyOp")
# Inductor's prefix names the kind even when the fused op names say mm (a small mm lowered to a reduction).
_TRITON_KIND = {"poi": "elementwise", "red": "reduction", "per": "reduction"}
_TRITON_PREFIX = re.compile(r"triton_(poi|red|per)_")
_CATEGORY_BY_SHORT_NAME = (
    ("attention", re.compile(r"(?i)flash|fmha|attention|attn|sdpa")),
    ("softmax", re.compile(r"(?i)softmax")),
    (
        "norm",
        re.compile(
            r"(?i)layer_?norm|rms_?norm|group_?norm|batch_?norm|instance_?norm|bn_fw|bn_bw"
            r"|RowwiseMoments|GammaBeta|ComputeInternalGradients|ComputeGradientFusedParams"
        ),
    ),
    ("pooling", re.compile(r"(?i)pool")),
    (
        "copy",
        re.compile(
            r"(?i)copy|transpose|nchwToNhwc|nhwcToNchw|CatArray|indexSelect|index_select"
            r"|index_elementwise|gather"
        ),
    ),
    ("conv", re.compile(r"(?i)conv(?!ert)|fprop|dgrad|wgrad|winograd|fft2d|im2col|flip_filter|cudnn")),
    (
        "gemm",
        re.compile(
            r"(?i)gemm|gemv|nvjet|matmul|splitKreduce|dot_kernel|tensorop|wmma"
            r"|(?:^|_)(?:b|add)?mm(?:_|$)"
        ),
    ),
    ("reduction", re.compile(r"(?i)reduc|argmax|argmin|persistent")),
    ("elementwise", re.compile(r"(?i)elementwise|pointwise|multi_tensor_apply|dropout|distribution|fill")),
)
_NON_MATRIX_CATEGORIES = frozenset({"elementwise", "reduction", "norm", "softmax", "pooling", "copy", "communication"})


@lru_cache(maxsize=65536)
def kernel_category(name: str) -> str:
    """gemm, conv, attention, elementwise, reduction, norm, softmax, pooling, copy, communication or other."""
    short = short_name(name)
    if _COMMUNICATION.search(short):
        return "communication"
    if _LIBRARY_GEMM.search(name):
        return "gemm"
    triton = _TRITON_PREFIX.match(short)
    if triton:
        return _TRITON_KIND[triton.group(1)]
    for category, pattern in _CATEGORY_BY_SHORT_NAME:
        if pattern.search(short):
            if category == "elementwise" and _COPY_FUNCTOR.search(name):
                return "copy"
            return category
    return "other"


# ---------------------------------------------------------------------------------------------
# tensor cores

_TENSOR_CORE_MARKER = re.compile(
    r"(?i:tensorop|wmma|wgmma|tcgen05|hmma|(?<![a-z])imma|dmma|gmma)"  # op classes and MMA instructions
    r"|Umma|UMMA"  # CUTLASS 3 Blackwell: MainloopSm100...Umma..., cute::UMMA
    r"|(?<!\d)(?:884|1684|1688|16816|16832|16864|8816|8832|88128|161616)"  # cuBLAS/cuDNN/CUTLASS 2 shapes
    r"(?:tf32|bf16|f16)?(?:gemm|cudnn|fprop|dgrad|wgrad)"
    r"|(?i:tensor\d+x\d+x\d+)|warpgroupsize"  # xmma: instruction shape, Hopper warpgroup MMA
    r"|(?<![A-Za-z])SM\d{2,3}_(?:SP_)?\d+x\d+x\d+_[A-Z]|(?<![A-Za-z])SM\d{3}_\w*?MMA"  # CuTe MMA atoms
    r"|(?<![a-z0-9])m(?:8|16|32|64)n\d+k\d+(?!\d)"  # PTX mma shapes in hand-written kernels
)
_CUDA_CORE_MARKER = re.compile(
    r"(?i:simt)|UniversalFMA|(?<![a-z])[dfh]fma2?(?![a-z])"  # SIMT op class, FMA instructions
    r"|(?<![a-z0-9])sm[1-6]\d_|(?i:(?<![a-z])(?:fermi|kepler|maxwell|pascal))"  # built for pre-Volta GPUs
    r"|(?:^|[_:\s])(?:s|d|c|z|h|gc)gemm(?=[_<(\sI]|$)|(?:^|_)[sdh]cudnn_"  # volta_sgemm, *_scudnn_*
    r"|gemv|gemmSN|dot_kernel|splitKreduce|reduce_1Block_kernel|compute_gemm_pointers|epilogue::impl::globalKernel"
    r"|winograd|fft2d|im2col|flip_filter|OffsetsKernel|scalePackedTensor|reduce_wgrad|(?:dgrad|wgrad)(?:_alg\d)?_engine"
    r"|ReduceSplitK|conv2d_c1_k1|depthwise"
    r"|flash_bwd_(?:dot_do_o|convert_dq|convert_dkv|clear_dkvaccum)_kernel|flash_fwd_splitkv_combine_kernel"
    r"|FlashAttn\w*(?:Preprocess|Postprocess|Combine)"  # FlashAttention's kernels around the MMA loop
)
_TENSOR_CORE_FAMILY = re.compile(
    r"(?<![a-z0-9])nvjet_"  # cuBLASLt's Hopper/Blackwell GEMMs (wgmma/tcgen05)
    r"|flash_fwd_(?:splitkv_)?kernel|flash_bwd_dq_dk_dv_loop|FlashAttn(?:Fwd|Bwd)Sm\d+"
    r"|xmma_\w*?_(?:bf16|f16|tf32|i8|e4m3|e5m2)[a-z0-9]*_"  # xmma with tensor-core operand types
)
# PyTorch memory-efficient attention: gemm_kernel_utils.h DefaultGemmType picks TensorOp from this SM on.
_MEMORY_EFFICIENT_ATTENTION = re.compile(r"fmha_cutlass[FB]_(bf16|f16|f32)_\w*?_sm(\d+)")
_TENSOR_CORE_MIN_SM = {"f16": 70, "bf16": 75, "f32": 80}
_PYTORCH_OWN_KERNEL = re.compile(r"at::native::|^_ZN2at6native|(?<![A-Za-z])cunn_|\bTHC")


@lru_cache(maxsize=65536)
def uses_tensor_cores(name: str) -> bool | None:
    """True if the name proves tensor-core math, False if it proves there is none, None if it cannot tell."""
    if _TENSOR_CORE_MARKER.search(name):
        return True
    if _CUDA_CORE_MARKER.search(name):
        return False
    attention = _MEMORY_EFFICIENT_ATTENTION.search(name)
    if attention:
        return int(attention.group(2)) >= _TENSOR_CORE_MIN_SM[attention.group(1)]
    if _TENSOR_CORE_FAMILY.search(name):
        return True
    if _PYTORCH_OWN_KERNEL.search(name) or kernel_category(name) in _NON_MATRIX_CATEGORIES:
        return False
    return None
