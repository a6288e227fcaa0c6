"""The verifier node: replays sampled segments, seals verdicts, sits on arbitration committees.

Per round (`VerifierNode.step()`):

1. stake as `Role.Verifier` if not active;
2. its duties on the jobs of its index (`NodeBase.follow_jobs`: JobManager events read from a
   block cursor persisted in the state file, so a poll costs the same however many open jobs
   exist): help `assignVerifiers` along for Committed jobs (anyone may); for every
   Verifying job this account is assigned to and has not voted on yet, check each sampled
   segment of its own draw (`sampleMaskOf`, docs/SECURITY.md P-27: each seat draws its own
   segments; it seals the zero end on the other seats' samples, which the contract ignores)
   by replay (`veritrain.replay.check_segment`: Merkle proofs of both ends against the
   on-chain root, state hash of the start checkpoint, k replayed steps, end hash compared) and
   seal the verdicts (docs/FORCED_ERRORS.md): once the solver has posted its claims, each
   sampled segment is checked against them (`NodeBase.claim_check`: the start checkpoint must
   hash to the claimed start hash, k replayed steps must end at the claimed end hash); with one
   seat per job the last sample is fetched, not replayed, unless the seat also holds the
   segment before it (`VerificationRound.fetchOnlyMaskOf`, P-39: the served final state must
   hash to the claim, `NodeBase.final_check`, and is kept; else the seat replays the last
   segment after all, `judge_final`). The
   verdict on a sample is an end state hash: the claim to approve, the replayed end to reject
   (at a forced error that is the solver's true end, which wins the jackpot), or
   `veritrain.forced.UNREPLAYED_END` when no replay ran. The ends and a random salt are
   persisted, `commitVerdicts` seals them, and `revealVerdicts` opens them when the reveal
   window opens (every verifier sealed, or the verdict deadline passed; each reject then locks
   a bond from the seat's free verifier stake, topped up from the wallet when short). By
   default (``hand_off``) the seal, signed (EIP-712), and then the reveal are handed to the
   job's solver, which submits every seat's in one transaction
   (`solver.aggregation`); the verifier sends its own when the chain does not show it
   `hand_off_wait` seconds later (`verifier.handoff.fallback_at`), and hands a reveal to no one
   before the reveal window is open (a seat still sealing could copy its ends) unless it holds
   every seat's signed seal (`verifier.sealset`, docs/SECURITY.md P-40: the solver then seals
   and reveals them all in one ``revealVerdictsSigned``; a seat whose seal on chain differs
   from the one it was shown is proven to have signed two, and slashed). An
   unreachable solver (after retries, in the last third of the verdict
   window) or a start checkpoint that does not match its claim means an unreplayed reject
   (reason logged). `finalize` jobs it verified when due. Before it seals (or commits a
   committee vote) on a repro2 job, the node's full machine selftest must have passed
   (`SpecsMixin.full_selftest_ready`; it runs in the background after the quick one);
3. scan the disputes: `drawCommittee` when the randomness is ready; when seated, replay the
   disputed segment, persist (vote, salt) *before* `commitVote` so a restart can reveal, then
   `revealVote` in the reveal phase, and `resolve` when due;
4. discovery: the new JobManager events since the cursor (after the duties, which have
   deadlines);
5. `claimCredit`.

Every check of on-chain state comes before a send, and results are persisted
(`<data_dir>/verifier_state.json`), so a restarted verifier never seals twice and reveals
exactly what it sealed.

Bisection deployments (docs/DISPUTES.md): when the game names this verifier as challenger (it
rejected first), it responds to each bisect with its own replayed hash at mid
(`NodeBase.play_challenger`, hashes cached under the data dir) and claims the defender's
timeout; seated on a one-step dispute (`stepClaimOf(id).isStep`), it fetches the state at t
from the solver's `/states/{t}` (checked against the agreed hash; else replays the segment
itself), replays ONE step and votes, through the same commit-reveal path, whether the
defender's claimed end hash is right.

Override points (used by the testing-only adversaries of `adversary.verifier`, never by a flag
here): `judge_claim` (the verdict on one claimed segment), `judge_dispute` (a committee vote),
`respond_rule` (a challenger's answer to a bisection) and `open_seal` (what a seat does with
its handed seal before it is on chain: open it to the solver).

Run: `veritrain verifier run --rpc-url ... --deployment ... --key-env VERIFIER_KEY`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chain.errors import ContractRevert
from noderuntime import TERMINAL_JOB_STATUSES, UNUSABLE_DATA, NodeBase
from noderuntime.adjudication import Adjudication
from noderuntime.mirror import StateMirror
from noderuntime.ports import ChainPort
from noderuntime.records import CheckResult, RecordStore, VerifierJob, VerifierRecords, Vote
from verifier.bonds import stake_reveal_bonds
from verifier.handoff import HANDOFF_WAIT, fallback_at, hand_off_cutoff, post_hand_off
from verifier.sealset import open_to_solver, prove_equivocations
from veritrain.bisection import Chooser
from veritrain.commitments import new_salt, verdict_commitment, vote_commitment
from veritrain.enums import DisputePhase, DisputeStatus, JobStatus, Role, Verdict
from veritrain.errors import CheckpointUnavailable
from veritrain.forced import UNREPLAYED_END, bonded_rejects, verdict_approvals
from veritrain.hexutil import to_hex
from veritrain.wire import RevealHandOff, SealHandOff

logger = logging.getLogger(__name__)

__all__ = ["VerifierNode"]

ZERO32 = b"\x00" * 32

UNAVAILABLE_ATTEMPTS = 3
"""Rounds a solver must have been unreachable before its segments are rejected for
unavailability (and only in the last third of the verdict window, so a solver restart
does not cost it the job)."""


def _sealed_end(result: CheckResult, claimed_end: bytes) -> bytes:
    """The end hash a verifier seals for one sample (docs/FORCED_ERRORS.md).

    Args:
        result: the check of the sample's claim.
        claimed_end: the solver's claimed end hash (32 bytes).

    Returns:
        ``claimed_end`` when the check passed (approve); the replayed end when a replay ran and
        ended elsewhere (reject: at a forced error it is the solver's true end, which only a
        replay yields); else `UNREPLAYED_END` (an abstention, docs/SECURITY.md P-20: the start
        checkpoint was unavailable or did not match; the sample is disputed, and this verifier
        is neither slashed nor paid for it).
    """
    if result.ok:
        return bytes(claimed_end)
    if result.end is not None and result.end != bytes(claimed_end):
        return bytes(result.end)
    return UNREPLAYED_END


MIRROR_TRIES = 20
"""Rounds a verifier tries to keep a finalized contribution's final state before it gives up."""


