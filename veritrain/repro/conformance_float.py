"""Conformance checks of the float primitives: IEEE `+ - * /`, Python scalars, unary ops,
frexp and rounding, comparisons and `where`, reductions and casts (`veritrain.repro.conformance`).

Run: not a script; `veritrain.repro.conformance.run_conformance` runs them.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import torch

from veritrain.repro.conformance_base import (
    _FMTS,
    F32,
    F64,
    Array,
    ConformanceResult,
    _compose,
    _cross_check,
    _Ctx,
    _exact_binop_at,
    _floats,
    _Fmt,
    _hex1,
    _host,
    _pairs,
    _result,
    _round_fraction,
    _split,
)

__all__ = ["FLOAT_CHECKS"]

# ----------------------------------------------------------------------------------------
# the checks

_NP_BIN = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}
_T_BIN: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
}
# Python scalars the package multiplies or adds (AdamW's defaults, exp/log constants) and
# random ones; torch rounds a Python float to the tensor's dtype before the operation.
_SCALARS = [0.9, 0.1, 0.999, 1e-3, 1e-8, 1.0 - 1e-3 * 1e-2, 2.0, -2.0, 1.0, -1.0, 0.5, 1.5]
_SCALARS += [float.fromhex("0x1.71547652b82fep+5"), float.fromhex("0x1.62e42p-6")]


def _check_binary(ctx: _Ctx) -> list[ConformanceResult]:
    out: list[ConformanceResult] = []
    for op, npf in _NP_BIN.items():
        for fmt in _FMTS:
            rng = ctx.rng(f"{op}/{fmt.name}")
            a, b = _pairs(rng, fmt, ctx.n)
            with np.errstate(all="ignore"):
                ref = npf(a, b)
            got = _host(_T_BIN[op](ctx.dev(a), ctx.dev(b)))
            out.append(_result(op, fmt.name, got, ref, [a, b]))
            idx = rng.choice(ctx.n, ctx.n_cross, replace=False)
            al, bl = a.tolist(), b.tolist()
            out.append(
                _cross_check(
                    op,
                    fmt,
                    ref,
                    functools.partial(_exact_binop_at, op, al, bl, fmt),
                    idx,
                    [a, b],
                )
            )
    return out


def _check_scalar_ops(ctx: _Ctx) -> list[ConformanceResult]:
    out: list[ConformanceResult] = []
    blocks = 64
    for op in ("add_scalar", "sub_scalar", "rsub_scalar", "mul_scalar"):
        for fmt in _FMTS:
            rng = ctx.rng(f"{op}/{fmt.name}")
            x = _floats(rng, fmt, ctx.n)
            extra = _floats(rng, F64, blocks - len(_SCALARS)).tolist()
            scalars = [c for c in _SCALARS + extra if math.isfinite(c)]
            sizes = _split(ctx.n, len(scalars))
            got_parts, ref_parts, c_parts = [], [], []
            start = 0
            xd = ctx.dev(x)
            for c, size in zip(scalars, sizes, strict=True):
                xs, xt = x[start : start + size], xd[start : start + size]
                start += size
                with np.errstate(all="ignore"):
                    cr = np.array(c, dtype=np.float64).astype(fmt.np_dtype)  # torch's rounding
                    if op == "add_scalar":
                        r, g = xs + cr, xt + c
                    elif op == "sub_scalar":
                        r, g = xs - cr, xt - c
                    elif op == "rsub_scalar":
                        r, g = cr - xs, c - xt
                    else:
                        r, g = xs * cr, xt * c
                ref_parts.append(np.asarray(r, dtype=fmt.np_dtype))
                got_parts.append(_host(g))
                c_parts.append(np.full(size, c, dtype=np.float64))
            out.append(
                _result(
                    op,
                    fmt.name,
                    np.concatenate(got_parts),
                    np.concatenate(ref_parts),
                    [x, np.concatenate(c_parts)],
                )
            )
    return out


def _sign_bit(fmt: _Fmt) -> Any:
    return fmt.uint(1 << (fmt.frac + fmt.ebits))


def _check_unary_float(ctx: _Ctx) -> list[ConformanceResult]:
    out: list[ConformanceResult] = []
    for fmt in _FMTS:
        rng = ctx.rng(f"unary/{fmt.name}")
        x = _floats(rng, fmt, ctx.n)
        xd = ctx.dev(x)
        u = x.view(fmt.uint)
        sb = _sign_bit(fmt)
        neg_ref = (u ^ sb).view(fmt.np_dtype)
        abs_ref = (u & ~sb).view(fmt.np_dtype)
        out.append(_result("neg", fmt.name, _host(-xd), neg_ref, [x]))
        out.append(_result("neg", fmt.name + " (neg_)", _host(xd.clone().neg_()), neg_ref, [x]))
        out.append(_result("abs", fmt.name, _host(torch.abs(xd)), abs_ref, [x]))
        with np.errstate(all="ignore"):
            out.append(_result("isnan", fmt.name, _host(torch.isnan(xd)), np.isnan(x), [x]))
            out.append(_result("isinf", fmt.name, _host(torch.isinf(xd)), np.isinf(x), [x]))
            out.append(
                _result("isneginf", fmt.name, _host(torch.isneginf(xd)), np.isneginf(x), [x])
            )
            ntn = np.nan_to_num(x, nan=0.0)
        out.append(
            _result("nan_to_num", fmt.name, _host(xd.clone().nan_to_num_(nan=0.0)), ntn, [x])
        )
        mask = rng.integers(0, 2, ctx.n).astype(bool)
        mf = np.where(mask, fmt.np_dtype(0.0), x)
        got = _host(xd.clone().masked_fill_(ctx.dev(mask), 0.0))
        out.append(_result("masked_fill", fmt.name, got, mf, [x], nan_equal=False))
        # clamp with the package's bounds and random non-zero finite bounds
        lo_hi = [(-700.0, 700.0), (None, 1.0), (-1.0, None)]
        bnd = [abs(float(v)) for v in _floats(rng, fmt, 40) if math.isfinite(v) and v != 0]
        lo_hi += [(-c, c) for c in bnd[:20]]
        got_parts: list[Array] = []
        ref_parts: list[Array] = []
        for (lo, hi), size in zip(lo_hi, _split(ctx.n, len(lo_hi)), strict=True):
            s0 = sum(part.shape[0] for part in ref_parts)
            xs = x[s0 : s0 + size]
            with np.errstate(all="ignore"):
                r = xs.copy()
                if lo is not None:
                    r = np.where(r < fmt.np_dtype(lo), fmt.np_dtype(lo), r)
                if hi is not None:
                    r = np.where(r > fmt.np_dtype(hi), fmt.np_dtype(hi), r)
            ref_parts.append(r.astype(fmt.np_dtype))
            got_parts.append(_host(torch.clamp(xd[s0 : s0 + size], min=lo, max=hi)))
        out.append(
            _result("clamp", fmt.name, np.concatenate(got_parts), np.concatenate(ref_parts), [x])
        )
    return out


def _frexp_ref(x: Array, fmt: _Fmt) -> tuple[Array, Array]:
    """frexp from the bit pattern: x = m * 2**e, 0.5 <= |m| < 1 (finite x; 0 -> (x, 0))."""
    u = x.view(fmt.uint).astype(np.uint64)
    fb = np.uint64(fmt.frac)
    field = ((u >> fb) & np.uint64(fmt.emax_field)).astype(np.int64)
    frac = u & np.uint64((1 << fmt.frac) - 1)
    sign = u & np.uint64(1 << (fmt.frac + fmt.ebits))
    # normalise subnormals with integer shifts
    lz = np.zeros_like(field)
    sub = (field == 0) & (frac != 0)
    if sub.any():
        fs = frac[sub]
        bl = np.floor(np.log2(fs.astype(np.float64))).astype(np.int64)  # exact for < 2**53
        # guard: fix any off-by-one of log2 on exact powers
        bl = np.where((np.uint64(1) << bl.astype(np.uint64)) > fs, bl - 1, bl)
        bl = np.where((np.uint64(1) << (bl + 1).astype(np.uint64)) <= fs, bl + 1, bl)
        shift = fmt.frac - bl  # moves the leading one to the implicit position
        lz[sub] = shift
        frac = frac.copy()
        frac[sub] = (fs << shift.astype(np.uint64)) & np.uint64((1 << fmt.frac) - 1)
    e = np.where(field == 0, 1 - fmt.bias - lz, field - fmt.bias) + 1
    mbits = sign | (np.uint64(fmt.bias - 1) << fb) | frac
    m = mbits.astype(fmt.uint).view(fmt.np_dtype)
    zero = (field == 0) & (frac == 0) & ~sub
    m = np.where(zero, x, m)
    e = np.where(zero, 0, e)
    return m.astype(fmt.np_dtype), e.astype(np.int32)


def _check_frexp_round(ctx: _Ctx) -> list[ConformanceResult]:
    out: list[ConformanceResult] = []
    for fmt in _FMTS:
        rng = ctx.rng(f"frexp/{fmt.name}")
        x = _floats(rng, fmt, ctx.n)
        x = np.where(np.isfinite(x), x, fmt.np_dtype(1.0)).astype(fmt.np_dtype)
        m_ref, e_ref = _frexp_ref(x, fmt)
        m, e = torch.frexp(ctx.dev(x))
        mh, eh = _host(m), _host(e)
        out.append(_result("frexp", fmt.name + " mantissa", mh, m_ref, [x]))
        out.append(_result("frexp", fmt.name + " exponent", eh, e_ref, [x]))
        # cross-check the bit-level reference against math.frexp on a subset
        idx = rng.choice(ctx.n, ctx.n_cross, replace=False)
        xm = [math.frexp(v) for v in x[idx].tolist()]
        mm = np.array([t[0] for t in xm], dtype=np.float64).astype(fmt.np_dtype)
        ee = np.array([t[1] for t in xm], dtype=np.int32)
        out.append(_result("reference.frexp", fmt.name, m_ref[idx], mm, [x[idx]]))
        out.append(_result("reference.frexp", fmt.name + " exponent", e_ref[idx], ee, [x[idx]]))

        # round half to even: halfway cases k + 0.5, near-integers, whole range
        rng = ctx.rng(f"round/{fmt.name}")
        k = _split(ctx.n, 3)
        ints = rng.integers(-(1 << (fmt.prec - 2)), 1 << (fmt.prec - 2), k[0])
        half = (ints.astype(np.float64) + 0.5).astype(fmt.np_dtype)  # exact
        near = _compose(rng, fmt, rng.integers(fmt.bias - 3, fmt.bias + fmt.prec + 2, k[1]))
        x = np.concatenate([half, near, _floats(rng, fmt, k[2])])[rng.permutation(ctx.n)]
        with np.errstate(all="ignore"):
            ref = np.rint(x)
        out.append(_result("round", fmt.name, _host(torch.round(ctx.dev(x))), ref, [x]))
        out.append(_result("round", fmt.name + " (round_)", _host(ctx.dev(x).round_()), ref, [x]))
        idx = rng.choice(ctx.n, ctx.n_cross, replace=False)
        xl = x.tolist()

        def exact_round(i: int, xl: list[float] = xl) -> float | None:
            v = xl[i]
            return math.copysign(float(round(v)), v) if math.isfinite(v) else None

        out.append(_cross_check("round", fmt, ref, exact_round, idx, [x]))
    return out


_CMP_SCALARS = [0.0, -700.0, math.inf, float.fromhex("0x1.6a09e667f3bcdp-1"), 2.0**-6]


def _describe_vs_scalar(a: Array, i: int) -> str:
    n = a.shape[0]
    return f"{_hex1(a[i % n])} vs scalar {_CMP_SCALARS[i // n]!r}"


def _check_compare_where(ctx: _Ctx) -> list[ConformanceResult]:
    out: list[ConformanceResult] = []
    ops: dict[str, tuple[Callable[[Any, Any], Any], Callable[[Any, Any], Any]]] = {
        "eq": (np.equal, lambda a, b: a == b),
        "ne": (np.not_equal, lambda a, b: a != b),
        "lt": (np.less, lambda a, b: a < b),
        "le": (np.less_equal, lambda a, b: a <= b),
        "gt": (np.greater, lambda a, b: a > b),
        "ge": (np.greater_equal, lambda a, b: a >= b),
    }
    for fmt in _FMTS:
        rng = ctx.rng(f"compare/{fmt.name}")
        a, b = _pairs(rng, fmt, ctx.n)
        # equal values, and -0 against +0
        k = ctx.n // 8
        b[:k] = a[:k]
        b[k : 2 * k] = np.where(a[k : 2 * k] == 0, -a[k : 2 * k], b[k : 2 * k])
        ad, bd = ctx.dev(a), ctx.dev(b)
        for name, (npf, tf) in ops.items():
            with np.errstate(all="ignore"):
                ref = npf(a, b)
                out.append(_result(name, fmt.name, _host(tf(ad, bd)), ref, [a, b]))
                gs, rs = [], []
                for c in _CMP_SCALARS:
                    gs.append(_host(tf(ad, c)))
                    rs.append(npf(a, np.array(c).astype(fmt.np_dtype)))
                out.append(
                    _result(
                        name,
                        fmt.name + " (scalar)",
                        np.concatenate(gs),
                        np.concatenate(rs),
                        functools.partial(_describe_vs_scalar, a),
                    )
                )
        cond = rng.integers(0, 2, ctx.n).astype(bool)
        got = _host(torch.where(ctx.dev(cond), ad, bd))
        out.append(_result("where", fmt.name, got, np.where(cond, a, b), [a, b], nan_equal=False))
        got = _host(torch.where(ctx.dev(cond), ad, 1.0))
        ref = np.where(cond, a, fmt.np_dtype(1.0))
        out.append(_result("where", fmt.name + " (scalar)", got, ref, [a], nan_equal=False))
        # maximum: NaN propagates; the sign of a zero result is not relied on (see AUDITED)
        with np.errstate(all="ignore"):
            ref = np.where(np.isnan(a) | np.isnan(b), np.nan, np.where(a > b, a, b))
        ref = ref.astype(fmt.np_dtype)
        got = _host(torch.maximum(ad, bd))
        out.append(_result("maximum", fmt.name, got, ref, [a, b], zero_sign=False))
    for dt in (np.int32, np.int64):
        rng = ctx.rng(f"compare/{dt.__name__}")
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, ctx.n, dtype=dt, endpoint=True)
        b = np.where(rng.integers(0, 2, ctx.n) == 0, a, rng.integers(-3, 4, ctx.n)).astype(dt)
        ad, bd = ctx.dev(a), ctx.dev(b)
        for name, (npf, tf) in ops.items():
            out.append(_result(name, np.dtype(dt).name, _host(tf(ad, bd)), npf(a, b), [a, b]))
        cond = rng.integers(0, 2, ctx.n).astype(bool)
        got = _host(torch.where(ctx.dev(cond), ad, torch.zeros_like(ad)))
        out.append(_result("where", np.dtype(dt).name, got, np.where(cond, a, dt(0)), [a]))
    return out


def _check_reductions(ctx: _Ctx) -> list[ConformanceResult]:
    out: list[ConformanceResult] = []
    for fmt in _FMTS:
        rng = ctx.rng(f"reduce/{fmt.name}")
        width = 16
        rows = max(ctx.n // width, 1)
        x = _floats(rng, fmt, rows * width).reshape(rows, width)
        # rows without NaN/inf in half the cases, so that finite maxima are checked too
        fin = np.isfinite(x)
        x[: rows // 2] = np.where(fin[: rows // 2], x[: rows // 2], fmt.np_dtype(0.0))
        x = x[rng.permutation(rows)]
        xd = ctx.dev(x)

        def row(i: int, x: Array = x) -> str:
            return "row " + ",".join(_hex1(v) for v in x[i])

        with np.errstate(all="ignore"):
            red: list[tuple[str, Callable[..., Any], Callable[[torch.Tensor], torch.Tensor]]] = [
                ("amax", np.max, lambda t: t.amax(dim=-1)),
                ("amin", np.min, lambda t: t.amin(dim=-1)),
            ]
            for name, npf, tf in red:
                ref = npf(x, axis=-1)
                out.append(
                    _result(
                        name, fmt.name, _host(tf(xd)), ref, row, zero_sign=False, checked=x.size
                    )
                )
            ref = np.max(x, axis=0)
            got = _host(xd.amax(dim=0, keepdim=True))[0]
            out.append(
                _result(
                    "amax",
                    fmt.name + " (dim 0)",
                    got,
                    ref,
                    lambda j: f"column {j}",
                    zero_sign=False,
                    checked=x.size,
                )
            )
            head = min(rows, 64)
            for name, reduce in (("amax", np.max), ("amin", np.min)):
                got = np.array([float(getattr(xd[i], name)()) for i in range(head)])
                ref = reduce(x[:head], axis=-1).astype(np.float64)
                out.append(
                    _result(
                        name,
                        fmt.name + " (all)",
                        got,
                        ref,
                        row,
                        zero_sign=False,
                        checked=head * width,
                    )
                )
    return out


def _check_casts(ctx: _Ctx) -> list[ConformanceResult]:
    out: list[ConformanceResult] = []
    rng = ctx.rng("cast/f64-f32")
    k = _split(ctx.n, 4)
    whole = _floats(rng, F64, k[0])
    inrange = _compose(rng, F64, rng.integers(1023 - 155, 1023 + 130, k[1]))
    a = _floats(rng, F32, k[2] + k[3])
    a = np.where(np.isfinite(a), a, np.float32(1.0)).astype(np.float32)
    a = np.abs(a) * np.where(rng.integers(0, 2, a.shape[0]) == 0, 1, -1).astype(np.float32)
    # halfway between a and its successor away from zero: a + ulp/2 in float64 (exact)
    au = a.view(np.uint32)
    nxt = (au + np.uint32(1)).view(np.float32).astype(np.float64)  # may be inf after max
    a64 = a.astype(np.float64)
    ulp = np.where(np.isinf(nxt), 2.0 ** (np.floor(np.log2(np.abs(a64) + 1e-300)) - 23), 0.0)
    with np.errstate(all="ignore"):
        mid = np.where(np.isinf(nxt), a64 + np.sign(a64) * ulp / 2, (a64 + nxt) / 2)
    mid_u = mid.view(np.uint64)
    wiggle: Array = np.asarray(rng.integers(-1, 2, mid.shape[0]), dtype=np.int64)
    wiggle[: k[2]] = 0  # exact midpoints, then one float64 ulp either side
    mid = (mid_u.astype(np.int64) + wiggle).astype(np.uint64).view(np.float64)
    x = np.concatenate([whole, inrange, mid])[rng.permutation(ctx.n)]
    with np.errstate(all="ignore"):
        ref = x.astype(np.float32)
    out.append(_result("cast", "float64->float32", _host(ctx.dev(x).to(torch.float32)), ref, [x]))
    idx = rng.choice(ctx.n, ctx.n_cross, replace=False)
    xl = x.tolist()

    def exact_cast(i: int) -> float | None:
        v = xl[i]
        return _round_fraction(Fraction(v), F32) if math.isfinite(v) and v != 0 else None

    out.append(_cross_check("cast", F32, ref, exact_cast, idx, [x]))

    rng = ctx.rng("cast/f32-f64")
    y = _floats(rng, F32, ctx.n)
    got = _host(ctx.dev(y).to(torch.float64))
    with np.errstate(all="ignore"):  # NaN payloads
        y64 = y.astype(np.float64)
    out.append(_result("cast", "float32->float64", got, y64, [y]))
    # exactness of the widening, from the bit patterns rather than numpy's conversion
    yl = y[: ctx.n_cross].tolist()
    frs = [v if not math.isfinite(v) else math.copysign(float(Fraction(v)), v) for v in yl]
    out.append(
        _result(
            "reference.cast",
            "float32->float64",
            y64[: ctx.n_cross],
            np.array(frs, dtype=np.float64),
            [y[: ctx.n_cross]],
        )
    )

    rng = ctx.rng("cast/int")
    k = _split(ctx.n, 3)
    i64 = np.concatenate(
        [
            rng.integers(0, 1 << 53, k[0], dtype=np.int64),
            rng.integers(-(1 << 63), (1 << 63) - 1, k[1], dtype=np.int64),
            rng.integers(-2000, 2000, k[2], dtype=np.int64),
        ]
    )
    ref = i64.astype(np.float64)
    out.append(_result("cast", "int64->float64", _host(ctx.dev(i64).to(torch.float64)), ref, [i64]))
    il = i64[: ctx.n_cross].tolist()
    out.append(
        _result(
            "reference.cast",
            "int64->float64",
            ref[: ctx.n_cross],
            np.array([float(v) for v in il], dtype=np.float64),  # Python: correctly rounded
            [i64[: ctx.n_cross]],
        )
    )
    i32 = rng.integers(-(1 << 31), (1 << 31) - 1, ctx.n, dtype=np.int32)
    i32[: ctx.n // 4] = rng.integers(-1100, 1100, ctx.n // 4)
    got = _host(ctx.dev(i32).to(torch.float64))
    out.append(_result("cast", "int32->float64", got, i32.astype(np.float64), [i32]))
    got = _host(ctx.dev(i32).to(torch.int64))
    out.append(_result("cast", "int32->int64", got, i32.astype(np.int64), [i32]))
    got = _host(ctx.dev(i32).to(torch.int64, copy=True))
    out.append(_result("cast", "int32->int64 (copy)", got, i32.astype(np.int64), [i32]))
    got = _host(ctx.dev(i32).bool())
    out.append(_result("cast", "int32->bool", got, i32 != 0, [i32]))
    small = rng.integers(-128, 128, ctx.n, dtype=np.int64)  # the int8 slices' digits
    got = _host(ctx.dev(small).to(torch.int8))
    out.append(_result("cast", "int64->int8", got, small.astype(np.int8), [small]))
    bl = rng.integers(0, 2, ctx.n).astype(bool)
    got = _host(ctx.dev(bl).to(torch.float64))
    out.append(_result("cast", "bool->float64", got, bl.astype(np.float64), [bl]))
    # float64 -> int64 truncates toward zero (the package converts integer values only)
    k = _split(ctx.n, 2)
    fi = np.concatenate(
        [
            rng.integers(-(1 << 53), 1 << 53, k[0]).astype(np.float64),
            _compose(rng, F64, rng.integers(1023 - 10, 1023 + 62, k[1])),
        ]
    )
    ref = np.trunc(fi).astype(np.int64)
    out.append(_result("cast", "float64->int64", _host(ctx.dev(fi).to(torch.int64)), ref, [fi]))
    return out


FLOAT_CHECKS: list[Callable[[_Ctx], list[ConformanceResult]]] = [
    _check_binary,
    _check_scalar_ops,
    _check_unary_float,
    _check_frexp_round,
    _check_compare_where,
    _check_reductions,
    _check_casts,
]
"""The float checks, in the order `run_conformance` reports them."""
