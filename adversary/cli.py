"""`veritrain adversary ...`: TESTING ONLY. Run cheating solvers and lazy, griefing or
equivocating verifiers.

Registered only by the top-level CLI (`cli.app`); the demo spawns its adversaries from here.

Run: ``veritrain adversary solver --mode perturb --dev-account 3 --port 8703`` or
``veritrain adversary verifier --lazy --dev-account 8``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from noderuntime.options import (
    DeploymentOpt,
    DevAccountOpt,
    DeviceOpt,
    KeyEnvOpt,
    KeySource,
    KeystoreOpt,
    MaxJobsOpt,
    ModelsOpt,
    PasswordEnvOpt,
    RpcUrlOpt,
    ThreadsOpt,
    VerboseOpt,
    check_models,
)

app = typer.Typer(
    no_args_is_help=True,
    help="TESTING ONLY: adversary nodes (cheating solvers; lazy, griefing or equivocating"
    " verifiers).",
)


@app.command("solver")
def solver(
    mode: Annotated[
        str,
        typer.Option("--mode", help="Cheat as 'skip-steps' or 'perturb' from segment 2 on."),
    ],
    rpc_url: RpcUrlOpt = "http://127.0.0.1:8545",
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
    data_dir: Annotated[
        Path, typer.Option("--data-dir", help="State file and checkpoint store.")
    ] = Path("runs/solver"),
    host: Annotated[
        str, typer.Option("--host", help="Public host name put in checkpointURL.")
    ] = "127.0.0.1",
    bind: Annotated[
        str | None, typer.Option("--bind", help="Interface to bind (default: --host).")
    ] = None,
    port: Annotated[int, typer.Option("--port", help="Checkpoint server port.")] = 8701,
    threads: ThreadsOpt = None,
    device: DeviceOpt = "cpu",
    model: ModelsOpt = None,
    max_jobs: MaxJobsOpt = 1,
    claims: Annotated[
        int | None,
        typer.Option(
            "--claims",
            min=0,
            help="Claim at most this many jobs in the node's life, then only "
            "follow them (default: no limit).",
        ),
    ] = None,
    json_logs: Annotated[bool, typer.Option("--json", help="JSON-lines logs.")] = False,
    verbose: VerboseOpt = 0,
) -> None:
    """A cheating solver: the production solver node with a cheating step rule."""
    from adversary.solver import ADVERSARIES, CheatingSolverNode
    from noderuntime import run_until_signalled, setup_logging
    from noderuntime.options import connect

    if mode not in ADVERSARIES:
        raise typer.BadParameter(f"choose from {ADVERSARIES}", param_hint="--mode")
    models = check_models(model)
    setup_logging(json_logs=json_logs, level="DEBUG" if verbose >= 2 else "INFO")
    from veritrain.training import resolve_device

    resolve_device(device)  # a bad --device is refused before connecting
    keys = KeySource(keystore, password_env, key_env, dev_account)
    client = connect(rpc_url, deployment, keys)
    node = CheatingSolverNode(
        client,
        data_dir,
        host,
        port,
        mode=mode,
        bind_host=bind,
        models=models,
        max_active_jobs=max_jobs,
        claim_limit=claims,
        threads=threads,
        device=device,
    )
    run_until_signalled(node)


@app.command("verifier")
def verifier(
    rpc_url: RpcUrlOpt = "http://127.0.0.1:8545",
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
    data_dir: Annotated[Path, typer.Option("--data-dir", help="State file directory.")] = Path(
        "runs/verifier"
    ),
    lazy: Annotated[
        bool,
        typer.Option("--lazy", help="Approve and vote valid without replaying."),
    ] = False,
    reject_all: Annotated[
        bool,
        typer.Option(
            "--reject-all",
            help="Griefing: reject every segment, dispute every dissection's first part.",
        ),
    ] = False,
    equivocate: Annotated[
        bool,
        typer.Option(
            "--equivocate",
            help="Sign two seals: hand the solver one, store another on chain (P-40).",
        ),
    ] = False,
    threads: ThreadsOpt = None,
    json_logs: Annotated[bool, typer.Option("--json", help="JSON-lines logs.")] = False,
    verbose: VerboseOpt = 0,
) -> None:
    """A lazy, griefing or equivocating verifier: the production verifier with another verdict
    or seal rule."""
    from adversary.verifier import verifier_node
    from noderuntime import run_until_signalled, setup_logging
    from noderuntime.options import connect

    if lazy + reject_all + equivocate != 1:
        raise typer.BadParameter("pass exactly one of --lazy, --reject-all, --equivocate")
    setup_logging(json_logs=json_logs, level="DEBUG" if verbose >= 2 else "INFO")
    keys = KeySource(keystore, password_env, key_env, dev_account)
    client = connect(rpc_url, deployment, keys)
    node = verifier_node(
        client, data_dir, lazy=lazy, reject_all=reject_all, equivocate=equivocate, threads=threads
    )
    run_until_signalled(node)
