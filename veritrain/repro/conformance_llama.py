"""Conformance of the Llama operators of `veritrain.repro`: silu, rms_norm, rope, rope_tables.

Part of `veritrain.repro.conformance.run_conformance` (the same `ConformanceResult`s, the
same device handling). Each operator runs on the device under test and its float32 results
are compared bit for bit with a reference computed on the CPU without torch:

- `repro.silu`, all n inputs (random bit patterns over the whole float32 range, subnormals,
  moderate and short-mantissa values, specials, and a third uniform in [-30, 30]): the
  reference is the CORRECTLY ROUNDED float32 of the exact `x / (1 + e**-x)`. Where numpy's
  float64 evaluation (libm `exp`, a few ulps of float64 at most) lies farther than 2**-40
  (relative) from a float32 rounding midpoint, its float32 rounding is that value; the
  entries near a midpoint, and a random sample of `SILU_SAMPLE` others, are decided by
  mpmath interval arithmetic (rigorous enclosures, rounded at both ends by exact rational
  code; the precision doubles until both ends agree). Rules, not evaluations: NaN -> NaN,
  +inf -> +inf, -inf -> -0.0 (the limit), +-0 -> +-0, and for 0 < |x| < 2**-60 the value
  `x/2 + x**2/4 - ...` rounds as `x/2` does, a midpoint upward (the positive `x**2/4` is
  far below any float32 spacing). `reference.silu` checks numpy's float32 rounding against
  mpmath on the sample (it is trusted only away from midpoints).
- `repro.rms_norm`, rows of widths 1 to 64 (min(n, 2048) values; an all-zero row and rows
  small enough for eps to dominate): the exact real `y = x w / sqrt(mean(x**2) + eps)` has
  `y**2 = x**2 w**2 / (mean(x**2) + eps)`, a rational number, so its correctly rounded float32
  is decided exactly with `fractions.Fraction` (comparing y**2 with squared midpoints). The
  operator evaluates in float64 and may differ from it only where the exact value lies within
  2**-40 (relative) of a midpoint; there either neighbour is accepted.
- `repro.rope` and `repro.rope.backward` (min(n, 2048) values, at least 128): exactly the documented
  arithmetic, emulated with rationals: each pair `x0 c - x1 s`, `x0 s + x1 c` (and the
  backward's `g0 c + g1 s`, `-g0 s + g1 c`) is exact, rounded once to float64, then to float32.
- `repro.rope_tables`: every entry of three tables (T, hd, theta) = (64, 16, 1e4),
  (16, 64, 5e5), (4, 2, 1e4) against mpmath at 256 bits (an ordinary, not interval,
  evaluation), rounded to a 24-bit significand by mpmath's own `normalize`.

Run: not a script; `run_conformance("cpu", n)` includes these checks (`LLAMA_CHECKS`).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import mpmath
import mpmath.libmp as libmp
import numpy as np
import torch

from veritrain.repro.conformance_base import (
    F32,
    F64,
    Array,
    ConformanceResult,
    _compose,
    _Ctx,
    _floats,
    _host,
    _result,
    _round_fraction,
)
from veritrain.repro.elementwise import silu as repro_silu
from veritrain.repro.nn import rms_norm as repro_rms_norm
from veritrain.repro.rotary import rope as repro_rope
from veritrain.repro.rotary import rope_tables

__all__ = ["LLAMA_CHECKS", "SILU_SAMPLE", "silu_reference_f32"]

SILU_SAMPLE = 2000
"""Entries of the silu check decided by mpmath besides those near a rounding midpoint."""
_NEAR = 2.0**-40  # relative distance to a float32 midpoint below which numpy is not trusted
_TINY = 2.0**-60
_UNDERFLOW = -120.0  # x e**x rounds to -0 below: 120 e**-120 < 1e-50 < 2**-150
_START_PREC = 128
_TABLES = ((64, 16, 10000.0), (16, 64, 500000.0), (4, 2, 10000.0))
_TABLE_PREC = 256


def _mpf_fraction(t: Any) -> Fraction:
    """The exact rational value of a finite raw mpmath mpf tuple (sign, man, exp, bc)."""
    sign, man, exp = t[0], t[1], t[2]
    q: Fraction = Fraction(man) * (Fraction(2) ** exp)
    return -q if sign else q


def silu_reference_f32(x: float) -> float:
    """Correctly rounded float32 (as a Python float) of `x / (1 + e**-x)` for a float32 `x`.

    NaN, infinities, zeros, |x| < 2**-60 and x <= -120 by the rules of the module docstring;
    otherwise by mpmath interval arithmetic from 128 bits, doubled until both ends of the
    enclosure round (nearest even, subnormals included, exact rationals) to the same float32.
    """
    if x != x:
        return x
    if x == float("inf"):
        return x
    if x == float("-inf") or x <= _UNDERFLOW:
        return -0.0
    if x == 0.0:
        return x
    if abs(x) < _TINY:
        q = Fraction(x)
        return _round_fraction(q / 2 + q * q / 8, F32)
    prec = _START_PREC
    point = libmp.from_float(x)
    one = libmp.from_int(1)
    while True:
        xi = (point, point)
        den = libmp.mpi_add(libmp.mpi_exp(libmp.mpi_neg(xi, prec), prec), (one, one), prec)
        lo, hi = libmp.mpi_div(xi, den, prec)
        a = _round_fraction(_mpf_fraction(lo), F32)
        b = _round_fraction(_mpf_fraction(hi), F32)
        if a == b and np.signbit(a) == np.signbit(b):
            return a
        prec *= 2


def _neighbour(r32: Array, toward: Array) -> Array:
    """The float32 next to `r32` in the direction of the float64 `toward` (up when equal)."""
    up = np.nextafter(r32, np.float32(np.inf))
    down = np.nextafter(r32, np.float32(-np.inf))
    out: Array = np.where(toward < r32.astype(np.float64), down, up)
    return out


def _silu_inputs(ctx: _Ctx) -> Array:
    rng = ctx.rng("llama.silu")
    k = ctx.n // 3
    wide = _floats(rng, F32, ctx.n - k)
    moderate = rng.uniform(-30.0, 30.0, k).astype(np.float32)
    x: Array = np.concatenate([wide, moderate])[rng.permutation(ctx.n)]
    return x


def _check_silu(ctx: _Ctx) -> list[ConformanceResult]:
    x = _silu_inputs(ctx)
    got = _host(repro_silu(ctx.dev(x)))
    with np.errstate(all="ignore"):
        x64 = x.astype(np.float64)
        r64 = x64 / (1.0 + np.exp(-x64))
        r32 = r64.astype(np.float32)
        mid = (r32.astype(np.float64) + _neighbour(r32, r64).astype(np.float64)) * 0.5
        near = np.abs(r64 - mid) <= np.abs(r64) * _NEAR
    finite = np.isfinite(x) & (x != 0)
    tiny = finite & (np.abs(x64) < _TINY)
    exp = r32.copy()
    # rules: specials, and tiny x (x/2, a float32 midpoint rounded up)
    exp[np.isnan(x)] = np.float32(np.nan)
    exp[np.isposinf(x)] = np.float32(np.inf)
    exp[np.isneginf(x)] = np.float32(-0.0)
    exp[x == 0] = x[x == 0]
    half = x64[tiny] * 0.5  # exact
    t = half.astype(np.float32)
    tie = t.astype(np.float64) != half
    up = np.where(t.astype(np.float64) > half, t, np.nextafter(t, np.float32(np.inf)))
    exp[tiny] = np.where(tie, up, t)
    # mpmath: the entries near a midpoint and a random sample
    rng = ctx.rng("llama.silu.sample")
    sample = rng.choice(ctx.n, size=min(ctx.n, SILU_SAMPLE), replace=False)
    rigorous = np.zeros(ctx.n, dtype=bool)
    rigorous[sample] = True
    rigorous |= near
    rigorous &= finite & ~tiny
    idx = np.flatnonzero(rigorous)
    exact = np.array([silu_reference_f32(float(x[i])) for i in idx], dtype=np.float32)
    trusted = idx[~near[idx]]
    cross = _result(
        "reference.silu",
        "float32",
        r32[trusted],
        exact[~near[idx]],
        [x[trusted]],
    )
    exp[idx] = exact
    return [cross, _result("repro.silu", "float32", got, exp, [x])]


def _sqrt_round_f32(r: Fraction) -> tuple[np.float32, np.float32 | None]:
    """The float32 nearest sqrt(r) (r >= 0 rational), and the other neighbour when sqrt(r)
    lies within 2**-40 (relative) of the midpoint between them (else None). Exact."""
    if r == 0:
        return np.float32(0.0), None
    c = np.float32(float(r) ** 0.5)  # a candidate, corrected exactly below
    while True:
        up = np.nextafter(c, np.float32(np.inf))
        m_up = (Fraction(float(c)) + Fraction(float(up))) / 2
        if m_up * m_up < r or (m_up * m_up == r and int(c.view(np.uint32)) & 1):
            c = up
            continue
        down = np.nextafter(c, np.float32(0.0))
        m_dn = (Fraction(float(down)) + Fraction(float(c))) / 2
        if m_dn * m_dn > r or (m_dn * m_dn == r and int(c.view(np.uint32)) & 1):
            c = down
            continue
        break
    lo, hi = (1 - Fraction(_NEAR)) ** 2, (1 + Fraction(_NEAR)) ** 2
    for m, other in ((m_up, up), (m_dn, down)):
        if m * m * lo <= r <= m * m * hi:
            return c, other
    return c, None


_RMS_WIDTHS = (1, 2, 3, 4, 5, 7, 8, 16, 17, 64)
_RMS_EPS = 1e-5


def _check_rms_norm(ctx: _Ctx) -> list[ConformanceResult]:
    rng = ctx.rng("llama.rms_norm")
    total = min(ctx.n, 2048)
    xs: list[Array] = []
    ws: list[Array] = []
    gots: list[Array] = []
    exps: list[Array] = []
    used, row = 0, 0
    while used < total:
        d = _RMS_WIDTHS[row % len(_RMS_WIDTHS)]
        kind = row % 7
        if kind == 0 and row:
            x = np.zeros(d, dtype=np.float32)  # all zero: y = 0
        elif kind == 1:
            x = _compose(rng, F32, rng.integers(F32.bias - 70, F32.bias - 50, d))  # eps rules
        else:
            x = _compose(rng, F32, rng.integers(F32.bias - 20, F32.bias + 21, d), short=True)
        w = _compose(rng, F32, rng.integers(F32.bias - 4, F32.bias + 5, d), short=kind == 3)
        got = _host(repro_rms_norm(ctx.dev(x[None, :]), ctx.dev(w), _RMS_EPS)).reshape(-1)
        q = sum((Fraction(float(v)) ** 2 for v in x), Fraction(0)) / d + Fraction(_RMS_EPS)
        exp = np.empty(d, dtype=np.float32)
        for j in range(d):
            xw = Fraction(float(x[j])) * Fraction(float(w[j]))
            c, other = _sqrt_round_f32(xw * xw / q)
            if other is not None and abs(got[j]) == other:
                c = other  # within 2**-40 of a midpoint: either neighbour is right
            neg = bool(np.signbit(x[j])) != bool(np.signbit(w[j]))
            exp[j] = -c if neg else c
        xs.append(x)
        ws.append(w)
        gots.append(got)
        exps.append(exp)
        used += d
        row += 1
    return [
        _result(
            "repro.rms_norm",
            "float32",
            np.concatenate(gots),
            np.concatenate(exps),
            [np.concatenate(xs), np.concatenate(ws)],
        )
    ]


def _rotate_reference(a0: Array, a1: Array, f0: Array, f1: Array) -> Array:
    """float32 of float64(a0 * f0 + a1 * f1), each entry from exact rationals."""
    out = np.empty(a0.shape[0], dtype=np.float32)
    for i in range(a0.shape[0]):
        q = Fraction(float(a0[i])) * Fraction(float(f0[i]))
        q += Fraction(float(a1[i])) * Fraction(float(f1[i]))
        out[i] = _round_fraction(Fraction(_round_fraction(q, F64)), F32)
    return out


def _check_rope(ctx: _Ctx) -> list[ConformanceResult]:
    rng = ctx.rng("llama.rope")
    t, hd = 16, 8
    b = max(1, min(ctx.n, 2048) // (t * hd))
    shape = (b, 1, t, hd)
    count = b * t * hd

    def values(short: bool) -> Array:
        e = rng.integers(F32.bias - 30, F32.bias + 31, count)
        return _compose(rng, F32, e, short=short).reshape(shape)

    x, g = values(True), values(False)
    cos, sin = rope_tables(t, hd)
    xd = ctx.dev(x).requires_grad_(True)
    with torch.enable_grad():
        y = repro_rope(xd, cos.to(ctx.device), sin.to(ctx.device))
        y.backward(ctx.dev(g))  # type: ignore[no-untyped-call]
    assert xd.grad is not None
    got_y, got_g = _host(y), _host(xd.grad)
    c = np.broadcast_to(cos.numpy(), (b, 1, t, hd // 2)).reshape(-1)
    s = np.broadcast_to(sin.numpy(), (b, 1, t, hd // 2)).reshape(-1)
    x0, x1 = x[..., 0::2].reshape(-1), x[..., 1::2].reshape(-1)
    g0, g1 = g[..., 0::2].reshape(-1), g[..., 1::2].reshape(-1)
    exp_y = np.empty(shape, dtype=np.float32)
    exp_y[..., 0::2] = _rotate_reference(x0, x1, c, -s).reshape(b, 1, t, hd // 2)
    exp_y[..., 1::2] = _rotate_reference(x0, x1, s, c).reshape(b, 1, t, hd // 2)
    exp_g = np.empty(shape, dtype=np.float32)
    exp_g[..., 0::2] = _rotate_reference(g0, g1, c, s).reshape(b, 1, t, hd // 2)
    exp_g[..., 1::2] = _rotate_reference(g0, g1, -s, c).reshape(b, 1, t, hd // 2)
    return [
        _result("repro.rope", "float32", got_y, exp_y, [x]),
        _result("repro.rope.backward", "float32", got_g, exp_g, [g]),
    ]


def _table_entry_f32(value: Any) -> float:
    """mpmath's own rounding of an mpf to a 24-bit significand (nearest even), as a float."""
    sign, man, exp, bc = value._mpf_
    return float(libmp.to_float(libmp.normalize(sign, man, exp, bc, 24, "n")))


