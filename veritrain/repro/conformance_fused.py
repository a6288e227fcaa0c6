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

from veritrain.repro.conformance_base import F32, F64, ConformanceResult, _Ctx, _floats, _result
from veritrain.repro.elementwise import exp64
from veritrain.repro.fused import fused_available, kernels_mode
from veritrain.repro.optim import AdamW

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


FUSED_CHECKS: list[Callable[[_Ctx], list[ConformanceResult]]] = [
    _check_fused_exp64,
    _check_fused_adamw,
]
