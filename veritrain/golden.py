"""Golden state hashes of the current repro arithmetic (`veritrain.spec.REPRO_ARITH`).

For every preset (`veritrain.presets.PRESETS`) in `REPRO_ARITH`, the protocol's state hash
(`veritrain.state.state_hash` of the canonical checkpoint bytes, `TrainingEngine.state_hash`)
of state 0 and of the state after `GOLDEN_STEPS[name]` optimizer steps, trained by the real
`TrainingEngine` from the preset's spec with `total_steps = checkpoint_interval = steps` (the
spec's other fields are the preset's: seed 0, its batch size and optimizer). Under repro2 these
bytes are the same on every machine, thread count, SIMD level and device, so a machine that
computes other hashes does not reproduce repro2 (`veritrain.selftest`).

The table belongs to one arithmetic (`GOLDEN_ARITH`): a new arithmetic name comes with a new
table, printed by ``.venv/bin/python -m veritrain.golden``.

Run: ``.venv/bin/python -m veritrain.golden`` (computes the table on this machine and prints it,
with ``--check`` compares it with the committed one; exit 1 on a difference).
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass
from typing import Final

__all__ = [
    "GOLDEN_ARITH",
    "GOLDEN_HASHES",
    "GOLDEN_STEPS",
    "PresetHashes",
    "golden_table_hash",
    "preset_hashes",
]

GOLDEN_ARITH: Final = "repro2"
"""The arithmetic the table was computed in (must equal `veritrain.spec.REPRO_ARITH`)."""

GOLDEN_STEPS: Final[dict[str, int]] = {
    "digits-mlp": 20,
    "digits-mlp-wide": 20,
    "shakespeare-char": 20,
}
"""Optimizer steps trained per preset (about 5 s for all three on a 2-core CPU, data loading
included)."""

GOLDEN_HASHES: Final[dict[str, dict[int, str]]] = {
    "digits-mlp": {
        0: "0xed02c6ffcd961dd663ffe79ec7320d293b7eaf98bc61f354d9fda191e4c96888",
        20: "0x3cffd683fb75bb0fc0251c78bbe2f3fb396c1d6d256afc1df6e13cccd908f777",
    },
    "digits-mlp-wide": {
        0: "0xa73b9de53d254f62e898ec0d9d7edbe985690f3642555a75bd967871d7e1ce27",
        20: "0xbc113f03eae155cd02e5b3a2d6f4ce24d16053fbd511f32e4df3b80aa54b33aa",
    },
    "shakespeare-char": {
        0: "0x485f9ce79be2310e134d33eb3b3ff4b935f115743b53ec3998561ee925500cd6",
        20: "0xb6dd7deabfc49101a9924bb0f55ce03132517e92659ef55247e7ce07b2e5120d",
    },
}
"""preset -> {step: "0x" + 64 hex state hash}, for steps 0 and `GOLDEN_STEPS[preset]`."""


def golden_table_hash() -> str:
    """sha256 (hex) of the table's canonical JSON (arith, steps and hashes): a cache key that
    changes whenever the table does."""
    table = {
        "arith": GOLDEN_ARITH,
        "steps": GOLDEN_STEPS,
        "hashes": {name: {str(k): v for k, v in h.items()} for name, h in GOLDEN_HASHES.items()},
    }
    blob = json.dumps(table, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()


@dataclass(frozen=True)
class PresetHashes:
    """The state hashes one machine computed for one preset.

    Attributes:
        name: the preset.
        hashes: step -> "0x" + 64 hex state hash (steps 0 and the trained count).
        seconds: wall time of building the engine (data loading included) and training.
    """

    name: str
    hashes: dict[int, str]
    seconds: float


def preset_hashes(
    name: str,
    steps: int | None = None,
    *,
    device: str | None = None,
    threads: int | None = None,
) -> PresetHashes:
    """Train preset `name` in `GOLDEN_ARITH` with the real engine and return its state hashes at
    step 0 and after `steps` steps (default `GOLDEN_STEPS[name]`).

    Args:
        name: a `veritrain.presets.PRESETS` name.
        steps: optimizer steps (>= 1).
        device: `"cpu"` (default) or `"cuda"`.
        threads: torch's CPU thread count for the run (None: as the process has it); repro
            results do not depend on it.

    Raises:
        VeritrainError: an unknown preset, missing data (`DatasetError`; Shakespeare needs
            scripts/setup.sh) or an unavailable device (`ProfileUnavailable`).
    """
    import time

    from veritrain.presets import preset
    from veritrain.training import TrainingEngine

    n = GOLDEN_STEPS[name] if steps is None else steps
    started = time.perf_counter()
    spec = preset(name, GOLDEN_ARITH, total_steps=n, checkpoint_interval=n)
    engine = TrainingEngine(spec, device=device, threads=threads)
    state = engine.init_state()
    hashes = {0: "0x" + engine.state_hash(state).hex()}
    engine.run(state, n)
    hashes[n] = "0x" + engine.state_hash(state).hex()
    return PresetHashes(name, hashes, time.perf_counter() - started)


def _main(argv: list[str]) -> int:
    check = "--check" in argv
    computed = {name: preset_hashes(name) for name in GOLDEN_STEPS}
    lines = ["GOLDEN_HASHES: Final[dict[str, dict[int, str]]] = {"]
    for name, result in computed.items():
        lines.append(f'    "{name}": {{')
        lines.extend(f'        {step}: "{digest}",' for step, digest in result.hashes.items())
        lines.append("    },")
    lines.append("}")
    sys.stdout.write("\n".join(lines) + "\n")
    for name, result in computed.items():
        sys.stderr.write(f"# {name}: {result.seconds:.2f} s\n")
    if check:
        bad = [n for n, r in computed.items() if r.hashes != GOLDEN_HASHES[n]]
        if bad:
            sys.stderr.write(f"differs from the committed table: {', '.join(bad)}\n")
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
