"""Elementwise functions from correctly rounded IEEE-754 operations only.

`torch.exp`, `torch.log` and `torch.tanh` call vectorised approximations (SLEEF at each SIMD
level on CPU, CUDA's own libdevice on GPU) whose last bit differs between platforms. Here each
function is built from `+ - * /` (correctly rounded everywhere), exact operations
(`torch.round`, `torch.frexp`, comparisons, `torch.where`, multiplication by an exact power of
two, done as an integer addition to the exponent field where that is cheaper, a lookup in a
fixed table) and fixed Python constants, evaluated in float64 and rounded once to float32:

- exp: Cody-Waite range reduction `x = (32 m + j) ln2/32 + r`, `0 <= j < 32`,
  `|r| <= ln2/64`, with ln2/32 split into a 21-bit head (so `n * LN2_HI/32` is exact) and a
  tail (Cody and Waite, "Software Manual for the Elementary Functions", 1980; the same split
  as fdlibm's e_exp.c), then the Taylor polynomial of degree 6 in Horner form (truncation
  < 2**-57 relative), times the correctly rounded table value `2**(j/32)` and the exact
  `2**m` (the table-driven reduction of Tang, ACM TOMS 15, 1989). About 30 float64 passes.
- log: `x = m * 2**e` by `torch.frexp` with `m` moved into `[sqrt(1/2), sqrt(2))`,
  `log m = 2 atanh(s)`, `s = (m - 1)/(m + 1)`, `|s| < 0.1716`, by the odd series to `s**21`,
  plus `e * LN2_HI + e * LN2_LO`.
- tanh: `1 - 2/(exp(2|x|) + 1)` with the sign restored; for `|x| < 2**-6`, where that form
  cancels, the odd Taylor polynomial to `x**9`.
- gelu (tanh form): `x / (1 + exp(-2u))`, which equals `0.5 x (1 + tanh u)`.

Each step is a separate eager kernel with its intermediate stored in memory, so no compiler can
contract a multiply and an add into an FMA. (Under `torch.compile` that guarantee is gone.)

Run: not a script; `from veritrain.repro import exp, log, tanh, relu, gelu`.
"""

from __future__ import annotations

import decimal
import math
from typing import Any, cast

import torch

from veritrain.repro._common import apply_fn, check32, horner, to64
from veritrain.repro.fused import (
    exp64_into,
    gelu_backward_fused,
    gelu_forward_fused,
    silu_backward_fused,
    silu_forward_fused,
    use_fused,
)
from veritrain.repro.sqrt import sqrt_scalar

__all__ = [
    "exp",
    "exp64",
    "gelu",
    "gelu64",
    "log",
    "log64",
    "relu",
    "silu",
    "silu64",
    "tanh",
    "tanh64",
]

# ln 2 = 0.6931471805599453094172321214581765680755...; head with 21 significant bits and the
# correctly rounded tail, so that n * _LN2_HI is exact for |n| < 2**32.
_LN2_HI = float.fromhex("0x1.62e42p-1")
_LN2_LO = float.fromhex("0x1.fdf473de6af28p-22")
_INV_LN2 = float.fromhex("0x1.71547652b82fep+0")  # 1/ln 2 correctly rounded
_EXP_SPLIT_BITS = 5
_MANT_BITS = 52  # explicit significand bits of a float64
_EXP_SPLIT = 1 << _EXP_SPLIT_BITS  # 32 table entries: exp reduces by multiples of ln2/32
# ln2/32 (head and tail divided exactly by a power of two) and 32/ln2.
_LN2_32_HI = _LN2_HI / _EXP_SPLIT
_LN2_32_LO = _LN2_LO / _EXP_SPLIT
_INV_LN2_32 = _INV_LN2 * _EXP_SPLIT
# Taylor coefficients 1/j!, j = 6 .. 0 (Horner order); each is a correctly rounded double.
_EXP_COEFS = [1.0 / math.factorial(j) for j in range(6, -1, -1)]


