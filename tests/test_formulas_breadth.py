"""Breadth: ~100 ops beyond the hand-computed family tests, run for real. Each must get numbers
(flops and bytes, not na) from the arguments torch actually records, read at the positions and names
torch's schema gives (the recorder's check), and the same numbers whether the record carries every
argument (Kineto) or only those passed (live capture)."""

import pytest
import torch
import torch.nn.functional as F

from tests.formula_recorder import checked_evaluate_both, record

r = torch.randn

CASES = {
    "conv1d_unbatched": lambda: F.conv1d(r(3, 10), r(4, 3, 3)),
    "conv_same": lambda: F.conv2d(r(1, 3, 8, 8), r(4, 3, 3, 3), padding="same"),
    "conv3d": lambda: F.conv3d(r(1, 2, 5, 5, 5), r(3, 2, 3, 3, 3), stride=2),
    "convT1d": lambda: F.conv_transpose1d(r(1, 4, 5), r(4, 2, 3), stride=2, output_padding=1),
    "embbag2d": lambda: F.embedding_bag(torch.randint(0, 10, (3, 4)), r(10, 5), mode="max"),
    "embbag_psw": lambda: F.embedding_bag(
        torch.randint(0, 10, (6,)), r(10, 5), torch.tensor([0, 2]), mode="sum", per_sample_weights=r(6)
    ),
    "scatter_value": lambda: torch.zeros(3, 4).scatter_(1, torch.zeros(3, 1, dtype=torch.long), 2.0),
    "scatter_reduce": lambda: torch.zeros(3, 4).scatter_reduce(1, torch.zeros(3, 2, dtype=torch.long), r(3, 2), "amax"),
    "var_mean": lambda: torch.var_mean(r(4, 5), 1),
    "std_all": lambda: torch.std(r(4, 5)),
    "prod_all": lambda: torch.prod(r(4, 5)),
    "median_dim": lambda: torch.median(r(4, 5), 1),
    "median_all": lambda: torch.median(r(4, 5)),
    "kthvalue": lambda: torch.kthvalue(r(4, 5), 2, 1),
    "norm_p1": lambda: torch.norm(r(4, 5), 1, dim=1),
    "norm_fro": lambda: torch.norm(r(4, 5)),
    "min_other": lambda: torch.ops.aten.min.other(r(4, 5), r(4, 5)),
    "max_all": lambda: torch.max(r(4, 5)),
    "logcumsumexp": lambda: torch.logcumsumexp(r(4, 5), 1),
    "softplus": lambda: F.softplus(r(4)),
    "elu": lambda: F.elu(r(4)),
    "leaky": lambda: F.leaky_relu(r(4)),
    "hardswish": lambda: F.hardswish(r(4)),
    "mish": lambda: F.mish(r(4)),
    "glu": lambda: F.glu(r(4, 6)),
    "logsigmoid": lambda: F.logsigmoid(r(4)),
    "prelu": lambda: F.prelu(r(2, 3), r(3)),
    "round_dec": lambda: torch.round(r(4), decimals=2),
    "nan_to_num": lambda: torch.nan_to_num(r(4)),
    "atan2": lambda: torch.atan2(r(4), r(4)),
    "floor_div": lambda: torch.floor_divide(r(4), 2),
    "remainder": lambda: torch.remainder(r(4), 2),
    "bitwise": lambda: torch.bitwise_and(torch.ones(4, dtype=torch.int32), 3),
    "logical_and": lambda: torch.logical_and(r(4) > 0, r(4) > 0),
    "rsub": lambda: torch.rsub(r(4), 1.0),
    "flip": lambda: torch.flip(r(3, 4), [0]),
    "roll": lambda: torch.roll(r(3, 4), 1, 0),
    "tril": lambda: torch.tril(r(4, 4)),
    "repeat": lambda: r(2, 3).repeat(2, 2),
    "repeat_interleave": lambda: torch.repeat_interleave(r(2, 3), 2, dim=0),
    "reflection_pad": lambda: F.pad(r(1, 2, 5), (2, 2), mode="reflect"),
    "replicate_pad": lambda: F.pad(r(1, 2, 4, 4), (1, 1, 1, 1), mode="replicate"),
    "argsort": lambda: torch.argsort(r(4, 5), dim=1),
    "sort_stable": lambda: torch.sort(r(4, 5), stable=True, dim=0),
    "searchsorted": lambda: torch.searchsorted(torch.arange(10.0), r(5)),
    "bucketize": lambda: torch.bucketize(r(5), torch.arange(10.0)),
    "index_copy": lambda: torch.zeros(5, 3).index_copy_(0, torch.tensor([0, 4]), r(2, 3)),
    "index_fill": lambda: torch.zeros(5, 3).index_fill_(0, torch.tensor([0, 4]), 1.0),
    "masked_scatter": lambda: torch.zeros(4).masked_scatter_(torch.tensor([True, False, True, False]), r(4)),
    "take": lambda: torch.take(r(3, 4), torch.tensor([0, 5])),
    "take_along_dim": lambda: torch.take_along_dim(r(3, 4), torch.zeros(3, 1, dtype=torch.long), 1),
    "upsample_nearest3d": lambda: F.interpolate(r(1, 1, 2, 2, 2), scale_factor=2),
    "upsample_linear1d": lambda: F.interpolate(r(1, 1, 4), size=7, mode="linear"),
    "trilinear": lambda: F.interpolate(r(1, 1, 2, 2, 2), scale_factor=2, mode="trilinear"),
    "grid_sample": lambda: F.grid_sample(r(1, 2, 4, 4), r(1, 3, 3, 2), align_corners=False),
    "avg_pool1d": lambda: F.avg_pool1d(r(1, 2, 8), 2),
    "max_pool3d": lambda: F.max_pool3d(r(1, 1, 4, 4, 4), 2),
    "avg_pool3d": lambda: F.avg_pool3d(r(1, 1, 4, 4, 4), 2),
    "adaptive_avg3d": lambda: F.adaptive_avg_pool3d(r(1, 1, 4, 4, 4), 2),
    "smooth_l1": lambda: F.smooth_l1_loss(r(4), r(4)),
    "huber": lambda: F.huber_loss(r(4), r(4)),
    "soft_margin": lambda: F.soft_margin_loss(r(4), r(4)),
    "bce": lambda: F.binary_cross_entropy(torch.rand(4), torch.rand(4)),
    "bce_logits_pw": lambda: F.binary_cross_entropy_with_logits(r(4), torch.rand(4), pos_weight=torch.ones(4)),
    "group_norm": lambda: F.group_norm(r(2, 4, 3), 2),
    "instance_norm": lambda: F.instance_norm(r(2, 3, 4)),
    "randn": lambda: torch.randn(3, 4),
    "rand_like": lambda: torch.rand_like(r(3)),
    "randint": lambda: torch.randint(0, 5, (3,)),
    "randperm": lambda: torch.randperm(5),
    "bernoulli": lambda: torch.bernoulli(torch.rand(4)),
    "full_like": lambda: torch.full_like(r(3), 2),
    "new_zeros": lambda: r(2).new_zeros((3, 4)),
    "linspace": lambda: torch.linspace(0, 1, 5),
    "logspace": lambda: torch.logspace(0, 1, 5),
    "scalar_tensor": lambda: torch.scalar_tensor(3.0),
    "eye": lambda: torch.eye(3),
    "foreach_norm": lambda: torch._foreach_norm([r(3), r(4)]),
    "foreach_pow": lambda: torch._foreach_pow([r(3), r(4)], 2.0),
    "foreach_max": lambda: torch._foreach_max([r(3), r(4)]),
    "foreach_copy": lambda: torch._foreach_copy_([r(3), r(4)], [r(3), r(4)]),
    "fused_adam_ams": lambda: torch._fused_adam_(
        [r(3)],
        [r(3)],
        [r(3)],
        [r(3)],
        [r(3)],
        [torch.tensor(1.0)],
        lr=1e-3,
        beta1=0.9,
        beta2=0.99,
        weight_decay=0.1,
        eps=1e-8,
        amsgrad=True,
        maximize=False,
    ),
    "fused_adagrad": lambda: torch._fused_adagrad_(
        [r(3)], [r(3)], [r(3)], [torch.tensor(1.0)], lr=0.1, lr_decay=0.0, weight_decay=0.0, eps=1e-10, maximize=False
    ),
    "addmv": lambda: torch.addmv(r(3), r(3, 4), r(4)),
    "outer": lambda: torch.outer(r(3), r(4)),
    "addr": lambda: torch.addr(r(3, 4), r(3), r(4)),
    "dot": lambda: torch.dot(r(4), r(4)),
    "mv": lambda: torch.mv(r(3, 4), r(4)),
    "addbmm": lambda: torch.addbmm(r(3, 5), r(2, 3, 4), r(2, 4, 5)),
    "gru_cell": lambda: torch.nn.GRUCell(4, 5)(r(2, 4)),
    "dropout_eval": lambda: torch.ops.aten.native_dropout(r(4), 0.5, False),
    "cumprod": lambda: torch.cumprod(r(4, 5), 0),
    "aminmax": lambda: torch.aminmax(r(4, 5), dim=1),
    "count_nonzero": lambda: torch.count_nonzero(r(4, 5), dim=1),
    "nansum": lambda: torch.nansum(r(4, 5), 1),
    "logit": lambda: torch.logit(torch.rand(4)),
    "hypot": lambda: torch.hypot(r(4), r(4)),
    "xlogy": lambda: torch.xlogy(r(4), r(4)),
    "lerp_tensor": lambda: torch.lerp(r(4), r(4), r(4)),
    "where_scalar": lambda: torch.where(r(4) > 0, r(4), 0.0),
    "clamp_tensor": lambda: torch.clamp(r(4), r(4), r(4)),
    "pixel_shuffle": lambda: F.pixel_shuffle(r(1, 4, 2, 2), 2),
    "index_put_bool": lambda: r(5, 3).index_put_((r(5) > 0,), torch.tensor(0.0)),
    "nonzero_static": lambda: torch.nonzero_static(r(5), size=3),
    "unique": lambda: torch.unique(torch.tensor([1, 2, 2])),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_formula_computes_from_the_recorded_arguments(case):
    # Kineto-style records (every argument) and live-style ones (arguments as passed) of the same calls.
    ops, _ = record(CASES[case])
    live_ops, _ = record(CASES[case], live_style=True)
    assert [op.name for op in live_ops] == [op.name for op in ops]
    costs = {f"{op.name}.{op.overload}": checked_evaluate_both(op, live) for op, live in zip(ops, live_ops)}
    assert {name: cost.reason for name, cost in costs.items() if cost.flops is None or cost.bytes is None} == {}
