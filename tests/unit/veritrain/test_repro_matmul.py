"""Tests of the order-independent matrix product (`veritrain.repro.matmul`, `linear`).

Run: `.venv/bin/python -m pytest -q tests/unit/veritrain/test_repro_matmul.py`
"""

from __future__ import annotations

import pytest
import torch

from veritrain.repro import ReproError, linear, matmul
from veritrain.repro._common import pow2
from veritrain.repro.gemm import mantissa_bits, matmul64, quantize


def _data(*shape: int, seed: int = 0, scale: float = 1.0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g) * scale


@pytest.mark.parametrize("k", [1, 2, 3, 64, 1000, 1024, 1025, 4096, 16384, 2**20])
def test_mantissa_bits_is_the_largest_p_with_exact_sums(k: int) -> None:
    p = mantissa_bits(k)
    assert k * 2 ** (2 * p) <= 2**53
    # one more bit could overflow the exact range for a contraction padded to a power of two
    assert (1 << (k - 1).bit_length()) * 2 ** (2 * (p + 1)) > 2**53


def test_quantize_rounds_to_the_block_grid_half_to_even() -> None:
    x = _data(8, 300, seed=12) * torch.logspace(-30, 30, 8).unsqueeze(1)
    x[3] = 0.0
    x[5] = 0.0
    x[5, :4] = torch.tensor([2.5, -2.5, 1.5, 3.5]) * 2.0**-20  # ties of the grid at p = 21
    x[5, 4] = 1.0  # the row maximum: |x| < 2**1, so the grid step is 2**(1 - 21)
    p = 21
    xq, e = quantize(x, p)
    assert xq.dtype == torch.float64 and e.shape == (8, 1)
    scaled = x.double() * pow2(p - e)  # exact powers of two
    assert torch.equal(xq * pow2(p - e), torch.round(scaled))  # round half to even
    assert bool((x.double().abs() < pow2(e)).all())
    assert bool((xq * pow2(p - e)).abs().max() <= 2**p)
    assert xq[5, :4].tolist() == [2.0 * 2.0**-20, -2.0 * 2.0**-20, 2.0 * 2.0**-20, 4.0 * 2.0**-20]
    assert bool((xq[3] == 0).all())
    # a transposed view gives the same values, written row-major
    xq2, e2 = quantize(x.t().contiguous().t(), p)
    assert xq2.is_contiguous() and torch.equal(xq2, xq) and torch.equal(e2, e)


def test_quantized_operands_accumulate_exactly_like_int64() -> None:
    a, b = _data(32, 1024, seed=1), _data(1024, 24, seed=2, scale=0.01)
    p = mantissa_bits(1024)
    aq, ea = quantize(a, p)
    bq, eb = quantize(b.t(), p)  # per column of b
    bq, eb = bq.t(), eb.t()
    qa, qb = aq * pow2(p - ea), bq * pow2(p - eb)  # the integer mantissas (exact)
    assert qa.abs().max() <= 2**p and qb.abs().max() <= 2**p
    exact = qa.to(torch.int64) @ qb.to(torch.int64)  # integer arithmetic, no rounding
    assert exact.abs().max() < 2**53
    out = matmul64(a, b)
    assert torch.equal(out, exact.double() * pow2(ea - p) * pow2(eb - p))


def test_matmul_is_bit_equal_for_a_permutation_of_k() -> None:
    a, b = _data(48, 4096, seed=3), _data(4096, 40, seed=4)
    perm = torch.randperm(4096, generator=torch.Generator().manual_seed(5))
    assert torch.equal(matmul(a, b), matmul(a[:, perm], b[perm, :]))
    # negative control: the native float32 product does depend on the order
    assert not torch.equal(a @ b, a[:, perm] @ b[perm, :])


def test_matmul_is_bit_equal_for_chunked_summation() -> None:
    a, b = _data(16, 4096, seed=6), _data(4096, 16, seed=7)
    p = mantissa_bits(4096)
    aq, _ = quantize(a, p)
    bq = quantize(b.t(), p)[0].t()
    full = aq @ bq
    chunks = [aq[:, i : i + 1024] @ bq[i : i + 1024, :] for i in range(0, 4096, 1024)]
    reordered = ((chunks[3] + chunks[1]) + chunks[0]) + chunks[2]
    assert torch.equal(full, reordered)
    # the public product is exactly this sum, rounded once
    assert torch.equal(matmul64(a, b), full)
    assert torch.equal(matmul(a, b), full.to(torch.float32))
    # negative control: float32 chunks of a length-4096 dot product round differently
    native = [a[:, i : i + 1024] @ b[i : i + 1024, :] for i in range(0, 4096, 1024)]
    assert not torch.equal(a @ b, ((native[3] + native[1]) + native[0]) + native[2])


