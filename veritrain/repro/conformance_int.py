"""Conformance checks of integer arithmetic, indexing, `torch.randint` and the plumbing that
moves bits without rounding (`veritrain.repro.conformance`).

Run: not a script; `veritrain.repro.conformance.run_conformance` runs them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch

from veritrain.repro.conformance_base import (
    _FMTS,
    F32,
    F64,
    Array,
    ConformanceResult,
    _Ctx,
    _floats,
    _host,
    _result,
)

__all__ = ["INT_CHECKS", "PLUMBING_CHECKS"]


def _check_int(ctx: _Ctx) -> list[ConformanceResult]:
    out: list[ConformanceResult] = []
    for dt in (np.int32, np.int64):
        name = np.dtype(dt).name
        bits = np.dtype(dt).itemsize * 8
        rng = ctx.rng(f"int/{name}")
        lim = 1 << (bits - 2)
        a = rng.integers(-lim, lim, ctx.n, dtype=dt)
        b = rng.integers(-lim, lim, ctx.n, dtype=dt)
        a[: ctx.n // 2] = rng.integers(-1100, 1100, ctx.n // 2)
        ad, bd = ctx.dev(a), ctx.dev(b)
        c = int(rng.integers(-1000, 1000))
        out.append(_result("int_add", name, _host(ad + bd), a + b, [a, b]))
        for lo, hi in ((0, None), (-5, 700), (None, -3)):
            ref = a.copy()
            if lo is not None:
                ref = np.maximum(ref, dt(lo))
            if hi is not None:
                ref = np.minimum(ref, dt(hi))
            got = _host(ad.clone().clamp_(min=lo, max=hi))
            out.append(_result("clamp", f"{name} (clamp_ {lo}, {hi})", got, ref, [a]))
        out.append(_result("int_add", name + " (scalar)", _host(ad + c), a + dt(c), [a]))
        out.append(_result("int_add", name + " (add_)", _host(ad.clone().add_(c)), a + dt(c), [a]))
        out.append(_result("int_sub", name, _host(ad - bd), a - b, [a, b]))
        out.append(_result("int_sub", name + " (rsub)", _host(c - ad), dt(c) - a, [a]))
        full = rng.integers(np.iinfo(dt).min, np.iinfo(dt).max, ctx.n, dtype=dt, endpoint=True)
        fd = ctx.dev(full)
        for m in (1, 31, int(rng.integers(0, 1 << 30))):
            out.append(
                _result("int_bitwise_and", f"{name} (& {m})", _host(fd & m), full & dt(m), [full])
            )
            got = _host(fd.bitwise_and(m))
            out.append(
                _result("int_bitwise_and", f"{name} (bitwise_and {m})", got, full & dt(m), [full])
            )
        out.append(_result("int_bitwise_and", name, _host(fd & bd), full & b, [full, b]))
        for s in (1, 5, int(rng.integers(2, bits - 1))):
            ref = np.floor_divide(full, dt(1) << dt(s))  # floor: the arithmetic shift
            got = _host(fd.bitwise_right_shift(s))
            out.append(_result("int_shift_right", f"{name} (>> {s})", got, ref, [full]))
            got = _host(fd.clone().bitwise_right_shift_(s))
            out.append(_result("int_shift_right", f"{name} (>>= {s})", got, ref, [full]))
        if dt is np.int64:
            for s in (52, 1, 30):
                lim_s = 1 << (62 - s)
                v = rng.integers(-lim_s, lim_s, ctx.n, dtype=np.int64)
                ref = v * np.int64(1 << s)  # exact: no overflow
                got = _host(ctx.dev(v).bitwise_left_shift_(s))
                out.append(_result("int_shift_left", f"{name} (<< {s})", got, ref, [v]))
    rng = ctx.rng("bool")
    p = rng.integers(0, 2, ctx.n).astype(bool)
    q = rng.integers(0, 2, ctx.n).astype(bool)
    pd, qd = ctx.dev(p), ctx.dev(q)
    out.append(_result("bool_and", "bool", _host(pd & qd), p & q, [p, q]))
    out.append(_result("bool_or", "bool", _host(pd | qd), p | q, [p, q]))
    width = 32
    rows = max(ctx.n // width, 1)
    r = rng.random((rows, width)) < rng.random((rows, 1)) ** 4  # some all-False rows
    rd = ctx.dev(r)
    got = np.array([bool(rd[i].any()) for i in range(min(rows, 256))])
    out.append(
        _result(
            "bool_any",
            "bool",
            got,
            np.asarray(r[: len(got)].any(axis=1)),
            lambda i: f"row {i}",
            checked=len(got) * width,
        )
    )
    got = _host(rd.sum(dim=1))
    out.append(
        _result(
            "bool_sum",
            "bool->int64",
            got,
            r.sum(axis=1).astype(np.int64),
            lambda i: f"row {i}",
            checked=r.size,
        )
    )
    got = np.array([int(rd[i].sum().item()) for i in range(min(rows, 256))], dtype=np.int64)
    out.append(
        _result(
            "bool_sum",
            "bool->int64 (item)",
            got,
            r[: len(got)].sum(axis=1).astype(np.int64),
            lambda i: f"row {i}",
        )
    )
    # dtype views float64 <-> int64, and the successor trick of repro.sqrt
    x = _floats(rng, F64, ctx.n)
    xd = ctx.dev(x)
    out.append(
        _result("view_bits", "float64->int64", _host(xd.view(torch.int64)), x.view(np.int64), [x])
    )
    iv = x.view(np.int64)
    back = _host(ctx.dev(iv).view(torch.float64))
    out.append(_result("view_bits", "int64->float64", back, x, [x], nan_equal=False))
    succ = _host((xd.view(torch.int64) + 1).view(torch.float64))
    out.append(
        _result(
            "view_bits", "float64 successor", succ, (iv + 1).view(np.float64), [x], nan_equal=False
        )
    )
    # float32 <-> int32, neighbours by +-1 on the bit pattern (repro.sqrt's float32 path)
    y = _floats(rng, F32, ctx.n)
    yd = ctx.dev(y)
    yi = y.view(np.int32)
    out.append(_result("view_bits", "float32->int32", _host(yd.view(torch.int32)), yi, [y]))
    for step in (1, -1):
        got = _host((yd.view(torch.int32) + step).view(torch.float32))
        ref = (yi + np.int32(step)).view(np.float32)
        out.append(
            _result("view_bits", f"float32 neighbour {step:+d}", got, ref, [y], nan_equal=False)
        )
    return out


def _check_index(ctx: _Ctx) -> list[ConformanceResult]:
    out: list[ConformanceResult] = []
    rng = ctx.rng("index")
    d = 16
    nrows = max(ctx.n // d, 1)
    for fmt in _FMTS:
        table = _floats(rng, fmt, 1000 * d).reshape(1000, d)
        ids = rng.integers(0, 1000, nrows)
        got = _host(ctx.dev(table).index_select(0, ctx.dev(ids)))
        out.append(
            _result(
                "index_select",
                fmt.name,
                got,
                table[ids],
                lambda i: f"row {i // d}",
                nan_equal=False,
            )
        )
    # float64 integers, as repro uses them
    src = rng.integers(-(1 << 53), 1 << 53, (nrows, d)).astype(np.float64)
    idx = rng.integers(0, d, (nrows, d))  # repeated columns too: scatter_ writes 1.0 alike
    got = _host(ctx.dev(src).gather(1, ctx.dev(idx)))
    out.append(
        _result("gather", "float64", got, np.take_along_axis(src, idx, 1), lambda i: f"row {i}")
    )
    z = np.zeros((nrows, d))
    np.put_along_axis(z, idx, 1.0, 1)
    got = _host(
        torch.zeros((nrows, d), dtype=torch.float64, device=ctx.device).scatter_(
            1, ctx.dev(idx), 1.0
        )
    )
    out.append(_result("scatter_", "float64", got, z, lambda i: f"entry {i}"))
    # index_put_(accumulate=True): N rows of p-bit integers, p = 53 - ceil(log2 N), heavy
    # repetition of ids (every partial sum stays below 2**53)
    n_rows = nrows
    p = 53 - (n_rows - 1).bit_length()
    for vocab in (7, 1000):
        q = rng.integers(-(1 << p), (1 << p) + 1, (n_rows, d))
        q[: n_rows // 4] = (1 << p) * np.sign(q[: n_rows // 4])  # extremes
        ids = rng.integers(0, vocab, n_rows)
        ref = np.zeros((vocab, d), dtype=np.int64)
        np.add.at(ref, ids, q)
        acc = torch.zeros((vocab, d), dtype=torch.float64, device=ctx.device)
        acc.index_put_((ctx.dev(ids),), ctx.dev(q.astype(np.float64)), accumulate=True)
        out.append(
            _result(
                "index_put_accumulate",
                f"float64 (V={vocab})",
                _host(acc),
                ref.astype(np.float64),
                lambda i: f"entry {i}",
                checked=n_rows * d,
            )
        )
    return out


def _check_randint(ctx: _Ctx) -> list[ConformanceResult]:
    """torch.randint(0, 2**53) on a seeded CPU generator (as repro.normal_ draws) against
    numpy's MT19937 words combined as torch's CPU generator does."""
    seed = ctx.seed & 0xFFFFFFFF
    count = 2 * ((ctx.n + 1) // 2)
    gen = torch.Generator().manual_seed(seed)
    got = _host(torch.randint(0, 2**53, (2, count // 2), generator=gen, dtype=torch.int64))
    words = np.random.RandomState(seed).randint(0, 2**32, 2 * count, dtype=np.uint64)
    hi, lo = words[0::2], words[1::2]
    ref = (((hi << np.uint64(32)) | lo) % np.uint64(1 << 53)).astype(np.int64)
    return [
        _result(
            "randint",
            "int64 (CPU generator)",
            got,
            ref.reshape(2, -1),
            lambda i: f"draw {i}, seed {seed}",
        )
    ]


# ----------------------------------------------------------------------------------------
# plumbing: bit preservation, NaN payloads included


def _check_plumbing(ctx: _Ctx) -> list[ConformanceResult]:
    out: list[ConformanceResult] = []
    for fmt in _FMTS:
        rng = ctx.rng(f"plumbing/{fmt.name}")
        rows = max(ctx.n // 64, 1)
        x = _floats(rng, fmt, rows * 64).reshape(rows, 64)
        xd = ctx.dev(x)
        nm = fmt.name

        def res(name: str, got: torch.Tensor, ref: Array, nm: str = nm) -> None:
            out.append(
                _result(
                    f"plumbing:{name}",
                    nm,
                    _host(got),
                    ref,
                    lambda i: f"flat index {i}",
                    nan_equal=False,
                )
            )

        res("reshape", xd.reshape(-1, 16), x.reshape(-1, 16))
        res("view", xd.view(rows, 4, 16), x.reshape(rows, 4, 16))
        res("transpose", xd.transpose(-1, -2).contiguous(), np.ascontiguousarray(x.T))
        res("transpose", xd.t().contiguous(), np.ascontiguousarray(x.T), nm + " (t)")
        res("contiguous", xd.t().contiguous().t().contiguous(), x)
        res("unsqueeze", xd.unsqueeze(1), x[:, None, :])
        res("squeeze", xd[:, :1].squeeze(1), x[:, 0])
        res("expand", xd[:1].expand(rows, 64).contiguous(), np.broadcast_to(x[:1], x.shape))
        res(
            "movedim",
            xd.reshape(rows, 8, 8).movedim(1, -1).contiguous(),
            np.ascontiguousarray(np.moveaxis(x.reshape(rows, 8, 8), 1, -1)),
        )
        res("clone", xd.clone(), x)
        parts = [xd[r0 : r0 + 3].reshape(-1) for r0 in range(0, min(rows, 30), 3)]
        ref_cat = np.concatenate([x[r0 : r0 + 3].reshape(-1) for r0 in range(0, min(rows, 30), 3)])
        res("cat", torch.cat(parts), ref_cat)
        res(
            "cat",
            torch.cat([xd.reshape(-1), xd[:1].reshape(-1)]),
            np.concatenate([x.reshape(-1), x[:1].reshape(-1)]),
            nm + " (all)",
        )
        res("copy_", torch.empty_like(xd).copy_(xd), x)
        res("getitem", xd[..., :32], x[..., :32])
        res("getitem", xd[3 % rows], x[3 % rows], nm + " (row)")
        res(
            "pad",
            torch.nn.functional.pad(xd[:, :50], (0, 14)),
            np.pad(x[:, :50], ((0, 0), (0, 14))),
        )
        xi = x.view(np.int64 if fmt.prec > 24 else np.int32).astype(np.int64)
        res(
            "pad",
            torch.nn.functional.pad(ctx.dev(xi)[:, :50], (0, 6, 0, 9)),
            np.pad(xi[:, :50], ((0, 9), (0, 6))),
            nm + " (int64, two dims)",
        )
        res("to", xd.to(fmt.torch_dtype), x, nm + " (same dtype)")
        res("to", xd.to("cpu"), x, nm + " (to cpu)")
        fills = [0.0, -0.0, 1.0, math.nan, math.inf, 0.1, 1e-40, 2.0]
        for c in fills:
            ref = np.full(x.shape, np.array(c, dtype=np.float64).astype(fmt.np_dtype))
            res("fill", torch.full_like(xd, c), ref, f"{nm} (full_like {c!r})")
        res("fill", torch.zeros_like(xd), np.zeros(x.shape, fmt.np_dtype), nm + " (zeros_like)")
        res("fill", torch.ones_like(xd), np.ones(x.shape, fmt.np_dtype), nm + " (ones_like)")
        res(
            "fill",
            torch.zeros(x.shape, dtype=fmt.torch_dtype, device=ctx.device),
            np.zeros(x.shape, fmt.np_dtype),
            nm + " (zeros)",
        )
        vals = x.reshape(-1)[: ctx.n].tolist()
        res(
            "tensor",
            torch.tensor(vals, dtype=fmt.torch_dtype, device=ctx.device),
            np.array(vals, dtype=fmt.np_dtype),
        )
        m = min(rows * 64, 20_000)
        flat = xd.reshape(-1)
        items = np.array([flat[j].item() for j in range(m)], dtype=np.float64)
        out.append(
            _result(
                "plumbing:item",
                nm,
                items.astype(fmt.np_dtype),
                x.reshape(-1)[:m],
                lambda i: f"index {i}",
                nan_equal=True,
            )
        )
        dims = np.array([xd.dim(), xd.numel(), xd.shape[0]], dtype=np.int64)
        out.append(
            _result(
                "plumbing:shape",
                nm,
                dims,
                np.array([2, x.size, rows]),
                lambda i: "dim, numel, shape[0]",
            )
        )
        with torch.no_grad():
            a = _host(xd * 3.0)
        with torch.enable_grad():
            b = _host(xd * 3.0)
        out.append(_result("plumbing:grad_mode", nm, a, b, lambda i: f"index {i}"))
    return out


INT_CHECKS: list[Callable[[_Ctx], list[ConformanceResult]]] = [
    _check_int,
    _check_index,
    _check_randint,
]
"""The integer, indexing and `randint` checks, in the order `run_conformance` reports them."""
PLUMBING_CHECKS: list[Callable[[_Ctx], list[ConformanceResult]]] = [_check_plumbing]
"""The bit-preservation checks (reported last)."""
