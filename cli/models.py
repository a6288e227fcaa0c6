"""`veritrain model ...`: models as on-chain entities with an owner (`ShareRegistry`).

A model id (keccak256 of the model name) is registered once, first come first served; its
owner decides who may post jobs under it (and so whose verified work mints its shares), and
may hand it over in two steps. The owner cannot mint shares itself, cannot touch revenue and
cannot change past jobs (docs/PROTOCOL.md, "Model owner's powers").

A model is registered with what binds its jobs to its lineage (docs/SECURITY.md P-18): the
architecture and family commitments of a spec, the compute one step costs (the unit of its
shares) and the state hash of the spec's seed initialisation, where the first job starts
(`veritrain.lineage`). `model show` prints them with the lineage (each finalized state).

Run ``veritrain model --help``. Commands:
    register MODEL [--preset P | --spec FILE] [--seed S]
                              register MODEL with the signing account as owner, bound to the
                              architecture, family and seed state of the spec
    authorize MODEL ACCOUNT   let ACCOUNT post jobs under MODEL (owner only)
    revoke MODEL ACCOUNT      stop ACCOUNT posting under MODEL (owner only)
    transfer MODEL ACCOUNT    offer MODEL to ACCOUNT (owner only; ACCOUNT accepts)
    accept MODEL              accept a pending hand-over of MODEL
    show MODEL [--account A]  owner, pending owner, posters, share token, commitments, head and
                              lineage, whether A may post
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from cli.errors import CliError
from cli.reports import check_model, commitments_json, lineage_report, model_id_of
from noderuntime.options import (
    DEFAULT_RPC,
    DeploymentOpt,
    DevAccountOpt,
    JsonOpt,
    KeyEnvOpt,
    KeystoreOpt,
    PasswordEnvOpt,
    RpcUrlOpt,
    check_address,
    connect_reader,
    connect_signer,
    emit_json,
)
from veritrain.units import utc_time

__all__ = ["app", "model_report"]

app = typer.Typer(
    help="Models: register one, authorise who may post jobs under it, hand it over.",
    no_args_is_help=True,
)

ModelArg = Annotated[
    str, typer.Argument(help="Model name (e.g. digits-mlp) or 0x model id.", callback=check_model)
]
AccountArg = Annotated[str, typer.Argument(help="0x account address.", callback=check_address)]


def registration_spec(
    model: str,
    *,
    preset: str | None = None,
    spec_file: Path | None = None,
    seed: int = 1,
    arith: str = "native",
    batch_size: int = 64,
) -> Any:
    """The spec a model is registered from: ``spec_file`` (canonical JSON of a `JobSpec`), else
    ``preset`` (or MODEL itself when it names a preset), else `job submit`'s default digits MLP
    spec for MODEL (batch size ``batch_size``); `seed` is the first job's seed (its seed state
    roots the lineage; `job submit` starts at seed 1).

    Raises:
        typer.BadParameter: a spec file that is missing, not JSON or not a valid spec
            (`cli.spec.load_spec_file`).
        CliError: a preset spec that cannot be built, or a spec that trains another model than
            MODEL.
    """
    from pydantic import ValidationError

    from cli.spec import load_spec_file
    from veritrain.errors import SpecError
    from veritrain.presets import PRESETS
    from veritrain.presets import preset as preset_spec
    from veritrain.spec import default_digits_spec

    try:
        if spec_file is not None:
            spec = load_spec_file(spec_file)
        elif preset is not None or model in PRESETS:
            spec = preset_spec(preset or model, arith, seed=seed)
        elif model.startswith(("0x", "0X")):
            raise CliError(f"model {model}: give --preset or --spec to register a 0x model id")
        else:
            spec = default_digits_spec(seed=seed, batch_size=batch_size, model_id=model)
    except (OSError, ValueError, ValidationError, SpecError) as exc:
        raise CliError(f"cannot build the spec of model {model}: {exc}") from exc
    if spec.model_id_hash() != model_id_of(model):
        raise CliError(f"the spec trains model {spec.model_id!r}, not {model}")
    return spec


@app.command("register")
def register(
    model: ModelArg,
    preset: Annotated[
        str | None,
        typer.Option(
            help="Preset whose architecture and family the model trains (default: MODEL "
            "if it names a preset, else the digits MLP of `job submit`)."
        ),
    ] = None,
    spec_file: Annotated[
        Path | None,
        typer.Option(
            "--spec", help="JSON job spec whose architecture and family the model trains."
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option(min=0, help="Seed of the first job (its seed state roots the lineage).")
    ] = 1,
    arith: Annotated[str, typer.Option(help="Preset arithmetic: native or repro2.")] = "native",
    batch_size: Annotated[int, typer.Option(min=1, help="Examples per step (digits MLP).")] = 64,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Register MODEL with the signing account as its owner (first come, first served), bound to
    a spec's architecture, family and compute per step, its lineage rooted at the spec's seed
    state. Jobs under MODEL must train that architecture and family; only a job starting from
    the model's head (the seed state at first) mints shares, 1 per FLOP of verified compute."""
    from veritrain.lineage import ModelCommitments
    from veritrain.training import TrainingEngine

    model_id = model_id_of(model)
    spec = registration_spec(
        model, preset=preset, spec_file=spec_file, seed=seed, arith=arith, batch_size=batch_size
    )
    engine = TrainingEngine(spec)
    commitments = ModelCommitments.of(spec, engine.state_hash(engine.init_state()))
    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    owner = client.shares.model_owner(model_id)
    if owner is not None:
        raise CliError(f"model {model} is already owned by {owner}")
    client.shares.register_model(model_id, **commitments.model_dump())
    if json_out:
        emit_json(
            {
                "model": model,
                "model_id": "0x" + model_id.hex(),
                "owner": client.address,
                **commitments_json(commitments.model_dump()),
            }
        )
    else:
        typer.echo(f"registered model {model} (0x{model_id.hex()}), owner {client.address}")
        typer.echo(
            f"  architecture 0x{commitments.architecture.hex()}, family "
            f"0x{commitments.family.hex()}, {commitments.compute_per_step} FLOP per step, seed "
            f"state 0x{commitments.seed_state.hex()} (seed {spec.seed})"
        )


