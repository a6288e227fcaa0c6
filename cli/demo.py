"""`veritrain demo`: the whole protocol, end to end, on a local Anvil chain.

Run: ``veritrain demo --json demo.json`` (or ``bash scripts/demo.sh``).

What runs, each node in its own OS process talking only through the chain and HTTP:
- a submitter (dev account 0, also the deployer) registering model ``digits-mlp`` (it becomes
  the model's owner) and posting 3 digits-MLP jobs for it;
- 3 solvers: honest (account 1), ``skip-steps`` (2: skips optimizer steps in segments >= 2),
  ``perturb`` (3: adds noise to the weights at the end of segments >= 2);
- 5 verifiers (accounts 4-8), account 8 lazy (approves without replaying);
- 1 whistleblower (account 9).

With the demo parameters every staked verifier verifies every job (V = 5) and q = 4 of the 12
segments are sampled, so both cheaters (wrong in 10 of 12 segments) are always caught, even when
the forced error lands on one of their cheating samples, and the lazy verifier always approves a
wrong segment. The forced-error rate is 10_000 bps (docs/FORCED_ERRORS.md): every job carries a
forced error, so every run shows one caught in the honest job: the honest verifiers reject the
forced claim and earn the jackpot, the lazy verifier approves it and is slashed into the pool,
the whistleblower flags that approval and is paid from the pool. The demo waits until every
job is Finalized or Rejected, showing what the chain says meanwhile (`cli.live`: a live view on
a terminal, one plain line per change otherwise), evaluates each job's committed final
checkpoint on the held-out test split, pays some revenue into the model, and reports slashes,
rewards, ownership shares, disputes and forced errors, all read back from the chain's events.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

__all__ = ["DemoConfig", "run_demo", "print_summary", "NODE_LAYOUT"]

E18 = 10**18
MODEL_NAME = "digits-mlp"

#: (dev account index, role, process name, CLI command); the adversaries run from the
#: testing-only `veritrain adversary` group.
NODE_LAYOUT: tuple[tuple[int, str, str, tuple[str, ...]], ...] = (
    (1, "solver", "solver-honest", ("solver", "run")),
    (2, "solver", "solver-skip-steps", ("adversary", "solver", "--mode", "skip-steps")),
    (3, "solver", "solver-perturb", ("adversary", "solver", "--mode", "perturb")),
    (4, "verifier", "verifier-1", ("verifier", "run")),
    (5, "verifier", "verifier-2", ("verifier", "run")),
    (6, "verifier", "verifier-3", ("verifier", "run")),
    (7, "verifier", "verifier-4", ("verifier", "run")),
    (8, "verifier", "verifier-lazy", ("adversary", "verifier", "--lazy")),
    (9, "whistleblower", "whistleblower", ("whistleblower", "run")),
)
STAKES = {"solver": 100 * E18, "verifier": 200 * E18, "whistleblower": 100 * E18}
ROLE_IDS = {"solver": 0, "verifier": 1, "whistleblower": 2}
ROLE_NAMES = {0: "solver", 1: "verifier", 2: "whistleblower"}
POLL_S = 1.5  # seconds between two reads of the chain while the jobs run


@dataclass
class DemoConfig:
    """Settings of one demo run.

    Attributes:
        workdir: folder for logs, node data and the manifest (default ``runs/demo-<time>``).
        total_steps: N per job.
        checkpoint_interval: k per job.
        jobs: number of jobs posted.
        reward_tokens: solver reward per job (tokens).
        revenue_tokens: revenue paid into the model after settlement (tokens).
        timeout_s: give up after this many seconds.
        block_time: Anvil's seconds per block.
        adjudicator: who settles a disputed segment: ``"bisection"`` (a bisection game over
            training steps, then a committee on one step; docs/DISPUTES.md) or ``"committee"``
            (v0: a committee replays the whole segment).
    """

    workdir: Path | None = None
    total_steps: int = 300
    checkpoint_interval: int = 25
    jobs: int = 3
    reward_tokens: int = 50
    revenue_tokens: int = 100
    timeout_s: float = 570.0
    block_time: float = 1.0
    adjudicator: str = "bisection"
    extra_env: dict[str, str] = field(default_factory=dict)


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "cli.app", *args]


def _spawn(
    name: str, argv: list[str], logdir: Path, env: dict[str, str]
) -> subprocess.Popen[bytes]:
    with open(logdir / f"{name}.log", "wb") as log:  # the child keeps its own descriptor
        return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env)


def _stop_all(procs: dict[str, subprocess.Popen[bytes]]) -> None:
    for p in procs.values():
        if p.poll() is None:
            p.terminate()
    deadline = time.monotonic() + 10
    for p in procs.values():
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()


def run_demo(cfg: DemoConfig) -> dict[str, Any]:
    """Run the demo and return its summary (see `print_summary` and the module docstring).

    Returns:
        ``{"ok", "elapsed_s", "jobs": [...], "slashed": [...], "rewards": [...],
        "shares": [...], "disputes": [...], "forced_errors": [...], "checks": {...},
        "workdir"}``; ``ok`` is True when every expected outcome held.

    Raises:
        TimeoutError: the jobs did not settle within ``cfg.timeout_s``.
        chain.errors.ChainError: deployment failed.
    """
    from chain.anvil import Anvil, dev_accounts
    from chain.client import ChainClient
    from chain.deploy import deploy_protocol
    from chain.manifest import ProtocolParams, write_manifest

    t0 = time.monotonic()
    workdir = cfg.workdir or Path("runs") / time.strftime("demo-%Y%m%d-%H%M%S")
    workdir = workdir.resolve()
    logdir = workdir / "logs"
    logdir.mkdir(parents=True, exist_ok=True)
    accounts = dev_accounts(10)
    roles_by_addr: dict[str, str] = {accounts[0].address: "submitter"}
    names_by_addr: dict[str, str] = {accounts[0].address: "submitter"}
    for idx, role, name, _ in NODE_LAYOUT:
        roles_by_addr[accounts[idx].address] = role
        names_by_addr[accounts[idx].address] = name

    procs: dict[str, subprocess.Popen[bytes]] = {}
    with Anvil(block_time=cfg.block_time, log_path=logdir / "anvil.log") as anvil:
        logger.info("anvil at %s; deploying", anvil.rpc_url)
        deployer = ChainClient(anvil.rpc_url, accounts[0])
        params = ProtocolParams.demo(adjudicator=cfg.adjudicator)
        dep = deploy_protocol(deployer, params)
        manifest = write_manifest(dep, workdir / "deployments")

        # Fund every account and stake the node roles (what `veritrain stake` does).
        for idx, role, _name, _ in NODE_LAYOUT:
            c = ChainClient(anvil.rpc_url, accounts[idx], dep)
            c.token.faucet(1_000 * E18)
            c.stakes.stake(ROLE_IDS[role], STAKES[role])
        deployer.token.faucet(10_000 * E18)

        env = {**os.environ, **cfg.extra_env, "PYTHONUNBUFFERED": "1"}
        common = ["--rpc-url", anvil.rpc_url, "--deployment", str(manifest)]
        try:
            for idx, role, name, command in NODE_LAYOUT:
                argv = _cli(
                    *command,
                    *common,
                    "--dev-account",
                    str(idx),
                    "--data-dir",
                    str(workdir / "nodes" / name),
                )
                if role == "solver":
                    argv += ["--port", str(_free_port()), "--host", "127.0.0.1"]
                procs[name] = _spawn(name, argv, logdir, env)
            # The submitter is its own process too: it registers the model (first come, first
            # served; only the owner and its authorised posters may post jobs under it), then
            # posts the jobs.
            register = _cli("model", "register", MODEL_NAME, *common, "--dev-account", "0")
            out = subprocess.run(register, env=env, capture_output=True, timeout=120)
            (logdir / "model.log").write_bytes(out.stdout + out.stderr)
            if out.returncode != 0:
                raise RuntimeError(f"model registration failed: {out.stderr.decode()[-2000:]}")
            submit = _cli(
                "job",
                "submit",
                *common,
                "--dev-account",
                "0",
                "--count",
                str(cfg.jobs),
                "--steps",
                str(cfg.total_steps),
                "--interval",
                str(cfg.checkpoint_interval),
                "--reward",
                str(cfg.reward_tokens),
                "--model-id",
                MODEL_NAME,
                "--json",
            )
            out = subprocess.run(submit, env=env, capture_output=True, timeout=120)
            (logdir / "submitter.log").write_bytes(out.stdout + out.stderr)
            if out.returncode != 0:
                raise RuntimeError(f"job submission failed: {out.stderr.decode()[-2000:]}")

            _wait_settled(deployer, cfg, t0, procs, names=names_by_addr, from_block=dep.block)
            summary = _summarize(deployer, dep, cfg, roles_by_addr, names_by_addr)
            # Revenue flows to the owners: pay some in, read it back per holder.
            if summary["shares"] and cfg.revenue_tokens:
                from veritrain.spec import model_id_hash

                deployer.shares.pay_revenue(model_id_hash(MODEL_NAME), cfg.revenue_tokens * E18)
                mid = model_id_hash(MODEL_NAME)
                for holder in summary["shares"]:
                    holder["revenue_wei"] = deployer.shares.revenue_of(mid, holder["address"])
                summary["revenue_paid_wei"] = cfg.revenue_tokens * E18
        finally:
            _stop_all(procs)
    summary["elapsed_s"] = round(time.monotonic() - t0, 1)
    summary["workdir"] = str(workdir)
    summary["checks"] = _checks(summary)
    summary["ok"] = all(summary["checks"].values())
    return summary


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_settled(
    client: Any,
    cfg: DemoConfig,
    t0: float,
    procs: dict[str, subprocess.Popen[bytes]],
    *,
    names: dict[str, str],
    from_block: int,
) -> None:
    """Poll until every job is Finalized/Rejected, showing the chain's state as it goes.

    Each poll (every `POLL_S` seconds) reads a `cli.live.Snapshot` from the chain (jobs and
    their round phase, disputes, slashes, settled forced errors) and shows it: a live view
    redrawn in place on a terminal, one plain line per change otherwise.

    Raises:
        TimeoutError: the jobs did not settle within ``cfg.timeout_s``.
        RuntimeError: a node process exited early.
    """
    from cli.live import ChainPoller, LiveView

    terminal = {"Finalized", "Rejected", "Cancelled"}
    poller = ChainPoller(client, names, from_block)
    with LiveView() as view:
        while True:
            elapsed = time.monotonic() - t0
            dead = [n for n, p in procs.items() if p.poll() is not None]
            snapshot = poller.poll(elapsed, dead)
            view.update(snapshot)
            if dead:
                raise RuntimeError(f"node process(es) exited early: {', '.join(dead)}; see logs")
            if elapsed > cfg.timeout_s:
                raise TimeoutError(f"jobs not settled after {cfg.timeout_s:.0f} s; see logs")
            statuses = [j.status for j in snapshot.jobs]
            if len(statuses) >= cfg.jobs and all(s in terminal for s in statuses):
                return
            time.sleep(POLL_S)


def _events(client: Any, contract_name: str, event: str, from_block: int) -> list[Any]:
    contract = client.contract_by_name(contract_name)
    return list(getattr(contract.events, event)().get_logs(from_block=from_block))


def _job_accuracy(client: Any, job: Any) -> float | None:
    """Test accuracy of a job's committed final checkpoint, fetched from its solver and checked
    against the Merkle root before it is trusted (None if it cannot be fetched)."""
    from veritrain.commitments import leaf_hash
    from veritrain.errors import VeritrainError
    from veritrain.merkle import verify_proof
    from veritrain.spec import load_spec
    from veritrain.training import TrainingEngine
    from veritrain.wire import CheckpointClient

    if not job.checkpoint_url:
        return None
    try:
        spec = load_spec(job.spec_uri, job.spec_hash)
        last = spec.num_leaves - 1
        solver = CheckpointClient(job.checkpoint_url)
        proof = solver.proof(last)
        if not verify_proof(
            proof.proof_bytes(),
            job.merkle_root,
            leaf_hash(spec.total_steps, proof.state_hash_bytes()),
        ):
            return None
        blob = solver.checkpoint(spec.total_steps, proof.state_hash_bytes())
        engine = TrainingEngine(spec)
        return round(float(engine.evaluate(engine.load_state(blob))), 4)
    except (VeritrainError, OSError, ValueError) as exc:
        logger.warning("job %d: cannot evaluate the final checkpoint: %s", job.job_id, exc)
        return None


def _summarize(
    client: Any, dep: Any, cfg: DemoConfig, roles: dict[str, str], names: dict[str, str]
) -> dict[str, Any]:
    """Read the outcome back from the chain: job statuses, slashes, net rewards, shares."""
    from cli.reports import shares_report

    start = dep.block
    jobs = []
    for job_id in range(1, client.jobs.job_count() + 1):
        job = client.jobs.get_job(job_id)
        jobs.append(
            {
                "job_id": job_id,
                "status": job.status.name,
                "solver": job.solver,
                "solver_name": names.get(job.solver, "?"),
                "dispute_id": job.dispute_id,
                "test_accuracy": _job_accuracy(client, job),
            }
        )

    slashed: dict[tuple[str, str], int] = {}
    for ev in _events(client, "StakeManager", "StakeSlashed", start):
        key = (ev["args"]["account"], ROLE_NAMES[int(ev["args"]["role"])])
        slashed[key] = slashed.get(key, 0) + int(ev["args"]["slashed"])

    # Net rewards: credits booked minus the caller's own bonds handed back (a returned bond is
    # not a reward). Bonds returned = bonds posted - bonds forfeited. The Escrow books every
    # credit; the JobManager's are the job payouts (move bonds come back through the game).
    credited: dict[str, int] = {}
    for ev in _events(client, "Escrow", "Credited", start):
        if ev["args"]["protocol"] != dep.addresses.job_manager:
            continue
        a = ev["args"]["account"]
        credited[a] = credited.get(a, 0) + int(ev["args"]["amount"])
    bonds: dict[str, int] = {}
    for ev in _events(client, "JobManager", "VerdictsSubmitted", start):
        a = ev["args"]["verifier"]
        bonds[a] = bonds.get(a, 0) + int(ev["args"]["bond"])
    for ev in _events(client, "JobManager", "ApprovalChallenged", start):
        a = ev["args"]["challenger"]
        bonds[a] = bonds.get(a, 0) + int(ev["args"]["bond"])
    for ev in _events(client, "JobManager", "BondForfeited", start):
        a = ev["args"]["account"]
        bonds[a] = bonds.get(a, 0) - int(ev["args"]["amount"])
    rewards = []
    for addr, amount in sorted(credited.items()):
        role = roles.get(addr, "other")
        net = amount - bonds.get(addr, 0)
        if role == "submitter" or net <= 0:
            continue
        rewards.append(
            {"address": addr, "name": names.get(addr, "?"), "role": role, "amount_wei": net}
        )

    report = shares_report(client, MODEL_NAME)
    shares = [
        {
            "address": h["address"],
            "name": names.get(h["address"], "?"),
            "shares": h["shares"],
            "bps": h["bps"],
        }
        for h in report["holders"]
    ]
    disputes = []
    for ev in _events(client, "JobManager", "DisputeSettled", start):
        dispute_id = int(ev["args"]["disputeId"])
        disputes.append(
            {
                "job_id": int(ev["args"]["jobId"]),
                "dispute_id": dispute_id,
                "segment_valid": bool(ev["args"]["segmentValid"]),
                "pot_wei": int(ev["args"]["pot"]),
                **_dispute_trace(client, dep, dispute_id, start, names),
            }
        )
    return {
        "jobs": jobs,
        "forced_errors": _forced_errors(client, start, names),
        "slashed": [
            {"address": a, "name": names.get(a, "?"), "role": r, "amount_wei": amt}
            for (a, r), amt in sorted(slashed.items())
        ],
        "rewards": rewards,
        "shares": shares,
        "disputes": disputes,
        "model": MODEL_NAME,
        "chain_id": dep.chain_id,
    }


def _forced_errors(client: Any, start: int, names: dict[str, str]) -> list[dict[str, Any]]:
    """Every forced error settled (docs/FORCED_ERRORS.md): the sample and segment, who approved
    it (slashed into the jackpot pool), who rejected it and which whistleblowers flagged an
    approval of it (each paid a jackpot from the pool), read back from the chain's events."""
    from veritrain.enums import Verdict

    paid_by_job: dict[int, dict[str, int]] = {}
    for ev in _events(client, "JobManager", "JackpotPaid", start):
        job = int(ev["args"]["jobId"])
        account = ev["args"]["account"]
        paid_by_job.setdefault(job, {})[account] = paid_by_job.get(job, {}).get(account, 0) + int(
            ev["args"]["amount"]
        )
    out = []
    for ev in _events(client, "JobManager", "ForcedErrorSettled", start):
        job_id = int(ev["args"]["jobId"])
        sample = int(ev["args"]["sampleIndex"])
        assignment = client.jobs.get_assignment(job_id)
        approvers, rejecters = [], []
        for v in assignment.verifiers:
            verdicts = client.jobs.verdicts_of(job_id, v)
            if sample < len(verdicts) and verdicts[sample] is Verdict.Approve:
                approvers.append(v)
            elif sample < len(verdicts) and verdicts[sample] is Verdict.Reject:
                rejecters.append(v)
        paid = paid_by_job.get(job_id, {})

        def entry(account: str, amount: int) -> dict[str, Any]:
            return {"address": account, "name": names.get(account, "?"), "amount_wei": amount}

        out.append(
            {
                "job_id": job_id,
                "sample": sample,
                "segment": int(assignment.segments[sample]),
                "slashed_wei": int(ev["args"]["slashed"]),
                "paid_wei": int(ev["args"]["paid"]),
                "approvers_slashed": [{"address": a, "name": names.get(a, "?")} for a in approvers],
                "rejecters_paid": [entry(a, paid[a]) for a in rejecters if a in paid],
                "whistleblowers_paid": [
                    entry(a, amount) for a, amount in paid.items() if a not in rejecters
                ],
            }
        )
    return out


