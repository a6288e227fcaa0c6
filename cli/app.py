"""The `veritrain` command line.

Run ``veritrain --help``. Commands:
    devnet                 start Anvil, deploy, fund the dev accounts, write the manifest; runs
                           until Ctrl-C
    deploy                 deploy to any EVM chain, signing from a keystore; writes
                           deployments/<chain id>.json
    stake ROLE AMOUNT      stake tokens as solver, verifier or whistleblower
    unbond ROLE AMOUNT / withdraw ROLE
    job submit / list / show   (submit: the digits MLP, a --preset or a --spec FILE; show: the
                           verification round too: claims, sealed and revealed verdicts,
                           outcome, the forced sample once the secret is revealed)
    job watch ID           follow one job's events live until it settles
    job cancel ID          the submitter cancels an Open job (its escrow becomes credit)
    job reclaim ID         reopen a job whose solver missed its commit deadline
    jackpot fund / show    the forced-error jackpot pool (docs/FORCED_ERRORS.md)
    credit                 show and claim pull payments
    shares MODEL [ACCOUNT] who owns a model (Protocol Learning ownership shares) and its lineage
    revenue pay/claim      pay revenue into a model / claim an account's part
    run simulate           preview a DiLoCo training run on this machine (no chain)
    run open / list / post / propose / challenge / finalize / show   DiLoCo runs on chain
    model register / authorize / revoke / transfer / accept / show   who may post under a model
    account show [ADDR]    stakes (locked, unbonding, slashed), credit, earnings, shares
    dispute list / show N  disputes and each one's moves, step and winner
    index [--follow]       index the deployment's events into SQLite (or PostgreSQL)
    dashboard              serve the read-only web dashboard from the index
    data prepare           tokenize text files into a chunked dataset bound by one root
    spec new               write the job spec of a GPT or Llama on a prepared dataset
    train                  train a --preset or a --spec file locally (no chain)
    solver run / verifier run / whistleblower run   the nodes
    demo                   the whole protocol end to end on a local Anvil
    selftest               does this machine reproduce repro2? (golden hashes, conformance)

Every failure is one line on stderr and a non-zero exit (`cli.errors.OneLineErrorGroup`);
``veritrain --debug ...`` or ``VERITRAIN_DEBUG=1`` shows the traceback instead. Inputs are
checked before any transaction is sent.

Heavy imports (torch, web3) stay inside the commands so ``--help`` is instant.
"""

from __future__ import annotations

import enum
import json
import math
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from cli.errors import CliError, OneLineErrorGroup, enable_debug, require_balance
from cli.history import when
from cli.jobs import app as job_app
from cli.models import app as model_app
from cli.reports import check_model, model_id_of, shares_report
from noderuntime.options import (
    DEFAULT_RPC,
    DEVNET_CHAIN_IDS,
    DeploymentOpt,
    DevAccountOpt,
    JsonOpt,
    KeyEnvOpt,
    KeySource,
    KeystoreOpt,
    PasswordEnvOpt,
    RpcUrlOpt,
    VerboseOpt,
    check_address,
    connect,
    connect_reader,
    connect_signer,
    emit_json,
    setup_logging,
    token_amount,
)
from veritrain.units import vtt, vtt_number

__all__ = ["app", "main"]

