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

So the fused and the eager path give the same bytes, which
`tests/unit/veritrain/test_repro_fused.py` checks on random operands over every binade, zeros,
subnormals, infinities and NaN, and the golden state hashes (computed before these kernels
existed) check on whole training runs.

The eager path stays the reference and the only path on a GPU. The fused one is taken for
contiguous CPU tensors when Numba imports; `VERITRAIN_REPRO_KERNELS=eager` forces eager
everywhere, `=fused` makes a missing Numba an error instead of a silent fallback. The first
call in a fresh installation compiles the kernels (a few seconds, once: Numba caches the
machine code on disk). Kernels run on one thread.

Run: not a script; the operators of `veritrain.repro` (exp64, AdamW, the GEMM's quantisation
and rounding, softmax, the norms, SiLU, GELU, RoPE) call it.
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
    "gelu_backward_fused",
    "gelu_forward_fused",
    "kernels_id",
    "kernels_mode",
    "layer_norm_backward_fused",
    "layer_norm_forward_fused",
    "quantize_fused",
    "rms_norm_backward_fused",
    "rms_norm_forward_fused",
    "rope_fused",
    "round32_into",
    "silu_backward_fused",
    "silu_forward_fused",
    "softmax_backward_fused",
    "softmax_forward_fused",
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
        # Numba absent or built for another NumPy (ImportError), or no writable directory
        # for its compiled-code cache (RuntimeError): the eager chains, the same bytes
        except (ImportError, RuntimeError, OSError) as exc:
            _load_error = f"{type(exc).__name__}: {exc}"
    return _loaded


def _loaded_kernels() -> ModuleType:
    """The compiled-kernel module, for callers that checked `use_fused` (or `fused_available`)."""
    kernels = _kernels()
    assert kernels is not None
    return kernels


def _check_mode(mode: str) -> None:
    """Raise `ReproError` unless `mode` is one of `VERITRAIN_REPRO_KERNELS`'s values."""
    if mode not in _MODES:
        raise ReproError(f"{KERNELS_ENV} must be auto, eager or fused, got {mode!r}")


def fused_available() -> bool:
    """Whether the fused kernels can run here (Numba imports)."""
    return _kernels() is not None


def kernels_id() -> str:
    """Which CPU path this process takes: "eager", or "numba <version>" for the fused kernels
    (part of a selftest's machine key: a cached result does not vouch for the other path).

    Raises:
        ReproError: as `use_fused`.
    """
    if not use_fused():
        return "eager"
    import numba

    return f"numba {numba.__version__}"


def use_fused(*tensors: torch.Tensor) -> bool:
    """Whether an operation on `tensors` takes the fused path.

    True when `VERITRAIN_REPRO_KERNELS` is not "eager", Numba imports and every tensor is a
    contiguous CPU tensor with no autograd history needed (the kernels see raw memory).

    Raises:
        ReproError: the variable has another value, or it is "fused" and Numba is missing.
    """
    mode = os.environ.get(KERNELS_ENV, "auto")
    _check_mode(mode)
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
    _check_mode(mode)
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
    kernels = _loaded_kernels()  # callers check use_fused first
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
    kernels = _loaded_kernels()  # callers check use_fused first
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


def quantize_fused(
    x: torch.Tensor, p: int, row_major: bool
) -> tuple[torch.Tensor, torch.Tensor] | None:
    """`gemm.quantize(x, p, row_major)` by a fused kernel, or None where none applies.

    Applies to a float32 CPU operand that is C-contiguous or the transpose of a C-contiguous
    tensor in its last two dims (the layouts of every GEMM operand of the models here); other
    strides, empty operands and the eager mode return None (the caller takes the eager path).

    Args:
        x: float32 (..., m, k).
        p: mantissa bits (`gemm.mantissa_bits`).
        row_major: as `gemm.quantize`: True for a C-contiguous result, False to keep `x`'s
            layout.

    Returns:
        `(xq, e)` with `gemm.quantize`'s values and layout, or None.
    """
    if x.dtype != torch.float32 or x.dim() < 2 or x.numel() == 0 or not use_fused():
        return None
    if x.device.type != "cpu":
        return None
    kernels = _loaded_kernels()
    *lead, m, k = x.shape
    batch = x.numel() // (m * k)
    exps = torch.empty((*lead, m, 1), dtype=torch.int64)
    if x.is_contiguous():
        out = torch.empty(x.shape, dtype=torch.float64)
        kernels.quantize_rows_kernel(
            x.detach().view(-1, k).numpy(), p, kernels.POW2_TABLE,
            out.view(-1, k).numpy(), exps.view(-1).numpy(),
        )  # fmt: skip
        return out, exps
    xt = x.transpose(-1, -2)
    if not xt.is_contiguous():
        return None
    src = xt.detach().reshape(batch, k, m).numpy()  # a view: xt is contiguous
    if row_major:
        out = torch.empty(x.shape, dtype=torch.float64)
        dst = out.view(batch, m, k)
    else:
        out = torch.empty(xt.shape, dtype=torch.float64).transpose(-1, -2)  # x's layout
        dst = out.transpose(-1, -2).view(batch, k, m)
    kernels.quantize_cols_kernel(
        src, p, kernels.POW2_TABLE, dst.numpy(), exps.view(batch, m).numpy(), row_major
    )
    return out, exps