Touch = Callable[[str, str, str, int], list[Any]]
"""Logs of one contract event whose ``key`` argument equals a value (their txs are counted)."""


def _trace_game(
    client: Any, dispute_id: int, touch: Touch, names: dict[str, str]
) -> tuple[dict[str, Any], int]:
    """A bisection game's moves, step and winner; returns (trace, its step dispute id)."""
    for event in (
        "GameOpened",
        "EndpointsPosted",
        "Bisected",
        "Responded",
        "StepDisputeOpened",
        "TimeoutClaimed",
    ):
        touch("BisectionGame", event, "disputeId", dispute_id)
    resolved = touch("BisectionGame", "GameResolved", "disputeId", dispute_id)
    game = client.game.get_game(dispute_id)
    winner = resolved[0]["args"]["winner"] if resolved else None
    trace = dict(
        adjudicator="bisection",
        moves=game.moves,
        step=game.lo if game.hi == game.lo + 1 else None,
        winner=winner,
        winner_name=names.get(winner or "", "?"),
        winner_side="defender" if resolved and resolved[0]["args"]["defenderWon"] else "challenger",
    )
    return trace, int(game.step_dispute_id)


def _trace_committee(
    client: Any, dispute_id: int, touch: Touch, names: dict[str, str]
) -> tuple[dict[str, Any], int]:
    """A segment committee: its moves are the committee's (counted by the caller)."""
    return {"adjudicator": "committee"}, dispute_id


