"""The committed golden table (`veritrain.golden`): repro2 state hashes of every preset at step
0 and after a few steps, recomputed by the real engine here and in a fresh process at the
baseline SIMD level with another thread count."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.utils.preset_data import have_preset_data
from veritrain.golden import (
    GOLDEN_ARITH,
    GOLDEN_HASHES,
    GOLDEN_STEPS,
    golden_table_hash,
    preset_hashes,
)
from veritrain.presets import PRESETS
from veritrain.spec import REPRO_ARITH

REPO_ROOT = Path(__file__).resolve().parents[3]
WITH_DATA = tuple(n for n in PRESETS if have_preset_data(n))
"""The presets whose data (Shakespeare, the Bibles) is on this machine."""


def _needs_data(name: str) -> None:
    if name not in WITH_DATA:
        pytest.skip(f"the data of {name} is absent: run scripts/setup.sh")


def test_the_table_covers_every_preset_in_the_current_arithmetic():
    """A new arithmetic name (spec.REPRO_ARITH) must come with a new table."""
    assert GOLDEN_ARITH == REPRO_ARITH
    assert tuple(GOLDEN_HASHES) == tuple(GOLDEN_STEPS) == PRESETS
    for name, hashes in GOLDEN_HASHES.items():
        assert sorted(hashes) == [0, GOLDEN_STEPS[name]]
        assert all(re.fullmatch(r"0x[0-9a-f]{64}", h) for h in hashes.values())
    assert len({h for t in GOLDEN_HASHES.values() for h in t.values()}) == 2 * len(PRESETS)
    assert re.fullmatch(r"[0-9a-f]{64}", golden_table_hash())


SHA256_BEFORE_BLAKE3 = {
    "digits-mlp": {
        0: "ed02c6ffcd961dd663ffe79ec7320d293b7eaf98bc61f354d9fda191e4c96888",
        20: "3cffd683fb75bb0fc0251c78bbe2f3fb396c1d6d256afc1df6e13cccd908f777",
    },
    "digits-mlp-wide": {
        0: "a73b9de53d254f62e898ec0d9d7edbe985690f3642555a75bd967871d7e1ce27",
        20: "bc113f03eae155cd02e5b3a2d6f4ce24d16053fbd511f32e4df3b80aa54b33aa",
    },
    "shakespeare-char": {
        0: "485f9ce79be2310e134d33eb3b3ff4b935f115743b53ec3998561ee925500cd6",
        20: "b6dd7deabfc49101a9924bb0f55ce03132517e92659ef55247e7ce07b2e5120d",
    },
}
"""The golden table while the state hash was sha256, as checked on other CPUs and GPUs (the
presets that existed then; `llama-char` came after the change to BLAKE3)."""


@pytest.mark.parametrize("name", list(SHA256_BEFORE_BLAKE3))
def test_the_golden_bytes_are_those_checked_across_machines_under_sha256(name):
    """Changing the state hash to BLAKE3 changed no checkpoint byte: the same bytes still have
    the sha256 digests the cross-machine checks agreed on, so their evidence carries over."""
    import hashlib

    from veritrain.presets import preset
    from veritrain.state import state_hash
    from veritrain.training import TrainingEngine

    _needs_data(name)
    n = GOLDEN_STEPS[name]
    engine = TrainingEngine(preset(name, GOLDEN_ARITH, total_steps=n, checkpoint_interval=n))
    state = engine.init_state()
    blobs = {0: engine.state_bytes(state)}
    engine.run(state, n)
    blobs[n] = engine.state_bytes(state)
    sha256 = {s: hashlib.sha256(b).hexdigest() for s, b in blobs.items()}
    assert sha256 == SHA256_BEFORE_BLAKE3[name]
    assert {s: "0x" + state_hash(b).hex() for s, b in blobs.items()} == GOLDEN_HASHES[name]


@pytest.mark.parametrize("name", PRESETS)
def test_golden_hashes_in_this_process(name):
    _needs_data(name)
    got = preset_hashes(name)
    assert got.hashes == GOLDEN_HASHES[name]


_ENTRY = (
    "import json, torch; from veritrain.golden import GOLDEN_STEPS, preset_hashes; "
    "h = {n: {str(k): v for k, v in preset_hashes(n, threads=3).hashes.items()} "
    "for n in {names}}; "
    "print(json.dumps({'capability': torch.backends.cpu.get_cpu_capability(), "
    "'threads': torch.get_num_threads(), 'hashes': h}))"
)


def test_golden_hashes_in_a_fresh_process_at_the_baseline_simd_level():
    """`ATEN_CPU_CAPABILITY=default` (set before torch is imported) and 3 threads select other
    CPU kernels than this process's; repro2 must not notice."""
    assert torch.get_num_threads() != 3 or torch.backends.cpu.get_cpu_capability() != "DEFAULT"
    env = {
        **os.environ,
        "ATEN_CPU_CAPABILITY": "default",
        "OMP_NUM_THREADS": "3",
        "OMP_WAIT_POLICY": "PASSIVE",
        "PYTHONPATH": str(REPO_ROOT),
    }
    code = _ENTRY.replace("{names}", repr(WITH_DATA))
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["capability"] == "DEFAULT" and out["threads"] == 3
    expected = {
        n: {str(k): v for k, v in h.items()} for n, h in GOLDEN_HASHES.items() if n in WITH_DATA
    }
    assert out["hashes"] == expected


def test_the_table_catches_a_root_that_is_not_correctly_rounded(monkeypatch):
    """The first repro arithmetic took AdamW's roots from `torch.sqrt`; where that routine is not
    correctly rounded (x86 CPUs: 1-ulp errors that differ by vendor) the 20-step hash must
    differ from the table, or the table could not tell a machine that does not reproduce."""
    from veritrain.repro import optim
    from veritrain.repro.conformance import check_sqrt
    from veritrain.repro.fused import KERNELS_ENV

    wrong = check_sqrt(torch.sqrt, torch.float32, 100_000, "cpu", 0).mismatches
    if wrong == 0:
        pytest.skip("torch.sqrt is correctly rounded on this machine")
    monkeypatch.setattr(optim, "sqrt", torch.sqrt)
    monkeypatch.setenv(KERNELS_ENV, "eager")  # the eager step is the one that calls `sqrt`
    got = preset_hashes("digits-mlp")
    assert got.hashes[0] == GOLDEN_HASHES["digits-mlp"][0]  # the optimizer has not run yet
    assert got.hashes[GOLDEN_STEPS["digits-mlp"]] != GOLDEN_HASHES["digits-mlp"][20]
