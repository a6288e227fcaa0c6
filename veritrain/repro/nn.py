"""Reproducible neural-network operators: softmax, layer_norm, rms_norm, cross_entropy, embedding.

Each one is a `torch.autograd.Function` whose forward and backward run in float64 from the
operators of this package (`exp64`, `log64`, `sum_tree64`, exact integer accumulation) and
IEEE-754 basic operations, and round once to float32. Divisions are always tensor by tensor:
CUDA kernels turn a division by a Python scalar into a multiplication by its reciprocal, a
different rounding from the CPU's true division, so scalars only ever multiply here.

Run: not a script; `from veritrain.repro import softmax, layer_norm, rms_norm, embedding`.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from veritrain.repro._common import ReproError, apply_fn, check32, pow2, to64
from veritrain.repro.elementwise import exp64, log64
from veritrain.repro.fused import (
    layer_norm_backward_fused,
    layer_norm_forward_fused,
    rms_norm_backward_fused,
    rms_norm_forward_fused,
    softmax_backward_fused,
    softmax_forward_fused,
    use_fused,
)
from veritrain.repro.reduce import sum_tree64
from veritrain.repro.sqrt import sqrt64

__all__ = ["cross_entropy", "embedding", "layer_norm", "rms_norm", "softmax"]


def _row_max(x: torch.Tensor, dim: int) -> torch.Tensor:
    """Float64 max of float32 `x` along `dim` (kept), rows that are all -inf giving 0.

    Taken on the float32 operand (half the bytes of its float64 copy; exact either way).
    """
    m = x.amax(dim=dim, keepdim=True).to(torch.float64)
    return torch.where(torch.isneginf(m), torch.zeros_like(m), m)


def _softmax64(x: torch.Tensor, dim: int) -> torch.Tensor:
    """Float64 softmax of float32 `x` along `dim` (`exp64`, fixed-order sum, one division)."""
    e = to64(x).sub_(_row_max(x, dim))
    e = exp64(e)
    return e.div_(sum_tree64(e, dim, keepdim=True))


class _Softmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, dim: int) -> torch.Tensor:
        # along a contiguous CPU operand's last dim: the fused kernel, the same bits
        if dim == x.dim() - 1 and x.shape[-1] and use_fused(x):
            y = softmax_forward_fused(x)
        else:
            y = _softmax64(x, dim).to(torch.float32)
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        (y,) = ctx.saved_tensors
        if ctx.dim == y.dim() - 1 and y.shape[-1] and use_fused(y, grad):
            return softmax_backward_fused(y, grad), None
        return _softmax_backward64(y, grad, ctx.dim).to(torch.float32), None


def _softmax_backward64(y: torch.Tensor, grad: torch.Tensor, dim: int) -> torch.Tensor:
    """Softmax's input gradient in float64 before its rounding: `g y - y sum_fixed(g y)`."""
    y64 = to64(y)
    gy = to64(grad).mul_(y64)
    dot = sum_tree64(gy, dim, keepdim=True)
    return gy.sub_(y64.mul_(dot))


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Softmax along `dim`, bit-identical on every IEEE-754 machine.

    `exp(x - max) / sum_fixed(exp(x - max))` in float64 (`exp64`, pairwise sum), rounded once.
    Entries at -inf (a causal mask) give exactly 0; a row that is entirely -inf gives NaN, as
    `torch.softmax` does. Backward: `y * (g - sum_fixed(g * y))`.

    Args:
        x: float32 tensor (..., n, ...).
        dim: the dimension to normalise over.

    Returns:
        float32 tensor of `x`'s shape.

    Raises:
        ReproError: `x` is not float32 or `dim` is out of range.
    """
    check32("softmax", x)
    if not -x.dim() <= dim < max(x.dim(), 1):
        raise ReproError(f"repro.softmax: dim {dim} out of range for a {x.dim()}-d tensor")
    return apply_fn(_Softmax, x, dim % max(x.dim(), 1))


def _ln_stats(x64: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(xhat, rstd) of a float64 tensor over its last dim, with fixed-order sums."""
    inv_d = 1.0 / x64.shape[-1]
    mean = sum_tree64(x64, -1, keepdim=True) * inv_d
    xc = x64 - mean
    var = sum_tree64(xc * xc, -1, keepdim=True) * inv_d
    rstd = torch.ones_like(var) / sqrt64(var + eps)
    return xc * rstd, rstd


