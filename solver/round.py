"""`SolverRound`: a solver's part in a job's verification round and settlement.

Once a committed job has its verifiers (PROTOCOL.md section 1, steps 5 to 8): draw the forced
error from the job's secret and the sample and post the claims (`_round`, `_draw_claims`, or
with the assignment itself in one transaction, `_assign_with_claims`; the
checkpoints stay sealed to the sampled starts until the secret is revealed, `_apply_seal`),
reveal the secret after the challenge deadline, then follow the job to its end (`_follow`):
finalize when due, extend the model's lineage with the verified work (`_extend_lineage`) and
defend a dispute of the job's segment (`_defend`: the committee's draw and resolution, or the
bisection game). The job's persisted record is read and changed here (`job_record`, `_put`).

Run: not a script; `solver.node.SolverNode` inherits it.
"""

from __future__ import annotations

import functools
from typing import Any

from noderuntime import TERMINAL_JOB_STATUSES
from noderuntime.records import Phase, SolverClaims, SolverJob
from solver.aggregation import SealAggregator
from solver.deadlines import SolverDeadlines
from solver.server import CheckpointCatalog
from veritrain.commitments import submission_id
from veritrain.enums import JobStatus, Verdict
from veritrain.forced import Claims, build_claims, draw_forced_error
from veritrain.hexutil import to_hex
from veritrain.merkle import checkpoint_tree, claim_indices
from veritrain.sampling import last_fetched

__all__ = ["SolverRound"]


