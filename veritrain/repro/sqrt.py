"""Correctly rounded square roots, checked by an exact residual test on every entry.

`torch.sqrt` is not correctly rounded on every backend: on x86 CPUs PyTorch routes it through
a vendor's vector math library whose results are within 1 ulp, and which entries are 1 ulp off
depends on the CPU vendor (measured on 10^6 random values: 171,376 float32 and 12,600 float64
results off on an AMD EPYC, 6,586 and 7,430 on an Intel Xeon, none on an H100). IEEE 754
requires the correctly rounded result; a replay on another machine needs exactly that. Here
the library's result is only a candidate, and each entry is then proven correct, or moved one
ulp towards the exact root until it is, by integer-exact arithmetic:

1. Scale: `x = m * 2**e` by `torch.frexp` (exact, subnormals included), moved to
   `xr = m * 2**(e mod 2)` in `[0.5, 2)` so that `sqrt(x) = sqrt(xr) * 2**((e - e mod 2)/2)`
   and the final scaling is exact (every root of a float64 is a normal float64).
2. Candidate `s = torch.sqrt(xr)`, in `[0.70, 1.42)`, of whatever accuracy.
3. Exact residual `r = xr - s*s`: Dekker's product `s*s = p + err` without a fused
   multiply-add (Veltkamp's split by `2**27 + 1`; T. J. Dekker, "A floating-point technique
   for extending the available precision", Numer. Math. 18, 1971), then `(xr - p) - err`, both
   subtractions exact (Sterbenz; the remainder of a square root is representable: S. Boldo,
   M. Daumas, "Representable correcting terms for possibly underflowing floating point
   operations", ARITH 16, 2003).
4. With `u+` and `u-` the gaps to the next float above and below `s` (integer steps of the bit
   pattern), the exact root lies above the midpoint `s + u+/2` iff `r > s*u+`, and at or below
   `s - u-/2` iff `r <= -(s*u-)` (every term is a multiple of the square of `s`'s quantum, so
   the `(u/2)**2` term of the exact condition never decides; a root cannot equal a midpoint).
   Both products are exact (scaling by a power of two). Entries that fail move one ulp; the test
   runs again until no entry moves, so the result does not depend on the candidate's accuracy.

float32 roots are the float64 root rounded once to float32: a correctly rounded binary64 root
of a binary32 input rounds to the correctly rounded binary32 root, since 53 >= 2*24 + 2
(S. A. Figueroa, "When is double rounding innocuous?", SIGNUM Newsletter 30(3), 1995).

Python floats get the same from integer arithmetic only (`sqrt_scalar`, by `math.isqrt`).

Run: not a script; `from veritrain.repro import sqrt; y = sqrt(x)`.
"""

from __future__ import annotations

import math

import torch

from veritrain.repro._common import ReproError, check_float, pow2

__all__ = ["sqrt", "sqrt64", "sqrt_scalar"]

_SPLIT = 134217729.0  # 2**27 + 1: Veltkamp's constant for binary64
_MAX_FIXES = 8  # passes of the residual test before the candidate is declared unusable
_F64_MANT = 53  # significand bits of a binary64, the implicit one included
_HALF_ULP32 = 1 << 28  # half a float32 ulp, in float64 bit-pattern steps (2**(52 - 23 - 1))


def _one_ulp_fix(xr: torch.Tensor, s: torch.Tensor) -> tuple[torch.Tensor, bool]:
    """One pass of the exact residual test on `s ~ sqrt(xr)`, `xr` in [0.5, 2) (float64).

    Returns the corrected candidate (each entry moved at most one ulp) and whether any moved.
    """
    g = s * _SPLIT
    hi = g - (g - s)
    lo = s - hi
    p = s * s
    err = ((hi * hi - p) + (hi * lo) * 2.0) + lo * lo  # s*s == p + err exactly (Dekker)
    r = (xr - p) - err  # exact residual xr - s*s
    bits = s.view(torch.int64)
    up = (bits + 1).view(torch.float64)  # next float above (s > 0)
    down = (bits - 1).view(torch.float64)  # next float below
    go_up = r > s * (up - s)  # exact root above the upper midpoint
    go_down = r <= -(s * (s - down))  # exact root at or below the lower midpoint
    moved = bool((go_up | go_down).any())
    if not moved:
        return s, False
    return torch.where(go_up, up, torch.where(go_down, down, s)), True


