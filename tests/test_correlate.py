"""The correlation engine on hand-built records: the same code links live and imported profiles."""

from pyprof_live.profile import Profile
from pyprof_live.records import ApiRecord, KernelRecord, MemoryRecord, OpRecord


def _nested_profile():
    """Thread 1 of pid 7: conv2d [0,100] > convolution [10,90] > cudnn_convolution [20,80]; relu [100,130].

    Launches: corr 1 at t=30 (inside cudnn_convolution), corr 2 at t=85 (inside convolution only),
    corr 3 at t=110 (relu), corr 4 at t=200 (no op). Kernel corr 9 has no launch row.
    """
    ops = [
        OpRecord(
            "aten::conv2d", 0, 100, tid=1, pid=7, seq=4, module="Net.conv", layer=("stem",), mod="torch.nn.functional"
        ),
        OpRecord("aten::convolution", 10, 90, tid=1, pid=7),
        OpRecord("aten::cudnn_convolution", 20, 80, tid=1, pid=7),
        OpRecord("aten::relu", 100, 130, tid=1, pid=7, seq=5),
        OpRecord("ConvolutionBackward0", 300, 400, tid=2, pid=7, kind="node", dir="bwd", altseq=4),
        OpRecord("aten::convolution_backward", 310, 390, tid=2, pid=7),
    ]
    apis = [
        ApiRecord("cudaLaunchKernel", 30, 35, correlation=1, tid=1, pid=7),
        ApiRecord("cudaLaunchKernel", 85, 88, correlation=2, tid=1, pid=7),
        ApiRecord("cudaLaunchKernel", 110, 115, correlation=3, tid=1, pid=7),
        ApiRecord("cudaLaunchKernel", 200, 205, correlation=4, tid=1, pid=7),
        ApiRecord("cudaLaunchKernel", 320, 325, correlation=5, tid=2, pid=7),
        # Same correlation id in another process: must not be joined to pid 7's kernels.
        ApiRecord("cudaLaunchKernel", 30, 35, correlation=1, tid=1, pid=8),
    ]
    kernels = [
        KernelRecord("implicit_convolve_sgemm", 40, 70, correlation=1, pid=7),
        KernelRecord("add_bias", 90, 95, correlation=2, pid=7),
        KernelRecord("relu_kernel", 120, 125, correlation=3, pid=7),
        KernelRecord("stray", 210, 215, correlation=4, pid=7),
        KernelRecord("orphan", 220, 230, correlation=9, pid=7),
        KernelRecord("wgrad", 330, 360, correlation=5, pid=7),
    ]
    memops = [MemoryRecord("memcpy", 112, 118, 4096, copy_kind="HtoD", correlation=3, pid=7)]
    return Profile(ops=ops, apis=apis, kernels=kernels, memops=memops, meta={"source": "test"})


def test_kernels_link_to_the_innermost_op_enclosing_their_launch():
    p = _nested_profile()
    c = p.correlation
    r = p.records
    names = [r.ops[k.op].name if k.op >= 0 else None for k in r.kernels]
    assert names == [
        "aten::cudnn_convolution",
        "aten::convolution",
        "aten::relu",
        None,
        None,
        "aten::convolution_backward",
    ]
    assert [k.launch for k in r.kernels] == [0, 1, 2, 3, -1, 4]
    assert r.memops[0].op == 3
    # 6 kernels, 5 with a launch row, 4 inside an op; 2 unattributed (one outside ops, one without launch).
    assert (c.kernels, c.kernels_with_launch, c.kernels_with_op, c.kernels_unattributed) == (6, 5, 4, 2)


def test_parents_and_inherited_facts():
    p = _nested_profile()
    p.correlation
    ops = p.records.ops
    assert [op.parent for op in ops] == [-1, 0, 1, -1, -1, 4]
    # Module and layer flow down the chain; dir defaults to fwd at the top and is inherited below.
    assert [(op.module, op.layer, op.dir, op.mod) for op in ops[:3]] == [
        ("Net.conv", ("stem",), "fwd", "torch.nn.functional")
    ] * 3
    # The aten op inside a backward node range is bwd, with the node's sequence number...
    assert (ops[5].dir, ops[5].altseq) == ("bwd", 4)
    # ...and both are tied to the forward op with that number, taking its module and layer.
    assert (ops[4].fwd, ops[5].fwd) == (0, 0)
    assert (ops[5].module, ops[5].layer) == ("Net.conv", ("stem",))


def test_external_ids_take_precedence_over_time_containment():
    ops = [OpRecord("aten::mm", 0, 10, tid=1, external_id=100), OpRecord("aten::add", 20, 30, tid=1, external_id=101)]
    # Launched at t=5 (inside mm) but pushed with add's id, e.g. an op launching work asynchronously.
    apis = [ApiRecord("cudaLaunchKernel", 5, 6, correlation=1, tid=1, external_id=101)]
    kernels = [KernelRecord("k", 40, 50, correlation=1)]
    p = Profile(ops=ops, apis=apis, kernels=kernels)
    assert p.correlation.kernels_with_op == 1
    assert p.records.kernels[0].op == 1


