"""Which exact matrix-product path runs faster on a device: float64 GEMM or int8 slices.

`gemm.matmul64`'s two paths give the same bits, so choosing between them is a matter of speed
only; this module times both once per device and process. Its products are thrown away:
nothing it computes reaches a result (which is why the inventory of repro's arithmetic,
`tests/unit/veritrain/test_repro_inventory.py`, does not scan it).

Run: not a script; `gemm.gemm_backend(device)` calls `fastest_backend`.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable

import torch

logger = logging.getLogger(__name__)

__all__ = ["fastest_backend"]

Product = Callable[[torch.Tensor, torch.Tensor, str], torch.Tensor]
_SHAPE = (2048, 1024, 1024)  # (m, k, n): a transformer block's linear at a modest batch


def fastest_backend(device: torch.device, product: Product) -> str:
    """The faster of "float64" and "int8" for `product` on `device`, timed once and cached.

    A CPU gets "float64" without timing: torch's CPU int8 GEMM (`torch._int_mm`) is a plain
    loop, about 25x slower than a float64 GEMM at 512 x 1024 x 512 on an AVX2 EPYC. On a GPU
    both paths run a (2048 x 1024) @ (1024 x 1024) product four times, interleaved, on inputs
    from a private generator (the training streams are never touched); the first round is a
    warm-up and the minimum of the other three decides. A GPU without an int8 GEMM (a
    RuntimeError from torch) gets "float64".

    Args:
        device: the device the products run on.
        product: `(a, b, backend) -> float64 a @ b`, the function whose paths are timed.

    Returns:
        "float64" or "int8".
    """
    return _fastest(device.type, device.index, product)


@functools.cache
def _fastest(kind: str, index: int | None, product: Product) -> str:
    if kind != "cuda" or not hasattr(torch, "_int_mm"):
        return "float64"
    device = torch.device(kind) if index is None else torch.device(kind, index)
    m, k, n = _SHAPE
    gen = torch.Generator(device=device).manual_seed(0)
    a = torch.randn(m, k, generator=gen, device=device)
    b = torch.randn(k, n, generator=gen, device=device)
    times: dict[str, list[float]] = {"float64": [], "int8": []}
    try:
        for _ in range(4):
            for name in times:
                torch.cuda.synchronize(device)
                t0 = time.perf_counter()
                product(a, b, name)
                torch.cuda.synchronize(device)
                times[name].append(time.perf_counter() - t0)
    except RuntimeError as err:
        logger.info("repro GEMM on %s: float64 (no int8 GEMM: %s)", device, err)
        return "float64"
    best = {name: min(ts[1:]) for name, ts in times.items()}
    choice = min(best, key=lambda name: best[name])
    logger.info(
        "repro GEMM on %s: %s (float64 %.2f ms, int8 %.2f ms per %dx%dx%d product)",
        device,
        choice,
        best["float64"] * 1e3,
        best["int8"] * 1e3,
        m,
        k,
        n,
    )
    return choice
