"""Conformance suite: every torch primitive that `veritrain.repro` relies on, checked bit for bit.

The package's guarantee (the same bytes on every IEEE-754 machine) holds only if each torch
primitive it calls is either correctly rounded (`+ - * /`, casts, round half to even), exact
(comparisons, `where`, `frexp`, integer arithmetic, float64 sums of integers below 2**53) or
plumbing that moves bits without rounding (reshape, transpose, copies, fills). A library's
claim is not evidence: x86 `torch.sqrt` turned out to be off by one ulp on some inputs, with
other inputs on AMD than on Intel (see `veritrain/repro/sqrt.py`). So every primitive is
checked here against an independent, correctly rounded reference computed on the CPU:

- IEEE `+ - * /` and casts: numpy's binary32/binary64 operations, themselves cross-checked
  on a subset of about 10^4 inputs against exact rational arithmetic (`fractions.Fraction`)
  rounded to nearest even by integer code here (results named `reference.*`);
- square roots: an exact integer reference from `math.isqrt` on every input, never numpy;
- integer operations: numpy's int64 arithmetic, shifts as exact multiplications and floor
  divisions;
- `torch.randint` on a CPU generator: numpy's MT19937 (the same 32-bit word stream) combined
  as torch documents it in its source (`(w1 << 32 | w2) % range`).

Inputs are drawn on the CPU with numpy (random bit patterns over the whole exponent range,
subnormals, signed zeros, infinities, NaN, exact halfway cases for every rounding, short
mantissas whose products and sums land on ties, integer operands at the 2**53 limit), moved
to the device under test, and the results moved back. Floats are compared by bit pattern
(two NaNs count as equal); plumbing is compared by bit pattern including NaN payloads.

`AUDITED` is the one list of everything the modules of `veritrain/repro/` call (torch
functions, Tensor methods, Python operators), each with the checks that cover it;
`tests/unit/veritrain/test_repro_inventory.py` keeps it equal to what the source really
calls.

The operators of the Llama family (silu, rms_norm, rope and the exact RoPE tables) are
checked against high-precision references by `veritrain.repro.conformance_llama`, and the
two exact matrix-product paths (the float64 GEMM of integer-valued operands, and the int8
slices of `veritrain.repro.gemm_int8`) against numpy's int64 product by
`veritrain.repro.conformance_gemm`; `run_conformance` runs both modules' checks too.

Run: not a script; `run_conformance("cpu", n=10**6)` returns one `ConformanceResult` per
primitive and dtype (the `veritrain selftest` command runs it on an operator's machine).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import zlib
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import torch

from veritrain.repro.sqrt import sqrt as repro_sqrt
from veritrain.repro.sqrt import sqrt_scalar

__all__ = [
    "AUDITED",
    "ConformanceResult",
    "Coverage",
    "check_names",
    "check_sqrt",
    "run_conformance",
]

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


@dataclasses.dataclass(frozen=True)
class Coverage:
    """How one audited primitive is covered.

    Attributes:
        kind: "value" (a rounding or exact-arithmetic check compares results with a
            reference), "plumbing" (moves bits, never rounds; a bit-preservation check), or
            "python" (an operator that `veritrain/repro` applies to Python ints/floats
            only, never to a tensor: Python's own integer or IEEE binary64 arithmetic).
        checks: names of the `ConformanceResult`s that cover it (empty for "python").
        note: what exactly is relied on.
    """

    kind: Literal["value", "plumbing", "python"]
    checks: tuple[str, ...]
    note: str


def _v(note: str, *checks: str) -> Coverage:
    return Coverage("value", checks, note)


def _p(note: str, *checks: str) -> Coverage:
    return Coverage("plumbing", checks, note)


def _py(note: str) -> Coverage:
    return Coverage("python", (), note)


_ARITH_NOTE = "IEEE binary32/binary64, round to nearest even, subnormals kept"

# Every torch function ("torch.X", "torch.nn.functional.X"), Tensor method ("Tensor.X") and
# Python operator ("operator +", "unary -", "operator []" for indexing) that a module of
# veritrain/repro calls, with the checks that cover it.
AUDITED: dict[str, Coverage] = {
    # torch functions
    "torch.abs": _v("clears the sign bit", "abs"),
    "torch.cat": _p("concatenation of 1-d float32 tensors", "plumbing:cat"),
    "torch.clamp": _v("min/max bounds, NaN propagates", "clamp"),
    "torch.div": _v("tensor / tensor, correctly rounded (" + _ARITH_NOTE + ")", "div"),
    "torch.enable_grad": _p("autograd mode only, no values", "plumbing:grad_mode"),
    "torch.frexp": _v("exact mantissa in [0.5, 1) and int32 exponent", "frexp"),
    "torch.full_like": _p("fill with a Python float rounded to the dtype", "plumbing:fill"),
    "torch.isinf": _v("classification", "isinf"),
    "torch.isnan": _v("classification", "isnan"),
    "torch.isneginf": _v("classification", "isneginf"),
    "torch.matmul": _v(
        "float64 GEMM of integer-valued operands, exact below 2**53 (then + 0.0: the sign of a "
        "zero result is not relied on)",
        "matmul",
    ),
    "torch._int_mm": _v(
        "int8 x int8 GEMM with int32 accumulation, exact while every sum stays below 2**31",
        "matmul:int8",
    ),
    "torch.maximum": _v("NaN propagates (sign of a zero result not relied on)", "maximum"),
    "torch.mul": _v("tensor * tensor (out=), correctly rounded", "mul"),
    "torch.nn.functional.pad": _p(
        "zero padding of the last dim (floats) and of the last two dims (int64)", "plumbing:pad"
    ),
    "torch.no_grad": _p("autograd mode only, no values", "plumbing:grad_mode"),
    "torch.ones_like": _p("fill with 1", "plumbing:fill"),
    "torch.randint": _v("CPU MT19937 stream, 64-bit draws mod range", "randint"),
    "torch.round": _v("round half to even, exact", "round"),
    "torch.sqrt": _v(
        "a candidate only: repro.sqrt64 corrects any candidate by an exact residual test",
        "repro.sqrt",
    ),
    "torch.tensor": _p("Python floats to float32/float64 (correctly rounded)", "plumbing:tensor"),
    "torch.where": _v("selects bits, NaN payloads kept", "where"),
    "torch.zeros": _p("fill with +0", "plumbing:fill"),
    "torch.zeros_like": _p("fill with +0", "plumbing:fill"),
    # Tensor methods
    "Tensor.abs": _v("clears the sign bit", "abs"),
    "Tensor.add_": _v(
        "in-place +, tensor or Python scalar (rounded to the dtype first), float and int",
        "add",
        "add_scalar",
        "int_add",
    ),
    "Tensor.amax": _v("exact max along a dim or overall, NaN propagates", "amax"),
    "Tensor.amin": _v("exact min along a dim or overall, NaN propagates", "amin"),
    "Tensor.any": _v("bool reduction", "bool_any"),
    "Tensor.bitwise_and": _v("int32/int64 & scalar", "int_bitwise_and"),
    "Tensor.bitwise_left_shift_": _v("int64 << n, no overflow", "int_shift_left"),
    "Tensor.bitwise_right_shift": _v("arithmetic (floor) shift of int32/int64", "int_shift_right"),
    "Tensor.bitwise_right_shift_": _v("arithmetic (floor) shift", "int_shift_right"),
    "Tensor.bool": _v("int32 to bool", "cast"),
    "Tensor.clamp_": _v("int32 clamp(min=0) of bit patterns; float clamp", "clamp"),
    "Tensor.clone": _p("copies bits", "plumbing:clone"),
    "Tensor.contiguous": _p("copies bits into row-major order", "plumbing:contiguous"),
    "Tensor.copy_": _p("copies bits (same dtype)", "plumbing:copy_"),
    "Tensor.dim": _p("metadata", "plumbing:shape"),
    "Tensor.div_": _v("tensor / tensor, correctly rounded", "div"),
    "Tensor.expand": _p("broadcast view", "plumbing:expand"),
    "Tensor.gather": _v("gathers float64 values along a dim", "gather"),
    "Tensor.index_put_": _v(
        "accumulate=True of float64 integers whose sums stay below 2**53: exact in any order",
        "index_put_accumulate",
    ),
    "Tensor.index_select": _v("gathers rows (float64 table, float32 table)", "index_select"),
    "Tensor.item": _p("one value as a Python number, exact", "plumbing:item"),
    "Tensor.masked_fill_": _v("writes the fill value's bits where the mask is set", "masked_fill"),
    "Tensor.movedim": _p("view with permuted dims", "plumbing:movedim"),
    "Tensor.mul_": _v("in-place *, tensor or Python scalar", "mul", "mul_scalar"),
    "Tensor.nan_to_num_": _v("NaN to 0, +-inf to +-max", "nan_to_num"),
    "Tensor.neg_": _v("flips the sign bit", "neg"),
    "Tensor.numel": _p("metadata", "plumbing:shape"),
    "Tensor.reshape": _p("view or copy in row-major order", "plumbing:reshape"),
    "Tensor.round_": _v("round half to even, exact", "round"),
    "Tensor.squeeze": _p("view", "plumbing:squeeze"),
    "Tensor.scatter_": _v("writes a Python float into a float64 tensor", "scatter_"),
    "Tensor.sub_": _v("in-place -, tensor or Python scalar", "sub", "sub_scalar"),
    "Tensor.sum": _v("count of a bool tensor (int64)", "bool_sum"),
    "Tensor.t": _p("transposed view", "plumbing:transpose"),
    "Tensor.to": _v(
        "casts float64<->float32, int32/int64/bool->float64, float64->int64 (integer "
        "values), int32->int64, int64->int8 (values in [-128, 127]), same-dtype identity; "
        "device moves",
        "cast",
        "plumbing:to",
    ),
    "Tensor.transpose": _p("transposed view", "plumbing:transpose"),
    "Tensor.unsqueeze": _p("view", "plumbing:unsqueeze"),
    "Tensor.view": _p(
        "shape views, and dtype views float64<->int64, float32<->int32 (bit reinterpretation)",
        "view_bits",
        "plumbing:view",
    ),
    # Python operators (on tensors, Python ints or Python floats)
    "operator +": _v(
        "tensor + tensor/scalar (float, int); Python floats are binary64",
        "add",
        "add_scalar",
        "int_add",
    ),
    "operator -": _v(
        "tensor - tensor/scalar, scalar - tensor (float, int)",
        "sub",
        "sub_scalar",
        "rsub_scalar",
        "int_sub",
    ),
    "operator *": _v("tensor * tensor/scalar", "mul", "mul_scalar"),
    "operator /": _v("tensor / tensor only (scalars only multiply)", "div"),
    "operator &": _v("int & int scalar, bool & bool", "int_bitwise_and", "bool_and"),
    "operator |": _v("bool | bool", "bool_or"),
    "unary -": _v("flips the sign bit", "neg"),
    "operator ==": _v("IEEE equality (-0 == +0, NaN unequal), int", "eq"),
    "operator !=": _v("IEEE inequality", "ne"),
    "operator <": _v("IEEE order", "lt"),
    "operator <=": _v("IEEE order", "le"),
    "operator >": _v("IEEE order", "gt"),
    "operator >=": _v("IEEE order", "ge"),
    "operator []": _p("basic indexing and slicing", "plumbing:getitem"),
    "operator //": _py("Python ints only (shapes, exponents)"),
    "operator %": _py("Python ints only (dim normalisation)"),
    "operator **": _py("Python floats/ints/Decimals only (constants)"),
    "operator <<": _py("Python ints only"),
    "operator >>": _py("Python ints only"),
    "not": _py("truth values of Python objects (a 0-d bool tensor reads one exact value)"),
}


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


def _check_int(ctx: _Ctx) -> list[ConformanceResult]:
    out: list[ConformanceResult] = []
    for dt in (np.int32, np.int64):
        name = np.dtype(dt).name
        bits = np.dtype(dt).itemsize * 8
        rng = ctx.rng(f"int/{name}")
        lim = 1 << (bits - 2)
        a = rng.integers(-lim, lim, ctx.n, dtype=dt)
        b = rng.integers(-lim, lim, ctx.n, dtype=dt)
        a[: ctx.n // 2] = rng.integers(-1100, 1100, ctx.n // 2)
        ad, bd = ctx.dev(a), ctx.dev(b)
        c = int(rng.integers(-1000, 1000))
        out.append(_result("int_add", name, _host(ad + bd), a + b, [a, b]))
        for lo, hi in ((0, None), (-5, 700), (None, -3)):
            ref = a.copy()
            if lo is not None:
                ref = np.maximum(ref, dt(lo))
            if hi is not None:
                ref = np.minimum(ref, dt(hi))
            got = _host(ad.clone().clamp_(min=lo, max=hi))
            out.append(_result("clamp", f"{name} (clamp_ {lo}, {hi})", got, ref, [a]))
        out.append(_result("int_add", name + " (scalar)", _host(ad + c), a + dt(c), [a]))
        out.append(_result("int_add", name + " (add_)", _host(ad.clone().add_(c)), a + dt(c), [a]))
        out.append(_result("int_sub", name, _host(ad - bd), a - b, [a, b]))
        out.append(_result("int_sub", name + " (rsub)", _host(c - ad), dt(c) - a, [a]))
        full = rng.integers(np.iinfo(dt).min, np.iinfo(dt).max, ctx.n, dtype=dt, endpoint=True)
        fd = ctx.dev(full)
        for m in (1, 31, int(rng.integers(0, 1 << 30))):
            out.append(
                _result("int_bitwise_and", f"{name} (& {m})", _host(fd & m), full & dt(m), [full])
            )
            got = _host(fd.bitwise_and(m))
            out.append(
                _result("int_bitwise_and", f"{name} (bitwise_and {m})", got, full & dt(m), [full])
            )
        out.append(_result("int_bitwise_and", name, _host(fd & bd), full & b, [full, b]))
        for s in (1, 5, int(rng.integers(2, bits - 1))):
            ref = np.floor_divide(full, dt(1) << dt(s))  # floor: the arithmetic shift
            got = _host(fd.bitwise_right_shift(s))
            out.append(_result("int_shift_right", f"{name} (>> {s})", got, ref, [full]))
            got = _host(fd.clone().bitwise_right_shift_(s))
            out.append(_result("int_shift_right", f"{name} (>>= {s})", got, ref, [full]))
        if dt is np.int64:
            for s in (52, 1, 30):
                lim_s = 1 << (62 - s)
                v = rng.integers(-lim_s, lim_s, ctx.n, dtype=np.int64)
                ref = v * np.int64(1 << s)  # exact: no overflow
                got = _host(ctx.dev(v).bitwise_left_shift_(s))
                out.append(_result("int_shift_left", f"{name} (<< {s})", got, ref, [v]))
    rng = ctx.rng("bool")
    p = rng.integers(0, 2, ctx.n).astype(bool)
    q = rng.integers(0, 2, ctx.n).astype(bool)
    pd, qd = ctx.dev(p), ctx.dev(q)
    out.append(_result("bool_and", "bool", _host(pd & qd), p & q, [p, q]))
    out.append(_result("bool_or", "bool", _host(pd | qd), p | q, [p, q]))
    width = 32
    rows = max(ctx.n // width, 1)
    r = rng.random((rows, width)) < rng.random((rows, 1)) ** 4  # some all-False rows
    rd = ctx.dev(r)
    got = np.array([bool(rd[i].any()) for i in range(min(rows, 256))])
    out.append(
        _result(
            "bool_any",
            "bool",
            got,
            np.asarray(r[: len(got)].any(axis=1)),
            lambda i: f"row {i}",
            checked=len(got) * width,
        )
    )
    got = _host(rd.sum(dim=1))
    out.append(
        _result(
            "bool_sum",
            "bool->int64",
            got,
            r.sum(axis=1).astype(np.int64),
            lambda i: f"row {i}",
            checked=r.size,
        )
    )
    got = np.array([int(rd[i].sum().item()) for i in range(min(rows, 256))], dtype=np.int64)
    out.append(
        _result(
            "bool_sum",
            "bool->int64 (item)",
            got,
            r[: len(got)].sum(axis=1).astype(np.int64),
            lambda i: f"row {i}",
        )
    )
    # dtype views float64 <-> int64, and the successor trick of repro.sqrt
    x = _floats(rng, F64, ctx.n)
    xd = ctx.dev(x)
    out.append(
        _result("view_bits", "float64->int64", _host(xd.view(torch.int64)), x.view(np.int64), [x])
    )
    iv = x.view(np.int64)
    back = _host(ctx.dev(iv).view(torch.float64))
    out.append(_result("view_bits", "int64->float64", back, x, [x], nan_equal=False))
    succ = _host((xd.view(torch.int64) + 1).view(torch.float64))
    out.append(
        _result(
            "view_bits", "float64 successor", succ, (iv + 1).view(np.float64), [x], nan_equal=False
        )
    )
    # float32 <-> int32, neighbours by +-1 on the bit pattern (repro.sqrt's float32 path)
    y = _floats(rng, F32, ctx.n)
    yd = ctx.dev(y)
    yi = y.view(np.int32)
    out.append(_result("view_bits", "float32->int32", _host(yd.view(torch.int32)), yi, [y]))
    for step in (1, -1):
        got = _host((yd.view(torch.int32) + step).view(torch.float32))
        ref = (yi + np.int32(step)).view(np.float32)
        out.append(
            _result("view_bits", f"float32 neighbour {step:+d}", got, ref, [y], nan_equal=False)
        )
    return out


def _check_index(ctx: _Ctx) -> list[ConformanceResult]:
    out: list[ConformanceResult] = []
    rng = ctx.rng("index")
    d = 16
    nrows = max(ctx.n // d, 1)
    for fmt in _FMTS:
        table = _floats(rng, fmt, 1000 * d).reshape(1000, d)
        ids = rng.integers(0, 1000, nrows)
        got = _host(ctx.dev(table).index_select(0, ctx.dev(ids)))
        out.append(
            _result(
                "index_select",
                fmt.name,
                got,
                table[ids],
                lambda i: f"row {i // d}",
                nan_equal=False,
            )
        )
    # float64 integers, as repro uses them
    src = rng.integers(-(1 << 53), 1 << 53, (nrows, d)).astype(np.float64)
    idx = rng.integers(0, d, (nrows, d))  # repeated columns too: scatter_ writes 1.0 alike
    got = _host(ctx.dev(src).gather(1, ctx.dev(idx)))
    out.append(
        _result("gather", "float64", got, np.take_along_axis(src, idx, 1), lambda i: f"row {i}")
    )
    z = np.zeros((nrows, d))
    np.put_along_axis(z, idx, 1.0, 1)
    got = _host(
        torch.zeros((nrows, d), dtype=torch.float64, device=ctx.device).scatter_(
            1, ctx.dev(idx), 1.0
        )
    )
    out.append(_result("scatter_", "float64", got, z, lambda i: f"entry {i}"))
    # index_put_(accumulate=True): N rows of p-bit integers, p = 53 - ceil(log2 N), heavy
    # repetition of ids (every partial sum stays below 2**53)
    n_rows = nrows
    p = 53 - (n_rows - 1).bit_length()
    for vocab in (7, 1000):
        q = rng.integers(-(1 << p), (1 << p) + 1, (n_rows, d))
        q[: n_rows // 4] = (1 << p) * np.sign(q[: n_rows // 4])  # extremes
        ids = rng.integers(0, vocab, n_rows)
        ref = np.zeros((vocab, d), dtype=np.int64)
        np.add.at(ref, ids, q)
        acc = torch.zeros((vocab, d), dtype=torch.float64, device=ctx.device)
        acc.index_put_((ctx.dev(ids),), ctx.dev(q.astype(np.float64)), accumulate=True)
        out.append(
            _result(
                "index_put_accumulate",
                f"float64 (V={vocab})",
                _host(acc),
                ref.astype(np.float64),
                lambda i: f"entry {i}",
                checked=n_rows * d,
            )
        )
    return out


def _check_randint(ctx: _Ctx) -> list[ConformanceResult]:
    """torch.randint(0, 2**53) on a seeded CPU generator (as repro.normal_ draws) against
    numpy's MT19937 words combined as torch's CPU generator does."""
    seed = ctx.seed & 0xFFFFFFFF
    count = 2 * ((ctx.n + 1) // 2)
    gen = torch.Generator().manual_seed(seed)
    got = _host(torch.randint(0, 2**53, (2, count // 2), generator=gen, dtype=torch.int64))
    words = np.random.RandomState(seed).randint(0, 2**32, 2 * count, dtype=np.uint64)
    hi, lo = words[0::2], words[1::2]
    ref = (((hi << np.uint64(32)) | lo) % np.uint64(1 << 53)).astype(np.int64)
    return [
        _result(
            "randint",
            "int64 (CPU generator)",
            got,
            ref.reshape(2, -1),
            lambda i: f"draw {i}, seed {seed}",
        )
    ]


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


# ----------------------------------------------------------------------------------------
# plumbing: bit preservation, NaN payloads included


def _check_plumbing(ctx: _Ctx) -> list[ConformanceResult]:
    out: list[ConformanceResult] = []
    for fmt in _FMTS:
        rng = ctx.rng(f"plumbing/{fmt.name}")
        rows = max(ctx.n // 64, 1)
        x = _floats(rng, fmt, rows * 64).reshape(rows, 64)
        xd = ctx.dev(x)
        nm = fmt.name

        def res(name: str, got: torch.Tensor, ref: Array, nm: str = nm) -> None:
            out.append(
                _result(
                    f"plumbing:{name}",
                    nm,
                    _host(got),
                    ref,
                    lambda i: f"flat index {i}",
                    nan_equal=False,
                )
            )

        res("reshape", xd.reshape(-1, 16), x.reshape(-1, 16))
        res("view", xd.view(rows, 4, 16), x.reshape(rows, 4, 16))
        res("transpose", xd.transpose(-1, -2).contiguous(), np.ascontiguousarray(x.T))
        res("transpose", xd.t().contiguous(), np.ascontiguousarray(x.T), nm + " (t)")
        res("contiguous", xd.t().contiguous().t().contiguous(), x)
        res("unsqueeze", xd.unsqueeze(1), x[:, None, :])
        res("squeeze", xd[:, :1].squeeze(1), x[:, 0])
        res("expand", xd[:1].expand(rows, 64).contiguous(), np.broadcast_to(x[:1], x.shape))
        res(
            "movedim",
            xd.reshape(rows, 8, 8).movedim(1, -1).contiguous(),
            np.ascontiguousarray(np.moveaxis(x.reshape(rows, 8, 8), 1, -1)),
        )
        res("clone", xd.clone(), x)
        parts = [xd[r0 : r0 + 3].reshape(-1) for r0 in range(0, min(rows, 30), 3)]
        ref_cat = np.concatenate([x[r0 : r0 + 3].reshape(-1) for r0 in range(0, min(rows, 30), 3)])
        res("cat", torch.cat(parts), ref_cat)
        res(
            "cat",
            torch.cat([xd.reshape(-1), xd[:1].reshape(-1)]),
            np.concatenate([x.reshape(-1), x[:1].reshape(-1)]),
            nm + " (all)",
        )
        res("copy_", torch.empty_like(xd).copy_(xd), x)
        res("getitem", xd[..., :32], x[..., :32])
        res("getitem", xd[3 % rows], x[3 % rows], nm + " (row)")
        res(
            "pad",
            torch.nn.functional.pad(xd[:, :50], (0, 14)),
            np.pad(x[:, :50], ((0, 0), (0, 14))),
        )
        xi = x.view(np.int64 if fmt.prec > 24 else np.int32).astype(np.int64)
        res(
            "pad",
            torch.nn.functional.pad(ctx.dev(xi)[:, :50], (0, 6, 0, 9)),
            np.pad(xi[:, :50], ((0, 9), (0, 6))),
            nm + " (int64, two dims)",
        )
        res("to", xd.to(fmt.torch_dtype), x, nm + " (same dtype)")
        res("to", xd.to("cpu"), x, nm + " (to cpu)")
        fills = [0.0, -0.0, 1.0, math.nan, math.inf, 0.1, 1e-40, 2.0]
        for c in fills:
            ref = np.full(x.shape, np.array(c, dtype=np.float64).astype(fmt.np_dtype))
            res("fill", torch.full_like(xd, c), ref, f"{nm} (full_like {c!r})")
        res("fill", torch.zeros_like(xd), np.zeros(x.shape, fmt.np_dtype), nm + " (zeros_like)")
        res("fill", torch.ones_like(xd), np.ones(x.shape, fmt.np_dtype), nm + " (ones_like)")
        res(
            "fill",
            torch.zeros(x.shape, dtype=fmt.torch_dtype, device=ctx.device),
            np.zeros(x.shape, fmt.np_dtype),
            nm + " (zeros)",
        )
        vals = x.reshape(-1)[: ctx.n].tolist()
        res(
            "tensor",
            torch.tensor(vals, dtype=fmt.torch_dtype, device=ctx.device),
            np.array(vals, dtype=fmt.np_dtype),
        )
        m = min(rows * 64, 20_000)
        flat = xd.reshape(-1)
        items = np.array([flat[j].item() for j in range(m)], dtype=np.float64)
        out.append(
            _result(
                "plumbing:item",
                nm,
                items.astype(fmt.np_dtype),
                x.reshape(-1)[:m],
                lambda i: f"index {i}",
                nan_equal=True,
            )
        )
        dims = np.array([xd.dim(), xd.numel(), xd.shape[0]], dtype=np.int64)
        out.append(
            _result(
                "plumbing:shape",
                nm,
                dims,
                np.array([2, x.size, rows]),
                lambda i: "dim, numel, shape[0]",
            )
        )
        with torch.no_grad():
            a = _host(xd * 3.0)
        with torch.enable_grad():
            b = _host(xd * 3.0)
        out.append(_result("plumbing:grad_mode", nm, a, b, lambda i: f"index {i}"))
    return out


_CHECKS: list[Callable[[_Ctx], list[ConformanceResult]]] = [
    _check_binary,
    _check_scalar_ops,
    _check_unary_float,
    _check_frexp_round,
    _check_compare_where,
    _check_reductions,
    _check_casts,
    _check_int,
    _check_index,
    _check_randint,
    _check_sqrt_all,
    _check_plumbing,
]


def run_conformance(
    device: str = "cpu", n: int = 1_000_000, seed: int = 0
) -> list[ConformanceResult]:
    """Run every check of this module on `device` and return one result per check and dtype.

    Args:
        device: torch device string ("cpu", "cuda", "cuda:1", ...). Inputs are generated on
            the CPU, moved there, and results moved back; references are always CPU.
        n: values per check and dtype (at least 1; the cross-checks of the references use
            min(n, 10**4), plumbing `item` reads min(n, 2*10**4)). 10**6 takes about half a
            minute on two CPU cores.
        seed: seed of the input generators (the same seed gives the same inputs).

    Returns:
        A list of `ConformanceResult`s; `all(r.ok for r in results)` means conformant.
        Names starting with "reference." check the CPU reference itself (numpy against
        exact rational arithmetic).

    Raises:
        ValueError: `n < 1`.
        RuntimeError: from torch, if `device` is not available.
    """
    if n < 1:
        raise ValueError(f"run_conformance: n must be >= 1, got {n}")
    # (both import this module)
    from veritrain.repro.conformance_gemm import GEMM_CHECKS
    from veritrain.repro.conformance_llama import LLAMA_CHECKS

    ctx = _Ctx(device, n, seed)
    results: list[ConformanceResult] = []
    for check in [*_CHECKS, *GEMM_CHECKS, *LLAMA_CHECKS]:
        results.extend(check(ctx))
    return results


def check_names() -> frozenset[str]:
    """Names of all checks `run_conformance` reports (for AUDITED's consistency test)."""
    return frozenset(r.name for r in run_conformance("cpu", n=64, seed=0))
