"""`veritrain selftest`: does this machine reproduce the repro arithmetic (repro2)?

Trains every preset briefly in repro2 on the chosen device and compares its state hashes with
the committed golden table (`veritrain.golden`), and runs the conformance suite of the torch
primitives `veritrain.repro` relies on (`veritrain.repro.conformance`); the logic is
`veritrain.selftest.run_selftest`. Prints one table row per check (the conformance rows that
pass are summed up in one row), or the whole report with ``--json``.

Exit status 0 when every check matches; 1 with one line on stderr saying what failed
(``error: this machine does not reproduce repro2 (cpu, ...): preset digits-mlp hash at step 20
0x... expected 0x...``): a node on such a machine would replay repro2 jobs wrongly and lose
its stake, so nodes refuse them there.

Run: ``veritrain selftest`` (about 45 s on 2 idle CPU cores), ``veritrain selftest --quick``
(the quick check nodes start with, about 10 s: conformance on 10^4 instead of 10^6 values per
check and only the cheapest golden preset, `veritrain.selftest.QUICK_PRESETS`), ``--device
cuda``, ``--json``.
"""

from __future__ import annotations

import enum
import json
from typing import TYPE_CHECKING, Annotated

import typer

from cli.errors import CliError

if TYPE_CHECKING:
    from veritrain.selftest import SelftestReport

__all__ = ["selftest"]


class DeviceChoice(enum.StrEnum):
    """Where the selftest runs."""

    auto = "auto"
    cpu = "cpu"
    cuda = "cuda"


def _short(digest: str) -> str:
    """``0x1234abcd...89abcdef``: a state hash shortened for a table (the error line has it
    whole)."""
    return f"{digest[:10]}...{digest[-8:]}" if len(digest) > 24 else digest


def print_report(report: SelftestReport) -> None:
    """The report as a Rich table: every golden check, the failed or skipped conformance
    checks, and one row for the conformance checks that passed."""
    from rich.console import Console
    from rich.table import Table

    m = report.machine
    table = Table(
        title=(
            f"selftest {report.arith}: {m.device} ({m.device_name}), torch {m.torch}, "
            f"CPU capability {m.cpu_capability}, {m.threads} thread{'s' if m.threads != 1 else ''}"
        )
    )
    for col in ("check", "name", "detail", "result", "this machine", "expected", "seconds"):
        table.add_column(col, justify="right" if col == "seconds" else "left", no_wrap=True)
    passed = [c for c in report.checks if c.kind == "conformance" and c.status == "ok"]
    for c in report.checks:
        if c.kind == "conformance" and c.status == "ok":
            continue
        style = {"ok": "green", "FAIL": "bold red", "skipped": "yellow"}[c.status]
        if c.kind == "golden":
            mine = _short(c.actual) if c.actual else c.note
            want = _short(c.expected) if c.expected else ""
        else:
            mine = f"{c.mismatches} of {c.checked} differ" + (f": {c.actual}" if c.actual else "")
            want = c.expected or c.note
        table.add_row(
            c.kind,
            c.name,
            c.detail,
            f"[{style}]{c.status}[/{style}]",
            mine,
            want,
            f"{c.seconds:.2f}" if c.seconds else "",
        )
    if passed:
        values = sum(c.checked for c in passed)
        table.add_row(
            "conformance",
            f"{len(passed)} checks",
            "all dtypes",
            "[green]ok[/green]",
            f"{values:,} values bit-exact",
            "",
            "",
        )
    console = Console()
    if not console.is_terminal:
        console = Console(width=120)  # a log or a pipe: wide enough for one line per check
    console.print(table)
    typer.echo(f"{len(report.checks)} checks in {report.seconds:.1f} s")


def selftest(
    device: Annotated[
        DeviceChoice,
        typer.Option(case_sensitive=False, help="auto (cuda when available), cpu or cuda."),
    ] = DeviceChoice.auto,
    threads: Annotated[
        int | None, typer.Option(min=1, help="torch CPU threads (default: torch's count).")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    quick: Annotated[
        bool,
        typer.Option(
            help=(
                "The quick check nodes start with: conformance on 10^4 instead of 10^6 values "
                "per check, only the cheapest golden preset (seconds)."
            )
        ),
    ] = False,
) -> None:
    """Check that this machine reproduces repro2: golden state hashes of every preset and the
    conformance of the torch primitives it uses. Exit 1 with one line when it does not."""
    from veritrain.selftest import FULL_CONFORMANCE_N, QUICK_CONFORMANCE_N, run_selftest
    from veritrain.training import resolve_device

    where = resolve_device(device.value)  # one line and exit 1 for cuda without a GPU
    n = QUICK_CONFORMANCE_N if quick else FULL_CONFORMANCE_N
    report = run_selftest(where, threads, conformance_n=n, tier="quick" if quick else "full")
    if json_out:
        payload = report.model_dump(mode="json")
        payload["ok"] = report.ok
        payload["failure"] = report.failure_line()
        typer.echo(json.dumps(payload, indent=2, sort_keys=True))
    else:
        print_report(report)
    failure = report.failure_line()
    if failure is not None:
        raise CliError(failure)
