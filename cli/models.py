"""`veritrain model ...`: models as on-chain entities with an owner (`ShareRegistry`).

A model id (keccak256 of the model name) is registered once, first come first served; its
owner decides who may post jobs under it (and so whose verified work mints its shares), and
may hand it over in two steps. The owner cannot mint shares itself, cannot touch revenue and
cannot change past jobs (README, "Model owner's powers").

Run ``veritrain model --help``. Commands:
    register MODEL            register MODEL with the signing account as owner
    authorize MODEL ACCOUNT   let ACCOUNT post jobs under MODEL (owner only)
    revoke MODEL ACCOUNT      stop ACCOUNT posting under MODEL (owner only)
    transfer MODEL ACCOUNT    offer MODEL to ACCOUNT (owner only; ACCOUNT accepts)
    accept MODEL              accept a pending hand-over of MODEL
    show MODEL [--account A]  owner, pending owner, posters, share token, whether A may post
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from cli.errors import CliError
from cli.reports import check_model, model_id_of
from noderuntime.options import (
    DeploymentOpt,
    DevAccountOpt,
    JsonOpt,
    KeyEnvOpt,
    KeySource,
    KeystoreOpt,
    PasswordEnvOpt,
    RpcUrlOpt,
    check_address,
    connect,
    connect_reader,
    emit_json,
)

__all__ = ["app", "model_report"]

app = typer.Typer(
    help="Models: register one, authorise who may post jobs under it, hand it over.",
    no_args_is_help=True,
)

DEFAULT_RPC = "http://127.0.0.1:8545"
ModelArg = Annotated[
    str, typer.Argument(help="Model name (e.g. digits-mlp) or 0x model id.", callback=check_model)
]
AccountArg = Annotated[str, typer.Argument(help="0x account address.", callback=check_address)]


def _signer(
    rpc_url: str,
    deployment: Path | None,
    keystore: Path | None,
    password_env: str,
    key_env: str | None,
    dev_account: int | None,
) -> Any:
    keys = KeySource(
        keystore=keystore, password_env=password_env, key_env=key_env, dev_account=dev_account
    )
    return connect(rpc_url, deployment, keys)


@app.command("register")
def register(
    model: ModelArg,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Register MODEL with the signing account as its owner (first come, first served)."""
    model_id = model_id_of(model)
    client = _signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    owner = client.shares.model_owner(model_id)
    if owner is not None:
        raise CliError(f"model {model} is already owned by {owner}")
    client.shares.register_model(model_id)
    if json_out:
        emit_json({"model": model, "model_id": "0x" + model_id.hex(), "owner": client.address})
    else:
        typer.echo(f"registered model {model} (0x{model_id.hex()}), owner {client.address}")


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
    client = _signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
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
    client = _signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
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
    """Offer MODEL to ACCOUNT (owner only); ownership moves when ACCOUNT runs `model accept`."""
    model_id, new_owner = model_id_of(model), account
    client = _signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    client.shares.transfer_model_ownership(model_id, new_owner)
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
    client = _signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    client.shares.accept_model_ownership(model_id)
    typer.echo(f"{client.address} now owns model {model}")


def model_report(client: Any, model: str, account: str | None = None) -> dict[str, Any]:
    """Owner, pending owner, authorised posters and share token of ``model``.

    Args:
        client: a `ChainClient` bound to a deployment (read-only use).
        model: model name or 0x id.
        account: also report whether this account may post (`can_post`), if given.

    Returns:
        ``{"model", "model_id", "registered", "owner", "pending_owner", "posters", "token"}``
        plus ``"account"`` and ``"can_post"`` when ``account`` is given.
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
    if account is not None:
        out["account"] = account
        out["can_post"] = shares.can_post(model_id, account)
    return out


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
    """Owner, pending owner, authorised posters and share token of MODEL."""
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
    if who is not None:
        typer.echo(f"  {who} {'may' if report['can_post'] else 'may not'} post jobs")