def sqrt64(x: torch.Tensor) -> torch.Tensor:
    """Correctly rounded square root of a float64 tensor (IEEE 754 `squareRoot`).

    Args:
        x: float64 tensor, any shape and device.

    Returns:
        float64 tensor of `x`'s shape: `sqrt(+0) = +0`, `sqrt(-0) = -0`, `sqrt(+inf) = +inf`,
        NaN for NaN and for negative inputs, otherwise the correctly rounded root.

    Raises:
        ReproError: `x` is not float64, or the candidate root is still moving after 8 passes of
            the exact test (a broken `torch.sqrt`).
    """
    if x.dtype != torch.float64:
        raise ReproError(f"repro.sqrt64: expected float64, got {x.dtype}")
    regular = (x > 0.0) & (x < math.inf)
    xs = torch.where(regular, x, 1.0)
    m, e = torch.frexp(xs)  # xs = m * 2**e, m in [0.5, 1)
    odd = e.bitwise_and(1)
    xr = torch.where(odd.bool(), m * 2.0, m)  # in [0.5, 2), exact
    half = (e - odd).bitwise_right_shift(1)  # (e - e mod 2) / 2, exact
    s = torch.sqrt(xr)  # a candidate only
    for _ in range(_MAX_FIXES):
        s, moved = _one_ulp_fix(xr, s)
        if not moved:
            break
    else:
        raise ReproError("repro.sqrt64: torch.sqrt's candidate is more than 8 ulps off")
    root = s * pow2(half)  # exact: the root of a float64 is a normal float64
    special = torch.where((x == 0.0) | (x == math.inf), x, math.nan)
    return torch.where(regular, root, special)


def _sqrt32_verified(x64: torch.Tensor) -> torch.Tensor | None:
    """float32 roots of float32 values (given as float64) if a fast candidate proves correct.

    Candidate: `torch.sqrt` in float64 rounded to float32. It is correctly rounded iff the exact
    root lies strictly between the midpoints to its neighbours: `lo**2 < x < hi**2`. For a
    positive normal float32 `y` (every root of a positive float32 is one), the midpoints are
    `y`'s float64 bit pattern -+ 2**28 (half a float32 ulp is 2**28 float64 ulps; at a power of
    two, `- 2**28` crosses into the binade below, where a float32 ulp is half as wide, and lands
    on the lower midpoint just the same): no conversion back to float32. Each midpoint has 25
    significant bits, so its square is exact in float64 (and normal: `lo >= 2**-75`), and
    the sign of `lo**2 - x` is exact. Both conditions hold iff `(lo**2 - x) * (hi**2 - x) < 0`
    (no underflow: both factors are multiples of 2**-300); one `amax` tells whether every
    entry passes. `x = 0` gives `y = 0`, `lo = 0` (bit pattern clamped at 0) and a product 0,
    accepted (its root 0 is exact); NaN, infinities, negatives and -0 give NaN and fail.

    Returns:
        The float32 roots, or None when any entry fails (the caller then takes `sqrt64`, which
        gives the same correctly rounded roots).
    """
    y = torch.sqrt(x64).to(torch.float32)
    if y.numel() == 0:
        return y
    yb = y.to(torch.float64).view(torch.int64)
    lo = (yb - _HALF_ULP32).clamp_(min=0).view(torch.float64)
    hi = (yb + _HALF_ULP32).view(torch.float64)
    lo.mul_(lo).sub_(x64)
    hi.mul_(hi).sub_(x64)
    if bool(lo.mul_(hi).amax() <= 0.0):
        return y
    return None


def sqrt(x: torch.Tensor) -> torch.Tensor:
    """Correctly rounded square root of a float32 or float64 tensor (no autograd).

    float64 by `sqrt64`. float32: a candidate proven correct by an exact midpoint test on
    every entry (one pass, see `_sqrt32_verified`), else `sqrt64` of the exact float64 value
    rounded once to float32 (innocuous double rounding, Figueroa 1995). Same bits on every
    IEEE-754 backend.

    Args:
        x: float32 or float64 tensor, any shape and device.

    Returns:
        Tensor of `x`'s dtype, shape and device (special values as in `sqrt64`).

    Raises:
        ReproError: another dtype (see also `sqrt64`).
    """
    check_float("sqrt", x)
    if x.dtype == torch.float64:
        return sqrt64(x)
    x64 = x.to(torch.float64)
    y = _sqrt32_verified(x64)
    if y is not None:
        return y
    return sqrt64(x64).to(torch.float32)


def sqrt_scalar(x: float) -> float:
    """Correctly rounded square root of a Python float, by integer arithmetic only.

    `x = M * 2**E` with integer `M < 2**54` and even `E`; `q = isqrt(M * 4**t)` has more than
    80 bits; `q` and a sticky bit (the remainder is not zero) are rounded to 53 bits half to
    even, and `math.ldexp` of the 53-bit integer is exact (the root of a double is normal).

    Args:
        x: any float.

    Returns:
        The correctly rounded root; `sqrt_scalar(-0.0)` is -0.0, NaN for NaN and negatives.
    """
    if math.isnan(x) or x < 0.0:
        return math.nan
    if x == 0.0 or math.isinf(x):
        return x
    m, e = math.frexp(x)  # exact
    mant = int(m * (1 << _F64_MANT))  # exact integer, x = mant * 2**(e - 53)
    exp2 = e - _F64_MANT
    if exp2 & 1:
        mant <<= 1
        exp2 -= 1
    t = 56  # q = isqrt(mant * 4**t) has 80 to 83 bits
    radicand = mant << (2 * t)
    q = math.isqrt(radicand)
    sticky = q * q != radicand
    shift = q.bit_length() - _F64_MANT  # drop this many bits of q
    kept = q >> shift
    rest = q & ((1 << shift) - 1)
    half = 1 << (shift - 1)
    if rest > half or (rest == half and (sticky or kept & 1)):
        kept += 1
    return math.ldexp(kept, shift - t + exp2 // 2)
