"""`veritrain account show`: one account's money in the protocol, read from the chain.

Balances (native, token), the stake of each role (staked, locked, free, unbonding with its
release time, active or below the minimum), the claimable Escrow credit, and what happened
since the deployment block, from events: credits received, credit claimed, earnings restaked
(a job's reward, fee or catch's jackpot, added to the stake at the job's end, not paid to the
wallet), slashes (by role, by job), bonds forfeited, jackpots won, revenue claimed; then the
model shares held. Reading needs no key: the address is the argument, or the address of the
key options given.

With ``--db URL`` the events come from the chain's index (brought up to date first) and the
stakes from its stake table; what no event records is still read over RPC, a fixed number of
calls: the native, token and Escrow credit balances, the three minimum stakes, and the
claimable revenue of every model in one batched request.

Run: ``veritrain account show 0x... [--json] [--db URL]`` or
``veritrain account show --dev-account 3``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cli.dashboard import ReadDbOpt, synced_index
from cli.errors import CliError
from cli.history import EventReader, events
from noderuntime.options import (
    DEFAULT_RPC,
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

if TYPE_CHECKING:
    from indexer.store import Index

__all__ = ["account_report", "app"]

app = typer.Typer(help="Inspect an account: stakes, credit, earnings, slashes, shares.",
                  no_args_is_help=True)  # fmt: skip

ROLE_NAMES = ("solver", "verifier", "whistleblower")
# JobManager events that name the job of a stake slash (same transaction, same account)
_JOB_SLASHES = {
    "VerifierSlashed": "verifier",
    "SolverSlashed": "solver",
    "ArbiterSlashed": "arbiter",
    "SolverFaulted": "solver",
    "JobReclaimed": "solver",
    "VerdictMissed": "verifier",
    "VerifierEquivocated": "verifier",
}
# ... and those that name its cause (docs/SECURITY.md P-40: a seat that signed two seals)
_SLASH_CAUSES = {"VerifierEquivocated": "equivocation"}


def _hex(b: bytes) -> str:
    return "0x" + bytes(b).hex()


def _slash_jobs(client: Any, read: EventReader) -> dict[tuple[str, str], tuple[int, str | None]]:
    """``{(tx hash, account): (job id, cause)}`` of the JobManager's slash events (the cause
    ``"equivocation"`` or None, `_SLASH_CAUSES`)."""
    out: dict[tuple[str, str], tuple[int, str | None]] = {}
    for ev in read(client, client.jobs.contract, list(_JOB_SLASHES)):
        who = next(ev.args[k] for k in ("verifier", "solver", "arbiter") if k in ev.args)
        out[(ev.tx_hash, str(who))] = (int(ev.args["jobId"]), _SLASH_CAUSES.get(ev.event))
    return out


def _slash_disputes(client: Any, read: EventReader) -> dict[tuple[str, str], int]:
    """``{(tx hash, arbiter): dispute id}`` of the round claim disputes' arbiter slashes."""
    from chain.errors import ChainValueError

    try:
        registry = client.runs.contract
    except ChainValueError:  # a deployment without a RunRegistry
        return {}
    found = read(client, registry, ["ClaimArbiterSlashed"])
    return {(ev.tx_hash, str(ev.args["arbiter"])): int(ev.args["disputeId"]) for ev in found}


def _models(client: Any, read: EventReader) -> list[tuple[bytes, str]]:
    """Every model with a shares token: ``[(model id, token address)]`` (``ModelCreated``)."""
    found = read(client, client.shares.contract, ["ModelCreated"])
    return [(bytes(ev.args["modelId"]), str(ev.args["token"])) for ev in found]


def _stake_views(
    client: Any, address: str, minimum: dict[str, int], index: Index | None
) -> dict[str, Any]:
    """``{role: (staked, locked, unbonding, release_at, active)}``: the views, or with an
    index its stake table (``stakeOf`` as read at the role's last stake event; active as
    ``StakeManager.isActive`` computes it from the minimum stake)."""
    from veritrain.enums import Role

    out: dict[str, Any] = {}
    if index is None:
        for name in ROLE_NAMES:
            role = Role[name.capitalize()]
            view = client.stakes.stake_of(address, role)
            active = client.stakes.is_active(address, role)
            out[name] = (view.staked, view.locked, view.unbonding, view.release_at, active)
        return out
    from dashboard.queries import account

    with index.reader() as session:
        found = account(session, address)
    rows = {r.role: r for r in (found.stakes if found is not None else [])}
    for name in ROLE_NAMES:
        r = rows.get(name)
        staked = r.staked_wei if r is not None else 0
        out[name] = (
            staked,
            r.locked_wei if r is not None else 0,
            r.unbonding_wei if r is not None else 0,
            r.release_at if r is not None else 0,
            staked != 0 and staked >= minimum[name],
        )
    return out


