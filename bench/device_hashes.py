"""Cross-device check: the state hashes of every preset after N steps, on two devices.

repro2's promise is the same bytes on every machine and device; the golden table pins 2-20
steps. This trains every preset (or those named) for `--steps` steps (default 100) in repro2
on each of `--devices` (default `cpu cuda`; the CPU at `--threads` threads) and, on a GPU,
on both exact GEMM paths (`VERITRAIN_REPRO_GEMM=float64` and `int8`), and prints one line per
run and a verdict line per preset: `same` when every run's hash is equal.

Run: ``.venv/bin/python -m bench.device_hashes [--steps 100] [--presets NAME ...]
[--devices cpu cuda] [--threads N] [--json]`` (exit 1 when any preset differs).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import torch

from veritrain.presets import PRESETS, preset
from veritrain.repro.gemm import GEMM_ENV
from veritrain.spec import REPRO_ARITH
from veritrain.training import TrainingEngine


def preset_hash(name: str, steps: int, device: str, threads: int, gemm: str) -> tuple[str, float]:
    """State hash (`0x` + hex) of preset `name` after `steps` repro2 steps, and the seconds.

    Args:
        name: a preset.
        steps: optimizer steps (>= 1).
        device: "cpu" or "cuda".
        threads: torch CPU threads.
        gemm: "float64" or "int8" (`VERITRAIN_REPRO_GEMM` for the run).
    """
    os.environ[GEMM_ENV] = gemm
    started = time.perf_counter()
    spec = preset(name, REPRO_ARITH, total_steps=steps, checkpoint_interval=steps)
    engine = TrainingEngine(spec, device=device, threads=threads)
    state = engine.init_state()
    engine.run(state, steps)
    return "0x" + engine.state_hash(state).hex(), time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    """Run the presets on every device and GEMM path; print the runs and the verdicts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--presets", nargs="+", default=list(PRESETS), choices=PRESETS)
    parser.add_argument("--devices", nargs="+", default=["cpu", "cuda"], choices=("cpu", "cuda"))
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if "cuda" in args.devices and not torch.cuda.is_available():
        parser.error("--devices cuda: torch sees no GPU")
    report: dict[str, list[dict[str, object]]] = {}
    differ = False
    for name in args.presets:
        runs = report.setdefault(name, [])
        for device in args.devices:
            for gemm in ("float64", "int8") if device == "cuda" else ("float64",):
                digest, seconds = preset_hash(name, args.steps, device, args.threads, gemm)
                runs.append({"device": device, "gemm": gemm, "hash": digest, "seconds": seconds})
                if not args.json:
                    print(f"{name} {device} {gemm} {args.steps} steps {digest} {seconds:.1f} s")
        same = len({r["hash"] for r in runs}) == 1
        differ |= not same
        if not args.json:
            print(f"{name}: {'same' if same else 'DIFFERENT'} on {len(runs)} runs", flush=True)
    if args.json:
        print(json.dumps(report, indent=1))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