class _LayerNorm(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: Any,
        x: torch.Tensor,
        weight: torch.Tensor | None,
        bias: torch.Tensor | None,
        eps: float,
    ) -> torch.Tensor:
        ctx.has_bias = bias is not None
        if weight is not None and bias is not None and use_fused(x, weight, bias):
            y32, xhat, rstd = layer_norm_forward_fused(x, weight, bias, eps)  # one pass per row
            ctx.save_for_backward(xhat, rstd, weight)
            return y32
        xhat, rstd = _ln_stats(to64(x), eps)
        ctx.save_for_backward(xhat, rstd, weight)  # float64, reused by the backward
        y = xhat * to64(weight) if weight is not None else xhat.clone()
        if bias is not None:
            y.add_(bias)  # in float64 (the float32 bias converts exactly)
        return y.to(torch.float32)

    @staticmethod
    def backward(
        ctx: Any, grad: torch.Tensor
    ) -> tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor | None, None]:
        xhat, rstd, weight = ctx.saved_tensors
        if weight is not None and ctx.has_bias and use_fused(grad, weight, xhat, rstd):
            fx, fw, fb = layer_norm_backward_fused(grad, weight, xhat, rstd)
            need = ctx.needs_input_grad
            return (fx if need[0] else None, fw if need[1] else None, fb if need[2] else None, None)
        grads = _ln_backward64(grad, weight, xhat, rstd, ctx.has_bias, ctx.needs_input_grad[:3])
        gx, gw, gb = (t.to(torch.float32) if t is not None else None for t in grads)
        return gx, gw, gb, None


def _ln_backward64(
    grad: torch.Tensor,
    weight: torch.Tensor | None,
    xhat: torch.Tensor,
    rstd: torch.Tensor,
    has_bias: bool,
    need: tuple[bool, bool, bool],
) -> tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor | None]:
    """LayerNorm's input, weight and bias gradients in float64 before their rounding (those
    `need`s that exist)."""
    d = xhat.shape[-1]
    g = to64(grad)
    gx = gw = gb = None
    if need[0]:
        dxhat = g * to64(weight) if weight is not None else g
        inv_d = 1.0 / d
        a = sum_tree64(dxhat, -1, keepdim=True) * inv_d
        b = sum_tree64(dxhat * xhat, -1, keepdim=True) * inv_d
        gx = (dxhat - a - xhat * b) * rstd
    if weight is not None and need[1]:
        gw = sum_tree64((g * xhat).reshape(-1, d), 0)
    if has_bias and need[2]:
        gb = sum_tree64(g.reshape(-1, d), 0)
    return gx, gw, gb


def layer_norm(
    x: torch.Tensor,
    weight: torch.Tensor | None,
    bias: torch.Tensor | None,
    eps: float = 1e-5,
) -> torch.Tensor:
    """Layer normalisation over the last dim (as `F.layer_norm(x, (D,), weight, bias, eps)`).

    Mean and biased variance by fixed-order pairwise sums in float64, `rstd = 1/sqrt(var+eps)`
    (correctly rounded sqrt and division), `y = (x - mean) * rstd * weight + bias`, rounded
    once. Backward: the standard formula with the same sums; weight and bias gradients are
    fixed-order sums over the flattened leading dims.

    Args:
        x: float32 (..., D).
        weight: float32 (D,) or None (no scale).
        bias: float32 (D,) or None (no shift).
        eps: added to the variance (a Python float).

    Returns:
        float32 (..., D).

    Raises:
        ReproError: a dtype other than float32, or weight/bias not of shape (D,).
    """
    check32("layer_norm", x, weight, bias)
    d = x.shape[-1] if x.dim() else 0
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != (d,):
            raise ReproError(f"repro.layer_norm: {name} {tuple(t.shape)} != ({d},)")
    if d == 0:
        raise ReproError("repro.layer_norm: the last dim is empty")
    return apply_fn(_LayerNorm, x, weight, bias, float(eps))


