#!/usr/bin/env bash
# Static checks, exactly what CI runs before the tests: ruff (lint + format), mypy (--strict on
# the core, the chain bindings and the node runtime; plain on the roles, the adversaries and
# the CLI) and the Solidity formatting.
#
# Run: bash scripts/lint.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export PATH="$root/node_modules/.bin:$PATH"
py=.venv/bin
echo "== ruff check =="
"$py/ruff" check .
echo "== ruff format --check =="
"$py/ruff" format --check .
echo "== mypy --strict (veritrain, chain, noderuntime, indexer, dashboard) =="
"$py/mypy" --strict veritrain chain noderuntime indexer dashboard
echo "== mypy (solver, verifier, whistleblower, adversary, cli) =="
"$py/mypy" solver verifier whistleblower adversary cli
echo "== forge fmt --check =="
forge fmt --check
