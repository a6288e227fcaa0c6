"""`veritrain index` and `veritrain dashboard`: build or follow the chain's index, and serve the
dashboard over it; and the demo's in-process dashboard (`DemoDashboard`).

    veritrain index [--db URL] [--follow] [--reset]
    veritrain dashboard [--db URL] [--host H] [--port P] [--no-follow]

The index defaults to ``sqlite:///.veritrain/index-<chain id>.sqlite``. Bad input (an unusable
--db URL, an index of another chain or deployment, a port in use) is one line on stderr and a
non-zero exit.

Run: not a script; `register` adds both commands to the ``veritrain`` app.
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cli.errors import CliError
from noderuntime.options import DEFAULT_RPC, DeploymentOpt, RpcUrlOpt, VerboseOpt, setup_logging

if TYPE_CHECKING:
    from indexer.store import Index

logger = logging.getLogger(__name__)

__all__ = ["DemoDashboard", "dashboard", "index", "register"]

DbOpt = Annotated[
    str | None,
    typer.Option(
        "--db",
        envvar="VERITRAIN_INDEX_DB",
        help="SQLAlchemy URL of the index (default sqlite:///.veritrain/index-<chain id>.sqlite; "
        "PostgreSQL: postgresql+psycopg://user@host/db).",
    ),
]
ResetOpt = Annotated[
    bool,
    typer.Option("--reset", help="Empty an index built for another chain or deployment."),
]


def default_db(chain_id: int) -> str:
    """``sqlite:///.veritrain/index-<chain id>.sqlite`` (the folder is created)."""
    folder = Path(".veritrain")
    folder.mkdir(exist_ok=True)
    return f"sqlite:///{folder / f'index-{chain_id}.sqlite'}"


def open_index(client: Any, db: str | None, *, reset: bool = False) -> Index:
    """Open (or create) the index of the client's deployment, as a CLI command does.

    Raises:
        CliError: the URL is unusable or the index belongs to another chain or deployment.
    """
    from chain.errors import ChainError
    from indexer import Index, IndexError_, binding_of

    try:
        binding = binding_of(client)
        return Index.open(db or default_db(client.chain_id), binding, reset=reset)
    except (IndexError_, ChainError) as exc:
        raise CliError(str(exc).splitlines()[0]) from None


ReadDbOpt = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="Read through the index at this SQLAlchemy URL (brought up to date first; "
        "`veritrain index` builds it) instead of one contract call per item.",
    ),
]


def synced_index(client: Any, db: str) -> Index:
    """The index of the client's deployment at `db`, brought up to the chain's head (only the
    blocks since its cursor are read), for a read command.

    Raises:
        CliError: the URL is unusable, the index belongs to another chain or deployment, or
            the chain reorganised deeper than the index can roll back.
    """
    from indexer import Indexer, ReorgTooDeep

    idx = open_index(client, db)
    try:
        Indexer(idx, client).sync()
    except ReorgTooDeep as exc:
        first = str(exc).splitlines()[0]
        raise CliError(f"{first}: rebuild it with `veritrain index --reset`") from None
    return idx


def index(
    db: DbOpt = None,
    follow: Annotated[
        bool, typer.Option("--follow", help="Keep following the chain (Ctrl-C stops).")
    ] = False,
    reset: ResetOpt = False,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    verbose: VerboseOpt = 0,
) -> None:
    """Build the chain's index (jobs, disputes, stakes, models, shares, runs) from the
    deployment's events, or bring it up to date; with --follow, keep following new blocks."""
    import threading

    from indexer import Indexer, ReorgTooDeep
    from noderuntime.options import connect_reader

    setup_logging(verbose)
    client = connect_reader(rpc_url, deployment)
    idx = open_index(client, db, reset=reset)
    indexer = Indexer(idx, client)
    start = idx.cursor()
    t0 = time.monotonic()
    try:
        n = indexer.sync()
        seconds = time.monotonic() - t0
        typer.echo(
            f"indexed {n} events of blocks [{start}, {indexer.head}] in {seconds:.1f} s "
            f"({n / max(seconds, 1e-9):,.0f} events/s) into {idx.url}"
        )
        if follow:
            typer.echo("following the chain (Ctrl-C stops)")
            try:
                indexer.follow(threading.Event())
            except KeyboardInterrupt:
                pass
    except ReorgTooDeep as exc:
        raise CliError(str(exc)) from None
    finally:
        idx.close()


def dashboard(
    db: DbOpt = None,
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port (0: a free one).")] = 8080,
    follow: Annotated[
        bool,
        typer.Option(
            "--follow/--no-follow", help="Index new blocks in the background (default on)."
        ),
    ] = True,
    reset: ResetOpt = False,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    verbose: VerboseOpt = 0,
) -> None:
    """Serve the read-only dashboard (jobs, runs, disputes, forced errors, stakes, models and
    their owners) from the index, indexing the chain in the background so it updates live."""
    from dashboard.server import Dashboard, PortInUse
    from noderuntime.options import connect_reader

    setup_logging(verbose)
    client = connect_reader(rpc_url, deployment)
    idx = open_index(client, db, reset=reset)
    dash = Dashboard(idx, client if follow else None, host=host, port=port)
    try:
        dash.start()
    except PortInUse as exc:
        raise CliError(str(exc)) from None
    typer.echo(f"dashboard: {dash.url} (index {idx.url}; Ctrl-C stops)")
    try:
        while True:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        dash.stop()
        idx.close()


class DemoDashboard:
    """The demo's dashboard: in-process, on a free port, indexing the demo's Anvil into
    ``<workdir>/index.sqlite``.

    Args:
        rpc_url: the demo's Anvil.
        deployment: the demo's `Deployment`.
        workdir: the demo's run folder.
    """

    def __init__(self, rpc_url: str, deployment: Any, workdir: Path) -> None:
        from eth_account import Account

        from chain.client import ChainClient
        from dashboard.server import Dashboard
        from indexer import Index, binding_of

        client = ChainClient(rpc_url, Account.create(), deployment)
        self.index = Index.open(
            f"sqlite:///{workdir / 'index.sqlite'}", binding_of(client), reset=True
        )
        self.rpc_url = rpc_url
        self.dash = Dashboard(self.index, client, port=0).start()
        typer.echo(f"dashboard: {self.dash.url}")
        sys.stdout.flush()

    def hold(self) -> None:
        """Keep the chain and the dashboard up until stdin closes or Enter (``--hold``)."""
        self.dash.sync()
        typer.echo(
            f"holding: dashboard {self.dash.url}, anvil {self.rpc_url}; "
            "press Enter (or close stdin) to stop"
        )
        sys.stdout.flush()
        try:
            sys.stdin.readline()
        except (KeyboardInterrupt, OSError, ValueError):
            pass

    def stop(self) -> None:
        """Stop the dashboard and close the index."""
        self.dash.stop()
        self.index.close()


def register(app: typer.Typer) -> None:
    """Add ``index`` and ``dashboard`` to the ``veritrain`` app."""
    app.command("index")(index)
    app.command("dashboard")(dashboard)
