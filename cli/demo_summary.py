"""The demo's outcome read back from the chain: the summary `veritrain demo --json` prints (jobs,
verdicts, slashes, rewards, shares, disputes and their moves, forced errors), the checks it
must pass, and the tables a person reads.

Run: not a script; `cli.demo.run_demo` calls `summarize` once the jobs settle, then
`print_summary(summary)`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from chain.types import ABSTENTION_BOND, SLASH_ANNOUNCEMENTS
from cli.demo import ARITH, MODEL_NAME, ROLE_NAMES, TEXT_MODEL
from veritrain.units import vtt_number

if TYPE_CHECKING:
    from cli.demo import DemoConfig

logger = logging.getLogger(__name__)

__all__ = ["checks", "print_summary", "summarize"]


def _events(client: Any, contract_name: str, event: str, from_block: int) -> list[Any]:
    contract = client.contract_by_name(contract_name)
    return list(getattr(contract.events, event)().get_logs(from_block=from_block))


def _job_metric(job: Any) -> tuple[str, float | None]:
    """The metric of a job's committed final checkpoint on held-out data, fetched from its
    solver and checked against the Merkle root before it is trusted.

    Returns:
        ``(metric name, value)``: ``"accuracy"`` (test accuracy in [0, 1]) for an MLP job,
        ``"val_bpc"`` (validation loss in bits per character) for a GPT job
        (`veritrain.spec.METRIC_LABELS`); the value is None when the checkpoint cannot be
        fetched or fails its proof (the name is ``"accuracy"`` when the spec cannot be read).
    """
    from veritrain.errors import VeritrainError
    from veritrain.merkle import verify_checkpoint
    from veritrain.spec import load_spec
    from veritrain.training import TrainingEngine
    from veritrain.wire import CheckpointClient

    metric = "accuracy"
    if not job.checkpoint_url:
        return metric, None
    try:
        spec = load_spec(job.spec_uri, job.spec_hash)
        metric = spec.metric_name
        last = spec.num_leaves - 1
        solver = CheckpointClient(job.checkpoint_url)
        proof = solver.proof(last)
        if not verify_checkpoint(
            proof.proof_bytes(),
            job.merkle_root,
            spec.total_steps,
            spec.checkpoint_interval,
            last,
            proof.state_hash_bytes(),
        ):
            return metric, None
        blob = solver.checkpoint(spec.total_steps, proof.state_hash_bytes())
        engine = TrainingEngine(spec)
        return metric, round(float(engine.evaluate(engine.load_state(blob))), 4)
    except (VeritrainError, OSError, ValueError) as exc:
        logger.warning("job %d: cannot evaluate the final checkpoint: %s", job.job_id, exc)
        return metric, None


def _verdicts(client: Any, job_id: int, names: dict[str, str]) -> dict[str, list[str]]:
    """Each assigned verifier's revealed verdict per sample (``"Approve"``/``"Reject"``...),
    by process name; empty before verifiers were assigned."""
    assignment = client.jobs.get_assignment(job_id)
    return {
        names.get(v, v): [verdict.name for verdict in client.jobs.verdicts_of(job_id, v)]
        for v in assignment.verifiers
    }


def summarize(
    client: Any, dep: Any, cfg: DemoConfig, roles: dict[str, str], names: dict[str, str]
) -> dict[str, Any]:
    """Read the outcome back from the chain: job statuses, slashes, net rewards, shares."""
    from chain.types import restaked_amounts
    from cli.reports import shares_report
    from veritrain.spec import model_id_hash

    start = dep.block
    models = {model_id_hash(m): m for m in (MODEL_NAME, TEXT_MODEL)}
    jobs = []
    for job_id in range(1, client.jobs.job_count() + 1):
        job = client.jobs.get_job(job_id)
        metric, value = _job_metric(job)
        jobs.append(
            {
                "job_id": job_id,
                "model": models.get(bytes(job.model_id), "0x" + bytes(job.model_id).hex()),
                "status": job.status.name,
                "solver": job.solver,
                "solver_name": names.get(job.solver, "?"),
                "dispute_id": job.dispute_id,
                "metric": metric,
                "metric_value": value,
                "verdicts": _verdicts(client, job_id, names),
            }
        )

    # A seat's forfeited bonds are slashed from its verifier stake right after the JobManager
    # announces them (`SLASH_ANNOUNCEMENTS`): the cause is kept so that the checks can tell a
    # forfeited abstention bond from a slash for a wrong verdict.
    announced: dict[tuple[bytes, int, str], str] = {}
    for name, (arg, cause) in SLASH_ANNOUNCEMENTS.items():
        for ev in _events(client, "JobManager", name, start):
            at = (bytes(ev["transactionHash"]), int(ev["logIndex"]) + 1, ev["args"][arg])
            announced[at] = cause
    slashed: dict[tuple[str, str, str], int] = {}
    for ev in _events(client, "StakeManager", "StakeSlashed", start):
        account = ev["args"]["account"]
        at = (bytes(ev["transactionHash"]), int(ev["logIndex"]), account)
        row = (account, ROLE_NAMES[int(ev["args"]["role"])], announced.get(at, "slash"))
        slashed[row] = slashed.get(row, 0) + int(ev["args"]["slashed"])

    # Net rewards: payouts (restaked, paid to the wallet or booked as credit) minus the caller's
    # own bonds handed back (a returned bond is not a reward): a whistleblower's challenge bonds
    # posted minus those forfeited, per job. A seat's reject bonds are locked from its verifier
    # stake and handed back by unlocking it, never credited, so they are left out (their
    # ``BondForfeited``, the same event, names an account with no challenge bond in that job).
    # The Escrow books every payout; the JobManager's are the job payouts (move bonds come back
    # through the game). A job's end pays the solver's reward and the seats' fees (a catch's
    # jackpot with its fee) to the StakeManager, which adds each party's part to its stake
    # (``StakesRestaked``): counted for each party, not for the StakeManager.
    credited: dict[str, int] = {}
    for name in ("Credited", "Paid"):
        for ev in _events(client, "Escrow", name, start):
            if ev["args"]["protocol"] != dep.addresses.job_manager:
                continue
            a = ev["args"]["account"]
            if a == dep.addresses.stake_manager:
                continue  # restaked for the job's parties, counted below
            credited[a] = credited.get(a, 0) + int(ev["args"]["amount"])
    restaked: dict[str, int] = {}
    for ev in _events(client, "StakeManager", "StakesRestaked", start):
        for a, amount in restaked_amounts(ev["args"]):
            restaked[a] = restaked.get(a, 0) + amount
            credited[a] = credited.get(a, 0) + amount
    posted: dict[tuple[int, str], int] = {}  # challenge bonds not forfeited, by (job, account)
    for ev in _events(client, "JobManager", "ApprovalChallenged", start):
        key = (int(ev["args"]["jobId"]), ev["args"]["challenger"])
        posted[key] = posted.get(key, 0) + int(ev["args"]["bond"])
    for ev in _events(client, "JobManager", "BondForfeited", start):
        key = (int(ev["args"]["jobId"]), ev["args"]["account"])
        if key in posted:
            posted[key] -= min(posted[key], int(ev["args"]["amount"]))
    bonds: dict[str, int] = {}
    for (_job, a), amount in posted.items():
        bonds[a] = bonds.get(a, 0) + amount
    rewards = []
    for addr, amount in sorted(credited.items()):
        role = roles.get(addr, "other")
        net = amount - bonds.get(addr, 0)
        if role == "submitter" or net <= 0:
            continue
        rewards.append(
            {
                "address": addr,
                "name": names.get(addr, "?"),
                "role": role,
                "amount_wei": net,
                "restaked_wei": restaked.get(addr, 0),
            }
        )

    shares = [
        {
            "model": model,
            "address": h["address"],
            "name": names.get(h["address"], "?"),
            "shares": h["shares"],
            "bps": h["bps"],
        }
        for model in (MODEL_NAME, TEXT_MODEL)
        for h in shares_report(client, model)["holders"]
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
            {"address": a, "name": names.get(a, "?"), "role": r, "cause": c, "amount_wei": amt}
            for (a, r, c), amt in sorted(slashed.items())
        ],
        "rewards": rewards,
        "shares": shares,
        "disputes": disputes,
        "models": [MODEL_NAME, TEXT_MODEL],
        "arith": ARITH,
        "chain_id": dep.chain_id,
    }


def _forced_errors(client: Any, start: int, names: dict[str, str]) -> list[dict[str, Any]]:
    """Every forced error settled (docs/FORCED_ERRORS.md): the sample and segment, who approved
    it (slashed into the jackpot pool), who rejected it with the solver's true end and which
    whistleblowers flagged an approval of it (each paid a jackpot from the pool), and who
    rejected it with another end (the sample stays disputed against the true end), read back
    from the chain's events and views. A rejecter whose end matched reads as an approval of the
    true end after the settlement, so it is told from an approver by ``forcedEndMatches``."""
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
        submission = client.jobs.submission_of(job_id)
        approvers, rejecters, disputed = [], [], []
        for v in assignment.verifiers:
            verdicts = client.jobs.verdicts_of(job_id, v)
            if sample >= len(verdicts):
                continue
            if client.round.forced_end_matches(submission, v):
                rejecters.append(v)
            elif verdicts[sample] is Verdict.Approve:
                approvers.append(v)
            elif verdicts[sample] in (Verdict.Reject, Verdict.Abstain):
                disputed.append(v)
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
                "rejecters_disputed": [{"address": a, "name": names.get(a, "?")} for a in disputed],
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


HONEST_VERIFIERS = tuple(f"verifier-{i}" for i in range(1, 5))


def _forced_caught(summary: dict[str, Any], job: dict[str, Any]) -> dict[str, bool]:
    """Whether the forced error of one honest job was caught as promised (the lazy verifier
    slashed, the honest verifiers and the whistleblower paid the jackpot)."""
    found = [f for f in summary.get("forced_errors", []) if f["job_id"] == job.get("job_id")]
    forced = found[0] if found else {}
    return {
        "forced_error": bool(found),
        "lazy_slashed": "verifier-lazy" in {a["name"] for a in forced.get("approvers_slashed", [])},
        "rejecters_paid": {a["name"] for a in forced.get("rejecters_paid", [])}
        == set(HONEST_VERIFIERS),
        "whistleblower_paid": "whistleblower"
        in {a["name"] for a in forced.get("whistleblowers_paid", [])},
    }


def _replays_agreed(summary: dict[str, Any], job: dict[str, Any]) -> bool:
    """Whether every honest verifier's replay matched the solver on every sample of an honest
    job: Approve on each sample but the forced error; on that one, the end it sealed was the
    solver's true end (named among the paid rejecters; its verdict then reads Approve, of the
    true end, or Reject before the settlement)."""
    found = [f for f in summary.get("forced_errors", []) if f["job_id"] == job.get("job_id")]
    if not found or not job.get("verdicts"):
        return False
    forced = found[0]["sample"]
    matched = {a["name"] for a in found[0].get("rejecters_paid", [])}
    for name in HONEST_VERIFIERS:
        verdicts = job["verdicts"].get(name, [])
        if not verdicts or name not in matched:
            return False
        if any(v != "Approve" for i, v in enumerate(verdicts) if i != forced):
            return False
    return True


def _mixed_machines(nodes: list[dict[str, Any]]) -> bool:
    """Whether every node reported its compute, and the honest solver and the honest
    verifiers ran with more than one thread count and more than one CPU capability."""
    if not nodes or any(n["threads"] is None for n in nodes):
        return False
    replaying = [n for n in nodes if n["name"] in ("solver-honest", *HONEST_VERIFIERS)]
    return (
        len({n["threads"] for n in replaying}) > 1
        and len({n["cpu_capability"] for n in replaying}) > 1
    )


def checks(summary: dict[str, Any]) -> dict[str, bool]:
    """The outcomes the demo promises, each checked against what the chain says."""
    digits = {j["solver_name"]: j for j in summary["jobs"] if j.get("model") == MODEL_NAME}
    text = [j for j in summary["jobs"] if j.get("model") == TEXT_MODEL]
    text_job = text[0] if len(text) == 1 else {}
    slashed = {s["name"] for s in summary["slashed"]}
    rewarded = {r["name"] for r in summary["rewards"]}
    holders = {s["name"] for s in summary["shares"]}
    honest = digits.get("solver-honest", {})
    caught = _forced_caught(summary, honest)
    text_caught = _forced_caught(summary, text_job)
    return {
        "nodes_on_mixed_threads_and_cpu_capabilities": _mixed_machines(summary.get("nodes", [])),
        "forced_error_in_honest_job": caught["forced_error"],
        "lazy_verifier_slashed_by_forced_error": caught["lazy_slashed"],
        "honest_verifiers_named_winners_of_the_forced_error": caught["rejecters_paid"],
        "whistleblower_named_winner_of_its_challenge": caught["whistleblower_paid"],
        "honest_job_finalized": honest.get("status") == "Finalized",
        "honest_replays_agreed": _replays_agreed(summary, honest),
        "honest_accuracy_at_least_0.9": honest.get("metric") == "accuracy"
        and (honest.get("metric_value") or 0.0) >= 0.9,
        "text_job_finalized_by_the_honest_solver": text_job.get("status") == "Finalized"
        and text_job.get("solver_name") == "solver-honest",
        "text_job_replays_agreed": _replays_agreed(summary, text_job),
        "text_job_forced_error_caught": all(text_caught.values()),
        "text_job_val_bpc_measured": text_job.get("metric") == "val_bpc"
        and (text_job.get("metric_value") or 0.0) > 0.0,
        "skip_steps_solver_slashed": "solver-skip-steps" in slashed,
        "perturb_solver_slashed": "solver-perturb" in slashed,
        "cheating_jobs_rejected": all(
            digits.get(n, {}).get("status") == "Rejected"
            for n in ("solver-skip-steps", "solver-perturb")
        ),
        "lazy_verifier_slashed": "verifier-lazy" in slashed,
        "honest_verifiers_not_slashed": not any(
            s["name"].startswith("verifier-")
            and s["name"] != "verifier-lazy"
            and s.get("cause") != ABSTENTION_BOND
            for s in summary["slashed"]
        ),
        "whistleblower_rewarded": "whistleblower" in rewarded,
        "shares_only_to_verified_solvers": holders == {"solver-honest"},
        "disputes_won_by_the_challenger": bool(summary["disputes"])
        and all(not d["segment_valid"] for d in summary["disputes"]),
    }


def print_summary(summary: dict[str, Any]) -> None:
    """Print the demo outcome as tables (nodes, jobs, slashes, rewards, shares, disputes,
    forced errors, checks); 160 columns wide off a terminal unless ``COLUMNS`` says otherwise."""
    from rich.table import Table

    def tokens(wei: int) -> str:
        return vtt_number(wei)  # integer arithmetic, never a float

    from cli.console import address_column, report_console
    from veritrain.spec import METRIC_LABELS

    console = report_console()  # a log file or a pipe: one table row per line
    nodes = Table(
        "node",
        "role",
        "torch threads",
        "CPU capability",
        "device",
        title="Nodes (mixed machines)",
    )
    for n in summary.get("nodes", []):
        nodes.add_row(
            n["name"],
            n["role"],
            str(n["threads"] if n["threads"] is not None else "?"),
            n["cpu_capability"] or "?",
            n.get("device") or "?",
        )
    console.print(nodes)
    jobs = Table(
        "job",
        "model",
        "solver",
        "status",
        "final checkpoint",
        "dispute",
        title=f"Jobs ({summary.get('arith', ARITH)} arithmetic)",
    )
    for j in summary["jobs"]:
        label = METRIC_LABELS.get(j["metric"], j["metric"])
        value = j["metric_value"]
        metric = f"{label}: -" if value is None else f"{label}: {value:.3f}"
        jobs.add_row(
            str(j["job_id"]),
            j["model"],
            j["solver_name"],
            j["status"],
            metric,
            str(j["dispute_id"] or "-"),
        )
    console.print(jobs)
    slashed = Table(title="Slashed")
    slashed.add_column(**address_column("account"))
    for header in ("name", "role", "cause", "slashed (VTT)"):
        slashed.add_column(header)
    for s in summary["slashed"]:
        cause = s.get("cause", "slash")
        slashed.add_row(s["address"], s["name"], s["role"], cause, tokens(s["amount_wei"]))
    console.print(slashed)
    rewards = Table(
        title="Rewards (restaked: added to the stake at the job's end, not paid to the wallet)"
    )
    rewards.add_column(**address_column("account"))
    for header in ("name", "role", "net reward (VTT)", "of it restaked (VTT)"):
        rewards.add_column(header)
    for r in summary["rewards"]:
        rewards.add_row(
            r["address"],
            r["name"],
            r["role"],
            tokens(r["amount_wei"]),
            tokens(r.get("restaked_wei", 0)),
        )
    console.print(rewards)
    shares = Table(title="Ownership of the models")
    shares.add_column("model")
    shares.add_column(**address_column("account"))
    for header in ("name", "shares", "ownership", "revenue (VTT)"):
        shares.add_column(header)
    for h in summary["shares"]:
        shares.add_row(
            h["model"],
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
        "rejecters disputed",
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
            ", ".join(a["name"] for a in f.get("rejecters_disputed", [])) or "-",
            f"{tokens(f['slashed_wei'])} / {tokens(f['paid_wei'])}",
        )
    console.print(forced)
    checks = Table("expected outcome", "held", title="Checks")
    for name, ok in summary.get("checks", {}).items():
        checks.add_row(name, "[green]yes[/green]" if ok else "[red]NO[/red]")
    console.print(checks)
    console.print(f"finished in {summary.get('elapsed_s', 0):.0f} s; logs in {summary['workdir']}")
