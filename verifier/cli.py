"""`veritrain verifier ...`: run a verifier node.

Run: ``veritrain verifier run --rpc-url http://127.0.0.1:8545 --key-env VERIFIER_KEY
--data-dir runs/verifier``.
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
    HandOffOpt,
    KeyEnvOpt,
    KeySource,
    KeystoreOpt,
    MetricsBindOpt,
    MetricsPortOpt,
    MirrorOpt,
    PasswordEnvOpt,
    ResetStateOpt,
    RpcUrlOpt,
    ServeBindOpt,
    ServePortOpt,
    StakeOpt,
    ThreadsOpt,
    VerboseOpt,
)

app = typer.Typer(no_args_is_help=True, help="Verifier node: replay sampled segments, arbitrate.")


@app.command("run")
def run(
    config: ConfigOpt = None,
    rpc_url: RpcUrlOpt = "http://127.0.0.1:8545",
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
    data_dir: Annotated[Path, typer.Option("--data-dir", help="State file directory.")] = Path(
        "runs/verifier"
    ),
    threads: ThreadsOpt = None,
    device: DeviceOpt = "cpu",
    auto_stake: AutoStakeOpt = True,
    stake: StakeOpt = None,
    reset_state: ResetStateOpt = False,
    mirror: MirrorOpt = None,
    metrics_port: MetricsPortOpt = 0,
    metrics_bind: MetricsBindOpt = "127.0.0.1",
    serve_port: ServePortOpt = None,
    serve_bind: ServeBindOpt = "127.0.0.1",
    hand_off: HandOffOpt = True,
    json_logs: Annotated[bool, typer.Option("--json", help="JSON-lines logs.")] = False,
    verbose: VerboseOpt = 0,
) -> None:
    """Verify assigned jobs by replay, sit on committees, claim fees."""
    from noderuntime import run_until_signalled, setup_logging
    from noderuntime.options import configure_node, connect
    from verifier.node import VerifierNode

    setup_logging(json_logs=json_logs, level="DEBUG" if verbose >= 2 else "INFO")
    from veritrain.training import resolve_device

    resolve_device(device)  # a bad --device is refused before connecting
    keys = KeySource(keystore, password_env, key_env, dev_account)
    client = connect(rpc_url, deployment, keys)
    node = VerifierNode(client, data_dir, threads=threads, device=device, hand_off=hand_off)
    configure_node(
        node,
        auto_stake=auto_stake,
        stake=stake,
        reset_state=reset_state,
        mirrors=mirror,
        serve_port=serve_port,
        serve_bind=serve_bind,
        metrics_port=metrics_port,
        metrics_bind=metrics_bind,
    )
    run_until_signalled(node)
