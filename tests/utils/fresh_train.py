"""Training a preset in fresh interpreters, one per (thread count, SIMD level), as "another
machine" is exercised on one machine (`ATEN_CPU_CAPABILITY` set before torch loads).

Run: not a script; `from tests.utils.fresh_train import train_in_subprocesses`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import torch

REPO_ROOT = Path(__file__).resolve().parents[2]


def best_capability() -> str:
    """This machine's best ATEN_CPU_CAPABILITY value, capped at avx2 (avx512 may SIGILL)."""
    cap = torch.backends.cpu.get_cpu_capability().lower()
    return "avx2" if cap.startswith("avx512") else cap


_ENTRY = (
    "import json, sys; from cli.train import train_preset; "
    "a = json.loads(sys.argv[1]); print(json.dumps(train_preset(**a, evaluate=False)))"
)


def train_in_subprocesses(
    name: str,
    arith: str,
    *,
    steps: int,
    batch: int,
    variants: list[tuple[int, str]],
    timeout: float = 1800,
) -> list[dict[str, object]]:
    """Train a preset in one fresh interpreter per (thread count, SIMD level), all at once.

    The processes run concurrently (the CI machine has 2 cores; idle OpenMP threads sleep,
    `OMP_WAIT_POLICY=PASSIVE`, instead of spinning); results come back in `variants` order.
    """
    procs = []
    for threads, capability in variants:
        env = {
            **os.environ,
            "ATEN_CPU_CAPABILITY": capability,
            "PYTHONPATH": str(REPO_ROOT),
            "OMP_NUM_THREADS": str(threads),
            "OMP_WAIT_POLICY": "PASSIVE",
        }
        args = {"name": name, "arith": arith, "steps": steps, "batch": batch, "threads": threads}
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", _ENTRY, json.dumps(args)],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=timeout)
        assert proc.returncode == 0, err[-2000:]
        results.append(dict(json.loads(out.strip().splitlines()[-1])))
    return results