def _holds(mask: int, sample_index: int) -> bool:
    """Whether sample ``sample_index`` is in a seat's own draw (bit i of its ``sampleMaskOf``)."""
    return (mask >> sample_index) & 1 == 1


class VerifierNode(NodeBase):
    """A verifier (and committee arbiter).

    Args:
        client: the chain client (injected; holds the verifier's key).
        data_dir: directory for the state file.
        poll_interval: seconds between rounds.
        adjudication: the adjudication strategy (None: from ``client.adjudicator.name``).
        stake_amount: wei to stake when not active (None: 4x verifierStake, at least min).
        threads: CPU threads for repro replays (`NodeBase`; None: torch's count).
        device: where repro jobs run, `"auto"`, `"cpu"` or `"cuda"` (`NodeBase`).
        hand_off: hand the seal and the reveal to the job's solver for its batch
            (`verifier.handoff`), sending its own transaction only when they are not on chain
            in time (the reveal `hand_off_wait` seconds later; the seal `seal_wait` seconds
            later, by default once a third of the verdict window is left: the solver's
            one-shot batch waits for every seat's seal, and a seal on chain early opens no
            window sooner unless every seat's is); False sends them itself at once.
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
        hand_off: bool = True,
    ) -> None:
        super().__init__(
            client,
            name="verifier",
            revert_types=(ContractRevert,),
            poll_interval=poll_interval,
            adjudication=adjudication,
            threads=threads,
            device=device,
        )
        self.data_dir = Path(data_dir)
        self.stake_amount = stake_amount
        self.state = RecordStore(self.data_dir / "verifier_state.json", VerifierRecords)
        # the states it proved (segment starts, run contributions' finals), served by hash with
        # --serve-port (noderuntime.mirror); the same directory its replays keep starts in
        self.mirror = StateMirror(self.data_dir / "checkpoints")
        self._unavailable: dict[tuple[int, int], int] = {}  # failed fetch rounds per job/dispute
        self._stake_refused = False  # the selftest failed and that was logged
        self.hand_off = hand_off
        self.hand_off_wait = float(HANDOFF_WAIT)  # seconds before it sends its own reveal
        self.seal_wait: float | None = None  # ... its own seal (None: until the cutoff)
        self._fell_back: set[tuple[int, str]] = set()  # (job, "seal"/"reveal") logged

    # ------------------------------------------------------------------------------ step
    def step(self) -> None:
        """One round: stake, verdicts, finalizations, committee duties, credit."""
        report = self.machine_selftest()
        if report is None or report.ok:
            self.ensure_stake(Role.Verifier, self.stake_amount)  # tops up after a slash
        elif not self._stake_refused:
            # Verifiers are drawn for any job: staked, this one would miss (or get wrong) the
            # verdicts of every repro2 job it is drawn for, and be slashed for it.
            self._stake_refused = True
            self.log.warning(
                "not staking as verifier: this machine fails the %s selftest", report.arith
            )
        self._scan_jobs()  # duties first: deadlines this verifier must meet
        if not self.stopping:
            self._scan_disputes()
        if not self.stopping and self.follow_jobs(self.state):  # then discovery
            self._scan_jobs()  # jobs just assigned to us start now, not a round later
        self.claim_credit()

    def _mark_job_done(self, job_id: int) -> None:
        with self.state.transaction() as records:
            if job_id not in records.done_jobs:
                records.done_jobs.append(job_id)

    def _mark_dispute_done(self, dispute_id: int) -> None:
        with self.state.transaction() as records:
            if dispute_id not in records.done_disputes:
                records.done_disputes.append(dispute_id)

    def watches(self, event: Any) -> bool:
        """A `VerifiersAssigned` event naming this verifier."""
        me = self.client.address.lower()
        return me in (str(v).lower() for v in event.args["verifiers"])

    def _scan_jobs(self) -> None:
        """The duties on indexed jobs: `assignVerifiers` where due, then every job this
        verifier is assigned to (verdicts, its challenge, finalization). Jobs it cannot act
        on (open ones, other verifiers' jobs) cost nothing."""
        self.assign_duties(self.state)
        done = set(self.state.read().done_jobs)
        me = self.client.address.lower()
        for job_id in list(self.state.read().index.watch):
            if self.stopping:
                return
            if job_id in done:
                self.unwatch(self.state, job_id)
                continue
            job = self.client.jobs.get_job(job_id)
            status = JobStatus(int(job.status))
            if status in TERMINAL_JOB_STATUSES:
                if status is JobStatus.Finalized and not self._kept_final(job):
                    continue  # its final is fetched again next round
                if status is JobStatus.Finalized:
                    self._count_fee(job_id)
                self._mark_job_done(job_id)
                self.unwatch(self.state, job_id)
                continue
            if status not in (JobStatus.Verifying, JobStatus.Disputed):
                self.unwatch(self.state, job_id)  # back to Open: a new assignment re-adds it
                continue
            assignment = self.client.jobs.get_assignment(job_id)
            if me not in (v.lower() for v in assignment.verifiers):
                self.unwatch(self.state, job_id)
                continue
            if self.replay_refusal(job) is not None:
                pass  # a retired arithmetic, or repro2 on a machine that fails the selftest
            elif status is JobStatus.Verifying:
                self._verify_job(job_id, job, list(assignment.segments))
            else:  # Disputed: only if we challenged
                self.adjudication.challenge(self, job, self.state, choose=self.respond_rule())
            self.finalize_if_due(job_id, job)

    def _count_fee(self, job_id: int) -> None:
        """Add this seat's fee to the earnings metric when its finalized job paid it: the
        finalize restakes the fee (adds it to the verifier stake, not the wallet) of every seat
        whose verdicts were recorded and none an abstention (an abstainer's fee goes back to
        the submitter, P-20). A seat slashed on the job (it approved a forced claim) is counted
        too: an honest node never is, and the metric is a node's view, not the chain's books."""
        verdicts = self.client.jobs.verdicts_of(job_id, self.client.address)
        if verdicts and all(v in (Verdict.Approve, Verdict.Reject) for v in verdicts):
            self.metrics.earned(int(self.job_params().verifier_fee))

    def _kept_final(self, job: Any) -> bool:
        """Keep a finalized job's final state in the mirror (`keep_final`: the one this seat
        replayed, with the solver's on-chain proof, P-36; else a run contribution's, fetched),
        so the job's work outlives its solver (docs/RUNS.md); True once kept, or after
        `MIRROR_TRIES` rounds in which no holder served it (logged), False to retry."""
        key = (int(job.job_id), -2)
        try:
            return self.keep_final(job)
        except UNUSABLE_DATA as exc:
            self._unavailable[key] = self._unavailable.get(key, 0) + 1
            if self._unavailable[key] < MIRROR_TRIES:
                return False
            self.log.warning("job %d: its final state is not kept: %s", int(job.job_id), exc)
            return True

    # --------------------------------------------------------------------------- verdicts
    def _verify_job(self, job_id: int, job: Any, segments: list[int]) -> None:
        """Check the solver's claims, seal the verdicts, reveal them (docs/FORCED_ERRORS.md);
        the round is keyed by the job's current submission, recorded with the verdicts."""
        submission = self._job_rec(job_id).submission
        if submission is None:
            submission = self.client.jobs.submission_of(job_id)
            self._record_job(job_id, submission=submission)
        commitment, revealed = self.client.round.verdict_commitment_of(
            submission, self.client.address
        )
        if revealed:  # by its own transaction or in the solver's batch: the chain says
            if self._job_rec(job_id).submitted is not True:
                self._count_verdicts(job_id, submission, len(segments))
            prove_equivocations(self, job_id, submission)  # a seat that signed two seals (P-40)
            return
        if commitment == ZERO32:
            self._seal(job_id, submission, job, segments)
        else:
            self._reveal(job_id, submission, len(segments), job)

    def _seal(self, job_id: int, submission: bytes, job: Any, segments: list[int]) -> None:
        if self.chain_time() > int(job.verdict_deadline):
            if not self._job_rec(job_id).missed:
                self.log.warning("job %d: verdict deadline passed before we could seal", job_id)
                self._record_job(job_id, submitted=False, missed=True)
            return
        rec = self._job_rec(job_id)
        claims = self.client.round.claims_of(submission)
        # Only this seat's own draw is replayed; its ends elsewhere are ignored (P-27).
        own = self.client.jobs.sample_mask_of(job_id, self.client.address)
        if rec.ends is None or rec.salt is None:
            if not claims.posted:
                return  # the solver posts its claims first
            # one seat per job: the last sample may be the seat's to fetch, not replay (P-39)
            fetch_only = 0
            if int(self.job_params().verifiers_per_job) == 1:
                fetch_only = self.client.round.fetch_only_mask_of(submission, self.client.address)
            results = dict(rec.results)
            for j, segment in enumerate(segments):
                if j in results or not _holds(own, j):
                    continue  # checked already, or another seat's sample (P-27)
                if _holds(fetch_only, j):
                    result = self.judge_final(
                        job_id, job, segment, claims.start_hashes[j], claims.end_hashes[j]
                    )
                else:
                    result = self.judge_claim(
                        job_id, job, segment, claims.start_hashes[j], claims.end_hashes[j]
                    )
                if result is None:
                    return  # solver unreachable for now: retry next round
                results[j] = result
                self._record_job(job_id, results=results)
                if self.stopping:
                    return
            ends = [
                _sealed_end(results[j], claims.end_hashes[j]) if _holds(own, j) else UNREPLAYED_END
                for j in range(len(segments))
            ]
            salt = new_salt()
            # persisted BEFORE the commit, so a restarted verifier reveals the same verdicts
            self._record_job(job_id, ends=ends, salt=salt)
        else:
            ends, salt = list(rec.ends), rec.salt
        if not self.full_selftest_ready(job):
            return  # a repro2 job: the full selftest still runs (retried next round) or failed
        approvals = verdict_approvals(ends, claims.end_hashes)
        rejects = [
            s
            for j, (s, ok) in enumerate(zip(segments, approvals, strict=True))
            if not ok and _holds(own, j)
        ]
        unreplayed = sum(1 for j, e in enumerate(ends) if e == UNREPLAYED_END and _holds(own, j))
        digest = verdict_commitment(job_id, self.client.address, ends, salt)
        sealed = f"REJECT segments {rejects}, {unreplayed} unreplayed" if rejects else "approve all"
        deadline, window = int(job.verdict_deadline), int(self.job_params().verdict_window)

        def hand() -> str | None:
            seal = self.client.round.sign_seal(submission, digest)
            body = SealHandOff(
                verifier=seal.verifier,
                commitment=to_hex(seal.commitment),
                signature=to_hex(seal.signature),
            )
            return post_hand_off(self.http_client, self.checkpoint_url_of(job), "seals", body)

        if self._handed_off(job_id, "seal", deadline, window, hand, sealed):
            # every seat's signed seal seen: the opening goes to the one-shot batch (P-40)
            self.open_seal(job_id, submission, job, ends, salt, digest)
            return
        self.send(
            f"commitVerdicts job {job_id} (sealed: {sealed})",
            self.client.round.commit_verdicts,
            submission,
            digest,
        )

    def _reveal(self, job_id: int, submission: bytes, samples: int, job: Any) -> None:
        rec = self._job_rec(job_id)
        if rec.ends is None or rec.salt is None:
            if not rec.lost:
                self.log.error("job %d: sealed but the verdicts are lost; cannot reveal", job_id)
                self._record_job(job_id, lost=True)
            return
        now = self.chain_time()
        windows = self.client.round.windows_of(submission)
        all_sealed = int(self.client.round.round_of(submission).committed) >= len(
            self.client.jobs.get_assignment(job_id).verifiers
        )
        if now > windows.verdict_reveal_closes:
            return
        if not all_sealed and now < windows.verdict_reveal_opens:
            return
        ends = list(rec.ends)
        # a bond per non-approval of its own samples, locked from its free verifier stake at the
        # reveal; its ends elsewhere are ignored (P-27)
        mine, rejects = self._own_tally(job_id, submission, ends, samples)
        unstaked = stake_reveal_bonds(self, job_id, rejects)
        if unstaked is not None:  # the reveal would revert; retried next round
            self.log.info("job %d: reveal kept back: %s", job_id, unstaked)
            return
        what = f"{mine - rejects} approve, {rejects} reject of its {mine} samples"
        salt = rec.salt
        # The ends are handed to anyone only once no seat can seal any more (every seat
        # sealed, or past the verdict deadline: the contract's own rule), else a seat that has
        # not sealed could copy them.
        sealing_over = all_sealed or now > int(job.verdict_deadline)

        def hand() -> str | None:
            body = RevealHandOff(
                verifier=self.client.address, ends=[to_hex(e) for e in ends], salt=to_hex(salt)
            )
            return post_hand_off(self.http_client, self.checkpoint_url_of(job), "reveals", body)

        closes, window = int(windows.verdict_reveal_closes), int(self.job_params().reveal_window)
        if sealing_over and self._handed_off(job_id, "reveal", closes, window, hand, what):
            return
        receipt = self.send(
            f"revealVerdicts job {job_id} ({what})",
            self.client.round.reveal_verdicts,
            submission,
            ends,
            salt,
            False,  # the bonds are staked above
            quiet=True,
        )
        if receipt is not None:
            self._count_verdicts(job_id, submission, samples)

    def _count_verdicts(self, job_id: int, submission: bytes, samples: int) -> None:
        """Record a reveal the chain shows (sent by this seat or in the solver's batch) and
        count its verdicts once: approves and rejects of the seat's own samples."""
        rec = self._job_rec(job_id)
        self._record_job(job_id, submitted=True)
        if rec.ends is None:
            return
        mine, rejects = self._own_tally(job_id, submission, list(rec.ends), samples)
        self.metrics.verdicts.labels(verdict="approve").inc(mine - rejects)
        self.metrics.verdicts.labels(verdict="reject").inc(rejects)

    def _own_tally(
        self, job_id: int, submission: bytes, ends: list[bytes], samples: int
    ) -> tuple[int, int]:
        """``(mine, rejects)``: the samples of this seat's own draw, and how many of them its
        sealed ``ends`` reject (an end other than the posted claim); ends outside its draw are
        ignored (P-27)."""
        claimed = self.client.round.claims_of(submission).end_hashes
        own = self.client.jobs.sample_mask_of(job_id, self.client.address)
        rejects = bonded_rejects(ends, claimed, own)
        return sum(1 for j in range(samples) if _holds(own, j)), rejects

    def _handed_off(
        self,
        job_id: int,
        kind: str,
        closes: int,
        window: int,
        hand: Callable[[], str | None],
        what: str,
    ) -> bool:
        """Whether the seal or reveal (``kind``) stands handed to the solver, so this round
        sends nothing; False when this seat must send its own transaction now: hand-offs
        disabled, too late to hand off, the solver refused it, or the chain does not show it
        done by `verifier.handoff.fallback_at` (the caller checked the chain just before).

        Args:
            job_id: the job.
            kind: ``"seal"`` or ``"reveal"``.
            closes: the window's last second (chain time).
            window: the window's length (seconds): the fallback keeps a third of it.
            hand: signs and POSTs the hand-off; returns None when taken, else why not.
            what: the verdicts, for the log.
        """
        if not self.hand_off:
            return False
        handed = getattr(self._job_rec(job_id), f"{kind}_handed_at")
        now = self.chain_time()
        if handed is not None:
            wait = self.hand_off_wait if kind == "reveal" else self.seal_wait
            if now < fallback_at(handed, window if wait is None else wait, closes, window):
                return True
            if (job_id, kind) not in self._fell_back:
                self._fell_back.add((job_id, kind))
                self.log.warning(
                    "job %d: the %s handed to the solver at t=%d is not on chain at t=%d: "
                    "sending it ourselves",
                    job_id,
                    kind,
                    handed,
                    now,
                )
            return False
        if now >= hand_off_cutoff(closes, window):
            return False  # too late for a hand-off: a third of the window is kept to fall back
        refused = hand()
        if refused is not None:
            if (job_id, kind) not in self._fell_back:
                self._fell_back.add((job_id, kind))
                self.log.info(
                    "job %d: %s hand-off not taken (%s): sending it ourselves",
                    job_id,
                    kind,
                    refused,
                )
            return False
        self._record_job(job_id, **{f"{kind}_handed_at": now})
        self.log.info("job %d: %s handed to the solver (%s)", job_id, kind, what)
        return True

    def open_seal(
        self,
        job_id: int,
        submission: bytes,
        job: Any,
        ends: list[bytes],
        salt: bytes,
        commitment: bytes,
    ) -> bool:
        """What this seat does each round while its handed seal is not on chain: open it to the
        solver for the one-shot ``revealVerdictsSigned`` once the solver shows every seat's
        signed seal (`verifier.sealset.open_to_solver`, docs/SECURITY.md P-40). Override point
        (the `adversary.verifier.EquivocatingVerifierNode` signs a second seal here instead).

        Args:
            job_id: the job.
            submission: its submission id (32 bytes).
            job: the job view.
            ends: this seat's sealed ends, one per sample (32 bytes each).
            salt: its sealed salt (32 bytes).
            commitment: the commitment it signed and handed over (32 bytes).

        Returns:
            True once the opening stands handed over, else False (tried again next round).
        """
        return open_to_solver(self, job_id, submission, job, ends, salt, commitment)

    def respond_rule(self) -> Chooser | None:
        """How this node answers a dissection as challenger, ``(mine, theirs) -> index`` over
        the hashes at points ``1..parts``: None for the honest rule
        (`veritrain.bisection.choose_index`). Override point."""
        return None

    def judge_claim(
        self, job_id: int, job: Any, segment: int, start_hash: bytes, claimed_end: bytes
    ) -> CheckResult | None:
        """The verdict on one claimed segment, by replay from its claimed start hash.

        Override point (the verdict rule). Returns the `CheckResult`, or None to retry
        next round (the solver is unreachable and it is too early to reject).

        Args:
            job_id: the job.
            job: the job view.
            segment: the sampled segment.
            start_hash: the claimed start state hash.
            claimed_end: the claimed end state hash.
        """
        key = (job_id, -1)  # per job: an unreachable solver is unreachable for every segment
        window = int(self.job_params().verdict_window)
        give_up_at = int(job.verdict_deadline) - window // 3
        try:
            check = self.claim_check(
                job,
                segment,
                start_hash,
                claimed_end,
                unavailable_is_reject=self._give_up(key, give_up_at),
            )
        except CheckpointUnavailable as exc:
            self._unavailable[key] = self._unavailable.get(key, 0) + 1
            self.log.warning(
                "job %d segment %d: solver unreachable (attempt %d; rejecting from t=%d): %s",
                job_id,
                segment,
                self._unavailable[key],
                give_up_at,
                exc,
            )
            return None
        return CheckResult(ok=bool(check.ok), reason=check.reason, end=check.replayed_end_hash)

    def judge_final(
        self, job_id: int, job: Any, segment: int, start_hash: bytes, claimed_end: bytes
    ) -> CheckResult | None:
        """The verdict on a last sample this seat fetches instead of replaying (docs/SECURITY.md
        P-39): the served final state must hash to `claimed_end` (`NodeBase.final_check`, which
        keeps it), and then the claim is approved without a replay. When it is not served or
        does not match, the seat replays the last segment (`judge_claim`): a forced claim there
        is then rejected with the true end, and wrong bytes served beside a true claim are
        approved, so a solver cannot turn the seat into a losing rejecter (E-3). Override
        point. Returns the `CheckResult`, or None to retry next round.

        Args:
            job_id: the job.
            job: the job view.
            segment: the last segment (M - 1).
            start_hash: its claimed start state hash.
            claimed_end: its claimed end state hash.
        """
        # unavailable_is_reject: an unreachable solver is a failed fetch, and the replay below
        # then applies its own retry rule
        if self.final_check(job, claimed_end, unavailable_is_reject=True).ok:
            return CheckResult(ok=True, reason="", end=None)
        return self.judge_claim(job_id, job, segment, start_hash, claimed_end)

    def _give_up(self, key: tuple[int, int], give_up_at: int) -> bool:
        """Whether an unreachable solver now counts as a reject: it failed
        `UNAVAILABLE_ATTEMPTS` rounds and the last third of the voting window has begun."""
        return (
            self._unavailable.get(key, 0) + 1 >= UNAVAILABLE_ATTEMPTS
            and self.chain_time() >= give_up_at
        )

    def _job_rec(self, job_id: int) -> VerifierJob:
        """This verifier's record of a job (a copy; empty before any progress)."""
        return self.state.read().jobs.get(job_id) or VerifierJob()

    def _record_job(self, job_id: int, **changes: Any) -> None:
        with self.state.transaction() as records:
            rec = records.jobs.setdefault(job_id, VerifierJob())
            for name, value in changes.items():
                setattr(rec, name, value)

    # --------------------------------------------------------------------------- disputes
    def _scan_disputes(self) -> None:
        done = set(self.state.read().done_disputes)
        me = self.client.address.lower()
        for dispute_id in range(1, int(self.client.committee.dispute_count()) + 1):
            if dispute_id in done or self.stopping:
                continue
            dispute = self.client.committee.get_dispute(dispute_id)
            status = DisputeStatus(int(dispute.status))
            if status is DisputeStatus.Resolved:
                outcome = "segment_valid" if dispute.segment_valid else "segment_invalid"
                self.metrics.disputes.labels(outcome=outcome).inc()
                self._mark_dispute_done(dispute_id)
                continue
            if status is DisputeStatus.AwaitingCommittee:
                self.draw_committee_if_ready(dispute_id)
                continue
            if me in (m.lower() for m in self.client.committee.committee_of(dispute_id)):
                self._vote(dispute_id, dispute)
            self.resolve_if_due(dispute_id)

    def _vote_rec(self, dispute_id: int) -> Vote | None:
        return self.state.read().votes.get(dispute_id)

    def _vote(self, dispute_id: int, dispute: Any) -> None:
        phase = DisputePhase(int(self.client.committee.dispute_phase(dispute_id)))
        commitment, revealed = self.ballot_of(dispute_id)
        rec = self._vote_rec(dispute_id)
        if phase is DisputePhase.Commit and commitment == b"\x00" * 32:
            if rec is None:
                valid = self.judge_dispute(dispute)
                if valid is None:
                    return
                rec = Vote(valid=valid, salt=new_salt())
                # persisted BEFORE the commit, so a restarted node can still reveal
                with self.state.transaction() as records:
                    records.votes[dispute_id] = rec
            job_id = int(dispute.job_id)
            if job_id and not self.full_selftest_ready(self.client.jobs.get_job(job_id)):
                return  # a repro2 job: the full selftest still runs (retried) or failed
            digest = vote_commitment(dispute_id, self.client.address, rec.valid, rec.salt)
            verdict = "valid" if rec.valid else "INVALID"
            receipt = self.send(
                f"commitVote dispute {dispute_id} ({verdict})",
                self.client.committee.commit_vote,
                dispute_id,
                digest,
            )
            if receipt is not None:
                self.metrics.committee_votes.labels(vote=verdict.lower()).inc()
        elif phase is DisputePhase.Reveal and commitment != b"\x00" * 32 and not revealed:
            if rec is None:
                self.log.error(
                    "dispute %d: committed but the salt is lost; cannot reveal", dispute_id
                )
                return
            self.send(
                f"revealVote dispute {dispute_id}",
                self.client.committee.reveal_vote,
                dispute_id,
                rec.valid,
                rec.salt,
            )

    def _judge_step(self, job: Any, dispute: Any, claim: Any) -> bool | None:
        """Step dispute: is the defender's end hash the state after the claimed steps from step t
        (one, or the interval a challenger escalated)? (None: retry)

        The step's start state comes from the defender (the solver's checkpoint server). When
        it stays unreachable or unusable (`UNUSABLE_DATA`: bytes that do not hash to the agreed
        state, N-24) for `UNAVAILABLE_ATTEMPTS` rounds and the last third of the vote
        window has begun, the member votes the claim wrong: whoever withholds the data its
        claim needs loses (docs/SECURITY.md P-6), instead of a silent committee keeping it.
        """
        key = (-int(dispute.dispute_id), int(claim.step))
        try:
            valid = self.judge_step(
                job,
                int(claim.step),
                bytes(claim.start_hash),
                bytes(claim.claimed_end_hash),
                int(claim.steps),
            )
        except UNUSABLE_DATA as exc:
            # Unreachable, or bytes that do not hash to the agreed state (N-24): withheld.
            if self._give_up(key, int(dispute.commit_deadline) - 10):
                self.log.warning(
                    "step dispute %d: the defender's data is still unusable (%s): voting "
                    "its claim wrong",
                    int(dispute.dispute_id),
                    exc,
                )
                return False
            self._unavailable[key] = self._unavailable.get(key, 0) + 1
            self.log.warning("step dispute %d: data unusable: %s", dispute.dispute_id, exc)
            return None
        self.log.info(
            "step dispute %d (job %d steps %d..%d): claimed end hash is %s",
            int(dispute.dispute_id),
            int(job.job_id),
            int(claim.step),
            int(claim.step) + int(claim.steps),
            "right" if valid else "WRONG",
        )
        return valid

    def judge_round(self, dispute: Any) -> bool | None:
        """Vote on a run's round claim (docs/RUNS.md): True when the claim's counted seats and
        outer state are what this node computes from the chain (`judge_round_claim`), None to
        retry while the run's data cannot be fetched. When the earlier rounds' final states
        stay unavailable into the last third of the vote window, the member votes the claim
        wrong rather than not at all (a non-voter is slashed)."""
        from noderuntime.runs import RoundNotReady, RunMismatch, judge_round_claim

        dispute_id = int(dispute.dispute_id)
        key = (-dispute_id, -1)
        try:
            valid = judge_round_claim(
                self.client,
                dispute_id,
                store=self.mirror,
                http=self.http_client,
                mirrors=self.mirrors,
            )
        except RunMismatch as exc:
            self.log.error("round claim %d: cannot follow this run: %s", dispute_id, exc)
            return False
        except (RoundNotReady, *UNUSABLE_DATA) as exc:  # type: ignore[misc]
            if self._give_up(key, int(dispute.commit_deadline) - 10):
                self.log.warning(
                    "round claim %d: still no data (%s): voting it wrong", dispute_id, exc
                )
                return False
            self._unavailable[key] = self._unavailable.get(key, 0) + 1
            self.log.warning("round claim %d: data unusable: %s", dispute_id, exc)
            return None
        self.log.info("round claim %d is %s", dispute_id, "right" if valid else "WRONG")
        return valid

    def judge_dispute(self, dispute: Any) -> bool | None:
        """This member's vote on a committee dispute: True if the disputed segment (or the
        game's single step, or a run's round claim) matches the commitment (None: retry).
        Override point."""
        if int(dispute.job_id) == 0 and self.client.committee.is_claim_dispute(
            int(dispute.dispute_id)
        ):
            return self.judge_round(dispute)
        job = self.client.jobs.get_job(int(dispute.job_id))
        if self.replay_refusal(job) is not None:
            return None  # no vote: this machine cannot replay the job
        claim = self.adjudication.step_claim(self, int(dispute.dispute_id))
        if claim is not None:
            return self._judge_step(job, dispute, claim)
        key = (-int(dispute.dispute_id), int(dispute.segment))
        give_up_at = int(dispute.commit_deadline) - 10
        try:
            check = self.replay_check(
                job, int(dispute.segment), unavailable_is_reject=self._give_up(key, give_up_at)
            )
        except CheckpointUnavailable as exc:
            self._unavailable[key] = self._unavailable.get(key, 0) + 1
            self.log.warning("dispute %d: solver unreachable: %s", int(dispute.dispute_id), exc)
            return None
        return bool(check.ok)
