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
- A result's last rounding is the store into its output array (a float64 value stored into a
  float32 array rounds to nearest even): given float64 output arrays, a kernel shows the values
  before that rounding, which the tests compare with the eager chains' float64 values (a
  difference there would only rarely survive the rounding to float32).

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
def _exp64(xv: Any, table: Any, pow2: Any) -> Any:
    """`elementwise.exp64` of one float64, its operations in its order.

    The eager version multiplies by `2**m` by adding `m` to the exponent field of a positive
    normal `y` whose product stays normal; multiplying by the exact power of two `pow2[m]`
    gives the same bits.
    """
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
    return 0.0 if xv < -_LIM else y


@_jit
def exp64_kernel(x: Any, out: Any, table: Any, pow2: Any) -> None:
    """`out[i] = exp64(x[i])` for 1-d float64 arrays (`out` may be `x`)."""
    for i in range(x.size):
        out[i] = _exp64(x[i], table, pow2)


@_jit
def _pow2_at_least(n: int) -> int:
    """The smallest power of two >= n (n >= 1): the width `sum_tree64` pads a sum to."""
    width = 1
    while width < n:
        width *= 2
    return width


@_jit
def _tree_rows(rows: Any) -> None:
    """`sum_tree64(., 0)` over the rows of float64 `rows` (height a power of two, zero rows
    padding the tail): the upper half added onto the lower half until row 0 holds the sums."""
    h = rows.shape[0]
    while h > 1:
        h //= 2
        for i in range(h):
            for j in range(rows.shape[1]):
                rows[i, j] = rows[i, j] + rows[i + h, j]


@_jit
def _tree_buffer(n: int) -> Any:
    """A float64 scratch row for `_tree_sum` over `n` values: `_pow2_at_least(n)` entries."""
    return np.empty(_pow2_at_least(n), np.float64)


@_jit
def _tree_sum(buf: Any, n: int) -> Any:
    """`reduce.sum_tree64` of `buf[:n]` (`buf` from `_tree_buffer(n)`): the tail padded with +0
    to `buf`'s power-of-two width, then the upper half added onto the lower half until one
    entry is left. Destroys `buf`."""
    w = buf.size
    for i in range(n, w):
        buf[i] = 0.0
    while w > 1:
        w //= 2
        for i in range(w):
            buf[i] = buf[i] + buf[i + w]
    return buf[0]


@_jit
def softmax_forward_kernel(x: Any, out: Any, table: Any, pow2: Any) -> None:
    """`nn._softmax64` over the rows of a C-contiguous float32 (rows, n), rounded to float32.

    Per row: the float32 maximum (NaN if any entry is NaN, 0 for a row of -inf, as
    `nn._row_max`), `e = exp64(x - max)` in float64, `e / sum_tree64(e)` rounded once.
    """
    rows, n = x.shape
    e = np.empty(n, np.float64)
    buf = _tree_buffer(n)
    for i in range(rows):
        top = np.float32(-np.inf)
        nan = False
        for j in range(n):
            v = x[i, j]
            if v != v:
                nan = True
            elif v > top:
                top = v
        m = np.nan if nan else (0.0 if top == -np.inf else np.float64(top))
        for j in range(n):
            e[j] = _exp64(np.float64(x[i, j]) - m, table, pow2)
            buf[j] = e[j]
        s = _tree_sum(buf, n)
        for j in range(n):
            out[i, j] = e[j] / s


@_jit
def softmax_backward_kernel(y: Any, g: Any, out: Any) -> None:
    """`_Softmax.backward` over C-contiguous float32 (rows, n): per row, in float64,
    `gy = g * y`, `dot = sum_tree64(gy)`, `gy - y * dot` rounded once to float32."""
    rows, n = y.shape
    gy = np.empty(n, np.float64)
    buf = _tree_buffer(n)
    for i in range(rows):
        for j in range(n):
            gy[j] = np.float64(g[i, j]) * np.float64(y[i, j])
            buf[j] = gy[j]
        dot = _tree_sum(buf, n)
        for j in range(n):
            out[i, j] = gy[j] - np.float64(y[i, j]) * dot


@_jit
def round32_kernel(x: Any, out: Any) -> None:
    """`out = float32(x + 0.0)` for 1-d float64 `x`: a GEMM result's zero made +0 (as
    `gemm._gemm64`), then rounded once to float32."""
    for i in range(x.size):
        out[i] = np.float32(x[i] + 0.0)


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


_ABS_BITS32 = np.int32(0x7FFFFFFF)
_INF_BITS32 = 0x7F800000


