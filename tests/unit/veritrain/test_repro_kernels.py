"""The kernels a repro2 training step really runs, recorded below autograd.

The inventory (test_repro_inventory.py) audits what `veritrain.repro` calls from Python. A
training step also runs kernels nobody calls from Python: autograd's own formulas, such as the
`sum` that reduces a gradient over a broadcast dimension. Such a native float32 reduction sums
in the kernel's order, which differs between CPU and CUDA, so its bits do too. A
`TorchDispatchMode` sees every ATen kernel, the ones autograd runs included; this test trains
one step of every preset under it and fails on any kernel that reduces or multiplies floats
in an order of its own: a float `sum`/`mean`/norm-like reduction, or a matrix product on
anything but the exact float64 integer GEMM. The presets include `llama-char`, whose step
runs RMSNorm, RoPE, grouped-query attention and SwiGLU.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from tests.utils.preset_data import have_preset_data
from veritrain.presets import PRESETS, preset
from veritrain.spec import REPRO_ARITH
from veritrain.training import TrainingEngine

# ATen kernels whose floating-point result depends on a summation order the kernel chooses
ORDERED_REDUCTIONS = {
    "sum", "mean", "nansum", "prod", "cumsum", "cumprod", "norm", "linalg_vector_norm",
    "var", "std", "var_mean", "std_mean", "logsumexp", "_softmax", "_log_softmax",
    "_softmax_backward_data", "_log_softmax_backward_data", "native_layer_norm",
    "native_layer_norm_backward", "_fused_rms_norm", "_fused_rms_norm_backward",
    "embedding_dense_backward", "index_add", "scatter_add",
    "scatter_reduce", "index_reduce", "dot", "vdot", "mv", "addmv", "addr", "einsum",
    "nll_loss_forward", "nll_loss_backward", "bincount", "histc",
}  # fmt: skip
# matrix products: exact only on float64 operands holding small integers (repro's GEMM)
PRODUCTS = {"mm", "bmm", "addmm", "addbmm", "baddbmm", "matmul", "_addmm_activation"}


class _Kernels(TorchDispatchMode):
    """Records each ATen kernel with the dtypes of its tensor arguments."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, set[tuple[str, ...]]] = defaultdict(set)

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        dtypes = tuple(
            str(a.dtype).removeprefix("torch.")
            for a in (*args, *(kwargs or {}).values())
            if isinstance(a, torch.Tensor)
        )
        self.seen[func.overloadpacket.__name__].add(dtypes)
        return func(*args, **(kwargs or {}))


def offending(seen: dict[str, set[tuple[str, ...]]]) -> list[str]:
    """The kernels among `seen` that sum floats in an order of their own."""
    bad = []
    for name, calls in sorted(seen.items()):
        for dtypes in sorted(calls):
            floats = {d for d in dtypes if d.startswith(("float", "bfloat", "complex"))}
            if name in ORDERED_REDUCTIONS and floats:
                bad.append(f"aten.{name}{dtypes}")
            elif name in PRODUCTS and floats - {"float64"}:
                bad.append(f"aten.{name}{dtypes}")
    return bad


def _step_kernels(name: str) -> dict[str, set[tuple[str, ...]]]:
    engine = TrainingEngine(preset(name, REPRO_ARITH, total_steps=2, checkpoint_interval=2))
    state = engine.init_state()
    with _Kernels() as rec:
        engine.train_step(state)
    return rec.seen


@pytest.mark.parametrize("name", PRESETS)
def test_a_repro2_step_runs_no_kernel_that_sums_floats_in_its_own_order(name: str) -> None:
    if not have_preset_data(name):
        pytest.skip(f"the data of {name} is absent: run scripts/setup.sh")
    seen = _step_kernels(name)
    assert "mm" in seen  # the recorder sees the real kernels (the exact float64 GEMM)
    assert offending(seen) == []


def test_the_check_sees_a_broadcast_gradient_and_a_float32_product() -> None:
    """A bias broadcast over the batch, trained natively: autograd reduces its gradient with a
    float32 `sum`, and the product is a float32 `mm`; both must be reported."""
    w = torch.randn(4, 3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    with _Kernels() as rec:
        (torch.randn(5, 4) @ w + b).square().sum().backward()
    bad = offending(rec.seen)
    assert any(s.startswith("aten.sum(") and "float32" in s for s in bad)
    assert any(s.startswith("aten.mm(") for s in bad)