app = typer.Typer(
    cls=OneLineErrorGroup,
    help="veritrain: verified, incentivized training on an EVM chain.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
revenue_app = typer.Typer(help="Model revenue: pay in, claim out.", no_args_is_help=True)
jackpot_app = typer.Typer(
    help="The forced-error jackpot pool: fund it, show it.", no_args_is_help=True
)
app.add_typer(job_app, name="job")
app.add_typer(revenue_app, name="revenue")
app.add_typer(jackpot_app, name="jackpot")
app.add_typer(model_app, name="model")

ROLES = {"solver": 0, "verifier": 1, "whistleblower": 2}


class RoleName(enum.StrEnum):
    """A staking role on the command line (its on-chain value is `ROLES[name]`)."""

    solver = "solver"
    verifier = "verifier"
    whistleblower = "whistleblower"


class Preset(enum.StrEnum):
    """Protocol parameter presets (`chain.manifest.ProtocolParams`)."""

    demo = "demo"
    default = "default"


RoleArg = Annotated[
    RoleName,
    typer.Argument(case_sensitive=False, help="solver | verifier | whistleblower"),
]


def _amount(help_text: str, *, positive: bool = True) -> Any:
    """An AMOUNT argument: tokens (``100``, ``5.5``) or ``<n>wei``, parsed to wei."""
    return typer.Argument(parser=token_amount(positive=positive), help=help_text)


@app.callback()
def _root(
    debug: Annotated[
        bool, typer.Option("--debug", help="Show tracebacks instead of one-line errors.")
    ] = False,
) -> None:
    """veritrain: verified, incentivized training on an EVM chain."""
    if debug:
        enable_debug()


def _echo_addresses(dep: Any, indent: str = "") -> None:
    """One line per contract of a deployment, names in a column as wide as the longest."""
    addresses = dep.addresses.model_dump()
    width = max(len(name) for name in addresses) + 1
    for name, addr in addresses.items():
        typer.echo(f"{indent}{name:<{width}}{addr or '(not deployed)'}")


# ---------------------------------------------------------------------------------- devnet


class _Stop(Exception):
    """Raised in the main thread by the devnet's SIGTERM/SIGINT handler."""


@app.command()
def devnet(
    port: Annotated[
        int, typer.Option(min=1, max=65535, help="RPC port on 127.0.0.1 (must be free).")
    ] = 8545,
    block_time: Annotated[float, typer.Option(help="Seconds between blocks (> 0).")] = 1.0,
    preset: Annotated[
        Preset, typer.Option(case_sensitive=False, help="Protocol parameters.")
    ] = Preset.demo,
    deployments: Annotated[Path, typer.Option(help="Manifest folder.")] = Path("deployments"),
    fund: Annotated[
        int,
        typer.Option(
            parser=token_amount(positive=False), help="Test tokens minted to each dev account."
        ),
    ] = 10_000 * 10**18,
    verbose: VerboseOpt = 0,
) -> None:
    """Start Anvil, deploy the protocol, fund the dev accounts; run until Ctrl-C or SIGTERM.

    Refuses a port already in use (it never deploys onto a chain it did not start); on
    SIGINT or SIGTERM it stops its Anvil (the whole process group) before exiting.
    """
    if not (math.isfinite(block_time) and block_time > 0):
        raise typer.BadParameter(
            f"must be > 0 seconds, got {block_time}", param_hint="'--block-time'"
        )
    setup_logging(verbose)
    import signal

    from chain.anvil import Anvil, dev_accounts
    from chain.client import ChainClient
    from chain.deploy import deploy_protocol
    from chain.manifest import ProtocolParams, write_manifest

    params = ProtocolParams.demo() if preset is Preset.demo else ProtocolParams()

    def _on_signal(signum: int, _frame: Any) -> None:
        for sig in previous:  # a second signal must not interrupt the shutdown
            signal.signal(sig, signal.SIG_IGN)
        raise _Stop(signum)

    previous = {sig: signal.signal(sig, _on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with Anvil(port=port, block_time=block_time) as anvil:
            accounts = dev_accounts(10)
            deployer = ChainClient(anvil.rpc_url, accounts[0])
            # one block per set-up transaction at once, not one per block time
            with anvil.instant_blocks():
                dep = deploy_protocol(deployer, params)
                path = write_manifest(dep, deployments)
                for acct in accounts:
                    ChainClient(anvil.rpc_url, acct, dep).token.faucet(fund)
            typer.echo(f"anvil      {anvil.rpc_url} (chain id {dep.chain_id}, pid {anvil.pid})")
            typer.echo(f"manifest   {path}")
            _echo_addresses(dep)
            typer.echo(f"funded     {len(accounts)} dev accounts with {vtt_number(fund)} VTT each")
            for index, acct in enumerate(accounts):
                typer.echo(f"account {index:<2} {acct.address}")
            typer.echo("Ctrl-C to stop", nl=True)
            while anvil.running:
                time.sleep(0.5)
            raise CliError(f"anvil exited unexpectedly (log {anvil.log_path})")
    except _Stop:
        typer.echo("stopped")
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


# ---------------------------------------------------------------------------------- deploy


@app.command()
def deploy(
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    token: Annotated[
        str | None,
        typer.Option(
            callback=check_address, help="Existing ERC-20 payment token (else deploy VeriToken)."
        ),
    ] = None,
    preset: Annotated[
        Preset, typer.Option(case_sensitive=False, help="Protocol parameters.")
    ] = Preset.default,
    out: Annotated[Path, typer.Option(help="Manifest folder.")] = Path("deployments"),
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Replace an existing manifest of this chain in --out (the old one is kept as "
            "<chain id>.json.previous).",
        ),
    ] = False,
    json_out: JsonOpt = False,
    verbose: VerboseOpt = 0,
) -> None:
    """Deploy the contracts to any EVM chain and write <out>/<chain id>.json.

    Everything that can be checked is checked before the first transaction: --out is writable,
    no manifest of this chain is there (unless --force), the deployer holds gas money and
    --token is a contract. Without --token a VeriToken is deployed: its faucet lets any account
    mint tokens, which suits a devnet or a test, never real value. While deploying, the
    addresses so far are kept in <out>/<chain id>.partial.json.
    """
    setup_logging(verbose, json_output=json_out)
    from chain.deploy import deploy_protocol
    from chain.manifest import ProtocolParams, manifest_path, write_manifest
    from veritrain.store import atomic_write_bytes

    client = connect(
        rpc_url,
        None,
        KeySource(keystore=keystore, password_env=password_env, key_env=key_env, dev_account=None),
        need_deployment=False,
    )
    path = manifest_path(client.chain_id, out)
    partial = path.with_suffix(".partial.json")
    try:
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(partial, b"{}")
    except OSError as exc:
        raise CliError(f"--out {out} is not writable: {exc.strerror or exc}") from None
    if path.exists() and not force:
        partial.unlink(missing_ok=True)
        raise CliError(
            f"{path} already exists (a deployment on chain {client.chain_id}): pass --force to "
            "replace it, or another --out"
        )
    if int(client.eth_balance()) == 0:
        partial.unlink(missing_ok=True)
        raise CliError(
            f"the deployer {client.address} holds no native currency on chain "
            f"{client.chain_id} to pay gas: fund it first (a deployment costs about 30 M gas)"
        )
    if token is not None and not bytes(
        client.w3.eth.get_code(client.w3.to_checksum_address(token))
    ):
        partial.unlink(missing_ok=True)
        raise CliError(f"--token {token} is not a contract on chain {client.chain_id}")
    if token is None and client.chain_id not in DEVNET_CHAIN_IDS:
        typer.echo(
            f"warning: no --token: deploying VeriToken on chain {client.chain_id}, whose faucet "
            "lets any account mint tokens (tests only; pass --token for a real payment token)",
            err=True,
        )
    params = ProtocolParams.demo() if preset is Preset.demo else ProtocolParams()

    def keep(addresses: dict[str, str]) -> None:
        atomic_write_bytes(partial, json.dumps(addresses, indent=2).encode())

    from chain.errors import ChainError

    try:
        dep = deploy_protocol(client, params, token, on_deployed=keep)
    except ChainError as exc:
        raise CliError(
            f"deployment failed: {exc} (the contracts deployed so far are listed in {partial})"
        ) from None
    if path.exists():
        path.replace(path.with_suffix(".json.previous"))
    path = write_manifest(dep, out)
    partial.unlink(missing_ok=True)
    if json_out:
        emit_json({"manifest": str(path), **dep.model_dump(mode="json")})
    else:
        typer.echo(f"deployed on chain {dep.chain_id} by {dep.deployer}; manifest {path}")
        _echo_addresses(dep, indent="  ")


# ---------------------------------------------------------------------------------- staking


@app.command()
def stake(
    role: RoleArg,
    amount: Annotated[int, _amount("Tokens (e.g. 100 or 5.5) or '<n>wei'.")],
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Stake tokens for a role (approves the StakeManager for exactly AMOUNT first).

    Checked before any transaction: the wallet balance covers AMOUNT and the resulting stake
    reaches the role's minimum; so no approval is left behind by a stake that would fail.
    """
    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    r = ROLES[role.value]
    current = client.stakes.stake_of(client.address, r)
    minimum = client.stakes.min_stake(r)
    if current.staked + amount < minimum:
        raise CliError(
            f"the {role.value} minimum stake is {vtt_number(minimum)} VTT: staking "
            f"{vtt_number(amount)} on top of {vtt_number(current.staked)} VTT is below it"
        )
    require_balance(client, amount, f"to stake as {role.value}")
    client.stakes.stake(r, amount)
    view = client.stakes.stake_of(client.address, r)
    payload = {
        "address": client.address,
        "role": role.value,
        "staked_wei": view.staked,
        "locked_wei": view.locked,
        "unbonding_wei": view.unbonding,
        "active": client.stakes.is_active(client.address, r),
    }
    if json_out:
        emit_json(payload)
    else:
        typer.echo(
            f"{client.address} staked {vtt(view.staked)} as {role.value} "
            f"(locked {vtt(view.locked)}, active={payload['active']})"
        )


@app.command()
def unbond(
    role: RoleArg,
    amount: Annotated[int, _amount("Tokens to move to unbonding.")],
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
) -> None:
    """Start unbonding free stake; withdraw it after the unbonding delay."""
    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    r = ROLES[role.value]
    free = client.stakes.free_stake(client.address, r)
    if amount > free:
        raise CliError(
            f"free stake as {role.value} is {vtt_number(free)} VTT, below the "
            f"{vtt_number(amount)} VTT asked to unbond"
        )
    client.stakes.request_unbond(r, amount)
    view = client.stakes.stake_of(client.address, r)
    typer.echo(
        f"unbonding {vtt(view.unbonding)} as {role.value} until {when(view.release_at)} UTC "
        f"(in {max(0, view.release_at - client.timestamp())} s)"
    )


@app.command()
def withdraw(
    role: RoleArg,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
) -> None:
    """Withdraw unbonded stake once its delay has passed."""
    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    r = ROLES[role.value]
    view = client.stakes.stake_of(client.address, r)
    if view.unbonding == 0:
        raise CliError(f"nothing unbonding as {role.value} (run `veritrain unbond` first)")
    now = client.timestamp()
    if now < view.release_at:
        raise CliError(
            f"{vtt(view.unbonding)} unbonding as {role.value} is released at "
            f"{when(view.release_at)} UTC (in {view.release_at - now} s)"
        )
    client.stakes.withdraw(r)
    typer.echo(f"withdrawn; wallet balance {vtt(client.token.balance_of())}")


@app.command()
def faucet(
    amount: Annotated[int, _amount("Test tokens to mint (at most 1,000,000 per call).")],
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Mint test tokens to the account from the deployment's VeriToken faucet (a deployment
    made without --token); a real payment token has none."""
    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    dep = client.deployment
    if dep is None or not dep.token_deployed:
        raise CliError(
            f"the payment token {client.token.contract.address} of this deployment is not a "
            "VeriToken: it has no faucet; acquire it as any other ERC-20"
        )
    limit = int(client.call(client.token.contract, "FAUCET_LIMIT"))
    if amount > limit:
        raise CliError(f"the faucet mints at most {vtt(limit)} per call, not {vtt(amount)}")
    if int(client.eth_balance()) == 0:
        raise CliError(
            f"{client.address} holds no native currency on chain {client.chain_id} to pay the "
            "faucet's gas: send it some first (the faucet mints tokens, not gas money)"
        )
    client.token.faucet(amount)
    balance = client.token.balance_of()
    if json_out:
        emit_json({"address": client.address, "minted_wei": amount, "balance_wei": balance})
    else:
        typer.echo(f"{client.address}: minted {vtt(amount)}; token balance {vtt(balance)}")


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
    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    amount = client.escrow.credit_of()
    if claim and amount > 0:
        client.escrow.claim_credit()
    if json_out:
        emit_json({"address": client.address, "credit_wei": amount, "claimed": claim})
    else:
        verb = "claimed" if claim and amount else "claimable"
        typer.echo(f"{client.address}: {vtt_number(amount)} VTT {verb}")


# --------------------------------------------------------------------------------- jackpot


@jackpot_app.command("fund")
def jackpot_fund(
    amount: Annotated[int, _amount("Tokens to add to the pool.")],
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Add tokens to the jackpot pool that pays whoever catches a forced error."""
    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    wei = amount
    require_balance(client, wei, "to fund the jackpot")
    client.escrow.fund_jackpot(wei)
    pool = client.escrow.jackpot_pool()
    if json_out:
        emit_json({"funder": client.address, "amount_wei": wei, "pool_wei": pool})
    else:
        typer.echo(f"funded {vtt_number(wei)} VTT; jackpot pool {vtt_number(pool)} VTT")


@jackpot_app.command("show")
def jackpot_show(
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Show the jackpot pool, the jackpot per winner and the forced-error rate."""
    client = connect_reader(rpc_url, deployment)
    data = {
        "pool_wei": client.escrow.jackpot_pool(),
        "jackpot_wei": client.jobs.job_params().jackpot,
        "forced_error_rate_bps": client.round.forced_error_rate_bps(),
    }
    if json_out:
        emit_json(data)
    else:
        typer.echo(
            f"jackpot pool {vtt_number(data['pool_wei'])} VTT, "
            f"{vtt_number(data['jackpot_wei'])} VTT per winner, "
            f"forced errors in {data['forced_error_rate_bps'] / 100:.2f}% of jobs"
        )


# ---------------------------------------------------------------------------------- shares


@app.command()
def shares(
    model: Annotated[
        str,
        typer.Argument(callback=check_model, help="Model name (e.g. digits-mlp) or 0x model id."),
    ],
    account: Annotated[
        str | None, typer.Argument(callback=check_address, help="Only this account.")
    ] = None,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Who owns this model? Shares (1 per FLOP of verified compute on the model's lineage),
    ownership in bps, claimable revenue; then the lineage (each finalized state, in order)."""
    from cli.models import echo_lineage

    client = connect_reader(rpc_url, deployment)
    report = shares_report(client, model, account)
    if report["token"] is None and report["commitments"] is None:
        raise CliError(
            f"model {model} is not registered on this deployment "
            "(see `veritrain model register --help`)"
        )
    if json_out:
        emit_json(report)
        return
    if report["total_shares"] == 0:
        typer.echo(f"model {model}: no verified work yet, no shares minted")
        if report["commitments"] is not None:
            echo_lineage(report)
        return
    from rich.table import Table

    from cli.console import address_column, report_console

    table = Table(title=f"{model} ({report['total_shares']} shares, token {report['token']})")
    table.add_column(**address_column("account"))
    for header in ("shares", "ownership", "claimable revenue (VTT)"):
        table.add_column(header)
    for h in report["holders"]:
        table.add_row(
            h["address"], str(h["shares"]), f"{h['bps'] / 100:.2f}%", vtt_number(h["revenue_wei"])
        )
    report_console().print(table)
    echo_lineage(report)


def _require_shares(client: Any, model: str, model_id: bytes) -> None:
    """Refuse a model with no shares (unregistered, or no job of it finalized yet): revenue
    paid into it would revert `NoSharesOutstanding`."""
    if client.shares.total_supply(model_id) == 0:
        raise CliError(f"model {model} has no shares yet (no verified job of it finalized)")


@revenue_app.command("pay")
def revenue_pay(
    model: Annotated[str, typer.Argument(callback=check_model, help="Model name or 0x model id.")],
    amount: Annotated[int, _amount("Tokens paid to the share holders.")],
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
) -> None:
    """Pay model revenue; it is split pro rata among the share holders."""
    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    model_id = model_id_of(model)
    require_balance(client, amount, f"revenue to pay into {model}")
    _require_shares(client, model, model_id)
    client.shares.pay_revenue(model_id, amount)
    typer.echo(f"paid {vtt_number(amount)} VTT of revenue into {model}")


@revenue_app.command("claim")
def revenue_claim(
    model: Annotated[str, typer.Argument(callback=check_model, help="Model name or 0x model id.")],
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
) -> None:
    """Claim the caller's share of a model's revenue."""
    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    model_id = model_id_of(model)
    _require_shares(client, model, model_id)
    amount = client.shares.revenue_of(model_id)
    if amount == 0:
        raise CliError(f"{client.address} has no revenue of {model} to claim")
    client.shares.claim_revenue(model_id)
    typer.echo(f"claimed {vtt_number(amount)} VTT of {model} revenue")


def _mount_nodes() -> None:
    from adversary.cli import app as adversary_app
    from solver.cli import app as solver_app
    from verifier.cli import app as verifier_app
    from whistleblower.cli import app as whistleblower_app

    app.add_typer(solver_app, name="solver", help="Run a solver node.")
    app.add_typer(verifier_app, name="verifier", help="Run a verifier node.")
    app.add_typer(whistleblower_app, name="whistleblower", help="Run a whistleblower node.")
    app.add_typer(adversary_app, name="adversary", help="TESTING ONLY: run adversary nodes.")


app.command("demo")(__import__("cli.demo_command", fromlist=["demo"]).demo)
app.command("train")(__import__("cli.train", fromlist=["train"]).train)
app.add_typer(__import__("cli.run", fromlist=["app"]).app, name="run")
app.command("selftest")(__import__("cli.selftest", fromlist=["selftest"]).selftest)
app.add_typer(__import__("cli.accounts", fromlist=["app"]).app, name="account")
app.add_typer(__import__("cli.disputes", fromlist=["app"]).app, name="dispute")
app.add_typer(__import__("cli.data", fromlist=["app"]).app, name="data")
app.add_typer(__import__("cli.spec", fromlist=["app"]).app, name="spec")
job_app.command("watch")(__import__("cli.watch", fromlist=["job_watch"]).job_watch)
__import__("cli.dashboard", fromlist=["register"]).register(app)
_mount_nodes()


def main() -> None:
    """Console entry point."""
    app()


if __name__ == "__main__":
    main()