def _share_views(
    client: Any, address: str, models: list[tuple[bytes, str]], index: Index | None
) -> dict[bytes, tuple[int, int, int]]:
    """``{model id: (shares held, ownership bps, claimable revenue wei)}`` of every model: the
    views, or with an index its share balances and supplies (bps as ``ownershipBps``
    computes it) and every model's ``revenueOf`` in one batched request."""
    if index is None:
        return {
            model_id: (
                client.shares.balance_of(model_id, address),
                client.shares.ownership_bps(model_id, address),
                client.shares.revenue_of(model_id, address),
            )
            for model_id, _ in models
        }
    from dashboard.queries import model

    due = client.call_many(
        [(client.contract("ModelShares", token), "revenueOf", (address,)) for _, token in models]
    )
    out: dict[bytes, tuple[int, int, int]] = {}
    with index.reader() as session:
        for (model_id, _), revenue in zip(models, due, strict=True):
            view = model(session, _hex(model_id))
            mine = [h for h in (view.holders if view is not None else []) if h.account == address]
            held, bps = (mine[0].shares, mine[0].bps) if mine else (0, 0)
            out[model_id] = (held, bps, int(revenue))
    return out


def account_report(client: Any, address: str, *, index: Index | None = None) -> dict[str, Any]:
    """Everything `account show` prints for ``address``, as JSON-able data (amounts in wei).

    Args:
        client: a `ChainClient` bound to the deployment (any key: nothing is signed).
        address: the checksummed account.
        index: read the events and the stakes from this index (brought up to date by the
            caller) instead of ``eth_getLogs`` and ``stakeOf``; the balances, the minimum
            stakes and the claimable revenue are still views (a fixed number of calls).

    Returns:
        ``{"address", "native_wei", "token_wei", "credit_wei", "roles": {role: {"staked_wei",
        "locked_wei", "free_wei", "unbonding_wei", "release_at" (s, 0: none), "min_stake_wei",
        "active"}}, "credits": [{"block", "protocol", "bucket", "amount_wei"}],
        "credits_received_wei", "credit_claimed_wei", "restaked": [{"block", "role",
        "amount_wei"}] (earnings a job's end added to the stake), "restaked_wei", "slashes":
        [{"block", "role", "job_id", "dispute_id", "cause", "amount_wei", "recipient"}],
        "slashed_wei": {role: wei},
        "bonds_forfeited": [{"block", "job_id", "amount_wei"}], "jackpots": [{"block", "job_id",
        "amount_wei"}], "jackpots_wei", "revenue_claimed": [{"block", "model_id",
        "amount_wei"}], "shares": [{"model_id", "token", "shares" (held now), "minted" (to this
        account, ``SharesMinted``), "bps", "revenue_wei"}]}``; a slash names its ``job_id`` or,
        for an arbiter of a round claim, its ``dispute_id`` (else None), and its ``cause``
        where an event names one (``"equivocation"``: two seals signed, docs/SECURITY.md P-40;
        else None). The same with or without ``index``.

    Raises:
        chain.errors.RpcUnavailable: the endpoint is down.
    """
    if index is None:
        return _report(client, address, events, None)
    from cli.history import IndexedEvents

    with index.reader() as session:
        return _report(client, address, IndexedEvents(session), index)


