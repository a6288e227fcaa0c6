"""Conformance of the two exact matrix-product paths of `veritrain.repro.gemm`.

Part of `veritrain.repro.conformance.run_conformance` (the same `ConformanceResult`s, the
same device handling). Both paths compute a product of integer mantissas `|q| <= 2**p` with
`k * 2**(2p) <= 2**53` (`gemm.mantissa_bits`), and both are compared with numpy's int64
product of the same integers, computed on the CPU:

- "matmul": torch's float64 GEMM (`torch.matmul`) of the integers times power-of-two row and
  column scales, in the operand layouts repro uses, and batched, followed by `+ 0.0` as in
  `gemm._gemm64` (torch's CPU GEMM leaves -0 for a contraction of length 1). Exact whatever
  the order of the sums; the result's bits must equal the exactly scaled int64 product, a
  zero result included (+0, as the int8 path gives).
- "matmul:int8": `gemm_int8.int_product`, the int8 slices multiplied by `torch._int_mm` with
  int32 accumulation and summed in int64, on the same shape classes plus the ones its padding
  and blocking exist for (fewer than 17 rows, dims that are not multiples of 8, a contraction
  longer than one int32 block), every mantissa at +-2**p (the largest top slice and the
  largest int32 sums), and zeros. Where the device has no int8 GEMM the check reports the
  error as one mismatch, so a device that cannot take the int8 path says so.

Run: not a script; `run_conformance("cpu", n)` includes these checks (`GEMM_CHECKS`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch

from veritrain.repro.conformance_base import Array, ConformanceResult, _Ctx, _host, _result
from veritrain.repro.gemm import mantissa_bits
from veritrain.repro.gemm_int8 import K_BLOCK, int_product

__all__ = ["GEMM_CHECKS"]


def _operands(
    rng: np.random.Generator, mm: int, k: int, nn: int, mode: str
) -> tuple[Array, Array, int]:
    """Integer mantissas (mm, k) and (k, nn), |q| <= 2**p, for one shape class and mode."""
    p = mantissa_bits(k)
    top = 1 << p
    if mode == "extreme":  # every product 2**(2p) with one sign: sums of k * 2**(2p)
        a = np.full((mm, k), top, dtype=np.int64) * rng.choice([-1, 1], (mm, 1))
        b = np.full((k, nn), top, dtype=np.int64) * rng.choice([-1, 1], (1, nn))
    else:
        a = rng.integers(-top, top + 1, (mm, k))
        b = rng.integers(-top, top + 1, (k, nn))
    if mode == "zeros":  # an all-zero row against negative columns, and a cancelling pair
        a[0] = 0
        b[:, 0] = -np.abs(b[:, 0]) - 1
        if k >= 2 and mm >= 2:
            a[1] = 0
            a[1, :2] = 1
            b[:2, 0] = [5, -5]
    return a, b, p


_MODES = ("random", "extreme", "zeros")


def _check_matmul(ctx: _Ctx) -> list[ConformanceResult]:
    """float64 GEMM of integer-valued operands |q| <= 2**p, k * 2**(2p) <= 2**53, times
    power-of-two row/column scales: must equal the int64 product exactly (zeros as +0)."""
    rng = ctx.rng("matmul")
    got_all: list[Array] = []
    ref_all: list[Array] = []
    where: list[str] = []
    shapes = [(1, 64, 1), (4, 1, 4), (16, 1024, 16), (8, 4096, 8), (3, 7, 5)]
    m = max(int(math.sqrt(ctx.n)), 1)
    shapes.append((m, 64, m + 1))
    for mm, k, nn in shapes:
        for mode in _MODES:
            a, b, _ = _operands(rng, mm, k, nn, mode)
            ea = rng.integers(-60, 61, (mm, 1))
            eb = rng.integers(-60, 61, (1, nn))
            af = np.ldexp(a.astype(np.float64), ea)
            bf = np.ldexp(b.astype(np.float64), eb)
            exact = a @ b  # int64, |.| <= 2**53
            ref = np.ldexp(exact.astype(np.float64), ea + eb)  # exact conversion and scaling
            got = _host(torch.matmul(ctx.dev(af), ctx.dev(bf)).add_(0.0))
            got_all.append(got.reshape(-1))
            ref_all.append(ref.reshape(-1))
            where += [f"({mm}x{k}x{nn} {mode})"] * got.size
            # the operand layout repro uses: B as the transpose of a row-major (n, k) array
            bt = np.ascontiguousarray(bf.T)
            got = _host(torch.matmul(ctx.dev(af), ctx.dev(bt).transpose(-1, -2)).add_(0.0))
            got_all.append(got.reshape(-1))
            ref_all.append(ref.reshape(-1))
            where += [f"({mm}x{k}x{nn} {mode}, transposed B)"] * got.size
    # batched
    k = 256
    p = mantissa_bits(k)
    a = rng.integers(-(1 << p), (1 << p) + 1, (4, 32, k))
    b = rng.integers(-(1 << p), (1 << p) + 1, (4, k, 32))
    got = _host(
        torch.matmul(ctx.dev(a.astype(np.float64)), ctx.dev(b.astype(np.float64))).add_(0.0)
    )
    got_all.append(got.reshape(-1))
    ref_all.append(np.matmul(a, b).astype(np.float64).reshape(-1))
    where += ["(batched 4x32x256x32)"] * got.size
    got_cat, ref_cat = np.concatenate(got_all), np.concatenate(ref_all)
    return [_result("matmul", "float64", got_cat, ref_cat, lambda i: where[i], nan_equal=False)]


def _check_matmul_int8(ctx: _Ctx) -> list[ConformanceResult]:
    """`gemm_int8.int_product` (int8 slices, `torch._int_mm`, int64 sums) against numpy's
    int64 product, on every shape class of `_check_matmul` and the padding/blocking ones."""
    rng = ctx.rng("matmul:int8")
    got_all: list[Array] = []
    ref_all: list[Array] = []
    where: list[str] = []
    # the square shape is capped: a CPU's int8 GEMM is a plain loop (seconds at n = 10**6)
    m = min(max(int(math.sqrt(ctx.n)), 1), 256)
    shapes = [(1, 64, 1), (4, 1, 4), (16, 1024, 16), (8, 4096, 8), (3, 7, 5), (m, 64, m + 1)]
    shapes += [(24, 512, 40), (17, 9, 13), (33, 200, 8)]  # GPU-aligned and unaligned dims
    shapes.append((17, K_BLOCK + 8, 8))  # two int32 blocks of the contraction
    try:
        for mm, k, nn in shapes:
            for mode in _MODES if k <= K_BLOCK else ("extreme",):
                a, b, p = _operands(rng, mm, k, nn, mode)
                qb_t = ctx.dev(np.ascontiguousarray(b.T))
                got = _host(int_product(ctx.dev(a), qb_t, p))
                got_all.append(got.reshape(-1))
                ref_all.append((a @ b).reshape(-1))
                where += [f"({mm}x{k}x{nn} {mode})"] * got.size
    except RuntimeError as err:  # no int8 GEMM on this device: the path is not available
        first = str(err).splitlines()[0][:200]
        return [ConformanceResult("matmul:int8", "int8 slices", 1, 1, "torch._int_mm", first)]
    got_cat, ref_cat = np.concatenate(got_all), np.concatenate(ref_all)
    return [_result("matmul:int8", "int8 slices", got_cat, ref_cat, lambda i: where[i])]


GEMM_CHECKS: list[Callable[[_Ctx], list[ConformanceResult]]] = [
    _check_matmul,
    _check_matmul_int8,
]
