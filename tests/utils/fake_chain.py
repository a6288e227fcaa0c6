"""An in-memory stand-in for the JobManager/StakeManager/VerificationRound, for node unit tests
(no Anvil).

`FakeChain` keeps the protocol state (jobs, stakes, the verification round of
docs/FORCED_ERRORS.md: secret commitments, claims, sealed verdicts as end state hashes (approve
iff the end equals the claim, on the seat's own samples only: each verifier's own draw,
docs/SECURITY.md P-27, `FakeChain.own_draws`), the forced-error draw and its settlement by
the rejecters' ends; challenges, credits) and a clock;
`FakeChain.client(address)` returns a `FakeClient` with the subset of `chain.client.ChainClient`
methods the nodes call. It follows PROTOCOL.md 3.3 closely enough for node logic (statuses,
deadlines, double-submission reverts), not for economics: slashing and disputes are reduced to
recording what happened (`FakeChain.txs`). Reverts raise `chain.errors.ContractRevert`
subclasses named like the real custom errors.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from chain.contracts.shares import HeadSlot
from chain.types import (
    Assignment,
    ChainIdentity,
    ClaimsView,
    DecodedEvent,
    JobParamsView,
    JobView,
    RoundWindows,
    StakeView,
)
from noderuntime.ports import ChainPort
from tests.utils.fake_round import FakeAdjudicator, FakeCommittee, FakeGame, FakeRound, revert
from veritrain import commitments, forced
from veritrain.enums import JobStatus, Role, RoundOutcome, Verdict
from veritrain.merkle import verify_checkpoint
from veritrain.sampling import OwnDraws

FAKE_ESCROW = "0x00000000000000000000000000000000000e5c80"
"""The fake Escrow's address."""

ZERO = "0x" + "00" * 20