def _report(client: Any, address: str, read: EventReader, index: Index | None) -> dict[str, Any]:
    from chain.types import restaked_amounts
    from veritrain.enums import Bucket, Role

    minimum = {name: client.stakes.min_stake(Role[name.capitalize()]) for name in ROLE_NAMES}
    roles: dict[str, Any] = {}
    for name, (staked, locked, unbonding, release_at, active) in _stake_views(
        client, address, minimum, index
    ).items():
        roles[name] = {
            "staked_wei": staked,
            "locked_wei": locked,
            "free_wei": staked - locked,
            "unbonding_wei": unbonding,
            "release_at": release_at,
            "min_stake_wei": minimum[name],
            "active": active,
        }
    escrow = client.escrow.contract
    credits = [
        {
            "block": ev.block_number,
            "protocol": client.contract_name(str(ev.args["protocol"])) or str(ev.args["protocol"]),
            "bucket": Bucket(int(ev.args["from"])).name,
            "amount_wei": int(ev.args["amount"]),
        }
        for ev in read(client, escrow, ["Credited"])
        if ev.args["account"] == address
    ]
    claimed = sum(
        int(ev.args["amount"])
        for ev in read(client, escrow, ["CreditClaimed"])
        if ev.args["account"] == address
    )
    restaked = [
        {"block": ev.block_number, "role": ROLE_NAMES[int(ev.args["role"])], "amount_wei": wei}
        for ev in read(client, client.stakes.contract, ["StakesRestaked"])
        for account, wei in restaked_amounts(ev.args)
        if account == address
    ]
    job_of = _slash_jobs(client, read)
    dispute_of = _slash_disputes(client, read)
    slashes = []
    for ev in read(client, client.stakes.contract, ["StakeSlashed"]):
        if ev.args["account"] != address:
            continue
        job_id, cause = job_of.get((ev.tx_hash, address), (None, None))
        slashes.append(
            {
                "block": ev.block_number,
                "role": ROLE_NAMES[int(ev.args["role"])],
                "job_id": job_id,
                "dispute_id": dispute_of.get((ev.tx_hash, address)),
                "cause": cause,
                "amount_wei": int(ev.args["slashed"]),
                "recipient": str(ev.args["recipient"]),
            }
        )
    jm = client.jobs.contract
    jackpots = [
        {
            "block": e.block_number,
            "job_id": int(e.args["jobId"]),
            "amount_wei": int(e.args["amount"]),
        }
        for e in read(client, jm, ["JackpotPaid"])
        if e.args["account"] == address
    ]
    forfeited = [
        {
            "block": e.block_number,
            "job_id": int(e.args["jobId"]),
            "amount_wei": int(e.args["amount"]),
        }
        for e in read(client, jm, ["BondForfeited"])
        if e.args["account"] == address
    ]
    revenue: list[dict[str, Any]] = []
    holdings: list[dict[str, Any]] = []
    minted: dict[bytes, int] = {}
    for ev in read(client, client.shares.contract, ["SharesMinted"]):
        if ev.args["to"] == address:
            key = bytes(ev.args["modelId"])
            minted[key] = minted.get(key, 0) + int(ev.args["shares"])
    models = _models(client, read)
    views = _share_views(client, address, models, index)
    for model_id, token in models:
        contract = client.contract("ModelShares", token)
        for ev in read(client, contract, ["RevenueClaimed"]):
            if ev.args["account"] == address:
                revenue.append(
                    {
                        "block": ev.block_number,
                        "model_id": _hex(model_id),
                        "amount_wei": int(ev.args["amount"]),
                    }
                )
        held, bps, due = views[model_id]
        if held or due or minted.get(model_id):
            holdings.append(
                {
                    "model_id": _hex(model_id),
                    "token": token,
                    "shares": held,
                    "minted": minted.get(model_id, 0),
                    "bps": bps,
                    "revenue_wei": due,
                }
            )
    return {
        "address": address,
        "native_wei": client.eth_balance(address),
        "token_wei": client.token.balance_of(address),
        "credit_wei": client.escrow.credit_of(address),
        "roles": roles,
        "credits": credits,
        "credits_received_wei": sum(c["amount_wei"] for c in credits),
        "credit_claimed_wei": claimed,
        "restaked": restaked,
        "restaked_wei": sum(r["amount_wei"] for r in restaked),
        "slashes": slashes,
        "slashed_wei": {
            r: sum(s["amount_wei"] for s in slashes if s["role"] == r) for r in ROLE_NAMES
        },
        "bonds_forfeited": forfeited,
        "jackpots": jackpots,
        "jackpots_wei": sum(j["amount_wei"] for j in jackpots),
        "revenue_claimed": revenue,
        "shares": holdings,
    }


