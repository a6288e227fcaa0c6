"""`veritrain run drive`: a run's owner posts every round by itself (docs/RUNS.md).

Run: ``veritrain run drive run.json --dev-account 0 [--poll 5] [--json]``.

Every `--poll` seconds it reads where the run is from the chain and does the one thing due
(`noderuntime.rundriver.drive_step`): posts the current round's contribution jobs once the
round before is final, finalizes a claim whose challenge window is over (as `veritrain run
finalize`), or waits (jobs running, a claim standing or disputed). It prints one line per
action and per new reason to wait, amounts in VTT and times in UTC; with `--json`, one JSON
object per line instead (amounts in wei, times in Unix seconds):
``{"action", "run_id", "round", "reason", "seats", "jobs", "escrow_wei", "until", "detail",
"time"}``. It exits 0 once the run's last round is final.

It keeps no state of its own: killed at any moment and started again, it finds the run where
the chain says it is, never posts a seat twice and never skips a round; a round posted but not
final is waited on. Ctrl-C (or SIGTERM) stops it (exit 130) with a line saying where the run is.

Bad input (a missing or invalid run file, a run not opened, a signer that may not post the
model's jobs, a balance below a round's escrow, checked before sending) prints one line on
stderr and exits non-zero.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from noderuntime.options import (
    DEFAULT_RPC,
    DeploymentOpt,
    DevAccountOpt,
    JsonOpt,
    KeyEnvOpt,
    KeystoreOpt,
    MirrorOpt,
    PasswordEnvOpt,
    RpcUrlOpt,
    connect_signer,
    token_amount,
)

__all__ = ["describe_step", "drive"]

#: The exit status after Ctrl-C (as every `veritrain` command's).
INTERRUPTED = 130


def describe_step(step: Any, now: float) -> str:
    """One line for a person: what a `DriveStep` did or waits for (VTT, UTC).

    Args:
        step: a `noderuntime.rundriver.DriveStep`.
        now: the wall-clock time of the step (Unix seconds), printed first.
    """
    from veritrain.units import utc_time, vtt

    head = f"{utc_time(int(now))} UTC  run {step.run_id}"
    where = f"{head} round {step.round}"
    if step.action == "complete":
        return f"{head}: complete, its {step.round} round(s) final"
    if step.action == "posted":
        seats = ", ".join(map(str, step.seats))
        jobs = ", ".join(map(str, step.jobs))
        return f"{where}: posted seat(s) {seats} as job(s) {jobs} (escrow {vtt(step.escrow_wei)})"
    if step.action == "finalized":
        return f"{where}: finalized (its claim's challenge window is over)"
    until = "" if step.until is None else f"{utc_time(step.until)} UTC"
    why = {
        "challenge_window": f"its claim can be challenged until {until}",
        "disputed": f"its claim is challenged ({step.detail}): the committee rules",
        "settling": f"{step.detail}: waiting for the jobs to settle and a claim",
        "registration_closed": f"registration closed at {until} ({step.detail}): waiting "
        "for a claim",
        "states_unavailable": f"a counted final state is not served: {step.detail}",
        "raced": f"another transaction came first ({step.detail}): reading the chain again",
    }[step.reason]
    return f"{where}: {why}"


def _json_line(step: Any, now: float) -> str:
    """One JSON object (a line) for a `DriveStep`: amounts in wei, times in Unix seconds."""
    return json.dumps(
        {
            "action": step.action,
            "run_id": step.run_id,
            "round": step.round,
            "reason": step.reason or None,
            "seats": step.seats,
            "jobs": step.jobs,
            "escrow_wei": step.escrow_wei,
            "until": step.until,
            "detail": step.detail or None,
            "time": int(now),
        },
        sort_keys=True,
    )


def drive(
    run_file: Annotated[Path, typer.Argument(help="The run spec (`veritrain run spec`).")],
    reward: Annotated[
        int, typer.Option(parser=token_amount(positive=False), help="Reward per contribution.")
    ] = 20 * 10**18,
    poll: Annotated[
        float, typer.Option("--poll", min=0.05, help="Seconds between reads of the chain.")
    ] = 5.0,
    mirror: MirrorOpt = None,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            "--data-dir",
            help="Keep the states proved here (counted finals, outer states) in "
            "DIR/checkpoints, and look there first.",
        ),
    ] = None,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Drive a run to its end as its owner: post each round once the one before is final,
    finalize claims whose challenge window is over; resumes from the chain after a restart."""
    from chain.errors import RpcUnavailable
    from cli.errors import CliError
    from cli.run import _load_run, _opened, _require_poster
    from noderuntime.mirror import StateMirror
    from noderuntime.options import check_mirrors
    from noderuntime.rundriver import DriveStep, EscrowShort, drive_step
    from veritrain.errors import VeritrainError

    run = _load_run(run_file)
    mirrors = check_mirrors(mirror)
    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    _require_poster(client, run)
    view = _opened(client, run)
    store = None if data_dir is None else StateMirror(data_dir / "checkpoints")
    if not json_out:
        typer.echo(
            f"driving run {view.run_id} (0x{run.run_hash().hex()}) as {client.address}: "
            f"round {view.round} of {view.rounds}, polling every {poll:g} s"
        )
    said: tuple[Any, ...] | None = None
    step: DriveStep | None = None
    previous = signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops it as Ctrl-C does
    try:
        while True:
            try:
                step = drive_step(
                    client,
                    run,
                    reward=reward,
                    store=store,
                    mirrors=mirrors,
                )
            except EscrowShort as exc:
                raise CliError(str(exc)) from None
            except RpcUnavailable as exc:  # a node restarting: read again next poll
                if not json_out:
                    typer.echo(f"chain unreachable ({str(exc).splitlines()[0]}): retrying")
                time.sleep(poll)
                continue
            except VeritrainError as exc:
                raise CliError(str(exc).splitlines()[0]) from None
            key = (step.action, step.round, step.reason, step.detail, step.until)
            if step.action != "waiting" or key != said:
                now = time.time()
                typer.echo(_json_line(step, now) if json_out else describe_step(step, now))
                said = key
            if step.action == "complete":
                return
            if step.action == "waiting":
                time.sleep(poll)
    except KeyboardInterrupt:
        if not json_out:
            where = "" if step is None else f" at round {step.round}"
            typer.echo(
                f"stopped{where}: run `veritrain run drive` again to go on from where the "
                "chain says the run is",
                err=True,
            )
        raise typer.Exit(INTERRUPTED) from None
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: Any) -> None:
    """SIGTERM handler: stop the loop as Ctrl-C does."""
    raise KeyboardInterrupt
