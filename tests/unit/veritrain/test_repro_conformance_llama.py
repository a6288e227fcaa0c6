"""The conformance checks of the Llama operators (`veritrain.repro.conformance_llama`) pass on
this CPU, are part of `run_conformance`, and report an operator that is off by one ulp."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from veritrain.repro import conformance_llama as CL
from veritrain.repro.conformance_base import ConformanceResult, _Ctx

N = 30_000
NAMES = {
    "reference.silu",
    "repro.silu",
    "repro.rms_norm",
    "repro.rope",
    "repro.rope.backward",
    "repro.rope_tables",
}


def _run(n: int = N) -> dict[str, ConformanceResult]:
    ctx = _Ctx("cpu", n, 0)
    return {r.name: r for check in CL.LLAMA_CHECKS for r in check(ctx)}


def test_the_llama_operators_conform_on_this_cpu() -> None:
    results = _run()
    assert set(results) == NAMES
    bad = [r for r in results.values() if not r.ok]
    assert not bad, bad
    assert results["repro.silu"].checked == N
    assert results["reference.silu"].checked >= 1000  # the mpmath sample
    assert results["repro.rms_norm"].checked >= 2048
    assert results["repro.rope"].checked == results["repro.rope.backward"].checked == 2048
    assert results["repro.rope_tables"].checked == 2 * (64 * 8 + 16 * 32 + 4 * 1)


def test_run_conformance_includes_them() -> None:
    from veritrain.repro.conformance import check_names

    assert NAMES <= check_names()


def test_silu_reference_values() -> None:
    tiny = float(np.array([1], dtype=np.uint32).view(np.float32)[0])
    assert CL.silu_reference_f32(1.0) == float(np.float32(1.0 / (1.0 + math.exp(-1.0))))
    assert CL.silu_reference_f32(tiny) == tiny  # the midpoint 2**-150, rounded up
    assert CL.silu_reference_f32(-tiny) == 0.0
    assert math.copysign(1.0, CL.silu_reference_f32(-math.inf)) == -1.0
    assert CL.silu_reference_f32(100.0) == 100.0
    # x = -100: 100 e**-100 = 3.72e-42, a subnormal float32 (about 2656 times 2**-149)
    assert CL.silu_reference_f32(-100.0) == float(np.float32(-100.0 * math.exp(-100.0)))


def _off_by_one_ulp(y: torch.Tensor, every: int) -> torch.Tensor:
    bits = y.detach().contiguous().view(torch.int32).clone()
    bits.view(-1)[::every] += 1
    return bits.view(torch.float32)


def test_a_one_ulp_silu_error_and_native_silu_are_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    real = CL.repro_silu
    monkeypatch.setattr(CL, "repro_silu", lambda x: _off_by_one_ulp(real(x), 997))
    r = _run(5000)["repro.silu"]
    assert r.mismatches >= 5000 // 997 - 1
    # torch's float32 silu is not correctly rounded (nor NaN-free at -inf)
    monkeypatch.setattr(CL, "repro_silu", F.silu)
    assert _run(20_000)["repro.silu"].mismatches > 0


def test_a_float32_rms_norm_and_a_wrong_table_entry_are_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def native(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w

    monkeypatch.setattr(CL, "repro_rms_norm", native)
    assert _run(2048)["repro.rms_norm"].mismatches > 0
    real = CL.rope_tables

    def one_off(t: int, hd: int, theta: float = 10000.0) -> tuple[torch.Tensor, torch.Tensor]:
        cos, sin = real(t, hd, theta)
        return _off_by_one_ulp(cos, 10**9), sin

    monkeypatch.setattr(CL, "rope_tables", one_off)
    results = _run(2048)
    assert results["repro.rope_tables"].mismatches == len(CL._TABLES)  # one entry per table


def test_a_rope_that_rounds_twice_in_float32_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    def float32_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        p = x.reshape(*x.shape[:-1], x.shape[-1] // 2, 2)
        a, b = p[..., 0], p[..., 1]
        return torch.stack((a * cos - b * sin, a * sin + b * cos), -1).reshape(x.shape)

    monkeypatch.setattr(CL, "repro_rope", float32_rope)
    results = _run(2048)
    assert results["repro.rope"].mismatches > 0
    assert results["repro.rope.backward"].mismatches > 0
