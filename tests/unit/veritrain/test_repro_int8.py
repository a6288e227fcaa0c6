"""The int8 path of the exact matrix product (`veritrain.repro.gemm_int8`, Ozaki slices) gives
the float64 path's bits: slices reconstruct every mantissa, the integer product is exact
through padding and int32 blocks, `matmul`/`linear` forward and backward and a whole training
run give the same bytes on either path, and a zero product is +0 on both.

Run: `.venv/bin/python -m pytest -q tests/unit/veritrain/test_repro_int8.py`
"""

from __future__ import annotations

import pytest
import torch

from veritrain.presets import preset
from veritrain.repro import ReproError, linear, matmul
from veritrain.repro.gemm import GEMM_ENV, _matmul64_by, gemm_backend, mantissa_bits
from veritrain.repro.gemm_int8 import K_BLOCK, int_product, int_slices, slice_count
from veritrain.spec import LlamaConfig, ModelConfig
from veritrain.training import TrainingEngine


def _bits(x: torch.Tensor) -> torch.Tensor:
    return x.contiguous().view(torch.int64 if x.dtype == torch.float64 else torch.int32)


@pytest.mark.parametrize("p", list(range(0, 31)))
def test_slices_rebuild_every_mantissa_up_to_two_to_the_p(p: int) -> None:
    top = 1 << p
    g = torch.Generator().manual_seed(p)
    edge = torch.tensor([top, -top, top - 1, -top + 1, 0, 1, -1, 127, -128, 128, -129])
    q = torch.cat([edge.clamp(-top, top), torch.randint(-top, top + 1, (2000,), generator=g)])
    s = slice_count(p)
    digits = int_slices(q, s)
    assert len(digits) == s and all(d.dtype == torch.int8 for d in digits)
    rebuilt = torch.zeros_like(q)
    for d in reversed(digits):
        rebuilt = rebuilt * 256 + d.to(torch.int64)
    assert torch.equal(rebuilt, q)
    # and the count is the least that works: one slice fewer cannot hold +-2**p
    if s > 1:
        fewer = torch.zeros_like(edge[:2])
        for d in reversed(int_slices(edge[:2], s - 1)):
            fewer = fewer * 256 + d.to(torch.int64)
        assert not torch.equal(fewer, edge[:2])


@pytest.mark.parametrize(
    ("m", "k", "n"),
    [(1, 1, 1), (3, 7, 5), (16, 64, 9), (17, 8, 8), (40, 1000, 24), (5, K_BLOCK + 3, 2)],
)
def test_int_product_is_the_exact_integer_product(m: int, k: int, n: int) -> None:
    p = mantissa_bits(k)
    g = torch.Generator().manual_seed(m * k + n)
    a = torch.randint(-(1 << p), (1 << p) + 1, (m, k), generator=g)
    b = torch.randint(-(1 << p), (1 << p) + 1, (n, k), generator=g)
    a[0, : min(k, 3)] = 1 << p  # the largest top slice
    assert torch.equal(int_product(a, b, p), a @ b.t())
    full = torch.full((m, k), 1 << p)  # the largest sums: k * 2**(2p) <= 2**53
    assert torch.equal(
        int_product(full, -torch.full((n, k), 1 << p), p), -(full @ full[:1].t()).expand(m, n)
    )


def _operands(m: int, k: int, n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(m, k, generator=g) * torch.logspace(-35, 35, m).unsqueeze(1)
    b = torch.randn(k, n, generator=g) * torch.logspace(30, -30, n)
    a[0] = 0.0  # a zero row: +0 on both paths
    if m > 2:
        a[1] = torch.tensor(1e-45).expand(k)  # subnormal float32
    b[:, 0] = -b[:, 0].abs()
    return a, b


@pytest.mark.parametrize(("m", "k", "n"), [(4, 1, 4), (3, 7, 5), (33, 130, 17), (64, 512, 48)])
def test_both_paths_give_the_same_float64_bits(m: int, k: int, n: int) -> None:
    a, b = _operands(m, k, n, seed=m + k + n)
    f64, i8 = _matmul64_by(a, b, "float64"), _matmul64_by(a, b, "int8")
    assert torch.equal(_bits(f64), _bits(i8))
    assert not bool(torch.signbit(f64[0]).any())  # 0 * negative is +0 (k = 1 included)


def test_a_length_one_product_of_zero_is_plus_zero() -> None:
    # torch's CPU GEMM gives -0 here; the exact product's zero is +0 on every path
    out = matmul(torch.zeros(4, 1), -torch.ones(1, 4))
    assert not bool(torch.signbit(out).any())


def test_linear_forward_and_backward_agree_bit_for_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    def run() -> list[torch.Tensor]:
        g = torch.Generator().manual_seed(3)
        x = torch.randn(6, 20, 24, generator=g, requires_grad=True)
        w = torch.randn(40, 24, generator=g, requires_grad=True)
        bias = torch.randn(40, generator=g, requires_grad=True)
        y = linear(x, w, bias)
        z = matmul(y, torch.randn(40, 8, generator=g))
        (z * torch.randn(z.shape, generator=g)).sum().backward()
        assert x.grad is not None and w.grad is not None and bias.grad is not None
        return [y, z, x.grad, w.grad, bias.grad]

    monkeypatch.setenv(GEMM_ENV, "float64")
    ref = run()
    monkeypatch.setenv(GEMM_ENV, "int8")
    assert gemm_backend(torch.device("cpu")) == "int8"
    for got, exp in zip(run(), ref, strict=True):
        assert torch.equal(_bits(got), _bits(exp))


def test_the_backend_is_float64_on_a_cpu_and_a_bad_setting_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(GEMM_ENV, raising=False)
    assert gemm_backend(torch.device("cpu")) == "float64"
    monkeypatch.setenv(GEMM_ENV, "fp8")
    with pytest.raises(ReproError, match="VERITRAIN_REPRO_GEMM must be"):
        matmul(torch.ones(2, 2), torch.ones(2, 2))


@pytest.mark.parametrize("family", ["mlp", "llama"])
def test_training_gives_the_same_state_hash_on_either_path(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if family == "mlp":
        small = ModelConfig(in_features=64, hidden=(32,), out_features=10)
        spec = preset(
            "digits-mlp", "repro2", model=small, batch_size=16, total_steps=3, checkpoint_interval=3
        )
    else:
        cfg = LlamaConfig(
            n_layer=1, n_head=2, n_kv_head=1, n_embd=32, block_size=16, ffn_hidden=48,
            tie_embeddings=True,
        )  # fmt: skip
        spec = preset(
            "llama-char", "repro2", model=cfg, batch_size=4, total_steps=3, checkpoint_interval=3
        )
    hashes = []
    for backend in ("float64", "int8"):
        monkeypatch.setenv(GEMM_ENV, backend)
        engine = TrainingEngine(spec)
        state = engine.init_state()
        for _ in range(3):
            engine.train_step(state)
        hashes.append(engine.state_hash(state))
    assert hashes[0] == hashes[1]
