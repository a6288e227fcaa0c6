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
    "llama-char": 10,
    "llama-bible": 2,
}
"""Optimizer steps trained per preset (about 5 s for the first three on a 2-core CPU, data
loading included; `llama-char`'s 10 steps about 4 s more, `llama-bible`'s 2 about 5 s, once
its corpus is prepared)."""

GOLDEN_HASHES: Final[dict[str, dict[int, str]]] = {
    "digits-mlp": {
        0: "0x0d8d742431a8cd15b2ca2b0c71ed9e737cae425e6d12e1fe46d2dbffd12b5fe0",
        20: "0x11345d470e1a3d89740a411c9593e74c248165bb80fd1be1921c7ed026b72a82",
    },
    "digits-mlp-wide": {
        0: "0xb1a2c508a87647204e8a43a268872daab20c0026aef3d6734ad5393a7a1c1cbb",
        20: "0xfd3854057a15c7224488482cc0cfd58dbd94b69d3bec876f238a8a5ccbf6560e",
    },
    "shakespeare-char": {
        0: "0x020b69594c4572d8ad66b7a1e9e2feaabe7ab4bd6ca92e728dad53c3e2d128d7",
        20: "0xda95cd1360eed4477ecbf4fa5b440a366ca75bb62a756d54958a156a5c3415ea",
    },
    "llama-char": {
        0: "0xf0f1ae8975a5ab397542785370979da0f838dceb00f9b31d7c78ca23f6b59d7a",
        10: "0x210c8ae0c0b481a53dd215254071f04eb7ebbf396f3cb45b78406407bc8a393b",
    },
    "llama-bible": {
        0: "0x6128a8a68813673f208eebdaf805eb85adbc618edbce921dba4c98cc360c3cad",
        2: "0xf95166cd12e3204de7202c5b802a13f67daf42794cf8b438f9f1a119e29fa864",
    },
}
"""preset -> {step: "0x" + 64 hex state hash}, for steps 0 and `GOLDEN_STEPS[preset]`.

The state hash became BLAKE3 (it was sha256) without changing a byte of the checkpoints: the
sha256 of the bytes behind this table is still the table that was checked on other machines
and devices before the change (tests/unit/veritrain/test_golden.py pins it)."""


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
        VeritrainError: an unknown preset, missing data (`DatasetError`; Shakespeare and the
            Bibles need scripts/setup.sh) or an unavailable device (`ProfileUnavailable`).
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