class FakeChain:
    """Protocol state shared by every `FakeClient`."""

    def __init__(self, params: JobParamsView | None = None, forced_error_rate_bps: int = 0) -> None:
        self.params = params or JobParamsView(
            solver_stake=100,
            verifier_stake=10,
            challenge_bond=5,
            verifier_fee=1,
            arbiter_fee=1,
            verifiers_per_job=2,
            samples_per_job=2,
            commit_window=3600,
            verdict_window=600,
            challenge_window=300,
            jackpot=2,
            reveal_window=60,
            claims_window=120,
            open_window=86_400,
        )
        self.now = 1_000_000
        self.block = 1
        self.identity = ChainIdentity(
            chain_id=31337, deployment="0x" + "0a" * 20, block=1, block_hash="0x" + "11" * 32
        )
        self.jobs: dict[int, JobView] = {}
        self.predictable = False
        """Whether `FakeJobs.predict_sample` replays the fake's draw (else None)."""
        self.staked: dict[tuple[str, int], int] = {}
        self.locked: dict[tuple[str, int], int] = {}
        self.unbonding: dict[tuple[str, int], int] = {}  # requested, not yet withdrawn
        self.balances: dict[str, int] = {}
        self.credits: dict[str, int] = {}
        self.assignments: dict[int, Assignment] = {}
        self.verdicts: dict[tuple[int, str], list[Verdict]] = {}
        self.challengers: dict[tuple[int, int, str], str] = {}
        self.disputed: dict[int, set[int]] = {}
        self.txs: list[tuple[str, str, tuple[Any, ...]]] = []
        # every duty transaction sent, mined or reverted: (sender, function)
        self.attempts: list[tuple[str, str]] = []
        self.min_stakes: dict[int, int] = {}  # role -> StakeManager.minStake (default 1)
        self.events: list[DecodedEvent] = []  # JobManager events, in order
        self.faucet_enabled = True  # False: a chain without the devnet faucet
        self.forced_segments: list[int] | None = None
        # each verifier's own draw of segments (P-27); None: every seat draws the same sample
        self.own_draws: dict[str, Sequence[int]] | None = None
        self.sample_masks: dict[tuple[int, str], int] = {}  # (job, verifier) -> sampleMaskOf
        self.forced_error_rate_bps = forced_error_rate_bps
        self.secret_commitments: dict[int, bytes] = {}
        self.secrets: dict[int, bytes] = {}
        self.proven_ends: dict[int, list[tuple[bytes, list[bytes]]]] = {}
        self.claims: dict[int, ClaimsView] = {}
        self.sealed: dict[tuple[int, str], bytes] = {}
        self.revealed: set[tuple[int, str]] = set()
        self.ends: dict[tuple[int, str], list[bytes]] = {}  # revealed end hashes per verifier
        self.forced_true_ends: dict[int, bytes] = {}  # revealed with the secret
        self.forced_settled: dict[int, int] = {}
        self.submissions: dict[bytes, int] = {}  # SubmissionId -> job id (set by claimJob)
        # accounts whose seals `FakeRound.sign_seal` signs for real (hand-offs); others get an
        # invalid signature
        self.keys: dict[str, Any] = {}
        # Escrow allowance per owner, set by tests only: a seat's reject bonds are locked from
        # its free verifier stake (``locked``), so no reveal of the fake reads it (P-38)
        self.allowances: dict[str, int] = {}
        # every seal the chain carries, with its signature (empty for a seat's own commit)
        self.seal_log: dict[tuple[int, str], tuple[bytes, bytes]] = {}
        self.equivocations: list[tuple[int, str]] = []  # proven (job, seat), slashed

    def draw(self, job_id: int) -> forced.ForcedDraw | None:
        """The job's forced-error draw once its secret is revealed (None before)."""
        if job_id not in self.secrets:
            return None
        segments = self.assignments[job_id].segments
        return forced.draw_forced_error(
            self.secrets[job_id], job_id, segments, self.forced_error_rate_bps
        )

    def windows(self, job_id: int) -> RoundWindows:
        job = self.jobs[job_id]
        reveal = self.params.reveal_window
        return RoundWindows(
            job.verdict_deadline,
            job.verdict_deadline + reveal,
            job.challenge_deadline,
            job.challenge_deadline + reveal,
        )

    def outcome(self, job_id: int) -> tuple[RoundOutcome, int]:
        job = self.jobs[job_id]
        if job_id not in self.claims:
            if self.now <= job.verdict_deadline:
                return RoundOutcome.Pending, 0
            return RoundOutcome.NoClaims, 0
        draw = self.draw(job_id)
        if draw is None:
            if self.now <= self.windows(job_id).secret_reveal_closes:
                return RoundOutcome.Pending, 0
            return RoundOutcome.NoReveal, 0
        if draw.forced:
            return RoundOutcome.Forced, draw.sample
        return RoundOutcome.Clean, 0

    def job_of(self, submission_id: bytes) -> int:
        """The job of a submission (``getSubmission``), reverting like the round when unknown."""
        job_id = self.submissions.get(bytes(submission_id))
        if job_id is None:
            raise revert("UnknownSubmission", submissionId=bytes(submission_id))
        return job_id

    def client(self, address: str) -> FakeClient:
        return FakeClient(self, address)

    def advance(self, seconds: int = 1, blocks: int = 1) -> None:
        self.now += seconds
        self.block += blocks

    def post_job(
        self, submitter: str, spec: Any, reward: int = 1000, init_hash: bytes | None = None
    ) -> int:
        """Post ``spec`` as ``submitter``; ``init_hash`` defaults to the state hash of the
        spec's seed-initialised state (what `veritrain job submit` computes)."""
        if init_hash is None:
            from veritrain.training import TrainingEngine

            engine = TrainingEngine(spec)
            init_hash = engine.state_hash(engine.init_state())
        job_id = len(self.jobs) + 1
        self.jobs[job_id] = JobView(
            job_id=job_id,
            submitter=submitter,
            solver=ZERO,
            model_id=spec.model_id_hash(),
            spec_hash=spec.spec_hash(),
            init_hash=bytes(init_hash),
            merkle_root=b"\x00" * 32,
            total_steps=spec.total_steps,
            checkpoint_interval=spec.checkpoint_interval,
            reward=reward,
            status=JobStatus.Open,
            commit_deadline=0,
            randomness_block=0,
            verdict_deadline=0,
            challenge_deadline=0,
            dispute_id=0,
            spec_uri=spec.to_data_uri(),
        )
        return job_id

    def set_job(self, job_id: int, **changes: Any) -> None:
        self.jobs[job_id] = dataclasses.replace(self.jobs[job_id], **changes)

    def emit(self, event: str, **args: Any) -> None:
        """Record a JobManager event in the current block."""
        self.events.append(
            DecodedEvent("JobManager", event, args, self.block, len(self.events), "0x", ZERO)
        )

    def count(self, fn: str, sender: str | None = None) -> int:
        return sum(1 for who, f, _ in self.txs if f == fn and (sender is None or who == sender))


