"""Rotary position embeddings (RoPE), reproducibly: the rotation and its cos/sin tables.

RoPE (Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary Position Embedding", eq. 34;
Meta's Llama reference model.py, `apply_rotary_emb`) rotates each pair of a query or key
vector by an angle proportional to the token's position. Pairs are INTERLEAVED, as in both
sources: pair i of a head of width hd is the entries (2i, 2i+1), i = 0 .. hd/2 - 1 (Meta's
reference views them as complex numbers `x[2i] + j x[2i+1]`), and at position t it turns by

    angle(t, i) = t * theta ** (-2 i / hd)      (the exact real number, no rounding)

`rope_tables` gives every `cos(angle)` and `sin(angle)` as the CORRECTLY ROUNDED float32
(round to nearest, ties to even) of the exact real value: each is enclosed by mpmath's
interval functions (`mpmath.libmp.mpi_*`: rigorous bounds, pure software, the same on every
machine) and the two ends of the enclosure are rounded to float32 by integer code here;
when both ends round to the same float32, that is the correctly rounded value (otherwise
the precision doubles and it tries again). No libm function and no torch kernel touches an angle.

`rope(x, cos, sin)` computes `(x0 c - x1 s, x0 s + x1 c)` per pair in float64 (each product
of two float32 values is exact in float64, the sum rounded once) and rounds once to float32.
Its backward is the rotation by the negative angle, `(g0 c + g1 s, -g0 s + g1 c)`, computed
the same way.

Run: not a script; `from veritrain.repro import rope, rope_tables`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import mpmath.libmp as libmp
import torch

from veritrain.repro._common import ReproError, apply_fn, check32, to64
from veritrain.repro.fused import rope_fused

__all__ = ["rope", "rope_tables", "round_to_float32"]

_START_PREC = 128
"""Bits of the first interval evaluation of an angle's cos and sin (doubled on a tie)."""
_MAX_PREC = 4096
_F32_MANT = 24  # significand bits of binary32, the hidden bit included
_F32_MIN_Q = -149  # exponent of the last bit of the smallest binary32 subnormal
_F32_MAX_EXP = 127


def round_to_float32(sign: int, man: int, exp: int) -> float:
    """The binary32 value nearest `(-1)**sign * man * 2**exp` (ties to even), as a Python float.

    Integer arithmetic only (the result, at most 24 significant bits, is exact as a double).
    Subnormal results are rounded on the subnormal grid (2**-149).

    Args:
        sign: 0 or 1.
        man: the non-negative integer significand.
        exp: the power of two.

    Raises:
        OverflowError: the value rounds beyond the largest finite binary32.
    """
    if man == 0:
        return -0.0 if sign else 0.0
    msb = exp + man.bit_length() - 1
    q = max(msb - (_F32_MANT - 1), _F32_MIN_Q)  # exponent of the last kept bit
    shift = q - exp
    if shift <= 0:
        m = man << -shift
    else:
        m = man >> shift
        rem = man - (m << shift)
        half = 1 << (shift - 1)
        if rem > half or (rem == half and m & 1):
            m += 1
    if m.bit_length() + q - 1 > _F32_MAX_EXP:
        raise OverflowError("value beyond the binary32 range")
    value = float(m) * float(2**q) if q >= 0 else float(m) / float(2**-q)  # exact: powers of 2
    return -value if sign else value


def _enclosure_f32(ends: tuple[Any, Any]) -> float | None:
    """The float32 both ends of an mpmath interval (raw `mpi` pair) round to, or None."""
    lo, hi = (round_to_float32(e[0], e[1], e[2]) for e in ends)
    return lo if lo == hi and str(lo) == str(hi) else None  # (str tells -0.0 from 0.0)


def _point(n: int) -> tuple[Any, Any]:
    """The exact interval [n, n] of an integer, as mpmath's raw `mpi` pair."""
    v = libmp.from_int(n)
    return v, v


def _point_float(x: float) -> tuple[Any, Any]:
    """The exact interval [x, x] of a binary64 value."""
    v = libmp.from_float(x)
    return v, v


@lru_cache(maxsize=1024)
def _frequency(i: int, hd: int, theta: float, prec: int) -> tuple[Any, Any]:
    """An interval enclosing `theta ** (-2i/hd)`, at `prec` bits (raw mpmath `mpi` pair).

    mpmath's interval functions on exact endpoints (no global context): each returns an
    interval that contains the exact result. theta is a binary64, so exact here, and
    `theta ** (-2i/hd) = exp((-2i/hd) * log theta)`.
    """
    exponent = libmp.mpi_div(_point(-2 * i), _point(hd), prec)
    log_theta = libmp.mpi_log(_point_float(theta), prec)
    freq: tuple[Any, Any] = libmp.mpi_exp(libmp.mpi_mul(exponent, log_theta, prec), prec)
    return freq


def _cos_sin_f32(t: int, i: int, hd: int, theta: float) -> tuple[float, float]:
    """Correctly rounded float32 (as Python floats) of cos and sin of `t * theta**(-2i/hd)`."""
    prec = _START_PREC
    while prec <= _MAX_PREC:
        angle = libmp.mpi_mul(_frequency(i, hd, theta, prec), _point(t), prec)
        cos, sin = libmp.mpi_cos_sin(angle, prec)
        c = _enclosure_f32(cos)
        s = _enclosure_f32(sin)
        if c is not None and s is not None:
            return c, s
        prec *= 2
    raise ReproError(f"repro.rope_tables: cannot round cos/sin at t={t}, i={i} in {_MAX_PREC} bits")


