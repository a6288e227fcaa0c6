#!/usr/bin/env bash
# Static checks, exactly what CI runs before the tests: ruff (lint + format), mypy in one run
# (every flag of --strict on the core, the chain bindings, the node runtime, the index and the
# dashboard; plain on the roles, the adversaries and the CLI: pyproject.toml) and the Solidity
# formatting.
#
# Run: bash scripts/lint.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
source "$root/scripts/foundry_path.sh" "$root"
py=.venv/bin
echo "== ruff check =="
"$py/ruff" check .
echo "== ruff format --check =="
"$py/ruff" format --check .
echo "== mypy (strict on veritrain, chain, noderuntime, indexer, dashboard; plain on the rest) =="
"$py/mypy"
echo "== forge fmt --check =="
forge fmt --check
