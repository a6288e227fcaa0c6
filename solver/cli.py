"""`veritrain solver ...`: run a solver node.

Run: ``veritrain solver run --rpc-url http://127.0.0.1:8545 --key-env SOLVER_KEY
--data-dir runs/solver --host 127.0.0.1 --port 8701``. Staking is ``veritrain stake solver``
(the node stakes by itself when its stake is below the minimum, unless run with
``--no-auto-stake``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from noderuntime.config import ConfigOpt
from noderuntime.options import (
    AutoStakeOpt,
    DeploymentOpt,
    DevAccountOpt,
    DeviceOpt,
    KeyEnvOpt,
    KeySource,
    KeystoreOpt,
    MaxJobsOpt,
    MetricsBindOpt,
    MetricsPortOpt,
    MirrorOpt,
    ModelsOpt,
    PasswordEnvOpt,
    ResetStateOpt,
    RpcUrlOpt,
    StakeOpt,
    ThreadsOpt,
    VerboseOpt,
    WorkersOpt,
    check_models,
    token_amount,
)

app = typer.Typer(no_args_is_help=True, help="Solver node: claim jobs, train, serve checkpoints.")


@app.command("run")
def run(
    config: ConfigOpt = None,
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
    device: DeviceOpt = "auto",
    model: ModelsOpt = None,
    max_jobs: MaxJobsOpt = 1,
    workers: WorkersOpt = 1,
    min_reward: Annotated[
        int,
        typer.Option(
            "--min-reward",
            parser=token_amount(positive=False),
            help="Claim only jobs that pay at least this reward (VTT, or '<n>wei'); "
            "default 0: any job.",
        ),
    ] = 0,
    auto_stake: AutoStakeOpt = True,
    stake: StakeOpt = None,
    reset_state: ResetStateOpt = False,
    mirror: MirrorOpt = None,
    metrics_port: MetricsPortOpt = 0,
    metrics_bind: MetricsBindOpt = "127.0.0.1",
    json_logs: Annotated[bool, typer.Option("--json", help="JSON-lines logs.")] = False,
    verbose: VerboseOpt = 0,
) -> None:
    """Claim open jobs, train them, commit checkpoints and follow them to settlement."""
    models = check_models(model)
    from noderuntime import run_until_signalled, setup_logging
    from noderuntime.options import configure_node, connect
    from solver.node import SolverNode

    setup_logging(json_logs=json_logs, level="DEBUG" if verbose >= 2 else "INFO")
    from veritrain.training import resolve_device

    resolve_device(device)  # a bad --device is refused before connecting
    keys = KeySource(keystore, password_env, key_env, dev_account)
    client = connect(rpc_url, deployment, keys)
    node = SolverNode(
        client,
        data_dir,
        host,
        port,
        bind_host=bind,
        models=models,
        max_active_jobs=max_jobs,
        min_reward=min_reward,
        threads=threads,
        device=device,
        workers=workers,
    )
    configure_node(
        node,
        auto_stake=auto_stake,
        stake=stake,
        reset_state=reset_state,
        mirrors=mirror,
        metrics_port=metrics_port,
        metrics_bind=metrics_bind,
    )
    run_until_signalled(node)