@app.command("authorize")
def authorize(
    model: ModelArg,
    account: AccountArg,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
) -> None:
    """Let ACCOUNT post jobs under MODEL (owner only)."""
    model_id, poster = model_id_of(model), account
    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    client.shares.authorize_poster(model_id, poster)
    typer.echo(f"{poster} may now post jobs under model {model}")


@app.command("revoke")
def revoke(
    model: ModelArg,
    account: AccountArg,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
) -> None:
    """Stop ACCOUNT posting jobs under MODEL (owner only); its past jobs are unaffected."""
    model_id, poster = model_id_of(model), account
    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    client.shares.revoke_poster(model_id, poster)
    typer.echo(f"{poster} may no longer post jobs under model {model}")


@app.command("transfer")
def transfer(
    model: ModelArg,
    account: AccountArg,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
) -> None:
    """Offer MODEL to ACCOUNT (owner only); ownership moves when ACCOUNT runs `model accept`.
    The zero address withdraws a pending offer."""
    model_id, new_owner = model_id_of(model), account
    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    client.shares.transfer_model_ownership(model_id, new_owner)
    if int(new_owner, 16) == 0:
        typer.echo(f"model {model}: pending hand-over withdrawn (nobody may accept it)")
    else:
        typer.echo(f"model {model} offered to {new_owner}; it must run `veritrain model accept`")


@app.command("accept")
def accept(
    model: ModelArg,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
) -> None:
    """Accept a pending hand-over of MODEL; the previous owner's posters lapse."""
    model_id = model_id_of(model)
    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    client.shares.accept_model_ownership(model_id)
    typer.echo(f"{client.address} now owns model {model}")