def _check_rope_tables(ctx: _Ctx) -> list[ConformanceResult]:
    mp = mpmath.MPContext()
    mp.prec = _TABLE_PREC
    gots: list[Array] = []
    exps: list[Array] = []
    labels: list[str] = []
    for t_len, hd, theta in _TABLES:
        cos, sin = rope_tables(t_len, hd, theta)
        for t in range(t_len):
            for i in range(hd // 2):
                angle = t * mp.power(mp.mpf(theta), mp.mpf(-2 * i) / hd)
                for table, fn in ((cos, mp.cos), (sin, mp.sin)):
                    gots.append(table[t, i].numpy().reshape(1))
                    exps.append(np.array([_table_entry_f32(fn(angle))], dtype=np.float32))
                    labels.append(f"T={t_len} hd={hd} theta={theta} t={t} i={i}")
    return [
        _result(
            "repro.rope_tables",
            "float32",
            np.concatenate(gots),
            np.concatenate(exps),
            lambda k: labels[k],
        )
    ]


LLAMA_CHECKS: list[Callable[[_Ctx], list[ConformanceResult]]] = [
    _check_silu,
    _check_rms_norm,
    _check_rope,
    _check_rope_tables,
]
"""The checks of this module, run by `veritrain.repro.conformance.run_conformance`."""
