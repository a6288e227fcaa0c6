"""Screenshots of the dashboard's main pages for docs/DASHBOARD.md (docs/img/*.png, 1200x800).

Runs ``veritrain demo --hold`` (the jobs: home, a job, a dispute, a model) and
``veritrain demo --run --hold`` (a training run), and while each holds, photographs its
dashboard with Playwright driving Debian's chromium (/usr/bin/chromium; never `playwright
install`). About 12 minutes on 2 cores.

Run: ``PATH=$PWD/node_modules/.bin:$PATH .venv/bin/python scripts/screenshots.py [--only jobs|run]``
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "img"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def measure_indexing(rpc_url: str, workdir: Path) -> None:
    """Build a fresh in-memory index of the held demo's chain and print events/s."""
    from eth_account import Account

    from chain import ChainClient, load_manifest
    from indexer import Index, Indexer, binding_of

    dep = load_manifest(workdir / "deployments" / "31337.json")
    client = ChainClient(rpc_url, Account.create(), dep)
    index = Index.open("sqlite://", binding_of(client))
    t0 = time.monotonic()
    n = Indexer(index, client).sync()
    seconds = time.monotonic() - t0
    print(f"indexing: {n} events in {seconds:.2f} s = {n / seconds:,.0f} events/s")


def held_demo(extra: list[str], shoot: Callable[[str], None]) -> None:
    """Run the demo with --hold, call ``shoot(dashboard_url)`` while it holds, let it finish."""
    with tempfile.TemporaryDirectory() as tmp:
        argv = [sys.executable, "-m", "cli.app", "demo", "--hold", "--workdir", tmp, *extra]
        proc = subprocess.Popen(
            argv, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert proc.stdout is not None and proc.stdin is not None
        for line in proc.stdout:
            print(line, end="")
            if line.startswith("holding: "):
                url, rpc = re.findall(r"(http://\S+?)[;,]? ", line + " ")[:2]
                try:
                    measure_indexing(rpc, Path(tmp))
                    shoot(url)
                finally:
                    proc.stdin.close()
                break
        proc.wait(timeout=120)


def browser_pages(url: str, pages: dict[str, str]) -> None:
    """Save ``OUT/<name>.png`` of each ``url + path`` (1200x800, the page's top)."""
    from playwright.sync_api import sync_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 800})
        for name, path in pages.items():
            page.goto(url + path.lstrip("/"))
            time.sleep(0.3)
            page.screenshot(path=str(OUT / f"{name}.png"))
            print(f"saved docs/img/{name}.png ({path})")
        browser.close()


def jobs_demo(url: str) -> None:
    """Home, the GPT job, the first dispute, a model."""
    import httpx

    overview = httpx.get(url + "api/overview", timeout=10).json()
    dispute = overview["disputes"][0]["key"] if overview["disputes"] else "1"
    browser_pages(
        url,
        {
            "dashboard-home": "/",
            "dashboard-job": "/jobs/1",
            "dashboard-dispute": f"/disputes/{dispute}",
            "dashboard-model": "/models/digits-mlp",
        },
    )


def run_demo(url: str) -> None:
    """The training run, once its metric per round is computed."""
    import httpx

    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        run = httpx.get(url + "api/runs/1", timeout=30).json()
        if all(r["metric"] is not None for r in run["round_views"] if r["phase"] == "Final"):
            break
        time.sleep(3)
    browser_pages(url, {"dashboard-run": "/runs/1"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("jobs", "run"), help="Run one demo only.")
    args = parser.parse_args()
    if args.only in (None, "jobs"):
        held_demo([], jobs_demo)
    if args.only in (None, "run"):
        held_demo(["--run"], run_demo)


if __name__ == "__main__":
    main()
