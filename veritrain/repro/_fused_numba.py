"""The fused CPU kernels themselves, compiled by Numba (imported only through `repro.fused`).

Each kernel performs, per element, exactly the IEEE-754 operations of its eager counterpart in
the same order and the same precision, so the results are the same bits (`repro.fused` says
why and how that is checked). Rules every kernel keeps:

- `fastmath=False`: no reassociation, no reciprocal for a division, no contraction of a
  multiply and an add into a fused multiply-add (LLVM fuses only operations flagged
  `contract`, which Numba sets only under fastmath; the tests read the machine code for FMA
  instructions).
- float32 operations stay float32: every scalar is passed as `np.float32` and every literal
  that meets a float32 is one, so Numba's typing never widens a float32 expression to float64.
- Rounding to an integer is `np.rint` (round half to even in the default rounding mode, as
  `torch.round`); conversions float32 -> float64 are exact, float64 -> float32 round to nearest
  even, as `Tensor.to`.

Run: not a script; `repro.fused` imports it when the fused kernels are enabled.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba
import numpy as np

from veritrain.repro import elementwise as _ew

_F = TypeVar("_F", bound=Callable[..., Any])
# cache=True: the machine code is kept beside this file (or in the user's cache directory when
# that is read-only) and reloaded by later processes in about 0.1 s instead of compiled again.
JIT_OPTIONS: dict[str, Any] = {
    "fastmath": False,
    "boundscheck": False,
    "error_model": "numpy",
    "nogil": True,
}
_jit = cast(Callable[[_F], _F], numba.njit(cache=True, **JIT_OPTIONS))

# exp64's constants, the very floats `elementwise.exp64` uses.
_INV = _ew._INV_LN2_32
_HI = _ew._LN2_32_HI
_LO = _ew._LN2_32_LO
_LIM = _ew._EXP_LIMIT
_C0, _C1, _C2, _C3, _C4, _C5, _C6 = _ew._EXP_COEFS
EXP_TABLE = np.array(_ew._EXP_TABLE, dtype=np.float64)  # 2**(j/32), j = 0 .. 31
_POW2_MIN = -1022
# 2**m for every normal exponent m (exact: ldexp of 1.0); exp64 needs m in [-1011, 1010]
POW2_TABLE = np.array([math.ldexp(1.0, m) for m in range(_POW2_MIN, 1024)], dtype=np.float64)


@_jit
def exp64_kernel(x: Any, out: Any, table: Any, pow2: Any) -> None:
    """`out[i] = exp64(x[i])` for 1-d float64 arrays, `elementwise.exp64`'s operations.

    The eager version multiplies by `2**m` by adding `m` to the exponent field of a positive
    normal `y` whose product stays normal; multiplying by the exact power of two `pow2[m]`
    gives the same bits.
    """
    for i in range(x.size):
        xv = x[i]
        xc = xv
        if xc < -_LIM:
            xc = -_LIM
        elif xc > _LIM:
            xc = _LIM  # (NaN passes both tests and stays NaN, as in torch.clamp)
        n = np.rint(xc * _INV)
        if n != n:
            n = 0.0
        r = (xc - n * _HI) - n * _LO
        y = r * _C0 + _C1
        y = y * r + _C2
        y = y * r + _C3
        y = y * r + _C4
        y = y * r + _C5
        y = y * r + _C6
        ni = np.int64(n)
        y = (y * table[ni & 31]) * pow2[(ni >> 5) - _POW2_MIN]
        out[i] = 0.0 if xv < -_LIM else y


_BLOCK = 512  # entries per block of the AdamW kernel (its scratch stays in the L1 cache)
_HALF_ULP32 = np.int64(1 << 28)  # half a float32 ulp in float64 bit-pattern steps
_MAX_FIXES = 8


@_jit
def _fix_root32(x: Any, y: Any) -> Any:
    """The correctly rounded float32 root of `x` (a float32 value held as float64), from the
    candidate `y`: moved one float32 at a time until the exact midpoint test holds.

    Midpoints `(y + next)/2` are exact in float64 (25 significant bits) and so are their
    squares (50 bits); no root of a float32 equals a midpoint. Zero, infinities, NaN and
    negatives take the hardware root (0, inf, NaN, NaN: the values `repro.sqrt` gives). NaN
    after 8 moves (a broken candidate; the caller then raises).
    """
    if not (x > 0.0 and x < np.inf):
        return np.float32(np.sqrt(x))
    zero = np.float32(0.0)
    inf = np.float32(np.inf)
    for _ in range(_MAX_FIXES):
        yb = np.float64(y)
        below = (yb + np.float64(np.nextafter(y, zero))) * 0.5
        above = (yb + np.float64(np.nextafter(y, inf))) * 0.5
        if x > above * above:
            y = np.nextafter(y, inf)
        elif x < below * below:
            y = np.nextafter(y, zero)
        else:
            return y
    return np.float32(np.nan)


@_jit
def adamw_kernel(
    p: Any,
    g: Any,
    m: Any,
    v: Any,
    decay: Any,
    beta1: Any,
    one_minus_beta1: Any,
    beta2: Any,
    one_minus_beta2: Any,
    inv_sqrt_bc2: Any,
    eps: Any,
    step_size: Any,
) -> int:
    """One `repro.AdamW` update of a parameter, in place, float32 throughout (scalars float32).

    Per entry, in `repro.AdamW.step`'s order and roundings: `p *= decay`, `m = m * beta1 +
    g * (1 - beta1)`, `v = v * beta2 + (g * g) * (1 - beta2)`, the correctly rounded float32
    root of `v` (the float64 hardware root rounded to float32, proven by `repro.sqrt`'s exact
    midpoint test, `_fix_root32` where it fails), `p -= (m / (root * inv_sqrt_bc2 + eps)) *
    step_size`. Blocks of 512 entries: the moments, the roots and the test run as separate
    loops that LLVM vectorises; the rare failures are fixed in a scalar pass.

    Returns:
        The number of roots that stayed wrong after 8 moves (0 on a working machine).
    """
    n = p.size
    roots = np.empty(_BLOCK, np.float64)
    xs = np.empty(_BLOCK, np.float64)
    below = np.empty(_BLOCK, np.int64)
    above = np.empty(_BLOCK, np.int64)
    good = np.empty(_BLOCK, np.bool_)
    y32 = np.empty(_BLOCK, np.float32)
    root_bits = roots.view(np.int64)
    below_f = below.view(np.float64)
    above_f = above.view(np.float64)
    broken = 0
    for s in range(0, n, _BLOCK):
        e = min(s + _BLOCK, n)
        w = e - s
        gs = g[s:e]
        ms = m[s:e]
        vs = v[s:e]
        ps = p[s:e]
        for j in range(w):
            gj = gs[j]
            ms[j] = ms[j] * beta1 + gj * one_minus_beta1
            vs[j] = vs[j] * beta2 + (gj * gj) * one_minus_beta2
        for j in range(w):
            x = np.float64(vs[j])
            xs[j] = x
            roots[j] = np.float64(np.float32(np.sqrt(x)))
        for j in range(w):
            b = root_bits[j]
            below[j] = max(b - _HALF_ULP32, 0)
            above[j] = b + _HALF_ULP32
        any_bad = False
        for j in range(w):
            x = xs[j]
            ok = (below_f[j] * below_f[j] - x) * (above_f[j] * above_f[j] - x) <= 0.0
            good[j] = ok
            any_bad |= not ok
            y32[j] = np.float32(roots[j])
        if any_bad:
            for j in range(w):
                if not good[j]:
                    y32[j] = _fix_root32(xs[j], y32[j])
                    if y32[j] != y32[j] and xs[j] == xs[j] and xs[j] >= 0.0:
                        broken += 1
        for j in range(w):
            ps[j] = ps[j] * decay - (ms[j] / (y32[j] * inv_sqrt_bc2 + eps)) * step_size
    return broken
