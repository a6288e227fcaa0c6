"""Fixed-order reductions: `sum_fixed` and `mean_fixed`.

A float sum depends on the order of its additions; BLAS, SIMD width and thread count all pick
their own order. Here the order is part of the definition: the reduced dimension is padded
with zeros to a power of two, then the upper half is added onto the lower half until one entry
is left (a pairwise tree, Higham, "The accuracy of floating point summation", SIAM J. Sci.
Comput. 1993). Every step is an elementwise IEEE-754 addition, which no kernel can reorder.
The tree runs in float64 and the result is rounded once to the input dtype.

Run: not a script; `from veritrain.repro import sum_fixed`.
"""

from __future__ import annotations

from typing import Any

import torch

from veritrain.repro._common import ReproError, apply_fn, check_float

__all__ = ["mean_fixed", "sum_fixed", "sum_tree64"]


def sum_tree64(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    """Pairwise sum of `x` along `dim` in float64, in one fixed order (no autograd).

    Args:
        x: tensor of any float dtype; converted to float64 first (exact for float32).
        dim: dimension to reduce (negative counts from the end).
        keepdim: keep the reduced dimension with size 1.

    Returns:
        float64 tensor: `x`'s shape without `dim` (or with size 1 there if `keepdim`).
    """
    y = x.to(torch.float64)
    d = dim % max(y.dim(), 1)
    n = y.shape[d]
    if n == 0:
        shape = y.shape[:d] + y.shape[d + 1 :]
        out = torch.zeros(shape, dtype=torch.float64, device=y.device)
    else:
        # The tree runs along `dim` where it lies (no move to the last dim: over the rows of a
        # row-major (N, D) operand, each halving step is then two contiguous blocks); the
        # additions are the same, `y[i] + y[i + width]` at every level.
        width = 1 << (n - 1).bit_length()
        if width != n:
            pad = (0, 0) * (y.dim() - 1 - d) + (0, width - n)
            y = torch.nn.functional.pad(y, pad)
        lead: tuple[slice, ...] = (slice(None),) * d
        while width > 1:
            width //= 2
            y = y[(*lead, slice(0, width))] + y[(*lead, slice(width, None))]
        at0: tuple[slice | int, ...] = (*lead, 0)
        out = y[at0]
    if keepdim:
        out = out.unsqueeze(d)
    return out


class _SumFixed(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        ctx.dim = dim
        ctx.keepdim = keepdim
        ctx.shape = x.shape
        return sum_tree64(x, dim, keepdim).to(x.dtype)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None, None]:
        if not ctx.keepdim:
            grad = grad.unsqueeze(ctx.dim)
        return grad.expand(ctx.shape).contiguous(), None, None


def _norm_dim(x: torch.Tensor, dim: int, name: str) -> int:
    if not -x.dim() <= dim < max(x.dim(), 1):
        raise ReproError(f"repro.{name}: dim {dim} out of range for a {x.dim()}-d tensor")
    return dim % x.dim()


def sum_fixed(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    """Sum of `x` along `dim` in a fixed pairwise order, bit-identical on every IEEE machine.

    Args:
        x: float32 or float64 tensor (..., n, ...), on any device.
        dim: the dimension to reduce.
        keepdim: keep the reduced dimension with size 1.

    Returns:
        Tensor of `x`'s dtype without `dim`: the float64 pairwise sum rounded once.
        Differentiable (the gradient broadcasts back, which is exact).

    Raises:
        ReproError: a non-float dtype or `dim` out of range.
    """
    check_float("sum_fixed", x)
    d = _norm_dim(x, dim, "sum_fixed")
    return apply_fn(_SumFixed, x, d, keepdim)


def mean_fixed(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    """Mean of `x` along `dim`: `sum_fixed` times the float `1/n` (one IEEE multiply).

    Args:
        x: float32 or float64 tensor, any device; `x.shape[dim]` must be positive.
        dim: the dimension to average over.
        keepdim: keep the reduced dimension with size 1.

    Returns:
        Tensor of `x`'s dtype without `dim`. Differentiable.

    Raises:
        ReproError: a non-float dtype, `dim` out of range, or an empty dimension.
    """
    check_float("mean_fixed", x)
    d = _norm_dim(x, dim, "mean_fixed")
    n = x.shape[d]
    if n == 0:
        raise ReproError("repro.mean_fixed: mean over an empty dimension")
    return sum_fixed(x, d, keepdim) * (1.0 / n)
