#!/usr/bin/env bash
# Runs the lint (scripts/lint.sh), the documentation site's strict build (mkdocs.yml: fails on a
# broken link or a page not in its nav), then every test: Forge (unit, fuzz, invariant), Slither
# (fails on a high or medium finding) and pytest (unit + integration on a real Anvil).
# Does its own set-up the first time. Usage: bash scripts/test.sh [extra pytest args]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
export PATH="$root/node_modules/.bin:$PATH"
echo "== lint =="
bash scripts/lint.sh
echo "== docs =="
site_dir="$(mktemp -d)"
.venv/bin/mkdocs build --strict --site-dir "$site_dir"
rm -rf "$site_dir"
echo "== forge test =="
forge test
echo "== slither =="
bash scripts/slither.sh
echo "== pytest =="
.venv/bin/python -m pytest "$@"
