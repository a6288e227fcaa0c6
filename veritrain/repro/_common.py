"""Shared building blocks of the reproducible operators: input checks and exact powers of two.

Run: not a script; imported by the other `veritrain.repro` modules.
"""

from __future__ import annotations

from typing import Any, cast

import torch

from veritrain.errors import VeritrainError

__all__ = ["ReproError", "apply_fn", "check32", "check_float", "horner", "pow2", "to64"]

_EXP_BIAS = 1023
_MANT_BITS = 52


class ReproError(VeritrainError, ValueError):
    """A reproducible operator got an input it does not support (dtype, shape, device mix)."""


def check_float(name: str, *tensors: torch.Tensor | None) -> None:
    """Check that every given tensor is float32 or float64 and that all share one device.

    Args:
        name: operator name, used in the error message.
        tensors: the operands (None entries are skipped).

    Raises:
        ReproError: a dtype other than float32/float64, or operands on different devices.
    """
    devices = set()
    for t in tensors:
        if t is None:
            continue
        if t.dtype not in (torch.float32, torch.float64):
            raise ReproError(f"repro.{name}: expected float32 or float64, got {t.dtype}")
        devices.add(t.device)
    if len(devices) > 1:
        raise ReproError(f"repro.{name}: operands on different devices {sorted(map(str, devices))}")


def check32(name: str, *tensors: torch.Tensor | None) -> None:
    """Check that every given tensor is float32 and that all share one device.

    Args:
        name: operator name, used in the error message.
        tensors: the operands (None entries are skipped).

    Raises:
        ReproError: a dtype other than float32, or operands on different devices.
    """
    devices = set()
    for t in tensors:
        if t is None:
            continue
        if t.dtype != torch.float32:
            raise ReproError(f"repro.{name}: expected float32, got {t.dtype}")
        devices.add(t.device)
    if len(devices) > 1:
        raise ReproError(f"repro.{name}: operands on different devices {sorted(map(str, devices))}")


def to64(x: torch.Tensor) -> torch.Tensor:
    """Return `x` as float64 (exact: every float32 value is a float64 value)."""
    return x.to(torch.float64)


def horner(coefs: list[float], t: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """Polynomial `coefs[0] t^n + ... + coefs[n]` by Horner's rule, one IEEE multiply and one
    add per coefficient (never a fused multiply-add), in `t`'s dtype; `t` any shape.

    The accumulator is one tensor updated in place (`mul_`, `add_`: the same roundings as
    `acc * t + c`, without a temporary per step): a new one, or `out` (a spare tensor of `t`'s
    shape and dtype, not `t` itself, whose contents are overwritten: no new allocation);
    `t` is not modified.
    """
    if len(coefs) == 1:
        return torch.full_like(t, coefs[0])
    # = coefs[0] * t (IEEE multiplication commutes)
    acc = t * coefs[0] if out is None else torch.mul(t, coefs[0], out=out)
    acc.add_(coefs[1])
    for c in coefs[2:]:
        acc.mul_(t).add_(c)
    return acc


def pow2(e: torch.Tensor) -> torch.Tensor:
    """Exact float64 powers of two `2**e`, built from the IEEE-754 bit pattern (no pow, no libm).

    Args:
        e: integer-valued tensor (any integer or float dtype) with -1022 <= e <= 1023.

    Returns:
        float64 tensor of the same shape and device, each entry exactly `2**e`.
    """
    bits = e.to(torch.int64, copy=True)  # a copy: the shifts below are in place
    bits.add_(_EXP_BIAS).bitwise_left_shift_(_MANT_BITS)
    return bits.view(torch.float64)


def apply_fn(fn: type[torch.autograd.Function], *args: Any) -> torch.Tensor:
    """Call `fn.apply(*args)` and type its result (torch leaves `apply` untyped)."""
    return cast(torch.Tensor, fn.apply(*args))  # type: ignore[no-untyped-call]
