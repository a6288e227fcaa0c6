"""Shared parts of the conformance suite (`veritrain.repro.conformance`): the result record,
the float formats, input generation, bit-pattern comparison and the exact rational reference.

Run: not a script; imported by the `conformance*` modules.
"""

from __future__ import annotations

import dataclasses
import math
import zlib
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

__all__ = ["Array", "F32", "F64", "ConformanceResult", "SqrtFn"]

Array = npt.NDArray[Any]
SqrtFn = Callable[[torch.Tensor], torch.Tensor]


@dataclasses.dataclass(frozen=True)
class ConformanceResult:
    """Outcome of one check: one primitive on one dtype.

    Attributes:
        name: the check, e.g. "add", "cast", "repro.sqrt", "plumbing:reshape",
            "reference.add" (numpy's reference cross-checked against exact rationals).
        dtype: the operand dtype(s), e.g. "float32", "float64->float32", "int64".
        checked: number of values (outputs, or inputs of a reduction) compared.
        mismatches: how many of them differ from the reference (0 = conformant).
        first_input: the first mismatching input(s) as hexadecimal bit patterns
            (comma-separated for several operands), or None.
        first_got: the device's result there (hex bit pattern), or None.
        first_expected: the reference result there (hex bit pattern), or None.
    """

    name: str
    dtype: str
    checked: int
    mismatches: int
    first_input: str | None = None
    first_got: str | None = None
    first_expected: str | None = None

    @property
    def ok(self) -> bool:
        """True when no value differs from the reference."""
        return self.mismatches == 0


# ----------------------------------------------------------------------------------------
# float formats and input generation


@dataclasses.dataclass(frozen=True)
class _Fmt:
    name: str
    np_dtype: Any
    uint: Any
    torch_dtype: torch.dtype
    frac: int  # explicit fraction bits
    ebits: int  # exponent field bits

    @property
    def prec(self) -> int:
        return self.frac + 1

    @property
    def bias(self) -> int:
        return (1 << (self.ebits - 1)) - 1

    @property
    def emax_field(self) -> int:
        return (1 << self.ebits) - 1

    @property
    def emin(self) -> int:
        return 1 - self.bias


F32 = _Fmt("float32", np.float32, np.uint32, torch.float32, 23, 8)
F64 = _Fmt("float64", np.float64, np.uint64, torch.float64, 52, 11)
_FMTS = (F32, F64)


def _rng(seed: int, name: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def _compose(
    rng: np.random.Generator, fmt: _Fmt, e_field: Array, short: bool = False, sign: bool = True
) -> Array:
    """Floats with the given exponent fields, random fractions (short: only the top L-1
    fraction bits random, L uniform in [1, prec]) and random signs."""
    n = e_field.shape[0]
    e = np.clip(e_field, 0, fmt.emax_field).astype(np.uint64)
    frac = rng.integers(0, 1 << fmt.frac, n, dtype=np.uint64)
    if short:
        keep = rng.integers(0, fmt.frac + 1, n, dtype=np.uint64)  # fraction bits kept
        drop = np.uint64(fmt.frac) - keep
        frac = (frac >> drop) << drop
    bits = (e << np.uint64(fmt.frac)) | frac
    if sign:
        s = rng.integers(0, 2, n, dtype=np.uint64)
        bits |= s << np.uint64(fmt.frac + fmt.ebits)
    return bits.astype(fmt.uint).view(fmt.np_dtype)


def _specials(fmt: _Fmt) -> Array:
    f = fmt.np_dtype
    info = np.finfo(f)
    vals = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 0.5, 2.0, 3.0, -3.0]
    out = np.array(vals, dtype=f)
    sub_min = np.array([1], dtype=fmt.uint).view(f)
    sub_max = np.array([(1 << fmt.frac) - 1], dtype=fmt.uint).view(f)
    payload = np.array([(fmt.emax_field << fmt.frac) | 0b101], dtype=fmt.uint).view(f)
    neg_nan = np.array(
        [(1 << (fmt.frac + fmt.ebits)) | (fmt.emax_field << fmt.frac) | 1], dtype=fmt.uint
    ).view(f)
    more = np.array([info.max, info.tiny, sub_min[0], sub_max[0]], dtype=f)
    return np.concatenate([out, more, -more, payload, neg_nan])


def _tile(x: Array, n: int) -> Array:
    return np.resize(x, n)