def _exp_table() -> list[float]:
    """`2**(j/32)` for j = 0 .. 31, each the correctly rounded double.

    Evaluated with 60-digit decimal arithmetic (pure software, the same on every machine) and
    converted once (Python's decimal-to-float conversion is correctly rounded).
    """
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        return [float(decimal.Decimal(2) ** (decimal.Decimal(j) / _EXP_SPLIT)) for j in range(32)]


_EXP_TABLE = _exp_table()
# 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...): coefficients of s^(2j+1)/s for j = 10 .. 0.
_ATANH_COEFS = [2.0 / (2 * j + 1) for j in range(10, -1, -1)]
_SQRT_HALF = float.fromhex("0x1.6a09e667f3bcdp-1")  # sqrt(1/2) correctly rounded
# tanh x = x - x^3/3 + 2x^5/15 - 17x^7/315 + 62x^9/2835: coefficients of x^(2j) in Horner order.
_TANH_COEFS = [62.0 / 2835.0, -17.0 / 315.0, 2.0 / 15.0, -1.0 / 3.0, 1.0]
_TANH_SMALL = 1.0 / 64.0  # 2**-6, exact
# exp64 clamps its argument so that 2**m stays a normal float64 (m in [-1010, 1009]).
_EXP_LIMIT = 700.0
# GELU (tanh form): sqrt(2/pi) from a correctly rounded division and square root.
_GELU_C = sqrt_scalar(2.0 / math.pi)
_GELU_A = 0.044715
_GELU_M2C = -2.0 * _GELU_C  # exact: a power-of-two multiple of _GELU_C
_GELU_2C = 2.0 * _GELU_C
# SiLU: below this magnitude x * sigmoid(x) is x/2 plus a positive x**2/4 that float64 cannot
# hold; x/2 is then exact in float64 and a float32 tie exactly when it is subnormal and odd.
_SILU_TINY = 2.0**-100
_ULP_UP = 2.0**-52


def exp64(x: torch.Tensor) -> torch.Tensor:
    """`e**x` for a float64 tensor, from IEEE basic operations only (no autograd).

    Args:
        x: float64 tensor. Below -700 (including -inf) the result is exactly 0; above +700
            (including +inf) it is e**700, which float32 rounds to inf; NaN stays NaN.

    Returns:
        float64 tensor of `x`'s shape, relative error about 1e-15.

    A contiguous CPU operand takes the fused kernel (`repro.fused`): the same operations in one
    pass, the same bits.
    """
    if x.dtype == torch.float64 and use_fused(x):
        return exp64_into(x, torch.empty_like(x))
    # Two fix-up passes are needed only for some inputs; one reduction tells which (the
    # result is the same either way): the minimum is NaN iff some entry is NaN, and a minimum
    # >= -700 proves that no entry is below the limit.
    low = float(x.amin()) if x.numel() else 0.0
    any_nan = math.isnan(low)
    any_below = any_nan or low < -_EXP_LIMIT  # (with a NaN the minimum says nothing else)
    xc = torch.clamp(x, -_EXP_LIMIT, _EXP_LIMIT)  # NaN stays NaN
    n = xc * _INV_LN2_32
    n.round_()
    if any_nan:
        n.nan_to_num_(nan=0.0)  # a NaN's n is 0 (its r, and so its result, stay NaN)
    t = n * _LN2_32_HI  # exact: 21-bit head times |n| < 2**15
    r = xc.sub_(t)  # (xc - n * HI) - n * LO, each step rounded once, in place
    r.sub_(torch.mul(n, _LN2_32_LO, out=t))
    # Spent tensors hold the next results (a fresh large CPU tensor costs its page faults,
    # about as much as a pass): the polynomial accumulates in `t`, the table values go to `n`
    y = horner(_EXP_COEFS, r, out=t)
    # n = 32 m + j with 0 <= j < 32 (two's complement: & and >>); |n| <= 32318 < 2**15, so
    # int32 holds it exactly (half the bytes of int64 for the index and the shift)
    ni = n.to(torch.int32)
    table = torch.tensor(_EXP_TABLE, dtype=torch.float64, device=x.device)
    j = (ni & (_EXP_SPLIT - 1)).reshape(-1)
    # (int32 indices: about twice as fast as int64 ones on CPU, and `table[j]` is slower still)
    if n.is_contiguous():
        y.mul_(torch.index_select(table, 0, j, out=n.view(-1)).view(ni.shape))
    else:
        y.mul_(table.index_select(0, j).reshape(ni.shape))
    # times 2**m, exactly, by adding m to the exponent field: y is a positive normal float64
    # in [0.98, 2.1) (or NaN, with m = 0) and |m| <= 1010 keeps the result normal
    m_bits = ni.bitwise_right_shift_(_EXP_SPLIT_BITS).to(torch.int64)
    y.view(torch.int64).add_(m_bits.bitwise_left_shift_(_MANT_BITS))
    if any_below:
        y.masked_fill_(x < -_EXP_LIMIT, 0.0)  # e**-700 < 1e-304: 0 (and at -inf)
    return y


