"""Tests of the reproducible elementwise functions (`exp`, `log`, `tanh`, `relu`, `gelu`).

Tolerance: each result is compared with the float64 torch value rounded to float32; ours is
a float64 evaluation with relative error ~1e-15 rounded once, so it may differ from the
correctly rounded float32 by at most one unit in the last place (ulp), and only when the
exact value lies within ~1e-15 of a rounding boundary.

Run: `.venv/bin/python -m pytest -q tests/unit/veritrain/test_repro_elementwise.py`
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import torch

from veritrain.repro import ReproError, exp, gelu, log, relu, tanh
from veritrain.repro._common import horner, pow2
from veritrain.repro.elementwise import _EXP_TABLE, exp64, log64, tanh64


def _ulps(got: torch.Tensor, ref: torch.Tensor) -> torch.Tensor:
    """Distance in float32 ulps between two float32 tensors of finite values."""
    spacing = torch.nextafter(ref.abs(), torch.full_like(ref, math.inf)) - ref.abs()
    return (got.double() - ref.double()).abs() / spacing.double()


def _grid(lo: float, hi: float, n: int = 200_001) -> torch.Tensor:
    g = torch.Generator().manual_seed(0)
    return torch.cat([torch.linspace(lo, hi, n), torch.rand(n, generator=g) * (hi - lo) + lo])


def test_exp_is_within_one_ulp_over_the_float32_range() -> None:
    x = _grid(-87.0, 88.7)
    ref = torch.exp(x.double()).float()
    assert _ulps(exp(x), ref).max().item() <= 1.0
    assert (exp(x) == ref).float().mean().item() > 0.9999


def test_exp_special_values() -> None:
    x = torch.tensor([0.0, -0.0, math.inf, -math.inf, 89.0, -104.0, -200.0, 1e-30])
    got = exp(x)
    assert got.tolist() == [1.0, 1.0, math.inf, 0.0, math.inf, 0.0, 0.0, 1.0]
    assert torch.isnan(exp(torch.tensor([math.nan]))).all()
    sub = torch.tensor([-100.0, -95.0])  # results in the float32 subnormal range
    assert torch.equal(exp(sub), torch.exp(sub.double()).float())


def test_log_is_within_one_ulp_including_subnormals() -> None:
    g = torch.Generator().manual_seed(1)
    x = torch.cat(
        [
            _grid(1e-3, 100.0),
            torch.exp(torch.randn(200_000, generator=g, dtype=torch.float64) * 30).float(),
            torch.tensor([1e-45, 1e-40, 1.1754944e-38, 3.4e38]),
        ]
    )
    x = x[(x > 0) & torch.isfinite(x) & (x != 1.0)]
    ref = torch.log(x.double()).float()
    assert _ulps(log(x), ref).max().item() <= 1.0
    special = log(torch.tensor([0.0, -1.0, math.inf, 1.0, math.nan]))
    assert special[0].item() == -math.inf and math.isnan(special[1].item())
    assert special[2].item() == math.inf and special[3].item() == 0.0
    assert math.isnan(special[4].item())


def test_tanh_is_within_one_ulp_and_odd() -> None:
    x = torch.cat([_grid(-10.0, 10.0), _grid(-0.02, 0.02), torch.tensor([1e-30, 2.0**-6])])
    x = x[x != 0]
    ref = torch.tanh(x.double()).float()
    got = tanh(x)
    assert _ulps(got, ref).max().item() <= 1.0
    assert torch.equal(tanh(-x), -got)
    assert tanh(torch.tensor([math.inf, -math.inf, 0.0])).tolist() == [1.0, -1.0, 0.0]


def test_gelu_matches_torch_tanh_gelu() -> None:
    x = _grid(-12.0, 12.0)
    x64 = x.double()
    u = (x64 + 0.044715 * x64**3) * math.sqrt(2.0 / math.pi)
    # 0.5 x (1 + tanh u) == x sigmoid(2u); the sigmoid form is accurate in float64 even in the
    # negative tail, where torch's own float64 tanh form cancels to -0.
    ref = x64 * torch.sigmoid(2.0 * u)
    got = gelu(x).double()
    assert bool(((got - ref).abs() <= ref.abs() * 2.0**-23 + 1e-44).all())
    close = torch.nn.functional.gelu(x.double(), approximate="tanh")
    torch.testing.assert_close(got, close, rtol=2.0**-23, atol=1e-15)


def test_relu_forward_and_gradient_match_torch() -> None:
    x = torch.tensor([-2.0, -0.0, 0.0, 1e-40, 3.0], requires_grad=True)
    y = relu(x)
    y.backward(torch.ones(5))
    x2 = x.detach().clone().requires_grad_()
    torch.relu(x2).backward(torch.ones(5))
    assert torch.equal(y, torch.relu(x.detach()))
    assert x.grad is not None and torch.equal(x.grad, x2.grad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("ours", "theirs", "lo", "hi"),
    [
        (exp, torch.exp, -5.0, 5.0),
        (log, torch.log, 0.1, 10.0),
        (tanh, torch.tanh, -4.0, 4.0),
        (gelu, lambda t: torch.nn.functional.gelu(t, approximate="tanh"), -5.0, 5.0),
    ],
)
def test_gradients_match_torch_autograd(ours, theirs, lo, hi) -> None:  # type: ignore[no-untyped-def]
    g = torch.Generator().manual_seed(2)
    x = (torch.rand(1000, generator=g) * (hi - lo) + lo).requires_grad_()
    up = torch.randn(1000, generator=g)
    ours(x).backward(up)
    x64 = x.detach().double().requires_grad_()
    theirs(x64).backward(up.double())
    torch.testing.assert_close(x.grad, x64.grad.float(), rtol=1e-5, atol=1e-6)


def test_no_libm_transcendental_is_called(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("a platform transcendental was called")

    for name in ("exp", "log", "tanh", "expm1", "log1p", "pow", "sigmoid"):
        monkeypatch.setattr(torch, name, forbidden)
        monkeypatch.setattr(torch.Tensor, name, forbidden)
    x = torch.linspace(-3, 3, 101, requires_grad=True)
    total = exp(x).sum() + tanh(x).sum() + gelu(x).sum() + log(x.abs() + 1).sum()
    total.backward()
    assert torch.isfinite(total)
    assert exp64(x.detach().double()).dtype == torch.float64
    assert log64(x.detach().double().abs()).dtype == tanh64(x.detach().double()).dtype


def test_elementwise_rejects_non_float32() -> None:
    for fn in (exp, log, tanh, relu, gelu):
        with pytest.raises(ReproError, match="float32"):
            fn(torch.ones(3, dtype=torch.float64))


def test_exp_table_is_correctly_rounded() -> None:
    # |T - 2**(j/32)| <= half an ulp of T, checked exactly: (T -+ ulp/2)**32 bracket 2**j
    assert len(_EXP_TABLE) == 32 and _EXP_TABLE[0] == 1.0
    for j, t in enumerate(_EXP_TABLE):
        half = Fraction(math.ulp(t)) / 2
        assert (Fraction(t) - half) ** 32 < 2**j < (Fraction(t) + half) ** 32
    # negative control: one ulp off is outside the bracket
    t = math.nextafter(_EXP_TABLE[7], 2.0)
    assert not (Fraction(t) - Fraction(math.ulp(t)) / 2) ** 32 < 2**7


def test_exp64_is_accurate_across_table_entries_and_binades() -> None:
    x = torch.linspace(-700.0, 700.0, 300_001, dtype=torch.float64)
    x = torch.cat([x, torch.tensor([0.0, 1.0, -1.0, math.log(2.0) / 64, -math.log(2.0) / 64])])
    rel = ((exp64(x) - torch.exp(x)) / torch.exp(x)).abs()
    assert rel.max().item() < 2e-15
    assert exp64(torch.zeros(1, dtype=torch.float64)).item() == 1.0


def test_horner_is_one_multiply_and_one_add_per_coefficient_and_keeps_its_argument() -> None:
    g = torch.Generator().manual_seed(3)
    t = torch.randn(1000, generator=g, dtype=torch.float64)
    before = t.clone()
    coefs = [0.5, -1.25, 3.0, 1.0 / 3.0]
    ref = torch.full_like(t, coefs[0])
    for c in coefs[1:]:
        ref = ref * t
        ref = ref + c
    assert torch.equal(horner(coefs, t), ref)
    assert torch.equal(t, before)
    assert torch.equal(horner([2.5], t), torch.full_like(t, 2.5))
    # negative control: a different association rounds differently somewhere
    other = ((t * t) * (t * coefs[0]) + (t * t) * coefs[1]) + (t * coefs[2] + coefs[3])
    assert not torch.equal(horner(coefs, t), other)


def test_pow2_is_exact_and_leaves_an_int64_argument_alone() -> None:
    e = torch.arange(-1022, 1024, dtype=torch.int64)
    before = e.clone()
    got = pow2(e)
    assert torch.equal(e, before)
    assert got.tolist() == [math.ldexp(1.0, int(k)) for k in e]


@pytest.mark.parametrize(
    "values",
    [
        [float("nan"), -800.0],  # a NaN hides the minimum: the underflow mask must still run
        [float("nan"), 1.0, -5.0],  # NaN, nothing below the limit
        [-800.0, float("-inf"), 2.0],  # below the limit, no NaN
        [-700.0, 0.5, 700.0, 800.0],  # neither (-700 itself is e**-700, not 0)
        [float("inf"), float("-inf"), float("nan")],
    ],
)
def test_exp64_mixed_special_values_match_elementwise(values: list[float]) -> None:
    # exp64 skips its NaN and underflow fix-ups when a minimum shows they are not needed; each
    # entry must come out as it does alone, whatever the other entries are
    x = torch.tensor(values, dtype=torch.float64)
    alone = torch.cat([exp64(x[i : i + 1]) for i in range(len(values))])
    got = exp64(x)
    same = (got == alone) | (got.isnan() & alone.isnan())
    assert bool(same.all()), (got, alone)
    assert math.isnan(got[0].item()) == math.isnan(values[0])
    assert exp64(torch.tensor([-800.0], dtype=torch.float64)).item() == 0.0
    assert exp64(torch.tensor([-700.0], dtype=torch.float64)).item() > 0.0
