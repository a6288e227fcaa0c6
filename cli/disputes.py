"""`veritrain dispute list / show`: every dispute of a deployment and its whole history.

Two kinds of dispute exist (docs/DISPUTES.md): a job's disputed step, judged by the bisection
game (a deployment with ``adjudicator = "bisection"``: dispute N is game N, its one-step
committee dispute folded into it) or by the arbitration committee (``"committee"``: dispute N
is committee dispute N); and a run's round claim (``RunRegistry.challengeRound``), always a
committee dispute. In a bisection deployment a round claim's committee id is not a game id:
pass ``--committee`` to `show` it. `list` reads the views; `show` adds the timeline from
events (block, time): opening, each bisection move, escalation, the committee draw, each vote
commit and reveal, resolution, and the slashes and credits of the settlement.

With ``--db URL`` both read the chain's index (brought up to date first) instead of the views
and event logs; the phase of a committee dispute still voting depends on the time, so it is
read over RPC, every such dispute in one batched request.

Run: ``veritrain dispute list [--json] [--db URL]``;
``veritrain dispute show 1 [--committee] [--json] [--db URL]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from cli.dashboard import ReadDbOpt, synced_index
from noderuntime.options import (
    DEFAULT_RPC,
    UINT256_MAX,
    DeploymentOpt,
    JsonOpt,
    RpcUrlOpt,
    connect_reader,
    emit_json,
)

if TYPE_CHECKING:
    pass
from cli.dispute_rows import dispute_row, dispute_rows, is_bisection
from cli.dispute_timeline import IndexedDisputes, dispute_timeline

__all__ = ["app", "dispute_row", "dispute_timeline"]

app = typer.Typer(help="Inspect disputes: list them, show one's history.", no_args_is_help=True)


def _where(row: dict[str, Any]) -> str:
    if row["run_id"] is not None:
        return f"run {row['run_id']} round {row['round']}"
    return f"job {row['job_id']} segment {row['segment']}"


@app.command("list")
def list_disputes(
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    json_out: JsonOpt = False,
    db: ReadDbOpt = None,
) -> None:
    """Every dispute: kind, job or run/round, challenger, defender (or claimant), adjudicator,
    phase, winner once resolved. Full addresses. With --db, read from the index; only the
    phases of unresolved committee disputes are read over RPC (one batched request).

    Errors (one line, exit != 0): an unusable --db URL or an index of another deployment.
    """
    client = connect_reader(rpc_url, deployment)
    if db is not None:
        index = synced_index(client, db)
        try:
            with index.reader() as session:
                rows = IndexedDisputes(client, session).rows()
        finally:
            index.close()
    else:
        rows = dispute_rows(client)
    if json_out:
        emit_json(rows)
        return
    if not rows:
        typer.echo("no disputes")
        return
    from rich.table import Table

    from cli.console import address_column, report_console

    table = Table(title="Disputes")
    for header in ("id", "kind", "where", "adjudicator"):
        table.add_column(header)
    for header in ("challenger", "defender / claimant"):
        table.add_column(**address_column(header))
    table.add_column("phase")
    table.add_column(**address_column("winner"))
    for r in rows:
        ident = str(r["id"])
        if r["contract"] == "committee" and is_bisection(client):
            ident = f"{r['id']} (--committee)"
        table.add_row(
            ident,
            r["kind"],
            _where(r),
            r["adjudicator"],
            r["challenger"] or "-",
            r["defender"] or "-",
            r["phase"],
            r["winner"] or "-",
        )
    report_console().print(table)


@app.command("show")
def show_dispute(
    dispute_id: Annotated[
        int, typer.Argument(min=1, max=UINT256_MAX, help="Dispute id (see `dispute list`).")
    ],
    committee: Annotated[
        bool,
        typer.Option(
            "--committee",
            help="Committee dispute N in a bisection deployment (a run's round claim).",
        ),
    ] = False,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    json_out: JsonOpt = False,
    db: ReadDbOpt = None,
) -> None:
    """One dispute and its whole history from events, with block numbers and times. With
    --db, the dispute and its events come from the index; only the phase of an unresolved
    committee dispute is read over RPC (one batched request).

    Errors (one line, exit != 0): no dispute with this id; an unusable --db URL or an index
    of another deployment.
    """
    from cli.history import when

    client = connect_reader(rpc_url, deployment)
    if db is not None:
        index = synced_index(client, db)
        try:
            with index.reader() as session:
                indexed = IndexedDisputes(client, session)
                row = indexed.row(dispute_id, committee)
                timeline = dispute_timeline(client, row, index=indexed.read)
        finally:
            index.close()
    else:
        row = dispute_row(client, dispute_id, committee=committee)
        timeline = dispute_timeline(client, row)
    if json_out:
        emit_json({**row, "timeline": timeline})
        return
    echo = typer.echo
    echo(f"dispute {row['id']} ({row['adjudicator']}): {row['kind']}, {_where(row)}")
    echo(f"challenger {row['challenger'] or '-'}")
    echo(f"{'claimant' if row['run_id'] is not None else 'defender'}   {row['defender'] or '-'}")
    echo(f"phase      {row['phase']}")
    echo(f"winner     {row['winner'] or '-'}")
    for entry in timeline:
        echo(f"  block {entry['block']:>6}  {when(entry['timestamp'])}  {entry['text']}")