class FakeClient:
    """The `ChainClient` subset the nodes use, bound to one account."""

    def __init__(self, chain: FakeChain, address: str) -> None:
        self.chain = chain
        self.address = address
        self.token = FakeToken(self)
        self.stakes = FakeStakes(self)
        self.jobs = FakeJobs(self)
        self.round = FakeRound(self)
        self.escrow = FakeEscrow(self)
        self.committee = FakeCommittee(self)
        self.game = FakeGame(self)
        self.adjudicator = FakeAdjudicator(self)
        self.shares = FakeShares(self)

    def _tx(self, fn: str, *args: Any) -> dict[str, Any]:
        self.chain.txs.append((self.address, fn, args))
        self.chain.advance()
        return {"status": 1}

    # --- clock / tokens / stake
    def timestamp(self) -> int:
        return self.chain.now

    def block_number(self) -> int:
        return self.chain.block

    def chain_identity(self) -> ChainIdentity:
        return self.chain.identity

    def event_logs(
        self, contract: Any, names: Sequence[str], from_block: int, to_block: int, /
    ) -> list[DecodedEvent]:
        return [
            ev
            for ev in self.chain.events
            if ev.event in names and from_block <= ev.block_number <= to_block
        ]

    def _window(self, job_id: int, opens: int, closes: int) -> None:
        if not opens <= self.chain.now <= closes:
            raise revert(
                "OutsideWindow", jobId=job_id, opens=opens, closes=closes, nowTs=self.chain.now
            )


class FakeShares:
    """`client.shares` of the fake: the registered commitments of models (none unless a test
    sets ``chain.models[model_id]``)."""

    def __init__(self, client: FakeClient) -> None:
        self._client = client

    def registered_model(self, model_id: bytes) -> Any:
        return getattr(self._client.chain, "models", {}).get(bytes(model_id))

    def slot_of(self, model_id: bytes) -> HeadSlot:
        return HeadSlot(job_id=0, extend_by=0)


class FakeToken:
    """`client.token` of the fake (the methods the nodes call)."""

    def __init__(self, client: FakeClient) -> None:
        self._client = client

    def balance_of(self, account: str | None = None) -> int:
        return self._client.chain.balances.get(account or self._client.address, 0)

    def allowance(self, spender: str, owner: str | None = None) -> int:
        """The Escrow allowance a test set (the fake's only spender; no reveal gate reads it)."""
        return self._client.chain.allowances.get(owner or self._client.address, 0)

    def faucet(self, amount: int) -> dict[str, Any]:
        if not self._client.chain.faucet_enabled:
            raise revert("FaucetDisabled")
        self._client.chain.balances[self._client.address] = self.balance_of() + amount
        return self._client._tx("faucet", amount)


class FakeStakes:
    """`client.stakes` of the fake (the methods the nodes call)."""

    def __init__(self, client: FakeClient) -> None:
        self._client = client

    def min_stake(self, role: int) -> int:
        return self._client.chain.min_stakes.get(int(role), 1)

    def is_active(self, account: str | None = None, role: int = 0) -> bool:
        staked = self._client.chain.staked.get((account or self._client.address, int(role)), 0)
        return staked >= self.min_stake(role)

    def stake_of(self, account: str | None = None, role: int = 0) -> StakeView:
        key = (account or self._client.address, int(role))
        staked = self._client.chain.staked.get(key, 0)
        unbonding = self._client.chain.unbonding.get(key, 0)
        return StakeView(staked, self._client.chain.locked.get(key, 0), unbonding, 0)

    def free_stake(self, account: str | None = None, role: int = 0) -> int:
        key = (account or self._client.address, int(role))
        return self._client.chain.staked.get(key, 0) - self._client.chain.locked.get(key, 0)

    def stake(self, role: int, amount: int) -> dict[str, Any]:
        if self._client.token.balance_of() < amount:
            raise revert("ERC20InsufficientBalance")
        self._client.chain.balances[self._client.address] -= amount
        key = (self._client.address, int(role))
        self._client.chain.staked[key] = self._client.chain.staked.get(key, 0) + amount
        return self._client._tx("stake", role, amount)