def _rms_stats(x64: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(xhat, rstd) of a float64 tensor over its last dim: `rstd = 1/sqrt(mean(x^2) + eps)`."""
    inv_d = 1.0 / x64.shape[-1]  # correctly rounded (exact for a power-of-two D)
    ms = sum_tree64(x64 * x64, -1, keepdim=True) * inv_d
    rstd = torch.ones_like(ms) / sqrt64(ms + eps)
    return x64 * rstd, rstd


class _RMSNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
        if use_fused(x, weight):  # one pass per row (`repro.fused`), the same bits
            y, xhat, rstd = rms_norm_forward_fused(x, weight, eps)
            ctx.save_for_backward(xhat, rstd, weight)
            return y
        xhat, rstd = _rms_stats(to64(x), eps)
        ctx.save_for_backward(xhat, rstd, weight)  # float64, reused by the backward
        return (xhat * to64(weight)).to(torch.float32)

    @staticmethod
    def backward(
        ctx: Any, grad: torch.Tensor
    ) -> tuple[torch.Tensor | None, torch.Tensor | None, None]:
        xhat, rstd, weight = ctx.saved_tensors
        if use_fused(grad, weight, xhat, rstd):
            gx32, gw32 = rms_norm_backward_fused(grad, weight, xhat, rstd)
            return (
                gx32 if ctx.needs_input_grad[0] else None,
                gw32 if ctx.needs_input_grad[1] else None,
                None,
            )
        gx, gw = _rms_backward64(grad, weight, xhat, rstd, ctx.needs_input_grad[:2])
        return (
            gx.to(torch.float32) if gx is not None else None,
            gw.to(torch.float32) if gw is not None else None,
            None,
        )


def _rms_backward64(
    grad: torch.Tensor,
    weight: torch.Tensor,
    xhat: torch.Tensor,
    rstd: torch.Tensor,
    need: tuple[bool, bool],
) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """RMSNorm's input and weight gradients in float64 before their rounding (those `need`s)."""
    d = xhat.shape[-1]
    g = to64(grad)
    gx = gw = None
    if need[0]:
        # y = w x r with r = (mean(x^2) + eps)^(-1/2), dr/dx_j = -r^3 x_j / D:
        # dx = r (u - xhat mean(u xhat)) with u = g w
        u = g * to64(weight)
        b = sum_tree64(u * xhat, -1, keepdim=True) * (1.0 / d)
        gx = (u - xhat * b) * rstd
    if need[1]:
        gw = sum_tree64((g * xhat).reshape(-1, d), 0)
    return gx, gw


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """Root-mean-square normalisation over the last dim (Zhang and Sennrich 2019; Llama's norm).

    `y = x * rsqrt(mean(x^2) + eps) * weight`, as `F.rms_norm(x, (D,), weight, eps)`: the
    mean square is a fixed-order pairwise sum (`sum_tree64`) times the correctly rounded
    `1/D` (exact when D is a power of two), `rsqrt = 1 / sqrt64(...)` (correctly rounded
    square root and division), all in float64, rounded once to float32. Backward (analytic):
    `dx = rstd * (u - xhat * mean(u * xhat))` with `u = grad * weight`, `xhat = x * rstd`;
    `dweight` is the fixed-order sum of `grad * xhat` over the flattened leading dims.

    Args:
        x: float32 (..., D).
        weight: float32 (D,).
        eps: added to the mean square (a Python float).

    Returns:
        float32 (..., D).

    Raises:
        ReproError: a dtype other than float32, operands on different devices, an empty last
            dim, or weight not of shape (D,).
    """
    check32("rms_norm", x, weight)
    d = x.shape[-1] if x.dim() else 0
    if d == 0:
        raise ReproError("repro.rms_norm: the last dim is empty")
    if tuple(weight.shape) != (d,):
        raise ReproError(f"repro.rms_norm: weight {tuple(weight.shape)} != ({d},)")
    return apply_fn(_RMSNorm, x, weight, float(eps))


class _CrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, logits: torch.Tensor, target: torch.Tensor, ignore: int) -> torch.Tensor:
        x64 = to64(logits)
        valid = target != ignore
        count = int(valid.sum().item())
        safe = torch.where(valid, target, torch.zeros_like(target)).unsqueeze(1)  # (B, 1)
        m = _row_max(logits, 1)
        lse = m + log64(sum_tree64(exp64(x64 - m), 1, keepdim=True))  # (B, 1)
        per_row = (lse - x64.gather(1, safe)).squeeze(1)
        per_row = torch.where(valid, per_row, torch.zeros_like(per_row))
        total = sum_tree64(per_row, 0)
        ctx.save_for_backward(logits, safe, valid)
        ctx.count = count
        if count == 0:
            return torch.full_like(total, math.nan).to(torch.float32)
        return (total * (1.0 / count)).to(torch.float32)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None, None]:
        logits, safe, valid = ctx.saved_tensors
        probs = _softmax64(logits, 1)
        onehot = torch.zeros_like(probs).scatter_(1, safe, 1.0)
        scale = to64(grad) * (1.0 / max(ctx.count, 1))
        d = (probs - onehot) * scale
        d = torch.where(valid.unsqueeze(1), d, torch.zeros_like(d))
        return d.to(torch.float32), None, None


