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
    train PRESET           train a preset locally (no chain)
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

from cli.dashboard import ReadDbOpt, synced_index
from cli.errors import CliError, OneLineErrorGroup, enable_debug
from cli.history import when
from cli.models import app as model_app
from cli.reports import check_model, model_id_of, shares_report
from noderuntime.options import (
    DEFAULT_RPC,
    DEVNET_CHAIN_IDS,
    UINT256_MAX,
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
job_app = typer.Typer(help="Post and inspect training jobs.", no_args_is_help=True)
revenue_app = typer.Typer(help="Model revenue: pay in, claim out.", no_args_is_help=True)
jackpot_app = typer.Typer(
    help="The forced-error jackpot pool: fund it, show it.", no_args_is_help=True
)
app.add_typer(job_app, name="job")
app.add_typer(revenue_app, name="revenue")
app.add_typer(jackpot_app, name="jackpot")
app.add_typer(model_app, name="model")

ROLES = {"solver": 0, "verifier": 1, "whistleblower": 2}
UINT32_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1


class RoleName(enum.StrEnum):
    """A staking role on the command line (its on-chain value is `ROLES[name]`)."""

    solver = "solver"
    verifier = "verifier"
    whistleblower = "whistleblower"


class Preset(enum.StrEnum):
    """Protocol parameter presets (`chain.manifest.ProtocolParams`)."""

    demo = "demo"
    default = "default"


class AdjudicatorName(enum.StrEnum):
    """Who settles a disputed segment in the demo (docs/DISPUTES.md)."""

    bisection = "bisection"
    committee = "committee"


RoleArg = Annotated[
    RoleName,
    typer.Argument(case_sensitive=False, help="solver | verifier | whistleblower"),
]
JobIdArg = Annotated[int, typer.Argument(min=1, max=UINT256_MAX, help="Job id.")]


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


def _require_balance(client: Any, needed: int, what: str) -> None:
    """Refuse before any transaction when the wallet holds less than ``needed`` wei (naming
    `veritrain faucet` where the deployment's token is a VeriToken, whose faucet mints)."""
    balance = client.token.balance_of()
    if balance < needed:
        hint = ""
        if client.deployment is not None and client.deployment.token_deployed:
            shortfall = vtt_number(needed - balance, 18).replace(",", "")  # as AMOUNT parses
            hint = f" (test tokens: `veritrain faucet {shortfall}`)"
        raise CliError(
            f"token balance {vtt_number(balance)} VTT of {client.address} is below the "
            f"{vtt_number(needed)} VTT {what}{hint}"
        )


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
    _require_balance(client, amount, f"to stake as {role.value}")
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


# ---------------------------------------------------------------------------------- jobs


def _job_specs(
    *,
    steps: int,
    interval: int,
    seed: int,
    count: int,
    lr: float | None,
    batch_size: int,
    threads: int,
    model_id: str,
    preset: str | None = None,
    arith: str = "native",
) -> list[Any]:
    """Build (and so validate) every job's spec before anything is sent.

    With `preset`, the specs are `veritrain.presets.preset(preset, arith, ...)` with this
    command's seed, N and k, and its learning rate when given (the preset fixes the model, the
    data, the rest of the optimizer and the model id).

    Raises:
        typer.BadParameter: an invalid shape (k does not divide N, k > N, a seed past uint64,
            a learning rate that is not a finite positive number, an empty model id), or an
            unknown or retired arithmetic (`"repro"`: its hashes depend on the CPU).
        pydantic.ValidationError: any other field the spec refuses.
    """
    from veritrain.errors import SpecError
    from veritrain.spec import check_arith

    try:
        check_arith(arith)
    except SpecError as exc:
        raise typer.BadParameter(str(exc), param_hint="'--arith'") from None
    if interval > steps:
        raise typer.BadParameter(
            f"checkpoint interval {interval} is larger than --steps {steps}",
            param_hint="'--interval'",
        )
    if steps % interval != 0:
        raise typer.BadParameter(
            f"checkpoint interval {interval} does not divide --steps {steps}",
            param_hint="'--interval'",
        )
    if lr is not None and not (math.isfinite(lr) and lr > 0):
        raise typer.BadParameter(f"must be a finite number > 0, got {lr}", param_hint="'--lr'")
    if seed + count - 1 > UINT64_MAX:
        raise typer.BadParameter(
            f"seed {seed} + {count} jobs passes 2**64 - 1", param_hint="'--seed'"
        )
    if not model_id.strip():
        raise typer.BadParameter("must not be empty", param_hint="'--model-id'")
    if preset is not None:
        from veritrain.presets import preset as preset_spec

        specs = [
            preset_spec(
                preset, arith, seed=seed + i, total_steps=steps, checkpoint_interval=interval
            )
            for i in range(count)
        ]
        if lr is None:
            return specs
        return [
            s.model_copy(update={"optimizer": s.optimizer.model_copy(update={"lr": lr})})
            for s in specs
        ]
    from veritrain.spec import ExecutionProfile, default_digits_spec

    return [
        default_digits_spec(
            seed=seed + i,
            total_steps=steps,
            checkpoint_interval=interval,
            lr=3e-3 if lr is None else lr,
            batch_size=batch_size,
            model_id=model_id,
            profile=ExecutionProfile(threads=threads),
        )
        for i in range(count)
    ]


@job_app.command("submit")
def job_submit(
    steps: Annotated[
        int, typer.Option(min=1, max=UINT32_MAX, help="Total optimizer steps N.")
    ] = 300,
    interval: Annotated[
        int, typer.Option(min=1, max=UINT32_MAX, help="Checkpoint interval k (divides N).")
    ] = 25,
    seed: Annotated[
        int, typer.Option(min=0, max=UINT64_MAX, help="Seed of the first job (then +1 per job).")
    ] = 1,
    count: Annotated[int, typer.Option(min=1, max=1000, help="Number of jobs to post.")] = 1,
    reward: Annotated[
        int,
        typer.Option(parser=token_amount(positive=False), help="Solver reward per job, in tokens."),
    ] = 50 * 10**18,
    model_id: Annotated[str, typer.Option(help="Model the jobs train.")] = "digits-mlp",
    lr: Annotated[
        float | None,
        typer.Option(help="AdamW learning rate (> 0); default 3e-3, or the preset's own."),
    ] = None,
    batch_size: Annotated[int, typer.Option(min=1, help="Examples per step.")] = 64,
    threads: Annotated[int, typer.Option(min=1, help="Pinned CPU thread count.")] = 1,
    preset: Annotated[
        str | None,
        typer.Option(
            help="Job preset (veritrain.presets: digits-mlp, digits-mlp-wide, "
            "shakespeare-char, llama-char, llama-bible); sets the model, data and model id."
        ),
    ] = None,
    arith: Annotated[str, typer.Option(help="Preset arithmetic: native or repro2.")] = "native",
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Post training jobs (digits MLP, or a --preset), escrowing reward + verifier fees for each.

    The signing account must own the model or be authorised to post under it (`veritrain model
    register|authorize`), and every spec must train the model's registered architecture and
    family (`veritrain.lineage`). Each job records the state hash of its spec's seed-initialised
    state (initHash); a solver's commitment must start from exactly that state. Only a job that
    starts from the model's head (its seed state until a job extends the lineage) mints shares,
    the first of them to finalize; the others are paid their reward only. The same spec cannot
    be posted twice while the first job of it is live or paid.

    Every spec is built and the balance checked for all COUNT escrows before the first job is
    posted. If a post still fails midway, the jobs already posted are printed (as JSON with
    --json) and the command exits non-zero.
    """
    specs = _job_specs(
        steps=steps,
        interval=interval,
        seed=seed,
        count=count,
        lr=lr,
        batch_size=batch_size,
        threads=threads,
        model_id=model_id,
        preset=preset,
        arith=arith,
    )
    from veritrain.spec import model_id_hash

    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    model_id = specs[0].model_id  # a preset names its own model
    model_hash = model_id_hash(model_id)  # what `spec.model_id_hash()` posts
    if not client.shares.can_post(model_hash):
        owner = client.shares.model_owner(model_hash)
        raise CliError(
            f"model {model_id} is not registered (run `veritrain model register {model_id}`)"
            if owner is None
            else f"model {model_id} is owned by {owner}, who has not authorised {client.address}"
        )
    from veritrain.lineage import ModelCommitments, mismatches

    registered = client.shares.registered_model(model_hash)
    if registered is not None:
        commitments = ModelCommitments(**registered.model_dump())
        for spec in specs:
            wrong = mismatches(spec, commitments)
            if wrong:
                raise CliError(
                    f"job with seed {spec.seed} does not train model {model_id} as registered: "
                    f"its {', '.join(wrong)} differ (`veritrain model show {model_id}`)"
                )
    head = client.shares.head_of(model_hash)
    escrow_each = client.jobs.post_cost(reward)
    _require_balance(
        client,
        count * escrow_each,
        f"escrow of {count} job(s) (reward + verifier fees + forced-error premium each)",
    )
    # Checks done: now the slow part (torch, the model's seed state), said on stderr.
    if not json_out:
        typer.echo(f"computing the initHash of {count} job(s)...", err=True)
    from veritrain.training import TrainingEngine

    init_hashes = []
    for spec in specs:  # each job's initHash: the state hash of its seed-initialised state
        engine = TrainingEngine(spec)
        init_hashes.append(engine.state_hash(engine.init_state()))
    posted: list[dict[str, Any]] = []
    from chain.errors import ChainError

    for number, (spec, init_hash) in enumerate(zip(specs, init_hashes, strict=True), 1):
        if not json_out:
            typer.echo(f"posting job {number}/{count} (seed {spec.seed})...", err=True)
        try:
            receipt = client.jobs.post_job(
                spec.model_id_hash(),
                spec.spec_hash(),
                init_hash,
                spec.total_steps,
                spec.checkpoint_interval,
                reward,
                spec.to_data_uri(),
            )
        except ChainError as exc:
            if json_out:
                emit_json({"jobs": posted})
            raise CliError(
                f"posted {len(posted)} of {count} jobs; job with seed {spec.seed} failed: {exc}"
            ) from exc
        job_id = client.job_id_from(receipt)
        posted.append(
            {
                "job_id": job_id,
                "seed": spec.seed,
                "spec_hash": "0x" + spec.spec_hash().hex(),
                "init_hash": "0x" + init_hash.hex(),
                "from_head": init_hash == head,
            }
        )
        if not json_out:
            typer.echo(
                f"posted job {job_id} (seed {spec.seed}, N={steps}, k={interval}, "
                f"initHash 0x{init_hash.hex()})"
            )
            if init_hash != head:
                typer.echo(
                    f"  note: job {job_id} does not start from model {model_id}'s head "
                    f"0x{head.hex()}: its solver is paid the reward but mints no shares"
                )
    if json_out:
        emit_json({"jobs": posted})


def _existing_job(client: Any, job_id: int) -> Any:
    """The job, or a refusal naming how many jobs exist."""
    total = client.jobs.job_count()
    if job_id > total:
        raise CliError(f"job {job_id} does not exist ({total} jobs posted)")
    return client.jobs.get_job(job_id, with_uris=False)


@job_app.command("cancel")
def job_cancel(
    job_id: JobIdArg,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
) -> None:
    """Cancel an Open job you submitted (JobManager.cancelJob); its whole escrow becomes your
    claimable credit (``veritrain credit --claim``)."""
    from veritrain.enums import JobStatus

    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    job = _existing_job(client, job_id)
    if job.status is not JobStatus.Open:
        raise CliError(f"job {job_id} is {job.status.name}: only an Open job can be cancelled")
    if job.submitter.lower() != client.address.lower():
        raise CliError(
            f"job {job_id} was posted by {job.submitter}: only its submitter can cancel it"
        )
    client.jobs.cancel_job(job_id)
    typer.echo(f"cancelled job {job_id}; its escrow is credited to {client.address}")


@job_app.command("reclaim")
def job_reclaim(
    job_id: JobIdArg,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
) -> None:
    """Reopen a Claimed job whose solver missed its commit deadline
    (JobManager.reclaimExpired; anyone may call it). The solver is slashed into the jackpot
    pool and the job is Open again."""
    from veritrain.enums import JobStatus

    client = connect_signer(rpc_url, deployment, keystore, password_env, key_env, dev_account)
    job = _existing_job(client, job_id)
    if job.status is not JobStatus.Claimed:
        raise CliError(
            f"job {job_id} is {job.status.name}: only a Claimed job whose solver missed its "
            "commit deadline can be reclaimed"
        )
    now = client.timestamp()
    if now <= job.commit_deadline:
        raise CliError(
            f"job {job_id}'s commit deadline is timestamp {job.commit_deadline} "
            f"(in {job.commit_deadline - now} s): its solver may still commit"
        )
    client.jobs.reclaim_expired(job_id)
    typer.echo(f"reclaimed job {job_id}: Open again; solver {job.solver} slashed")


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
        "init_hash": "0x" + job.init_hash.hex(),
        "merkle_root": "0x" + job.merkle_root.hex(),
        "dispute_id": job.dispute_id,
    }


def _indexed_jobs(index: Any) -> list[dict[str, Any]]:
    """`_job_dict` of every job, read from the index (`dashboard.queries.jobs`)."""
    from dashboard.queries import jobs

    zero_address, zero_hash = "0x" + "00" * 20, "0x" + "00" * 32
    with index.reader() as session:
        return [
            {
                "job_id": j.job_id,
                "status": j.phase,
                "submitter": j.poster,
                "solver": j.solver or zero_address,
                "total_steps": j.total_steps,
                "checkpoint_interval": j.checkpoint_interval,
                "reward_wei": j.reward_wei,
                "init_hash": j.init_hash or zero_hash,
                "merkle_root": j.merkle_root or zero_hash,
                "dispute_id": j.dispute_id or 0,
            }
            for j in jobs(session)
        ]


@job_app.command("list")
def job_list(
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    json_out: JsonOpt = False,
    db: ReadDbOpt = None,
) -> None:
    """List every job with its status (one view call per job; with --db, one index query)."""
    client = connect_reader(rpc_url, deployment)
    if db is not None:
        jobs = _indexed_jobs(synced_index(client, db))
    else:
        jobs = [_job_dict(client, j) for j in range(1, client.jobs.job_count() + 1)]
    if json_out:
        emit_json({"jobs": jobs})
        return
    from rich.table import Table

    from cli.console import address_column, report_console

    table = Table("job", "status")
    table.add_column(**address_column("solver"))
    for header in ("N", "k", "reward (VTT)"):
        table.add_column(header)
    for j in jobs:
        table.add_row(
            str(j["job_id"]),
            j["status"],
            "-" if int(j["solver"], 16) == 0 else j["solver"],
            str(j["total_steps"]),
            str(j["checkpoint_interval"]),
            vtt_number(j["reward_wei"]),
        )
    report_console().print(table)


@job_app.command("show")
def job_show(
    job_id: JobIdArg,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
) -> None:
    """Print one job as JSON, with its verifier assignment and verification round."""
    client = connect_reader(rpc_url, deployment)
    _existing_job(client, job_id)
    data = _job_dict(client, job_id)
    assignment = client.jobs.get_assignment(job_id)
    data["verifiers"] = list(assignment.verifiers)
    data["segments"] = list(assignment.segments)
    data["round"] = round_report(client, job_id)
    emit_json(data)


def round_report(client: Any, job_id: int) -> dict[str, Any]:
    """A job's verification round (docs/FORCED_ERRORS.md) as JSON-able data.

    Returns:
        ``{"claims_posted", "start_hashes", "end_hashes", "verdicts": [{"verifier", "samples"
        (its own draw: sample indices, docs/SECURITY.md P-27), "sealed", "revealed", "approvals",
        "abstentions"}], "secret_revealed", "outcome", "forced_sample",
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
    # As revealed (events): a forced-error settlement clears the forced reject in the view.
    submitted = client.jobs.submitted_verdicts(job_id)
    for v in assignment.verifiers:
        commitment, revealed = client.round.verdict_commitment_of(submission, v)
        recorded = client.jobs.verdicts_of(job_id, v)
        mask = client.jobs.sample_mask_of(job_id, v)
        as_revealed = submitted.get(v, [])
        verdicts.append(
            {
                "verifier": v,
                # its own draw (P-27): it is judged on these sample indices only
                "samples": [i for i in range(len(assignment.segments)) if mask >> i & 1],
                "sealed": commitment != b"\x00" * 32,
                "revealed": revealed,
                "approvals": [
                    bool(mask >> i & 1)
                    and i < len(as_revealed)
                    and as_revealed[i]
                    and Verdict(int(x)) is not Verdict.Abstain
                    for i, x in enumerate(recorded)
                ]
                if revealed
                else None,
                "abstentions": [Verdict(int(x)) is Verdict.Abstain for x in recorded]
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
    _require_balance(client, wei, "to fund the jackpot")
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
    _require_balance(client, amount, f"revenue to pay into {model}")
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


# ---------------------------------------------------------------------------------- demo


@app.command()
def demo(
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write the machine-readable summary here.")
    ] = None,
    workdir: Annotated[
        Path | None, typer.Option(help="Run folder (logs, node data); default runs/demo-<time>.")
    ] = None,
    steps: Annotated[int, typer.Option(min=1, max=UINT32_MAX, help="Steps per digits job.")] = 300,
    interval: Annotated[
        int,
        typer.Option(
            min=1, max=UINT32_MAX, help="Checkpoint interval of the digits jobs (divides --steps)."
        ),
    ] = 25,
    timeout: Annotated[
        float | None,
        typer.Option(
            help="Give up after this many seconds (> 0); default 570, or 840 with --run.",
            show_default=False,
        ),
    ] = None,
    adjudicator: Annotated[
        AdjudicatorName,
        typer.Option(
            case_sensitive=False,
            help="'bisection' (bisection game, then one step) or 'committee'.",
        ),
    ] = AdjudicatorName.bisection,
    solver_device: Annotated[
        str,
        typer.Option(
            "--solver-device",
            help="Where the honest solver trains: auto (the GPU when there is one), cpu or "
            "cuda. Every verifier replays on the CPU.",
        ),
    ] = "auto",
    training_run: Annotated[
        bool,
        typer.Option(
            "--run",
            help="Instead: a DiLoCo training run of the character GPT over --rounds rounds with 4 "
            "solvers (one cheating, one leaving, one joining late); --steps and --interval are "
            "then H and k of each contribution (default 8 and 2).",
        ),
    ] = False,
    rounds: Annotated[
        int,
        typer.Option(
            min=3,
            max=64,
            help="With --run: R, the rounds of the run (3 at least: the leaver goes after round "
            "0, the late joiner comes at round 2).",
        ),
    ] = 4,
    dashboard: Annotated[
        bool,
        typer.Option("--dashboard/--no-dashboard", help="Serve the dashboard while it runs."),
    ] = True,
    hold: Annotated[
        bool,
        typer.Option("--hold", help="At the end, keep the chain and dashboard up until Enter."),
    ] = False,
    verbose: VerboseOpt = 0,
) -> None:
    """Run the protocol end to end: 4 repro jobs (3 digits MLPs, a character GPT), honest and
    cheating solvers, a lazy verifier, every node on its own thread count and SIMD level.
    With --run: one model trained by many solvers over rounds, owned by those who trained it."""
    if training_run:
        from cli.demo_run import RunDemoConfig

        _run_demo(
            json_path,
            workdir,
            steps,
            interval,
            RunDemoConfig.timeout_s if timeout is None else timeout,
            adjudicator,
            verbose,
            dashboard,
            hold,
            rounds,
        )
        return
    from cli.demo import DemoConfig

    if timeout is None:
        timeout = DemoConfig.timeout_s
    if steps % interval != 0:
        raise typer.BadParameter(
            f"checkpoint interval {interval} does not divide --steps {steps}",
            param_hint="'--interval'",
        )
    if not (math.isfinite(timeout) and timeout > 0):
        raise typer.BadParameter(f"must be > 0 seconds, got {timeout}", param_hint="'--timeout'")
    if solver_device not in ("auto", "cpu", "cuda"):
        raise typer.BadParameter(
            f"choose auto, cpu or cuda, got {solver_device!r}", param_hint="'--solver-device'"
        )
    setup_logging(verbose)
    from cli.demo import print_summary, run_demo

    cfg = DemoConfig(
        workdir=workdir,
        total_steps=steps,
        checkpoint_interval=interval,
        timeout_s=timeout,
        adjudicator=adjudicator.value,
        solver_device=solver_device,
        dashboard=dashboard,
        hold=hold,
    )
    summary = run_demo(cfg)
    print_summary(summary)
    if json_path is not None:
        import json

        json_path.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
        typer.echo(f"summary written to {json_path}")
    if not summary.get("ok", False):
        raise typer.Exit(1)


def _run_demo(
    json_path: Path | None,
    workdir: Path | None,
    steps: int,
    interval: int,
    timeout: float,
    adjudicator: AdjudicatorName,
    verbose: int,
    dashboard: bool = True,
    hold: bool = False,
    rounds: int = 4,
) -> None:
    """`veritrain demo --run` (`cli.demo_run`) over `rounds` rounds; the digits defaults of
    --steps and --interval (300, 25) become the run's (8, 2)."""
    if (steps, interval) == (300, 25):
        steps, interval = 8, 2
    if steps % interval != 0:
        raise typer.BadParameter(
            f"checkpoint interval {interval} does not divide --steps {steps}",
            param_hint="'--interval'",
        )
    if not (math.isfinite(timeout) and timeout > 0):
        raise typer.BadParameter(f"must be > 0 seconds, got {timeout}", param_hint="'--timeout'")
    setup_logging(verbose)
    from cli.demo_run import RunDemoConfig, print_run_summary, run_run_demo

    summary = run_run_demo(
        RunDemoConfig(
            workdir=workdir,
            rounds=rounds,
            inner_steps=steps,
            interval=interval,
            timeout_s=timeout,
            adjudicator=adjudicator.value,
            dashboard=dashboard,
            hold=hold,
        )
    )
    print_run_summary(summary)
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
app.add_typer(__import__("cli.run", fromlist=["app"]).app, name="run")
app.command("selftest")(__import__("cli.selftest", fromlist=["selftest"]).selftest)
app.add_typer(__import__("cli.accounts", fromlist=["app"]).app, name="account")
app.add_typer(__import__("cli.disputes", fromlist=["app"]).app, name="dispute")
app.add_typer(__import__("cli.data", fromlist=["app"]).app, name="data")
job_app.command("watch")(__import__("cli.watch", fromlist=["job_watch"]).job_watch)
__import__("cli.dashboard", fromlist=["register"]).register(app)
_mount_nodes()


def main() -> None:
    """Console entry point."""
    app()


if __name__ == "__main__":
    main()
