"""The whistleblower node: re-checks verifiers' approvals and challenges the wrong ones.

Per round (`WhistleblowerNode.step()`):

1. stake as `Role.Whistleblower` if not active;
2. for every Verifying job of its index (assigned jobs, learnt from JobManager events read
   from a block cursor persisted in the state file, `NodeBase.follow_jobs`: open jobs cost a
   poll nothing) whose solver posted its claims (docs/FORCED_ERRORS.md), replay
   every sampled segment itself from the claimed start hash (once per (job, sample), cached and
   persisted; done while the verdicts are still sealed, so it is ready when they are revealed);
   then, for every revealed Approve of a claim its replay contradicts (a cheat, or a forced
   error approved by a lazy verifier), call `challengeApproval(jobId, sampleIndex, verifier)`
   before the challenge deadline (posting `challengeBond`);
3. bisection deployments (docs/DISPUTES.md): when the game names it as challenger, answer
   each dissection with the first part whose end its own replay disputes
   (`NodeBase.play_challenger`) and claim the defender's timeout;
4. `finalize` the jobs it watches when due (anyone may);
5. `claimCredit` (and the game's credit).

Results live in `<data_dir>/whistleblower_state.json`; `challengerOf` is read before every
challenge, so a restarted whistleblower never challenges twice.

Run: `veritrain whistleblower run --rpc-url ... --deployment ... --key-env WB_KEY`.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from chain.errors import ContractRevert
from noderuntime import TERMINAL_JOB_STATUSES, NodeBase
from noderuntime.adjudication import Adjudication
from noderuntime.mirror import StateMirror
from noderuntime.ports import ChainPort
from noderuntime.records import CheckResult, RecordStore, WhistleblowerRecords
from noderuntime.runkeeper import RunKeeper
from veritrain.enums import DisputeStatus, JobStatus, Role, RoundOutcome, Verdict
from veritrain.errors import CheckpointUnavailable

logger = logging.getLogger(__name__)

__all__ = ["WhistleblowerNode"]


class WhistleblowerNode(NodeBase):
    """A whistleblower.

    Args:
        client: the chain client (injected; holds the whistleblower's key).
        data_dir: directory for the state file.
        poll_interval: seconds between rounds.
        adjudication: the adjudication strategy (None: from ``client.adjudicator.name``).
        stake_amount: wei to stake when not active (None: 4x challengeBond, at least min).
        threads: CPU threads for repro replays (`NodeBase`; None: torch's count).
        device: where repro jobs run, `"auto"`, `"cpu"` or `"cuda"` (`NodeBase`).
    """

    def __init__(
        self,
        client: ChainPort,
        data_dir: Path,
        *,
        poll_interval: float = 1.0,
        stake_amount: int | None = None,
        adjudication: Adjudication | None = None,
        threads: int | None = None,
        device: str = "cpu",
    ) -> None:
        super().__init__(
            client,
            name="whistleblower",
            revert_types=(ContractRevert,),
            poll_interval=poll_interval,
            adjudication=adjudication,
            threads=threads,
            device=device,
        )
        self.data_dir = Path(data_dir)
        self.stake_amount = stake_amount
        self.state = RecordStore(self.data_dir / "whistleblower_state.json", WhistleblowerRecords)
        # the run states it proves (finals, outer states), served with --serve-port
        self.mirror = StateMirror(self.data_dir / "checkpoints")
        self.run_keeper = RunKeeper(
            self, propose=True, challenge=True, store=self.mirror, mirrors=self.mirrors
        )

    def step(self) -> None:
        """One round: stake, the duties on indexed jobs (check approvals, challenge, finalize),
        discovery of newly assigned jobs (`NodeBase.follow_jobs`), claim credit."""
        self.ensure_stake(Role.Whistleblower, self.stake_amount)  # tops up after a slash
        self._scan_jobs()  # duties first
        if not self.stopping and self.follow_jobs(self.state):  # then discovery
            self._scan_jobs()  # newly assigned jobs start now, not a round later
        if not self.stopping:
            self.run_keeper.tick()  # runs: propose, challenge, finalize round claims
        self.claim_credit()

    def watches(self, event: Any) -> bool:
        """Every assigned job: any approval may be wrong."""
        return True

    def _scan_jobs(self) -> None:
        """Watched jobs only (assigned, not settled): open jobs cost nothing."""
        done = set(self.state.read().done_jobs)
        for job_id in list(self.state.read().index.watch):
            if self.stopping:
                return
            if job_id in done:
                self.unwatch(self.state, job_id)
                continue
            job = self.client.jobs.get_job(job_id)
            status = JobStatus(int(job.status))
            if status in TERMINAL_JOB_STATUSES:
                self._settle_challenges(job_id, status)
                with self.state.transaction() as records:
                    records.done_jobs.append(job_id)
                self.unwatch(self.state, job_id)
                continue
            if status not in (JobStatus.Verifying, JobStatus.Disputed):
                self.unwatch(self.state, job_id)  # back to Open: a new assignment re-adds it
                continue
            if self.replay_refusal(job) is not None:
                pass  # a retired arithmetic, or repro2 on a machine that fails the selftest
            elif status is JobStatus.Verifying:
                self._watch(job_id, job)
            elif status is JobStatus.Disputed:  # plays only if we opened the dispute
                self.adjudication.challenge(self, job, self.state)
            self.finalize_if_due(job_id, job)

    # ----------------------------------------------------------------------------- checks
    def sample_check(
        self, job: Any, sample_index: int, segment: int, start_hash: bytes, claimed_end: bytes
    ) -> CheckResult | None:
        """Replay result of the solver's claim on (job, sample), computed once and persisted.

        Returns:
            The `CheckResult`, or None when the solver is unreachable right now.
        """
        key = f"{int(job.job_id)}:{sample_index}"
        cached = self.state.read().checks.get(key)
        if cached is not None:
            return cached
        try:
            check = self.claim_check(
                job,
                segment,
                start_hash,
                claimed_end,
                unavailable_is_reject=False,
                purpose="whistleblower",
            )
        except CheckpointUnavailable as exc:
            self.log.warning("job %d segment %d: solver unreachable: %s", job.job_id, segment, exc)
            return None
        result = CheckResult(ok=bool(check.ok), reason=check.reason, end=check.replayed_end_hash)
        with self.state.transaction() as records:
            records.checks[key] = result
        return result

    def _watch(self, job_id: int, job: Any) -> None:
        if self.chain_time() > int(job.challenge_deadline) > 0:
            return
        claims = self.client.round.claims_of(self.client.jobs.submission_of(job_id))
        if not claims.posted:
            return
        assignment = self.client.jobs.get_assignment(job_id)
        segments = list(assignment.segments)
        results: dict[int, CheckResult] = {}
        for j, segment in enumerate(segments):
            if self.stopping:
                return
            result = self.sample_check(
                job, j, segment, claims.start_hashes[j], claims.end_hashes[j]
            )
            if result is not None:
                results[j] = result
        for verifier in assignment.verifiers:
            if self.stopping:
                return
            verdicts = self.client.jobs.verdicts_of(job_id, verifier)
            for sample_index, verdict in enumerate(verdicts):
                if Verdict(int(verdict)) is not Verdict.Approve:
                    continue
                result = results.get(sample_index)
                if result is None or result.ok:
                    continue
                self._challenge(job_id, sample_index, verifier, segments[sample_index], result)

    def _challenge(
        self, job_id: int, sample_index: int, verifier: str, segment: int, result: CheckResult
    ) -> None:
        tag = f"{job_id}:{sample_index}:{verifier.lower()}"
        if tag in self.state.read().challenges:
            return
        if self.client.jobs.challenger_of(job_id, sample_index, verifier) is not None:
            with self.state.transaction() as records:
                records.challenges.append(tag)  # someone (maybe we, before a crash) did it
            return
        if not self.full_selftest_ready(self.client.jobs.get_job(job_id)):
            return  # a repro2 job: its replay counts once the full selftest passed
        self.ensure_funds(int(self.job_params().challenge_bond))
        receipt = self.send(
            f"challengeApproval job {job_id} sample {sample_index} (segment {segment}) of "
            f"verifier {verifier}: {result.reason}",
            self.client.jobs.challenge_approval,
            job_id,
            sample_index,
            verifier,
        )
        if receipt is not None:
            self.metrics.challenges.labels(outcome="filed").inc()
            with self.state.transaction() as records:
                records.challenges.append(tag)
                records.filed.append(tag)

    def _settle_challenges(self, job_id: int, status: JobStatus) -> None:
        """Count the outcome of this whistleblower's challenges on a settled job
        (``veritrain_challenges_total{outcome}``): ``won`` when the challenged sample was the
        round's forced error (paid from the pool), or the dispute on its segment found the
        segment invalid; ``lost`` when that dispute upheld it. Without a resolved dispute on
        the segment, the job's status decides (Rejected: won, Finalized: lost); a Cancelled or
        Expired job counts neither."""
        mine = [t for t in self.state.read().filed if t.split(":")[0] == str(job_id)]
        if not mine:
            return
        outcome, forced = self.client.round.outcome(self.client.jobs.submission_of(job_id))
        segments = list(self.client.jobs.get_assignment(job_id).segments)
        upheld: dict[int, bool] = {}  # segment -> segment_valid, of the job's resolved disputes
        for dispute_id in range(1, int(self.client.committee.dispute_count()) + 1):
            dispute = self.client.committee.get_dispute(dispute_id)
            resolved = DisputeStatus(int(dispute.status)) is DisputeStatus.Resolved
            if int(dispute.job_id) == job_id and resolved:
                upheld[int(dispute.segment)] = bool(dispute.segment_valid)
        for tag in mine:
            sample = int(tag.split(":")[1])
            segment = segments[sample] if sample < len(segments) else -1
            won: bool | None
            if RoundOutcome(int(outcome)) is RoundOutcome.Forced and int(forced) == sample:
                won = True
            elif segment in upheld:
                won = not upheld[segment]
            elif status is JobStatus.Rejected:
                won = True
            elif status is JobStatus.Finalized:
                won = False
            else:
                won = None
            if won is not None:
                self.metrics.challenges.labels(outcome="won" if won else "lost").inc()
            self.log.info(
                "job %d: challenge of sample %d %s",
                job_id,
                sample,
                "void" if won is None else "won" if won else "lost",
            )
        with self.state.transaction() as records:
            records.filed = [t for t in records.filed if t not in mine]