@lru_cache(maxsize=16)
def _tables(block_size: int, head_dim: int, theta: float) -> tuple[list[float], list[float]]:
    cos: list[float] = []
    sin: list[float] = []
    for t in range(block_size):
        for i in range(head_dim // 2):
            c, s = _cos_sin_f32(t, i, head_dim, theta)
            cos.append(c)
            sin.append(s)
    return cos, sin


def rope_tables(
    block_size: int, head_dim: int, theta: float = 10000.0
) -> tuple[torch.Tensor, torch.Tensor]:
    """RoPE's `cos` and `sin` tables, every entry the correctly rounded float32 of the exact value.

    Entry `[t, i]` is `cos(t * theta ** (-2 i / head_dim))` (resp. sin) for the exact real
    angle (theta taken as the binary64 value it is), enclosed by mpmath interval arithmetic
    and rounded to nearest-even binary32 (see the module docstring). Cached per arguments
    (a 64 x 8 table takes about 0.1 s).

    Args:
        block_size: T, the number of positions (0 .. T - 1).
        head_dim: hd, the (even) width of one attention head.
        theta: the base (Llama: 10000.0), a finite float > 1.

    Returns:
        `(cos, sin)`, two float32 CPU tensors of shape (T, hd/2).

    Raises:
        ReproError: T < 1, an odd or non-positive head_dim, or theta not a finite float > 1.
    """
    if block_size < 1 or head_dim < 2 or head_dim % 2:
        raise ReproError(
            f"repro.rope_tables: need T >= 1 and an even head_dim, got T={block_size}, "
            f"head_dim={head_dim}"
        )
    theta = float(theta)
    if not 1.0 < theta < float("inf"):
        raise ReproError(f"repro.rope_tables: theta must be a finite float > 1, got {theta}")
    cos, sin = _tables(block_size, head_dim, theta)
    shape = (block_size, head_dim // 2)
    # the Python floats are binary32 values already: the conversion is exact
    return (
        torch.tensor(cos, dtype=torch.float32).reshape(shape),
        torch.tensor(sin, dtype=torch.float32).reshape(shape),
    )


def _pairs(c: torch.Tensor, s: torch.Tensor, a: list[float], b: list[float]) -> torch.Tensor:
    """(T, hd/2, 2) float64 table `c * a + s * b` per pair (a, b are 0/+-1 rows: exact)."""
    ta = torch.tensor(a, dtype=torch.float64, device=c.device)
    tb = torch.tensor(b, dtype=torch.float64, device=c.device)
    return c.unsqueeze(-1) * ta + s.unsqueeze(-1) * tb


def _rotate(x: torch.Tensor, first: torch.Tensor, second: torch.Tensor) -> torch.Tensor:
    """`x0 * first + x1 * second` per interleaved pair of float32 `x` (..., T, hd), in float64,
    rounded once to float32 (each product exact in float64, one rounded sum)."""
    fused = rope_fused(x, first, second)  # one pass (`repro.fused`), the same bits
    if fused is not None:
        return fused
    return _rotate64(x, first, second).to(torch.float32)


def _rotate64(x: torch.Tensor, first: torch.Tensor, second: torch.Tensor) -> torch.Tensor:
    """`_rotate` in float64, before its rounding to float32."""
    shape = x.shape
    pairs = to64(x).reshape(*shape[:-1], shape[-1] // 2, 2)  # (..., T, hd/2, 2)
    y = pairs[..., 0:1] * first + pairs[..., 1:2] * second
    return y.reshape(shape)


class _Rope(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        c, s = to64(cos), to64(sin)
        ctx.save_for_backward(cos, sin)
        # (x0, x1) -> x0 * (c, s) + x1 * (-s, c) = (x0 c - x1 s, x0 s + x1 c)
        return _rotate(
            x, _pairs(c, s, [1.0, 0.0], [0.0, 1.0]), _pairs(c, s, [0.0, 1.0], [-1.0, 0.0])
        )

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None, None]:
        cos, sin = ctx.saved_tensors
        c, s = to64(cos), to64(sin)
        # the transposed rotation: (g0, g1) -> g0 * (c, -s) + g1 * (s, c)
        first = _pairs(c, s, [1.0, 0.0], [0.0, -1.0])
        second = _pairs(c, s, [0.0, 1.0], [1.0, 0.0])
        return _rotate(grad, first, second), None, None


def rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate interleaved pairs of `x` by the angles of the tables (RoPE, see the module docstring).

    Pair i of position t, `(x[..., t, 2i], x[..., t, 2i+1])`, becomes
    `(x0 c - x1 s, x0 s + x1 c)` with `c = cos[t, i]`, `s = sin[t, i]`, in float64, rounded
    once to float32. Backward: the rotation by the negative angle. The tables get no gradient.

    Args:
        x: float32 (B, H, T, hd) queries or keys (any leading dims), hd even.
        cos: float32 (T, hd/2), from `rope_tables` (sliced to the first T positions).
        sin: float32 (T, hd/2).

    Returns:
        float32 tensor of `x`'s shape.

    Raises:
        ReproError: dtypes other than float32, devices that differ, an odd last dim, or tables
            not of shape (T, hd/2).
    """
    check32("rope", x, cos, sin)
    if x.dim() < 2 or x.shape[-1] % 2:
        raise ReproError(f"repro.rope: need x (..., T, hd) with hd even, got {tuple(x.shape)}")
    want = (x.shape[-2], x.shape[-1] // 2)
    for name, t in (("cos", cos), ("sin", sin)):
        if tuple(t.shape) != want:
            raise ReproError(f"repro.rope: {name} {tuple(t.shape)} != {want}")
    return apply_fn(_Rope, x, cos, sin)