_DISPUTE_TRACERS: dict[str, Callable[..., tuple[dict[str, Any], int]]] = {
    "bisection": _trace_game,
    "committee": _trace_committee,
}
"""How to trace a dispute, per `ProtocolParams.adjudicator`."""


def _dispute_trace(
    client: Any, dep: Any, dispute_id: int, start: int, names: dict[str, str]
) -> dict[str, Any]:
    """How one dispute was fought: its adjudicator, moves, winner, and the gas of every
    transaction that touched it (the opening ``finalize``, the game's moves, the committee)."""
    tx_hashes: set[bytes] = set()

    def touch(contract: str, event: str, key: str, value: int) -> list[Any]:
        logs = [e for e in _events(client, contract, event, start) if int(e["args"][key]) == value]
        tx_hashes.update(bytes(e["transactionHash"]) for e in logs)
        return logs

    touch("JobManager", "JobDisputed", "disputeId", dispute_id)
    trace, committee_id = _DISPUTE_TRACERS[dep.params.adjudicator](client, dispute_id, touch, names)
    if committee_id:
        committee_moves = 0
        for event in ("CommitteeDrawn", "VoteCommitted", "VoteRevealed", "DisputeResolved"):
            committee_moves += len(touch("ArbitrationCommittee", event, "disputeId", committee_id))
        trace["committee_moves"] = committee_moves
        trace.setdefault("moves", committee_moves)  # a game counts its own moves
    trace["gas_used"] = sum(
        int(client.w3.eth.get_transaction_receipt(h)["gasUsed"]) for h in sorted(tx_hashes)
    )
    trace["transactions"] = len(tx_hashes)
    return trace


