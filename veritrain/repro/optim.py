"""AdamW whose update is the same bytes on every IEEE-754 machine.

`torch.optim.AdamW` uses `lerp_`, `addcmul_` and `addcdiv_` (fused multiply-adds on some
devices and SIMD paths but not on others), computes the bias corrections with `pow` (libm; a
`powf` difference forked a Mac from an H100 at step 15 in Gensyn's OPEN-1B replay), and on
CUDA divides by a Python scalar through its reciprocal. This implementation keeps torch's
hyper-parameters and state layout but builds the step from single IEEE operations:

    step      += 1
    param     *= 1 - lr * wd                   (decoupled weight decay)
    m          = m * beta1 + g * (1 - beta1)
    v          = v * beta2 + (g * g) * (1 - beta2)
    bc1, bc2   = 1 - beta1**t, 1 - beta2**t     (Python doubles, binary powering, no pow)
    denom      = sqrt(v) * (1 / sqrt(bc2)) + eps
    param     -= (m / denom) * (lr / bc1)

Every scalar is a Python double computed with correctly rounded operations (square roots by
`sqrt_scalar`, integer arithmetic), then rounded to float32 by the multiply kernel; tensor by
tensor division is correctly rounded on CPU and CUDA, and `sqrt(v)` is `veritrain.repro.sqrt`
(the library's `torch.sqrt` is not correctly rounded on every CPU; see `repro/sqrt.py`).

Loshchilov and Hutter, "Decoupled Weight Decay Regularization", ICLR 2019.

Run: not a script; `from veritrain.repro import AdamW; opt = AdamW(model.parameters())`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch

from veritrain.repro._common import ReproError, to64
from veritrain.repro.fused import adamw_update, use_fused
from veritrain.repro.reduce import sum_tree64
from veritrain.repro.sqrt import sqrt, sqrt64, sqrt_scalar

__all__ = ["AdamW", "clip_grad_norm_", "int_power"]


def int_power(base: float, n: int) -> float:
    """`base**n` for an integer `n >= 0` by binary powering of IEEE doubles (no libm `pow`).

    The sequence of multiplications depends only on `n`, so the result is the same double on
    every machine.

    Args:
        base: a Python float.
        n: the exponent (steps), >= 0.

    Returns:
        The product as a Python float.

    Raises:
        ReproError: `n` is negative.
    """
    if n < 0:
        raise ReproError(f"repro.int_power: negative exponent {n}")
    result = 1.0
    sq = base
    while n:
        if n & 1:
            result = result * sq
        n >>= 1
        if n:
            sq = sq * sq
    return result


@torch.no_grad()
def clip_grad_norm_(parameters: Iterable[torch.Tensor], max_norm: float) -> torch.Tensor:
    """Scale gradients in place so that their global L2 norm is at most `max_norm`.

    Same rule as `torch.nn.utils.clip_grad_norm_` (coefficient `max_norm / (norm + 1e-6)`,
    clamped to 1), but the norm is a fixed-order sum: each gradient's squares by `sum_fixed`'s
    pairwise tree in float64, then the per-parameter sums added in parameter order, then a
    correctly rounded sqrt. torch's vector norm reduces in a kernel-chosen order.

    Args:
        parameters: tensors whose `.grad` (float32, same device) is clipped; those without a
            gradient are skipped.
        max_norm: the largest allowed norm (> 0).

    Returns:
        The norm before clipping, a float32 0-d tensor (0 if no parameter has a gradient).

    Raises:
        ReproError: `max_norm` not positive, or a gradient that is not float32.
    """
    if not max_norm > 0.0:
        raise ReproError(f"repro.clip_grad_norm_: max_norm must be > 0, got {max_norm}")
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.zeros((), dtype=torch.float32)
    total = torch.zeros((), dtype=torch.float64, device=grads[0].device)
    for g in grads:
        if g.dtype != torch.float32:
            raise ReproError(f"repro.clip_grad_norm_: expected float32 gradients, got {g.dtype}")
        g64 = to64(g).reshape(-1)
        total = total + sum_tree64(g64 * g64, 0)
    norm = sqrt64(total)
    coef = torch.full_like(norm, float(max_norm)) / (norm + 1e-6)  # tensor by tensor
    coef32 = torch.clamp(coef, max=1.0).to(torch.float32)
    for g in grads:
        g.mul_(coef32)
    return norm.to(torch.float32)


class AdamW(torch.optim.Optimizer):
    """AdamW with torch's hyper-parameters and per-parameter state, reproducible bit for bit.

    State per parameter, exactly as `torch.optim.AdamW` (single-tensor path) keeps it, so
    checkpoints stay interchangeable: `{"step": float32 0-d CPU tensor, "exp_avg": like param,
    "exp_avg_sq": like param}`. Updates match torch's AdamW to float32 rounding (not bit for
    bit: torch's fused operations round differently).

    Args:
        params: parameters or parameter groups (float32 tensors).
        lr: learning rate.
        betas: coefficients of the running averages of the gradient and its square.
        eps: added to the denominator.
        weight_decay: decoupled weight decay coefficient.

    Raises:
        ReproError: a hyper-parameter out of range.
    """

    def __init__(
        self,
        params: Iterable[torch.Tensor] | Iterable[dict[str, Any]],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
    ) -> None:
        if not lr >= 0.0:
            raise ReproError(f"repro.AdamW: invalid lr {lr}")
        if not eps >= 0.0:
            raise ReproError(f"repro.AdamW: invalid eps {eps}")
        if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
            raise ReproError(f"repro.AdamW: invalid betas {betas}")
        if not weight_decay >= 0.0:
            raise ReproError(f"repro.AdamW: invalid weight_decay {weight_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay}
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        """Apply one AdamW update to every parameter that has a gradient.

        Args:
            closure: optional callable that re-evaluates the model and returns the loss.

        Returns:
            The closure's loss, or None.

        Raises:
            ReproError: a parameter or gradient that is not float32, or a sparse gradient.
        """
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        # A contiguous CPU parameter takes the fused kernel (`repro.fused`): its whole update in
        # one pass, the same bits. The eager path: phase 1 per parameter: step count, weight
        # decay, both moments. Phase 2: the square roots of every second moment in one `sqrt`
        # call (one verification pass for all parameters instead of one per tensor). Phase 3
        # per parameter: the update.
        pending: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor, float, float, float]] = []
        for group in self.param_groups:
            lr = float(group["lr"])
            beta1, beta2 = (float(b) for b in group["betas"])
            eps = float(group["eps"])
            wd = float(group["weight_decay"])
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad
                if g.is_sparse or p.dtype != torch.float32 or g.dtype != torch.float32:
                    raise ReproError("repro.AdamW: needs dense float32 parameters and gradients")
                state = self.state[p]
                if not state:
                    state["step"] = torch.tensor(0.0, dtype=torch.float32)
                    state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                step_t: torch.Tensor = state["step"]
                m: torch.Tensor = state["exp_avg"]
                v: torch.Tensor = state["exp_avg_sq"]
                step_t += 1.0
                t = int(step_t.item())
                bc1 = 1.0 - int_power(beta1, t)
                bc2 = 1.0 - int_power(beta2, t)
                if use_fused(p, g, m, v):  # the whole update in one pass, the same bits
                    decay = 1.0 - lr * wd if wd != 0.0 else 1.0
                    inv_sqrt_bc2 = 1.0 / sqrt_scalar(bc2)
                    adamw_update(p, g, m, v, decay, beta1, beta2, inv_sqrt_bc2, eps, lr / bc1)
                    continue
                if wd != 0.0:
                    p.mul_(1.0 - lr * wd)
                # in place: the same single roundings as the expressions in the module docstring
                tmp = g * (1.0 - beta1)
                m.mul_(beta1).add_(tmp)
                torch.mul(g, g, out=tmp).mul_(1.0 - beta2)
                v.mul_(beta2).add_(tmp)
                pending.append((p, m, v, 1.0 / sqrt_scalar(bc2), eps, lr / bc1))
        if not pending:
            return loss
        by_device: dict[torch.device, list[int]] = {}
        for i, item in enumerate(pending):
            by_device.setdefault(item[2].device, []).append(i)
        for idx in by_device.values():
            flat = torch.cat([pending[i][2].reshape(-1) for i in idx])
            roots = sqrt(flat)  # (sum of numels,) float32, correctly rounded
            offset = 0
            for i in idx:
                p, m, v, inv_sqrt_bc2, eps, step_size = pending[i]
                denom = roots[offset : offset + v.numel()].view(v.shape)
                offset += v.numel()
                denom.mul_(inv_sqrt_bc2).add_(eps)
                p.sub_(torch.div(m, denom).mul_(step_size))
        return loss
