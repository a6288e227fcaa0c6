"""The fused CPU kernels (`veritrain.repro.fused`) give the eager chains' bits, and are built so.

Each test runs the same operands through the eager path (`VERITRAIN_REPRO_KERNELS=eager`) and
the fused one and compares bit patterns. The golden state hashes (test_golden.py), computed
before the kernels existed, check the same on whole training runs.

Run: `.venv/bin/python -m pytest -q tests/unit/veritrain/test_repro_fused.py`
"""

from __future__ import annotations

import math
import platform
import re

import numpy as np
import pytest
import torch

from veritrain.repro import AdamW, ReproError, sqrt
from veritrain.repro.elementwise import exp64
from veritrain.repro.fused import KERNELS_ENV, fused_available, use_fused

pytestmark = pytest.mark.skipif(not fused_available(), reason="Numba does not import here")


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.view(torch.int64 if t.dtype == torch.float64 else torch.int32)


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bit-identical, NaN payloads aside (only where a NaN is); integers equal."""
    if not a.dtype.is_floating_point:
        return a.dtype == b.dtype and torch.equal(a, b)
    nan_a, nan_b = torch.isnan(a), torch.isnan(b)
    return torch.equal(nan_a, nan_b) and torch.equal(_bits(a)[~nan_a], _bits(b)[~nan_b])


def _exp_operands() -> torch.Tensor:
    g = torch.Generator().manual_seed(5)
    # every binade from 2**-1074 to 2**10, both signs, random significands
    exps = torch.arange(-1074, 11, dtype=torch.float64).repeat_interleave(40)
    mags = torch.ldexp(1.0 + torch.rand(exps.shape, generator=g, dtype=torch.float64), exps)
    signs = torch.where(torch.rand(exps.shape, generator=g) < 0.5, -1.0, 1.0).double()
    specials = [
        0.0, -0.0, math.inf, -math.inf, math.nan, -700.0, 700.0, -700.0000000001, 700.5,
        -745.2, 709.7, 5e-324, -5e-324, math.log(2) / 64, -math.log(2) / 64, 1e-300,
    ]  # fmt: skip
    softmax_like = -torch.rand(4096, generator=g, dtype=torch.float64) * 40.0
    return torch.cat([mags * signs, torch.tensor(specials, dtype=torch.float64), softmax_like])


def test_exp64_fused_gives_the_eager_bits_on_every_binade(monkeypatch: pytest.MonkeyPatch) -> None:
    x = _exp_operands()
    assert use_fused(x)
    fused = exp64(x)
    monkeypatch.setenv(KERNELS_ENV, "eager")
    assert not use_fused(x)
    eager = exp64(x)
    assert _same(fused, eager)
    assert _same(x, _exp_operands())


def _grads(step: int, shapes: list[tuple[int, ...]]) -> list[torch.Tensor]:
    """Gradients over 40 binades, with zeros, subnormal squares and a few huge entries."""
    g = torch.Generator().manual_seed(100 + step)
    out = []
    for shape in shapes:
        base = torch.randn(shape, generator=g)
        scale = torch.pow(10.0, torch.randint(-25, 4, shape, generator=g).float())
        grad = base * scale
        grad.view(-1)[::7] = 0.0
        out.append(grad)
    return out


@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
def test_adamw_fused_gives_the_eager_bits_over_steps(
    monkeypatch: pytest.MonkeyPatch, weight_decay: float
) -> None:
    shapes = [(33, 65), (1100,), (3,)]  # blocks of 512: a tail, several blocks, one short one
    g = torch.Generator().manual_seed(1)
    start = [torch.randn(s, generator=g) for s in shapes]
    fused_p = [p.clone().requires_grad_() for p in start]
    eager_p = [p.clone().requires_grad_() for p in start]
    hp = {"lr": 3e-3, "betas": (0.9, 0.95), "eps": 1e-8, "weight_decay": weight_decay}
    fused_opt = AdamW(fused_p, **hp)  # type: ignore[arg-type]
    eager_opt = AdamW(eager_p, **hp)  # type: ignore[arg-type]
    for step in range(12):
        grads = _grads(step, shapes)
        for p, q, grad in zip(fused_p, eager_p, grads, strict=True):
            p.grad, q.grad = grad.clone(), grad.clone()
        monkeypatch.setenv(KERNELS_ENV, "fused")
        fused_opt.step()
        monkeypatch.setenv(KERNELS_ENV, "eager")
        eager_opt.step()
    for p, q in zip(fused_p, eager_p, strict=True):
        assert torch.equal(_bits(p.detach()), _bits(q.detach()))
        for key in ("exp_avg", "exp_avg_sq", "step"):
            assert torch.equal(fused_opt.state[p][key], eager_opt.state[q][key]), key
    assert not torch.equal(fused_p[0].detach(), start[0])


def test_the_root_fix_moves_a_wrong_candidate_to_the_correctly_rounded_root() -> None:
    from veritrain.repro import _fused_numba as kernels

    g = torch.Generator().manual_seed(3)
    v = torch.rand(2000, generator=g) * torch.pow(2.0, torch.randint(-140, 120, (2000,)).float())
    want = sqrt(v)
    for off in (-3, -1, 1, 2):
        cand = (want.view(torch.int32) + off).view(torch.float32)  # off ulps from the root
        got = [kernels._fix_root32(float(x), np.float32(c)) for x, c in zip(v, cand, strict=True)]
        assert torch.equal(_bits(torch.tensor(np.array(got, dtype=np.float32))), _bits(want)), off
    assert kernels._fix_root32(0.0, np.float32(1.0)) == 0.0
    assert math.isinf(kernels._fix_root32(math.inf, np.float32(1.0)))
    assert math.isnan(kernels._fix_root32(-1.0, np.float32(1.0)))


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="reads x86 code")
def test_no_kernel_contains_a_fused_multiply_add() -> None:
    import numba

    from veritrain.repro import _fused_numba as kernels

    exp64(torch.zeros(4, dtype=torch.float64))  # compile (or load) both kernels
    p = torch.zeros(4, requires_grad=True)
    p.grad = torch.ones(4)
    AdamW([p]).step()
    kernels._fix_root32(2.0, np.float32(1.5))
    fma = re.compile(r"\bv?f(n)?m(add|sub)\d", re.IGNORECASE)
    for kernel in (kernels.exp64_kernel, kernels.adamw_kernel, kernels._fix_root32):
        # a fresh compilation with the kernels' own options (a kernel loaded from the disk
        # cache carries no listing), for each signature the kernel was compiled for
        fresh = numba.njit(**kernels.JIT_OPTIONS)(kernel.py_func)
        assert kernel.signatures, kernel
        for sig in kernel.signatures:
            fresh.compile(sig)
        asm = "".join(fresh.inspect_asm().values())
        assert re.search(r"\bv?mul[sp][sd]\b", asm), kernel  # the listing has the arithmetic
        assert not fma.search(asm), (kernel, fma.search(asm))


def test_use_fused_refuses_an_unknown_mode_and_takes_only_dense_cpu_tensors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    x = torch.zeros(4, 6)
    assert use_fused(x)
    assert not use_fused(x.t())  # not contiguous: the eager path
    monkeypatch.setenv(KERNELS_ENV, "eager")
    assert not use_fused(x)
    monkeypatch.setenv(KERNELS_ENV, "numba")
    with pytest.raises(ReproError, match="auto, eager or fused"):
        use_fused(x)


def _wide32(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """float32 values over ~250 binades per row scale, with zeros, a subnormal run and specials
    where the tensor is big enough."""
    g = torch.Generator().manual_seed(seed)
    scale = torch.pow(2.0, torch.randint(-140, 100, (*shape[:-1], 1), generator=g).float())
    x = torch.randn(shape, generator=g) * scale
    flat = x.view(-1)
    flat[::37] = 0.0
    if flat.numel() > 400:
        flat[5], flat[100], flat[200], flat[301] = math.nan, math.inf, -math.inf, -0.0
        flat[310:330] = 1e-44
    return x


def _both(fn: object, monkeypatch: pytest.MonkeyPatch) -> tuple[list[torch.Tensor], ...]:
    """`fn()` (a list of tensors) with the fused kernels, then with the eager chains."""
    out = []
    for mode in ("fused", "eager"):
        monkeypatch.setenv(KERNELS_ENV, mode)
        out.append([t.detach().clone() for t in fn()])  # type: ignore[operator]
    return out[0], out[1]


def _assert_same(fused: list[torch.Tensor], eager: list[torch.Tensor]) -> None:
    assert len(fused) == len(eager)
    for i, (a, b) in enumerate(zip(fused, eager, strict=True)):
        assert a.shape == b.shape and a.dtype == b.dtype, i
        assert _same(a, b), i


@pytest.mark.parametrize(
    "shape,transposed",
    [((384, 1024), False), ((384, 1024), True), ((2, 3, 40, 33), False),
     ((2, 3, 40, 33), True), ((5, 1), True), ((1, 7), False)],
)  # fmt: skip
@pytest.mark.parametrize("row_major", [True, False])
def test_quantize_fused_gives_the_eager_values_and_layout(
    monkeypatch: pytest.MonkeyPatch, shape: tuple[int, ...], transposed: bool, row_major: bool
) -> None:
    from veritrain.repro.gemm import quantize

    if transposed:
        x = _wide32((*shape[:-2], shape[-1], shape[-2]), 7).transpose(-1, -2)
    else:
        x = _wide32(shape, 7)
    for p in (7, 19, 21, 26):
        fused, eager = _both(lambda p=p: list(quantize(x, p, row_major)), monkeypatch)
        _assert_same(fused, eager)
        monkeypatch.setenv(KERNELS_ENV, "fused")
        xq, _ = quantize(x, p, row_major)
        monkeypatch.setenv(KERNELS_ENV, "eager")
        want, _ = quantize(x, p, row_major)
        if row_major:
            assert xq.is_contiguous()
        elif min(shape[-2:]) > 1:
            assert xq.stride() == want.stride()  # x's layout kept, as the eager path keeps it


def test_products_and_their_gradients_are_the_same_fused_or_eager(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from veritrain.repro import linear, matmul

    g = torch.Generator().manual_seed(11)

    def run() -> list[torch.Tensor]:
        a = torch.randn(9, 1, generator=g).requires_grad_()  # k = 1: a 2-d GEMM gives -0
        b = (-torch.rand(1, 6, generator=g) - 0.5).requires_grad_()
        a.data[0, 0] = 0.0
        x = torch.randn(17, 33, generator=g).requires_grad_()
        w = torch.randn(12, 33, generator=g).requires_grad_()
        y = matmul(a, b)
        z = linear(x, w)
        (y.sum() + (z * z).sum()).backward()
        return [y, z, a.grad, b.grad, x.grad, w.grad]  # type: ignore[list-item]

    g.manual_seed(11)
    fused = run()
    monkeypatch.setenv(KERNELS_ENV, "eager")
    g.manual_seed(11)
    eager = run()
    _assert_same(fused, eager)
    zero = fused[0].detach().view(-1)[0].item()  # 0 * negative, k = 1: -0 unless made +0
    assert zero == 0.0 and math.copysign(1.0, zero) > 0


@pytest.mark.parametrize("n", [1, 7, 256, 384])
def test_softmax_fused_gives_the_eager_bits_forward_and_backward(
    monkeypatch: pytest.MonkeyPatch, n: int
) -> None:
    from veritrain.repro import softmax

    g = torch.Generator().manual_seed(n)
    rows = 64
    x = torch.randn(rows, n, generator=g) * 30.0
    causal = torch.arange(n) <= torch.arange(rows).unsqueeze(1) * n // rows
    x = torch.where(causal, x, float("-inf"))
    x[rows - 1] = float("-inf")  # a row with no entry left: NaN, as torch.softmax
    if n > 3:
        x[4, 2] = math.nan
        x[3, 1] = 1e-42
    grad = torch.randn(rows, n, generator=g)

    def run() -> list[torch.Tensor]:
        leaf = x.clone().requires_grad_()
        y = softmax(leaf, -1)
        y.backward(grad)
        return [y, leaf.grad]  # type: ignore[list-item]

    _assert_same(*_both(run, monkeypatch))


@pytest.mark.parametrize("shape", [(3, 5, 384), (7, 5), (1, 1)])
def test_rms_norm_fused_gives_the_eager_bits_forward_and_backward(
    monkeypatch: pytest.MonkeyPatch, shape: tuple[int, ...]
) -> None:
    from veritrain.repro import rms_norm

    x = _wide32(shape, 3)
    x[..., 0] = torch.where(torch.isfinite(x[..., 0]), x[..., 0], 1.0)
    g = torch.Generator().manual_seed(4)
    w = torch.randn(shape[-1], generator=g)
    grad = torch.randn(shape, generator=g)

    def run() -> list[torch.Tensor]:
        leaf, wl = x.clone().requires_grad_(), w.clone().requires_grad_()
        y = rms_norm(leaf, wl, 1e-5)
        y.backward(grad)
        return [y, leaf.grad, wl.grad]  # type: ignore[list-item]

    _assert_same(*_both(run, monkeypatch))


@pytest.mark.parametrize("name", ["silu", "gelu"])
def test_activations_fused_give_the_eager_bits_forward_and_backward(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    from veritrain import repro

    fn = getattr(repro, name)

    x = torch.cat(
        [
            _wide32((64, 40), 9).reshape(-1),
            torch.tensor([math.inf, -math.inf, math.nan, 0.0, -0.0, 1e-45, -1e-45, 2e-30, -3e-31]),
        ]
    )
    grad = torch.randn(x.shape, generator=torch.Generator().manual_seed(2))

    def run() -> list[torch.Tensor]:
        leaf = x.clone().requires_grad_()
        y = fn(leaf)
        y.backward(grad)
        return [y, leaf.grad]  # type: ignore[list-item]

    _assert_same(*_both(run, monkeypatch))


@pytest.mark.parametrize("transposed", [False, True])
def test_rope_fused_gives_the_eager_bits_forward_and_backward(
    monkeypatch: pytest.MonkeyPatch, transposed: bool
) -> None:
    from veritrain.repro import rope, rope_tables

    cos, sin = rope_tables(16, 8)
    g = torch.Generator().manual_seed(6)
    base = torch.randn(2, 16, 3, 8, generator=g) * 100.0
    base.view(-1)[::11] = 0.0
    x = base.transpose(1, 2) if transposed else base.reshape(2, 3, 16, 8)
    grad = torch.randn(2, 3, 16, 8, generator=g)

    def run() -> list[torch.Tensor]:
        leaf = x.detach().clone(memory_format=torch.preserve_format).requires_grad_()
        y = rope(leaf, cos, sin)
        y.backward(grad)
        return [y, leaf.grad]  # type: ignore[list-item]

    _assert_same(*_both(run, monkeypatch))


_WITHOUT_NUMBA = """
import sys
sys.modules["numba"] = None  # `import numba` now raises ImportError, as on a machine without it
import os
from veritrain.presets import preset
from veritrain.repro import ReproError
from veritrain.repro.fused import KERNELS_ENV, fused_available, use_fused
from veritrain.training import TrainingEngine
assert not fused_available() and not use_fused()
engine = TrainingEngine(preset("digits-mlp", "repro2", total_steps=3, checkpoint_interval=3))
state = engine.init_state()
for _ in range(3):
    engine.train_step(state)