class FakeJobs:
    """`client.jobs` of the fake (the methods the nodes call)."""

    contract = "JobManager"  # the handle `FakeClient.event_logs` is given

    def __init__(self, client: FakeClient) -> None:
        self._client = client

    def job_params(self) -> JobParamsView:
        return self._client.chain.params

    def job_count(self) -> int:
        return len(self._client.chain.jobs)

    def get_job(self, job_id: int) -> JobView:
        return self._client.chain.jobs[job_id]

    def claim_job(self, job_id: int) -> dict[str, Any]:
        job = self._client.chain.jobs[job_id]
        if job.status is not JobStatus.Open:
            raise revert("UnexpectedJobStatus", jobId=job_id, status=int(job.status))
        self._client.chain.locked[(self._client.address, 0)] = (
            self._client.chain.locked.get((self._client.address, 0), 0)
            + self._client.chain.params.solver_stake
        )
        self._client.chain.set_job(
            job_id,
            solver=self._client.address,
            status=JobStatus.Claimed,
            commit_deadline=self._client.chain.now + self._client.chain.params.commit_window,
        )
        sid = commitments.submission_id(job_id, self._client.address)
        self._client.chain.submissions[sid] = job_id
        return self._client._tx("claimJob", job_id)

    def submission_of(self, job_id: int) -> bytes:
        solver = self._client.chain.jobs[job_id].solver
        if int(solver, 16) == 0:
            return b"\x00" * 32
        return commitments.submission_id(job_id, solver)

    def commit_checkpoints(
        self,
        job_id: int,
        root: bytes,
        init_proof: Sequence[bytes],
        url: str,
        secret_commitment: bytes,
    ) -> dict[str, Any]:
        job = self._client.chain.jobs[job_id]
        if secret_commitment == b"\x00" * 32:
            raise revert("ZeroCommitment", jobId=job_id)
        if job.status is not JobStatus.Claimed:
            raise revert("UnexpectedJobStatus", jobId=job_id, status=int(job.status))
        if job.solver != self._client.address:
            raise revert("NotSolver", jobId=job_id, caller=self._client.address)
        if not verify_checkpoint(
            list(init_proof), root, job.total_steps, job.checkpoint_interval, 0, job.init_hash
        ):
            raise revert(
                "InitialStateNotCommitted", jobId=job_id, merkleRoot=root, initHash=job.init_hash
            )
        self._client.chain.set_job(
            job_id,
            merkle_root=root,
            checkpoint_url=url,
            status=JobStatus.Committed,
            randomness_block=self._client.chain.block + 1,
        )
        # as the round keeps it (its top 208 bits, `RoundWord`)
        self._client.chain.secret_commitments[job_id] = commitments.round_hash(
            bytes(secret_commitment)
        )
        self._client.chain.emit("CheckpointsCommitted", jobId=job_id, solver=self._client.address)
        return self._client._tx("commitCheckpoints", job_id, root, url, secret_commitment)

    def predict_sample(self, job_id: int) -> OwnDraws | None:
        """The draw `assign_verifiers` would make now, as the client replays the contract's;
        None unless the test set ``chain.predictable`` (the fake's draw is its own, so by
        default a node cannot replay it and assigns alone, as when a prediction fails)."""
        chain = self._client.chain
        job = chain.jobs[job_id]
        if not chain.predictable or job.status is not JobStatus.Committed:
            return None
        if job_id in chain.assignments or chain.block <= job.randomness_block:
            return None
        verifiers, segments, masks = self._draw(job)
        return OwnDraws(segments, tuple(masks[v] for v in verifiers), tuple(0 for _ in verifiers))

    def assign_verifiers(self, job_id: int) -> dict[str, Any]:
        self._client.chain.attempts.append((self._client.address, "assignVerifiers"))
        job = self._client.chain.jobs[job_id]
        if job.status is not JobStatus.Committed:
            raise revert("UnexpectedJobStatus", jobId=job_id, status=int(job.status))
        if self._client.chain.block <= job.randomness_block:
            raise revert("RandomnessNotReady", jobId=job_id)
        self.assign(job_id)
        return self._client._tx("assignVerifiers", job_id)

    def assign(self, job_id: int) -> None:
        """The assignment's state changes, its checks passed (``LibAssignment.assign``)."""
        verifiers, segments, masks = self._draw(self._client.chain.jobs[job_id])
        self._client.chain.assignments[job_id] = Assignment(verifiers, segments)
        for v in verifiers:
            self._client.chain.verdicts[(job_id, v)] = [Verdict.None_] * len(segments)
            self._client.chain.sample_masks[(job_id, v)] = masks[v]
        p = self._client.chain.params
        claims_deadline = self._client.chain.now + p.claims_window
        self._client.chain.set_job(
            job_id,
            status=JobStatus.Verifying,
            claims_deadline=claims_deadline,
            verdict_deadline=claims_deadline + p.verdict_window,
            challenge_deadline=claims_deadline
            + p.verdict_window
            + p.reveal_window
            + p.challenge_window,
        )
        self._client.chain.emit(
            "VerifiersAssigned",
            jobId=job_id,
            verifiers=list(verifiers),
            sampleMasks=[masks[v] for v in verifiers],
            segments=list(segments),
        )

    def _draw(self, job: JobView) -> tuple[tuple[str, ...], tuple[int, ...], dict[str, int]]:
        """The fake's assignment of `job`: (verifiers, sampled segments, mask per seat)."""
        verifiers = tuple(
            a
            for (a, role), amount in sorted(self._client.chain.staked.items())
            if role == 1 and amount > 0 and a not in (job.solver, job.submitter)
        )[: self._client.chain.params.verifiers_per_job]
        n = job.total_steps // job.checkpoint_interval
        q = self._client.chain.params.samples_per_job
        own = self._client.chain.own_draws
        if own is not None:
            # as the contract: the sample is the union of the seats' own draws in increasing
            # segment order; each seat's mask marks its own samples (P-27)
            segments = tuple(sorted({int(s) for v in verifiers for s in own.get(v, ())}))
            masks = {v: sum(1 << segments.index(int(s)) for s in own.get(v, ())) for v in verifiers}
        else:
            segments = tuple(self._client.chain.forced_segments or range(n)[-q:])
            masks = {v: (1 << len(segments)) - 1 for v in verifiers}
        return verifiers, segments, masks

    def expire_unassigned(self, job_id: int) -> dict[str, Any]:
        # as the contract: a Committed job nobody seated by commit_deadline + open_window expires
        # (the fake never reassigns, so no kept seat has a rejection left to judge)
        self._client.chain.attempts.append((self._client.address, "expireUnassigned"))
        job = self._client.chain.jobs[job_id]
        if job.status is not JobStatus.Committed:
            raise revert("UnexpectedJobStatus", jobId=job_id, status=int(job.status))
        deadline = job.commit_deadline + self._client.chain.params.open_window
        if self._client.chain.now <= deadline:
            raise revert("AssignDeadlineNotPassed", jobId=job_id, deadline=deadline)
        self._client.chain.set_job(job_id, status=JobStatus.Expired)
        self._client.chain.emit("JobExpired", jobId=job_id)
        return self._client._tx("expireUnassigned", job_id)

    def get_assignment(self, job_id: int) -> Assignment:
        return self._client.chain.assignments.get(job_id, Assignment((), ()))

    def sample_mask_of(self, job_id: int, verifier: str) -> int:
        return self._client.chain.sample_masks.get((job_id, verifier), 0)

    def verdicts_of(self, job_id: int, verifier: str) -> list[Verdict]:
        return list(self._client.chain.verdicts.get((job_id, verifier), []))

    def challenger_of(self, job_id: int, sample_index: int, verifier: str) -> str | None:
        return self._client.chain.challengers.get((job_id, sample_index, verifier))

    def challenge_approval(self, job_id: int, sample_index: int, verifier: str) -> dict[str, Any]:
        job = self._client.chain.jobs[job_id]
        if self._client.chain.now > job.challenge_deadline:
            raise revert("ChallengeWindowClosed", jobId=job_id)
        key = (job_id, sample_index, verifier)
        if key in self._client.chain.challengers:
            raise revert("ApprovalAlreadyChallenged", jobId=job_id)
        if self._client.chain.verdicts[(job_id, verifier)][sample_index] is not Verdict.Approve:
            raise revert("VerdictNotApproval", jobId=job_id)
        self._client.chain.challengers[key] = self._client.address
        self._client.chain.disputed.setdefault(job_id, set()).add(sample_index)
        return self._client._tx("challengeApproval", job_id, sample_index, verifier)

    def finalize(self, job_id: int) -> dict[str, Any]:
        self._client.chain.attempts.append((self._client.address, "finalize"))
        job = self._client.chain.jobs[job_id]
        if (
            job.status is not JobStatus.Verifying
            or self._client.chain.now <= job.challenge_deadline
        ):
            raise revert("ChallengeWindowOpen", jobId=job_id)
        outcome, sample = self._client.chain.outcome(job_id)
        if outcome is RoundOutcome.Pending:
            raise revert("RoundPending", jobId=job_id)
        if outcome in (RoundOutcome.NoClaims, RoundOutcome.NoReveal):
            self._client.chain.set_job(job_id, status=JobStatus.Rejected)
            return self._client._tx("finalize", job_id)
        if outcome is RoundOutcome.Forced:
            self._client.chain.forced_settled[job_id] = sample
            self._settle_forced(job_id, sample)
        self._drop_replayed_abstentions(job_id)
        if self._client.chain.disputed.get(job_id):
            self._client.chain.set_job(job_id, status=JobStatus.Disputed, dispute_id=1)
        else:
            self._client.chain.set_job(job_id, status=JobStatus.Finalized)
            # as `StakeManager.unlockAndRestake`: the reward is added to the solver's stake,
            # not paid to its wallet
            staked = self._client.chain.staked
            key = (job.solver, int(Role.Solver))
            staked[key] = staked.get(key, 0) + job.reward
        return self._client._tx("finalize", job_id)

    def _drop_replayed_abstentions(self, job_id: int) -> None:
        """As the contract (P-33): a sample whose only non-approvals are abstentions, and that
        another seat replayed (approved or rejected with an end), holds no dispute."""
        chain = self._client.chain
        challenged = {i for (j, i, _v) in chain.challengers if j == job_id}
        for i in sorted(chain.disputed.get(job_id, set())):
            seen = [
                verdicts[i]
                for v in chain.assignments[job_id].verifiers
                if (verdicts := chain.verdicts.get((job_id, v))) is not None
            ]
            replayed = any(x in (Verdict.Approve, Verdict.Reject) for x in seen)
            if replayed and Verdict.Reject not in seen and i not in challenged:
                chain.disputed[job_id].discard(i)

    def _settle_forced(self, job_id: int, sample: int) -> None:
        """A forced error: rejecters whose end is the solver's true end replayed (their verdict
        becomes an approval of the true end); the sample stays disputed iff another rejects."""
        chain = self._client.chain
        true_end = chain.forced_true_ends[job_id]
        disputed = False
        for v in chain.assignments[job_id].verifiers:
            verdicts = chain.verdicts.get((job_id, v))
            if verdicts is None or verdicts[sample] not in (Verdict.Reject, Verdict.Abstain):
                continue
            ends = chain.ends.get((job_id, v))  # None: verdicts a test recorded directly
            if ends is not None and ends[sample] == true_end:
                verdicts[sample] = Verdict.Approve
            else:
                disputed = True
        if not disputed:
            chain.disputed.get(job_id, set()).discard(sample)


class FakeEscrow:
    """`client.escrow` of the fake: every credit, claimed at once."""

    def __init__(self, client: FakeClient) -> None:
        self._client = client

    @property
    def address(self) -> str:
        """The fake Escrow's address (the spender of `FakeToken.allowance`)."""
        return FAKE_ESCROW

    def credit_of(self, account: str | None = None) -> int:
        return self._client.chain.credits.get(account or self._client.address, 0)

    def claim_credit(self) -> dict[str, Any]:
        amount = self._client.chain.credits.pop(self._client.address, 0)
        if amount == 0:
            raise revert("NoCreditToClaim", account=self._client.address)
        self._client.chain.balances[self._client.address] = self._client.token.balance_of() + amount
        return self._client._tx("claimCredit")


def _fake_client_is_a_port(client: FakeClient) -> ChainPort:
    return client  # mypy checks that the fake satisfies the nodes' ChainPort