def log64(x: torch.Tensor) -> torch.Tensor:
    """Natural logarithm of a float64 tensor, from IEEE basic operations only (no autograd).

    Args:
        x: float64 tensor.

    Returns:
        float64 tensor: log x for x > 0 (relative error about 1e-15), -inf for 0, NaN for
        x < 0 or NaN, +inf for +inf.
    """
    m, e = torch.frexp(x)  # x = m * 2**e, 0.5 <= |m| < 1
    small = m < _SQRT_HALF
    m = torch.where(small, m * 2.0, m)
    ef = e.to(torch.float64) - small.to(torch.float64)
    s = (m - 1.0) / (m + 1.0)
    s2 = s * s
    logm = horner(_ATANH_COEFS, s2) * s
    y = ef * _LN2_HI + (ef * _LN2_LO + logm)
    y = torch.where(x == 0, torch.full_like(y, -math.inf), y)
    y = torch.where(x < 0, torch.full_like(y, math.nan), y)
    y = torch.where(torch.isinf(x) & (x > 0), x, y)
    return torch.where(torch.isnan(x), x, y)


def tanh64(x: torch.Tensor) -> torch.Tensor:
    """Hyperbolic tangent of a float64 tensor, from IEEE basic operations (no autograd).

    Args:
        x: float64 tensor.

    Returns:
        float64 tensor in [-1, 1], relative error below 1e-14 (NaN stays NaN).
    """
    ax = torch.abs(x)
    big = 1.0 - torch.full_like(ax, 2.0) / (exp64(ax * 2.0) + 1.0)
    x2 = x * x
    small = horner(_TANH_COEFS, x2) * ax
    y = torch.where(ax < _TANH_SMALL, small, big)
    return torch.where(x < 0, -y, torch.where(torch.isnan(x), x, y))


