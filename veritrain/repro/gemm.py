"""Order-independent matrix product: `matmul` and `linear`.

Method (block floating point, exact integer accumulation):

1. Each row of A and each column of B gets a power-of-two scale from the exponent of its
   largest magnitude (`torch.frexp`, exact): `|x| < 2**e` for every entry of the row/column.
2. The entries become integer mantissas of `p` bits: `round(x * 2**(p - e))` (`torch.round`,
   exact), so `|mantissa| <= 2**p`.
3. With `p = (53 - ceil(log2 k)) // 2` every product is below `2**(2p)` and every partial sum
   of a length-k dot product is an integer of magnitude `<= k * 2**(2p) <= 2**53`: a float64
   GEMM computes it *exactly*, whatever the summation order, blocking, SIMD width, thread
   count, BLAS or device (FMA or not).
4. Scaling back multiplies by exact powers of two (built from the IEEE bit pattern), and the
   float64 value is rounded once to float32.

With `LIMBS = 2` (the default) each operand is split into two `p`-bit integer slices
(`x ~ hi + lo * 2**-p`, the Ozaki scheme, Ozaki et al., Numer. Algorithms 2012) and the
three significant slice products `hi@hi`, `hi@lo`, `lo@hi` are each exact float64 GEMMs; they
are combined by elementwise float64 adds in a fixed order. This keeps about `2p` bits (>= 36
for k <= 2**17) of every entry relative to its row/column maximum, more than float32's 24.
docs/REPRO.md has the measured error and speed of both settings.

Run: not a script; `from veritrain.repro import matmul, linear`.
"""

from __future__ import annotations

from typing import Any, Final

import torch

from veritrain.repro._common import ReproError, apply_fn, check32, pow2, to64
from veritrain.repro.reduce import sum_tree64

__all__ = ["LIMBS", "linear", "matmul", "mantissa_bits", "matmul64"]

LIMBS: Final = 2
"""Integer slices per operand (1: one GEMM, about `p` bits kept; 2: three GEMMs, `2p` bits)."""


def mantissa_bits(k: int) -> int:
    """Bits `p` of each integer mantissa for a contraction of length `k`.

    Chosen so that `k * 2**(2p) <= 2**53`: every partial sum of products of two mantissas
    (each of magnitude at most `2**p`) is an integer that float64 holds exactly.

    Args:
        k: the contraction length (>= 1).

    Returns:
        `(53 - ceil(log2 k)) // 2`, computed with integers only.
    """
    return (53 - (max(k, 1) - 1).bit_length()) // 2


def _slices(
    x64: torch.Tensor, dim: int, p: int, limbs: int
) -> tuple[list[torch.Tensor], torch.Tensor]:
    """Integer mantissa slices of `x64` with one power-of-two scale per slice along `dim`.

    Returns the slices (float64 integers, |v| <= 2**p) and the exponents `e` (int64, with
    `dim` kept as size 1) such that `x ~ sum_j slice_j * 2**(e - p*(j+1))`.
    """
    lo_val, hi_val = torch.aminmax(x64, dim=dim, keepdim=True)
    amax = torch.maximum(-lo_val, hi_val)  # max |x| without an |x| pass over the operand
    _, e = torch.frexp(amax)  # amax = m * 2**e with 0.5 <= m < 1 (e = 0 for amax = 0)
    e = e.to(torch.int64)
    scaled = x64 * pow2(p - e)  # exact: |scaled| < 2**p
    out = []
    for _ in range(limbs - 1):
        q = torch.round(scaled)
        out.append(q)
        # exact: |scaled - q| <= 1/2 and a float32 mantissa has 24 bits (in place, to spare a
        # full-size temporary)
        scaled.sub_(q).mul_(float(2**p))
    out.append(scaled.round_())
    return out, e


def matmul64(a: torch.Tensor, b: torch.Tensor, limbs: int | None = None) -> torch.Tensor:
    """Order-independent product of float32 matrices, returned in float64 (no autograd).

    Args:
        a: float32 (..., m, k).
        b: float32 (..., k, n), same leading (batch) dims as `a`.
        limbs: slices per operand (default `LIMBS`).

    Returns:
        float64 (..., m, n): a value that depends only on the operands' values, never on how
        the GEMM orders its sums.
    """
    nl = LIMBS if limbs is None else limbs
    k = a.shape[-1]
    if k == 0:  # an empty sum is exactly 0 (and amax over an empty dim is undefined)
        shape = (*a.shape[:-1], b.shape[-1])
        return torch.zeros(shape, dtype=torch.float64, device=a.device)
    p = mantissa_bits(k)
    sa, ea = _slices(to64(a), -1, p, nl)  # ea: (..., m, 1)
    sb, eb = _slices(to64(b), -2, p, nl)  # eb: (..., 1, n)
    acc = torch.matmul(sa[0], sb[0])  # exact integers, scale 2**-2p
    if nl > 1:
        cross = torch.matmul(sa[0], sb[1]) + torch.matmul(sa[1], sb[0])  # scale 2**-3p
        acc = acc + cross * (1.0 / float(2**p))  # exact power of two, no float pow
    return acc * pow2(ea - 2 * p) * pow2(eb)


