"""`veritrain job watch N`: follow one job until it is terminal, one line per change.

Each poll reads the job's JobManager events (filtered by job id) and its VerificationRound
events (filtered by submission id) since the last poll, and the job's status: one line per
event (claim, checkpoints, verifiers and their samples, claims, each verdict sealed and
revealed as revealed (``VerdictsRevealed``: a forced-error settlement rewrites
``verdictsOf``, not the event), the secret and the round's outcome, challenges, the dispute,
slashes (a seat proven to have signed two seals among them), jackpots, finalization and its
credits and payments, and the earnings it restaked: a job's end adds the solver's reward and
each seat's fee (a catch's jackpot with it) to their stakes, ``StakesRestaked``, instead of
paying their wallets) and one per status change. When nothing
changes it says why the job waits, once per reason: in Committed it simulates
``assignVerifiers(jobId)`` with an ``eth_call`` (no gas) and prints the decoded revert; in
Verifying it names the verifiers that have not sealed or revealed and the window's deadline.

Exit 0 at a terminal status (Finalized, Rejected, Cancelled, Expired); 1 with one line on
timeout or for a job that does not exist.

Run: ``veritrain job watch 3 [--timeout 600] [--interval 2] [--json]``.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from typing import Annotated, Any

import typer

from cli.errors import CliError
from cli.history import clock
from noderuntime.options import (
    DEFAULT_RPC,
    UINT256_MAX,
    DeploymentOpt,
    JsonOpt,
    RpcUrlOpt,
    connect_reader,
)

__all__ = ["Watcher", "watch", "waiting_reason"]

TERMINAL = ("Finalized", "Rejected", "Cancelled", "Expired")
_JOB_EVENTS = [
    "JobClaimed",
    "CheckpointsCommitted",
    "JobReclaimed",
    "RandomnessReanchored",
    "VerifiersAssigned",
    "VerifiersReassigning",
    "VerdictsAbstained",
    "VerdictMissed",
    "ChallengeDeadlineSet",
    "ApprovalChallenged",
    "JobDisputed",
    "SampleUndisputed",
    "DisputeSettled",
    "ForcedErrorSettled",
    "ForcedEndDisputed",
    "JackpotPaid",
    "SolverFaulted",
    "SolverSlashed",
    "VerifierSlashed",
    "VerifierEquivocated",
    "ArbiterSlashed",
    "BondForfeited",
    "JobFinalized",
    "JobRejected",
    "JobCancelled",
    "JobExpired",
]
_ROUND_EVENTS = [
    "ClaimsPosted",
    "VerdictsCommitted",
    "VerdictsRevealed",
    "VerdictRoundReset",
    "EquivocationProven",
    "SecretRevealed",
]
_PAYOUT_EVENTS = {"JobFinalized", "JobRejected", "JobCancelled", "JobExpired"}


def _mask(mask: int) -> list[int]:
    return [i for i in range(int(mask).bit_length()) if int(mask) >> i & 1]


def _event_text(ev: Any) -> str:
    """One line for a job or round event (amounts via `vtt`, full addresses)."""
    from veritrain.units import vtt

    a = ev.args

    def amount(key: str) -> str:
        return vtt(int(a[key]))

    name = ev.event
    if name == "JobClaimed":
        return f"claimed by solver {a['solver']} (commit by {clock(a['commitDeadline'])} UTC)"
    if name == "CheckpointsCommitted":
        return f"checkpoints committed: root 0x{bytes(a['merkleRoot']).hex()}"
    if name == "VerifiersAssigned":
        segments = ", ".join(map(str, a["segments"]))
        seats = "; ".join(
            f"{v} judges samples {_mask(m)}"
            for v, m in zip(a["verifiers"], a["sampleMasks"], strict=True)
        )
        return (
            f"verifiers assigned: {seats}; sampled segments [{segments}]; "
            f"verdicts by {clock(a['verdictDeadline'])} UTC"
        )
    if name == "ClaimsPosted":
        return f"claims posted ({len(a['endHashes'])} samples)"
    if name == "VerdictsCommitted":
        return f"verdict sealed by {a['verifier']}"
    if name == "VerdictsRevealed":
        from chain.types import revealed_approvals

        votes = ", ".join(
            f"{i}: {'approve' if ok else 'reject'}" for i, ok in enumerate(revealed_approvals(a))
        )
        return f"verdict revealed by {a['verifier']}: {votes}"
    if name == "VerdictsAbstained":
        return f"{a['verifier']} abstained on samples {_mask(a['abstainMask'])}"
    if name == "SecretRevealed":
        if a["forced"]:
            return f"secret revealed: forced error on sample {a['forcedSample']}"
        return "secret revealed: no forced error"
    if name == "VerifiersReassigning":
        return (
            f"no verdicts: verifiers drawn again (reassignment {a['reassignment']}, randomness "
            f"block {a['randomnessBlock']})"
        )
    if name == "EquivocationProven":
        return f"{a['prover']} proved that {a['verifier']} signed two seals"
    if name == "VerifierEquivocated":
        return (
            f"verifier {a['verifier']} signed two seals: slashed {amount('slashed')} and bonds "
            f"{amount('bonds')} to the jackpot pool; its verdicts voided"
        )
    if name == "VerdictMissed":
        return f"verifier {a['verifier']} missed its verdicts: slashed {amount('slashed')}"
    if name == "ChallengeDeadlineSet":
        return f"every verdict revealed: challenges until {clock(a['challengeDeadline'])} UTC"
    if name == "ApprovalChallenged":
        return (
            f"approval of {a['verifier']} on sample {a['sampleIndex']} challenged by "
            f"{a['challenger']} (bond {amount('bond')})"
        )
    if name == "JobDisputed":
        return (
            f"dispute {a['disputeId']} opened on sample {a['sampleIndex']} (segment {a['segment']})"
        )
    if name == "DisputeSettled":
        verdict = "valid" if a["segmentValid"] else "invalid"
        return f"dispute {a['disputeId']} settled: segment {verdict}, pot {amount('pot')}"
    if name == "ForcedErrorSettled":
        return (
            f"forced error settled on sample {a['sampleIndex']}: slashed {amount('slashed')}, "
            f"paid {amount('paid')}"
        )
    if name == "ForcedEndDisputed":
        return (
            f"the forced sample {a['sampleIndex']}'s true end is disputed by verifier "
            f"{a['verifier']}: the sample goes to its dispute"
        )
    if name == "JackpotPaid":
        return f"jackpot {amount('amount')} to {a['account']}"
    if name == "JobFinalized":
        return (
            f"finalized: reward {amount('reward')} restaked for {a['solver']}, {a['shares']} shares"
        )
    if name == "JobRejected":
        return f"rejected (dispute {a['disputeId']}): refund {amount('refund')}"
    if name in ("JobCancelled", "JobExpired"):
        return f"{name.removeprefix('Job').lower()}: refund {amount('refund')}"
    if name == "Credited":
        return f"credit {amount('amount')} to {a['account']}"
    if name == "Paid":
        return f"paid {amount('amount')} to {a['account']}"
    if name == "StakesRestaked":
        from chain.types import restaked_amounts
        from veritrain.enums import Role

        role = Role(int(a["role"])).name.lower()
        earned = ", ".join(f"{v} {vtt(w)}" for v, w in restaked_amounts(a)) or "nothing"
        return (
            f"{role} stakes unlocked; earnings restaked (added to the {role} stake, not paid "
            f"to the wallet): {earned}"
        )
    who = next((a[k] for k in ("verifier", "solver", "arbiter", "account", "party") if k in a), "")
    value = next((k for k in ("slashed", "amount") if k in a), None)
    tail = f" {amount(value)}" if value is not None else ""
    return f"{name} {who}{tail}".replace("  ", " ").strip()


def _revert_text(exc: Any) -> str:
    """A decoded revert of ``assignVerifiers`` in words."""
    args = getattr(exc, "named_args", {}) or {}
    name = getattr(exc, "name", "")
    if name == "NoEligibleVerifiers":
        return f"not enough active verifiers to assign ({args.get('candidates')} eligible)"
    if name == "RandomnessNotReady":
        return (
            f"randomness block {args.get('randomnessBlock')} not reached "
            f"(head {args.get('blockNumber')})"
        )
    return str(exc)


def waiting_reason(client: Any, job_id: int) -> str:
    """Why the job has not moved: what it waits for, and until when (chain time, UTC).

    In Committed it simulates ``assignVerifiers(jobId)`` with an ``eth_call`` (no gas, nothing
    mined) and reports the decoded revert.

    Raises:
        chain.errors.RpcUnavailable: the endpoint is down.
    """
    from chain.errors import ContractRevert
    from veritrain.enums import JobStatus

    job = client.jobs.get_job(job_id, with_uris=False)
    status = job.status
    if status is JobStatus.Open:
        return f"no solver has claimed it (open until {clock(job.open_deadline)} UTC)"
    if status is JobStatus.Claimed:
        return (
            f"solver {job.solver} has not committed its checkpoints "
            f"(deadline {clock(job.commit_deadline)} UTC)"
        )
    if status is JobStatus.Committed:
        try:
            client.call(client.jobs.contract, "assignVerifiers", job_id)
        except ContractRevert as exc:
            return _revert_text(exc)
        return "verifiers can be assigned now: anyone may call assignVerifiers"
    if status is JobStatus.Verifying:
        return _verifying_reason(client, job_id, job)
    if status is JobStatus.Disputed:
        from cli.disputes import dispute_row

        try:
            row = dispute_row(client, int(job.dispute_id))
        except CliError:
            return f"dispute {job.dispute_id}"
        return f"dispute {row['id']} ({row['adjudicator']}): {row['phase']}"
    return status.name


def _verifying_reason(client: Any, job_id: int, job: Any) -> str:
    sid = client.jobs.submission_of(job_id)
    assignment = client.jobs.get_assignment(job_id)
    windows = client.round.windows_of(sid)
    if not client.round.claims_of(sid).posted:
        return f"solver {job.solver} has not posted its claims"
    unsealed, unrevealed = [], []
    for v in assignment.verifiers:
        commitment, revealed = client.round.verdict_commitment_of(sid, v)
        if commitment == b"\x00" * 32:
            unsealed.append(v)
        elif not revealed:
            unrevealed.append(v)
    if unsealed:
        return (
            f"verdicts not sealed by {', '.join(unsealed)} "
            f"(deadline {clock(job.verdict_deadline)} UTC)"
        )
    if unrevealed:
        return (
            f"verdicts not revealed by {', '.join(unrevealed)} "
            f"(window closes {clock(windows.verdict_reveal_closes)} UTC)"
        )
    if not client.round.round_of(sid).revealed:
        return (
            f"the challenge window, then the solver's secret "
            f"(reveal from {clock(windows.secret_reveal_opens)} to "
            f"{clock(windows.secret_reveal_closes)} UTC)"
        )
    return "finalize (anyone may call it)"


class Watcher:
    """Follow one job's events and status from the deployment block.

    Args:
        client: a `ChainClient` bound to the deployment.
        job_id: an existing job.
        emit: called with each change: ``{"time" (s, wall clock), "block" (None for status
            and waiting lines), "event", "text", "args"}``.
    """

    def __init__(self, client: Any, job_id: int, emit: Callable[[dict[str, Any]], None]) -> None:
        dep = client.deployment
        self.client = client
        self.job_id = job_id
        self.emit = emit
        self.next_block = int(dep.block) if dep is not None else 0
        self.submissions: set[bytes] = set()
        self.status: str | None = None
        self.reason: str | None = None

    def _line(self, event: str, text: str, block: int | None = None, args: Any = None) -> None:
        self.emit({"time": time.time(), "block": block, "event": event, "text": text,
                   "args": args})  # fmt: skip

    def poll(self) -> bool:
        """One pass: emit new events and a status change; returns True when anything changed.

        Raises:
            chain.errors.RpcUnavailable: the endpoint is down.
        """
        from cli.history import events
        from indexer.follow import jsonable

        client = self.client
        # The job first, then the head: the status read is then never newer than the blocks
        # whose events are read below, so a terminal status comes with the event that made it
        # (a finalize mined between the two reads would otherwise end the watch without it).
        job = client.jobs.get_job(self.job_id, with_uris=False)
        head = int(client.block_number())
        changed = False
        if head >= self.next_block:
            lo = self.next_block
            found = events(client, client.jobs.contract, _JOB_EVENTS,
                           first_indexed=self.job_id, from_block=lo, to_block=head)  # fmt: skip
            sid = bytes(client.jobs.submission_of(self.job_id))
            if any(sid):
                self.submissions.add(sid)
            round_contract = client.round.contract
            for s in sorted(self.submissions):
                found += events(client, round_contract, _ROUND_EVENTS,
                                first_indexed=int.from_bytes(s, "big"), from_block=lo,
                                to_block=head)  # fmt: skip
            payouts = {ev.tx_hash for ev in found if ev.event in _PAYOUT_EVENTS}
            if payouts:
                # The earnings of the job's end go to the StakeManager in one payment: shown
                # per party as restaked (`StakesRestaked`), not as a payment to the contract.
                restaking = client.deployment.addresses.stake_manager
                found += [
                    ev
                    for ev in events(
                        client,
                        client.escrow.contract,
                        ["Credited", "Paid"],
                        from_block=lo,
                        to_block=head,
                    )  # fmt: skip
                    if ev.tx_hash in payouts
                    and not (ev.event == "Paid" and ev.args["account"] == restaking)
                ]
                found += [
                    ev
                    for ev in events(
                        client,
                        client.stakes.contract,
                        ["StakesRestaked"],
                        from_block=lo,
                        to_block=head,
                    )  # fmt: skip
                    if ev.tx_hash in payouts
                ]
            for ev in sorted(found, key=lambda e: e.position):
                self._line(ev.event, _event_text(ev), ev.block_number, jsonable(dict(ev.args)))
                changed = True
            self.next_block = head + 1
        status = job.status.name
        if status != self.status:
            before = self.status
            self.status = status
            text = f"status {status}" if before is None else f"status {before} -> {status}"
            self._line("status", text)
            changed = True
        if changed:
            self.reason = None
        return changed

    @property
    def terminal(self) -> bool:
        """Whether the last status read is terminal."""
        return self.status in TERMINAL

    def explain(self) -> None:
        """Emit why the job waits, unless it is the reason emitted last."""
        reason = waiting_reason(self.client, self.job_id)
        if reason != self.reason:
            self.reason = reason
            self._line("waiting", f"waiting: {reason}")


def watch(client: Any, job_id: int, timeout: float, interval: float,
          emit: Callable[[dict[str, Any]], None]) -> bool:  # fmt: skip
    """Follow job ``job_id`` until it is terminal or ``timeout`` seconds pass.

    Args:
        client: a `ChainClient` bound to the deployment.
        job_id: an existing job.
        timeout: seconds of wall clock to wait at most.
        interval: seconds between polls.
        emit: receives each change (`Watcher`).

    Returns:
        True at a terminal status, False on timeout.

    Raises:
        chain.errors.RpcUnavailable: the endpoint is down.
    """
    watcher = Watcher(client, job_id, emit)
    deadline = time.monotonic() + timeout
    while True:
        changed = watcher.poll()
        if watcher.terminal:
            return True
        left = deadline - time.monotonic()
        # A poll that found changes waits one interval before saying why the job still waits,
        # unless the timeout is up: then the reason is the last thing printed.
        if not changed or left <= 0:
            watcher.explain()
        if left <= 0:
            return False
        time.sleep(min(interval, left))


def _positive(value: float, name: str) -> float:
    if not (math.isfinite(value) and value > 0):
        raise typer.BadParameter(f"must be > 0 seconds, got {value}", param_hint=f"'{name}'")
    return value


def job_watch(
    job_id: Annotated[int, typer.Argument(min=1, max=UINT256_MAX, help="Job id.")],
    timeout: Annotated[
        float, typer.Option(help="Give up (exit 1) after this many seconds.")
    ] = 3600.0,
    interval: Annotated[float, typer.Option(help="Seconds between polls.")] = 2.0,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Follow a job until it is Finalized, Rejected, Cancelled or Expired: one line per change
    (with the time), and why it waits when nothing changes. ``--json``: one JSON object per
    line.

    Errors (one line, exit 1): no such job; still not terminal after --timeout seconds.
    """
    _positive(timeout, "--timeout")
    _positive(interval, "--interval")
    client = connect_reader(rpc_url, deployment)
    count = client.jobs.job_count()
    if job_id > count:
        raise CliError(f"job {job_id} does not exist ({count} jobs on this deployment)")

    def emit(line: dict[str, Any]) -> None:
        if json_out:
            typer.echo(json.dumps(line, sort_keys=True, default=str))
        else:
            stamp = time.strftime("%H:%M:%S", time.gmtime(line["time"]))
            block = f" block {line['block']}" if line["block"] is not None else ""
            typer.echo(f"{stamp}{block}  {line['text']}")

    if not watch(client, job_id, timeout, interval, emit):
        status = client.jobs.get_job(job_id, with_uris=False).status.name
        raise CliError(f"job {job_id} still {status} after {timeout:g} s (--timeout)")
