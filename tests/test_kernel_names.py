"""Kernel names: short name, kind and tensor-core use, tested on a table of real kernel names.

The table holds every distinct kernel name recorded in ../shared/data (cloverleaf: a sample) and names
for GPUs the data lacks, taken from cited public sources. Each row's expected short name, category and
tensor-core answer was decided by reading the name, not by running the code. Rows: (name, short name or
UNCHANGED, category, uses_tensor_cores). The names were collected with
  nsys:   select s.value from CUPTI_ACTIVITY_KIND_KERNEL k join StringIds s on s.id = k.demangledName
  nvprof: select s.value from CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL k join StringTable s on s._id_ = k.name
  kineto: the "name" of every traceEvents entry whose "cat" is "kernel" (or "Kernel" in the 2021 dialect)
and test_table_holds_every_recorded_name re-reads the files to keep the table honest.
"""

import gzip
import json
import sqlite3
from collections import Counter

import pytest

from pyprof_live.analysis.kernel_names import kernel_category, short_name, uses_tensor_cores

# Names are strings parsed in pure Python: the same on every torch.
pytestmark = pytest.mark.torch_independent

UNCHANGED = "="  # the short name is the name itself

# Tesla V100-SXM2-16GB: nsys/nvprof_pytorch_pyprof_lm_v100_17ed9e2.sql (nvprof: mangled names,
# CONCURRENT_KERNEL.name -> StringTable); Tesla V100-DGXS-32GB: kineto/kineto_tbplugin_resnet50_v100dgxs_oldformat
# (cat "Kernel").
VOLTA_V100 = [
    (
        "_Z20kernelReduceAllPass1IhjlN6thrust8identityIlEE9ReduceMinIlELi1EEv10TensorInfoIT_T0_ES7_T1_T2_T3_PS9_",
        "kernelReduceAllPass1",
        "reduction",
        False,
    ),
    ("_Z20kernelReduceAllPass2Il9ReduceMinIlEEviT_T0_PS2_S4_", "kernelReduceAllPass2", "reduction", False),
    (
        "_Z21indexSelectLargeIndexIfjLi2ELi2ELin2ELb1EEv10TensorInfoIT_T0_ES3_S0_IlS2_EiiS2_S2_l",
        "indexSelectLargeIndex",
        "copy",
        False,
    ),
    (
        "_Z21kernelPointwiseApply3I10TensorEQOpIfhEhffjLi1ELi1ELi1EEv10OffsetInfoIT0_T3_XT4_EES2_IT1_S4_XT5_EES2_IT2_S4_XT6_EES4_T_",
        "kernelPointwiseApply3",
        "elementwise",
        False,
    ),
    (
        "_Z42cunn_ClassNLLCriterion_updateOutput_kernelIffEvPT_S1_S1_PlS1_iiiil",
        "cunn_ClassNLLCriterion_updateOutput_kernel",
        "other",
        False,
    ),
    (
        "_Z45cunn_ClassNLLCriterion_updateGradInput_kernelIfEvPT_S1_PlS1_S1_iiiil",
        "cunn_ClassNLLCriterion_updateGradInput_kernel",
        "other",
        False,
    ),
    (
        "_ZN2at4cuda78_GLOBAL__N__54_tmpxft_0000849d_00000000_11_Dropout_compute_75_cpp1_ii_275f3a0521kernelPointwiseApply3IZNS_6native78_GLOBAL__N__54_tmpxft_0000849d_00000000_11_Dropout_compute_75_cpp1_ii_275f3a0519masked_scale_kernelIffEEvRNS_6TensorES6_S6_T0_EUlRfRKfhE_ffhjLi1ELi1ELi1ELi1EEEvNS0_6detail10TensorInfoIS8_T3_EENSE_IT1_SF_EENSE_IT2_SF_EESF_T_",
        "kernelPointwiseApply3",
        "elementwise",
        False,
    ),
    (
        "_ZN2at6native13reduce_kernelILi512ENS0_8ReduceOpIfNS0_14func_wrapper_tIfZNS0_15sum_kernel_implIfffEEvRNS_14TensorIteratorEEUlffE_EEjfLi4EEEEEvT0_",
        "reduce_kernel",
        "reduction",
        False,
    ),
    (
        "_ZN2at6native13reduce_kernelILi512ENS0_8ReduceOpIfNS0_7NormOpsIfEEjfLi4EEEEEvT0_",
        "reduce_kernel",
        "reduction",
        False,
    ),
    (
        "_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_15gpu_kernel_implIZNS0_23gpu_kernel_with_scalarsIZZZNS0_15mul_kernel_cudaERNS_14TensorIteratorEENKUlvE_clEvENKUlvE2_clEvEUlffE_EEvS5_RKT_EUlfE0_EEvS5_SB_EUliE1_EEviT1_",
        "elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_15gpu_kernel_implIZZZNS0_15add_kernel_cudaERNS_14TensorIteratorEN3c106ScalarEENKUlvE_clEvENKUlvE2_clEvEUlffE_EEvS4_RKT_EUliE2_EEviT1_",
        "elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_15gpu_kernel_implIZZZNS0_16fill_kernel_cudaERNS_14TensorIteratorEN3c106ScalarEENKUlvE_clEvENKUlvE2_clEvEUlvE_EEvS4_RKT_EUliE2_EEviT1_",
        "elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_15gpu_kernel_implIZZZNS0_21copy_device_to_deviceERNS_14TensorIteratorEbENKUlvE_clEvENKUlvE2_clEvEUlfE_EEvS4_RKT_EUliE2_EEviT1_",
        "elementwise_kernel",
        "copy",
        False,
    ),
    (
        "_ZN2at6native18elementwise_kernelILi512ELi1EZNS0_15gpu_kernel_implIZNS0_21threshold_kernel_implIfEEvRNS_14TensorIteratorET_S6_EUlffE_EEvS5_RKS6_EUliE0_EEviT1_",
        "elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "_ZN2at6native18elementwise_kernelILi512ELi1EZNS0_15gpu_kernel_implIZNS0_23gpu_kernel_with_scalarsIZZZNS0_15mul_kernel_cudaERNS_14TensorIteratorEENKUlvE_clEvENKUlvE2_clEvEUlffE_EEvS5_RKT_EUlfE0_EEvS5_SB_EUliE_EEviT1_",
        "elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "_ZN2at6native18elementwise_kernelILi512ELi1EZNS0_15gpu_kernel_implIZZZNS0_15add_kernel_cudaERNS_14TensorIteratorEN3c106ScalarEENKUlvE_clEvENKUlvE2_clEvEUlffE_EEvS4_RKT_EUliE0_EEviT1_",
        "elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "_ZN2at6native18elementwise_kernelILi512ELi1EZNS0_15gpu_kernel_implIZZZNS0_15div_kernel_cudaERNS_14TensorIteratorEENKUlvE_clEvENKUlvE0_clEvEUlfE_EEvS4_RKT_EUliE_EEviT1_",
        "elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "_ZN2at6native18elementwise_kernelILi512ELi1EZNS0_15gpu_kernel_implIZZZNS0_15mul_kernel_cudaERNS_14TensorIteratorEENKUlvE_clEvENKUlvE2_clEvEUlffE_EEvS4_RKT_EUliE0_EEviT1_",
        "elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "_ZN2at6native18elementwise_kernelILi512ELi1EZNS0_15gpu_kernel_implIZZZNS0_16fill_kernel_cudaERNS_14TensorIteratorEN3c106ScalarEENKUlvE_clEvENKUlvE2_clEvEUlvE_EEvS4_RKT_EUliE0_EEviT1_",
        "elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "_ZN2at6native78_GLOBAL__N__54_tmpxft_0000849d_00000000_11_Dropout_compute_75_cpp1_ii_275f3a0520fused_dropout_kernelIffjLi1EEEvNS_4cuda6detail10TensorInfoIT_T1_EES8_NS5_IhS7_EES7_T0_St4pairImmE",
        "fused_dropout_kernel",
        "elementwise",
        False,
    ),
    (
        "_ZN2at6native78_GLOBAL__N__54_tmpxft_00008e34_00000000_11_SoftMax_compute_75_cpp1_ii_a331004219cunn_SoftMaxForwardILi2EfffNS1_25LogSoftMaxForwardEpilogueEEEvPT2_PT0_i",
        "cunn_SoftMaxForward",
        "softmax",
        False,
    ),
    (
        "_ZN2at6native78_GLOBAL__N__54_tmpxft_00008e34_00000000_11_SoftMax_compute_75_cpp1_ii_a331004220cunn_SoftMaxBackwardILi2EfffNS1_26LogSoftMaxBackwardEpilogueEEEvPT0_PT2_S7_i",
        "cunn_SoftMaxBackward",
        "softmax",
        False,
    ),
    (
        "_ZN2at6native80_GLOBAL__N__56_tmpxft_000084e1_00000000_11_Embedding_compute_75_cpp1_ii_9c8c8d3a33embedding_backward_feature_kernelIffEEvPlPKT_PS4_ili",
        "embedding_backward_feature_kernel",
        "other",
        False,
    ),
    (
        "_ZN2at6native88_GLOBAL__N__64_tmpxft_000004dc_00000000_11_layer_norm_kernel_compute_75_cpp1_ii_de05bf7024RowwiseMomentsCUDAKernelIfEEvlT_PKS3_PS3_S6_",
        "RowwiseMomentsCUDAKernel",
        "norm",
        False,
    ),
    (
        "_ZN2at6native88_GLOBAL__N__64_tmpxft_000004dc_00000000_11_layer_norm_kernel_compute_75_cpp1_ii_de05bf7026LayerNormForwardCUDAKernelIfEEvlPKT_S5_S5_S5_S5_PS3_",
        "LayerNormForwardCUDAKernel",
        "norm",
        False,
    ),
    (
        "_ZN2at6native88_GLOBAL__N__64_tmpxft_000004dc_00000000_11_layer_norm_kernel_compute_75_cpp1_ii_de05bf7027GammaBetaBackwardCUDAKernelIfEEvllPKT_S5_S5_S5_PS3_S6_",
        "GammaBetaBackwardCUDAKernel",
        "norm",
        False,
    ),
    (
        "_ZN2at6native88_GLOBAL__N__64_tmpxft_000004dc_00000000_11_layer_norm_kernel_compute_75_cpp1_ii_de05bf7027LayerNormBackwardCUDAKenrelIfEEvlPKT_S5_S5_S5_PKNS_14AccumulateTypeIS3_Lb1EE4typeESA_PS3_",
        "LayerNormBackwardCUDAKenrel",
        "norm",
        False,
    ),
    (
        "_ZN2at6native88_GLOBAL__N__64_tmpxft_000004dc_00000000_11_layer_norm_kernel_compute_75_cpp1_ii_de05bf7034ComputeInternalGradientsCUDAKernelIfEEvlPKT_S5_S5_PNS_14AccumulateTypeIS3_Lb1EE4typeES9_",
        "ComputeInternalGradientsCUDAKernel",
        "norm",
        False,
    ),
    (
        "_ZN2at6native88_GLOBAL__N__64_tmpxft_000004dc_00000000_11_layer_norm_kernel_compute_75_cpp1_ii_de05bf7036ComputeGradientFusedParamsCUDAKernelIfEEvllPKT_S5_PKNS_14AccumulateTypeIS3_Lb1EE4typeESA_PS8_SB_",
        "ComputeGradientFusedParamsCUDAKernel",
        "norm",
        False,
    ),
    (
        "_ZN78_GLOBAL__N__54_tmpxft_00008e34_00000000_11_SoftMax_compute_75_cpp1_ii_a331004220softmax_warp_forwardIfffLi6ELb0EEEvPT0_PKT_iii",
        "softmax_warp_forward",
        "softmax",
        False,
    ),
    (
        "_ZN78_GLOBAL__N__54_tmpxft_00008e34_00000000_11_SoftMax_compute_75_cpp1_ii_a331004221softmax_warp_backwardIfffLi6ELb0EEEvPT0_PKT_S5_iii",
        "softmax_warp_backward",
        "softmax",
        False,
    ),
    ("volta_sgemm_128x32_sliced1x4_nt", UNCHANGED, "gemm", False),
    ("volta_sgemm_128x64_nn", UNCHANGED, "gemm", False),
    ("volta_sgemm_128x64_nt", UNCHANGED, "gemm", False),
    ("volta_sgemm_128x64_tn", UNCHANGED, "gemm", False),
    ("volta_sgemm_32x128_nn", UNCHANGED, "gemm", False),
    ("volta_sgemm_32x128_tn", UNCHANGED, "gemm", False),
    ("volta_sgemm_32x32_sliced1x4_nn", UNCHANGED, "gemm", False),
    ("volta_sgemm_32x32_sliced1x4_nt", UNCHANGED, "gemm", False),
    ("volta_sgemm_64x32_sliced1x4_nn", UNCHANGED, "gemm", False),
    ("volta_sgemm_64x32_sliced1x4_nt", UNCHANGED, "gemm", False),
    ("volta_sgemm_64x32_sliced1x4_tn", UNCHANGED, "gemm", False),
    (
        "cask_cudnn::computeBOffsetsKernel(cask_cudnn::ComputeBOffsetsParams)",
        "cask_cudnn::computeBOffsetsKernel",
        "conv",
        False,
    ),
    (
        "cask_cudnn::computeOffsetsKernel(cask_cudnn::ComputeOffsetsParams)",
        "cask_cudnn::computeOffsetsKernel",
        "conv",
        False,
    ),
    (
        "cask_cudnn::computeWgradBOffsetsKernel(cask_cudnn::ComputeWgradBOffsetsParams)",
        "cask_cudnn::computeWgradBOffsetsKernel",
        "conv",
        False,
    ),
    (
        "cask_cudnn::computeWgradSplitKOffsetsKernel(cask_cudnn::ComputeSplitKOffsetsParams)",
        "cask_cudnn::computeWgradSplitKOffsetsKernel",
        "conv",
        False,
    ),
    (
        "void (anonymous namespace)::softmax_warp_backward<float, float, float, 10, true>(float*, float const*, float const*, int, int, int)",
        "softmax_warp_backward",
        "softmax",
        False,
    ),
    (
        "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true>(float*, float const*, int, int, int)",
        "softmax_warp_forward",
        "softmax",
        False,
    ),
    (
        "void at::native::(anonymous namespace)::max_pool_backward_nchw<float, float>(int, float const*, long const*, int, int, int, int, int, int, int, int, int, int, int, int, int, int, float*)",
        "max_pool_backward_nchw",
        "pooling",
        False,
    ),
    (
        "void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*, int, int, int, int, int, int, int, int, int, int, int, int, int, int, float*, long*)",
        "max_pool_forward_nchw",
        "pooling",
        False,
    ),
    (
        "void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)",
        "reduce_kernel",
        "reduction",
        False,
    ),
    (
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float>, unsigned int, float, 4>)",
        "reduce_kernel",
        "reduction",
        False,
    ),
    (
        "void at::native::unrolled_elementwise_kernel<at::native::MulScalarFunctor<float, float>, at::detail::Array<char*, 2>, OffsetCalculator<1, unsigned int>, OffsetCalculator<1, unsigned int>, at::native::memory::LoadWithoutCast, at::native::memory::StoreWithoutCast>(int, at::native::MulScalarFunctor<float, float>, at::detail::Array<char*, 2>, OffsetCalculator<1, unsigned int>, OffsetCalculator<1, unsigned int>, at::native::memory::LoadWithoutCast, at::native::memory::StoreWithoutCast)",
        "unrolled_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::unrolled_elementwise_kernel<at::native::copy_device_to_device(at::TensorIterator&, bool)::{lambda()#2}::operator()() const::{lambda()#8}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>, OffsetCalculator<1, unsigned int>, char*, at::native::memory::LoadWithoutCast, at::detail::Array<char*, 2>::StoreWithoutCast>(int, at::native::copy_device_to_device(at::TensorIterator&, bool)::{lambda()#2}::operator()() const::{lambda()#8}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>, OffsetCalculator<1, unsigned int>, char*, at::native::memory::LoadWithoutCast, at::detail::Array<char*, 2>::StoreWithoutCast)",
        "unrolled_elementwise_kernel",
        "copy",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::clamp_min_scalar_kernel_impl(at::TensorIterator&, c10::Scalar)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::clamp_min_scalar_kernel_impl(at::TensorIterator&, c10::Scalar)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, at::detail::Array<char*, 3> >(int, at::native::AddFunctor<float>, at::detail::Array<char*, 3>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::BUnaryFunctor<at::native::AddFunctor<long> >, at::detail::Array<char*, 2> >(int, at::native::BUnaryFunctor<at::native::AddFunctor<long> >, at::detail::Array<char*, 2>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::MulScalarFunctor<float, float>, at::detail::Array<char*, 2> >(int, at::native::MulScalarFunctor<float, float>, at::detail::Array<char*, 2>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{lambda(float, float)#1}, at::detail::Array<char*, 3> >(int, at::native::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{lambda(float, float)#1}, at::detail::Array<char*, 3>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>(float, float, float, float, cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float*, float*, float const*, float const*, float)",
        "cudnn::bn_bw_1C11_kernel_new",
        "norm",
        False,
    ),
    (
        "void cudnn::bn_bw_1C11_singleread<float, 512, true, 1, 2, 0>(float, float, float, float, cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float*, float*, float const*, float const*, float, cudnn::reduced_divisor, int, cudnn::reduced_divisor, cudnn::bnBwPersistentState*, int, float, float, float, int, float, cudnnStatus_t*, bool)",
        "cudnn::bn_bw_1C11_singleread",
        "norm",
        False,
    ),
    (
        "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true, 1>(cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, float, float)",
        "cudnn::bn_fw_tr_1C11_kernel_NCHW",
        "norm",
        False,
    ),
    (
        "void cudnn::bn_fw_tr_1C11_singleread<float, 512, true, 1, 2, 0>(cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, float, float, cudnn::reduced_divisor, int, cudnn::reduced_divisor, cudnn::bnFwPersistentState*, int, float, float, float, int, float, float, cudnnStatus_t*, bool)",
        "cudnn::bn_fw_tr_1C11_singleread",
        "norm",
        False,
    ),
    (
        "void cudnn::cnn::im2col4d_kernel<float, long>(cudnn::cnn::im2col4d_params, cudnnConvolutionStruct, cudnnTensor4dStruct, float const*, float*)",
        "cudnn::cnn::im2col4d_kernel",
        "conv",
        False,
    ),
    (
        "void cudnn::cnn::wgrad_alg0_engine<float, 128, 5, 5, 3, 3, 3, false, 512>(int, int, int, float const*, int, float*, float const*, kernel_grad_params, unsigned long long, int, float, int, int, int, int)",
        "cudnn::cnn::wgrad_alg0_engine",
        "conv",
        False,
    ),
    (
        "void cudnn::cnn::wgrad_alg0_engine<float, 128, 6, 7, 3, 3, 5, false, 512>(int, int, int, float const*, int, float*, float const*, kernel_grad_params, unsigned long long, int, float, int, int, int, int)",
        "cudnn::cnn::wgrad_alg0_engine",
        "conv",
        False,
    ),
    (
        "void cudnn::cnn::wgrad_alg0_engine<float, 128, 6, 8, 3, 3, 5, false, 512>(int, int, int, float const*, int, float*, float const*, kernel_grad_params, unsigned long long, int, float, int, int, int, int)",
        "cudnn::cnn::wgrad_alg0_engine",
        "conv",
        False,
    ),
    (
        "void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, int, float const*, int, float const*, int, float*, kernel_grad_params, unsigned long long, int, unsigned long long, int, float, int, int, int)",
        "cudnn::detail::dgrad_engine",
        "conv",
        False,
    ),
    (
        "void cudnn::ops::scalePackedTensor_kernel<float, float>(cudnnTensor4dStruct, float*, float)",
        "cudnn::ops::scalePackedTensor_kernel",
        "conv",
        False,
    ),
    (
        "void cudnn::winograd::generateWinogradTilesKernel<0, float, float>(cudnn::winograd::GenerateWinogradTilesParams<float, float>)",
        "cudnn::winograd::generateWinogradTilesKernel",
        "conv",
        False,
    ),
    (
        "void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(cudnn::winograd_nonfused::WinogradDataParams<float, float>)",
        "cudnn::winograd_nonfused::winogradForwardData4x4",
        "conv",
        False,
    ),
    (
        "void cudnn::winograd_nonfused::winogradForwardFilter4x4<float, float>(cudnn::winograd_nonfused::WinogradFilterParams<float, float>)",
        "cudnn::winograd_nonfused::winogradForwardFilter4x4",
        "conv",
        False,
    ),
    (
        "void cudnn::winograd_nonfused::winogradForwardOutput4x4<float, float>(cudnn::winograd_nonfused::WinogradOutputParams<float, float>)",
        "cudnn::winograd_nonfused::winogradForwardOutput4x4",
        "conv",
        False,
    ),
    (
        "void cudnn::winograd_nonfused::winogradWgradData4x4<float, float>(cudnn::winograd_nonfused::WinogradDataParams<float, float>)",
        "cudnn::winograd_nonfused::winogradWgradData4x4",
        "conv",
        False,
    ),
    (
        "void cudnn::winograd_nonfused::winogradWgradDelta4x4<float, float>(cudnn::winograd_nonfused::WinogradDeltaParams<float, float>)",
        "cudnn::winograd_nonfused::winogradWgradDelta4x4",
        "conv",
        False,
    ),
    (
        "void cudnn::winograd_nonfused::winogradWgradOutput4x4<float, float>(cudnn::winograd_nonfused::WinogradWgradOutputParams<float, float>)",
        "cudnn::winograd_nonfused::winogradWgradOutput4x4",
        "conv",
        False,
    ),
    (
        "void cunn_ClassNLLCriterion_updateGradInput_kernel<float>(float*, float*, long*, float*, float*, int, int, int, int, long)",
        "cunn_ClassNLLCriterion_updateGradInput_kernel",
        "other",
        False,
    ),
    (
        "void cunn_ClassNLLCriterion_updateOutput_kernel<float, float>(float*, float*, float*, long*, float*, int, int, int, int, long)",
        "cunn_ClassNLLCriterion_updateOutput_kernel",
        "other",
        False,
    ),
    (
        "void explicit_convolve_sgemm<float, int, 1024, 5, 5, 3, 3, 3, 0, false>(int, int, int, float const*, int, float const*, int, float*, kernel_conv_params, unsigned long long, int, unsigned long long, int, float, float, int, float const*, float const*)",
        "explicit_convolve_sgemm",
        "conv",
        False,
    ),
    (
        "void implicit_convolve_sgemm<float, float, 1024, 6, 7, 3, 3, 5, 1, false, true, true>(int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float const*, float const*, bool, int, int)",
        "implicit_convolve_sgemm",
        "conv",
        False,
    ),
    (
        "void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, true, true>(int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float const*, float const*, bool, int, int)",
        "implicit_convolve_sgemm",
        "conv",
        False,
    ),
    (
        "void implicit_convolve_sgemm<float, float, 128, 6, 7, 3, 3, 5, 1, false, true, true>(int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float const*, float const*, bool, int, int)",
        "implicit_convolve_sgemm",
        "conv",
        False,
    ),
    (
        "void implicit_convolve_sgemm<float, float, 512, 6, 8, 3, 3, 5, 1, false, true, true>(int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float const*, float const*, bool, int, int)",
        "implicit_convolve_sgemm",
        "conv",
        False,
    ),
    (
        "void nchwToNhwcKernel<float, float, float, true, false, (cudnnKernelDataType_t)0>(int, int, int, int, float const*, float*, float, float)",
        "nchwToNhwcKernel",
        "copy",
        False,
    ),
    (
        "void nhwcToNchwKernel<float, float, float, true, false, (cudnnKernelDataType_t)0>(int, int, int, int, float const*, float*, float, float)",
        "nhwcToNchwKernel",
        "copy",
        False,
    ),
    (
        "void splitKreduce_kernel<float, float, float, float>(cublasSplitKParams<float>, float const*, float const*, float*, float const*, float const*, float const*)",
        "splitKreduce_kernel",
        "gemm",
        False,
    ),
    ("volta_scudnn_128x128_relu_interior_nn_v1", UNCHANGED, "conv", False),
    ("volta_scudnn_128x128_stridedB_interior_nn_v1", UNCHANGED, "conv", False),
    ("volta_scudnn_128x128_stridedB_medium_nn_v1", UNCHANGED, "conv", False),
    ("volta_scudnn_128x128_stridedB_small_nn_v1", UNCHANGED, "conv", False),
    ("volta_scudnn_128x128_stridedB_splitK_medium_nn_v1", UNCHANGED, "conv", False),
    ("volta_scudnn_128x128_stridedB_splitK_small_nn_v1", UNCHANGED, "conv", False),
    ("volta_scudnn_128x32_sliced1x4_ldg4_relu_exp_medium_nhwc_tn_v1", UNCHANGED, "conv", False),
    ("volta_scudnn_128x64_relu_interior_nn_v1", UNCHANGED, "conv", False),
    ("volta_scudnn_128x64_relu_medium_nn_v1", UNCHANGED, "conv", False),
    ("volta_scudnn_128x64_relu_small_nn_v1", UNCHANGED, "conv", False),
    ("volta_scudnn_128x64_relu_xregs_large_nn_v1", UNCHANGED, "conv", False),
    ("volta_scudnn_128x64_stridedB_interior_nn_v1", UNCHANGED, "conv", False),
    ("volta_scudnn_128x64_stridedB_small_nn_v1", UNCHANGED, "conv", False),
    ("volta_scudnn_128x64_stridedB_splitK_xregs_large_nn_v1", UNCHANGED, "conv", False),
    ("volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1", UNCHANGED, "conv", False),
    ("volta_sgemm_128x32_nt", UNCHANGED, "gemm", False),
    ("volta_sgemm_32x128_nt", UNCHANGED, "gemm", False),
    ("volta_sgemm_64x64_nn", UNCHANGED, "gemm", False),
    ("volta_sgemm_64x64_nt", UNCHANGED, "gemm", False),
]
# GeForce GTX 1060 Max-Q (no tensor cores): nsys/nsys_windows_nonutf8meta_gtx1060.sqlite.
PASCAL_GTX1060 = [
    ("test0(double *, unsigned long long, unsigned long long)", "test0", "other", None),
    ("test1(double *, unsigned long long, unsigned long long)", "test1", "other", None),
    ("test2(double *, unsigned long long, unsigned long long)", "test2", "other", None),
    ("test3(double *, unsigned long long, unsigned long long)", "test3", "other", None),
    ("test4(double *, unsigned long long, unsigned long long)", "test4", "other", None),
]
# GeForce RTX 2070 SUPER: nsys/nsys2022.1_pytorch_emitnvtx_dlprof_rtx2070s.sqlite (nsys prints template
# arguments as (int)5, (bool)1).
TURING_RTX2070S = [
    (
        "compute_gemm_pointers(float2 **, const float2 *, int, const float2 *, int, const float2 *, int, int)",
        "compute_gemm_pointers",
        "gemm",
        False,
    ),
    (
        "cudnn::gemm::computeOffsetsKernel(cudnn::gemm::ComputeOffsetsParams)",
        "cudnn::gemm::computeOffsetsKernel",
        "conv",
        False,
    ),
    (
        "void at::native::unrolled_elementwise_kernel<at::native::BinaryFunctor<float, float, float, at::native::AddFunctor<float>>, at::detail::Array<char *, (int)3>, OffsetCalculator<(int)2, unsigned int, (bool)0>, OffsetCalculator<(int)1, unsigned int, (bool)0>, at::native::memory::LoadWithoutCast, at::native::memory::StoreWithoutCast>(int, T1, T2, T3, T4, T5, T6)",
        "unrolled_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void cudnn::detail::explicit_convolve_sgemm<float, int, (int)1024, (int)5, (int)5, (int)3, (int)3, (int)3, (int)0, (bool)1>(int, int, int, const T1 *, int, const T1 *, int, T1 *, kernel_conv_params, int, int, float, float, int, T1 *, T1 *)",
        "cudnn::detail::explicit_convolve_sgemm",
        "conv",
        False,
    ),
    (
        "void cudnn::detail::implicit_convolve_sgemm<float, float, (int)1024, (int)5, (int)5, (int)3, (int)3, (int)3, (int)1, (bool)1, (bool)0, (bool)1>(int, int, int, const T1 *, int, T2 *, T1 *, kernel_conv_params, int, float, float, int, T2 *, T2 *, int, int)",
        "cudnn::detail::implicit_convolve_sgemm",
        "conv",
        False,
    ),
    (
        "void cudnn::winograd::generateWinogradTilesKernel<(int)0, float, float>(cudnn::winograd::GenerateWinogradTilesParams<T2, T3>)",
        "cudnn::winograd::generateWinogradTilesKernel",
        "conv",
        False,
    ),
    (
        "void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(cudnn::winograd_nonfused::WinogradDataParams<T1, T2>)",
        "cudnn::winograd_nonfused::winogradForwardData4x4",
        "conv",
        False,
    ),
    (
        "void cudnn::winograd_nonfused::winogradForwardData9x9_5x5<float, float>(cudnn::winograd_nonfused::WinogradDataParams<T1, T2>)",
        "cudnn::winograd_nonfused::winogradForwardData9x9_5x5",
        "conv",
        False,
    ),
    (
        "void cudnn::winograd_nonfused::winogradForwardFilter4x4<float, float>(cudnn::winograd_nonfused::WinogradFilterParams<T1, T2>)",
        "cudnn::winograd_nonfused::winogradForwardFilter4x4",
        "conv",
        False,
    ),
    (
        "void cudnn::winograd_nonfused::winogradForwardFilter9x9_5x5<float, float>(cudnn::winograd_nonfused::WinogradFilterParams<T1, T2>)",
        "cudnn::winograd_nonfused::winogradForwardFilter9x9_5x5",
        "conv",
        False,
    ),
    (
        "void cudnn::winograd_nonfused::winogradForwardOutput4x4<float, float>(cudnn::winograd_nonfused::WinogradOutputParams<T1, T2>)",
        "cudnn::winograd_nonfused::winogradForwardOutput4x4",
        "conv",
        False,
    ),
    (
        "void cudnn::winograd_nonfused::winogradForwardOutput9x9_5x5<float, float>(cudnn::winograd_nonfused::WinogradOutputParams<T1, T2>)",
        "cudnn::winograd_nonfused::winogradForwardOutput9x9_5x5",
        "conv",
        False,
    ),
    (
        "void fft2d_c2r_32x32<float, (bool)0, (bool)0, (unsigned int)0, (bool)0, (bool)0>(T1 *, const float2 *, int, int, int, int, int, int, int, int, int, float, float, cudnn::reduced_divisor, bool, T1 *, T1 *, int2, int, int)",
        "fft2d_c2r_32x32",
        "conv",
        False,
    ),
    (
        "void fft2d_r2c_32x32<float, (bool)0, (unsigned int)0, (bool)0>(float2 *, const T1 *, int, int, int, int, int, int, int, int, int, cudnn::reduced_divisor, bool, int2, int, int)",
        "fft2d_r2c_32x32",
        "conv",
        False,
    ),
    (
        "void fft2d_r2c_32x32<float, (bool)0, (unsigned int)1, (bool)0>(float2 *, const T1 *, int, int, int, int, int, int, int, int, int, cudnn::reduced_divisor, bool, int2, int, int)",
        "fft2d_r2c_32x32",
        "conv",
        False,
    ),
    (
        "void fft2d_r2c_32x32<float, (bool)0, (unsigned int)1, (bool)1>(float2 *, const T1 *, int, int, int, int, int, int, int, int, int, cudnn::reduced_divisor, bool, int2, int, int)",
        "fft2d_r2c_32x32",
        "conv",
        False,
    ),
    (
        "void fft2d_r2c_32x32<float, (bool)0, (unsigned int)5, (bool)0>(float2 *, const T1 *, int, int, int, int, int, int, int, int, int, cudnn::reduced_divisor, bool, int2, int, int)",
        "fft2d_r2c_32x32",
        "conv",
        False,
    ),
    (
        "void fft2d_r2c_32x32<float, (bool)0, (unsigned int)5, (bool)1>(float2 *, const T1 *, int, int, int, int, int, int, int, int, int, cudnn::reduced_divisor, bool, int2, int, int)",
        "fft2d_r2c_32x32",
        "conv",
        False,
    ),
    ("void flip_filter<float, float>(T2 *, const T1 *, int, int, int, int)", "flip_filter", "conv", False),
    (
        "void gemmSN_NN_kernel<float, (int)128, (int)2, (int)4, (int)8, (int)3, (int)4, cublasGemvTensorStridedBatched<const float>, cublasGemvTensorStridedBatched<float>>(cublasGemmSmallNParams<T8, T9, T1>)",
        "gemmSN_NN_kernel",
        "gemm",
        False,
    ),
    (
        "void gemmSN_NN_kernel<float, (int)128, (int)2, (int)4, (int)8, (int)4, (int)4, cublasGemvTensorStridedBatched<const float>, cublasGemvTensorStridedBatched<float>>(cublasGemmSmallNParams<T8, T9, T1>)",
        "gemmSN_NN_kernel",
        "gemm",
        False,
    ),
    (
        "void gemv2N_kernel<int, int, float2, float2, float2, (int)128, (int)8, (int)4, (int)4, (int)1, cublasGemvParams<cublasGemvTensorStridedBatched<const float2>, cublasGemvTensorStridedBatched<float2>, float2>>(T11)",
        "gemv2N_kernel",
        "gemm",
        False,
    ),
    (
        "void gemv2T_kernel_val<int, int, float2, float2, float2, (int)128, (int)16, (int)2, (int)2, (bool)0, cublasGemvParams<cublasGemvTensorBatched<const float2>, cublasGemvTensorBatched<float2>, float2>>(T11, T5, T5)",
        "gemv2T_kernel_val",
        "gemm",
        False,
    ),
    (
        "void im2col4d_kernel<float, int>(im2col4d_params, cudnnConvolutionStruct, cudnnTensor4dStruct, const T1 *, T1 *, int)",
        "im2col4d_kernel",
        "conv",
        False,
    ),
    ("volta_scudnn_128x32_relu_interior_nn_v1", UNCHANGED, "conv", False),
]
# A100: kineto/hta_alexnet_a100_benchmark_trace, hta_nccl_data_a100_ws2_rank0, hta_triton_compile_a100,
# hta_call_stack_backward_thread (no deviceProperties; same HTA A100 corpus, cutlass_80 kernel),
# nsys/nsys_legacy_nometa_exgpu_a100x4, nsys2024.5_cloverleaf_cuda_a100x4 (9 of its 102 distinct names:
# the rest are more lambda instances of the same three clover:: templates).
AMPERE_A100 = [
    ("ampere_gcgemm_64x64_nt", UNCHANGED, "gemm", False),
    ("ampere_sgemm_32x32_sliced1x4_tn", UNCHANGED, "gemm", False),
    ("cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1", UNCHANGED, "conv", False),
    (
        "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_alignc4_execute_kernel_cudnn",
        UNCHANGED,
        "conv",
        True,
    ),
    (
        "void at::native::(anonymous namespace)::adaptive_average_pool<float>(float const*, float*, int, int, int, int, long, long, long)",
        "adaptive_average_pool",
        "pooling",
        False,
    ),
    (
        "void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4, at::native::templates::cuda::uniform_and_transform<float, float, 4ul, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1})::{lambda(curandStatePhilox4_32_10*)#2}, at::native::(anonymous namespace)::distribution_nullary_kernel<float, float, 4, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_and_transform<float, float, 4ul, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1})::{lambda(curandStatePhilox4_32_10*)#2}, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_and_transform<float, float, 4ul, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1})::{lambda(curandStatePhilox4_32_10*)#2} const&, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1})::{lambda(int, float)#1}>(int, at::PhiloxCudaState, at::native::templates::cuda::uniform_and_transform<float, float, 4ul, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1})::{lambda(curandStatePhilox4_32_10*)#2}, at::native::(anonymous namespace)::distribution_nullary_kernel<float, float, 4, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_and_transform<float, float, 4ul, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1})::{lambda(curandStatePhilox4_32_10*)#2}, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_and_transform<float, float, 4ul, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1})::{lambda(curandStatePhilox4_32_10*)#2} const&, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1})::{lambda(int, float)#1})",
        "distribution_elementwise_grid_stride_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, float, unsigned int, 1, 4, bool>(at::cuda::detail::TensorInfo<float, unsigned int>, at::cuda::detail::TensorInfo<float, unsigned int>, at::cuda::detail::TensorInfo<bool, unsigned int>, unsigned int, float, at::PhiloxCudaState)",
        "fused_dropout_kernel_vec",
        "elementwise",
        False,
    ),
    (
        "void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*, long, long, long, int, int, int, int, int, int, int, int, int, int, float*, long*)",
        "max_pool_forward_nchw",
        "pooling",
        False,
    ),
    (
        "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::CUDAFunctor_add<float> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl<at::native::CUDAFunctor_add<float> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> const&)::{lambda(int)#1})",
        "elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void cask_cudnn::computeOffsetsKernel<false, false>(cask_cudnn::ComputeOffsetsParams)",
        "cask_cudnn::computeOffsetsKernel",
        "conv",
        False,
    ),
    (
        "void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)2>(cudnn::ops::nchw2nhwc_params_t<float>, float const*, float*)",
        "cudnn::ops::nchwToNhwcKernel",
        "copy",
        False,
    ),
    (
        "void epilogue::impl::globalKernel<float, float, float, true, true>(int, int, long, float*, cublasLtEpilogue_t, int, float*, long, void*, long, long, long, float*, long, int*)",
        "epilogue::impl::globalKernel",
        "gemm",
        False,
    ),
    (
        "void fft2d_c2r_32x32<float, false, false, 0u, false, false>(float*, float2 const*, int, int, int, int, int, int, int, int, int, float, float, cudnn::reduced_divisor, bool, float*, float*, int2, int, int)",
        "fft2d_c2r_32x32",
        "conv",
        False,
    ),
    (
        "void fft2d_r2c_32x32<float, false, 0u, false>(float2*, float const*, int, int, int, int, int, int, int, int, int, cudnn::reduced_divisor, bool, int2, int, int)",
        "fft2d_r2c_32x32",
        "conv",
        False,
    ),
    (
        "void fft2d_r2c_32x32<float, false, 5u, true>(float2*, float const*, int, int, int, int, int, int, int, int, int, cudnn::reduced_divisor, bool, int2, int, int)",
        "fft2d_r2c_32x32",
        "conv",
        False,
    ),
    (
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>",
        "cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4",
        "gemm",
        True,
    ),
    (
        "_ZN19cutlass_cudnn_train6KernelINS_4conv6kernel23ImplicitGemmConvolutionINS1_11threadblock22ImplicitGemmMultistageINS_4gemm9GemmShapeILi128ELi128ELi32EEENS4_52Conv2dWgradOutputGradientTileAccessIteratorOptimizedINS_11MatrixShapeILi128ELi32EEENS_10tfloat32_tENS_9transform29PitchLinearWarpRakedThreadMapINS_16PitchLinearShapeILi128ELi32EEELi128ENSF_ILi8ELi4EEELi4EEENS_12AlignedArrayISC_Li4ELi16EEEEENSD_11threadblock25RegularTileAccessIteratorISB_SC_NS_6layout40ColumnMajorTensorOpMultiplicandCongruousILi32ELi32EEELi1ESI_Li16EEELNS_4arch14CacheOperation4KindE0ENS4_48Conv2dWgradActivationTileAccessIteratorOptimizedINSA_ILi32ELi128EEESC_SI_SK_EENSN_ISW_SC_NSO_37RowMajorTensorOpMultiplicandCongruousILi32ELi32EEELi0ESI_Li16EEELSU_0ENS6_11threadblock9MmaPolicyINS6_4warp11MmaTensorOpINS7_ILi64ELi64ELi32EEESC_SQ_SC_SZ_fNSO_8RowMajorENS13_17MmaTensorOpPolicyINSS_3MmaINS7_ILi16ELi8ELi8EEELi32ESC_S16_SC_NSO_11ColumnMajorEfS16_NSS_13OpMultiplyAddEEENSA_ILi1ELi1EEEEELi1ELb0EbEENSA_ILi0ELi0EEES1G_Li1EEELi4EbEENS_8epilogue11threadblock8EpilogueIS8_S1F_Li1ENS1K_22PredicatedTileIteratorINS1K_26OutputTileOptimalThreadMapINS1K_15OutputTileShapeILi128ELi8ELi2ELi1ELi1EEENS1O_ILi1ELi8ELi1ELi1ELi8EEELi128ELi4ELi32EEEfLb0ENSO_9NoPermuteELb0EEENS1J_4warp24FragmentIteratorTensorOpIS15_S19_fNS_5ArrayIfLi4ELb1EEES16_EENS1U_20TileIteratorTensorOpIS15_S19_fS16_EENS1K_18SharedLoadIteratorINS1R_18CompactedThreadMapEfLi16EEENS1J_6thread17LinearCombinationIfLi4EffLNS24_9ScaleType4KindE0ELNS_15FloatRoundStyleE2EEENSA_ILi0ELi8EEELi2ELi1EEENS11_30GemmIdentityThreadblockSwizzleILi4EEELNS1_8OperatorE2ENS1_17Conv2dProblemSizeELNS1_9GroupModeE0EEEEEvNT_6ParamsE",
        "cutlass_cudnn_train::conv::kernel::ImplicitGemmConvolution",
        "conv",
        True,
    ),
    (
        "_ZN19cutlass_cudnn_train6KernelINS_4conv6kernel23ImplicitGemmConvolutionINS1_11threadblock22ImplicitGemmMultistageINS_4gemm9GemmShapeILi64ELi128ELi32EEENS4_52Conv2dWgradOutputGradientTileAccessIteratorOptimizedINS_11MatrixShapeILi64ELi32EEENS_10tfloat32_tENS_9transform29PitchLinearWarpRakedThreadMapINS_16PitchLinearShapeILi64ELi32EEELi128ENSF_ILi8ELi4EEELi4EEENS_12AlignedArrayISC_Li4ELi16EEEEENSD_11threadblock25RegularTileAccessIteratorISB_SC_NS_6layout40ColumnMajorTensorOpMultiplicandCongruousILi32ELi32EEELi1ESI_Li16EEELNS_4arch14CacheOperation4KindE0ENS4_48Conv2dWgradActivationTileAccessIteratorOptimizedINSA_ILi32ELi128EEESC_NSE_INSF_ILi128ELi32EEELi128ESH_Li4EEESK_EENSN_ISW_SC_NSO_37RowMajorTensorOpMultiplicandCongruousILi32ELi32EEELi0ESY_Li16EEELSU_0ENS6_11threadblock9MmaPolicyINS6_4warp11MmaTensorOpINS7_ILi32ELi64ELi32EEESC_SQ_SC_S11_fNSO_8RowMajorENS15_17MmaTensorOpPolicyINSS_3MmaINS7_ILi16ELi8ELi8EEELi32ESC_S18_SC_NSO_11ColumnMajorEfS18_NSS_13OpMultiplyAddEEENSA_ILi1ELi1EEEEELi1ELb0EbEENSA_ILi0ELi0EEES1I_Li1EEELi3EbEENS_8epilogue11threadblock8EpilogueIS8_S1H_Li1ENS1M_22PredicatedTileIteratorINS1M_26OutputTileOptimalThreadMapINS1M_15OutputTileShapeILi128ELi8ELi2ELi1ELi1EEENS1Q_ILi1ELi4ELi1ELi1ELi4EEELi128ELi4ELi32EEEfLb0ENSO_9NoPermuteELb0EEENS1L_4warp24FragmentIteratorTensorOpIS17_S1B_fNS_5ArrayIfLi4ELb1EEES18_EENS1W_20TileIteratorTensorOpIS17_S1B_fS18_EENS1M_18SharedLoadIteratorINS1T_18CompactedThreadMapEfLi16EEENS1L_6thread17LinearCombinationIfLi4EffLNS26_9ScaleType4KindE0ELNS_15FloatRoundStyleE2EEENSA_ILi0ELi8EEELi2ELi1EEENS13_30GemmIdentityThreadblockSwizzleILi4EEELNS1_8OperatorE2ENS1_17Conv2dProblemSizeELNS1_9GroupModeE0EEEEEvNT_6ParamsE",
        "cutlass_cudnn_train::conv::kernel::ImplicitGemmConvolution",
        "conv",
        True,
    ),
    ("ampere_sgemm_32x128_nt", UNCHANGED, "gemm", False),
    ("cudnn_infer_ampere_scudnn_128x64_relu_xregs_large_nn_v1", UNCHANGED, "conv", False),
    (
        "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
        "ncclKernel_AllReduce_RING_LL_Sum_float",
        "communication",
        False,
    ),
    (
        "ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
        "ncclKernel_Broadcast_RING_LL_Sum_int8_t",
        "communication",
        False,
    ),
    (
        "sm80_xmma_dgrad_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer",
        UNCHANGED,
        "conv",
        True,
    ),
    (
        "sm80_xmma_dgrad_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32_stage5_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer",
        UNCHANGED,
        "conv",
        True,
    ),
    (
        "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_alignc4_execute_kernel_cudnn_infer",
        UNCHANGED,
        "conv",
        True,
    ),
    (
        "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer",
        UNCHANGED,
        "conv",
        True,
    ),
    (
        "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize256x64x32_stage3_warpsize4x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer",
        UNCHANGED,
        "conv",
        True,
    ),
    (
        "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32_stage5_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer",
        UNCHANGED,
        "conv",
        True,
    ),
    (
        "sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_train",
        UNCHANGED,
        "conv",
        True,
    ),
    (
        "sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_split_k_kernel_cudnn_train",
        UNCHANGED,
        "conv",
        True,
    ),
    (
        "sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32_stage5_warpsize2x2x1_g1_tensor16x8x8_t1r1s1_execute_kernel_cudnn_train",
        UNCHANGED,
        "conv",
        True,
    ),
    (
        "sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x64x64_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_train",
        UNCHANGED,
        "conv",
        True,
    ),
    (
        "void (anonymous namespace)::softmax_warp_backward<float, float, float, 10, true, false>(float*, float const*, float const*, int, int, int, bool const*)",
        "softmax_warp_backward",
        "softmax",
        False,
    ),
    (
        "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true, false>(float*, float const*, int, int, int, bool const*, int, bool)",
        "softmax_warp_forward",
        "softmax",
        False,
    ),
    (
        "void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<at::native::(anonymous namespace)::OpaqueType<4u>, unsigned int, 1, 128, 1>(at::native::(anonymous namespace)::OpaqueType<4u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<4u>, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)",
        "CatArrayBatchedCopy_aligned16_contig",
        "copy",
        False,
    ),
    (
        "void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<at::native::(anonymous namespace)::OpaqueType<8u>, unsigned int, 1, 128, 1>(at::native::(anonymous namespace)::OpaqueType<8u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<8u>, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)",
        "CatArrayBatchedCopy_aligned16_contig",
        "copy",
        False,
    ),
    (
        "void at::native::(anonymous namespace)::max_pool_backward_nchw<float, float>(float const*, long const*, int, long, long, long, int, int, int, int, int, int, int, int, int, int, float*)",
        "max_pool_backward_nchw",
        "pooling",
        False,
    ),
    (
        "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies<float>, float)",
        "multi_tensor_apply_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>, float)",
        "multi_tensor_apply_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::BUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::BUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1})",
        "elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1})",
        "elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)",
        "reduce_kernel",
        "reduction",
        False,
    ),
    (
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)",
        "reduce_kernel",
        "reduction",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 2> >(int, at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 2>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::BUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 2> >(int, at::native::BUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 2>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, at::native::(anonymous namespace)::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{lambda(float, float)#1}>, at::detail::Array<char*, 3> >(int, at::native::BinaryFunctor<float, float, float, at::native::(anonymous namespace)::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{lambda(float, float)#1}>, at::detail::Array<char*, 3>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3> >(int, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<long>, at::detail::Array<char*, 2> >(int, at::native::CUDAFunctorOnSelf_add<long>, at::detail::Array<char*, 2>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::neg_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::neg_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void cask_cudnn_infer::computeOffsetsKernel<false, false>(cask_cudnn_infer::ComputeOffsetsParams)",
        "cask_cudnn_infer::computeOffsetsKernel",
        "conv",
        False,
    ),
    (
        "void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, true, false, false>(cublasLt::cublasSplitKParams<float>, float const*, float const*, float*, float const*, float const*, float const*, float const*, float*, void*, long, float*, int*)",
        "cublasLt::splitKreduce_kernel",
        "gemm",
        False,
    ),
    (
        "void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, true, true, false>(cublasLt::cublasSplitKParams<float>, float const*, float const*, float*, float const*, float const*, float const*, float const*, float*, void*, long, float*, int*)",
        "cublasLt::splitKreduce_kernel",
        "gemm",
        False,
    ),
    (
        "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>(float, float, float, float, cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float*, float*, float const*, float const*, float)",
        "cudnn::bn_bw_1C11_kernel_new",
        "norm",
        False,
    ),
    (
        "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 32, true, 1>(float, float, float, float, cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float*, float*, float const*, float const*, float)",
        "cudnn::bn_bw_1C11_kernel_new",
        "norm",
        False,
    ),
    (
        "void cudnn::bn_bw_1C11_singleread<float, 512, true, 1, 2, 0>(cudnn::bn_bw_1C11_args<float>)",
        "cudnn::bn_bw_1C11_singleread",
        "norm",
        False,
    ),
    (
        "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 128, true, 1, true>(cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, float, float)",
        "cudnn::bn_fw_tr_1C11_kernel_NCHW",
        "norm",
        False,
    ),
    (
        "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 32, true, 1, true>(cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, float, float)",
        "cudnn::bn_fw_tr_1C11_kernel_NCHW",
        "norm",
        False,
    ),
    (
        "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1, true>(cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, float, float)",
        "cudnn::bn_fw_tr_1C11_kernel_NCHW",
        "norm",
        False,
    ),
    (
        "void cudnn::bn_fw_tr_1C11_singleread<float, 512, true, 1, 2, 0>(cudnn::bn_fw_tr_1C11_args<float>)",
        "cudnn::bn_fw_tr_1C11_singleread",
        "norm",
        False,
    ),
    (
        "void cudnn::cnn::reduce_wgrad_nchw_helper<float, float>(void*, void const*, float, int, int)",
        "cudnn::cnn::reduce_wgrad_nchw_helper",
        "conv",
        False,
    ),
    (
        "void cudnn::ops::nhwcToNchwKernel<float, float, float, true, false, (cudnnKernelDataType_t)0>(cudnn::ops::nhwc2nchw_params_t<float>, float const*, float*)",
        "cudnn::ops::nhwcToNchwKernel",
        "copy",
        False,
    ),
    (
        "void cutlass::Kernel<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(cutlass_80_simt_sgemm_128x32_8x5_nn_align1::Params)",
        "cutlass_80_simt_sgemm_128x32_8x5_nn_align1",
        "gemm",
        False,
    ),
    (
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>(cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4::Params)",
        "cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4",
        "gemm",
        True,
    ),
    (
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nt_align4>(cutlass_80_tensorop_s1688gemm_256x64_16x4_nt_align4::Params)",
        "cutlass_80_tensorop_s1688gemm_256x64_16x4_nt_align4",
        "gemm",
        True,
    ),
    (
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align4>(cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align4::Params)",
        "cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align4",
        "gemm",
        True,
    ),
    (
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>(cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4::Params)",
        "cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4",
        "gemm",
        True,
    ),
    (
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4>(cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4::Params)",
        "cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4",
        "gemm",
        True,
    ),
    (
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>(cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4::Params)",
        "cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4",
        "gemm",
        True,
    ),
    (
        "void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688dgrad_optimized_tf32_128x128_16x4_nhwc_unity_stride_align4>(cutlass_tensorop_s1688dgrad_optimized_tf32_128x128_16x4_nhwc_unity_stride_align4::Params)",
        "cutlass_tensorop_s1688dgrad_optimized_tf32_128x128_16x4_nhwc_unity_stride_align4",
        "conv",
        True,
    ),
    (
        "void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688dgrad_optimized_tf32_256x64_16x4_nhwc_unity_stride_align4>(cutlass_tensorop_s1688dgrad_optimized_tf32_256x64_16x4_nhwc_unity_stride_align4::Params)",
        "cutlass_tensorop_s1688dgrad_optimized_tf32_256x64_16x4_nhwc_unity_stride_align4",
        "conv",
        True,
    ),
    (
        "void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688dgrad_optimized_tf32_64x128_32x3_nhwc_align4>(cutlass_tensorop_s1688dgrad_optimized_tf32_64x128_32x3_nhwc_align4::Params)",
        "cutlass_tensorop_s1688dgrad_optimized_tf32_64x128_32x3_nhwc_align4",
        "conv",
        True,
    ),
    (
        "void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688dgrad_optimized_tf32_64x256_16x4_nhwc_align4>(cutlass_tensorop_s1688dgrad_optimized_tf32_64x256_16x4_nhwc_align4::Params)",
        "cutlass_tensorop_s1688dgrad_optimized_tf32_64x256_16x4_nhwc_align4",
        "conv",
        True,
    ),
    (
        "void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688dgrad_optimized_tf32_64x256_32x4_nhwc_align4>(cutlass_tensorop_s1688dgrad_optimized_tf32_64x256_32x4_nhwc_align4::Params)",
        "cutlass_tensorop_s1688dgrad_optimized_tf32_64x256_32x4_nhwc_align4",
        "conv",
        True,
    ),
    (
        "void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688fprop_optimized_tf32_128x128_16x4_nhwc_align4>(cutlass_tensorop_s1688fprop_optimized_tf32_128x128_16x4_nhwc_align4::Params)",
        "cutlass_tensorop_s1688fprop_optimized_tf32_128x128_16x4_nhwc_align4",
        "conv",
        True,
    ),
    (
        "void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688fprop_optimized_tf32_128x128_32x4_nhwc_align4>(cutlass_tensorop_s1688fprop_optimized_tf32_128x128_32x4_nhwc_align4::Params)",
        "cutlass_tensorop_s1688fprop_optimized_tf32_128x128_32x4_nhwc_align4",
        "conv",
        True,
    ),
    (
        "void cutlass_cudnn_train::Kernel<cutlass_cudnn_train::reduction::kernel::ReduceSplitK<cutlass_cudnn_train::MatrixShape<4, 128>, cutlass_cudnn_train::epilogue::thread::LinearCombination<float, 4, float, float, (cutlass_cudnn_train::epilogue::thread::ScaleType::Kind)0, (cutlass_cudnn_train::FloatRoundStyle)2>, cutlass_cudnn_train::reduction::thread::ReduceAdd<float, float, 4>, 4> >(cutlass_cudnn_train::reduction::kernel::ReduceSplitK<cutlass_cudnn_train::MatrixShape<4, 128>, cutlass_cudnn_train::epilogue::thread::LinearCombination<float, 4, float, float, (cutlass_cudnn_train::epilogue::thread::ScaleType::Kind)0, (cutlass_cudnn_train::FloatRoundStyle)2>, cutlass_cudnn_train::reduction::thread::ReduceAdd<float, float, 4>, 4>::Params)",
        "cutlass_cudnn_train::reduction::kernel::ReduceSplitK",
        "conv",
        False,
    ),
    (
        "void cutlass_cudnn_train::Kernel<cutlass_tensorop_s1688wgrad_optimized_tf32_256x128_16x3_nhwc_align4>(cutlass_tensorop_s1688wgrad_optimized_tf32_256x128_16x3_nhwc_align4::Params)",
        "cutlass_tensorop_s1688wgrad_optimized_tf32_256x128_16x3_nhwc_align4",
        "conv",
        True,
    ),
    (
        "void cutlass_cudnn_train::Kernel<cutlass_tensorop_s1688wgrad_optimized_tf32_256x64_16x4_nhwc_align4>(cutlass_tensorop_s1688wgrad_optimized_tf32_256x64_16x4_nhwc_align4::Params)",
        "cutlass_tensorop_s1688wgrad_optimized_tf32_256x64_16x4_nhwc_align4",
        "conv",
        True,
    ),
    ("triton_poi_fused_add_cos_sin_0", UNCHANGED, "elementwise", False),
    ("init_array(double*, unsigned long)", "init_array", "other", None),
    ("vector_add(double const*, double const*, unsigned long, double*)", "vector_add", "other", None),
    ("vector_add1(double const*, double const*, unsigned long, double*)", "vector_add1", "other", None),
    ("vector_dot(double const*, double const*, unsigned long, double*)", "vector_dot", "other", None),
    ("vector_mul(double const*, double const*, unsigned long, double*)", "vector_mul", "other", None),
    (
        "void clover::par_ranged1d_kernel<build_field(global_variables &)::[lambda(int) (instance 1)]>(clover::Range1d, T1)",
        "clover::par_ranged1d_kernel",
        "other",
        None,
    ),
    (
        "void clover::par_ranged1d_kernel<update_halo_kernel(int, int, int, int, const std::array<int, (unsigned long)4> &, const std::array<int, (unsigned long)4> &, field_type &, const int *, int)::[lambda(int) (instance 1)]>(clover::Range1d, T1)",
        "clover::par_ranged1d_kernel",
        "other",
        None,
    ),
    (
        "void clover::par_ranged2d_kernel<PdV_kernel(bool, int, int, int, int, double, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &)::[lambda(int, int) (instance 1)]>(clover::Range2d, T1)",
        "clover::par_ranged2d_kernel",
        "other",
        None,
    ),
    (
        "void clover::par_ranged2d_kernel<PdV_kernel(bool, int, int, int, int, double, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &)::[lambda(int, int) (instance 2)]>(clover::Range2d, T1)",
        "clover::par_ranged2d_kernel",
        "other",
        None,
    ),
    (
        "void clover::par_ranged2d_kernel<generate_chunk(int, global_variables &)::[lambda(unsigned long, unsigned long) (instance 1)]>(clover::Range2d, T1)",
        "clover::par_ranged2d_kernel",
        "other",
        None,
    ),
    (
        "void clover::par_ranged2d_kernel<ideal_gas_kernel(int, int, int, int, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &)::[lambda(int, int) (instance 1)]>(clover::Range2d, T1)",
        "clover::par_ranged2d_kernel",
        "other",
        None,
    ),
    (
        "void clover::par_ranged2d_kernel<revert_kernel(int, int, int, int, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &)::[lambda(int, int) (instance 1)]>(clover::Range2d, T1)",
        "clover::par_ranged2d_kernel",
        "other",
        None,
    ),
    (
        "void clover::par_reduce_kernel<calc_dt_kernel(global_variables &, int, int, int, int, double, double, double, double, double, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer1D<double> &, clover::Buffer1D<double> &, clover::Buffer1D<double> &, clover::Buffer1D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, clover::Buffer2D<double> &, double &, int &, double &, double &, int &, int &, int &)::[lambda(int) (instance 1)]>(T1)",
        "clover::par_reduce_kernel",
        "reduction",
        False,
    ),
    (
        "void clover::par_reduce_kernel<field_summary(global_variables &, parallel_ &)::[lambda(int) (instance 1)]>(T1)",
        "clover::par_reduce_kernel",
        "reduction",
        False,
    ),
]
# GeForce RTX 3060: nsys/nsys2025.5_vecadd_rtx3060_schema3.24.sqlite.
AMPERE_RTX3060 = [
    ("kernVectorAdd(const float *, const float *, float *, int)", "kernVectorAdd", "other", None),
]
# H100 80GB HBM3: kineto/tracelens_owlv2_h100_infer, tracelens_qwen1.5-0.5b_h100_infer,
# kineto_docs_before_fix_trace_h100; H200: nsys/nsys2025.1_pytorch_nvfuser_h200.sqlite.
HOPPER_H100_H200 = [
    (
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
        UNCHANGED,
        "gemm",
        True,
    ),
    (
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
        UNCHANGED,
        "gemm",
        True,
    ),
    (
        "std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, false, true, true, false, 7, false, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16>, float> >(cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16>, float>)",
        "internal::gemvx::kernel",
        "gemm",
        False,
    ),
    (
        "void (anonymous namespace)::elementwise_kernel_with_index<int, at::native::arange_cuda_out(c10::Scalar const&, c10::Scalar const&, c10::Scalar const&, at::Tensor&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(long)#1}>(int, at::native::arange_cuda_out(c10::Scalar const&, c10::Scalar const&, c10::Scalar const&, at::Tensor&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(long)#1}, function_traits<at::native::arange_cuda_out(c10::Scalar const&, c10::Scalar const&, c10::Scalar const&, at::Tensor&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(long)#1}>::result_type*)",
        "elementwise_kernel_with_index",
        "elementwise",
        False,
    ),
    (
        "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 3, false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)",
        "softmax_warp_forward",
        "softmax",
        False,
    ),
    (
        "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 3, 64, 64>(at::native::(anonymous namespace)::OpaqueType<2u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 64, 64>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)",
        "CatArrayBatchedCopy",
        "copy",
        False,
    ),
    (
        "void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)",
        "cunn_SoftMaxForward",
        "softmax",
        False,
    ),
    (
        "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long)",
        "indexSelectLargeIndex",
        "copy",
        False,
    ),
    (
        "void at::native::(anonymous namespace)::indexSelectSmallIndex<c10::BFloat16, long, unsigned int, 2, 2, -2>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, long)",
        "indexSelectSmallIndex",
        "copy",
        False,
    ),
    (
        "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
        "vectorized_layer_norm_kernel",
        "norm",
        False,
    ),
    (
        "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1} const&)::{lambda(int)#1})",
        "elementwise_kernel",
        "copy",
        False,
    ),
    (
        "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::(anonymous namespace)::CompareFunctor<long> >(at::TensorIteratorBase&, at::native::(anonymous namespace)::CompareFunctor<long> const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::(anonymous namespace)::CompareFunctor<long> >(at::TensorIteratorBase&, at::native::(anonymous namespace)::CompareFunctor<long> const&)::{lambda(int)#1})",
        "elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::(anonymous namespace)::where_kernel_impl(at::TensorIterator&)::{lambda()#1}::operator()() const::{lambda()#12}::operator()() const::{lambda(bool, c10::BFloat16, c10::BFloat16)#1}>(at::TensorIteratorBase&, at::native::(anonymous namespace)::where_kernel_impl(at::TensorIterator&)::{lambda()#1}::operator()() const::{lambda()#12}::operator()() const::{lambda(bool, c10::BFloat16, c10::BFloat16)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::(anonymous namespace)::where_kernel_impl(at::TensorIterator&)::{lambda()#1}::operator()() const::{lambda()#12}::operator()() const::{lambda(bool, c10::BFloat16, c10::BFloat16)#1}>(at::TensorIteratorBase&, at::native::(anonymous namespace)::where_kernel_impl(at::TensorIterator&)::{lambda()#1}::operator()() const::{lambda()#12}::operator()() const::{lambda(bool, c10::BFloat16, c10::BFloat16)#1} const&)::{lambda(int)#1})",
        "elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::DivFunctor<c10::BFloat16> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::DivFunctor<c10::BFloat16> > const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::DivFunctor<c10::BFloat16> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::DivFunctor<c10::BFloat16> > const&)::{lambda(int)#1})",
        "elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1})",
        "elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<c10::BFloat16> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<c10::BFloat16> const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<c10::BFloat16> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<c10::BFloat16> const&)::{lambda(int)#1})",
        "elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1} const&)::{lambda(int)#1})",
        "elementwise_kernel",
        "copy",
        False,
    ),
    (
        "void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<2> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1}>(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::OpaqueType<2> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1} const&)::{lambda(int)#1}>(long, at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<2> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1}>(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::OpaqueType<2> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1} const&)::{lambda(int)#1})",
        "index_elementwise_kernel",
        "copy",
        False,
    ),
    (
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, at::native::NormTwoOps<c10::BFloat16, float, c10::BFloat16>, unsigned int, c10::BFloat16, 4> >(at::native::ReduceOp<c10::BFloat16, at::native::NormTwoOps<c10::BFloat16, float, c10::BFloat16>, unsigned int, c10::BFloat16, 4>)",
        "reduce_kernel",
        "reduction",
        False,
    ),
    (
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<int, at::native::ArgMaxOps<int>, unsigned int, long, 4> >(at::native::ReduceOp<int, at::native::ArgMaxOps<int>, unsigned int, long, 4>)",
        "reduce_kernel",
        "reduction",
        False,
    ),
    (
        "void at::native::unrolled_elementwise_kernel<at::native::AUnaryFunctor<long, long, bool, at::native::(anonymous namespace)::CompareEqFunctor<long> >, std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::AUnaryFunctor<long, long, bool, at::native::(anonymous namespace)::CompareEqFunctor<long> >, std::array<char*, 2ul>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)",
        "unrolled_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::unrolled_elementwise_kernel<at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>, 4, TrivialOffsetCalculator<2, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<2>, at::native::memory::StoreWithCast<1> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>, TrivialOffsetCalculator<2, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<2>, at::native::memory::StoreWithCast<1>)",
        "unrolled_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#11}::operator()() const::{lambda(bool)#1}, std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#11}::operator()() const::{lambda(bool)#1}, std::array<char*, 2ul>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)",
        "unrolled_elementwise_kernel",
        "copy",
        False,
    ),
    (
        "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#3}::operator()() const::{lambda(int)#1}, std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#3}::operator()() const::{lambda(int)#1}, std::array<char*, 2ul>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)",
        "unrolled_elementwise_kernel",
        "copy",
        False,
    ),
    (
        "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)",
        "unrolled_elementwise_kernel",
        "copy",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::elu_kernel(at::TensorIteratorBase&, c10::Scalar const&, c10::Scalar const&, c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::(anonymous namespace)::elu_kernel(at::TensorIteratorBase&, c10::Scalar const&, c10::Scalar const&, c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::masked_fill_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16, bool)#1}, std::array<char*, 3ul> >(int, at::native::(anonymous namespace)::masked_fill_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16, bool)#1}, std::array<char*, 3ul>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::masked_fill_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float, bool)#1}, std::array<char*, 3ul> >(int, at::native::(anonymous namespace)::masked_fill_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float, bool)#1}, std::array<char*, 3ul>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, at::native::AUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >(int, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnOther_add<c10::BFloat16>, std::array<char*, 2ul> >(int, at::native::CUDAFunctorOnOther_add<c10::BFloat16>, std::array<char*, 2ul>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<c10::BFloat16>, std::array<char*, 2ul> >(int, at::native::CUDAFunctorOnSelf_add<c10::BFloat16>, std::array<char*, 2ul>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<long>, std::array<char*, 2ul> >(int, at::native::CUDAFunctorOnSelf_add<long>, std::array<char*, 2ul>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<c10::BFloat16>, std::array<char*, 1ul> >(int, at::native::FillFunctor<c10::BFloat16>, std::array<char*, 1ul>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#1}, std::array<char*, 2ul>)",
        "vectorized_elementwise_kernel",
        "copy",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::compare_scalar_kernel<long>(at::TensorIteratorBase&, at::native::(anonymous namespace)::OpType, long)::{lambda(long)#1}, std::array<char*, 2ul> >(int, at::native::compare_scalar_kernel<long>(at::TensorIteratorBase&, at::native::(anonymous namespace)::OpType, long)::{lambda(long)#1}, std::array<char*, 2ul>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::exp_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::exp_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::sigmoid_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::sigmoid_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void cublasLt::splitKreduce_kernel<32, 16, int, __nv_bfloat16, __nv_bfloat16, float, __nv_bfloat16, true, true, false>(cublasLt::cublasSplitKParams<float>, __nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, float const*, float const*, __nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, void*, long, float*, int*)",
        "cublasLt::splitKreduce_kernel",
        "gemm",
        False,
    ),
    (
        "void cudnn::engines_precompiled::nchwToNhwcKernel<__nv_bfloat16, __nv_bfloat16, float, false, true, (cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, __nv_bfloat16 const*, __nv_bfloat16*)",
        "cudnn::engines_precompiled::nchwToNhwcKernel",
        "copy",
        False,
    ),
    (
        "void cudnn::engines_precompiled::nhwcToNchwKernel<__nv_bfloat16, __nv_bfloat16, float, true, false, (cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nhwc2nchw_params_t<float>, __nv_bfloat16 const*, __nv_bfloat16*)",
        "cudnn::engines_precompiled::nhwcToNchwKernel",
        "copy",
        False,
    ),
    (
        "void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_nn_align1>(cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_nn_align1::Params)",
        "cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_nn_align1",
        "gemm",
        True,
    ),
    (
        "void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_tn_align1>(cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_tn_align1::Params)",
        "cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_tn_align1",
        "gemm",
        True,
    ),
    (
        "void cutlass::Kernel2<cutlass_75_wmma_tensorop_bf16_s161616gemm_bf16_32x32_32x1_nn_align1>(cutlass_75_wmma_tensorop_bf16_s161616gemm_bf16_32x32_32x1_nn_align1::Params)",
        "cutlass_75_wmma_tensorop_bf16_s161616gemm_bf16_32x32_32x1_nn_align1",
        "gemm",
        True,
    ),
    (
        "void cutlass::Kernel2<cutlass_75_wmma_tensorop_bf16_s161616gemm_bf16_32x32_32x1_tn_align1>(cutlass_75_wmma_tensorop_bf16_s161616gemm_bf16_32x32_32x1_tn_align1::Params)",
        "cutlass_75_wmma_tensorop_bf16_s161616gemm_bf16_32x32_32x1_tn_align1",
        "gemm",
        True,
    ),
    (
        "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8>(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8::Params)",
        "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8",
        "gemm",
        True,
    ),
    (
        "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align2>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align2::Params)",
        "cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align2",
        "gemm",
        True,
    ),
    (
        "void cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8>(cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8::Params)",
        "cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8",
        "conv",
        True,
    ),
    (
        "void dot_kernel<float, 128, 0, cublasDotParams<cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<float> > >(cublasDotParams<cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<float> >)",
        "dot_kernel",
        "gemm",
        False,
    ),
    (
        "void gemv2T_kernel_val<int, int, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, 128, 16, 4, 4, false, false, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16>, float> >(cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16>, float>, float, float)",
        "gemv2T_kernel_val",
        "gemm",
        False,
    ),
    (
        "void reduce_1Block_kernel<float, 128, 7, cublasGemvTensorStridedBatched<float>, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16> >(float const*, float, cublasGemvTensorStridedBatched<float>, int, float const*, float, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16>, cublasPointerMode_t, cublasLtEpilogue_t, cublasGemvTensorStridedBatched<biasType<cublasGemvTensorStridedBatched<__nv_bfloat16>::value_type, float>::type const>)",
        "reduce_1Block_kernel",
        "gemm",
        False,
    ),
    (
        "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 4, 64, 64>(at::native::(anonymous namespace)::OpaqueType<2u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 64, 64>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)",
        "CatArrayBatchedCopy",
        "copy",
        False,
    ),
    (
        "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<4u>, unsigned int, 3, 64, 64>(at::native::(anonymous namespace)::OpaqueType<4u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<4u>, unsigned int, 64, 64>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)",
        "CatArrayBatchedCopy",
        "copy",
        False,
    ),
    (
        "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::neg_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#9}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&, at::native::neg_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#9}::operator()() const::{lambda(c10::BFloat16)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::neg_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#9}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&, at::native::neg_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#9}::operator()() const::{lambda(c10::BFloat16)#1} const&)::{lambda(int)#1})",
        "elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<bool, at::native::func_wrapper_t<bool, at::native::and_kernel_cuda(at::TensorIterator&)::{lambda()#1}::operator()() const::{lambda()#12}::operator()() const::{lambda(bool, bool)#1}>, unsigned int, bool, 4> >(at::native::ReduceOp<bool, at::native::func_wrapper_t<bool, at::native::and_kernel_cuda(at::TensorIterator&)::{lambda()#1}::operator()() const::{lambda()#12}::operator()() const::{lambda(bool, bool)#1}>, unsigned int, bool, 4>)",
        "reduce_kernel",
        "reduction",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::pow_tensor_scalar_kernel_impl<float, float>(at::TensorIteratorBase&, float)::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::(anonymous namespace)::pow_tensor_scalar_kernel_impl<float, float>(at::TensorIteratorBase&, float)::{lambda(float)#1}, std::array<char*, 2ul>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#6}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#6}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<long, long, bool, at::native::(anonymous namespace)::CompareEqFunctor<long> >, std::array<char*, 2ul> >(int, at::native::AUnaryFunctor<long, long, bool, at::native::(anonymous namespace)::CompareEqFunctor<long> >, std::array<char*, 2ul>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<float>, std::array<char*, 2ul> >(int, at::native::CUDAFunctorOnSelf_add<float>, std::array<char*, 2ul>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::cos_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::cos_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::rsqrt_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::rsqrt_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::sin_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::sin_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(cutlass_80_simt_sgemm_128x32_8x5_nn_align1::Params)",
        "cutlass_80_simt_sgemm_128x32_8x5_nn_align1",
        "gemm",
        False,
    ),
    (
        "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, true, false, false, false, true, false>(pytorch_flash::Flash_fwd_params)",
        "pytorch_flash::flash_fwd_kernel",
        "attention",
        True,
    ),
    ("Kernel", "Kernel", "other", None),
    (
        "<unnamed>::nvfuser_inner_persistent_f0_c1_r0_g2(<unnamed>::Tensor<float, (int)3, (int)3>, <unnamed>::Tensor<float, (int)2, (int)2>)",
        "nvfuser_inner_persistent_f0_c1_r0_g2",
        "reduction",
        False,
    ),
    (
        "<unnamed>::nvfuser_inner_persistent_f1_c1_r0_g2(<unnamed>::Tensor<float, (int)2, (int)2>, <unnamed>::Tensor<float, (int)2, (int)2>, <unnamed>::Tensor<float, (int)3, (int)3>)",
        "nvfuser_inner_persistent_f1_c1_r0_g2",
        "reduction",
        False,
    ),
    (
        "<unnamed>::nvfuser_pointwise_f0_c1_r0_g0(<unnamed>::Tensor<float, (int)2, (int)2>, <unnamed>::Tensor<float, (int)2, (int)2>)",
        "nvfuser_pointwise_f0_c1_r0_g0",
        "elementwise",
        False,
    ),
    (
        "<unnamed>::nvfuser_pointwise_f0_c1_r0_g4(<unnamed>::Tensor<<unnamed>::__bfloat, (int)3, (int)3>, <unnamed>::Tensor<float, (int)3, (int)3>)",
        "nvfuser_pointwise_f0_c1_r0_g4",
        "elementwise",
        False,
    ),
    (
        "<unnamed>::nvfuser_pointwise_f1_c1_r0_g1(<unnamed>::Tensor<float, (int)3, (int)3>, <unnamed>::Tensor<<unnamed>::__bfloat, (int)3, (int)3>)",
        "nvfuser_pointwise_f1_c1_r0_g1",
        "elementwise",
        False,
    ),
    (
        "<unnamed>::nvfuser_reduction_f0_c1_r0_g3(<unnamed>::Tensor<long long, (int)1, (int)1>, <unnamed>::Tensor<float, (int)2, (int)2>, <unnamed>::Tensor<long long, (int)0, (int)0>, <unnamed>::Tensor<float, (int)0, (int)0>, <unnamed>::Tensor<long long, (int)1, (int)1>, <unnamed>::Tensor<long long, (int)1, (int)1>, <unnamed>::Tensor<float, (int)1, (int)1>, <unnamed>::Tensor<long long, (int)1, (int)1>)",
        "nvfuser_reduction_f0_c1_r0_g3",
        "reduction",
        False,
    ),
    ("nvjet_tst_192x192_64x3_1x2_h_bz_coopB_NTN", UNCHANGED, "gemm", True),
    ("nvjet_tst_192x192_64x4_2x1_v_bz_coopB_TNN", UNCHANGED, "gemm", True),
    ("nvjet_tst_256x128_64x4_1x2_h_bz_coopA_NNT", UNCHANGED, "gemm", True),
    (
        "void at::native::<unnamed>::distribution_elementwise_grid_stride_kernel<float, (int)4, void at::native::templates::cuda::normal_and_transform<c10::BFloat16, float, at::CUDAGeneratorImpl *, void at::native::templates::cuda::normal_kernel<at::CUDAGeneratorImpl *>(const at::TensorBase &, double, double, T1)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 4)]::operator ()() const::[lambda(float) (instance 1)]>(at::TensorIteratorBase &, T3, T4)::[lambda(curandStatePhilox4_32_10 *) (instance 2)], void at::native::<unnamed>::distribution_nullary_kernel<c10::BFloat16, float, float4, at::CUDAGeneratorImpl *, void at::native::templates::cuda::normal_and_transform<c10::BFloat16, float, at::CUDAGeneratorImpl *, void at::native::templates::cuda::normal_kernel<at::CUDAGeneratorImpl *>(const at::TensorBase &, double, double, T1)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 4)]::operator ()() const::[lambda(float) (instance 1)]>(at::TensorIteratorBase &, T3, T4)::[lambda(curandStatePhilox4_32_10 *) (instance 2)], void at::native::templates::cuda::normal_kernel<at::CUDAGeneratorImpl *>(const at::TensorBase &, double, double, T1)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 4)]::operator ()() const::[lambda(float) (instance 1)]>(at::TensorIteratorBase &, T4, const T5 &, T6)::[lambda(int, float) (instance 1)]>(long, at::PhiloxCudaState, T3, T4)",
        "distribution_elementwise_grid_stride_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::<unnamed>::distribution_elementwise_grid_stride_kernel<unsigned int, (int)4, void at::native::templates::cuda::random_from_to_kernel<at::CUDAGeneratorImpl *>(at::TensorIteratorBase &, unsigned long, long, T1)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 4)]::operator ()() const::[lambda(curandStatePhilox4_32_10 *) (instance 2)], void at::native::<unnamed>::distribution_nullary_kernel<long, unsigned int, uint4, at::CUDAGeneratorImpl *, void at::native::templates::cuda::random_from_to_kernel<at::CUDAGeneratorImpl *>(at::TensorIteratorBase &, unsigned long, long, T1)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 4)]::operator ()() const::[lambda(curandStatePhilox4_32_10 *) (instance 2)], void at::native::templates::cuda::random_from_to_kernel<at::CUDAGeneratorImpl *>(at::TensorIteratorBase &, unsigned long, long, T1)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 4)]::operator ()() const::[lambda(unsigned int) (instance 1)]>(at::TensorIteratorBase &, T4, const T5 &, T6)::[lambda(int, unsigned int) (instance 1)]>(long, at::PhiloxCudaState, T3, T4)",
        "distribution_elementwise_grid_stride_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::<unnamed>::nll_loss_backward_reduce_cuda_kernel_2d<float, long>(T1 *, const T1 *, const T2 *, const T1 *, const T1 *, bool, int, int, long, long)",
        "nll_loss_backward_reduce_cuda_kernel_2d",
        "reduction",
        False,
    ),
    (
        "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 3)]::operator ()() const::[lambda() (instance 7)]::operator ()() const::[lambda(float) (instance 1)], std::array<char *, (unsigned long)2>, (int)8, TrivialOffsetCalculator<(int)1, unsigned int>, TrivialOffsetCalculator<(int)1, unsigned int>, at::native::memory::LoadWithCast<(int)1>, at::native::memory::StoreWithCast<(int)1>>(int, T1, T2, T4, T5, T6, T7)",
        "unrolled_elementwise_kernel",
        "copy",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<(int)2, at::native::FillFunctor<long>, std::array<char *, (unsigned long)1>>(int, T2, T3)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>, std::array<char *, (unsigned long)1>>(int, T2, T3)",
        "vectorized_elementwise_kernel",
        "elementwise",
        False,
    ),
    (
        "void at::native::vectorized_elementwise_kernel<(int)8, at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda(float) (instance 1)], std::array<char *, (unsigned long)2>>(int, T2, T3)",
        "vectorized_elementwise_kernel",
        "copy",
        False,
    ),
]

# Volta and Turing tensor-core kernels: the recordings above ran FP32 there, so these come from public
# nvprof listings (names exactly as printed; nvprof writes template arguments as int=128).
VOLTA_TURING_PUBLIC = [
    # https://github.com/NVIDIA/apex/issues/666 (V100, PyTorch with apex AMP)
    ("volta_fp16_s884cudnn_fp16_256x128_ldg8_relu_f2f_exp_small_nhwc2nchw_tn_v1", UNCHANGED, "conv", True),
    ("volta_cgemm_32x64_tn", UNCHANGED, "gemm", False),
    (
        "void kernelPointwiseApply2<ThresholdUpdateOutput<at::Half>, at::Half, at::Half, unsigned int, int=1, int=1>"
        "(OffsetInfo<ThresholdUpdateOutput<at::Half>, at::Half, unsigned int>, OffsetInfo<at::Half, at::Half, int=1>, "
        "at::Half, at::Half)",
        "kernelPointwiseApply2",
        "elementwise",
        False,
    ),
    (
        "void fermiCgemm_v3_kernel<bool=1, bool=0, bool=0, bool=0, int=5, int=5, int=3, int=8, int=8>(int, int, int, "
        "float2 const *, int, float2 const *, int, float2*, int, int, int, float2 const *, float2 const *, float2, float2, "
        "int)",
        "fermiCgemm_v3_kernel",
        "gemm",
        False,
    ),
    (
        "void nearest_neighbor_4d_kernel<float, float>(int, THCDeviceTensor<float, int=4, int, DefaultPtrTraits>, "
        "THCDeviceTensor<float, int=4, int, DefaultPtrTraits>)",
        "nearest_neighbor_4d_kernel",
        "other",
        False,
    ),
    (
        "void kernelPointwiseApply2<CopyOp<float, float>, float, float, unsigned int, int=-1, int=1>(OffsetInfo<float, "
        "float, float>, OffsetInfo<CopyOp<float, float>, float, unsigned int>, float, float)",
        "kernelPointwiseApply2",
        "copy",
        False,
    ),
    # https://github.com/ryujaehun/pytorch-gpu-benchmark/issues/6 (V100 and T4, half precision)
    ("volta_fp16_s884cudnn_fp16_128x128_ldg8_dgrad_f2f_exp_interior_nhwc2nchw_tt_v1", UNCHANGED, "conv", True),
    (
        "void cudnn::detail::dgrad_engine<__half, int=128, int=6, int=7, int=3, int=3, int=5, bool=1>(int, int, int, "
        "__half const *, int, __half const , int, cudnn::detail::dgrad_engine<__half, int=128, int=6, int=7, int=3, int=3, "
        "int=5, bool=1>*, kernel_grad_params, int, int, float, int, int, int)",
        "cudnn::detail::dgrad_engine",
        "conv",
        False,
    ),
    (
        "void cudnn::winograd::winograd3x3Kernel<__half, float, int=2, int=2, int=8, bool=0>"
        "(cudnn::maxwell::winograd::KernelParams)",
        "cudnn::winograd::winograd3x3Kernel",
        "conv",
        False,
    ),
    (
        "void cudnn::detail::implicit_convolve_sgemm<__half, __half, int=1024, int=5, int=5, int=3, int=3, int=3, int=1, "
        "bool=1, bool=0, bool=1>(int, int, int, __half const *, int, __half*, cudnn::detail::implicit_convolve_sgemm<"
        "__half, __half, int=1024, int=5, int=5, int=3, int=3, int=3, int=1, bool=1, bool=0, bool=1>*, kernel_conv_params, "
        "int, float, float, int, __half, __half, int, int)",
        "cudnn::detail::implicit_convolve_sgemm",
        "conv",
        False,
    ),
    # https://github.com/apache/mxnet/issues/9774 (V100 FP16 ResNet-50: the kernels without s884 do not use them)
    ("volta_fp16_scudnn_fp16_128x64_relu_interior_nn_v1", UNCHANGED, "conv", False),
    (
        "void nchwToNhwcKernel<__half, __half, float, bool=1>(int, int, int, int, __half const *, __half*, float, float)",
        "nchwToNhwcKernel",
        "copy",
        False,
    ),
    # https://github.com/NVIDIA/apex/issues/530 (Turing s1688 that apex's PyProf missed; fixed in apex#534)
    ("turing_fp16_s1688cudnn_fp16_256x128_ldg8_relu_filter1x1_stg8_interior_nchw_nn_v1", UNCHANGED, "conv", True),
    ("turing_fp16_s1688cudnn_fp16_128x128_ldg8_relu_f2f_exp_small_nhwc_tn_v1", UNCHANGED, "conv", True),
    # https://github.com/NVIDIA/cutlass/issues/211 (T4: cuBLAS and CUTLASS fp16-accumulate GEMMs)
    ("turing_h1688gemm_256x64_sliced1x2_ldg8_tn", UNCHANGED, "gemm", True),
    ("cutlass_tensorop_h1688gemm_64x128_64x2_1x2x2_tn_align8", UNCHANGED, "gemm", True),
]

# Names for GPUs and kernel families the recordings lack, from public sources (cited per row).
# Blackwell (sm100): no recording in ../shared/data.
BLACKWELL_PUBLIC = [
    # https://github.com/pytorch/pytorch/pull/172263 (CUTLASS 3 SM100 kernel generated for B300)
    (
        "cutlass3x_sm100_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x128x64_0x0x1_0_tnn_align8_1sm",
        UNCHANGED,
        "gemm",
        True,
    ),
    # https://github.com/NVIDIA/cutlass/issues/2766
    ("cutlass3x_sm100_tensorop_gemm_f16_f16_f16_f16_f16_128x256x64_0x0x1_0_tnt_align8_1sm", UNCHANGED, "gemm", True),
    # https://github.com/pytorch/pytorch/pull/156203: nsys row on a B200, as printed there (truncated by the
    # source); the UMMA mainloop and the SM100_MMA atom are tcgen05 (NVIDIA/cutlass
    # media/docs/cpp/blackwell_functionality.md), the launch wrappers are skipped in the short name.
    (
        "void cutlass::device_kernel<at::cuda::detail::enable_3x_kernel_for_sm10<cutlass::gemm::kernel::GemmUniversal<"
        "cutlass::gemm::GroupProblemShape<cute::tuple<int, int, int>>, cutlass::gemm::collective::CollectiveMma<"
        "cutlass::gemm::MainloopSm100ArrayTmaUmmaWarpSpecialized<(int)3, (int)8, (int)2, cute::tuple<cute::C<(int)2>, "
        "cute::C<(int)1>, cute::C<(int)1>>>, cute::tuple<cute::C<(int)128>, cute::C<(int)256>, cute::C<(int)64>>, "
        "cutlass::bfloat16_t, cute::tuple<long, cute::C<(int)1>, cute::C<(int)0>> *, cutlass::bfloat16_t, "
        "cute::tuple<cute::C<(int)1>, long, cute::C<(int)0>> *, cute::TiledMMA<cute::MMA_Atom<cute::SM100_MMA_F16BF16_SS<"
        "cutlass::bfloat16_t, cutlass::bfloat16_t, float, (int)128, (int)256, (cute::UMMA::Major)0, (cute::UMMA::Major)1, "
        "(cute::UMMA::ScaleIn)0, (cute::UMMA::ScaleIn)0>>",
        "cutlass::gemm::kernel::GemmUniversal",
        "gemm",
        True,
    ),
    # https://github.com/pytorch/pytorch/issues/161134: the cuBLASLt kernel F.linear ran on a B200
    ("nvjet_tst_16x64_64x16_4x1_v_bz_TNN", UNCHANGED, "gemm", True),
]

# Other public names: Hopper cuBLASLt/cuDNN/CUTLASS 3, Ada, Orin, SIMT variants, kernel families
# (FlashAttention, PyTorch memory-efficient attention, Triton/Inductor) the recordings lack.
OTHER_PUBLIC = [
    # https://github.com/pytorch/kineto/issues/1041 (H100 Conv3d; missed by the tb_plugin/PyProf whitelist)
    (
        "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_warpgroupsize1x1x1_g1"
        "_execute_segment_k_off_kernel__5x_cudnn",
        UNCHANGED,
        "conv",
        True,
    ),
    # https://github.com/pytorch/pytorch/issues/161134 (H200)
    ("nvjet_tst_64x8_64x16_4x1_v_bz_TNT", UNCHANGED, "gemm", True),
    # https://github.com/NVIDIA/Fuser/issues/3137 (Hopper): cuBLAS, and nvFuser's own matmul whose name says nothing
    ("nvjet_hsh_192x192_64x3_2x1_v_bz_coopB_NTN", UNCHANGED, "gemm", True),
    (
        "<unnamed>::nvfuser_none_f0_c0_r0_g0(<unnamed>::Tensor<<unnamed>::__half, (int)3, (int)3>, <unnamed>\u2026",
        "nvfuser_none_f0_c0_r0_g0",
        "other",
        None,
    ),
    # https://github.com/NVIDIA/cutlass/issues/947 (CUTLASS 3 procedural name, SM90)
    (
        "cutlass3x_sm90_tensorop_h64x128x16gemm_f16_f16_f16_void_f16_128x128x64_1x1x1_0_nnn_align8",
        UNCHANGED,
        "gemm",
        True,
    ),
    # https://github.com/pytorch/pytorch/issues/181718 (RTX 4090, Ada)
    ("ampere_bf16_s1688gemm_bf16_128x128_ldg8_f2f_stages_32x1_nn", UNCHANGED, "gemm", True),
    (
        "cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_nn_align8>",
        "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_nn_align8",
        "gemm",
        True,
    ),
    # https://github.com/NVIDIA/cutlass/issues/3390 (cuBLAS pedantic FP32 on an RTX 4070 SUPER, sm_89)
    ("cutlass_80_simt_sgemm_256x128_8x4_nn_align1", UNCHANGED, "gemm", False),
    # https://github.com/cupy/cupy/issues/8151 (FP64 GEMM on Jetson AGX Orin: DMMA tensor cores)
    ("cutlass_80_tensorop_d884gemm_64x32_16x4_nn_align1", UNCHANGED, "gemm", True),
    # https://github.com/NVIDIA/cutlass/issues/1587 (complex TF32 GEMM)
    ("cutlass_tensorop_c1688gemm_128x64_16x3_nn_align1", UNCHANGED, "gemm", True),
    # https://github.com/NVIDIA/cutlass/issues/2787 (SIMT conv on an SM70 GPU)
    ("cutlass_sm70_simt_sfprop_optimized_128x128_8x2_nhwc_align1", UNCHANGED, "conv", False),
    # https://github.com/NVIDIA/cutlass/issues/85 (CUTLASS 2 SIMT GEMM, as printed there, truncated)
    (
        "void cutlass::Kernel<cutlass::gemm::kernel::Gemm<cutlass::gemm::threadblock::MmaPipelined<cutlass::gemm::GemmShape"
        "<int=128,int=128,int=8>,cutlass::transform::threadblock::PredicatedTileIterator<cutlass::MatrixShape<int=128,"
        "int=8>,float,cutlass::layout::RowMajor,int=1,cutlass::transform::PitchLinearStripminedThreadMap<cutlass::layout::"
        "PitchLinearShape<int=8,int=128>,int=256,int=1>,int=1>,cutlass::transform::threadblock::RegularTileIterator<"
        "cutlass::MatrixShape<int=128,int=8>,float,cutlass::layout::ColumnMajor,int=1,cutlass::transform::"
        "TransposePitchLinearThreadMapSimt<cutlass::transform::PitchLinearStripminedThreadMap<cutlass",
        "cutlass::gemm::kernel::Gemm",
        "gemm",
        False,
    ),
    # https://github.com/wenet-e2e/wenet/issues/2206 (TensorRT tactic: an xmma kernel on CUDA cores)
    (
        "sm50_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nhwckrsc_nhwc_tilesize64x64x8_stage1_warpsize1x4x1_g1_ffma"
        "_aligna4_alignc4",
        UNCHANGED,
        "conv",
        False,
    ),
    # https://github.com/ultralytics/ultralytics/issues/23047 (TensorRT tactics, sm80 and sm75)
    (
        "sm80_xmma_fprop_implicit_gemm_indexed_f16f16_f16f16_f16_nhwckrsc_nhwc_tilesize128x256x32_stage3_warpsize2x4x1_g1"
        "_tensor16x8x16",
        UNCHANGED,
        "conv",
        True,
    ),
    (
        "sm75_xmma_fprop_implicit_gemm_indexed_wo_smem_f16f16_f16f16_f16_nhwckrsc_nhwc_tilesize128x16x64_stage1_warpsize4x1x1"
        "_g1_tensor16x8x8_aligna8_alignc2",
        UNCHANGED,
        "conv",
        True,
    ),
    # Dao-AILab/flash-attention csrc/flash_attn/src/flash_bwd_launch_template.h: the main loop runs the
    # SM80_16x8x16 MMA atom (kernel_traits.h); dot(dO, O), dQ/dKV conversion and clearing do no MMA.
    ("flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel", UNCHANGED, "attention", True),
    ("flash_bwd_dot_do_o_kernel", UNCHANGED, "attention", False),
    ("flash_bwd_convert_dq_kernel", UNCHANGED, "attention", False),
    ("flash_bwd_convert_dkv_kernel", UNCHANGED, "attention", False),
    ("flash_bwd_clear_dkvaccum_kernel", UNCHANGED, "attention", False),
    # pytorch/pytorch aten/src/ATen/native/transformers/cuda/mem_eff_attention/kernels/cutlassF_f32_aligned.cu and
    # cutlassF_f16_aligned.cu; gemm_kernel_utils.h DefaultGemmType: TensorOp for f32 from Sm80 (TF32), for
    # f16 from Sm70, SIMT otherwise.
    ("fmha_cutlassF_f32_aligned_64x64_rf_sm80", UNCHANGED, "attention", True),
    ("fmha_cutlassF_f32_aligned_64x64_rf_sm75", UNCHANGED, "attention", False),
    ("fmha_cutlassF_f16_aligned_64x64_rf_sm70", UNCHANGED, "attention", True),
    ("fmha_cutlassF_f16_aligned_64x64_rf_sm50", UNCHANGED, "attention", False),
    # https://github.com/pytorch/pytorch/issues/159525 (Inductor mm template: tl.dot may or may not use them)
    ("triton_tem_fused_mm_0", UNCHANGED, "gemm", None),
    # https://github.com/pytorch/pytorch/pull/159982 (Inductor autotuning choice)
    ("triton_mm_16", UNCHANGED, "gemm", None),
    # https://github.com/pytorch/pytorch/issues/125524 (an mm lowered into a reduction: the prefix decides)
    ("triton_red_fused_add_bmm_mm_mul_16", UNCHANGED, "reduction", False),
]

GROUPS = {
    "V100": VOLTA_V100,
    "GTX1060": PASCAL_GTX1060,
    "RTX2070S": TURING_RTX2070S,
    "A100": AMPERE_A100,
    "RTX3060": AMPERE_RTX3060,
    "H100/H200": HOPPER_H100_H200,
    "Volta/Turing (public)": VOLTA_TURING_PUBLIC,
    "Blackwell (public)": BLACKWELL_PUBLIC,
    "other (public)": OTHER_PUBLIC,
}
ROWS = [(group, *row) for group, rows in GROUPS.items() for row in rows]


@pytest.mark.parametrize(
    ("group", "name", "short", "category", "tensor_cores"),
    ROWS,
    ids=[f"{group}:{index}" for index, (group, *_) in enumerate(ROWS)],
)
def test_table_row(group, name, short, category, tensor_cores):
    expected_short = name if short == UNCHANGED else short
    answer = (short_name(name), kernel_category(name), uses_tensor_cores(name))
    assert answer == (expected_short, category, tensor_cores)


def test_table_has_no_duplicate_names():
    assert len({name for _, name, *_ in ROWS}) == len(ROWS)


# PyProf 3.10: NVIDIA/PyProf pyprof/parse/kernel.py getShortName and pyprof/prof/tc.py TC_Whitelist.
PYPROF_WHITELIST = [
    "h884",
    "s884",
    "h1688",
    "s1688",
    "hmma",
    "i8816",
    "16816",
    "dgrad_1x1_stride_2x2",
    "first_layer_wgrad_kernel",
    "conv1x1",
    "conv2d_c1_k1",
    "direct_group",
    "xmma_implicit_gemm",
    "xmma_sparse_conv",
    "xmma_warp_specialized_implicit_gemm",
    "xmma_gemm",
    "xmma_sparse_gemm",
    "c1688",
]


def _pyprof_short_name(name):
    short = name.split("<")[0].replace("void ", "").replace("at::", "").replace("cuda::", "")
    return short.replace("native::", "").replace("(anonymous namespace)::", "").split("(")[0]


def _pyprof_tc(name):
    return any(pattern in _pyprof_short_name(name) for pattern in PYPROF_WHITELIST)


def test_short_name_is_pyprofs_where_pyprof_got_it_right():
    """Same answer as PyProf except where its rule breaks: mangled (it ran c++filt first), launch wrappers
    (cut at '<' leaves `cutlass::Kernel`), nsys's `<unnamed>::` (cut at '<' leaves nothing) and a
    templated return type (`std::enable_if<...>::type f` leaves `std::enable_if`)."""
    pyprof_breaks = ("_Z", "<unnamed>", "std::enable_if", "::Kernel<", "::Kernel2<", "::device_kernel<")
    compared = [name for _, name, *_ in ROWS if not any(marker in name for marker in pyprof_breaks)]
    assert len(compared) > 250
    assert [short_name(name) for name in compared] == [_pyprof_short_name(name) for name in compared]


# Tensor-core kernels PyProf's (and Kineto tb_plugin's near-identical) whitelist reports as not using them.
PYPROF_MISSES = [
    OTHER_PUBLIC[0][0],  # kineto#1041: xmma_fprop_implicit_gemm is not xmma_implicit_gemm
    "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1"
    "_tensor16x8x8_alignc4_execute_kernel_cudnn",  # A100 alexnet recording
    "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align2>"
    "(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align2::Params)",  # cut at '<'; no wmma entry
    "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>"
    "(cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4::Params)",  # cut at '<' loses s1688
    "nvjet_tst_192x192_64x3_1x2_h_bz_coopB_NTN",  # H200 recording
    "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
    "cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, true, "
    "false, false, false, true, false>(pytorch_flash::Flash_fwd_params)",  # H100 qwen recording
]


@pytest.mark.parametrize("name", PYPROF_MISSES)
def test_names_pyprof_whitelist_missed(name):
    assert not _pyprof_tc(name)
    assert uses_tensor_cores(name) is True


def test_depthwise_conv_is_not_counted_as_tensor_core_work():
    """PyProf listed conv2d_c1_k1; cuDNN's depthwise kernels run on CUDA cores (pytorch/pytorch#22302)."""
    assert _pyprof_tc("conv2d_c1_k1_nhwc_kernel")
    assert uses_tensor_cores("conv2d_c1_k1_nhwc_kernel") is False


@pytest.mark.parametrize("name", ["", "   ", "<", "void f<(", "_Z", "_ZN3foo", "_ZN99tooshort", "::", "a::b::"])
def test_odd_names_never_raise(name):
    assert isinstance(short_name(name), str)
    assert kernel_category(name) in {
        "gemm",
        "conv",
        "attention",
        "elementwise",
        "reduction",
        "norm",
        "softmax",
        "pooling",
        "copy",
        "communication",
        "other",
    }
    assert uses_tensor_cores(name) in (True, False, None)


def test_answers_are_cached():
    name = VOLTA_V100[0][0]
    short_name(name)
    hits = short_name.cache_info().hits
    assert short_name(name) == "kernelReduceAllPass1"
    assert short_name.cache_info().hits == hits + 1


# Every file with kernels: (path, kernel rows, distinct names), as listed in ../shared/data/README.md
# (kernel counts) and counted with the queries in the module docstring (distinct names).
RECORDINGS = [
    ("nsys/nsys2022.1_pytorch_emitnvtx_dlprof_rtx2070s.sqlite", 46, 26),
    ("nsys/nsys2024.5_cloverleaf_cuda_a100x4.sqlite", 1312, 102),
    ("nsys/nsys2025.1_pytorch_nvfuser_h200.sqlite", 18, 16),
    ("nsys/nsys2025.5_vecadd_rtx3060_schema3.24.sqlite", 1, 1),
    ("nsys/nsys_legacy_nometa_exgpu_a100x4.sqlite", 6, 5),
    ("nsys/nsys_windows_nonutf8meta_gtx1060.sqlite", 9, 5),
    ("nsys/nvprof_pytorch_pyprof_lm_v100_17ed9e2.sql", 160, 42),
    ("kineto/hta_alexnet_a100_benchmark_trace.json.gz", 79, 16),
    ("kineto/hta_call_stack_backward_thread.json", 1, 1),
    ("kineto/hta_nccl_data_a100_ws2_rank0.json.gz", 2700, 70),
    ("kineto/hta_triton_compile_a100.json.gz", 1, 1),
    ("kineto/kineto_docs_before_fix_trace_h100.json", 1, 1),
    ("kineto/kineto_tbplugin_resnet50_v100dgxs_oldformat.pt.trace.json.gz", 8772, 67),
    ("kineto/tracelens_owlv2_h100_infer.json.gz", 4330, 54),
    ("kineto/tracelens_qwen1.5-0.5b_h100_infer.json.gz", 1465, 26),
]


def _recorded_kernel_names(path) -> Counter:
    if path.suffix in (".sqlite", ".sql"):
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        connection.text_factory = lambda raw: raw.decode("utf-8", "replace")  # the Windows export has Latin-1 bytes
        tables = {table for (table,) in connection.execute("select name from sqlite_master where type = 'table'")}
        query = (
            "select s.value from CUPTI_ACTIVITY_KIND_KERNEL k join StringIds s on s.id = k.demangledName"
            if "StringIds" in tables
            else "select s.value from CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL k join StringTable s on s._id_ = k.name"
        )
        return Counter(name for (name,) in connection.execute(query))
    with (gzip.open if path.suffix == ".gz" else open)(path, "rt") as file:
        trace = json.load(file)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    return Counter(event["name"] for event in events if event.get("cat") in ("kernel", "Kernel"))


@pytest.mark.e2e
@pytest.mark.parametrize(("relative_path", "kernels", "distinct"), RECORDINGS)
def test_table_holds_every_recorded_name(shared_data, relative_path, kernels, distinct):
    recorded = _recorded_kernel_names(shared_data / relative_path)
    assert (sum(recorded.values()), len(recorded)) == (kernels, distinct)
    table = {name for _, name, *_ in ROWS}
    if "cloverleaf" in relative_path:  # the table samples it: 9 rows, all real
        sampled = {name for name in table if name.startswith("void clover::")}
        assert len(sampled) == 9 and sampled <= set(recorded)
    else:
        assert set(recorded) <= table