def test_matmul_matches_float64_reference_to_float32_rounding() -> None:
    a, b = _data(64, 1024, seed=8), _data(1024, 256, seed=9, scale=0.02)
    ref = a.double() @ b.double()
    out = matmul(a, b).double()
    # each entry is off by at most half a grid step, 2**(e - p - 1) <= rowmax * 2**-p; the
    # product by the sum of those errors times the other factor, plus one float32 rounding
    p = mantissa_bits(1024)
    ra = a.double().abs().amax(dim=1, keepdim=True) * 2.0**-p
    cb = b.double().abs().amax(dim=0, keepdim=True) * 2.0**-p
    ad, bd = a.double().abs(), b.double().abs()
    bound = ad @ bd.new_ones(bd.shape) * cb + ra * (ad.new_ones(ad.shape) @ bd) + 1024 * ra * cb
    bound = bound + ref.abs() * 2.0**-24
    assert bool(((out - ref).abs() <= bound).all())
    # and with random signs the errors average out: about a float32 rounding in norm
    assert ((out - ref).norm() / ref.norm()).item() < 2e-6


def test_matmul_handles_zero_rows_and_wide_dynamic_range() -> None:
    a = _data(4, 8, seed=10)
    a[1] = 0.0
    a[2] *= 1e-30
    b = _data(8, 3, seed=11) * 1e20
    out = matmul(a, b)
    assert torch.equal(out[1], torch.zeros(3))
    ref = (a.double() @ b.double()).float()
    assert torch.allclose(out, ref, rtol=1e-6, atol=0.0)


def test_matmul_batched_and_shared_matrix_agree_with_unbatched() -> None:
    a, b = _data(3, 5, 7, seed=12), _data(3, 7, 4, seed=13)
    out = matmul(a, b)
    assert out.shape == (3, 5, 4)
    for i in range(3):
        assert torch.equal(out[i], matmul(a[i], b[i]))
    w = _data(7, 4, seed=14)
    assert torch.equal(matmul(a, w), matmul(a.reshape(15, 7), w).reshape(3, 5, 4))


def test_matmul_gradients_match_torch_autograd() -> None:
    a = _data(2, 6, 33, seed=15).requires_grad_()
    b = _data(2, 33, 5, seed=16).requires_grad_()
    g = _data(2, 6, 5, seed=17)
    matmul(a, b).backward(g)
    a64, b64 = a.detach().double().requires_grad_(), b.detach().double().requires_grad_()
    (a64 @ b64).backward(g.double())
    assert a.grad is not None and b.grad is not None
    torch.testing.assert_close(a.grad, a64.grad.float(), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(b.grad, b64.grad.float(), rtol=1e-6, atol=1e-6)


def test_linear_matches_torch_with_bias_gradient() -> None:
    x = _data(4, 3, 20, seed=18).requires_grad_()
    w = _data(9, 20, seed=19, scale=0.3).requires_grad_()
    bias = _data(9, seed=20).requires_grad_()
    g = _data(4, 3, 9, seed=21)
    out = linear(x, w, bias)
    assert out.shape == (4, 3, 9) and out.dtype == torch.float32
    out.backward(g)
    x64, w64, b64 = (t.detach().double().requires_grad_() for t in (x, w, bias))
    ref = torch.nn.functional.linear(x64, w64, b64)
    ref.backward(g.double())
    torch.testing.assert_close(out, ref.float(), rtol=1e-6, atol=1e-6)
    for mine, theirs in ((x.grad, x64.grad), (w.grad, w64.grad), (bias.grad, b64.grad)):
        assert mine is not None and theirs is not None
        torch.testing.assert_close(mine, theirs.float(), rtol=1e-6, atol=1e-6)
    assert linear(x, w).shape == (4, 3, 9)


def test_matmul_and_linear_reject_bad_input() -> None:
    a = _data(3, 4)
    with pytest.raises(ReproError, match="float32"):
        matmul(a.double(), a.t().double())
    with pytest.raises(ReproError, match="inner dims"):
        matmul(a, a)
    with pytest.raises(ReproError, match="batch dims"):
        matmul(_data(2, 3, 4), _data(3, 4, 2))
    with pytest.raises(ReproError, match=">= 2-d"):
        matmul(a[0], a.t())
    with pytest.raises(ReproError, match="does not fit"):
        linear(a, _data(5, 3))
    with pytest.raises(ReproError, match="bias"):
        linear(a, _data(5, 4), _data(4))


def test_matmul_with_empty_contraction_gives_zeros_like_torch() -> None:
    a = torch.zeros(3, 0, requires_grad=True)
    b = torch.zeros(0, 4, requires_grad=True)
    out = matmul(a, b)
    assert torch.equal(out, torch.zeros(3, 4))
    out.sum().backward()
    assert a.grad is not None and a.grad.shape == (3, 0)
    x = torch.zeros(0, 5, requires_grad=True)
    w = torch.ones(2, 5, requires_grad=True)
    linear(x, w, torch.zeros(2, requires_grad=True)).sum().backward()
    assert w.grad is not None and torch.equal(w.grad, torch.zeros(2, 5))
