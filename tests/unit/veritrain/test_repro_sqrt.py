"""`veritrain.repro.sqrt`: correctly rounded roots whatever the candidate `torch.sqrt` returns.

The conformance suite (test_repro_conformance.py) checks 10^6 values per dtype against an
exact reference; these tests pin the parts it cannot reach on one machine: a candidate that is
wrong by several ulps (another library), special values, the float32 fallback path, and the
Python-float root.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import torch

from veritrain.repro import ReproError, sqrt, sqrt_scalar
from veritrain.repro.sqrt import sqrt64

sqrt_module = __import__("veritrain.repro.sqrt", fromlist=["sqrt"])  # the module, not the function


def _exact_rn(x: float) -> float:
    """The correctly rounded root of a positive finite double from exact rationals."""
    q = Fraction(x)
    lo, hi = 0.0, max(1.0, x)
    for _ in range(2000):  # bisection on doubles: the largest double whose square is <= x
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if Fraction(mid) ** 2 <= q:
            lo = mid
        else:
            hi = mid
    below, above = lo, math.nextafter(lo, math.inf)
    mid = (Fraction(below) + Fraction(above)) / 2
    return below if mid * mid > q else above


def _shifted(ulps: int):
    """A `torch.sqrt` stand-in that is `ulps` ulps off on every other entry."""
    real = torch.sqrt

    def fake(x: torch.Tensor) -> torch.Tensor:
        y = real(x)
        itype = torch.int64 if y.dtype == torch.float64 else torch.int32
        bits = y.view(itype).clone()
        bits[::2] += ulps
        return bits.view(y.dtype)

    return fake


@pytest.mark.parametrize("ulps", [-3, -1, 1, 4])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_a_candidate_several_ulps_off_is_corrected(monkeypatch, ulps, dtype) -> None:
    gen = torch.Generator().manual_seed(ulps + 10)
    x = (torch.rand(20_000, generator=gen, dtype=torch.float64) * 1e6 + 1e-3).to(dtype)
    expected = np.sqrt(x.numpy())  # IEEE square root of the hardware
    monkeypatch.setattr(sqrt_module.torch, "sqrt", _shifted(ulps))
    got = sqrt(x).numpy()
    assert np.array_equal(got.view(np.uint8), expected.view(np.uint8))


def test_a_float32_candidate_that_fails_its_proof_takes_the_float64_path(monkeypatch) -> None:
    """The float32 fast path proves its candidate in one pass; one wrong entry sends the whole
    tensor through `sqrt64` (here the first candidate is a float32 ulp off on every other entry,
    later ones are exact)."""
    real, wrong, calls = torch.sqrt, _shifted(1 << 29), []

    def first_call_wrong(x: torch.Tensor) -> torch.Tensor:
        calls.append(x.numel())
        return wrong(x) if len(calls) == 1 else real(x)

    x = torch.linspace(1.0, 1000.0, 5000, dtype=torch.float32)
    monkeypatch.setattr(sqrt_module.torch, "sqrt", first_call_wrong)
    got = sqrt(x).numpy()
    assert len(calls) == 2  # the candidate, then sqrt64's
    assert np.array_equal(got, np.sqrt(x.numpy()))


def test_a_candidate_that_never_converges_is_refused(monkeypatch) -> None:
    monkeypatch.setattr(sqrt_module.torch, "sqrt", _shifted(50))
    with pytest.raises(ReproError, match="more than 8 ulps off"):
        sqrt64(torch.tensor([2.0, 3.0, 5.0], dtype=torch.float64))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_special_values_follow_ieee(dtype) -> None:
    x = torch.tensor([0.0, -0.0, math.inf, -math.inf, math.nan, -1.0, 4.0], dtype=dtype)
    y = sqrt(x)
    assert y.dtype == dtype
    assert y[0].item() == 0.0 and math.copysign(1.0, y[0].item()) == 1.0
    assert y[1].item() == 0.0 and math.copysign(1.0, y[1].item()) == -1.0
    assert y[2].item() == math.inf
    assert all(math.isnan(v) for v in y[3:6].tolist())
    assert y[6].item() == 2.0
    # one fixed NaN, whatever the input's payload: the bytes of a NaN result are reproducible
    nan_bits = y[3:6].view(torch.int64 if dtype == torch.float64 else torch.int32)
    assert len(set(nan_bits.tolist())) == 1


def test_float32_subnormals_and_extremes() -> None:
    tiny = torch.tensor([1e-45, 1e-40, 1.1754942e-38, 3.4028235e38], dtype=torch.float32)
    expected = np.sqrt(tiny.numpy())
    assert np.array_equal(sqrt(tiny).numpy(), expected)


def test_float64_roots_match_exact_rationals() -> None:
    rng = np.random.default_rng(5)
    xs = [float(v) for v in rng.uniform(0.0, 1.0, 200) * 10.0 ** rng.integers(-300, 300, 200)]
    xs += [5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 2.0, 0.5]
    got = sqrt64(torch.tensor(xs, dtype=torch.float64)).tolist()
    assert got == [_exact_rn(x) for x in xs]
    assert [sqrt_scalar(x) for x in xs] == got


def test_sqrt_scalar_special_values() -> None:
    assert math.isnan(sqrt_scalar(math.nan)) and math.isnan(sqrt_scalar(-2.0))
    assert math.copysign(1.0, sqrt_scalar(-0.0)) == -1.0
    assert sqrt_scalar(math.inf) == math.inf
    assert sqrt_scalar(2.0) == math.sqrt(2.0)


def test_empty_and_shaped_inputs_keep_their_shape() -> None:
    assert sqrt(torch.empty(0)).shape == (0,)
    x = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)
    assert torch.equal(sqrt(x), torch.from_numpy(np.sqrt(x.numpy())))


def test_other_dtypes_are_refused() -> None:
    with pytest.raises(ReproError):
        sqrt(torch.ones(3, dtype=torch.float16))
    with pytest.raises(ReproError):
        sqrt64(torch.ones(3, dtype=torch.float32))