def model_report(client: Any, model: str, account: str | None = None) -> dict[str, Any]:
    """Owner, pending owner, authorised posters and share token of ``model``.

    Args:
        client: a `ChainClient` bound to a deployment (read-only use).
        model: model name or 0x id.
        account: also report whether this account may post (`can_post`), if given.

    Returns:
        ``{"model", "model_id", "registered", "owner", "pending_owner", "posters", "token",
        "commitments", "head", "slot", "lineage"}`` plus ``"account"`` and ``"can_post"`` when
        ``account`` is given. ``commitments`` is ``{"architecture", "family",
        "compute_per_step", "seed_state"}`` (0x hex, FLOP) or None; ``head`` the 0x state hash a
        job must start from to mint; ``slot`` ``{"job_id", "extend_by"}``: the job that took the
        head's extension slot at post (0: the slot is free, the next post from the head takes
        it) and, once it finalized, the last Unix second its final state may be appended (0
        before; shown in UTC); ``lineage`` ``[{"index", "state", "job_id"}]``.
    """
    model_id = model_id_of(model)
    shares = client.shares
    owner = shares.model_owner(model_id)
    out: dict[str, Any] = {
        "model": model,
        "model_id": "0x" + model_id.hex(),
        "registered": owner is not None,
        "owner": owner,
        "pending_owner": shares.pending_model_owner(model_id),
        "posters": shares.posters(model_id) if owner is not None else [],
        "token": shares.shares_of(model_id),
    }
    out.update(lineage_report(client, model_id))
    if account is not None:
        out["account"] = account
        out["can_post"] = shares.can_post(model_id, account)
    return out


def echo_lineage(report: dict[str, Any]) -> None:
    """Print the head and lineage of a `lineage_report`."""
    typer.echo(f"  head           {report['head']}")
    slot = report["slot"]
    if slot["job_id"] and slot["extend_by"]:
        typer.echo(
            f"  head slot      job {slot['job_id']}, finalized: its final state must be appended "
            f"by {utc_time(slot['extend_by'])} UTC, which mints its shares; else the slot frees"
        )
    elif slot["job_id"]:
        typer.echo(
            f"  head slot      job {slot['job_id']} (the head's lineage job; other jobs from the "
            "head are paid only)"
        )
    else:
        typer.echo("  head slot      free (the next job posted from the head takes it)")
    if not report["lineage"]:
        typer.echo("  lineage        seed state only (no finalized job on it yet)")
    for e in report["lineage"]:
        typer.echo(f"  lineage {e['index']:<6} {e['state']} (job {e['job_id']})")
    for run in report.get("runs", []):
        typer.echo(
            f"  run {run['run_id']:<10} {run['run_hash']} ({run['seats']} seats, "
            f"H = {run['inner_steps']}, round {run['round']} of {run['rounds']})"
        )
        for r in run["history"]:
            counted = ", ".join(
                f"seat {c['seat']} job {c['job_id']} {c['solver']}" for c in r["contributions"]
            )
            typer.echo(f"    round {r['round']:<4} {r['state']}  counted: {counted or 'none'}")


@app.command("show")
def show(
    model: ModelArg,
    account: Annotated[
        str | None, typer.Option(help="Also say whether this 0x account may post jobs.")
    ] = None,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Owner, pending owner, authorised posters, share token, commitments, head and lineage of
    MODEL."""
    who = check_address(account)
    client = connect_reader(rpc_url, deployment)
    report = model_report(client, model, who)
    if json_out:
        emit_json(report)
        return
    if not report["registered"]:
        typer.echo(f"model {model} ({report['model_id']}): not registered")
    else:
        typer.echo(f"model {model} ({report['model_id']})")
        typer.echo(f"  owner          {report['owner']}")
        if report["pending_owner"] is not None:
            typer.echo(f"  pending owner  {report['pending_owner']}")
        posters = ", ".join(report["posters"]) or "none"
        typer.echo(f"  posters        {posters}")
        typer.echo(f"  share token    {report['token'] or 'none yet (no verified work)'}")
        c = report["commitments"]
        typer.echo(f"  architecture   {c['architecture']}")
        typer.echo(f"  family         {c['family']}")
        typer.echo(f"  compute        {c['compute_per_step']} FLOP per step (1 share = 1 FLOP)")
        typer.echo(f"  seed state     {c['seed_state']}")
        echo_lineage(report)
    if who is not None:
        typer.echo(f"  {who} {'may' if report['can_post'] else 'may not'} post jobs")