def _checks(summary: dict[str, Any]) -> dict[str, bool]:
    """The outcomes the demo promises, each checked against what the chain says."""
    by_name = {j["solver_name"]: j for j in summary["jobs"]}
    slashed = {s["name"] for s in summary["slashed"]}
    rewarded = {r["name"] for r in summary["rewards"]}
    holders = {s["name"] for s in summary["shares"]}
    honest = by_name.get("solver-honest", {})
    honest_forced = [
        f for f in summary.get("forced_errors", []) if f["job_id"] == honest.get("job_id")
    ]
    forced = honest_forced[0] if honest_forced else {}
    return {
        "forced_error_in_honest_job": bool(honest_forced),
        "lazy_verifier_slashed_by_forced_error": "verifier-lazy"
        in {a["name"] for a in forced.get("approvers_slashed", [])},
        "honest_verifiers_won_the_jackpot": {a["name"] for a in forced.get("rejecters_paid", [])}
        == {f"verifier-{i}" for i in range(1, 5)},
        "whistleblower_won_the_jackpot": "whistleblower"
        in {a["name"] for a in forced.get("whistleblowers_paid", [])},
        "honest_job_finalized": honest.get("status") == "Finalized",
        "honest_accuracy_at_least_0.9": (honest.get("test_accuracy") or 0.0) >= 0.9,
        "skip_steps_solver_slashed": "solver-skip-steps" in slashed,
        "perturb_solver_slashed": "solver-perturb" in slashed,
        "cheating_jobs_rejected": all(
            by_name.get(n, {}).get("status") == "Rejected"
            for n in ("solver-skip-steps", "solver-perturb")
        ),
        "lazy_verifier_slashed": "verifier-lazy" in slashed,
        "honest_verifiers_not_slashed": not any(
            n.startswith("verifier-") and n != "verifier-lazy" for n in slashed
        ),
        "whistleblower_rewarded": "whistleblower" in rewarded,
        "shares_only_to_verified_solvers": holders == {"solver-honest"},
        "disputes_won_by_the_challenger": bool(summary["disputes"])
        and all(not d["segment_valid"] for d in summary["disputes"]),
    }