@_jit
def _row_exponent(max_bits: Any) -> Any:
    """`torch.frexp`'s exponent of the float32 whose bit pattern is `max_bits` (>= 0): `e` with
    `2**(e-1) <= |x| < 2**e`; 0 for zero, infinity and NaN (as torch's frexp gives)."""
    if max_bits >= _INF_BITS32 or max_bits == 0:
        return 0
    biased = max_bits >> 23
    if biased > 0:
        return biased - 126
    width = 0  # a subnormal: |x| = max_bits * 2**-149
    while max_bits:
        max_bits >>= 1
        width += 1
    return width - 149


@_jit
def _grid_constant(e: Any, p: int, pow2: Any) -> Any:
    """`gemm.quantize`'s `c = 1.5 * 2**(e + 52 - p)`: `(x + c) - c` rounds `|x| < 2**e` to the
    grid `2**(e - p)`."""
    return 1.5 * pow2[e + 52 - p - _POW2_MIN]


@_jit
def quantize_rows_kernel(x: Any, p: int, pow2: Any, out: Any, exps: Any) -> None:
    """`gemm.quantize` of a C-contiguous float32 (rows, k): one power-of-two scale per row.

    The row's largest magnitude as the largest `|x|` bit pattern (the same value as eager's
    `max(-amin, amax)`; any NaN or infinity gives exponent 0, as there), then
    `out = (float64(x) + c) - c` with `c = 1.5 * 2**(e + 52 - p)`: the eager operations.
    `exps` (rows,) int64 receives `e`.
    """
    bits = x.view(np.int32)
    rows, k = x.shape
    for i in range(rows):
        top = np.int32(0)
        for j in range(k):
            top = max(top, bits[i, j] & _ABS_BITS32)
        e = _row_exponent(top)
        exps[i] = e
        c = _grid_constant(e, p, pow2)
        for j in range(k):
            out[i, j] = (np.float64(x[i, j]) + c) - c


_COL_TILE = 16  # operand rows written per sweep of a transposing quantisation


@_jit
def quantize_cols_kernel(
    x: Any, p: int, pow2: Any, out: Any, exps: Any, transpose_out: bool
) -> None:
    """`gemm.quantize` of an operand stored transposed: C-contiguous float32 `x` (batch, k, m)
    whose operand rows are its columns `x[b, :, c]` (a scale per column).

    `out` is (batch, k, m) in `x`'s layout, or (batch, m, k) row-major when `transpose_out`
    (written in tiles of 16 operand rows); `exps` (batch, m) int64.
    """
    bits = x.view(np.int32)
    batch, k, m = x.shape
    top = np.empty(m, np.int32)
    cst = np.empty(m, np.float64)
    for b in range(batch):
        top[:] = 0
        for r in range(k):
            for c in range(m):
                top[c] = max(top[c], bits[b, r, c] & _ABS_BITS32)
        for c in range(m):
            e = _row_exponent(top[c])
            exps[b, c] = e
            cst[c] = _grid_constant(e, p, pow2)
        if not transpose_out:
            for r in range(k):
                for c in range(m):
                    out[b, r, c] = (np.float64(x[b, r, c]) + cst[c]) - cst[c]
        else:
            for c0 in range(0, m, _COL_TILE):
                c1 = min(c0 + _COL_TILE, m)
                for r in range(k):
                    for c in range(c0, c1):
                        out[b, c, r] = (np.float64(x[b, r, c]) + cst[c]) - cst[c]


_SPLIT = 134217729.0  # 2**27 + 1: Veltkamp's constant for binary64 (as `repro.sqrt`)


