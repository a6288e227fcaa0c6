"""The `veritrain` command line.

Run ``veritrain --help``. Commands:
    devnet                 start Anvil, deploy, fund the dev accounts, write the manifest; runs
                           until Ctrl-C
    deploy                 deploy to any EVM chain, signing from a keystore; writes
                           deployments/<chain id>.json
    stake ROLE AMOUNT      stake tokens as solver, verifier or whistleblower
    unbond ROLE AMOUNT / withdraw ROLE
    job submit / list / show   (show: the verification round too: claims, sealed and revealed
                           verdicts, outcome, the forced sample once the secret is revealed)
    jackpot fund / show    the forced-error jackpot pool (docs/FORCED_ERRORS.md)
    credit                 show and claim pull payments
    shares MODEL [ACCOUNT] who owns a model (Protocol Learning ownership shares)
    revenue pay/claim      pay revenue into a model / claim an account's part
    solver run / verifier run / whistleblower run   the nodes
    demo                   the whole protocol end to end on a local Anvil

Heavy imports (torch, web3) stay inside the commands so ``--help`` is instant.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer

from cli.reports import model_id_of, shares_report
from noderuntime.options import (
    DeploymentOpt,
    DevAccountOpt,
    JsonOpt,
    KeyEnvOpt,
    KeySource,
    KeystoreOpt,
    PasswordEnvOpt,
    RpcUrlOpt,
    VerboseOpt,
    connect,
    emit_json,
    setup_logging,
    to_wei,
)

__all__ = ["app", "main"]

app = typer.Typer(
    help="veritrain: verified, incentivized training on an EVM chain.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
job_app = typer.Typer(help="Post and inspect training jobs.", no_args_is_help=True)
revenue_app = typer.Typer(help="Model revenue: pay in, claim out.", no_args_is_help=True)
jackpot_app = typer.Typer(
    help="The forced-error jackpot pool: fund it, show it.", no_args_is_help=True
)
app.add_typer(job_app, name="job")
app.add_typer(revenue_app, name="revenue")
app.add_typer(jackpot_app, name="jackpot")

DEFAULT_RPC = "http://127.0.0.1:8545"
ROLES = {"solver": 0, "verifier": 1, "whistleblower": 2}


def _keys(
    keystore: Path | None, password_env: str, key_env: str | None, dev_account: int | None
) -> KeySource:
    return KeySource(
        keystore=keystore, password_env=password_env, key_env=key_env, dev_account=dev_account
    )


def _role(name: str) -> int:
    try:
        return ROLES[name.lower()]
    except KeyError:
        raise typer.BadParameter(f"role must be one of {', '.join(ROLES)}") from None


def _fmt_tokens(wei: int) -> str:
    return f"{wei / 10**18:,.4f}"


def _run_chain(fn: Any) -> Any:
    """Run ``fn()`` turning chain errors into clean CLI errors (decoded custom errors)."""
    from chain.errors import ChainError

    try:
        return fn()
    except ChainError as exc:
        raise typer.Exit(_fail(str(exc))) from None


def _fail(message: str) -> int:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    return 1


# ---------------------------------------------------------------------------------- devnet


@app.command()
def devnet(
    port: Annotated[int, typer.Option(help="RPC port on 127.0.0.1.")] = 8545,
    block_time: Annotated[float, typer.Option(help="Seconds between blocks.")] = 1.0,
    preset: Annotated[str, typer.Option(help="Protocol parameters: 'demo' or 'default'.")] = "demo",
    deployments: Annotated[Path, typer.Option(help="Manifest folder.")] = Path("deployments"),
    fund: Annotated[str, typer.Option(help="Test tokens minted to each dev account.")] = "10000",
    verbose: VerboseOpt = 0,
) -> None:
    """Start Anvil, deploy the protocol, fund the dev accounts; run until Ctrl-C."""
    setup_logging(verbose)
    from chain.anvil import Anvil, dev_accounts
    from chain.client import ChainClient
    from chain.deploy import deploy_protocol
    from chain.manifest import ProtocolParams, write_manifest

    params = ProtocolParams.demo() if preset == "demo" else ProtocolParams()
    amount = to_wei(fund)
    with Anvil(port=port, block_time=block_time) as anvil:
        accounts = dev_accounts(10)
        deployer = ChainClient(anvil.rpc_url, accounts[0])
        dep = _run_chain(lambda: deploy_protocol(deployer, params))
        path = write_manifest(dep, deployments)
        for acct in accounts:
            ChainClient(anvil.rpc_url, acct, dep).token.faucet(amount)
        typer.echo(f"anvil      {anvil.rpc_url} (chain id {dep.chain_id})")
        typer.echo(f"manifest   {path}")
        for name, addr in dep.addresses.model_dump().items():
            typer.echo(f"{name:<15}{addr}")
        typer.echo(f"funded     {len(accounts)} dev accounts with {fund} VTT each")
        typer.echo("Ctrl-C to stop")
        try:
            while anvil.running:
                time.sleep(1)
        except KeyboardInterrupt:
            typer.echo("stopping")


# ---------------------------------------------------------------------------------- deploy


@app.command()
def deploy(
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    token: Annotated[
        str | None, typer.Option(help="Existing ERC-20 payment token (else deploy VeriToken).")
    ] = None,
    preset: Annotated[str, typer.Option(help="'default' or 'demo' parameters.")] = "default",
    out: Annotated[Path, typer.Option(help="Manifest folder.")] = Path("deployments"),
    json_out: JsonOpt = False,
    verbose: VerboseOpt = 0,
) -> None:
    """Deploy the contracts to any EVM chain and write deployments/<chain id>.json."""
    setup_logging(verbose, json_output=json_out)
    from chain.deploy import deploy_protocol
    from chain.manifest import ProtocolParams, write_manifest

    client = connect(
        rpc_url, None, _keys(keystore, password_env, key_env, None), need_deployment=False
    )
    params = ProtocolParams.demo() if preset == "demo" else ProtocolParams()
    dep = _run_chain(lambda: deploy_protocol(client, params, token))
    path = write_manifest(dep, out)
    if json_out:
        emit_json({"manifest": str(path), **dep.model_dump(mode="json")})
    else:
        typer.echo(f"deployed on chain {dep.chain_id} by {dep.deployer}; manifest {path}")
        for name, addr in dep.addresses.model_dump().items():
            typer.echo(f"  {name:<15}{addr}")


# ---------------------------------------------------------------------------------- staking


@app.command()
def stake(
    role: Annotated[str, typer.Argument(help="solver | verifier | whistleblower")],
    amount: Annotated[str, typer.Argument(help="Tokens (e.g. 100 or 5.5) or '<n>wei'.")],
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Stake tokens for a role (approves the StakeManager first)."""
    client = connect(rpc_url, deployment, _keys(keystore, password_env, key_env, dev_account))
    r = _role(role)
    _run_chain(lambda: client.stakes.stake(r, to_wei(amount)))
    view = client.stakes.stake_of(client.address, r)
    payload = {
        "address": client.address,
        "role": role,
        "staked_wei": view.staked,
        "locked_wei": view.locked,
        "unbonding_wei": view.unbonding,
        "active": client.stakes.is_active(client.address, r),
    }
    if json_out:
        emit_json(payload)
    else:
        typer.echo(
            f"{client.address} staked {_fmt_tokens(view.staked)} as {role} "
            f"(locked {_fmt_tokens(view.locked)}, active={payload['active']})"
        )


