#!/usr/bin/env bash
# Static analysis of contracts/src with Slither (pinned in scripts/setup.sh), configured by
# slither.config.json. Fails on any high or medium finding; prints a summary of the others.
# It compiles contracts/src alone (about 10 s) into a temporary folder and lets Slither read that
# build, so neither the tests are analysed nor the Forge build the tests use is touched.
# Usage: [SLITHER_FULL=1] bash scripts/slither.sh [extra slither args, e.g. --show-ignored-findings]
# (SLITHER_FULL=1 prints each high or medium finding in full instead of its first 8 lines.)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
source "$root/scripts/foundry_path.sh" "$root"
slither="$root/.venv-slither/bin/slither"
if [[ ! -x "$slither" ]]; then
  echo "slither: $slither is missing; run 'bash scripts/setup.sh'" >&2
  exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
start=$SECONDS
forge build --quiet --build-info --skip './contracts/test/**' --skip './contracts/script/**' \
  --out "$work/out" --cache-path "$work/cache"

status=0
"$slither" . --config-file slither.config.json --foundry-ignore-compile \
  --foundry-out-directory "$work/out" --fail-medium --json "$work/report.json" "$@" \
  > "$work/slither.log" 2>&1 || status=$?

if [[ ! -s "$work/report.json" ]]; then
  cat "$work/slither.log" >&2
  echo "slither: no report (exit status $status)" >&2
  exit 1
fi
"$root/.venv-slither/bin/python" - "$work/report.json" "$((SECONDS - start))" <<'EOF'
import collections
import importlib.metadata
import json
import os
import sys

report = json.load(open(sys.argv[1], encoding="utf8"))
if not report["success"]:
    print(f"slither: {report['error']}", file=sys.stderr)
    sys.exit(1)
found = report["results"].get("detectors", [])
order = ["High", "Medium", "Low", "Informational", "Optimization"]
per_impact = collections.Counter(r["impact"] for r in found)
per_check = collections.Counter((r["impact"], r["check"]) for r in found)
version = importlib.metadata.version("slither-analyzer")
print(f"== slither {version}: {len(found)} finding(s) in {sys.argv[2]} s ==")
print(" | ".join(f"{impact.lower()} {per_impact[impact]}" for impact in order))
for (impact, check), count in sorted(per_check.items(), key=lambda i: (order.index(i[0][0]), i[0][1])):
    print(f"  {impact.lower():<13} {check:<28} {count}")
for r in found:
    if r["impact"] in ("High", "Medium"):
        lines = r["description"].rstrip().splitlines()
        keep = len(lines) if os.environ.get("SLITHER_FULL") else 8
        more = f"\n\t... ({len(lines) - keep} more lines; SLITHER_FULL=1 shows all)" if len(lines) > keep else ""
        print(f"\n{r['impact']} {r['check']}: " + "\n".join(lines[:keep]) + more)
EOF
if [[ $status -ne 0 ]]; then
  echo "slither: FAILED (high or medium findings, or an analysis error; exit status $status)" >&2
  exit "$status"
fi
echo "slither: no high or medium finding"
