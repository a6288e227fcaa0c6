"""The scripts' Foundry binaries report failure (scripts/foundry_path.sh): the npm wrappers in
node_modules/.bin exit 0 whatever forge exits with, so a CI that called them would pass a failed
build, Forge test or format check."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(
    not (REPO_ROOT / "node_modules" / "@foundry-rs").is_dir(), reason="npm toolchain absent"
)
def test_forge_on_the_scripts_path_fails_on_a_file_that_needs_formatting(tmp_path: Path) -> None:
    bad = tmp_path / "A.sol"
    bad.write_text("pragma solidity 0.8.37;\ncontract   A{function f( ) external {}}\n")
    script = 'source scripts/foundry_path.sh "$PWD"; command -v forge; forge fmt --check "$1"'
    done = subprocess.run(
        ["bash", "-c", script, "check", str(bad)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "node_modules/.bin" not in done.stdout.splitlines()[0], done.stdout
    assert done.returncode != 0, done.stdout + done.stderr