def _mm32(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return matmul64(a, b).to(torch.float32)


class _MatMul(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(a, b)
        return _mm32(a, b)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        a, b = ctx.saved_tensors
        ga = _mm32(grad, b.transpose(-1, -2)) if ctx.needs_input_grad[0] else None
        gb = _mm32(a.transpose(-1, -2), grad) if ctx.needs_input_grad[1] else None
        return ga, gb


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Matrix product `a @ b` whose float32 result is the same on every machine.

    Block floating point with exact float64 integer accumulation (see the module docstring);
    the backward computes `grad @ b^T` and `a^T @ grad` with this same operator.

    Args:
        a: float32 (..., m, k).
        b: float32 (..., k, n) with the same batch dims as `a`, or a 2-d (k, n) matrix that
            is applied to every batch entry of `a`.

    Returns:
        float32 (..., m, n).

    Raises:
        ReproError: a dtype other than float32, fewer than 2 dims, mismatched inner or batch
            dims, or operands on different devices.
    """
    check32("matmul", a, b)
    if a.dim() < 2 or b.dim() < 2:
        raise ReproError(f"repro.matmul: need >= 2-d operands, got {a.dim()}-d and {b.dim()}-d")
    if a.shape[-1] != b.shape[-2]:
        raise ReproError(f"repro.matmul: inner dims differ: {tuple(a.shape)} @ {tuple(b.shape)}")
    if b.dim() == 2 and a.dim() > 2:
        lead = a.shape[:-1]
        flat = a.reshape(-1, a.shape[-1])
        out = apply_fn(_MatMul, flat, b)
        return out.reshape(*lead, b.shape[-1])
    if a.shape[:-2] != b.shape[:-2]:
        raise ReproError(f"repro.matmul: batch dims differ: {tuple(a.shape)} @ {tuple(b.shape)}")
    return apply_fn(_MatMul, a, b)


class _Linear(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: Any, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None
    ) -> torch.Tensor:
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        out = matmul64(x, weight.t())
        if bias is not None:
            out = out + to64(bias)
        return out.to(torch.float32)

    @staticmethod
    def backward(
        ctx: Any, grad: torch.Tensor
    ) -> tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor | None]:
        x, weight = ctx.saved_tensors
        gx = _mm32(grad, weight) if ctx.needs_input_grad[0] else None
        gw = _mm32(grad.t(), x) if ctx.needs_input_grad[1] else None
        gb = None
        if ctx.has_bias and ctx.needs_input_grad[2]:
            gb = sum_tree64(grad, 0).to(torch.float32)
        return gx, gw, gb


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """Affine map `x @ weight^T + bias` (as `torch.nn.functional.linear`), reproducibly.

    The product is `matmul`'s exact block-floating-point GEMM; the bias is added in float64
    before the single rounding to float32. Backward: `grad @ weight`, `grad^T @ x` with the
    same operator, and the bias gradient by `sum_fixed` over the flattened leading dims.

    Args:
        x: float32 (..., in).
        weight: float32 (out, in).
        bias: float32 (out,) or None.

    Returns:
        float32 (..., out).

    Raises:
        ReproError: a dtype other than float32, mismatched shapes, or mixed devices.
    """
    check32("linear", x, weight, bias)
    if weight.dim() != 2 or x.dim() < 1 or x.shape[-1] != weight.shape[1]:
        raise ReproError(
            f"repro.linear: x {tuple(x.shape)} does not fit weight {tuple(weight.shape)}"
        )
    if bias is not None and tuple(bias.shape) != (weight.shape[0],):
        raise ReproError(f"repro.linear: bias {tuple(bias.shape)} != ({weight.shape[0]},)")
    lead = x.shape[:-1]
    flat = x.reshape(-1, x.shape[-1])
    out = apply_fn(_Linear, flat, weight, bias)
    return out.reshape(*lead, weight.shape[0])