def cross_entropy(
    logits: torch.Tensor, target: torch.Tensor, ignore_index: int = -100
) -> torch.Tensor:
    """Mean cross-entropy in nats (as `F.cross_entropy(logits, target)`), reproducibly.

    Per row `logsumexp(x) - x[target]` with `logsumexp = max + log(sum_fixed(exp(x - max)))`
    (`exp64`, `log64`, pairwise sums, float64), then the fixed-order mean over the rows that
    are not `ignore_index`. Backward: `(softmax(x) - onehot(target)) * grad / count`.

    Args:
        logits: float32 (B, C).
        target: int64 (B,), class ids in [0, C) or `ignore_index`.
        ignore_index: target value whose rows are left out of the mean (torch's default -100;
            nanoGPT passes -1).

    Returns:
        float32 scalar (0-d); NaN if every row is ignored, as torch.

    Raises:
        ReproError: wrong dtypes or shapes, devices that differ, or a target out of range.
    """
    check32("cross_entropy", logits)
    if target.dtype != torch.int64:
        raise ReproError(f"repro.cross_entropy: target must be int64, got {target.dtype}")
    if logits.dim() != 2 or target.dim() != 1 or target.shape[0] != logits.shape[0]:
        raise ReproError(
            f"repro.cross_entropy: need logits (B, C) and target (B,), got "
            f"{tuple(logits.shape)} and {tuple(target.shape)}"
        )
    if target.device != logits.device:
        raise ReproError("repro.cross_entropy: logits and target on different devices")
    c = logits.shape[1]
    bad = (target != ignore_index) & ((target < 0) | (target >= c))
    if bool(bad.any()):
        raise ReproError(f"repro.cross_entropy: target outside [0, {c}) and not {ignore_index}")
    return apply_fn(_CrossEntropy, logits, target, int(ignore_index))


def _sum_rows_exact(ids: torch.Tensor, rows: torch.Tensor, num: int) -> torch.Tensor:
    """`out[v] = sum of rows[i] with ids[i] == v`, order-independent, as float64 (V, D).

    Each column of `rows` (N, D) is rounded to integers of `p = 53 - ceil(log2 N)` bits under
    one power-of-two scale, so every partial sum is an integer below 2**53 and the
    accumulation (`index_put_` with `accumulate=True`, in any order) is exact.
    """
    n = rows.shape[0]
    acc = torch.zeros((num, rows.shape[1]), dtype=torch.float64, device=rows.device)
    if n == 0:  # nothing to add (and amax over an empty dim is undefined)
        return acc
    p = 53 - (n - 1).bit_length()
    g64 = to64(rows)
    _, e = torch.frexp(g64.abs().amax(dim=0, keepdim=True))  # (1, D)
    e = e.to(torch.int64)
    q = torch.round(g64 * pow2(p - e))
    acc.index_put_((ids,), q, accumulate=True)
    return acc * pow2(e - p)


class _Embedding(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, ids: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
        flat = ids.reshape(-1)
        ctx.save_for_backward(flat)
        ctx.num = table.shape[0]
        return table.index_select(0, flat).reshape(*ids.shape, table.shape[1])

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[None, torch.Tensor]:
        (flat,) = ctx.saved_tensors
        rows = grad.reshape(-1, grad.shape[-1])
        return None, _sum_rows_exact(flat, rows, ctx.num).to(torch.float32)


def embedding(ids: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    """Table lookup `table[ids]` (as `F.embedding`) with an order-independent backward.

    The forward is a gather (exact). The backward scatter-adds the output gradient rows into
    the table rows of their ids; repeated ids would make a float sum order-dependent, so the
    gradient rows are first rounded to block floating point per column (integers of
    `53 - ceil(log2 N)` bits, N = ids.numel()) and accumulated exactly in float64
    (`_sum_rows_exact`), then scaled back and rounded once to float32.

    Args:
        ids: int64 (...) with values in [0, V).
        table: float32 (V, D).

    Returns:
        float32 (..., D).

    Raises:
        ReproError: wrong dtypes or shapes, devices that differ, or an id out of range.
    """
    check32("embedding", table)
    if ids.dtype != torch.int64:
        raise ReproError(f"repro.embedding: ids must be int64, got {ids.dtype}")
    if table.dim() != 2:
        raise ReproError(f"repro.embedding: table must be (V, D), got {tuple(table.shape)}")
    if ids.device != table.device:
        raise ReproError("repro.embedding: ids and table on different devices")
    if ids.numel() and bool(((ids < 0) | (ids >= table.shape[0])).any()):
        raise ReproError(f"repro.embedding: id outside [0, {table.shape[0]})")
    return apply_fn(_Embedding, ids, table)
