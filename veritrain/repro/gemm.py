"""Order-independent matrix product: `matmul` and `linear`.

Method (block floating point, exact float64 accumulation):

1. Each row of A and each column of B gets a power-of-two scale from the exponent of its
   largest magnitude (`amax`, `amin` and `torch.frexp`, exact): `|x| < 2**e` for every entry
   of the row/column.
2. Every entry is rounded to a multiple of `2**(e - p)` (round half to even), i.e. to
   `q * 2**(e - p)` with an integer mantissa `|q| <= 2**p`. The rounding is one float64
   addition and one subtraction of the constant `c = 1.5 * 2**(e - p + 52)` (`(x + c) - c`:
   the sum's unit in the last place is exactly `2**(e - p)`, and the subtraction is exact),
   so no separate scaling, `round` or scaling back is needed.
3. With `p = (53 - ceil(log2 k)) // 2` every product of two entries is an integer multiple
   of `2**(e_a + e_b - 2p)` of magnitude at most `2**(2p)` such units, and every partial sum
   of a length-k dot product is such a multiple of magnitude `<= k * 2**(2p) <= 2**53` units:
   a float64 GEMM computes it *exactly*, whatever the summation order, blocking, SIMD width,
   thread count, BLAS or device (FMA or not).
4. The float64 result is rounded once to float32 (`linear` adds its bias in float64 first).

One float64 GEMM per product: `p` bits (21 at k = 1024, 19 at k = 16384) of every entry are
kept relative to its row's (column's) largest magnitude, the precision of int8 W8A8 training
and well above it. docs/REPRO.md has the measured error, its effect on training loss, and the
speed.

The same exact product has a second path for 2-d operands: the integer mantissas split into
int8 slices and multiplied on int8 units (`veritrain.repro.gemm_int8`, the Ozaki scheme).
Both paths give the same float64 values bit for bit, so the choice (`gemm_backend`: the
faster one on the device, or `VERITRAIN_REPRO_GEMM=float64|int8`) never changes a result.

Run: not a script; `from veritrain.repro import matmul, linear`.
"""

from __future__ import annotations

import os
from typing import Any

import torch

from veritrain.repro._common import ReproError, apply_fn, check32, pow2
from veritrain.repro.fused import quantize_fused, round32_into, use_fused
from veritrain.repro.gemm_int8 import int_product
from veritrain.repro.gemm_select import fastest_backend
from veritrain.repro.reduce import sum_tree64

__all__ = [
    "GEMM_BACKENDS",
    "GEMM_ENV",
    "gemm_backend",
    "linear",
    "mantissa_bits",
    "matmul",
    "matmul64",
    "quantize",
]

GEMM_BACKENDS = ("float64", "int8")
GEMM_ENV = "VERITRAIN_REPRO_GEMM"  # "auto" (default), "float64" or "int8"


def gemm_backend(device: torch.device) -> str:
    """The path `matmul64` takes for 2-d operands on `device`: "float64" or "int8".

    Both give the same bits (module docstring), so this is a speed choice only. The
    environment variable `VERITRAIN_REPRO_GEMM` forces one ("float64" or "int8"); "auto" (the
    default) takes float64 on a CPU (torch's CPU int8 GEMM is a plain loop: about 25x slower
    than a float64 GEMM at 512 x 1024 x 512 on an AVX2 EPYC) and, on a GPU, whichever of
    the two runs a 2048 x 1024 x 1024 product faster, timed once per device and process.

    Args:
        device: the operands' device.

    Returns:
        "float64" or "int8".

    Raises:
        ReproError: `VERITRAIN_REPRO_GEMM` is set to anything else than auto/float64/int8.
    """
    forced = os.environ.get(GEMM_ENV, "auto")
    if forced in GEMM_BACKENDS:
        return forced
    if forced != "auto":
        raise ReproError(f"{GEMM_ENV} must be auto, float64 or int8, got {forced!r}")
    return fastest_backend(device, _matmul64_by)


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