def test_backward_op_takes_the_latest_earlier_forward_op_with_its_number():
    ops = [
        OpRecord("aten::mm", 0, 10, tid=1, seq=3),
        OpRecord("aten::mm", 100, 110, tid=1, seq=3),  # same number again (another thread's counter)
        OpRecord("aten::mm", 200, 210, tid=1, dir="bwd", altseq=3),
        OpRecord("aten::mm", 50, 60, tid=1, dir="bwd", altseq=3),
        OpRecord("aten::mm", 5, 6, tid=3, dir="bwd", altseq=99),  # no forward op with that number
    ]
    p = Profile(ops=ops)
    c = p.correlation
    assert [op.fwd for op in p.records.ops] == [-1, -1, 1, 0, -1]
    assert (c.bwd_ops, c.bwd_ops_with_fwd) == (3, 2)


def test_repeated_ids_link_to_the_last_op_and_call_as_before_with_ops_out_of_start_order():
    """Ids are joined through calls/rows sorted by id (no dict per op): the outcome must be a dict's,
    where the last op (call) of a repeated (pid, id) wins, also when ops are not in start order."""
    ext = int("1010")  # built at run time: separate int objects, so sharing one can be checked
    ops = [
        OpRecord("aten::a", 50, 60, tid=1, pid=7, external_id=int("1010")),
        OpRecord("aten::b", 0, 100, tid=1, pid=7, external_id=1011),  # starts before op 0: encloses it
        OpRecord("aten::c", 200, 210, tid=1, pid=7, external_id=int("1010")),  # repeats id 1010: wins
        OpRecord("aten::d", 300, 310, tid=1, pid=8, external_id=int("1010")),  # same id, other process
    ]
    apis = [
        ApiRecord("cudaLaunchKernel", 55, 56, correlation=1, tid=1, pid=7, external_id=ext),  # -> op 2
        ApiRecord("cudaLaunchKernel", 201, 202, correlation=1, tid=1, pid=7, external_id=1011),  # -> op 1
        ApiRecord("cudaLaunchKernel", 305, 306, correlation=2, tid=1, pid=8, external_id=int("1010")),  # -> op 3
        ApiRecord("cudaLaunchKernel", 57, 58, correlation=3, tid=1, pid=7),  # no id: inside aten::a [50, 60]
        ApiRecord("cudaLaunchKernel", 203, 204, correlation=1, tid=1, pid=7, external_id=99),  # no op 99: in c
    ]
    kernels = [
        KernelRecord("k1", 400, 410, correlation=1, pid=7),  # calls 0, 1 and 4 carry 1: the last, 4, wins
        KernelRecord("k2", 420, 430, correlation=2, pid=8),  # call 2
        KernelRecord("k3", 440, 450, correlation=3, pid=8),  # correlation 3 is pid 7's only: no launch
    ]
    p = Profile(ops=ops, apis=apis, kernels=kernels, meta={"source": "test"})
    c = p.correlation
    assert [op.parent for op in ops] == [1, -1, -1, -1]
    assert [api.op for api in apis] == [2, 1, 3, 0, 2]
    assert [(k.launch, k.op) for k in kernels] == [(4, 2), (2, 3), (-1, -1)]
    assert (c.kernels, c.kernels_with_launch, c.kernels_with_op) == (3, 2, 2)
    assert apis[0].external_id == 1010 and apis[0].external_id is ops[2].external_id
    assert kernels[1].correlation is apis[2].correlation


def test_launch_calls_numbered_out_of_time_order_find_their_work():
    """Device work is found where the previous call's ended when ids grow with time, else by bisection:
    here call ids 2, 1, 3 in start order, work of ids 1 and 3 twice (a graph launch's kernels)."""
    apis = [
        ApiRecord("cudaLaunchKernel", 10, 11, correlation=2, tid=1, pid=7),
        ApiRecord("cudaLaunchKernel", 20, 21, correlation=1, tid=1, pid=7),
        ApiRecord("cudaGraphLaunch", 30, 31, correlation=3, tid=1, pid=7),
    ]
    kernels = [
        KernelRecord("a", 40, 41, correlation=1, pid=7),
        KernelRecord("b", 42, 43, correlation=2, pid=7),
        KernelRecord("c", 44, 45, correlation=1, pid=7),
        KernelRecord("d", 46, 47, correlation=3, pid=7),
        KernelRecord("e", 48, 49, correlation=3, pid=7),
    ]
    memops = [MemoryRecord("memset", 50, 51, 64, correlation=2, pid=7)]
    p = Profile(apis=apis, kernels=kernels, memops=memops, meta={"source": "test"})
    p.link()
    assert [k.launch for k in kernels] == [1, 0, 1, 2, 2]
    assert memops[0].launch == 0