class SolverRound(SolverDeadlines):
    """The verification round and settlement of `solver.node.SolverNode`'s jobs (which sets the
    attributes below).

    Attributes:
        catalog: the checkpoints this solver serves (`solver.server.CheckpointCatalog`), sealed
            to the sampled starts until a job's secret is revealed.
        _forced_rate: the round's forced-error rate (bps), read once from the chain.
        aggregator: the seats' handed-off seals and reveals (`solver.aggregation`), submitted
            in batches while a job is Verifying.
    """

    catalog: CheckpointCatalog
    aggregator: SealAggregator
    _forced_rate: int | None

    def _apply_seal(self, job_id: int, rec: SolverJob) -> None:
        """Seal a job until its secret is revealed: only the sampled starts are served (and the
        final state when a single seat fetches it, docs/SECURITY.md P-39)."""
        if rec.revealed or rec.phase == Phase.DONE:
            self.catalog.unseal(job_id)
            return
        segments = rec.claims.segments if rec.claims is not None else []
        steps = [s * rec.interval for s in segments]
        if last_fetched(segments, self._single_seat()):
            # the seat fetches the final state (P-39): a forced error there tests the fetch
            steps.append((segments[-1] + 1) * rec.interval)
        self.catalog.seal(job_id, steps)

    def _single_seat(self) -> bool:
        """Whether the deployment seats one verifier per job (docs/SECURITY.md P-39)."""
        return int(self.job_params().verifiers_per_job) == 1

    def job_record(self, job_id: int) -> SolverJob | None:
        """The persisted record of a job (a copy), or None."""
        return self.state.read().jobs.get(job_id)

    def _put(self, job_id: int, **changes: Any) -> SolverJob:
        """Change (validated) fields of a held job's record; returns a copy."""
        with self.state.transaction() as records:
            rec = records.jobs[job_id]
            for name, value in changes.items():
                setattr(rec, name, value)
            return rec.model_copy(deep=True)

    def _round(self, job_id: int, job: Any) -> None:
        """The solver's part of the verification round (docs/FORCED_ERRORS.md): post the
        claims once assigned, reveal the secret with the claims' multiproof after the challenge
        deadline, and serve everything once it is revealed."""
        rec = self.job_record(job_id)
        if rec is None or rec.revealed:
            return
        if rec.secret is None:
            self.log.error("job %d: committed without a persisted secret; cannot reveal", job_id)
            return
        submission = rec.submission or submission_id(job_id, self.client.address)
        round_view = self.client.round.round_of(submission)
        if round_view.revealed:
            self._put(job_id, revealed=True)
            self.catalog.unseal(job_id)
            return
        secret = rec.secret
        claims = rec.claims if rec.claims is not None else self._draw_claims(job_id, rec, secret)
        now = self.chain_time()
        if not self.client.round.claims_of(submission).posted:
            if now > int(job.claims_deadline):
                self.log.warning("job %d: claims deadline passed before our claims", job_id)
                return
            forced = claims.forced_sample
            self.send(
                f"postClaims job {job_id} ({len(claims.starts)} samples"
                + (f", forced error on sample {forced})" if forced is not None else ")"),
                self.client.round.post_claims,
                submission,
                list(claims.starts),
                list(claims.ends),
            )
            return
        windows = self.client.round.windows_of(submission)
        if now <= windows.secret_reveal_opens or now > windows.secret_reveal_closes:
            return
        jobs = self.client.jobs
        assigned = jobs.get_assignment(job_id).verifiers
        verdicts = [list(jobs.verdicts_of(job_id, v)) for v in assigned]
        if verdicts and any(
            all(len(seat) <= i or seat[i] is Verdict.None_ for seat in verdicts)
            for i in range(len(claims.segments))
        ):
            # A sample without a revealed verdict (P-27): the secret stays hidden and fresh
            # verifiers are drawn for it.
            return
        entry = self.catalog.get(job_id)
        if entry is None:
            self.log.error("job %d: claims posted but its checkpoints are not served", job_id)
            return
        # one multiproof of every claimed checkpoint: each sample's start and end, one per
        # index, the committed hashes (the forced sample's true end, not its forced claim)
        proof = entry.tree.multiproof(claim_indices([int(s) for s in claims.segments]))
        reveal = (submission, secret, claims.forced_true_end, proof)
        # the reveal and the finalize in one transaction (one fewer on the happy path); should
        # the finalize revert, the reveal goes alone and the finalize duty retries it
        receipt = self.send(
            f"revealSecret and finalize job {job_id}",
            functools.partial(self.client.round.reveal_secret, and_finalize=True),
            *reveal,
        )
        if receipt is None:
            receipt = self.send(
                f"revealSecret job {job_id}", self.client.round.reveal_secret, *reveal
            )
        if receipt is not None:
            self._put(job_id, revealed=True)
            self.catalog.unseal(job_id)

    def _assign_with_claims(self, job_id: int) -> bool:
        """Assign the job's verifiers and post the claims in one transaction
        (``assignAndPostClaims``: one fewer on the happy path, docs/SECURITY.md "Gas cuts") on
        the sample the assignment would draw, replayed off chain
        (`chain.contracts.jobs.JobsFacade.predict_sample`). The claims are persisted from the
        chain's sample once mined (`_draw_claims`); a restart in between finds them posted.

        Returns:
            True if it was mined. False when the draw cannot be replayed now or the call
            reverts (the estimate runs it first, so nothing is spent: another account assigned
            first, the verifier set moved since the prediction); the caller then assigns
            alone and the claims follow (`_round`).
        """
        rec = self.job_record(job_id)
        if rec is None or rec.secret is None or rec.claims is not None:
            return False
        draws = self.client.jobs.predict_sample(job_id)
        if draws is None:
            return False
        segments = list(draws.segments)
        claims = self._claims_on(job_id, rec, rec.secret, segments)
        receipt = self.send(
            f"assignAndPostClaims job {job_id} ({len(segments)} samples)",
            self.client.round.assign_and_post_claims,
            job_id,
            segments,
            list(claims.start_hashes),
            list(claims.end_hashes),
            quiet=True,
        )
        if receipt is None:
            return False
        # mined: the chain's sample is `segments` (the call checked its hash)
        self._persist_claims(job_id, segments, claims)
        return True

    def _draw_claims(self, job_id: int, rec: SolverJob, secret: bytes) -> SolverClaims:
        """Draw the forced error locally (the secret never leaves this process before the
        reveal) and build the claims from the committed state hashes on the chain's sample;
        persisted, and the sampled starts are opened on the server."""
        segments = [int(s) for s in self.client.jobs.get_assignment(job_id).segments]
        return self._persist_claims(
            job_id, segments, self._claims_on(job_id, rec, secret, segments)
        )

    def _claims_on(self, job_id: int, rec: SolverJob, secret: bytes, segments: list[int]) -> Claims:
        """The claims on the sample `segments` (not persisted): the committed state hashes,
        with the forced claim when the secret's draw plants one (docs/FORCED_ERRORS.md)."""
        if self._forced_rate is None:
            self._forced_rate = int(self.client.round.forced_error_rate_bps())
        draw = draw_forced_error(secret, job_id, segments, self._forced_rate)
        return build_claims(segments, list(rec.hashes), draw)

    def _persist_claims(self, job_id: int, segments: list[int], claims: Claims) -> SolverClaims:
        """Persist the claims on `segments` in the job's record and open the sampled starts on
        the server (`_apply_seal`)."""
        if claims.forced_sample is not None:
            self.log.info(
                "job %d: FORCED ERROR planted on sample %d (segment %d)",
                job_id,
                claims.forced_sample,
                segments[claims.forced_sample],
            )
        rec = self._put(
            job_id,
            claims=SolverClaims(
                segments=segments,
                starts=list(claims.start_hashes),
                ends=list(claims.end_hashes),
                forced_sample=claims.forced_sample,
                forced_true_end=claims.forced_true_end,
            ),
        )
        self._apply_seal(job_id, rec)
        if rec.claims is None:  # pragma: no cover - set just above
            raise RuntimeError("claims not persisted")
        return rec.claims

    def _follow(self, job_id: int, job: Any, status: JobStatus) -> None:
        """After the commit: assign verifiers, play the round, help disputes, finalize, record
        the outcome."""
        if status is JobStatus.Committed:
            # Past the assign deadline the duty expires the job instead; before it, the solver
            # assigns with its claims when it can (one transaction fewer).
            if self.assign_deadline_passed(job) or not self._assign_with_claims(job_id):
                self.assign_verifiers_if_due(job_id, job)
        elif status is JobStatus.Verifying:
            self._round(job_id, job)
            self.aggregator.flush(self, job_id)  # the seats' seals and reveals, batched
            self.finalize_if_due(job_id, job)
        elif status is JobStatus.Disputed:
            self.aggregator.drop(job_id)
            self.catalog.unseal(job_id)
            self.catalog.open_dispute(job_id)  # the game's parties need intermediate states
            dispute_id = int(job.dispute_id)
            self.adjudication.defend(self, job, lambda: self._defend(job_id, dispute_id))
            self.finalize_if_due(job_id)
        elif status in TERMINAL_JOB_STATUSES:
            self.aggregator.drop(job_id)
            outcome = (
                "reward restaked (added to the solver stake)"
                if status is JobStatus.Finalized
                else "REJECTED (stake slashed)"
            )
            self.log.info("job %d: %s -> %s", job_id, status.name, outcome)
            self.metrics.jobs_settled.labels(status=status.name).inc()
            if status is JobStatus.Finalized:
                self.metrics.earned(int(job.reward))  # restaked by the finalize
                self._extend_lineage(job_id, job)
            self._put(job_id, phase=Phase.DONE, outcome=status.name)
            self.catalog.unseal(job_id)
            self.catalog.close_dispute(job_id)

    def _extend_lineage(self, job_id: int, job: Any) -> None:
        """If this finalized job holds its model's head slot (it was the first job posted from
        the head while the slot was free, docs/SECURITY.md P-18), put its final state on the
        model's lineage (``ShareRegistry.extendLineage``, with the proof of the last leaf): the
        head advances and the job's shares are minted to this solver then, not at finalize, so
        it is done at once (the slot lapses after the lineage window). Anyone may do it; the
        solver is the one holding the states. A revert (another party extended it first, or the
        window closed) is logged, not raised."""
        model_id = bytes(job.model_id)
        if self.client.shares.slot_of(model_id).job_id != job_id:
            return
        rec = self.job_record(job_id)
        if rec is None or not rec.hashes:
            self.log.warning("job %d: holds the head but its states are not on record", job_id)
            return
        proof = checkpoint_tree(rec.hashes, rec.interval).proof(len(rec.hashes) - 1)
        try:
            self.client.shares.extend_lineage(model_id, rec.hashes[-1], proof)
        except self.revert_types as exc:
            self.log.warning("job %d: lineage not extended: %s", job_id, exc)
            return
        self.log.info(
            "job %d: final state %s is model 0x%s's new head (shares minted)",
            job_id,
            to_hex(rec.hashes[-1]),
            model_id.hex()[:10],
        )

    def _defend(self, job_id: int, dispute_id: int) -> None:
        """The defender's side of the dissection game (docs/DISPUTES.md): post both leaves
        with their proofs, then answer each bisect turn with our own hashes at the interval's
        interior dissection points (replayed on demand from the segment's start checkpoint,
        the same trajectory `/states/{step}` serves), claim the challenger's timeout, help the
        step dispute along. Moves are recorded under `games` in the state file; the game
        itself is read from chain every round, so a restarted solver simply carries on."""
        game = self.game_of(dispute_id)
        if game.defender.lower() != self.client.address.lower():
            return
        entry = self.catalog.get(job_id)
        if entry is None:
            self.log.error("job %d: disputed but its checkpoints are not served", job_id)
            return
        s = game.segment

        def endpoints() -> tuple[bytes, bytes, list[bytes], list[bytes]]:
            return (
                entry.hashes[s],
                entry.hashes[s + 1],
                entry.tree.proof(s),
                entry.tree.proof(s + 1),
            )

        game = self.play_game(
            dispute_id,
            lambda step: self.catalog.state_hash(job_id, step),
            endpoints=endpoints,
            on_move=self.game_recorder(self.state, game),
        )
        self.help_step_dispute(game)
