"""Tests of the reproducible initialiser `veritrain.repro.normal_` and its cosine.

(That its bytes do not depend on the SIMD level is checked by test_repro_determinism.py,
whose workload draws its embedding table with `normal_`.)

Run: `.venv/bin/python -m pytest -q tests/unit/veritrain/test_repro_init.py`
"""

from __future__ import annotations

import math

import pytest
import torch

from veritrain.repro import ReproError, normal_
from veritrain.repro.init import cos2pi64


def test_cos2pi64_matches_float64_cosine() -> None:
    g = torch.Generator().manual_seed(0)
    u = torch.cat(
        [
            torch.randint(0, 2**53, (200_000,), generator=g).double() * 2.0**-53,
            torch.linspace(-3.0, 3.0, 10_001, dtype=torch.float64) * 2.0,
            torch.tensor([0.0, 0.125, 0.25, 0.375, 0.5, 0.75, 1.0], dtype=torch.float64),
        ]
    )
    # reference on the reduced argument, so that its own 2 pi u rounding stays below 1e-15
    err = (cos2pi64(u) - torch.cos((u - torch.round(u)) * (2 * math.pi))).abs().max().item()
    assert err < 1e-15, err
    assert cos2pi64(torch.tensor([0.0, 0.25, 0.5], dtype=torch.float64)).tolist()[0] == 1.0


def test_normal_has_the_requested_moments() -> None:
    g = torch.Generator().manual_seed(1)
    x = normal_(torch.empty(200_000), mean=0.5, std=2.0, generator=g).double()
    z = (x - 0.5) / 2.0
    assert abs(z.mean().item()) < 0.01
    assert abs(z.std().item() - 1.0) < 0.01
    assert abs((z**4).mean().item() - 3.0) < 0.05  # normal kurtosis, not uniform's 1.8
    assert abs((z.abs() < 1).double().mean().item() - 0.6827) < 0.005


def test_normal_is_a_function_of_the_seed_only() -> None:
    a = normal_(torch.empty(3, 50), std=0.02, generator=torch.Generator().manual_seed(5))
    b = normal_(torch.empty(150), std=0.02, generator=torch.Generator().manual_seed(5))
    c = normal_(torch.empty(150), std=0.02, generator=torch.Generator().manual_seed(6))
    assert torch.equal(a.reshape(-1), b) and not torch.equal(b, c)
    torch.manual_seed(7)
    d = normal_(torch.empty(10, dtype=torch.float64))
    torch.manual_seed(7)
    assert torch.equal(d, normal_(torch.empty(10, dtype=torch.float64)))


def test_normal_rejects_bad_arguments() -> None:
    with pytest.raises(ReproError, match="std"):
        normal_(torch.empty(3), std=-1.0)
    with pytest.raises(ReproError, match="float32 or float64"):
        normal_(torch.empty(3, dtype=torch.int64))
