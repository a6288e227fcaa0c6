"""Tests of the reproducible AdamW (`veritrain.repro.AdamW`) and its integer powers.

Run: `.venv/bin/python -m pytest -q tests/unit/veritrain/test_repro_optim.py`
"""

from __future__ import annotations

from fractions import Fraction

import pytest
import torch

from veritrain.repro import AdamW, ReproError, clip_grad_norm_
from veritrain.repro.optim import int_power


def _params(seed: int) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return [
        torch.randn(17, 9, generator=g).requires_grad_(),
        torch.randn(9, generator=g).requires_grad_(),
    ]


def _grads(step: int, like: list[torch.Tensor]) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(1000 + step)
    return [torch.randn(p.shape, generator=g) * (0.1 + step % 3) for p in like]


@pytest.mark.parametrize("base", [0.9, 0.999, 0.95, 0.5])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 15, 100, 1000])
def test_int_power_is_close_to_the_exact_power(base: float, n: int) -> None:
    exact = Fraction(base) ** n
    got = int_power(base, n)
    # n - 1 multiplications' worth of relative rounding error of 2**-53 each, at most
    assert abs(Fraction(got) - exact) <= exact * Fraction(n + 1, 2**53)


def test_int_power_rejects_negative_exponent() -> None:
    with pytest.raises(ReproError, match="negative"):
        int_power(0.9, -1)


def test_adamw_tracks_torch_adamw_for_50_steps() -> None:
    ours, theirs = _params(0), _params(0)
    hp = {"lr": 3e-3, "betas": (0.9, 0.95), "eps": 1e-8, "weight_decay": 0.1}
    opt = AdamW(ours, **hp)  # type: ignore[arg-type]
    ref = torch.optim.AdamW(theirs, foreach=False, **hp)  # type: ignore[arg-type]
    for step in range(50):
        for p, q, g in zip(ours, theirs, _grads(step, ours), strict=True):
            p.grad = g.clone()
            q.grad = g.clone()
        opt.step()
        ref.step()
    for p, q in zip(ours, theirs, strict=True):
        rel = ((p - q).norm() / q.norm()).item()
        assert rel < 1e-6, rel
        assert not torch.equal(p, _params(0)[0] if p.dim() == 2 else _params(0)[1])


def test_adamw_state_has_torch_layout_and_loads_into_torch() -> None:
    ours = _params(1)
    opt = AdamW(ours, lr=1e-3)
    for p, g in zip(ours, _grads(0, ours), strict=True):
        p.grad = g
    opt.step()
    opt.step()
    ref_params = _params(1)
    ref = torch.optim.AdamW(ref_params, lr=1e-3, foreach=False)
    for p, g in zip(ref_params, _grads(0, ref_params), strict=True):
        p.grad = g
    ref.step()
    for p, q in zip(ours, ref_params, strict=True):
        mine, theirs = opt.state[p], ref.state[q]
        assert set(mine) == set(theirs) == {"step", "exp_avg", "exp_avg_sq"}
        for key in mine:
            assert mine[key].dtype == theirs[key].dtype, key
            assert mine[key].shape == theirs[key].shape, key
            assert mine[key].device == theirs[key].device, key
        assert mine["step"].item() == 2.0 and mine["step"].dim() == 0
    # a torch AdamW accepts our state dict and continues from step 2
    ref.load_state_dict(opt.state_dict())
    assert ref.state[ref_params[0]]["step"].item() == 2.0


def test_adamw_skips_parameters_without_gradient_and_rejects_float64() -> None:
    p, q = _params(2)
    opt = AdamW([p, q])
    p.grad = torch.ones_like(p)
    before = q.detach().clone()
    opt.step()
    assert torch.equal(q, before) and q not in opt.state
    bad = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    bad.grad = torch.ones(3, dtype=torch.float64)
    with pytest.raises(ReproError, match="float32"):
        AdamW([bad]).step()
    with pytest.raises(ReproError, match="betas"):
        AdamW([p], betas=(1.0, 0.9))


@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm_matches_torch(max_norm: float) -> None:
    ours, theirs = _params(3), _params(3)
    for p, q, g in zip(ours, theirs, _grads(1, ours), strict=True):
        p.grad = g.clone()
        q.grad = g.clone()
    norm = clip_grad_norm_(ours, max_norm)
    ref = torch.nn.utils.clip_grad_norm_(theirs, max_norm)
    assert norm.dtype == torch.float32 and norm.dim() == 0
    torch.testing.assert_close(norm, ref, rtol=1e-6, atol=0.0)
    for p, q in zip(ours, theirs, strict=True):
        assert p.grad is not None and q.grad is not None
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-6, atol=1e-7)
    if max_norm > 1e3:  # no clipping: the gradients are untouched, bit for bit
        assert all(torch.equal(p.grad, g) for p, g in zip(ours, _grads(1, ours), strict=True))  # type: ignore[arg-type]


def test_clip_grad_norm_edge_cases() -> None:
    p = torch.zeros(3, requires_grad=True)
    assert clip_grad_norm_([p], 1.0).item() == 0.0
    with pytest.raises(ReproError, match="max_norm"):
        clip_grad_norm_([p], 0.0)
