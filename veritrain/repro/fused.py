"""Fused CPU kernels: repro's longest elementwise chains in one pass, with the same bits.

An eager chain of IEEE operations (`exp64`'s range reduction and polynomial, an AdamW update
with its correctly rounded root) reads and writes its whole operand once per operation: about
30 float64 passes for `exp64`, about 25 for an AdamW step. On a CPU those passes, not the
arithmetic, are the cost. Here each chain is one compiled loop (Numba, `_fused_numba`) that
performs per element exactly the eager operations, in the same order and precision:

- `+ - * /` and the square root are correctly rounded in IEEE 754, so one operation gives one
  result whether it runs in a SIMD lane of any width, a scalar register or an eager kernel;
- nothing may merge or reorder them: the kernels are compiled without fastmath (no
  reassociation, no reciprocal division, no fused multiply-add; the tests read each
  kernel's machine code for FMA instructions), and float32 stays float32;
- rounding to an integer, conversions and power-of-two scalings are exact or fixed by IEEE.

So the fused and the eager path give the same bytes, which `tests/unit/core/test_repro_fused.py`
checks on random operands over every binade, zeros, subnormals, infinities and NaN, and the
golden state hashes (computed before these kernels existed) check on whole training runs.

The eager path stays the reference and the only path on a GPU. The fused one is taken for
contiguous CPU tensors when Numba imports; `VERITRAIN_REPRO_KERNELS=eager` forces eager
everywhere, `=fused` makes a missing Numba an error instead of a silent fallback. The first
call in a fresh installation compiles the kernels (a few seconds, once: Numba caches the
machine code on disk). Kernels run on one thread.

Run: not a script; `repro.exp64` and `repro.AdamW` call it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

import numpy as np
import torch

from veritrain.repro._common import ReproError

__all__ = [
    "KERNELS_ENV",
    "adamw_update",
    "exp64_into",
    "fused_available",
    "kernels_mode",
    "use_fused",
]

KERNELS_ENV = "VERITRAIN_REPRO_KERNELS"  # "auto" (default), "eager" or "fused"
_MODES = ("auto", "eager", "fused")
_loaded: ModuleType | None = None
_load_error: str | None = None


def _kernels() -> ModuleType | None:
    """The compiled-kernel module, imported once; None where Numba is missing or broken."""
    global _loaded, _load_error
    if _loaded is None and _load_error is None:
        try:
            from veritrain.repro import _fused_numba

            _loaded = _fused_numba
        except ImportError as exc:  # Numba absent, or built for another NumPy
            _load_error = str(exc)
    return _loaded


def fused_available() -> bool:
    """Whether the fused kernels can run here (Numba imports)."""
    return _kernels() is not None


def use_fused(*tensors: torch.Tensor) -> bool:
    """Whether an operation on `tensors` takes the fused path.

    True when `VERITRAIN_REPRO_KERNELS` is not "eager", Numba imports and every tensor is a
    contiguous CPU tensor with no autograd history needed (the kernels see raw memory).

    Raises:
        ReproError: the variable has another value, or it is "fused" and Numba is missing.
    """
    mode = os.environ.get(KERNELS_ENV, "auto")
    if mode not in _MODES:
        raise ReproError(f"{KERNELS_ENV} must be auto, eager or fused, got {mode!r}")
    if mode == "eager":
        return False
    if _kernels() is None:
        if mode == "fused":
            raise ReproError(f"{KERNELS_ENV}=fused but Numba does not import: {_load_error}")
        return False
    return all(t.device.type == "cpu" and t.is_contiguous() for t in tensors)


@contextmanager
def kernels_mode(mode: str) -> Iterator[None]:
    """Run a block with `VERITRAIN_REPRO_KERNELS` set to `mode` ("auto", "eager", "fused"),
    restored afterwards (the conformance suite compares both paths this way).

    Raises:
        ReproError: another mode.
    """
    if mode not in _MODES:
        raise ReproError(f"{KERNELS_ENV} must be auto, eager or fused, got {mode!r}")
    before = os.environ.get(KERNELS_ENV)
    os.environ[KERNELS_ENV] = mode
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(KERNELS_ENV, None)
        else:
            os.environ[KERNELS_ENV] = before


def _flat(t: torch.Tensor) -> np.ndarray:
    """A contiguous CPU tensor's memory as a 1-d NumPy array (shared, not copied)."""
    return t.detach().view(-1).numpy()


def exp64_into(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """`out = exp64(x)` by the fused kernel (same bits as `elementwise.exp64`'s eager chain).

    Args:
        x: contiguous float64 CPU tensor.
        out: contiguous float64 CPU tensor of `x`'s shape (may be `x` itself).

    Returns:
        `out`.
    """
    kernels = _kernels()
    assert kernels is not None  # callers check use_fused first
    if x.numel():
        kernels.exp64_kernel(_flat(x), _flat(out), kernels.EXP_TABLE, kernels.POW2_TABLE)
    return out


def adamw_update(
    p: torch.Tensor,
    g: torch.Tensor,
    m: torch.Tensor,
    v: torch.Tensor,
    decay: float,
    beta1: float,
    beta2: float,
    inv_sqrt_bc2: float,
    eps: float,
    step_size: float,
) -> None:
    """One `repro.AdamW` update of one parameter in place, fused (same bits as the eager step).

    The Python doubles are rounded to float32 here, as torch's CPU kernels round a scalar
    operand of a float32 tensor; `1 - beta1` and `1 - beta2` are formed in double first, as
    the eager step forms them.

    Args:
        p, g, m, v: contiguous float32 CPU tensors of one shape: parameter, gradient, first and
            second moment (p, m and v are updated).
        decay: `1 - lr * weight_decay` (1.0 for no decay: multiplying by 1 is exact).
        beta1, beta2: the moments' coefficients.
        inv_sqrt_bc2: `1 / sqrt(1 - beta2**t)` (correctly rounded double).
        eps: the denominator's epsilon.
        step_size: `lr / (1 - beta1**t)`.

    Raises:
        ReproError: a root that the exact test could not settle in 8 moves (a broken sqrt).
    """
    kernels = _kernels()
    assert kernels is not None  # callers check use_fused first
    if not p.numel():
        return
    f32 = np.float32
    broken = kernels.adamw_kernel(
        _flat(p),
        _flat(g),
        _flat(m),
        _flat(v),
        f32(decay),
        f32(beta1),
        f32(1.0 - beta1),
        f32(beta2),
        f32(1.0 - beta2),
        f32(inv_sqrt_bc2),
        f32(eps),
        f32(step_size),
    )
    if broken:
        raise ReproError(f"repro.AdamW: {broken} square roots still wrong after 8 exact moves")
