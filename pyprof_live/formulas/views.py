"""Ops that do no work by rule: 0 flops, 0 bytes, because they touch no tensor data.

This is a listed set, not a fallback: an op is here only when it never reads or writes elements.
* views and aliases: they return a tensor sharing storage (view, transpose, expand, slice...);
* allocation without initialisation (empty, empty_like, resize_);
* maybe-copy wrappers (``to``, ``contiguous``, ``reshape``, ``flatten``, ``type_as``...): when they
  do copy, the copy is a separate op underneath them (``_to_copy``, ``clone``, ``copy_``) with
  its own formula, so counting it here as well would count it twice;
* metadata queries and profiler bookkeeping ops.
"""

from __future__ import annotations

from .registry import builtin
from .work import NO_WORK

VIEW_OPS = (
    "view view_as _unsafe_view _reshape_alias reshape reshape_as flatten unflatten transpose transpose_ t t_ "
    "expand expand_as permute movedim moveaxis swapaxes swapdims adjoint mT mH numpy_T "
    "as_strided as_strided_ slice select narrow squeeze squeeze_ unsqueeze unsqueeze_ "
    "detach detach_ alias lift_fresh split split_with_sizes unsafe_split unsafe_split_with_sizes chunk "
    "unsafe_chunk tensor_split unbind hsplit vsplit dsplit diagonal unfold view_as_real view_as_complex real imag "
    "conj _conj _neg_view resolve_conj resolve_neg positive indices values crow_indices col_indices "
    "ccol_indices row_indices _indices _values _coalesced_ _nested_view_from_buffer _nested_view_from_jagged "
    "atleast_1d atleast_2d atleast_3d broadcast_to broadcast_tensors unflatten_dense_tensors"
)
ALLOCATION_OPS = (
    "empty empty_like empty_strided new_empty new_empty_strided resize_ resize_as_ _resize_output_ "
    "empty_permuted set_ _empty_affine_quantized"
)
MAYBE_COPY_OPS = "to contiguous type_as _cast_Float _cast_Half _cast_Long _cast_Int _cast_Double"
METADATA_OPS = (
    "size stride numel dim is_contiguous is_same_size is_nonzero is_floating_point is_complex result_type "
    "_has_compatible_shallow_copy_type storage_offset sym_size sym_stride sym_numel sym_storage_offset "
    "_shape_as_tensor can_cast promote_types _assert_async _assert_tensor_metadata _functional_assert_async "
    "record_stream _version output_nr requires_grad_ retain_grad _backward set_data data"
)
# Not aten ops, but recorded by name: profiler bookkeeping, and the autograd-level detach Kineto shows.
OTHER_NO_WORK = (
    "profiler::_record_function_enter",
    "profiler::_record_function_enter_new",
    "profiler::_record_function_exit",
    "detach",
    "detach_",
)


def no_work_names() -> list[str]:
    """Every op name that is 0 flops and 0 bytes by rule."""
    aten = f"{VIEW_OPS} {ALLOCATION_OPS} {MAYBE_COPY_OPS} {METADATA_OPS}".split()
    return ["aten::" + name for name in aten] + list(OTHER_NO_WORK)


builtin(*no_work_names())(lambda a: NO_WORK)