def print_summary(summary: dict[str, Any]) -> None:
    """Print the demo outcome as tables (jobs, slashes, rewards, shares, checks)."""
    from rich.console import Console
    from rich.table import Table

    def tokens(wei: int) -> str:
        return f"{wei / E18:,.2f}"

    console = Console()
    jobs = Table("job", "solver", "status", "test accuracy", "dispute", title="Jobs")
    for j in summary["jobs"]:
        acc = "-" if j["test_accuracy"] is None else f"{j['test_accuracy']:.3f}"
        jobs.add_row(
            str(j["job_id"]), j["solver_name"], j["status"], acc, str(j["dispute_id"] or "-")
        )
    console.print(jobs)
    slashed = Table("account", "name", "role", "slashed (VTT)", title="Slashed")
    for s in summary["slashed"]:
        slashed.add_row(s["address"], s["name"], s["role"], tokens(s["amount_wei"]))
    console.print(slashed)
    rewards = Table("account", "name", "role", "net reward (VTT)", title="Rewards")
    for r in summary["rewards"]:
        rewards.add_row(r["address"], r["name"], r["role"], tokens(r["amount_wei"]))
    console.print(rewards)
    shares = Table(
        "account",
        "name",
        "shares",
        "ownership",
        "revenue (VTT)",
        title=f"Ownership of {summary.get('model', MODEL_NAME)}",
    )
    for h in summary["shares"]:
        shares.add_row(
            h["address"],
            h["name"],
            str(h["shares"]),
            f"{h['bps'] / 100:.2f}%",
            tokens(h.get("revenue_wei", 0)),
        )
    console.print(shares)
    disputes = Table(
        "dispute", "job", "adjudicator", "moves", "step", "winner", "gas used", title="Disputes"
    )
    for d in summary.get("disputes", []):
        disputes.add_row(
            str(d["dispute_id"]),
            str(d["job_id"]),
            d.get("adjudicator", "?"),
            str(d.get("moves", "-")),
            str(d.get("step", "-")),
            f"{d.get('winner_name', '?')} ({d.get('winner_side', '-')})",
            f"{d.get('gas_used', 0):,}",
        )
    console.print(disputes)
    forced = Table(
        "job",
        "sample",
        "segment",
        "approvers slashed",
        "rejecters paid",
        "whistleblowers paid",
        "slashed / paid (VTT)",
        title="Forced errors (jackpot pool)",
    )
    for f in summary.get("forced_errors", []):
        forced.add_row(
            str(f["job_id"]),
            str(f["sample"]),
            str(f["segment"]),
            ", ".join(a["name"] for a in f["approvers_slashed"]) or "-",
            ", ".join(a["name"] for a in f["rejecters_paid"]) or "-",
            ", ".join(a["name"] for a in f["whistleblowers_paid"]) or "-",
            f"{tokens(f['slashed_wei'])} / {tokens(f['paid_wei'])}",
        )
    console.print(forced)
    checks = Table("expected outcome", "held", title="Checks")
    for name, ok in summary.get("checks", {}).items():
        checks.add_row(name, "[green]yes[/green]" if ok else "[red]NO[/red]")
    console.print(checks)
    console.print(f"finished in {summary.get('elapsed_s', 0):.0f} s; logs in {summary['workdir']}")