def _print(report: dict[str, Any]) -> None:
    from rich.table import Table

    from cli.console import address_column, report_console
    from cli.history import when
    from veritrain.units import vtt

    echo = typer.echo
    echo(f"account   {report['address']}")
    echo(f"native    {report['native_wei'] / 10**18:,.6f} ETH")
    echo(f"token     {vtt(report['token_wei'])}")
    echo(f"credit    {vtt(report['credit_wei'])} claimable (Escrow)")
    stakes = Table(title="Stakes")
    for header in ("role", "staked", "locked", "free", "unbonding", "released at", "active"):
        stakes.add_column(header)
    for name, r in report["roles"].items():
        release = when(r["release_at"]) + " UTC" if r["unbonding_wei"] else "-"
        active = "yes" if r["active"] else f"no (minimum {vtt(r['min_stake_wei'])})"
        stakes.add_row(
            name,
            vtt(r["staked_wei"]),
            vtt(r["locked_wei"]),
            vtt(r["free_wei"]),
            vtt(r["unbonding_wei"]),
            release,
            active,
        )
    console = report_console()
    console.print(stakes)
    echo(
        f"earned    credits received {vtt(report['credits_received_wei'])} "
        f"({len(report['credits'])}), credit claimed {vtt(report['credit_claimed_wei'])}, "
        f"jackpots {vtt(report['jackpots_wei'])} ({len(report['jackpots'])}), "
        f"restaked {vtt(report['restaked_wei'])} ({len(report['restaked'])}; rewards and fees "
        "added to the stake at a job's end, not paid to the wallet)"
    )
    lost = ", ".join(f"{r} {vtt(w)}" for r, w in report["slashed_wei"].items())
    echo(f"slashed   {lost}")
    for s in report["slashes"]:
        job = f"job {s['job_id']}" if s["job_id"] is not None else "no job"
        if s["dispute_id"] is not None:
            job = f"claim dispute {s['dispute_id']}"
        if s["cause"] is not None:
            job += f", {s['cause']}"
        echo(
            f"  block {s['block']}: {s['role']} {vtt(s['amount_wei'])} ({job}) to {s['recipient']}"
        )
    for f in report["bonds_forfeited"]:
        echo(f"  block {f['block']}: bond {vtt(f['amount_wei'])} forfeited (job {f['job_id']})")
    for j in report["jackpots"]:
        echo(f"jackpot   block {j['block']}: {vtt(j['amount_wei'])} (job {j['job_id']})")
    for r in report["revenue_claimed"]:
        echo(f"revenue   block {r['block']}: {vtt(r['amount_wei'])} claimed of {r['model_id']}")
    if report["shares"]:
        table = Table(title="Model shares")
        table.add_column("model")
        table.add_column(**address_column("token"))
        for header in ("shares", "minted", "ownership", "claimable revenue"):
            table.add_column(header)
        for h in report["shares"]:
            table.add_row(
                h["model_id"], h["token"], str(h["shares"]), str(h["minted"]),
                f"{h['bps'] / 100:.2f}%",
                vtt(h["revenue_wei"]),
            )  # fmt: skip
        console.print(table)
    else:
        echo("shares    none")


@app.command("show")
def show(
    address: Annotated[
        str | None,
        typer.Argument(callback=check_address, help="The account (default: the key's address)."),
    ] = None,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    keystore: KeystoreOpt = None,
    password_env: PasswordEnvOpt = "VERITRAIN_KEYSTORE_PASSWORD",
    key_env: KeyEnvOpt = None,
    dev_account: DevAccountOpt = None,
    json_out: JsonOpt = False,
    db: ReadDbOpt = None,
) -> None:
    """An account's balances, stakes per role, credit, earnings and losses since the
    deployment (events), and model shares. Amounts in VTT (JSON: wei integers). With --db,
    the events and stakes come from the index; balances, minimum stakes and claimable
    revenue are still read over RPC (a fixed number of calls).

    Errors (one line, exit != 0): ADDRESS not an address; neither ADDRESS nor a key given;
    an unusable --db URL or an index of another deployment.
    """
    if address is None:
        keyed = keystore or key_env or dev_account is not None
        if not keyed and not os.environ.get("VERITRAIN_PRIVATE_KEY"):
            raise CliError(
                "give an ADDRESS or a key (--dev-account, --keystore or --key-env) to show"
            )
        keys = KeySource(
            keystore=keystore, password_env=password_env, key_env=key_env, dev_account=dev_account
        )
        client = connect(rpc_url, deployment, keys)
        address = client.address
    else:
        client = connect_reader(rpc_url, deployment)
    if db is not None:
        index = synced_index(client, db)
        try:
            report = account_report(client, address, index=index)
        finally:
            index.close()
    else:
        report = account_report(client, address)
    if json_out:
        emit_json(report)
    else:
        _print(report)
