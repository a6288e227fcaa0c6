"""Reproducible random initialisation: `normal_` with the same bytes at every SIMD level.

`torch.randn`, `Tensor.normal_` and `torch.nn.init.normal_` fill tensors of 16 or more
entries with a vectorised Box-Muller transform whose log/cos come from the SIMD level's own
approximations: the same seed gives other bits under `ATEN_CPU_CAPABILITY=default` and `avx2`
(measured with torch 2.13 CPU; so does `nn.Embedding`'s default init). Integer draws
(`torch.randint` on a CPU generator) do not depend on the SIMD level, so `normal_` draws
integers and applies Box-Muller itself with `log64` (this package) and a cosine built from
exact range reduction and a Taylor polynomial in float64 (Box and Muller, Ann. Math. Statist.
1958).

Run: not a script; `from veritrain.repro import normal_; normal_(w, std=0.02)`.
"""

from __future__ import annotations

import math

import torch

from veritrain.repro._common import ReproError, check_float, horner
from veritrain.repro.elementwise import log64
from veritrain.repro.sqrt import sqrt64

__all__ = ["cos2pi64", "normal_"]

_TWO_PI = float.fromhex("0x1.921fb54442d18p+2")  # 2 pi correctly rounded
# cos t = sum (-1)^k t^(2k)/(2k)!, sin t / t = sum (-1)^k t^(2k)/(2k+1)!, k = 10 .. 0 (Horner)
_COS_COEFS = [(-1.0) ** k / math.factorial(2 * k) for k in range(10, -1, -1)]
_SIN_COEFS = [(-1.0) ** k / math.factorial(2 * k + 1) for k in range(10, -1, -1)]
_BITS = 53


def cos2pi64(u: torch.Tensor) -> torch.Tensor:
    """`cos(2 pi u)` for a float64 tensor, from IEEE basic operations only (no autograd).

    The reduction is exact: `t = u - round(u)` in [-1/2, 1/2], then the symmetries
    cos(2 pi t) = cos(2 pi |t|) = -cos(2 pi (1/2 - |t|)) = sin(2 pi (1/4 - |t|)) bring the
    argument into [0, pi/4], where Taylor polynomials of degree 20/21 are below 1e-20.

    Args:
        u: float64 tensor (any finite values; exact for dyadic `u` such as `k * 2**-53`).

    Returns:
        float64 tensor, absolute error about 1e-16.
    """
    t = torch.abs(u - torch.round(u))  # [0, 1/2], exact
    flip = t > 0.25
    a = torch.where(flip, 0.5 - t, t)  # [0, 1/4], exact
    use_sin = a > 0.125
    b = torch.where(use_sin, 0.25 - a, a)  # [0, 1/8], exact
    theta = b * _TWO_PI  # [0, pi/4]
    th2 = theta * theta
    c = horner(_COS_COEFS, th2)
    s = horner(_SIN_COEFS, th2) * theta
    y = torch.where(use_sin, s, c)
    return torch.where(flip, -y, y)


@torch.no_grad()
def normal_(
    tensor: torch.Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Fill `tensor` in place with normal samples that are the same bytes on every machine.

    Two 53-bit integers per entry come from `torch.randint` on a CPU generator (`generator`,
    or torch's default CPU generator that `torch.manual_seed` seeds), become
    `u1 = (k1 + 1) * 2**-53` in (0, 1] and `u2 = k2 * 2**-53`, and Box-Muller gives
    `sqrt(-2 log u1) * cos(2 pi u2)` in float64 (`log64`, `cos2pi64`, correctly rounded
    sqrt); then `* std + mean` and one rounding to the tensor's dtype. The draws happen on the
    CPU and are copied to the tensor's device, so a CUDA tensor gets the same values too.

    Args:
        tensor: float32 or float64 tensor to overwrite (any shape and device).
        mean: mean of the distribution.
        std: standard deviation (>= 0).
        generator: a CPU `torch.Generator`, or None for the default one.

    Returns:
        `tensor`, filled.

    Raises:
        ReproError: a non-float tensor, a negative std, or a non-CPU generator.
    """
    check_float("normal_", tensor)
    if not std >= 0.0:
        raise ReproError(f"repro.normal_: std must be >= 0, got {std}")
    if generator is not None and generator.device.type != "cpu":
        raise ReproError("repro.normal_: the generator must be a CPU generator")
    n = tensor.numel()
    draws = torch.randint(0, 2**_BITS, (2, n), generator=generator, dtype=torch.int64)
    scale = 1.0 / float(2**_BITS)  # exact power of two, no float pow
    u1 = (draws[0].to(torch.float64) + 1.0) * scale  # exact: integers below 2**53
    u2 = draws[1].to(torch.float64) * scale
    z = sqrt64(log64(u1) * -2.0) * cos2pi64(u2)
    z = z * std + mean
    tensor.copy_(z.reshape(tensor.shape).to(tensor.dtype))
    return tensor