def round32_into(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """`out = (x + 0.0).to(float32)` by the fused kernel: a float64 GEMM result with its zero
    made +0 (`gemm._gemm64`) and rounded once, in one pass.

    Args:
        x: contiguous float64 CPU tensor.
        out: contiguous float32 CPU tensor of `x`'s shape.

    Returns:
        `out`.
    """
    kernels = _loaded_kernels()  # callers check use_fused first
    if x.numel():
        kernels.round32_kernel(_flat(x), _flat(out))
    return out


def softmax_forward_fused(x: torch.Tensor) -> torch.Tensor:
    """`nn._softmax64(x, -1).to(float32)` by the fused kernel, one pass per row.

    Args:
        x: contiguous float32 CPU tensor (..., n), n >= 1.

    Returns:
        float32 tensor of `x`'s shape.
    """
    kernels = _loaded_kernels()  # callers check use_fused first
    out = torch.empty_like(x)
    if x.numel():
        n = x.shape[-1]
        kernels.softmax_forward_kernel(
            x.detach().view(-1, n).numpy(),
            out.view(-1, n).numpy(),
            kernels.EXP_TABLE,
            kernels.POW2_TABLE,
        )
    return out


def softmax_backward_fused(y: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
    """The softmax backward along the last dim by the fused kernel: per row, in float64,
    `g * y - y * sum_tree64(g * y)`, rounded once (`nn._Softmax.backward`'s operations).

    Args:
        y: the forward's float32 output, contiguous CPU (..., n), n >= 1.
        grad: float32 gradient of `y`'s shape, contiguous CPU.

    Returns:
        float32 tensor of `y`'s shape.
    """
    kernels = _loaded_kernels()  # callers check use_fused first
    out = torch.empty_like(y)
    if y.numel():
        n = y.shape[-1]
        kernels.softmax_backward_kernel(
            y.detach().view(-1, n).numpy(),
            grad.detach().view(-1, n).numpy(),
            out.view(-1, n).numpy(),
        )
    return out


def _norm_outputs(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A norm's forward outputs for `x` (..., d): `y` float32 like `x`, the saved `xhat` float64
    (..., d) and `rstd` float64 (..., 1), as the eager forward saves them."""
    y = torch.empty_like(x)
    xhat = torch.empty(x.shape, dtype=torch.float64)
    rstd = torch.empty((*x.shape[:-1], 1), dtype=torch.float64)
    return y, xhat, rstd


def rms_norm_forward_fused(
    x: torch.Tensor, weight: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`nn._RMSNorm.forward` by the fused kernel: the same bits and the same saved tensors.

    Args:
        x: contiguous float32 CPU (..., d), d >= 1.
        weight: contiguous float32 CPU (d,).
        eps: added to the mean square.

    Returns:
        `(y, xhat, rstd)`: float32 (..., d), float64 (..., d), float64 (..., 1).
    """
    kernels = _loaded_kernels()  # callers check use_fused first
    d = x.shape[-1]
    y, xhat, rstd = _norm_outputs(x)
    if x.numel():
        kernels.rmsnorm_forward_kernel(
            x.detach().view(-1, d).numpy(), _flat(weight), float(eps), 1.0 / d,
            y.view(-1, d).numpy(), xhat.view(-1, d).numpy(), _flat(rstd),
        )  # fmt: skip
    return y, xhat, rstd


def rms_norm_backward_fused(
    grad: torch.Tensor, weight: torch.Tensor, xhat: torch.Tensor, rstd: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """`nn._RMSNorm.backward` by the fused kernel (the same bits).

    Args:
        grad: contiguous float32 CPU (..., d).
        weight: contiguous float32 CPU (d,).
        xhat, rstd: the forward's saved float64 (..., d) and (..., 1).

    Returns:
        `(gx, gw)`: float32 (..., d) and float32 (d,).
    """
    kernels = _loaded_kernels()  # callers check use_fused first
    d = grad.shape[-1]
    gx = torch.empty_like(grad)
    gw = torch.zeros(d, dtype=torch.float32)
    if grad.numel():
        kernels.rmsnorm_backward_kernel(
            grad.detach().view(-1, d).numpy(), _flat(weight), xhat.view(-1, d).numpy(),
            _flat(rstd), 1.0 / d, gx.view(-1, d).numpy(), gw.numpy(),
        )  # fmt: skip
    return gx, gw


def rope_fused(x: torch.Tensor, first: torch.Tensor, second: torch.Tensor) -> torch.Tensor | None:
    """`rotary._rotate(x, first, second)` by the fused kernel, or None where it does not apply.

    Applies to a float32 CPU `x` of 4 dims (B, H, T, hd) with a unit last stride (any other
    strides: the transposed views of the attention's projections).

    Args:
        x: float32 (B, H, T, hd).
        first, second: float64 (T, hd/2, 2) tables (`rotary._pairs`).

    Returns:
        The rotated float32 (B, H, T, hd), C-contiguous, or None.
    """
    if x.dim() != 4 or x.stride(-1) != 1 or x.device.type != "cpu" or not use_fused():
        return None
    kernels = _loaded_kernels()
    out = torch.empty(x.shape, dtype=torch.float32)
    if x.numel():
        kernels.rope_kernel(
            x.detach().numpy(), first.contiguous().numpy(), second.contiguous().numpy(),
            out.numpy(),
        )  # fmt: skip
    return out


def layer_norm_forward_fused(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`nn._LayerNorm.forward` with a weight and a bias, by the fused kernel (the same bits and
    the same saved tensors).

    Args:
        x: contiguous float32 CPU (..., d), d >= 1.
        weight, bias: contiguous float32 CPU (d,).
        eps: added to the variance.

    Returns:
        `(y, xhat, rstd)`: float32 (..., d), float64 (..., d), float64 (..., 1).
    """
    kernels = _loaded_kernels()  # callers check use_fused first
    d = x.shape[-1]
    y, xhat, rstd = _norm_outputs(x)
    if x.numel():
        kernels.layernorm_forward_kernel(
            x.detach().view(-1, d).numpy(), _flat(weight), _flat(bias), float(eps), 1.0 / d,
            y.view(-1, d).numpy(), xhat.view(-1, d).numpy(), _flat(rstd),
        )  # fmt: skip
    return y, xhat, rstd


def layer_norm_backward_fused(
    grad: torch.Tensor, weight: torch.Tensor, xhat: torch.Tensor, rstd: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`nn._LayerNorm.backward` with a weight and a bias, by the fused kernel (the same bits).

    Args:
        grad: contiguous float32 CPU (..., d).
        weight: contiguous float32 CPU (d,).
        xhat, rstd: the forward's saved float64 (..., d) and (..., 1).

    Returns:
        `(gx, gw, gb)`: float32 (..., d), (d,) and (d,).
    """
    kernels = _loaded_kernels()  # callers check use_fused first
    d = grad.shape[-1]
    gx = torch.empty_like(grad)
    gw = torch.zeros(d, dtype=torch.float32)
    gb = torch.zeros(d, dtype=torch.float32)
    if grad.numel():
        kernels.layernorm_backward_kernel(
            grad.detach().view(-1, d).numpy(), _flat(weight), xhat.view(-1, d).numpy(),
            _flat(rstd), 1.0 / d, gx.view(-1, d).numpy(), gw.numpy(), gb.numpy(),
        )  # fmt: skip
    return gx, gw, gb


def _activation_forward(kernel_name: str, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """An elementwise activation's fused forward: `(y float32, s float64)` of `x`'s shape."""
    kernels = _loaded_kernels()  # callers check use_fused first
    y = torch.empty_like(x)
    s = torch.empty(x.shape, dtype=torch.float64)
    if x.numel():
        getattr(kernels, kernel_name)(
            _flat(x), _flat(y), _flat(s), kernels.EXP_TABLE, kernels.POW2_TABLE
        )
    return y, s


def _activation_backward(
    kernel_name: str, x: torch.Tensor, s: torch.Tensor, grad: torch.Tensor
) -> torch.Tensor:
    """An elementwise activation's fused backward: the float32 input gradient."""
    kernels = _loaded_kernels()  # callers check use_fused first
    out = torch.empty_like(grad)
    if x.numel():
        getattr(kernels, kernel_name)(_flat(x), _flat(s), _flat(grad), _flat(out))
    return out


def silu_forward_fused(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """`elementwise.silu64(to64(x))` rounded to float32, by the fused kernel.

    Args:
        x: contiguous float32 CPU tensor.

    Returns:
        `(y, s)`: float32 SiLU and the float64 sigmoid, both of `x`'s shape.
    """
    return _activation_forward("silu_forward_kernel", x)


def silu_backward_fused(x: torch.Tensor, s: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
    """`_Silu.backward` by the fused kernel (the same bits).

    Args:
        x: the forward's contiguous float32 CPU input.
        s: the forward's float64 sigmoid (contiguous, `x`'s shape).
        grad: contiguous float32 CPU gradient of `x`'s shape.

    Returns:
        float32 gradient of `x`'s shape.
    """
    return _activation_backward("silu_backward_kernel", x, s, grad)


def gelu_forward_fused(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """`elementwise.gelu64(to64(x))` rounded to float32, by the fused kernel.

    Args:
        x: contiguous float32 CPU tensor.

    Returns:
        `(y, s)`: float32 GELU and the float64 logistic factor, both of `x`'s shape.
    """
    return _activation_forward("gelu_forward_kernel", x)


def gelu_backward_fused(x: torch.Tensor, s: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
    """`_Gelu.backward` by the fused kernel (the same bits).

    Args:
        x: the forward's contiguous float32 CPU input.
        s: the forward's float64 logistic factor (contiguous, `x`'s shape).
        grad: contiguous float32 CPU gradient of `x`'s shape.

    Returns:
        float32 gradient of `x`'s shape.
    """
    return _activation_backward("gelu_backward_kernel", x, s, grad)
