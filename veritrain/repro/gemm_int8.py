"""Exact integer matrix products on int8 units: the Ozaki scheme with int8 slices.

`int_product(qa, qb)` multiplies two int64 matrices of integer mantissas (`|q| <= 2**p`,
`k * 2**(2p) <= 2**53`, as `veritrain.repro.gemm.quantize` makes them) exactly, with int8
GEMMs that accumulate in int32 (`torch._int_mm`: tensor cores on a GPU). `gemm.matmul64`
scales the result by the same powers of two as its float64 path, so the two paths give the
same float64 values bit for bit, on any device (the conformance suite's "matmul" and
"matmul:int8" checks prove each against the exact int64 product on the machine at hand).

Method (Ozaki, Ogita, Oishi, Rump 2012, "Error-free transformations of matrix
multiplication by using fast routines of matrix multiplication and its applications"; the
integer form: Ootomo, Ozaki, Yokota 2024, "DGEMM on integer matrix multiplication unit"):

1. Each mantissa is split into `s = slice_count(p)` balanced base-256 digits,
   `q = sum_i d_i * 256**i` with every `d_i` in [-128, 127] (an int8): `t = r + 128`,
   `d = (t & 255) - 128`, `r' = t >> 8` (an arithmetic shift: `r = d + 256 r'` exactly).
2. Every pair of slices is multiplied on the int8 units with int32 accumulation. A length-k
   dot product of int8 digits is at most `k * 2**14` in magnitude: exact in int32 for
   `k <= 2**16`; longer contractions run in blocks of `2**16` whose int32 results are summed
   in int64.
3. The products of equal weight `256**t` (`i + j = t`) are summed in int64 and the weights
   applied by Horner's rule with shifts (`C = (C << 8) + S_t`): exact, `|C| <= 2**53`.

Every step is integer arithmetic, so the result does not depend on the order of any sum.
Operands are padded with zero rows and columns to the shapes `torch._int_mm` takes on a GPU
(more than 16 rows, inner and column dims multiples of 8); zeros add nothing.

Run: not a script; `gemm.matmul64` calls it when `gemm.gemm_backend` says "int8".
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["K_BLOCK", "int_product", "int_slices", "slice_count"]

K_BLOCK = 1 << 16  # contraction block: k * 128 * 128 <= 2**30 < 2**31 (int32)
_MIN_ROWS = 17  # torch._int_mm on CUDA takes more than 16 rows
_ALIGN = 8  # ... and inner and column dims that are multiples of 8


def slice_count(p: int) -> int:
    """Int8 slices needed for integer mantissas `|q| <= 2**p` (balanced base-256 digits).

    After each digit the rest is `floor((r + 128) / 256)`, so its bound goes from `B` to
    `(B + 128) // 256`; the last slice holds the rest once that bound is at most 127.

    Args:
        p: mantissa bits, 0 <= p <= 62.

    Returns:
        The number of slices `s >= 1` (3 for p = 17..22, 4 for p = 23..30).
    """
    bound, s = 1 << p, 1
    while bound > 127:
        bound = (bound + 128) >> 8
        s += 1
    return s


def int_slices(q: torch.Tensor, s: int) -> list[torch.Tensor]:
    """Balanced base-256 digits of integers: `q = sum_i out[i] * 256**i`, each int8.

    Args:
        q: int64 tensor of any shape whose entries satisfy `|q| <= 2**p` with
            `slice_count(p) <= s`.
        s: number of slices (>= 1).

    Returns:
        `s` int8 tensors of `q`'s shape, least significant first; every digit but the last
        lies in [-128, 127] by construction, the last one by the bound on `|q|` (a `q` out of
        range would wrap in the final cast: callers keep to `slice_count`).
    """
    out: list[torch.Tensor] = []
    r = q
    for _ in range(s - 1):
        t = r + 128
        out.append((t.bitwise_and(255) - 128).to(torch.int8))
        r = t.bitwise_right_shift(8)  # floor((r + 128) / 256): r = digit + 256 * r' exactly
    out.append(r.to(torch.int8))
    return out


def _round_up(n: int, to: int) -> int:
    return -(-n // to) * to


def _mm_blocks(a: torch.Tensor, bt: torch.Tensor) -> torch.Tensor:
    """`a @ bt^T` of int8 (m, k) and (n, k) digit matrices, exact, as int64 (m, n)."""
    k = a.shape[1]
    acc: torch.Tensor | None = None
    for k0 in range(0, k, K_BLOCK):
        ab = a[:, k0 : k0 + K_BLOCK].contiguous() if k > K_BLOCK else a
        bb = bt[:, k0 : k0 + K_BLOCK].contiguous() if k > K_BLOCK else bt
        part = torch._int_mm(ab, bb.t()).to(torch.int64)  # int32 sums of |.| <= 2**30
        acc = part if acc is None else acc + part
    assert acc is not None  # k >= 1
    return acc


def int_product(qa: torch.Tensor, qb_t: torch.Tensor, p: int) -> torch.Tensor:
    """Exact product `qa @ qb_t^T` of integer mantissa matrices, by int8 slices.

    Args:
        qa: int64 (m, k), `|qa| <= 2**p`.
        qb_t: int64 (n, k) (the right operand's columns as rows), `|qb_t| <= 2**p`, on
            `qa`'s device.
        p: the mantissa bits, with `k * 2**(2p) <= 2**53` (`gemm.mantissa_bits(k)`).

    Returns:
        int64 (m, n): the exact integer product (every entry `<= 2**53` in magnitude).

    Raises:
        RuntimeError: from torch, where the device has no int8 GEMM (`torch._int_mm`).
    """
    m, k = qa.shape
    n = qb_t.shape[0]
    kp = _round_up(k, _ALIGN)
    qa = F.pad(qa, (0, kp - k, 0, max(m, _MIN_ROWS) - m))
    qb_t = F.pad(qb_t, (0, kp - k, 0, _round_up(n, _ALIGN) - n))
    s = slice_count(p)
    da, db = int_slices(qa, s), int_slices(qb_t, s)
    total: torch.Tensor | None = None
    for t in range(2 * s - 2, -1, -1):  # Horner from the heaviest weight 256**(2s-2)
        st: torch.Tensor | None = None
        for i in range(max(0, t - s + 1), min(t, s - 1) + 1):
            prod = _mm_blocks(da[i], db[t - i])
            st = prod if st is None else st.add_(prod)
        assert st is not None
        total = st if total is None else total.bitwise_left_shift_(8).add_(st)
    assert total is not None
    return total[:m, :n]