def _split(n: int, parts: int) -> list[int]:
    base = [n // parts] * parts
    base[0] += n - sum(base)
    return base


def _floats(rng: np.random.Generator, fmt: _Fmt, n: int) -> Array:
    """Unary inputs: whole range, subnormals, moderate, short mantissas, specials."""
    k = _split(n, 5)
    b = fmt.bias
    parts = [
        _compose(rng, fmt, rng.integers(0, fmt.emax_field + 1, k[0])),
        _compose(rng, fmt, np.zeros(k[1], dtype=np.int64)),
        _compose(rng, fmt, rng.integers(b - 40, b + 41, k[2])),
        _compose(rng, fmt, rng.integers(b - 40, b + 41, k[3]), short=True),
        _tile(_specials(fmt), k[4]),
    ]
    x = np.concatenate(parts)
    return x[rng.permutation(n)]


def _pairs(rng: np.random.Generator, fmt: _Fmt, n: int) -> tuple[Array, Array]:
    """Operand pairs for + - * /: independent whole range, related exponents (cancellation,
    ties), short mantissas (exact products, ties), results near underflow and overflow,
    subnormal operands, and every pair of special values."""
    k = _split(n, 9)
    b, p, top = fmt.bias, fmt.prec, fmt.emax_field - 1
    a_parts: list[Array] = []
    b_parts: list[Array] = []

    def add(ea: Array, eb: Array, short: bool = False) -> None:
        a_parts.append(_compose(rng, fmt, ea, short))
        b_parts.append(_compose(rng, fmt, eb, short))

    add(rng.integers(0, fmt.emax_field + 1, k[0]), rng.integers(0, fmt.emax_field + 1, k[0]))
    ea = rng.integers(b - 60, b + 61, k[1])
    add(ea, ea + rng.integers(-(p + 2), p + 3, k[1]))
    ea = rng.integers(b - 60, b + 61, k[2])
    add(ea, ea + rng.integers(-(p + 2), p + 3, k[2]), short=True)
    add(rng.integers(b - 30, b + 31, k[3]), rng.integers(b - 30, b + 31, k[3]), short=True)
    # product exponent (ea - b) + (eb - b) near the subnormal range and below
    t = rng.integers(-(b + p + 2), -(b - 5), k[4])
    ea = rng.integers(1, b, k[4])
    add(ea, np.clip(t + 2 * b - ea, 1, top), short=bool(rng.integers(0, 2)))
    # quotient exponent (ea - b) - (eb - b) near the subnormal range, and near overflow
    t = rng.integers(-(b + p + 2), -(b - 5), k[5])
    ea = rng.integers(1, b, k[5])
    add(ea, np.clip(ea - t, 1, top))
    t = rng.integers(b - 5, b + 2, k[6])
    ea = rng.integers(b, top + 1, k[6])
    add(ea, np.clip(t + 2 * b - ea, 1, top))
    add(rng.integers(0, 3, k[7]), rng.integers(0, 3, k[7]), short=True)
    s = _specials(fmt)
    sa, sb = np.meshgrid(s, s, indexing="ij")
    a_parts.append(_tile(sa.reshape(-1), k[8]))
    b_parts.append(_tile(sb.reshape(-1), k[8]))
    perm = rng.permutation(n)
    return np.concatenate(a_parts)[perm], np.concatenate(b_parts)[perm]


# ----------------------------------------------------------------------------------------
# comparison helpers


def _hex1(v: Any) -> str:
    a = np.asarray(v)
    if a.dtype == np.bool_:
        return "0x1" if bool(a) else "0x0"
    if a.dtype.kind == "f":
        width = a.dtype.itemsize * 2
        u = a.reshape(1).view(np.uint32 if a.dtype.itemsize == 4 else np.uint64)[0]
        return f"0x{int(u):0{width}x}"
    if a.dtype.kind in "iu":
        width = a.dtype.itemsize * 2
        return f"0x{int(a) & ((1 << (8 * a.dtype.itemsize)) - 1):0{width}x}"
    return repr(v)


def _ok_mask(got: Array, exp: Array, *, nan_equal: bool, zero_sign: bool) -> Array:
    if got.shape != exp.shape:
        raise ValueError(f"shape {got.shape} != reference {exp.shape}")
    if got.dtype.kind == "f" and exp.dtype.kind == "f":
        if got.dtype != exp.dtype:
            return np.zeros(got.shape, dtype=bool)
        u = np.uint32 if got.dtype.itemsize == 4 else np.uint64
        ok: Array = got.view(u) == exp.view(u)
        if nan_equal:
            ok |= np.isnan(got) & np.isnan(exp)
        if not zero_sign:
            ok |= (got == 0) & (exp == 0)
        return ok
    if got.dtype != exp.dtype:
        return np.zeros(got.shape, dtype=bool)
    eq: Array = got == exp
    return eq


def _result(
    name: str,
    dtype: str,
    got: Array,
    exp: Array,
    inputs: Sequence[Array] | Callable[[int], str],
    *,
    nan_equal: bool = True,
    zero_sign: bool = True,
    checked: int | None = None,
) -> ConformanceResult:
    got = np.ascontiguousarray(got).reshape(-1)
    exp = np.ascontiguousarray(exp).reshape(-1)
    ok = _ok_mask(got, exp, nan_equal=nan_equal, zero_sign=zero_sign)
    bad = np.flatnonzero(~ok)
    count = int(checked if checked is not None else got.shape[0])
    if bad.shape[0] == 0:
        return ConformanceResult(name, dtype, count, 0)
    i = int(bad[0])
    if callable(inputs):
        inp = inputs(i)
    else:
        inp = ",".join(_hex1(np.asarray(a).reshape(-1)[i]) for a in inputs)
    return ConformanceResult(
        name, dtype, count, int(bad.shape[0]), inp, _hex1(got[i]), _hex1(exp[i])
    )


class _Ctx:
    def __init__(self, device: str, n: int, seed: int) -> None:
        self.device = torch.device(device)
        self.n = n
        self.seed = seed

    def dev(self, a: Array) -> torch.Tensor:
        return torch.from_numpy(np.ascontiguousarray(a)).to(self.device)

    def rng(self, name: str) -> np.random.Generator:
        return _rng(self.seed, name)

    @property
    def n_cross(self) -> int:
        return min(self.n, 10_000)


def _host(t: torch.Tensor) -> Array:
    out: Array = t.detach().to("cpu").numpy()
    return out


# ----------------------------------------------------------------------------------------
# exact rational reference (for the cross-check of numpy)


def _round_fraction(q: Fraction, fmt: _Fmt) -> float:
    """`q` rounded to nearest even in `fmt` (subnormals, overflow to inf), as a Python float
    (exact for both formats). Integer arithmetic only."""
    if q == 0:
        return 0.0
    neg = q < 0
    a = -q if neg else q
    num, den = a.numerator, a.denominator
    e = num.bit_length() - den.bit_length()  # 2**(e-1) < a < 2**(e+1)
    if a < Fraction(2) ** e:
        e -= 1
    qexp = max(e, fmt.emin) - (fmt.prec - 1)  # quantum exponent
    scaled = a / (Fraction(2) ** qexp)
    m = scaled.numerator // scaled.denominator
    rem = scaled - m
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and m & 1):
        m += 1
    if m.bit_length() + qexp > fmt.bias + 1:  # >= 2**(emax + 1)
        val = math.inf
    else:
        val = math.ldexp(m, qexp)
    return -val if neg else val


