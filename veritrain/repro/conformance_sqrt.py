"""Conformance of square roots: `veritrain.repro.sqrt` (and torch's own, for the record) against
an exact integer reference from `math.isqrt` (`veritrain.repro.conformance`).

Run: not a script; `check_sqrt(torch.sqrt, "cpu", n)`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
import torch

from veritrain.repro.conformance_base import (
    F32,
    F64,
    Array,
    ConformanceResult,
    SqrtFn,
    _compose,
    _Ctx,
    _Fmt,
    _host,
    _result,
    _rng,
    _specials,
    _split,
    _tile,
)
from veritrain.repro.sqrt import sqrt as repro_sqrt
from veritrain.repro.sqrt import sqrt_scalar

__all__ = ["SQRT_CHECKS", "check_sqrt"]

# ----------------------------------------------------------------------------------------
# square roots


def _sqrt_reference(x: Array, fmt: _Fmt) -> Array:
    """Correctly rounded square roots of `x` (float32 or float64 array) from `math.isqrt`.

    For finite x > 0: x = M * 2**E with an integer M; N = M * 2**s with s chosen so that
    N has 2p-1 or 2p bits and E - s is even; q = isqrt(N) has p bits and the exact root of N
    lies in [q, q+1); it lies above q + 1/2 iff N - q*q > q (the root of an integer is never
    a half-integer). The result (q or q+1) * 2**((E - s)/2) is exact in the format (the
    root of any positive float is a normal float, including q+1 = 2**p). Zeros, +inf, NaN and
    negative inputs follow IEEE 754.
    """
    u = x.view(fmt.uint).astype(np.uint64)
    field = ((u >> np.uint64(fmt.frac)) & np.uint64(fmt.emax_field)).astype(np.int64)
    frac = (u & np.uint64((1 << fmt.frac) - 1)).astype(np.int64)
    regular = np.isfinite(x) & (x > 0)
    mant = np.where(field == 0, frac, frac | (1 << fmt.frac))
    exp2 = np.where(field == 0, fmt.emin, field - fmt.bias) - fmt.frac
    two_p = 2 * fmt.prec
    ms = mant[regular].tolist()
    es = exp2[regular].tolist()
    roots: list[int] = []
    scales: list[int] = []
    isqrt = math.isqrt
    for mv, ev in zip(ms, es, strict=True):
        s = two_p - mv.bit_length()
        if (ev - s) & 1:
            s -= 1
        big = mv << s
        q = isqrt(big)
        if big - q * q > q:
            q += 1
        roots.append(q)
        scales.append((ev - s) >> 1)
    with np.errstate(all="ignore"):
        special = np.where((x == 0) | (x == np.inf), x, np.nan).astype(fmt.np_dtype)
    out = special.copy()
    vals = np.ldexp(np.array(roots, dtype=np.float64), np.array(scales, dtype=np.int64))
    out[regular] = vals.astype(fmt.np_dtype)  # exact: q <= 2**p and the root is normal
    return out


def _sqrt_inputs(rng: np.random.Generator, fmt: _Fmt, n: int) -> Array:
    """Positive floats over the whole range (subnormals included), exact squares and their
    neighbours, inputs whose roots lie within a hair of a rounding midpoint, and specials."""
    k = _split(n, 5)
    p = fmt.prec
    whole = _compose(rng, fmt, rng.integers(0, fmt.emax_field, k[0]), sign=False)
    sub = _compose(rng, fmt, np.zeros(k[1], dtype=np.int64), sign=False)
    # exact squares of short roots, and one ulp either side
    r = rng.integers(1, 1 << (p // 2), k[2]).astype(np.float64)
    sq = (r * r).astype(fmt.np_dtype)  # exact: at most p bits
    ev = 2 * rng.integers(-(fmt.bias // 2) + p, fmt.bias // 2 - p, k[2])
    sq = np.ldexp(sq, ev).astype(fmt.np_dtype)
    step = rng.integers(-1, 2, k[2]).astype(np.int64)
    sq = (sq.view(fmt.uint).astype(np.int64) + step).astype(fmt.uint).view(fmt.np_dtype)
    # near midpoints: y = 2R + 1 (p+1 bits, a midpoint of p-bit roots), x = y*y rounded
    # down or up to p bits, scaled by an even power of two
    mids: list[float] = []
    lo_r = 1 << (p - 1)
    rs = rng.integers(lo_r, 2 * lo_r, k[3]).tolist()
    ups = rng.integers(0, 2, k[3]).tolist()
    evs = (2 * rng.integers(-(fmt.bias // 3), fmt.bias // 3, k[3])).tolist()
    for rv, up, e2 in zip(rs, ups, evs, strict=True):
        y2 = (2 * rv + 1) ** 2
        shift = y2.bit_length() - p
        xm = (y2 >> shift) + up
        mids.append(math.ldexp(xm, shift - 2 + e2 - 2 * (p - 1)))  # root ~ 2**(e2/2)
    near = np.array(mids, dtype=np.float64).astype(fmt.np_dtype)
    spec = _tile(_specials(fmt), k[4])
    x = np.concatenate([whole, sub, sq, near, spec])
    return x[rng.permutation(n)]


def check_sqrt(
    fn: SqrtFn,
    dtype: torch.dtype = torch.float32,
    n: int = 1_000_000,
    device: str = "cpu",
    seed: int = 0,
) -> ConformanceResult:
    """Check a tensor square root against the exact `math.isqrt` reference, bit for bit.

    Args:
        fn: the square root under test, e.g. `veritrain.repro.sqrt` or `torch.sqrt`; called
            once on a 1-d tensor of `n` inputs on `device`, must return the same dtype.
        dtype: torch.float32 or torch.float64.
        n: number of inputs (positive whole-range values, subnormals, exact squares and
            their neighbours, near-midpoint roots, zeros, +-inf, NaN, negatives).
        device: where `fn` runs ("cpu", "cuda", ...); inputs are drawn on the CPU.
        seed: seed of the input generator.

    Returns:
        A `ConformanceResult` named "sqrt" (NaN compared as "both NaN").

    Raises:
        ValueError: `dtype` is not float32 or float64.
    """
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"check_sqrt: dtype must be float32 or float64, got {dtype}")
    fmt = F32 if dtype == torch.float32 else F64
    rng = _rng(seed, f"sqrt/{fmt.name}")
    x = _sqrt_inputs(rng, fmt, n)
    ref = _sqrt_reference(x, fmt)
    got = _host(fn(torch.from_numpy(x).to(device)))
    return _result("sqrt", fmt.name, got, ref, [x])


def _check_sqrt_all(ctx: _Ctx) -> list[ConformanceResult]:
    out: list[ConformanceResult] = []
    for dt in (torch.float32, torch.float64):
        r = check_sqrt(repro_sqrt, dt, ctx.n, str(ctx.device), ctx.seed)
        out.append(dataclasses.replace(r, name="repro.sqrt"))
        # the isqrt reference against CPython's math.sqrt (the C library's binary64 root,
        # rounded once more to float32: innocuous, 53 >= 2*24 + 2) on a subset
        fmt = F32 if dt == torch.float32 else F64
        rng = ctx.rng(f"reference.sqrt/{fmt.name}")
        x = _sqrt_inputs(rng, fmt, ctx.n_cross)
        ref = _sqrt_reference(x, fmt)
        with np.errstate(all="ignore"):
            libm = [math.sqrt(v) if v >= 0 else math.nan for v in x.astype(np.float64).tolist()]
            alt = np.array(libm, dtype=np.float64).astype(fmt.np_dtype)
        out.append(_result("reference.sqrt", fmt.name, ref, alt, [x]))
    rng = ctx.rng("sqrt_scalar")
    x = _sqrt_inputs(rng, F64, ctx.n)
    ref = _sqrt_reference(x, F64)
    got = np.array([sqrt_scalar(v) for v in x.tolist()], dtype=np.float64)
    out.append(_result("repro.sqrt_scalar", "float64 (Python float)", got, ref, [x]))
    return out


SQRT_CHECKS: list[Callable[[_Ctx], list[ConformanceResult]]] = [_check_sqrt_all]
"""The square-root checks, in the order `run_conformance` reports them."""
