"""`DutiesMixin`: the duties anyone may perform on a job or dispute, and the job index.

`assign_verifiers_if_due`, `finalize_if_due` (which waits for the verification round's
outcome, docs/FORCED_ERRORS.md), `draw_committee_if_ready` and `resolve_if_due`, each sent
through `NodeCore.duty`; `follow_jobs` reads the JobManager events (`JOB_EVENTS`) into the
node's `JobIndex`, so a round costs the jobs waiting, not the open jobs.

Run: not a script; `from noderuntime import NodeBase`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chain.events import MAX_BLOCK_RANGE
from noderuntime.core import NodeCore
from noderuntime.records import RecordStore
from veritrain.enums import DisputePhase, DisputeStatus, JobStatus, RoundOutcome

if TYPE_CHECKING:
    from chain.types import JobView

__all__ = ["JOB_EVENTS", "DutiesMixin"]

SOLVER_ASSIGN_HEAD_START = 2
"""Blocks past the first one the assignment may be mined in (the randomness block + 1) during
which a node other than the job's solver leaves the assignment to the solver, which assigns
with its claims in one transaction (`VerificationRound.assignAndPostClaims`); after them any
node does the duty, so an absent solver delays it by this many blocks only."""

JOB_EVENTS = ("CheckpointsCommitted", "VerifiersAssigned", "JobReclaimed")
"""The JobManager events `NodeBase.follow_jobs` indexes (Open jobs are never read: a node that
cannot act on them pays nothing for them)."""


class DutiesMixin(NodeCore):
    """The job and dispute duties anyone may perform, and the job index they work from."""

    def _job_moved_on(self, job_id: int, expected: JobStatus) -> str | None:
        """`duty` check of a job duty: who moved the job on from `expected`, or None."""
        status = JobStatus(int(self.client.jobs.get_job(job_id).status))
        if status is expected:
            return None
        return f"another account (job {job_id} is now {status.name})"

    def assign_deadline_passed(self, job: JobView) -> bool:
        """Whether a Committed `job` is past its assign deadline (``commit_deadline +
        open_window`` seconds), after which it is expired (`assign_verifiers_if_due`)."""
        return self.chain_time() > int(job.commit_deadline) + int(self.job_params().open_window)

    def assign_verifiers_if_due(self, job_id: int, job: JobView | None = None) -> bool:
        """Call `JobManager.assignVerifiers(job_id)` once the job is Committed and its
        randomness block is mined (anyone may; sent through `duty`), a node other than the job's
        solver only `SOLVER_ASSIGN_HEAD_START` blocks later (the solver assigns with its claims
        in one transaction, `VerificationRound.assignAndPostClaims`). Past the job's assign
        deadline (``commit_deadline + open_window`` seconds: no draw seated it in time, e.g. too
        few eligible verifiers), call `JobManager.expireUnassigned(job_id)` instead, which makes
        every party whole (docs/SECURITY.md P-35).

        Args:
            job_id: the job.
            job: the job view, when the caller already has it (possibly stale).

        Returns:
            True if an assignVerifiers or expireUnassigned transaction of this node succeeded.
        """
        job = job if job is not None else self.client.jobs.get_job(job_id)
        if JobStatus(int(job.status)) is not JobStatus.Committed:
            return False
        if self.assign_deadline_passed(job):
            expired = self.duty(
                f"expireUnassigned job {job_id}",
                lambda: self._job_moved_on(job_id, JobStatus.Committed),
                self.client.jobs.expire_unassigned,
                job_id,
            )
            return expired is not None
        if self.block_number() <= int(job.randomness_block):
            key = (f"assignVerifiers job {job_id}", "randomness")
            if key not in self._warned:
                self._warned.add(key)
                self.log.info(
                    "job %d: its verifiers are drawn once block %d is mined (head %d)",
                    job_id,
                    int(job.randomness_block) + 1,
                    self.block_number(),
                )
            return False
        if (
            str(job.solver).lower() != str(self.client.address).lower()
            and self.block_number() <= int(job.randomness_block) + SOLVER_ASSIGN_HEAD_START
        ):
            return False  # the solver's head start: it assigns with its claims
        receipt = self.duty(
            f"assignVerifiers job {job_id}",
            lambda: self._job_moved_on(job_id, JobStatus.Committed),
            self.client.jobs.assign_verifiers,
            job_id,
        )
        return receipt is not None

    # ------------------------------------------------------------------------ job index
    event_range = MAX_BLOCK_RANGE
    """Blocks per ``eth_getLogs`` (`chain.events.MAX_BLOCK_RANGE`)."""

    def follow_jobs(self, state: RecordStore[Any], *, max_ranges: int = 10) -> int:
        """Discovery: read the JobManager events (`JOB_EVENTS`) of the blocks since the
        cursor persisted in `state` (a `RecordStore` of a `NodeRecords`) and update its
        `JobIndex`. Cost per call: one block-number read plus one ``eth_getLogs`` per
        `event_range` new blocks (at most `max_ranges`), whatever the number of open jobs.

        Returns:
            The number of events read.
        """
        head = self.block_number()
        seen = 0
        for _ in range(max_ranges):
            start = int(state.read().index.cursor)
            if start > head:
                break
            end = min(head, start + self.event_range - 1)
            events = self.client.event_logs(self.client.jobs.contract, JOB_EVENTS, start, end)
            with state.transaction() as records:
                for event in events:
                    self.index_event(records.index, event)
                records.index.cursor = end + 1
            seen += len(events)
        return seen

    def index_event(self, index: Any, event: Any) -> None:
        """Apply one JobManager event to a `JobIndex` (`follow_jobs`); `watches` decides
        which assigned jobs this node keeps an eye on."""
        job_id = int(event.args["jobId"])
        if event.event == "CheckpointsCommitted":
            if job_id not in index.to_assign:
                index.to_assign.append(job_id)
        elif event.event == "VerifiersAssigned":
            if job_id in index.to_assign:
                index.to_assign.remove(job_id)
            if self.watches(event) and job_id not in index.watch:
                index.watch.append(job_id)
        elif event.event == "JobReclaimed" and job_id in index.to_assign:
            index.to_assign.remove(job_id)

    def watches(self, event: Any) -> bool:
        """Whether a `VerifiersAssigned` event concerns this node (override; default no)."""
        return False

    def unwatch(self, state: RecordStore[Any], job_id: int) -> None:
        """Drop a settled job from the index."""
        with state.transaction() as records:
            if job_id in records.index.watch:
                records.index.watch.remove(job_id)

    def assign_duties(self, state: RecordStore[Any]) -> None:
        """The `assignVerifiers` duty for every indexed job waiting for it (cost: the jobs
        waiting, not the open jobs); jobs that moved on leave the index."""
        for job_id in list(state.read().index.to_assign):
            if self.stopping:
                return
            job = self.client.jobs.get_job(job_id)
            if JobStatus(int(job.status)) is JobStatus.Committed:
                self.assign_verifiers_if_due(job_id, job)
                job = self.client.jobs.get_job(job_id)
            if JobStatus(int(job.status)) is not JobStatus.Committed:
                with state.transaction() as records:
                    if job_id in records.index.to_assign:
                        records.index.to_assign.remove(job_id)

    # ------------------------------------------------------------------------ settlement
    def finalize_if_due(self, job_id: int, job: JobView | None = None) -> bool:
        """Call `JobManager.finalize(job_id)` when the job is due (anyone may).

        Due means: Verifying, past the challenge deadline and with the verification round
        settled (`outcome` no longer `Pending`: the solver revealed its secret or its reveal
        window closed), or Disputed with its dispute resolved. A revert (someone else was
        first) is logged and ignored.

        Args:
            job_id: the job.
            job: the job view, when the caller already has it.

        Returns:
            True if a finalize transaction succeeded.
        """
        job = job if job is not None else self.client.jobs.get_job(job_id)
        status = JobStatus(int(job.status))
        if status is JobStatus.Verifying:
            if self.chain_time() <= int(job.challenge_deadline):
                return False
            submission = self.client.jobs.submission_of(job_id)
            outcome, _sample = self.client.round.outcome(submission)
            if RoundOutcome(int(outcome)) is RoundOutcome.Pending:
                return False
        elif status is JobStatus.Disputed:
            dispute_id = int(job.dispute_id)
            if dispute_id == 0:
                return False
            if not self.client.adjudicator.resolved(dispute_id):
                return False
        else:
            return False
        receipt = self.duty(
            f"finalize job {job_id}",
            lambda: self._job_moved_on(job_id, status),
            self.client.jobs.finalize,
            job_id,
        )
        return receipt is not None

    def draw_committee_if_ready(self, dispute_id: int) -> bool:
        """Call `ArbitrationCommittee.drawCommittee` once its randomness block is mined.

        Args:
            dispute_id: the dispute.

        Returns:
            True if the transaction succeeded.
        """
        dispute = self.client.committee.get_dispute(dispute_id)
        if DisputeStatus(int(dispute.status)) is not DisputeStatus.AwaitingCommittee:
            return False
        if self.block_number() <= int(dispute.randomness_block):
            return False
        receipt = self.duty(
            f"drawCommittee dispute {dispute_id}",
            lambda: self._dispute_moved_on(dispute_id, DisputeStatus.AwaitingCommittee),
            self.client.committee.draw_committee,
            dispute_id,
        )
        return receipt is not None

    def _dispute_moved_on(self, dispute_id: int, expected: DisputeStatus) -> str | None:
        """`duty` check of a dispute duty: who moved the dispute on from `expected`, or None."""
        status = DisputeStatus(int(self.client.committee.get_dispute(dispute_id).status))
        if status is expected:
            return None
        return f"another account (dispute {dispute_id} is now {status.name})"

    def resolve_if_due(self, dispute_id: int) -> bool:
        """Call `ArbitrationCommittee.resolve` when the dispute is resolvable (every vote
        revealed, or the reveal deadline passed); anyone may.

        Args:
            dispute_id: the dispute.

        Returns:
            True if the transaction succeeded.
        """
        if (
            DisputePhase(int(self.client.committee.dispute_phase(dispute_id)))
            is not DisputePhase.Resolvable
        ):
            return False
        receipt = self.duty(
            f"resolve dispute {dispute_id}",
            lambda: self._dispute_moved_on(dispute_id, DisputeStatus.Voting),
            self.client.committee.resolve,
            dispute_id,
        )
        return receipt is not None