def _exact_binop(op: str, x: float, y: float, fmt: _Fmt) -> float | None:
    """Correctly rounded `x op y` from Fractions; None where the operands are not finite or
    the divisor is zero (those are left to numpy's IEEE rules)."""
    if not (math.isfinite(x) and math.isfinite(y)):
        return None
    fx, fy = Fraction(x), Fraction(y)
    if op == "add":
        r = fx + fy
        zsign = math.copysign(1.0, x) < 0 and math.copysign(1.0, y) < 0
    elif op == "sub":
        r = fx - fy
        zsign = math.copysign(1.0, x) < 0 and math.copysign(1.0, y) > 0
    elif op == "mul":
        r = fx * fy
        zsign = (math.copysign(1.0, x) < 0) != (math.copysign(1.0, y) < 0)
    else:
        if y == 0:
            return None
        r = fx / fy
        zsign = (math.copysign(1.0, x) < 0) != (math.copysign(1.0, y) < 0)
    if r == 0:
        return -0.0 if zsign else 0.0
    v = _round_fraction(r, fmt)
    if v == 0 and op in ("mul", "div"):  # underflow to zero keeps the sign of the product
        return -0.0 if zsign else 0.0
    return v


def _exact_binop_at(op: str, al: list[float], bl: list[float], fmt: _Fmt, i: int) -> float | None:
    return _exact_binop(op, al[i], bl[i], fmt)


def _cross_check(
    name: str,
    fmt: _Fmt,
    ref: Array,
    exact: Callable[[int], float | None],
    idx: Array,
    inputs: Sequence[Array],
) -> ConformanceResult:
    """Compare numpy's reference with an exact computation on the indices `idx`."""
    got: list[Any] = []
    want: list[Any] = []
    keep: list[int] = []
    for i in idx.tolist():
        v = exact(i)
        if v is None:
            continue
        keep.append(i)
        got.append(ref[i])
        want.append(v)
    g = np.array(got, dtype=ref.dtype)
    w = np.array(want, dtype=np.float64).astype(ref.dtype)  # exact: v is representable
    kept = np.array(keep, dtype=np.int64)
    return _result(f"reference.{name}", fmt.name, g, w, [a[kept] for a in inputs])
