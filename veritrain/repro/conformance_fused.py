"""Conformance of the fused CPU kernels (`veritrain.repro.fused`): the eager chains' bits.

The fused kernels are not torch primitives: each is a loop of IEEE operations that must give,
entry by entry, what the eager chain of audited primitives gives. So the reference here is the
eager path itself, run on the same operands in the same process with the kernels switched off
(`VERITRAIN_REPRO_KERNELS=eager`); its primitives are checked against exact references by the
rest of the suite. The operands cover every binade, subnormals, signed zeros, infinities and
NaN (NaN payloads aside). The kernels run on the CPU only, whatever device is under test; where
Numba does not import, the checks report 0 values checked.

Run: not a script; `run_conformance` runs `FUSED_CHECKS`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from veritrain.repro.conformance_base import (
    F32,
    F64,
    Array,
    ConformanceResult,
    _Ctx,
    _floats,
    _result,
)
from veritrain.repro.elementwise import exp64, gelu, silu
from veritrain.repro.fused import fused_available, kernels_mode
from veritrain.repro.gemm import linear, matmul, quantize
from veritrain.repro.nn import layer_norm, rms_norm, softmax
from veritrain.repro.optim import AdamW
from veritrain.repro.rotary import rope, rope_tables

__all__ = ["FUSED_CHECKS"]

_ADAMW_STEPS = 3


def _check_fused_exp64(ctx: _Ctx) -> list[ConformanceResult]:
    if not fused_available():
        return [ConformanceResult("fused.exp64", "float64", 0, 0)]
    rng = ctx.rng("fused.exp64")
    wide = _floats(rng, F64, ctx.n - ctx.n // 2)
    near = rng.uniform(-746.0, 710.0, ctx.n // 2)  # where exp64 is neither 0 nor clamped
    x = torch.from_numpy(np.concatenate([wide, near]))
    with kernels_mode("fused"):
        got = exp64(x).numpy()
    with kernels_mode("eager"):
        exp = exp64(x).numpy()
    return [_result("fused.exp64", "float64", got, exp, [x.numpy()])]


def _check_fused_adamw(ctx: _Ctx) -> list[ConformanceResult]:
    if not fused_available():
        return [ConformanceResult("fused.adamw", "float32", 0, 0)]
    rng = ctx.rng("fused.adamw")
    n = max(1, min(ctx.n, 200_000))
    start = torch.from_numpy(rng.standard_normal(n).astype(np.float32))
    grads = [torch.from_numpy(_floats(rng, F32, n)) for _ in range(_ADAMW_STEPS)]
    finals = []
    for mode in ("fused", "eager"):
        p = start.clone().requires_grad_()
        opt = AdamW([p], lr=3e-3, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
        with kernels_mode(mode):
            for g in grads:
                p.grad = g.clone()
                opt.step()
        state = opt.state[p]
        finals.append(torch.cat([p.detach(), state["exp_avg"], state["exp_avg_sq"]]).numpy())
    return [
        _result(
            "fused.adamw",
            "float32",
            finals[0],
            finals[1],
            lambda i: f"entry {i % n} of parameter, exp_avg, exp_avg_sq (#{i // n})",
            checked=n,
        )
    ]


def _both(fn: Callable[[], list[torch.Tensor]]) -> tuple[Array, Array]:
    """`fn()` with the fused kernels and with the eager chains, each output flattened and
    concatenated (float64 throughout: float32 values convert exactly)."""
    runs = []
    for mode in ("fused", "eager"):
        with kernels_mode(mode):
            outs = [t.detach().to(torch.float64).reshape(-1) for t in fn()]
        runs.append(torch.cat(outs).numpy())
    return runs[0], runs[1]


def _wide32(rng: np.random.Generator, shape: tuple[int, ...]) -> torch.Tensor:
    """float32 operands over the whole range (`_floats`), each row at its own scale."""
    n = int(np.prod(shape))
    return torch.from_numpy(_floats(rng, F32, n)).reshape(shape)


def _rows(ctx: _Ctx, width: int, cap: int = 1 << 18) -> int:
    return max(2, min(ctx.n, cap) // width)


def _check_fused_products(ctx: _Ctx) -> list[ConformanceResult]:
    """`gemm.quantize` on both operand layouts and `matmul`/`linear` (their quantisation, +0
    and rounding kernels), forward and backward; a k = 1 product gives the -0 that +0 fixes."""
    if not fused_available():
        return [ConformanceResult("fused.products", "float32", 0, 0)]
    rng = ctx.rng("fused.products")
    m = _rows(ctx, 96)
    x = _wide32(rng, (m, 96))
    xt = _wide32(rng, (96, m)).t()
    batched = _wide32(rng, (2, 3, 24, 40))
    a = torch.from_numpy(rng.standard_normal((m, 1)).astype(np.float32))
    a[::3] = 0.0
    b = -torch.from_numpy(rng.random((1, 33)).astype(np.float32) + 0.5)
    w = torch.from_numpy(rng.standard_normal((40, 96)).astype(np.float32))

    def run() -> list[torch.Tensor]:
        outs: list[torch.Tensor] = []
        for op in (x, xt, batched, batched.transpose(-1, -2)):
            for p in (7, 21):
                for row_major in (True, False):
                    q, e = quantize(op, p, row_major)
                    outs += [q, e.to(torch.float64)]
        xs = x.nan_to_num(0.0, 1e30, -1e30).clamp(-1e30, 1e30).requires_grad_()
        ws = w.clone().requires_grad_()
        z = linear(xs, ws)
        y = matmul(a, b)
        (z * z).sum().backward()  # type: ignore[no-untyped-call]
        assert xs.grad is not None and ws.grad is not None
        return [*outs, z, y, xs.grad, ws.grad]

    got, exp = _both(run)
    return [_result("fused.products", "float32", got, exp, lambda i: f"output entry {i}")]


def _check_fused_rows(ctx: _Ctx) -> list[ConformanceResult]:
    """softmax (with -inf masks, a row of -inf, NaN), rms_norm and layer_norm (d not a power
    of two) and rope, forward and backward."""
    if not fused_available():
        return [ConformanceResult("fused.rows", "float32", 0, 0)]
    rng = ctx.rng("fused.rows")
    m = _rows(ctx, 384)
    scores = torch.from_numpy((rng.standard_normal((m, 384)) * 30.0).astype(np.float32))
    keep = np.arange(384)[None, :] <= np.arange(m)[:, None] * 384 // m
    scores = torch.where(torch.from_numpy(keep), scores, float("-inf"))
    scores[-1] = float("-inf")
    scores[0, 0] = float("nan")
    xs = _wide32(rng, (m, 384)).nan_to_num(1.0, 1.0, 1.0)
    weight = torch.from_numpy(rng.standard_normal(384).astype(np.float32))
    cos, sin = rope_tables(16, 8)
    qk = torch.from_numpy((rng.standard_normal((2, 16, 3, 8)) * 100).astype(np.float32))
    g1 = torch.from_numpy(rng.standard_normal((m, 384)).astype(np.float32))
    g2 = torch.from_numpy(rng.standard_normal((2, 3, 16, 8)).astype(np.float32))

    def run() -> list[torch.Tensor]:
        s_in = scores.clone().requires_grad_()
        x_in = xs.clone().requires_grad_()
        w_in = weight.clone().requires_grad_()
        r_in = qk.clone().requires_grad_()
        y1 = softmax(s_in, -1)
        y2 = rms_norm(x_in, w_in, 1e-5)
        y3 = rope(r_in.transpose(1, 2), cos, sin)
        y1.backward(g1)  # type: ignore[no-untyped-call]
        y2.backward(g1)  # type: ignore[no-untyped-call]
        y3.backward(g2)  # type: ignore[no-untyped-call]
        assert s_in.grad is not None and x_in.grad is not None and w_in.grad is not None
        assert r_in.grad is not None
        outs = [y1, y2, y3, s_in.grad, x_in.grad, w_in.grad, r_in.grad]
        x_ln, w_ln, b_ln = (t.clone().requires_grad_() for t in (xs, weight, weight * 0.5))
        y4 = layer_norm(x_ln, w_ln, b_ln, 1e-5)
        y4.backward(g1)  # type: ignore[no-untyped-call]
        assert x_ln.grad is not None and w_ln.grad is not None and b_ln.grad is not None
        return [*outs, y4, x_ln.grad, w_ln.grad, b_ln.grad]

    got, exp = _both(run)
    return [_result("fused.rows", "float32", got, exp, lambda i: f"output entry {i}")]


def _check_fused_activations(ctx: _Ctx) -> list[ConformanceResult]:
    """SiLU and GELU forward and backward on every binade (tiny, subnormal, infinite, NaN)."""
    if not fused_available():
        return [ConformanceResult("fused.activations", "float32", 0, 0)]
    rng = ctx.rng("fused.activations")
    x = torch.from_numpy(_floats(rng, F32, ctx.n))
    g = torch.from_numpy(rng.standard_normal(ctx.n).astype(np.float32))

    def run() -> list[torch.Tensor]:
        outs: list[torch.Tensor] = []
        for fn in (silu, gelu):
            leaf = x.clone().requires_grad_()
            y = fn(leaf)
            y.backward(g)  # type: ignore[no-untyped-call]
            assert leaf.grad is not None
            outs += [y, leaf.grad]
        return outs

    got, exp = _both(run)
    return [_result("fused.activations", "float32", got, exp, lambda i: f"input {x[i % ctx.n]!r}")]


FUSED_CHECKS: list[Callable[[_Ctx], list[ConformanceResult]]] = [
    _check_fused_exp64,
    _check_fused_adamw,
    _check_fused_products,
    _check_fused_rows,
    _check_fused_activations,
]
