"""The Llama operators of `veritrain.repro`: rms_norm, silu, rope and rope_tables.

Forward and backward against float64 references (torch autograd on the textbook formulas),
the analytic gradients against central finite differences of the float64 formula, the edge
cases the operators promise (SiLU at the infinities, zeros and subnormals), the exact
rounding helper of the RoPE tables, and the refusals of bad inputs.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from veritrain import repro as R
from veritrain.repro import ReproError
from veritrain.repro.rotary import round_to_float32


def _gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _rms_ref(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def _rope_ref(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    p = x.reshape(*x.shape[:-1], x.shape[-1] // 2, 2)
    a, b = p[..., 0], p[..., 1]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), -1).reshape(x.shape)


def _close_to_f64(got: torch.Tensor, ref: torch.Tensor, ulps: float = 2.0) -> None:
    """`got` (float32) within `ulps` float32 ulps of the float64 `ref`, entrywise."""
    tol = ulps * torch.finfo(torch.float32).eps * ref.abs().clamp_min(1e-30)
    err = (got.double() - ref).abs()
    assert bool((err <= tol + 1e-37).all()), float((err / (tol + 1e-37)).max())


@pytest.mark.parametrize("d", [1, 7, 64])
def test_rms_norm_forward_and_backward_match_float64(d: int) -> None:
    g = _gen(d)
    x = torch.randn(3, 5, d, generator=g, requires_grad=True)
    w = torch.randn(d, generator=g, requires_grad=True)
    y = R.rms_norm(x, w, 1e-5)
    x64 = x.detach().double().requires_grad_()
    w64 = w.detach().double().requires_grad_()
    ref = _rms_ref(x64, w64, 1e-5)
    _close_to_f64(y, ref.detach(), ulps=1.0)
    gy = torch.randn(y.shape, generator=g)
    y.backward(gy)
    ref.backward(gy.double())
    assert x.grad is not None and w.grad is not None
    assert x64.grad is not None and w64.grad is not None
    scale_x = x64.grad.abs().max().item()
    scale_w = w64.grad.abs().max().item()
    assert (x.grad.double() - x64.grad).abs().max().item() <= 1e-6 * scale_x
    assert (w.grad.double() - w64.grad).abs().max().item() <= 1e-6 * scale_w


def test_rms_norm_backward_is_the_derivative() -> None:
    """The analytic backward against central differences of the float64 formula."""
    g = _gen(1)
    x = torch.randn(2, 6, generator=g) * 3
    w = torch.randn(6, generator=g)
    gy = torch.randn(2, 6, generator=g)
    xr = x.clone().requires_grad_()
    wr = w.clone().requires_grad_()
    R.rms_norm(xr, wr, 1e-5).backward(gy)
    assert xr.grad is not None and wr.grad is not None

    def loss(xx: torch.Tensor, ww: torch.Tensor) -> float:
        return float((_rms_ref(xx, ww, 1e-5) * gy.double()).sum())

    h = 1e-6
    x64, w64 = x.double(), w.double()
    for i, j in [(0, 0), (1, 3), (1, 5)]:
        e = torch.zeros_like(x64)
        e[i, j] = h
        fd = (loss(x64 + e, w64) - loss(x64 - e, w64)) / (2 * h)
        assert math.isclose(float(xr.grad[i, j]), fd, rel_tol=1e-4, abs_tol=1e-6)
    for j in (0, 4):
        e = torch.zeros_like(w64)
        e[j] = h
        fd = (loss(x64, w64 + e) - loss(x64, w64 - e)) / (2 * h)
        assert math.isclose(float(wr.grad[j]), fd, rel_tol=1e-4, abs_tol=1e-6)


def test_rms_norm_of_zeros_is_zero_and_bad_inputs_are_refused() -> None:
    assert torch.equal(R.rms_norm(torch.zeros(2, 4), torch.ones(4)), torch.zeros(2, 4))
    with pytest.raises(ReproError, match="weight"):
        R.rms_norm(torch.ones(2, 4), torch.ones(3))
    with pytest.raises(ReproError, match="float32"):
        R.rms_norm(torch.ones(2, 4, dtype=torch.float64), torch.ones(4))
    with pytest.raises(ReproError, match="empty"):
        R.rms_norm(torch.ones(2, 0), torch.ones(0))


def test_silu_forward_and_backward_match_float64() -> None:
    g = _gen(2)
    x = (torch.randn(4000, generator=g) * 12).requires_grad_()
    y = R.silu(x)
    x64 = x.detach().double().requires_grad_()
    ref = F.silu(x64)
    _close_to_f64(y, ref.detach(), ulps=0.5 + 1e-3)  # rounded once from ~1e-15 accuracy
    y.backward(torch.ones_like(y))
    ref.backward(torch.ones_like(ref))
    assert x.grad is not None and x64.grad is not None
    assert (x.grad.double() - x64.grad).abs().max().item() <= 2e-7


def test_silu_backward_is_the_derivative() -> None:
    xs = [-20.0, -3.5, -1.25, -1e-3, 0.0, 2e-4, 0.75, 4.0, 30.0]
    x = torch.tensor(xs, requires_grad=True)
    R.silu(x).backward(torch.ones(len(xs)))
    assert x.grad is not None
    h = 1e-6
    for i, v in enumerate(xs):
        fd = (v + h) / (1 + math.exp(-(v + h))) - (v - h) / (1 + math.exp(-(v - h)))
        assert math.isclose(float(x.grad[i]), fd / (2 * h), rel_tol=1e-5, abs_tol=1e-7)


def test_silu_edge_cases() -> None:
    tiny = float(np.array([1], dtype=np.uint32).view(np.float32)[0])  # 2**-149
    x = torch.tensor([math.inf, -math.inf, math.nan, 0.0, -0.0, tiny, -tiny, 3 * tiny, -200.0])
    y = R.silu(x)
    assert y[0] == math.inf
    assert y[1] == 0 and math.copysign(1, float(y[1])) == -1  # the limit, -0.0
    assert math.isnan(float(y[2]))
    assert math.copysign(1, float(y[3])) == 1 and math.copysign(1, float(y[4])) == -1
    # x/2 is a float32 midpoint here; the exact value x/2 + x^2/4 lies above it
    assert float(y[5]) == tiny  # 2**-150 + ... rounds up to 2**-149
    assert float(y[6]) == 0 and math.copysign(1, float(y[6])) == -1  # -2**-150 + ...: -0
    assert float(y[7]) == 2 * tiny  # 1.5 * 2**-149 + ...: up to 2 * 2**-149
    assert float(y[8]) == 0
    x = torch.tensor([math.inf, -math.inf], requires_grad=True)
    R.silu(x).backward(torch.ones(2))
    assert x.grad is not None and x.grad.tolist() == [1.0, 0.0]
    with pytest.raises(ReproError, match="float32"):
        R.silu(torch.ones(2, dtype=torch.float64))


def test_rope_forward_and_backward_match_float64() -> None:
    g = _gen(3)
    cos, sin = R.rope_tables(12, 8)
    x = torch.randn(2, 3, 12, 8, generator=g).transpose(1, 2).contiguous().transpose(1, 2)
    x.requires_grad_()  # a non-contiguous view, as the model passes its heads
    y = R.rope(x, cos, sin)
    x64 = x.detach().double().requires_grad_()
    ref = _rope_ref(x64, cos.double(), sin.double())
    _close_to_f64(y, ref.detach(), ulps=1.0)
    gy = torch.randn(y.shape, generator=g)
    y.backward(gy)
    ref.backward(gy.double())
    assert x.grad is not None and x64.grad is not None
    assert (x.grad.double() - x64.grad).abs().max().item() <= 1e-6


def test_rope_backward_rotates_back_and_keeps_norms() -> None:
    """The backward is the rotation by the negative angle: applied to the forward's output it
    gives the input back (to rounding), and each pair keeps its length."""
    g = _gen(4)
    cos, sin = R.rope_tables(9, 4)
    x = torch.randn(1, 2, 9, 4, generator=g)
    xr = x.clone().requires_grad_()
    y = R.rope(xr, cos, sin)
    y.backward(y.detach())
    assert xr.grad is not None
    assert torch.allclose(xr.grad, x, rtol=0, atol=1e-6)
    pairs_in = x.reshape(1, 2, 9, 2, 2).pow(2).sum(-1)
    pairs_out = y.detach().reshape(1, 2, 9, 2, 2).pow(2).sum(-1)
    assert torch.allclose(pairs_in, pairs_out, rtol=1e-5)
    assert torch.equal(y[..., 0, :], x[..., 0, :])  # position 0 does not turn


def test_rope_refuses_bad_tables_and_odd_widths() -> None:
    cos, sin = R.rope_tables(4, 4)
    with pytest.raises(ReproError, match="cos"):
        R.rope(torch.ones(1, 1, 3, 4), cos, sin)
    with pytest.raises(ReproError, match="hd even"):
        R.rope(torch.ones(1, 1, 4, 3), cos, sin)
    with pytest.raises(ReproError, match="even head_dim"):
        R.rope_tables(4, 5)
    with pytest.raises(ReproError, match="theta"):
        R.rope_tables(4, 4, 1.0)


def test_rope_tables_entries_are_correctly_rounded() -> None:
    cos, sin = R.rope_tables(64, 16, 10000.0)
    assert cos.shape == sin.shape == (64, 8) and cos.dtype == torch.float32
    assert torch.equal(cos[0], torch.ones(8)) and torch.equal(sin[0], torch.zeros(8))
    mp = mpmath.MPContext()
    mp.prec = 300
    for t, i in [(1, 0), (63, 0), (17, 3), (40, 7), (5, 5)]:
        angle = t * mp.power(mp.mpf(10000), mp.mpf(-2 * i) / 16)
        for table, fn in ((cos, mp.cos), (sin, mp.sin)):
            sign, man, exp, _ = fn(angle)._mpf_
            exact = (-1) ** sign * Fraction(man) * Fraction(2) ** exp
            got = Fraction(float(table[t, i]))
            ulp = Fraction(2) ** (math.frexp(float(table[t, i]))[1] - 24)
            assert abs(exact - got) <= ulp / 2  # nearest: within half an ulp


def test_round_to_float32_is_nearest_even() -> None:
    assert round_to_float32(0, 1, 0) == 1.0
    assert round_to_float32(0, (1 << 24) + 1, -24) == 1.0  # 1 + 2^-24: tie, to even (1)
    assert round_to_float32(0, (1 << 24) + 3, -24) == 1.0 + 2.0**-22  # tie, to even (up)
    assert round_to_float32(0, (1 << 25) + 3, -25) == 1.0 + 2.0**-23  # above the tie
    assert round_to_float32(1, 3, -2) == -0.75
    assert round_to_float32(0, 1, -150) == 0.0  # half the smallest subnormal: to even, 0
    assert round_to_float32(0, 3, -151) == 2.0**-149  # 0.75 of it: up
    neg_zero = round_to_float32(1, 0, 0)
    assert neg_zero == 0 and math.copysign(1, neg_zero) == -1
    with pytest.raises(OverflowError):
        round_to_float32(0, 1, 128)
