"""Tests of the reproducible reductions and layers (`sum_fixed`, `mean_fixed`, `softmax`,
`layer_norm`, `cross_entropy`, `embedding`).

Tolerances: these operators evaluate in float64 and round once to float32, so their results
sit within about one float32 rounding (relative 2**-24, plus a tiny absolute floor near zero)
of the float64 torch reference; `rtol=1e-6` leaves room for a few such roundings.

Run: `.venv/bin/python -m pytest -q tests/unit/veritrain/test_repro_nn.py`
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from veritrain.repro import (
    ReproError,
    cross_entropy,
    embedding,
    layer_norm,
    mean_fixed,
    softmax,
    sum_fixed,
)


def _data(*shape: int, seed: int = 0, scale: float = 1.0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g) * scale


def _pairwise_reference(values: list[float]) -> float:
    """The documented order, one Python float (IEEE double) addition at a time."""
    width = 1 << max(len(values) - 1, 0).bit_length()
    v = values + [0.0] * (width - len(values))
    while len(v) > 1:
        half = len(v) // 2
        v = [v[i] + v[i + half] for i in range(half)]
    return v[0]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 64, 100, 1000])
def test_sum_fixed_follows_the_documented_pairwise_order(n: int) -> None:
    x = _data(3, n, seed=n, scale=1e3) * torch.logspace(-8, 8, n)
    got = sum_fixed(x, 1)
    for row in range(3):
        expected = _pairwise_reference([float(v) for v in x[row].tolist()])
        assert got[row].item() == float(torch.tensor(expected, dtype=torch.float64).float())


def test_sum_fixed_and_mean_fixed_match_torch_on_every_dim() -> None:
    x = _data(4, 5, 6, seed=1)
    for dim in (0, 1, 2, -1):
        torch.testing.assert_close(sum_fixed(x, dim), x.double().sum(dim).float())
        torch.testing.assert_close(mean_fixed(x, dim, keepdim=True), x.mean(dim, keepdim=True))
    assert sum_fixed(torch.zeros(2, 0), 1).tolist() == [0.0, 0.0]
    with pytest.raises(ReproError, match="empty"):
        mean_fixed(torch.zeros(2, 0), 1)
    with pytest.raises(ReproError, match="out of range"):
        sum_fixed(x, 3)
    x.requires_grad_()
    mean_fixed(sum_fixed(x, 1), 0).backward(torch.ones(6))
    assert x.grad is not None
    torch.testing.assert_close(x.grad, torch.full_like(x, 0.25))


def test_softmax_matches_torch_and_masks_to_exact_zero() -> None:
    x = _data(2, 7, 9, seed=2, scale=5.0)
    for dim in (-1, 1):
        torch.testing.assert_close(softmax(x, dim), torch.softmax(x.double(), dim).float())
    mask = torch.triu(torch.ones(9, 9, dtype=torch.bool), diagonal=1)
    att = _data(9, 9, seed=3).masked_fill(mask, -math.inf)
    y = softmax(att, -1)
    assert bool((y[mask] == 0).all())
    torch.testing.assert_close(y, torch.softmax(att.double(), -1).float())
    assert softmax(torch.tensor([[1e30, -1e30, 0.0]]))[0].tolist() == [1.0, 0.0, 0.0]
    assert torch.isnan(softmax(torch.full((1, 3), -math.inf))).all()  # as torch


def test_softmax_gradient_matches_torch() -> None:
    x = _data(5, 11, seed=4, scale=3.0).requires_grad_()
    up = _data(5, 11, seed=5)
    softmax(x, -1).backward(up)
    x64 = x.detach().double().requires_grad_()
    torch.softmax(x64, -1).backward(up.double())
    assert x.grad is not None and x64.grad is not None
    torch.testing.assert_close(x.grad, x64.grad.float(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_and_its_gradients_match_torch(affine: bool) -> None:
    x = (_data(3, 4, 33, seed=6, scale=4.0) + 2.0).requires_grad_()
    w = (_data(33, seed=7) if affine else torch.ones(33)).requires_grad_()
    b = (_data(33, seed=8) if affine else torch.zeros(33)).requires_grad_()
    up = _data(3, 4, 33, seed=9)
    y = layer_norm(x, w if affine else None, b if affine else None, 1e-5)
    y.backward(up)
    x64, w64, b64 = (t.detach().double().requires_grad_() for t in (x, w, b))
    ref = F.layer_norm(x64, (33,), w64 if affine else None, b64 if affine else None, 1e-5)
    ref.backward(up.double())
    torch.testing.assert_close(y, ref.float(), rtol=1e-6, atol=1e-6)
    assert x.grad is not None and x64.grad is not None
    torch.testing.assert_close(x.grad, x64.grad.float(), rtol=1e-5, atol=1e-6)
    if affine:
        for mine, theirs in ((w.grad, w64.grad), (b.grad, b64.grad)):
            assert mine is not None and theirs is not None
            torch.testing.assert_close(mine, theirs.float(), rtol=1e-6, atol=1e-6)
    with pytest.raises(ReproError, match="weight"):
        layer_norm(x, torch.ones(4), None)


def test_cross_entropy_and_its_gradient_match_torch() -> None:
    logits = _data(37, 13, seed=10, scale=4.0).requires_grad_()
    target = torch.randint(0, 13, (37,), generator=torch.Generator().manual_seed(11))
    loss = cross_entropy(logits, target)
    assert loss.dim() == 0 and loss.dtype == torch.float32
    loss.backward()
    l64 = logits.detach().double().requires_grad_()
    ref = F.cross_entropy(l64, target)
    ref.backward()
    torch.testing.assert_close(loss, ref.float(), rtol=1e-6, atol=0.0)
    assert logits.grad is not None and l64.grad is not None
    torch.testing.assert_close(logits.grad, l64.grad.float(), rtol=1e-6, atol=1e-8)


def test_cross_entropy_ignore_index_and_bad_targets() -> None:
    logits = _data(6, 4, seed=12).requires_grad_()
    target = torch.tensor([0, -1, 3, -1, 2, 1])
    loss = cross_entropy(logits, target, ignore_index=-1)
    ref = F.cross_entropy(logits.detach().double(), target, ignore_index=-1)
    torch.testing.assert_close(loss, ref.float(), rtol=1e-6, atol=0.0)
    loss.backward()
    assert logits.grad is not None and bool((logits.grad[1] == 0).all())
    assert math.isnan(cross_entropy(logits, torch.full((6,), -100)).item())
    with pytest.raises(ReproError, match="outside"):
        cross_entropy(logits, torch.tensor([0, 1, 2, 3, 4, 0]))
    with pytest.raises(ReproError, match="int64"):
        cross_entropy(logits, target.to(torch.int32))
    with pytest.raises(ReproError, match="logits"):
        cross_entropy(logits[0], target[:1])


def test_embedding_forward_and_gradient_match_torch() -> None:
    table = _data(10, 6, seed=13).requires_grad_()
    ids = torch.randint(0, 10, (4, 25), generator=torch.Generator().manual_seed(14))
    up = _data(4, 25, 6, seed=15)
    out = embedding(ids, table)
    assert torch.equal(out, F.embedding(ids, table.detach()))
    out.backward(up)
    t64 = table.detach().double().requires_grad_()
    F.embedding(ids, t64).backward(up.double())
    assert table.grad is not None and t64.grad is not None
    torch.testing.assert_close(table.grad, t64.grad.float(), rtol=1e-6, atol=1e-7)
    empty = torch.zeros(0, dtype=torch.int64)
    t2 = table.detach().clone().requires_grad_()
    embedding(empty, t2).sum().backward()
    assert t2.grad is not None and torch.equal(t2.grad, torch.zeros(10, 6))
    with pytest.raises(ReproError, match="outside"):
        embedding(torch.tensor([10]), table)
    with pytest.raises(ReproError, match="int64"):
        embedding(ids.int(), table)


def test_embedding_gradient_is_bit_equal_for_any_token_order() -> None:
    vocab, n = 5, 4096  # few ids, many repeats: a float scatter-add would depend on order
    table = _data(vocab, 8, seed=16)
    ids = torch.randint(0, vocab, (n,), generator=torch.Generator().manual_seed(17))
    up = _data(n, 8, seed=18) * torch.logspace(-3, 3, n).unsqueeze(1)
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(19))
    grads = []
    for order in (torch.arange(n), perm):
        t = table.clone().requires_grad_()
        embedding(ids[order], t).backward(up[order])
        assert t.grad is not None
        grads.append(t.grad)
    assert torch.equal(grads[0], grads[1])
    # negative control: the float32 scatter-add in the two orders rounds differently
    native = [torch.zeros(vocab, 8).index_add_(0, ids[o], up[o]) for o in (torch.arange(n), perm)]
    assert not torch.equal(native[0], native[1])
