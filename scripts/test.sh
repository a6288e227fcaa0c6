#!/usr/bin/env bash
# Runs the lint (scripts/lint.sh), the documentation site's strict build (mkdocs.yml: fails on a
# broken link or a page not in its nav), Slither (fails on a high or medium finding) and the core's
# reproducibility tests, all beside the contracts' build, then every other test: Forge (unit, fuzz,
# invariant) and pytest (unit + integration on a real Anvil; the two end-to-end demos in a second
# pytest beside the rest).
# Does its own set-up the first time. Usage: bash scripts/test.sh [extra pytest args]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# Each phase's header says how long the run has taken so far (seconds), so a slow phase shows.
phase() { echo "== $1 == (at ${SECONDS} s)"; }
bash scripts/setup.sh --npm-only
source "$root/scripts/foundry_path.sh" "$root"
# The contracts' build (solc as WebAssembly: one process on one core, 6-7 min from a fresh clone)
# needs only the npm toolchain: it runs beside the rest of the set-up (mostly downloads), the lint,
# the docs, Slither and the core's reproducibility tests, which need none of it; the Forge tests
# wait for it.
build_log="$(mktemp)"
phase "forge build (beside the rest of the set-up, the lint, the docs, Slither and the core's reproducibility tests)"
forge build --quiet >"$build_log" 2>&1 &
build_pid=$!
pids=("$build_pid")
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
bash scripts/setup.sh --no-build
phase lint
bash scripts/lint.sh
phase "docs"
site_dir="$(mktemp -d)"
.venv/bin/mkdocs build --strict --site-dir "$site_dir"
rm -rf "$site_dir"
phase "slither"
bash scripts/slither.sh
# The pure core's slowest tests (bit-identity across fresh processes, threads, SIMD levels and
# workers, and each primitive against its correctly rounded reference: about 4.5 min alone; no
# chain, no contracts) take the rest of the build's time on the second core. With arguments (a
# subset) or VERITRAIN_SERIAL_TESTS=1, they run with the rest of pytest instead.
split=1
if [ "$#" -gt 0 ] || [ "${VERITRAIN_SERIAL_TESTS:-0}" = 1 ]; then split=0; fi
core=(
  tests/unit/veritrain/test_core_arith.py
  tests/unit/veritrain/test_golden.py
  tests/unit/veritrain/test_repro_determinism.py
  tests/unit/veritrain/test_parallel.py
  tests/unit/veritrain/test_repro_conformance.py
)
core_rc=0
if [ "$split" = 1 ]; then
  phase "pytest: the core's reproducibility tests, beside the build"
  .venv/bin/python -m pytest -p no:cacheprovider "${core[@]}" || core_rc=$?
fi
phase "forge build: waiting for it"
build_rc=0
wait "$build_pid" || build_rc=$?
cat "$build_log"
rm -f "$build_log"
if [ "$build_rc" -ne 0 ]; then
  echo "forge build failed (exit status $build_rc)" >&2
  exit "$build_rc"
fi
phase "forge test"
forge test
phase "pytest"
# The two end-to-end demos (8-10 min each beside the rest) and the Anvil node tests of disputes,
# training runs and own draws (about 12 min) mostly wait on block times and node rounds: with no
# arguments they run in a second pytest beside the rest of the suite (about as long), their
# report printed after it.
# With arguments (a subset) or VERITRAIN_SERIAL_TESTS=1, one pytest runs everything.
beside=(
  tests/integration/test_demo.py
  tests/integration/test_demo_run.py
  tests/integration/test_nodes_bisection.py
  tests/integration/test_nodes_contributions.py
  tests/integration/test_nodes_own_draws.py
)
if [ "$split" = 0 ]; then
  .venv/bin/python -m pytest "$@"
  exit
fi
demo_log="$(mktemp)"
# Both start now: each one's "passed in N s" line says when it ended.
.venv/bin/python -m pytest -p no:cacheprovider "${beside[@]}" >"$demo_log" 2>&1 &
demo_pid=$!
pids+=("$demo_pid")
rc=0
.venv/bin/python -m pytest "${beside[@]/#/--ignore=}" "${core[@]/#/--ignore=}" || rc=$?
demo_rc=0
wait "$demo_pid" || demo_rc=$?
phase "pytest: the demos and the node tests beside them"
cat "$demo_log"
rm -f "$demo_log"
if [ "$core_rc" -ne 0 ]; then
  echo "pytest: the core's reproducibility tests failed (exit status $core_rc; their report is above)" >&2
  exit "$core_rc"
fi
if [ "$rc" -ne 0 ]; then exit "$rc"; fi
exit "$demo_rc"