os.environ[KERNELS_ENV] = "fused"
try:
    use_fused()
except ReproError as exc:
    print("refused:", exc)
print(engine.state_hash(state).hex())
"""


def test_without_numba_the_eager_chains_give_the_same_bytes() -> None:
    import subprocess
    import sys

    from veritrain.presets import preset
    from veritrain.training import TrainingEngine

    engine = TrainingEngine(preset("digits-mlp", "repro2", total_steps=3, checkpoint_interval=3))
    state = engine.init_state()
    for _ in range(3):
        engine.train_step(state)
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_NUMBA], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    refused, digest = done.stdout.strip().splitlines()
    assert refused.startswith("refused: VERITRAIN_REPRO_KERNELS=fused but Numba does not import")
    assert digest == engine.state_hash(state).hex()


@pytest.mark.parametrize("shape", [(3, 5, 384), (7, 5), (1, 1)])
def test_layer_norm_fused_gives_the_eager_bits_forward_and_backward(
    monkeypatch: pytest.MonkeyPatch, shape: tuple[int, ...]
) -> None:
    from veritrain.repro import layer_norm

    x = _wide32(shape, 13)
    x[..., 0] = torch.where(torch.isfinite(x[..., 0]), x[..., 0], 1.0)
    g = torch.Generator().manual_seed(14)
    w, b = torch.randn(shape[-1], generator=g), torch.randn(shape[-1], generator=g)
    grad = torch.randn(shape, generator=g)

    def run() -> list[torch.Tensor]:
        leaf, wl, bl = (t.clone().requires_grad_() for t in (x, w, b))
        y = layer_norm(leaf, wl, bl, 1e-5)
        y.backward(grad)
        return [y, leaf.grad, wl.grad, bl.grad]  # type: ignore[list-item]

    _assert_same(*_both(run, monkeypatch))


def _eq64(got: np.ndarray, want: torch.Tensor) -> bool:
    return _same(torch.from_numpy(np.ascontiguousarray(got)), want.detach().contiguous())


def test_the_kernels_float64_values_before_rounding_are_the_eager_ones() -> None:
    """Given float64 output arrays the kernels show their values before the final rounding to
    float32, where a reordered or widened operation shows up on nearly every entry (after the
    rounding, on about one in 2**29)."""
    from veritrain.repro import _fused_numba as k
    from veritrain.repro import rope_tables
    from veritrain.repro.elementwise import gelu64, gelu_grad64, silu64, silu_grad64
    from veritrain.repro.nn import (
        _ln_backward64,
        _ln_stats,
        _rms_backward64,
        _rms_stats,
        _softmax64,
        _softmax_backward64,
    )
    from veritrain.repro.rotary import _pairs, _rotate64

    tables = (k.EXP_TABLE, k.POW2_TABLE)
    g = torch.Generator().manual_seed(21)
    rows, d = 37, 45
    x = torch.randn(rows, d, generator=g) * 4.0
    x[3, 5:] = float("-inf")
    grad = torch.randn(rows, d, generator=g)
    w, b = torch.randn(d, generator=g), torch.randn(d, generator=g)
    f64 = np.float64

    out = np.empty((rows, d), f64)
    k.softmax_forward_kernel(x.numpy(), out, *tables)
    assert _eq64(out, _softmax64(x, -1))
    y = _softmax64(x, -1).float()
    k.softmax_backward_kernel(y.numpy(), grad.numpy(), out)
    assert _eq64(out, _softmax_backward64(y, grad, -1))

    xs = torch.randn(rows, d, generator=g) * 3.0
    xhat, rstd = np.empty((rows, d), f64), np.empty(rows, f64)
    k.rmsnorm_forward_kernel(xs.numpy(), w.numpy(), 1e-5, 1.0 / d, out, xhat, rstd)
    want_xhat, want_rstd = _rms_stats(xs.double(), 1e-5)
    assert _eq64(xhat, want_xhat) and _eq64(rstd, want_rstd.reshape(-1))
    assert _eq64(out, want_xhat * w.double())
    gx, gw = np.empty((rows, d), f64), np.empty(d, f64)
    k.rmsnorm_backward_kernel(grad.numpy(), w.numpy(), xhat, rstd, 1.0 / d, gx, gw)
    want_gx, want_gw = _rms_backward64(grad, w, want_xhat, want_rstd, (True, True))
    assert want_gx is not None and want_gw is not None
    assert _eq64(gx, want_gx) and _eq64(gw, want_gw)

    k.layernorm_forward_kernel(xs.numpy(), w.numpy(), b.numpy(), 1e-5, 1.0 / d, out, xhat, rstd)
    want_xhat, want_rstd = _ln_stats(xs.double(), 1e-5)
    assert _eq64(xhat, want_xhat) and _eq64(rstd, want_rstd.reshape(-1))
    assert _eq64(out, want_xhat * w.double() + b)
    gb = np.empty(d, f64)
    k.layernorm_backward_kernel(grad.numpy(), w.numpy(), xhat, rstd, 1.0 / d, gx, gw, gb)
    lgx, lgw, lgb = _ln_backward64(grad, w, want_xhat, want_rstd, True, (True, True, True))
    assert lgx is not None and lgw is not None and lgb is not None
    assert _eq64(gx, lgx) and _eq64(gw, lgw) and _eq64(gb, lgb)

    flat, gflat = (xs * 3.0).reshape(-1), grad.reshape(-1)
    for fwd, bwd, eager, eager_grad in (
        (k.silu_forward_kernel, k.silu_backward_kernel, silu64, silu_grad64),
        (k.gelu_forward_kernel, k.gelu_backward_kernel, gelu64, gelu_grad64),
    ):
        y64, s64 = np.empty(flat.numel(), f64), np.empty(flat.numel(), f64)
        fwd(flat.numpy(), y64, s64, *tables)
        want_y, want_s = eager(flat.double())
        assert _eq64(y64, want_y) and _eq64(s64, want_s)
        dx = np.empty(flat.numel(), f64)
        bwd(flat.numpy(), s64, gflat.numpy(), dx)
        assert _eq64(dx, eager_grad(flat, want_s, gflat))

    cos, sin = rope_tables(16, 8)
    c, s = cos.double(), sin.double()
    first, second = _pairs(c, s, [1.0, 0.0], [0.0, 1.0]), _pairs(c, s, [0.0, 1.0], [-1.0, 0.0])
    q = (torch.randn(2, 16, 3, 8, generator=g) * 50.0).transpose(1, 2)
    rot = np.empty((2, 3, 16, 8), f64)
    k.rope_kernel(q.numpy(), first.numpy(), second.numpy(), rot)
    assert _eq64(rot, _rotate64(q, first, second))