@_jit
def _sqrt64(x: Any) -> Any:
    """`repro.sqrt.sqrt64` of one float64: the hardware root as a candidate, proven (or moved
    one ulp at a time) by the same exact Dekker residual test on `x` scaled into [0.5, 2).
    The correctly rounded root is unique, so this is `sqrt64`'s result; NaN if 8 moves do not
    settle it (a broken root; `sqrt64` raises there)."""
    if not (x > 0.0 and x < np.inf):
        return np.sqrt(x)  # +-0, +inf, NaN and negatives: the IEEE results sqrt64 gives
    m, e = math.frexp(x)
    odd = e & 1
    xr = m * 2.0 if odd else m
    s = np.sqrt(xr)
    for _ in range(_MAX_FIXES):
        g = s * _SPLIT
        hi = g - (g - s)
        lo = s - hi
        p = s * s
        err = ((hi * hi - p) + (hi * lo) * 2.0) + lo * lo
        r = (xr - p) - err
        up = np.nextafter(s, np.inf)
        down = np.nextafter(s, 0.0)
        if r > s * (up - s):
            s = up
        elif r <= -(s * (s - down)):
            s = down
        else:
            return math.ldexp(s, (e - odd) // 2)
    return np.nan


@_jit
def rmsnorm_forward_kernel(
    x: Any, w: Any, eps: float, inv_d: float, y: Any, xhat: Any, rstd: Any
) -> None:
    """`nn._RMSNorm.forward` over the rows of C-contiguous float32 `x` (rows, d), float64
    inside: `ms = sum_tree64(x * x) * inv_d`, `rstd = 1 / sqrt64(ms + eps)`, `xhat = x *
    rstd`, `y = float32(xhat * w)`; `xhat` (rows, d) and `rstd` (rows,) are kept."""
    rows, d = x.shape
    buf = _tree_buffer(d)
    for i in range(rows):
        for j in range(d):
            v = np.float64(x[i, j])
            buf[j] = v * v
        r = 1.0 / _sqrt64(_tree_sum(buf, d) * inv_d + eps)
        rstd[i] = r
        for j in range(d):
            h = np.float64(x[i, j]) * r
            xhat[i, j] = h
            y[i, j] = h * np.float64(w[j])


@_jit
def rmsnorm_backward_kernel(
    g: Any, w: Any, xhat: Any, rstd: Any, inv_d: float, gx: Any, gw: Any
) -> None:
    """`nn._RMSNorm.backward` for C-contiguous operands, float64 inside: per row `u = g * w`,
    `b = sum_tree64(u * xhat) * inv_d`, `gx = float32((u - xhat * b) * rstd)`; and `gw =
    float32(sum_tree64 over the rows of g * xhat)` (the pairwise tree along the rows, padded
    with zero rows to a power of two, as the eager `sum_tree64(., 0)`)."""
    rows, d = g.shape
    buf = _tree_buffer(d)
    u = np.empty(d, np.float64)
    height = _pow2_at_least(rows)
    cols = np.zeros((height, d), np.float64)  # rows of g * xhat, then the tree over them
    for i in range(rows):
        for j in range(d):
            gv = np.float64(g[i, j])
            u[j] = gv * np.float64(w[j])
            buf[j] = u[j] * xhat[i, j]
            cols[i, j] = gv * xhat[i, j]
        b = _tree_sum(buf, d) * inv_d
        r = rstd[i]
        for j in range(d):
            gx[i, j] = (u[j] - xhat[i, j] * b) * r
    _tree_rows(cols)
    for j in range(d):
        gw[j] = cols[0, j]


_SILU_TINY = _ew._SILU_TINY
_ULP_UP = _ew._ULP_UP


@_jit
def silu_forward_kernel(x: Any, y: Any, s: Any, table: Any, pow2: Any) -> None:
    """`elementwise.silu64` of float32 `x` (1-d), rounded to float32 into `y`; the float64
    sigmoid into `s`: `s = 1 / (exp64(-x) + 1)`, `y = x * s`, and the two fix-ups (x = -inf
    gives -0; 0 < |x| < 2**-100 gives `x/2 + |x/2| * 2**-52`) entry by entry."""
    for i in range(x.size):
        xv = np.float64(x[i])
        sv = 1.0 / (_exp64(-xv, table, pow2) + 1.0)
        s[i] = sv
        yv = xv * sv
        if abs(xv) < _SILU_TINY and xv != 0.0:
            half = xv * 0.5
            yv = half + abs(half) * _ULP_UP
        elif xv == -np.inf:
            yv = -0.0
        y[i] = yv


@_jit
def silu_backward_kernel(x: Any, s: Any, g: Any, out: Any) -> None:
    """`_Silu.backward` (1-d): `d = (((1 - s) * x) + 1) * s`, the limits 1 at +inf and 0 at
    -inf, `out = float32(g * d)`, all in float64."""
    for i in range(x.size):
        xv = np.float64(x[i])
        sv = s[i]
        dv = ((1.0 - sv) * xv + 1.0) * sv
        if xv == np.inf:
            dv = 1.0
        elif xv == -np.inf:
            dv = 0.0
        out[i] = np.float64(g[i]) * dv


@_jit
def rope_kernel(x: Any, first: Any, second: Any, out: Any) -> None:
    """`rotary._rotate` of float32 `x` (B, H, T, hd), any strides: for pair i of position t,
    `out[..., t, 2i + c] = float32(x0 * first[t, i, c] + x1 * second[t, i, c])` in float64
    (both products exact, one rounded sum), `out` C-contiguous."""
    nb, nh, nt, hd = x.shape
    for b in range(nb):
        for h in range(nh):
            for t in range(nt):
                for i in range(hd // 2):
                    x0 = np.float64(x[b, h, t, 2 * i])
                    x1 = np.float64(x[b, h, t, 2 * i + 1])
                    out[b, h, t, 2 * i] = x0 * first[t, i, 0] + x1 * second[t, i, 0]
                    out[b, h, t, 2 * i + 1] = x0 * first[t, i, 1] + x1 * second[t, i, 1]


@_jit
def layernorm_forward_kernel(
    x: Any, w: Any, bias: Any, eps: float, inv_d: float, y: Any, xhat: Any, rstd: Any
) -> None:
    """`nn._LayerNorm.forward` with a weight and a bias over the rows of C-contiguous float32
    `x` (rows, d), float64 inside: `mean = sum_tree64(x) * inv_d`, `xc = x - mean`, `var =
    sum_tree64(xc * xc) * inv_d`, `rstd = 1 / sqrt64(var + eps)`, `xhat = xc * rstd`, `y =
    float32(xhat * w + bias)`; `xhat` (rows, d) and `rstd` (rows,) are kept."""
    rows, d = x.shape
    buf = _tree_buffer(d)
    xc = np.empty(d, np.float64)
    for i in range(rows):
        for j in range(d):
            buf[j] = np.float64(x[i, j])
        mean = _tree_sum(buf, d) * inv_d
        for j in range(d):
            xc[j] = np.float64(x[i, j]) - mean
            buf[j] = xc[j] * xc[j]
        r = 1.0 / _sqrt64(_tree_sum(buf, d) * inv_d + eps)
        rstd[i] = r
        for j in range(d):
            h = xc[j] * r
            xhat[i, j] = h
            y[i, j] = h * np.float64(w[j]) + np.float64(bias[j])


@_jit
def layernorm_backward_kernel(
    g: Any, w: Any, xhat: Any, rstd: Any, inv_d: float, gx: Any, gw: Any, gb: Any
) -> None:
    """`nn._LayerNorm.backward` with a weight and a bias, C-contiguous operands, float64
    inside: per row `dxhat = g * w`, `a = sum_tree64(dxhat) * inv_d`, `b = sum_tree64(dxhat *
    xhat) * inv_d`, `gx = float32(((dxhat - a) - xhat * b) * rstd)`; `gw` and `gb` the
    pairwise trees over the rows of `g * xhat` and of `g`, rounded to float32."""
    rows, d = g.shape
    buf = _tree_buffer(d)
    buf2 = _tree_buffer(d)
    dxhat = np.empty(d, np.float64)
    height = _pow2_at_least(rows)
    cols_w = np.zeros((height, d), np.float64)
    cols_b = np.zeros((height, d), np.float64)
    for i in range(rows):
        for j in range(d):
            gv = np.float64(g[i, j])
            dxhat[j] = gv * np.float64(w[j])
            buf[j] = dxhat[j]
            buf2[j] = dxhat[j] * xhat[i, j]
            cols_w[i, j] = gv * xhat[i, j]
            cols_b[i, j] = gv
        a = _tree_sum(buf, d) * inv_d
        b = _tree_sum(buf2, d) * inv_d
        r = rstd[i]
        for j in range(d):
            gx[i, j] = ((dxhat[j] - a) - xhat[i, j] * b) * r
    _tree_rows(cols_w)
    _tree_rows(cols_b)
    for j in range(d):
        gw[j] = cols_w[0, j]
        gb[j] = cols_b[0, j]


_GELU_A = _ew._GELU_A
_GELU_M2C = _ew._GELU_M2C
_GELU_2C = _ew._GELU_2C
_GELU_3A = 3.0 * _ew._GELU_A  # the double the eager backward multiplies by


@_jit
def gelu_forward_kernel(x: Any, y: Any, s: Any, table: Any, pow2: Any) -> None:
    """`elementwise.gelu64` of float32 `x` (1-d): `u = (((x * x) * x) * A + x) * -2C`, `s = 1 /
    (exp64(u) + 1)`, `y = float32(x * s)`; the float64 `s` is kept."""
    for i in range(x.size):
        xv = np.float64(x[i])
        u = (((xv * xv) * xv) * _GELU_A + xv) * _GELU_M2C
        sv = 1.0 / (_exp64(u, table, pow2) + 1.0)
        s[i] = sv
        y[i] = xv * sv


@_jit
def gelu_backward_kernel(x: Any, s: Any, g: Any, out: Any) -> None:
    """`_Gelu.backward` (1-d), float64: `du2 = ((x * x) * 3A + 1) * 2C`, `d = (((1 - s) * s) * x)
    * du2 + s`, `out = float32(g * d)`."""
    for i in range(x.size):
        xv = np.float64(x[i])
        sv = s[i]
        du2 = ((xv * xv) * _GELU_3A + 1.0) * _GELU_2C
        dv = (((1.0 - sv) * sv) * xv) * du2 + sv
        out[i] = np.float64(g[i]) * dv