@app.command()
def unbond(
    role: Annotated[str, typer.Argument(help="solver | verifier | whistleblower")],
    amount: Annotated[str, typer.Argument(help="Tokens to move to unbonding.")],
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
) -> None:
    """Start unbonding free stake; withdraw it after the unbonding delay."""
    client = connect(rpc_url, deployment, _keys(keystore, password_env, key_env, dev_account))
    r = _role(role)
    _run_chain(lambda: client.stakes.request_unbond(r, to_wei(amount)))
    view = client.stakes.stake_of(client.address, r)
    typer.echo(f"unbonding {_fmt_tokens(view.unbonding)} until timestamp {view.release_at}")


@app.command()
def withdraw(
    role: Annotated[str, typer.Argument(help="solver | verifier | whistleblower")],
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
) -> None:
    """Withdraw unbonded stake once its delay has passed."""
    client = connect(rpc_url, deployment, _keys(keystore, password_env, key_env, dev_account))
    _run_chain(lambda: client.stakes.withdraw(_role(role)))
    typer.echo(f"withdrawn; wallet balance {_fmt_tokens(client.token.balance_of())}")


@app.command()
def credit(
    claim: Annotated[bool, typer.Option("--claim", help="Claim the credit now.")] = False,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Show (and with --claim, withdraw) the account's pull-payment credit."""
    client = connect(rpc_url, deployment, _keys(keystore, password_env, key_env, dev_account))
    amount = client.escrow.credit_of()
    if claim and amount > 0:
        _run_chain(client.escrow.claim_credit)
    if json_out:
        emit_json({"address": client.address, "credit_wei": amount, "claimed": claim})
    else:
        verb = "claimed" if claim and amount else "claimable"
        typer.echo(f"{client.address}: {_fmt_tokens(amount)} VTT {verb}")


# ---------------------------------------------------------------------------------- jobs


@job_app.command("submit")
def job_submit(
    steps: Annotated[int, typer.Option(help="Total optimizer steps N.")] = 300,
    interval: Annotated[int, typer.Option(help="Checkpoint interval k (divides N).")] = 25,
    seed: Annotated[int, typer.Option(help="Seed of the first job (then +1 per job).")] = 1,
    count: Annotated[int, typer.Option(min=1, help="Number of jobs to post.")] = 1,
    reward: Annotated[str, typer.Option(help="Solver reward per job, in tokens.")] = "50",
    model_id: Annotated[str, typer.Option(help="Model the jobs train.")] = "digits-mlp",
    lr: Annotated[float, typer.Option(help="AdamW learning rate.")] = 3e-3,
    threads: Annotated[int, typer.Option(help="Pinned CPU thread count.")] = 1,
    preset: Annotated[
        str | None, typer.Option(help="Job preset (veritrain.presets); overrides the model.")
    ] = None,
    arith: Annotated[str, typer.Option(help="Preset arithmetic: native or repro.")] = "native",
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Post digits-MLP training jobs, escrowing reward + verifier fees for each."""
    from veritrain.spec import ExecutionProfile, default_digits_spec

    if preset:  # bad preset or arithmetic: fail before touching the chain
        _preset_spec(preset, arith, seed, steps, interval)
    client = connect(rpc_url, deployment, _keys(keystore, password_env, key_env, dev_account))
    posted = []
    for i in range(count):
        spec = (
            _preset_spec(preset, arith, seed + i, steps, interval)
            if preset
            else default_digits_spec(
                seed=seed + i,
                total_steps=steps,
                checkpoint_interval=interval,
                lr=lr,
                model_id=model_id,
                profile=ExecutionProfile(threads=threads),
            )
        )
        receipt = _run_chain(
            lambda spec=spec: client.jobs.post_job(
                spec.model_id_hash(),
                spec.spec_hash(),
                spec.total_steps,
                spec.checkpoint_interval,
                to_wei(reward),
                spec.to_data_uri(),
            )
        )
        job_id = client.job_id_from(receipt)
        posted.append(
            {"job_id": job_id, "seed": spec.seed, "spec_hash": "0x" + spec.spec_hash().hex()}
        )
        if not json_out:
            typer.echo(f"posted job {job_id} (seed {spec.seed}, N={steps}, k={interval})")
    if json_out:
        emit_json({"jobs": posted})


def _preset_spec(name: str, arith: str, seed: int, steps: int, interval: int) -> Any:
    from veritrain.errors import VeritrainError
    from veritrain.presets import preset

    try:
        return preset(name, arith, seed=seed, total_steps=steps, checkpoint_interval=interval)
    except VeritrainError as exc:
        raise typer.Exit(_fail(str(exc))) from None


def _job_dict(client: Any, job_id: int) -> dict[str, Any]:
    job = client.jobs.get_job(job_id)
    return {
        "job_id": job_id,
        "status": job.status.name,
        "submitter": job.submitter,
        "solver": job.solver,
        "total_steps": job.total_steps,
        "checkpoint_interval": job.checkpoint_interval,
        "reward_wei": job.reward,
        "merkle_root": "0x" + job.merkle_root.hex(),
        "dispute_id": job.dispute_id,
    }


@job_app.command("list")
def job_list(
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """List every job with its status."""
    client = _reader(rpc_url, deployment)
    jobs = [_job_dict(client, j) for j in range(1, client.jobs.job_count() + 1)]
    if json_out:
        emit_json({"jobs": jobs})
        return
    from rich.console import Console
    from rich.table import Table

    table = Table("job", "status", "solver", "N", "k", "reward")
    for j in jobs:
        table.add_row(
            str(j["job_id"]),
            j["status"],
            j["solver"],
            str(j["total_steps"]),
            str(j["checkpoint_interval"]),
            _fmt_tokens(j["reward_wei"]),
        )
    Console().print(table)


@job_app.command("show")
def job_show(
    job_id: Annotated[int, typer.Argument(help="Job id.")],
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
) -> None:
    """Print one job as JSON, with its verifier assignment and verification round."""
    client = _reader(rpc_url, deployment)
    data = _job_dict(client, job_id)
    assignment = client.jobs.get_assignment(job_id)
    data["verifiers"] = list(assignment.verifiers)
    data["segments"] = list(assignment.segments)
    data["round"] = round_report(client, job_id)
    emit_json(data)


def round_report(client: Any, job_id: int) -> dict[str, Any]:
    """A job's verification round (docs/FORCED_ERRORS.md) as JSON-able data.

    Returns:
        ``{"claims_posted", "start_hashes", "end_hashes", "verdicts": [{"verifier", "sealed",
        "revealed", "approvals"}], "secret_revealed", "outcome", "forced_sample",
        "forced_segment", "windows"}``; the forced sample is None until the secret is revealed
        (or when the job carries no forced error).
    """
    from veritrain.enums import JobStatus, RoundOutcome, Verdict

    job = client.jobs.get_job(job_id, with_uris=False)
    if job.status < JobStatus.Verifying or job.status is JobStatus.Cancelled:
        return {"claims_posted": False, "outcome": None}  # no sample drawn yet
    assignment = client.jobs.get_assignment(job_id)
    submission = client.jobs.submission_of(job_id)
    claims = client.round.claims_of(submission)
    round_view = client.round.round_of(submission)
    outcome, sample = client.round.outcome(submission)
    verdicts = []
    for v in assignment.verifiers:
        commitment, revealed = client.round.verdict_commitment_of(submission, v)
        recorded = client.jobs.verdicts_of(job_id, v)
        verdicts.append(
            {
                "verifier": v,
                "sealed": commitment != b"\x00" * 32,
                "revealed": revealed,
                "approvals": [Verdict(int(x)) is Verdict.Approve for x in recorded]
                if revealed
                else None,
            }
        )
    forced = outcome is RoundOutcome.Forced
    windows = client.round.windows_of(submission)
    return {
        "claims_posted": claims.posted,
        "start_hashes": ["0x" + h.hex() for h in claims.start_hashes],
        "end_hashes": ["0x" + h.hex() for h in claims.end_hashes],
        "verdicts": verdicts,
        "verdicts_sealed": round_view.committed,
        "secret_revealed": round_view.revealed,
        "outcome": outcome.name,
        "forced_sample": sample if forced else None,
        "forced_segment": assignment.segments[sample] if forced else None,
        "windows": {
            "verdict_reveal_opens": windows.verdict_reveal_opens,
            "verdict_reveal_closes": windows.verdict_reveal_closes,
            "secret_reveal_opens": windows.secret_reveal_opens,
            "secret_reveal_closes": windows.secret_reveal_closes,
        },
    }


# --------------------------------------------------------------------------------- jackpot


@jackpot_app.command("fund")
def jackpot_fund(
    amount: Annotated[str, typer.Argument(help="Tokens to add to the pool.")],
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Add tokens to the jackpot pool that pays whoever catches a forced error."""
    client = connect(rpc_url, deployment, _keys(keystore, password_env, key_env, dev_account))
    wei = to_wei(amount)
    _run_chain(lambda: client.escrow.fund_jackpot(wei))
    pool = client.escrow.jackpot_pool()
    if json_out:
        emit_json({"funder": client.address, "amount_wei": wei, "pool_wei": pool})
    else:
        typer.echo(f"funded {_fmt_tokens(wei)} VTT; jackpot pool {_fmt_tokens(pool)} VTT")


@jackpot_app.command("show")
def jackpot_show(
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Show the jackpot pool, the jackpot per winner and the forced-error rate."""
    client = _reader(rpc_url, deployment)
    data = {
        "pool_wei": client.escrow.jackpot_pool(),
        "jackpot_wei": client.jobs.job_params().jackpot,
        "forced_error_rate_bps": client.round.forced_error_rate_bps(),
    }
    if json_out:
        emit_json(data)
    else:
        typer.echo(
            f"jackpot pool {_fmt_tokens(data['pool_wei'])} VTT, "
            f"{_fmt_tokens(data['jackpot_wei'])} VTT per winner, "
            f"forced errors in {data['forced_error_rate_bps'] / 100:.2f}% of jobs"
        )


def _reader(rpc_url: str, deployment: Path | None) -> Any:
    """A client for read-only commands: a throwaway key that never signs anything."""
    from eth_account import Account

    from chain.client import ChainClient
    from chain.errors import ChainValueError
    from chain.manifest import load_manifest

    probe = ChainClient(rpc_url, Account.create())
    try:
        dep = load_manifest(deployment if deployment is not None else probe.chain_id)
    except ChainValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--deployment") from exc
    probe.use_deployment(dep)
    return probe


# ---------------------------------------------------------------------------------- shares


@app.command()
def shares(
    model: Annotated[str, typer.Argument(help="Model name (e.g. digits-mlp) or 0x model id.")],
    account: Annotated[str | None, typer.Argument(help="Only this account.")] = None,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Who owns this model? Shares (1 per verified step), ownership in bps, claimable revenue."""
    client = _reader(rpc_url, deployment)
    report = shares_report(client, model, account)
    if json_out:
        emit_json(report)
        return
    if report["token"] is None:
        typer.echo(f"model {model}: no verified work yet, no shares minted")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(
        "account",
        "shares",
        "ownership",
        "claimable revenue",
        title=f"{model} ({report['total_shares']} shares, token {report['token']})",
    )
    for h in report["holders"]:
        table.add_row(
            h["address"], str(h["shares"]), f"{h['bps'] / 100:.2f}%", _fmt_tokens(h["revenue_wei"])
        )
    Console().print(table)


@revenue_app.command("pay")
def revenue_pay(
    model: Annotated[str, typer.Argument(help="Model name or 0x model id.")],
    amount: Annotated[str, typer.Argument(help="Tokens paid to the share holders.")],
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
) -> None:
    """Pay model revenue; it is split pro rata among the share holders."""
    client = connect(rpc_url, deployment, _keys(keystore, password_env, key_env, dev_account))
    model_id = model_id_of(model)
    _run_chain(lambda: client.shares.pay_revenue(model_id, to_wei(amount)))
    typer.echo(f"paid {amount} VTT of revenue into {model}")


@revenue_app.command("claim")
def revenue_claim(
    model: Annotated[str, typer.Argument(help="Model name or 0x model id.")],
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
) -> None:
    """Claim the caller's share of a model's revenue."""
    client = connect(rpc_url, deployment, _keys(keystore, password_env, key_env, dev_account))
    model_id = model_id_of(model)
    amount = client.shares.revenue_of(model_id)
    _run_chain(lambda: client.shares.claim_revenue(model_id))
    typer.echo(f"claimed {_fmt_tokens(amount)} VTT of {model} revenue")


# ---------------------------------------------------------------------------------- demo


@app.command()
def demo(
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write the machine-readable summary here.")
    ] = None,
    workdir: Annotated[
        Path | None, typer.Option(help="Run folder (logs, node data); default runs/demo-<time>.")
    ] = None,
    steps: Annotated[int, typer.Option(help="Steps per job.")] = 300,
    interval: Annotated[int, typer.Option(help="Checkpoint interval.")] = 25,
    timeout: Annotated[float, typer.Option(help="Give up after this many seconds.")] = 570.0,
    adjudicator: Annotated[
        str, typer.Option(help="'bisection' (bisection game, then one step) or 'committee'.")
    ] = "bisection",
    verbose: VerboseOpt = 0,
) -> None:
    """Run the protocol end to end: 3 jobs, honest and cheating solvers, a lazy verifier."""
    setup_logging(verbose)
    from cli.demo import DemoConfig, print_summary, run_demo

    cfg = DemoConfig(
        workdir=workdir,
        total_steps=steps,
        checkpoint_interval=interval,
        timeout_s=timeout,
        adjudicator=adjudicator,
    )
    summary = run_demo(cfg)
    print_summary(summary)
    if json_path is not None:
        import json

        json_path.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
        typer.echo(f"summary written to {json_path}")
    if not summary.get("ok", False):
        raise typer.Exit(1)


def _mount_nodes() -> None:
    from adversary.cli import app as adversary_app
    from solver.cli import app as solver_app
    from verifier.cli import app as verifier_app
    from whistleblower.cli import app as whistleblower_app

    app.add_typer(solver_app, name="solver", help="Run a solver node.")
    app.add_typer(verifier_app, name="verifier", help="Run a verifier node.")
    app.add_typer(whistleblower_app, name="whistleblower", help="Run a whistleblower node.")
    app.add_typer(adversary_app, name="adversary", help="TESTING ONLY: run adversary nodes.")


app.command("train")(__import__("cli.train", fromlist=["train"]).train)
_mount_nodes()


def main() -> None:
    """Console entry point."""
    app()


if __name__ == "__main__":
    main()