def quantize(x: torch.Tensor, p: int, row_major: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """Round `x` to `p`-bit block floating point, one power-of-two scale per row (last dim).

    Args:
        x: float32 tensor (..., m, k) with k >= 1, any strides and device.
        p: mantissa bits, 1 <= p <= 50.
        row_major: return `xq` contiguous; False keeps `x`'s layout where it is dense (a
            transposed view stays transposed: no float32 transpose copy; the values are the
            same either way, only the strides differ).

    Returns:
        `(xq, e)`: `xq` a float64 (..., m, k) (contiguous if `row_major`), each entry
        `q * 2**(e - p)` with an integer `|q| <= 2**p` (`x / 2**(e - p)` rounded half to
        even); `e` int64 (..., m, 1) with `|x| < 2**e` along the row (0 for an all-zero row).
    """
    fused = quantize_fused(x, p, row_major)  # one pass per operand (`repro.fused`), same bits
    if fused is not None:
        return fused
    # max |x| without an |x| pass over the operand; exact, on the float32 operand. (`amax` and
    # `amin` are vectorised on CPU, `aminmax` is about ten times slower.)
    amax = torch.maximum(x.amin(dim=-1, keepdim=True).neg_(), x.amax(dim=-1, keepdim=True))
    _, e = torch.frexp(amax.to(torch.float64))  # amax = m * 2**e, 0.5 <= m < 1 (0 -> e = 0)
    e = e.to(torch.int64)
    # c = 1.5 * 2**(e - p + 52): for |x| < 2**e, x + c lies in [2**(e-p+52), 2**(e-p+53)),
    # whose float64 spacing is 2**(e - p); so x + c rounds x to that grid and - c is exact.
    c = pow2(e + (52 - p)) * 1.5
    # float64, row-major if asked (a batched float64 GEMM is fastest with k contiguous in both
    # operands; a conversion first beats one mixed-dtype strided add), then x + c (one
    # rounding) and - c (exact), in place
    if not row_major:
        xq = x.to(torch.float64)  # x's layout where dense
    elif x.dim() > 2:
        # batched: one strided converting copy beats the float32 transpose and a plain
        # conversion (a transposed (8, 2, 256, 768) operand: 8.0 -> 5.5 ms; a 2-d one is the
        # other way round)
        xq = x.to(torch.float64, memory_format=torch.contiguous_format)
    else:
        xq = x.contiguous().to(torch.float64)
    xq.add_(c).sub_(c)
    return xq, e


def matmul64(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Order-independent product of float32 matrices, returned in float64 (no autograd).

    Args:
        a: float32 (..., m, k).
        b: float32 (..., k, n), same leading (batch) dims as `a`.

    Returns:
        float64 (..., m, n): the exact product of the block-floating-point roundings of `a`
        (per row) and `b` (per column), a value that depends only on the operands' values,
        never on how the GEMM orders its sums.
    """
    return _product64(a, b, plus_zero=True)


def _product64(a: torch.Tensor, b: torch.Tensor, plus_zero: bool) -> torch.Tensor:
    """`matmul64`; with `plus_zero` False the float64 GEMM's zeros keep their sign (the
    caller adds +0 itself, in the same pass as its rounding to float32)."""
    k = a.shape[-1]
    if k == 0:  # an empty sum is exactly 0 (and amax over an empty dim is undefined)
        shape = (*a.shape[:-1], b.shape[-1])
        return torch.zeros(shape, dtype=torch.float64, device=a.device)
    # batched products stay on the float64 GEMM: torch's int8 GEMM is 2-d only
    backend = gemm_backend(a.device) if a.dim() == 2 and b.dim() == 2 else "float64"
    return _matmul64_by(a, b, backend, plus_zero)


def _gemm64(aq: torch.Tensor, bq: torch.Tensor, plus_zero: bool = True) -> torch.Tensor:
    """The float64 GEMM of quantized operands: exact (module docstring), a zero as +0.

    A zero result's sign is not part of the exact value: torch's CPU GEMM gives -0 for a
    contraction of length 1 (`0 * -x`) and +0 for longer ones, other libraries may differ, and
    the int8 path always gives +0. Adding +0 (round to nearest: `-0 + +0 = +0`, any other value
    unchanged) makes every path and machine agree. `plus_zero=False` leaves that addition to
    the caller.
    """
    out = torch.matmul(aq, bq)
    return out.add_(0.0) if plus_zero else out


def _matmul64_by(
    a: torch.Tensor, b: torch.Tensor, backend: str, plus_zero: bool = True
) -> torch.Tensor:
    """`matmul64` by the float64 GEMM (any batch dims) or by int8 slices (2-d operands only):
    the same bits."""
    p = mantissa_bits(a.shape[-1])
    # A 2-d float64 GEMM runs as fast on transposed operands as on row-major ones (BLAS reads
    # either), so there the operands keep their layout and skip a float32 transpose copy each
    # (measured: 2-4 ms per 2048 x 1024 operand); a batched GEMM is up to 2x slower on a
    # transposed operand, and the int8 path wants rows, so those stay row-major.
    row_major = backend != "float64" or a.dim() != 2
    aq, ea = quantize(a, p, row_major)
    bq_t, eb = quantize(b.transpose(-1, -2), p, row_major)  # b's columns as rows: (..., n, k)
    if backend == "float64":
        return _gemm64(aq, bq_t.transpose(-1, -2), plus_zero)
    # the integer mantissas (exact: a power-of-two scaling of integer multiples), their exact
    # product, then the two power-of-two scales: the value the float64 GEMM holds exactly
    qa = aq.mul_(pow2(p - ea)).to(torch.int64)
    qb = bq_t.mul_(pow2(p - eb)).to(torch.int64)
    out = int_product(qa, qb, p).to(torch.float64)
    return out.mul_(pow2(ea - p)).mul_(pow2(eb - p).transpose(-1, -2))


def _mm32(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """`matmul64(a, b)` rounded to float32: on a CPU with the fused kernels, the +0 of
    `_gemm64` and the rounding in one pass (`repro.fused.round32_into`), the same bits."""
    if a.device.type == "cpu" and use_fused():
        out = _product64(a, b, plus_zero=False)
        return round32_into(out, torch.empty(out.shape, dtype=torch.float32))
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
        if bias is None:
            return _mm32(x, weight.t())
        out = matmul64(x, weight.t())
        out.add_(bias)  # in float64 (the float32 bias converts exactly), one rounding
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
