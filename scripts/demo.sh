#!/usr/bin/env bash
# Runs the end-to-end demo on a local Anvil chain: 4 repro jobs (3 digits MLPs, 1 character
# GPT), 3 solvers (1 honest, 2 cheating), 5 verifiers (1 lazy), 1 whistleblower, as separate
# processes on mixed thread counts and SIMD levels. Does its own set-up the first time.
# Usage: bash scripts/demo.sh [--json out.json]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
source "$root/scripts/foundry_path.sh" "$root"
exec .venv/bin/veritrain demo "$@"