def gelu64(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """GELU, tanh form, of a float64 tensor, and the logistic factor it used (no autograd).

    `0.5 x (1 + tanh u) = x * sigmoid(2u) = x / (1 + exp(-2u))` with
    `u = sqrt(2/pi) (x + 0.044715 x**3)`. The sigmoid form keeps full relative accuracy in
    the negative tail, where `1 + tanh u` would cancel.

    Returns:
        `(x * s, s)` with `s = 1 / (1 + exp(-2u))`, both float64.
    """
    u = x * x
    # -2u = (x + x**3 * A) * (-2C), in place; -2C = -2 * C exactly, and scaling by -2
    # commutes with rounding (no subnormal products here), so this is `(...) * C * -2`
    u.mul_(x).mul_(_GELU_A).add_(x).mul_(_GELU_M2C)
    e = exp64(u)
    s = torch.ones_like(e).div_(e.add_(1.0))  # tensor by tensor
    return x * s, s


def silu64(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """SiLU `x * sigmoid(x)` of a float64 tensor and the sigmoid it used (no autograd).

    `sigmoid(x) = 1 / (1 + exp64(-x))` (one tensor division), `y = x * sigmoid(x)`. Two edge
    cases are fixed so that the float32 rounding of `y` is the correctly rounded SiLU of a
    float32 `x`: at -inf `y` is -0.0 (the limit; the product would be -inf * 0); for
    |x| < 2**-100, `y` is `x/2` nudged up by one or two float64 ulps (the true value is
    `x/2 + x**2/4 - ...`, above `x/2`), so that a subnormal float32 tie `x/2` rounds the way
    the true value does.

    Returns:
        `(y, s)` with `s = sigmoid(x)`, both float64 of `x`'s shape (NaN stays NaN).
    """
    e = exp64(-x)
    s = torch.ones_like(e).div_(e.add_(1.0))  # tensor by tensor
    y = x * s
    # The fix-ups change only entries with 0 < |x| < 2**-100 or x = -inf; when the smallest
    # |x| is >= 2**-100 and the largest finite (so no NaN either) there is none, and `y` is
    # already the result (a zero, an infinity or a NaN takes the full path below). |x| goes
    # into the spent `e` (no new tensor).
    ax = torch.abs(x, out=e)
    if ax.numel() == 0 or (float(ax.amin()) >= _SILU_TINY and float(ax.amax()) < math.inf):
        return y, s
    half = x * 0.5
    nudged = half + half.abs().mul_(_ULP_UP)
    y = torch.where((x.abs() < _SILU_TINY) & (x != 0), nudged, y)  # +-0 keep x * 0.5
    y = torch.where(torch.isneginf(x), torch.full_like(y, -0.0), y)
    return y, s


def gelu_grad64(x: torch.Tensor, sig: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
    """GELU's input gradient in float64, before its rounding to float32 (no autograd).

    d/dx of x * sigmoid(2u) = sig + (x * (sig * (1 - sig))) * (2 du/dx), with du/dx =
    (3 A x**2 + 1) * C; each product and sum rounded once, in place (times 2C in one multiply:
    the same value as times C then 2, as in gelu64).

    Args:
        x: the float32 input; sig: `gelu64`'s float64 logistic factor; grad: float32.

    Returns:
        float64 `grad * d`, of `x`'s shape.
    """
    x64 = to64(x)
    du2 = x64 * x64
    du2.mul_(3.0 * _GELU_A).add_(1.0).mul_(_GELU_2C)
    d = 1.0 - sig
    d.mul_(sig).mul_(x64).mul_(du2).add_(sig)
    return to64(grad).mul_(d)


def silu_grad64(x: torch.Tensor, s: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
    """SiLU's input gradient in float64, before its rounding to float32 (no autograd).

    d/dx x s(x) = s + x s (1 - s) = s (1 + x (1 - s)), each step rounded once, in place; at
    +-inf the limits 1 and 0 (the formula would give inf * 0).

    Args:
        x: the float32 input; s: `silu64`'s float64 sigmoid; grad: float32.

    Returns:
        float64 `grad * d`, of `x`'s shape.
    """
    x64 = to64(x)
    d = 1.0 - s
    d.mul_(x64).add_(1.0).mul_(s)
    # the limits only where x is infinite: skipped when the float32 extremes are finite
    # (which also rules out NaN, whose d stays NaN either way)
    if x.numel() and not (math.isfinite(float(x.amin())) and math.isfinite(float(x.amax()))):
        d = torch.where(torch.isinf(x64), (x64 > 0).to(torch.float64), d)
    return to64(grad).mul_(d)


class _Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        y = exp64(to64(x)).to(torch.float32)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        (y,) = ctx.saved_tensors
        return cast(torch.Tensor, grad * y)


class _Log(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x)
        return log64(to64(x)).to(torch.float32)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        return cast(torch.Tensor, grad / x)


class _Tanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        y = tanh64(to64(x)).to(torch.float32)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        (y,) = ctx.saved_tensors
        return cast(torch.Tensor, grad * (1.0 - y * y))


class _Relu(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        pos = x > 0
        ctx.save_for_backward(pos)
        return torch.where(pos, x, torch.zeros_like(x))

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        (pos,) = ctx.saved_tensors
        return torch.where(pos, grad, torch.zeros_like(grad))


class _Gelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        if use_fused(x):  # one pass (`repro.fused`), the same bits
            y32, sig = gelu_forward_fused(x)
            ctx.save_for_backward(x, sig)
            return y32
        y, sig = gelu64(to64(x))
        ctx.save_for_backward(x, sig)  # the float64 logistic factor, reused by the backward
        return y.to(torch.float32)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        x, sig = ctx.saved_tensors
        if use_fused(x, sig, grad):
            return gelu_backward_fused(x, sig, grad)
        return gelu_grad64(x, sig, grad).to(torch.float32)


class _Silu(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        if use_fused(x):  # one pass (`repro.fused`), the same bits
            y32, s = silu_forward_fused(x)
            ctx.save_for_backward(x, s)
            return y32
        y, s = silu64(to64(x))
        ctx.save_for_backward(x, s)  # the float64 sigmoid, reused by the backward
        return y.to(torch.float32)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        x, s = ctx.saved_tensors
        if use_fused(x, s, grad):
            return silu_backward_fused(x, s, grad)
        return silu_grad64(x, s, grad).to(torch.float32)


def exp(x: torch.Tensor) -> torch.Tensor:
    """`e**x`, bit-identical on every IEEE-754 machine (see the module docstring).

    Args:
        x: float32 tensor, any shape and device.

    Returns:
        float32 tensor of the same shape (overflow to inf above ~88.72, 0 below ~-103.97).
        Differentiable: the gradient is `grad * exp(x)`.

    Raises:
        ReproError: `x` is not float32.
    """
    check32("exp", x)
    return apply_fn(_Exp, x)


def log(x: torch.Tensor) -> torch.Tensor:
    """Natural logarithm, bit-identical on every IEEE-754 machine (see the module docstring).

    Args:
        x: float32 tensor (subnormal inputs are handled exactly: they are normal in float64).

    Returns:
        float32 tensor: -inf at 0, NaN below 0. Differentiable: the gradient is `grad / x`.

    Raises:
        ReproError: `x` is not float32.
    """
    check32("log", x)
    return apply_fn(_Log, x)


def tanh(x: torch.Tensor) -> torch.Tensor:
    """Hyperbolic tangent, bit-identical on every IEEE-754 machine (see the module docstring).

    Args:
        x: float32 tensor.

    Returns:
        float32 tensor in [-1, 1]. Differentiable: the gradient is `grad * (1 - y*y)`.

    Raises:
        ReproError: `x` is not float32.
    """
    check32("tanh", x)
    return apply_fn(_Tanh, x)


def relu(x: torch.Tensor) -> torch.Tensor:
    """`max(x, 0)` (exact); the gradient passes where `x > 0` and is 0 elsewhere, as torch's.

    Args:
        x: float32 tensor.

    Returns:
        float32 tensor of the same shape.

    Raises:
        ReproError: `x` is not float32.
    """
    check32("relu", x)
    return apply_fn(_Relu, x)


def gelu(x: torch.Tensor) -> torch.Tensor:
    """GELU, tanh approximation (`nn.GELU(approximate="tanh")`, Hendrycks and Gimpel 2016).

    `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3)))`, evaluated in float64 in the equal
    form `x / (1 + exp(-2u))` (no cancellation in the negative tail) and rounded once. The
    backward evaluates the analytic derivative in float64 the same way.

    Args:
        x: float32 tensor.

    Returns:
        float32 tensor of the same shape.

    Raises:
        ReproError: `x` is not float32.
    """
    check32("gelu", x)
    return apply_fn(_Gelu, x)


def silu(x: torch.Tensor) -> torch.Tensor:
    """SiLU (swish), `x * sigmoid(x)` (`F.silu`; Elfwing et al. 2018, Ramachandran et al. 2017).

    `sigmoid(x) = 1 / (1 + exp(-x))` with `exp64`, the product in float64, rounded once to
    float32 (`silu64`; at -inf the limit -0.0, where `F.silu` gives NaN). The backward
    evaluates `s (1 + x (1 - s))` in float64 the same way. The gate of Llama's SwiGLU MLP.

    Args:
        x: float32 tensor.

    Returns:
        float32 tensor of the same shape.

    Raises:
        ReproError: `x` is not float32.
    """
    check32("silu", x)
    return apply_fn(_Silu, x)
