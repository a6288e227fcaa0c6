#!/usr/bin/env bash
# Runs the lint (scripts/lint.sh), the documentation site's strict build (mkdocs.yml: fails on a
# broken link or a page not in its nav), then every test: Forge (unit, fuzz, invariant), Slither
# (fails on a high or medium finding) and pytest (unit + integration on a real Anvil; the two
# end-to-end demos and the Anvil node tests in a second pytest beside the rest).
# Does its own set-up the first time. Usage: bash scripts/test.sh [extra pytest args]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# Each phase's header says how long the run has taken so far (seconds), so a slow phase shows.
phase() { echo "== $1 == (at ${SECONDS} s)"; }
bash scripts/setup.sh
export PATH="$root/node_modules/.bin:$PATH"
# The two end-to-end demos (8-10 min each) and the Anvil node tests of disputes, training runs
# and own draws (about 12 min) mostly wait on block times and node rounds: with no arguments they
# run in a second pytest that starts once the set-up has built the contracts, beside the lint,
# the docs, Forge, Slither and the rest of pytest (those use at most one core for most of their
# time); its report is printed at the end. Nothing after the set-up writes what it reads (Slither
# compiles into a folder of its own).
# With arguments (a subset) or VERITRAIN_SERIAL_TESTS=1, one pytest runs everything.
beside=(
  tests/integration/test_demo.py
  tests/integration/test_demo_run.py
  tests/integration/test_nodes_bisection.py
  tests/integration/test_nodes_contributions.py
  tests/integration/test_nodes_own_draws.py
)
serial=0
if [ "$#" -gt 0 ] || [ "${VERITRAIN_SERIAL_TESTS:-0}" = 1 ]; then serial=1; fi
demo_log="$(mktemp)"
demo_pid=""
if [ "$serial" = 0 ]; then
  echo "(the demos and node tests start beside the rest at ${SECONDS} s)"
  .venv/bin/python -m pytest -p no:cacheprovider "${beside[@]}" >"$demo_log" 2>&1 &
  demo_pid=$!
fi
trap '[ -n "$demo_pid" ] && kill "$demo_pid" 2>/dev/null; rm -f "$demo_log"' EXIT
phase lint
bash scripts/lint.sh
phase "docs"
site_dir="$(mktemp -d)"
.venv/bin/mkdocs build --strict --site-dir "$site_dir"
rm -rf "$site_dir"
phase "forge test"
forge test
phase "slither"
bash scripts/slither.sh
phase "pytest"
if [ "$serial" = 1 ]; then
  .venv/bin/python -m pytest "$@"
  exit
fi
rc=0
.venv/bin/python -m pytest "${beside[@]/#/--ignore=}" || rc=$?
demo_rc=0
wait "$demo_pid" || demo_rc=$?
demo_pid=""
phase "pytest: the demos and the node tests beside them"
cat "$demo_log"
if [ "$rc" -ne 0 ]; then exit "$rc"; fi
exit "$demo_rc"
