"""The verification round, the committee, the adjudicator and the bisection game of the
in-memory chain (`tests.utils.fake_chain.FakeChain`): the `client.round`, `client.committee`,
`client.adjudicator` and `client.game` facades a `FakeClient` carries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from chain.errors import ChainValueError, ContractRevert, error_class
from chain.seals import SignedReveal, SignedSeal, seal_signer, sign_seal
from chain.types import (
    ClaimsView,
    DisputeView,
    RoundView,
    RoundWindows,
    StepClaimView,
)
from veritrain import commitments, forced
from veritrain._keccak import keccak256
from veritrain.bisection import GameView
from veritrain.enums import DisputePhase, DisputeStatus, Role, RoundOutcome, Verdict
from veritrain.merkle import claim_end_proofs

if TYPE_CHECKING:
    from tests.utils.fake_chain import FakeClient


FAKE_CHAIN_ID = 31337
FAKE_ROUND = "0x" + "0b" * 20
"""The EIP-712 domain of the fake's seals (chain id, round address)."""


def end_tag(sample_index: int, end: bytes) -> bytes:
    """The round's 40-bit tag of a replayed end (`LibStateHash.endTag`): the first 5
    bytes of keccak256(abi.encode(uint256 sample_index, bytes12 end[:12])), lowest bit set."""
    digest = keccak256(sample_index.to_bytes(32, "big") + bytes(end[:12]) + bytes(20))
    return digest[:4] + bytes([digest[4] | 1])


def revert(name: str, **args: Any) -> ContractRevert:
    """The `ContractRevert` subclass the real contracts raise for custom error `name`."""
    return error_class(name)(name, args, contract="JobManager")


def _short_of_stake(verifier: str, free: int, bonds: int) -> ContractRevert:
    """The StakeManager's revert when a seat's free verifier stake (wei) is below its reject
    bonds (wei) at the reveal's lock."""
    return error_class("InsufficientFreeStake")(
        "InsufficientFreeStake",
        {"account": verifier, "role": int(Role.Verifier), "free": free, "requested": bonds},
        contract="StakeManager",
    )


class FakeRound:
    """`client.round` of the fake (the methods the nodes call)."""

    def __init__(self, client: FakeClient) -> None:
        self._client = client

    def forced_error_rate_bps(self) -> int:
        return self._client.chain.forced_error_rate_bps

    def claims_of(self, submission_id: bytes) -> ClaimsView:
        job_id = self._client.chain.job_of(submission_id)
        return self._client.chain.claims.get(job_id, ClaimsView((), (), bytes(32)))

    def round_of(self, submission_id: bytes) -> RoundView:
        job_id = self._client.chain.job_of(submission_id)
        chain = self._client.chain
        committed = sum(1 for (j, _v) in set(chain.sealed) | chain.revealed if j == job_id)
        claims = chain.claims.get(job_id)
        secret_commitment = chain.secret_commitments.get(job_id, b"\x00" * 32)
        return RoundView(
            submission_id=bytes(submission_id),
            commitment=(
                secret_commitment
                if claims is None
                else commitments.round_hash(
                    commitments.claims_hash(
                        secret_commitment, claims.start_hashes, claims.end_hashes
                    )
                )
            ),
            revealed=job_id in chain.secrets,
            committed=committed,
            claims_block=0 if claims is None else 1,
        )

    def windows_of(self, submission_id: bytes) -> RoundWindows:
        job_id = self._client.chain.job_of(submission_id)
        return self._client.chain.windows(job_id)

    def outcome(self, submission_id: bytes) -> tuple[RoundOutcome, int]:
        job_id = self._client.chain.job_of(submission_id)
        return self._client.chain.outcome(job_id)

    def proven_ends(self, submission_id: bytes) -> list[tuple[bytes, list[bytes]]] | None:
        job_id = self._client.chain.job_of(submission_id)
        return self._client.chain.proven_ends.get(job_id)

    def verdict_commitment_of(
        self, submission_id: bytes, verifier: str | None = None
    ) -> tuple[bytes, bool]:
        job_id = self._client.chain.job_of(submission_id)
        key = (job_id, verifier or self._client.address)
        return self._client.chain.sealed.get(key, b"\x00" * 32), key in self._client.chain.revealed

    def replayed_end_of(self, submission_id: bytes, verifier: str, sample_index: int) -> bytes:
        job_id = self._client.chain.job_of(submission_id)
        ends = self._client.chain.ends.get((job_id, verifier))
        if ends is None:
            return b"\x00" * 32
        claimed = self._client.chain.claims[job_id].end_hashes[sample_index]
        return b"\x00" * 32 if ends[sample_index] == claimed else ends[sample_index]

    def forced_end_matches(self, submission_id: bytes, verifier: str) -> bool:
        job_id = self._client.chain.job_of(submission_id)
        outcome, sample = self._client.chain.outcome(job_id)
        ends = self._client.chain.ends.get((job_id, verifier))
        if outcome is not RoundOutcome.Forced or ends is None:
            return False
        true_end = self._client.chain.forced_true_ends[job_id]
        claimed = self._client.chain.claims[job_id].end_hashes
        own = self._client.chain.sample_masks.get((job_id, verifier), (1 << len(ends)) - 1)
        rejected = [
            j
            for j, e in enumerate(ends)
            if (own >> j) & 1 and e != claimed[j] and e != b"\x00" * 32
        ]
        if rejected and rejected[0] == sample:
            # the seat's first rejected own sample: the JobManager keeps only its 40-bit tag
            return end_tag(sample, ends[sample]) == end_tag(sample, true_end)
        end = ends[sample]
        # the contract keeps the true end's first 96 bits (12 bytes) and compares on them
        return end != b"\x00" * 32 and end[:12] == true_end[:12]

    def post_claims(
        self, submission_id: bytes, starts: Sequence[bytes], ends: Sequence[bytes]
    ) -> dict[str, Any]:
        job_id = self._client.chain.job_of(submission_id)
        job = self._client.chain.jobs[job_id]
        if job.solver != self._client.address:
            raise revert("NotSolver", submissionId=submission_id, caller=self._client.address)
        if job_id in self._client.chain.claims:
            raise revert("ClaimsAlreadyPosted", submissionId=submission_id)
        q = len(self._client.chain.assignments[job_id].segments)
        if len(starts) != q or len(ends) != q:
            raise revert(
                "LengthMismatch", submissionId=submission_id, expected=q, actual=len(starts)
            )
        self._client._window(job_id, 0, job.claims_deadline)
        for j, end in enumerate(ends):
            if bytes(end) == b"\x00" * 32:  # zero is the unreplayed end: never a claim
                raise revert("ZeroClaim", submissionId=submission_id, sampleIndex=j)
        self._client.chain.claims[job_id] = ClaimsView(
            tuple(starts), tuple(ends), self._client.chain.secret_commitments.get(job_id, bytes(32))
        )
        return self._client._tx("postClaims", job_id, tuple(starts), tuple(ends))

    def assign_and_post_claims(
        self,
        job_id: int,
        segments: Sequence[int],
        starts: Sequence[bytes],
        ends: Sequence[bytes],
    ) -> dict[str, Any]:
        """As the contract: the assignment and the claims, or neither (the checks that can
        fail after the assignment run on its prediction first)."""
        chain = self._client.chain
        job = chain.jobs[job_id]
        predicted = self._client.jobs.predict_sample(job_id) if chain.predictable else None
        if predicted is None:
            self._client.jobs.assign_verifiers(job_id)  # raises the assignment's revert
            raise AssertionError("assign_and_post_claims needs chain.predictable")
        sid = commitments.submission_id(job_id, self._client.address)
        if job.solver != self._client.address:
            raise revert("UnknownSubmission", submissionId=sid)
        q = len(predicted.segments)
        if len(starts) != q or len(ends) != q:
            raise revert("LengthMismatch", submissionId=sid, expected=q, actual=len(starts))
        if tuple(int(s) for s in segments) != predicted.segments:
            raise revert(
                "SampleMismatch", jobId=job_id, sampleHash=commitments.sample_hash(segments)
            )
        if any(bytes(end) == b"\x00" * 32 for end in ends):
            raise revert("ZeroClaim", submissionId=sid, sampleIndex=0)
        chain.attempts.append((self._client.address, "assignAndPostClaims"))
        self._client.jobs.assign(job_id)
        chain.claims[job_id] = ClaimsView(
            tuple(starts), tuple(ends), chain.secret_commitments.get(job_id, bytes(32))
        )
        return self._client._tx("assignAndPostClaims", job_id, tuple(starts), tuple(ends))

    def commit_verdicts(self, submission_id: bytes, commitment: bytes) -> dict[str, Any]:
        job_id = self._seal(submission_id, self._client.address, commitment, skip=False)
        self._client.chain.seal_log[(job_id, self._client.address)] = (bytes(commitment), b"")
        return self._client._tx("commitVerdicts", job_id, commitment)

    def _seal(self, submission_id: bytes, verifier: str, commitment: bytes, *, skip: bool) -> int:
        """Seal ``verifier``'s commitment as the contract does (``skip``: a seat sealed already
        is skipped, as ``commitVerdictsFor`` does, instead of reverting)."""
        job_id = self._client.chain.job_of(submission_id)
        key = (job_id, verifier)
        if key not in self._client.chain.verdicts:
            raise revert("NotAssignedVerifier", submissionId=submission_id, caller=verifier)
        if job_id not in self._client.chain.claims:
            raise revert("ClaimsNotPosted", submissionId=submission_id)
        self._client._window(job_id, 0, self._client.chain.jobs[job_id].verdict_deadline)
        if key in self._client.chain.sealed or key in self._client.chain.revealed:
            if skip:
                return job_id
            raise revert("VerdictAlreadyCommitted", submissionId=submission_id, verifier=verifier)
        self._client.chain.sealed[key] = bytes(commitment)
        return job_id

    # --- hand-offs (commitVerdictsFor / revealVerdictsFor, chain.seals)
    def seal_signer(self, submission_id: bytes, commitment: bytes, signature: bytes) -> str | None:
        return seal_signer(FAKE_CHAIN_ID, FAKE_ROUND, submission_id, commitment, signature)

    def sign_seal(self, submission_id: bytes, commitment: bytes) -> SignedSeal:
        """A real EIP-712 seal when the chain knows this address's key (`FakeChain.keys`), else
        an all-zero signature that no check accepts."""
        account = self._client.chain.keys.get(self._client.address)
        if account is None:
            return SignedSeal(self._client.address, bytes(commitment), b"\x00" * 65)
        return sign_seal(account, FAKE_CHAIN_ID, FAKE_ROUND, submission_id, commitment)

    def cover_reveal_bonds(self, submission_id: bytes, ends: Sequence[bytes]) -> int:
        """As the real facade: top the free verifier stake up to the reject bonds on the seat's
        own samples, staking the shortfall from the balance (``ERC20InsufficientBalance``)."""
        chain = self._client.chain
        job_id = chain.job_of(submission_id)
        own = chain.sample_masks.get((job_id, self._client.address), 0)
        rejects = forced.bonded_rejects(ends, chain.claims[job_id].end_hashes, own)
        short = self.reveal_bond_shortfall(rejects)
        if short:
            self._client.stakes.stake(Role.Verifier, short)
        return rejects

    def reveal_bond_shortfall(
        self, rejects: int, account: str | None = None, *, challenge_bond: int | None = None
    ) -> int:
        """As the real facade: the bonds the reveal locks (`forced.reveal_bond`) minus the free
        verifier stake, >= 0."""
        if forced.reveal_bond(rejects, 1) == 0:
            return 0
        bond = challenge_bond
        if bond is None:
            bond = self._client.chain.params.challenge_bond
        free = self._client.stakes.free_stake(account or self._client.address, Role.Verifier)
        return max(0, forced.reveal_bond(rejects, bond) - free)

    def _bonds_of(self, job_id: int, verifier: str, ends: Sequence[bytes]) -> tuple[int, int]:
        """(reject bonds the reveal locks in wei, free verifier stake in wei) of a seat's reveal of
        ``ends``: the contract's P-38 gate, a bond per non-approval of its own samples but the
        first, which the seat's lock holds (`forced.reveal_bond`; a count mismatch books none:
        `_reveal` refuses it first)."""
        chain = self._client.chain
        claimed = chain.claims[job_id].end_hashes
        own = chain.sample_masks.get((job_id, verifier), 0)
        rejects = forced.bonded_rejects(ends, claimed, own) if len(ends) == len(claimed) else 0
        free = self._client.stakes.free_stake(verifier, Role.Verifier)
        return forced.reveal_bond(rejects, chain.params.challenge_bond), free

    def commit_verdicts_for(self, submission_id: bytes, seals: Sequence[SignedSeal]) -> object:
        for seal in seals:
            signer = self.seal_signer(submission_id, seal.commitment, seal.signature)
            if signer != seal.verifier:
                raise revert("InvalidSealSignature", submissionId=submission_id)
        job_id = self._client.chain.job_of(submission_id)
        for seal in seals:
            if (job_id, seal.verifier) not in self._client.chain.sealed:
                self._client.chain.seal_log[(job_id, seal.verifier)] = (
                    bytes(seal.commitment),
                    bytes(seal.signature),
                )
            self._seal(submission_id, seal.verifier, seal.commitment, skip=True)
        return self._client._tx("commitVerdictsFor", job_id, tuple(s.verifier for s in seals))

    def reveal_verdicts_signed(
        self, submission_id: bytes, reveals: Sequence[SignedReveal]
    ) -> object:
        """As the contract (P-40): every seat, none sealed on chain, by the verdict deadline,
        each signature over the recomputed commitment; a seat whose free verifier stake does
        not cover its reject bonds reverts the whole call (``InsufficientFreeStake``); no seal
        is stored."""
        chain = self._client.chain
        job_id = chain.job_of(submission_id)
        seats = chain.assignments[job_id].verifiers
        if any((job_id, v) in chain.sealed or (job_id, v) in chain.revealed for v in seats):
            raise revert("SealsOnChain", submissionId=submission_id)
        if len(reveals) != len(seats) or {r.verifier for r in reveals} != set(seats):
            raise revert(
                "LengthMismatch",
                submissionId=submission_id,
                expected=len(seats),
                actual=len(reveals),
            )
        self._client._window(job_id, 0, chain.jobs[job_id].verdict_deadline)
        for r in reveals:
            digest = commitments.verdict_commitment(job_id, r.verifier, r.ends, r.salt)
            if self.seal_signer(submission_id, digest, r.signature) != r.verifier:
                raise revert("InvalidSealSignature", submissionId=submission_id)
            bonds, free = self._bonds_of(job_id, r.verifier, r.ends)
            if bonds > free:
                raise _short_of_stake(r.verifier, free, bonds)
        for r in reveals:
            digest = commitments.verdict_commitment(job_id, r.verifier, r.ends, r.salt)
            chain.sealed[(job_id, r.verifier)] = digest
            chain.seal_log[(job_id, r.verifier)] = (digest, bytes(r.signature))
        for r in reveals:
            self._reveal(submission_id, r.verifier, r.ends, r.salt)
        for r in reveals:  # nothing of the seals is stored
            del chain.sealed[(job_id, r.verifier)]
        return self._client._tx("revealVerdictsSigned", job_id, tuple(r.verifier for r in reveals))

    def seals_on_chain(self, submission_id: bytes) -> dict[str, tuple[bytes, bytes]]:
        job_id = self._client.chain.job_of(submission_id)
        return {v.lower(): e for (j, v), e in self._client.chain.seal_log.items() if j == job_id}

    def prove_equivocation(
        self,
        submission_id: bytes,
        verifier: str,
        seal: tuple[bytes, bytes],
        other: tuple[bytes, bytes],
    ) -> object:
        chain = self._client.chain
        job_id = chain.job_of(submission_id)
        seat = next(v for v in chain.assignments[job_id].verifiers if v.lower() == verifier.lower())
        if bytes(seal[0]) == bytes(other[0]):
            raise revert("NotEquivocation", submissionId=submission_id, verifier=seat)
        if self.seal_signer(submission_id, seal[0], seal[1]) != seat:  # the first is signed
            raise revert("InvalidSealSignature", submissionId=submission_id)
        for commitment, signature in (seal, other):
            if not signature:
                if chain.sealed.get((job_id, seat)) != bytes(commitment):
                    raise revert("NotEquivocation", submissionId=submission_id, verifier=seat)
            elif self.seal_signer(submission_id, commitment, signature) != seat:
                raise revert("InvalidSealSignature", submissionId=submission_id)
        if (job_id, seat) not in chain.revealed or (job_id, seat) in chain.equivocations:
            raise revert("SeatNotSlashable", jobId=job_id, verifier=seat)
        chain.equivocations.append((job_id, seat))
        return self._client._tx("proveEquivocation", job_id, seat)

    def reveal_verdicts_for(
        self, submission_id: bytes, reveals: Sequence[tuple[str, Sequence[bytes], bytes]]
    ) -> object:
        job_id = self._client.chain.job_of(submission_id)
        chain = self._client.chain
        for verifier, ends, salt in reveals:
            if (job_id, verifier) in chain.revealed:
                continue
            # as the contract (P-38): a seat whose free verifier stake does not cover its reject
            # bonds on its own samples is skipped (the contract emits ``RevealSkipped``)
            bonds, free = self._bonds_of(job_id, verifier, ends)
            if bonds > free:
                continue
            self._reveal(submission_id, verifier, ends, salt)
        return self._client._tx("revealVerdictsFor", job_id, tuple(v for v, _, _ in reveals))

    def reveal_verdicts(
        self, submission_id: bytes, ends: Sequence[bytes], salt: bytes, cover_bonds: bool = True
    ) -> dict[str, Any]:
        """As the real facade: the free verifier stake topped up to the reject bonds first
        (`cover_reveal_bonds`, unless ``cover_bonds`` is False), then the seat's own
        ``revealVerdicts``."""
        if cover_bonds:
            self.cover_reveal_bonds(submission_id, ends)
        job_id = self._reveal(submission_id, self._client.address, ends, salt)
        return self._client._tx("revealVerdicts", job_id, tuple(ends), salt)

    def _reveal(
        self, submission_id: bytes, verifier: str, ends: Sequence[bytes], salt: bytes
    ) -> int:
        """Reveal ``verifier``'s sealed ends as the contract does."""
        job_id = self._client.chain.job_of(submission_id)
        key = (job_id, verifier)
        if key not in self._client.chain.sealed or key in self._client.chain.revealed:
            raise revert("NothingToReveal", submissionId=submission_id, verifier=verifier)
        verifiers = self._client.chain.assignments[job_id].verifiers
        all_sealed = all((job_id, v) in self._client.chain.sealed for v in verifiers)
        windows = self._client.chain.windows(job_id)
        opens = self._client.chain.now if all_sealed else windows.verdict_reveal_opens + 1
        self._client._window(job_id, opens, windows.verdict_reveal_closes)
        claimed = self._client.chain.claims[job_id].end_hashes
        if len(ends) != len(claimed):
            raise revert(
                "LengthMismatch",
                submissionId=submission_id,
                expected=len(claimed),
                actual=len(ends),
            )
        digest = commitments.verdict_commitment(job_id, verifier, ends, salt)
        if digest != self._client.chain.sealed[key]:
            raise revert("VerdictCommitmentMismatch", submissionId=submission_id, verifier=verifier)
        # as the contract: the reject bonds on its own samples but the first (held by the seat's
        # lock) are locked from the seat's free verifier stake (the fake never unlocks them: it
        # settles no bonds)
        bonds, free = self._bonds_of(job_id, verifier, ends)
        if bonds > free:
            raise _short_of_stake(verifier, free, bonds)
        if bonds:
            stake_key = (verifier, int(Role.Verifier))
            self._client.chain.locked[stake_key] = (
                self._client.chain.locked.get(stake_key, 0) + bonds
            )
        # as the contract: approve iff the revealed end is the claimed end, abstain on a zero
        # end (P-20), else reject; an abstention is disputed like a rejection
        # (P-27) on the seat's own samples only: its ends elsewhere are ignored (Verdict.None)
        own = self._client.chain.sample_masks.get(key, 0)
        approvals = [bytes(e) == bytes(c) for e, c in zip(ends, claimed, strict=True)]
        self._client.chain.revealed.add(key)
        self._client.chain.ends[key] = [bytes(e) for e in ends]
        self._client.chain.verdicts[key] = [
            Verdict.None_
            if not (own >> i) & 1
            else Verdict.Approve
            if a
            else Verdict.Abstain
            if bytes(e) == bytes(32)
            else Verdict.Reject
            for i, (a, e) in enumerate(zip(approvals, ends, strict=True))
        ]
        for i, a in enumerate(approvals):
            if not a and (own >> i) & 1:
                self._client.chain.disputed.setdefault(job_id, set()).add(i)
        if all((job_id, v) in self._client.chain.revealed for v in verifiers):
            self._client.chain.set_job(
                job_id,
                challenge_deadline=self._client.chain.now
                + self._client.chain.params.challenge_window,
            )
        return job_id

    def reveal_secret(
        self,
        submission_id: bytes,
        secret: bytes,
        forced_true_end: bytes,
        proof: Sequence[bytes],
        *,
        and_finalize: bool = False,
    ) -> dict[str, Any]:
        job_id = self._client.chain.job_of(submission_id)
        job = self._client.chain.jobs[job_id]
        if job_id in self._client.chain.secrets:
            raise revert("SecretAlreadyRevealed", submissionId=submission_id)
        windows = self._client.chain.windows(job_id)
        self._client._window(job_id, windows.secret_reveal_opens + 1, windows.secret_reveal_closes)
        # as the contract (P-27): every sample needs a revealed verdict of a seat that drew it
        chain = self._client.chain
        uncovered = (1 << len(chain.assignments[job_id].segments)) - 1
        for v in chain.assignments[job_id].verifiers:
            if (job_id, v) in chain.revealed:
                uncovered &= ~chain.sample_masks.get((job_id, v), 0)
        if uncovered and chain.assignments[job_id].verifiers:
            raise revert("SamplesUncovered", submissionId=submission_id, uncoveredMask=uncovered)
        if (
            commitments.round_hash(commitments.secret_commitment(job_id, job.solver, secret))
            != self._client.chain.secret_commitments[job_id]
        ):
            raise revert("SecretCommitmentMismatch", submissionId=submission_id)
        segments = self._client.chain.assignments[job_id].segments
        draw = forced.draw_forced_error(
            secret, job_id, segments, self._client.chain.forced_error_rate_bps
        )
        claims = self._client.chain.claims[job_id]
        k = job.checkpoint_interval
        ends = list(claims.end_hashes)
        if draw.forced:
            if forced.forced_claim(forced_true_end) != ends[draw.sample]:
                raise revert(
                    "ForcedClaimMismatch", submissionId=submission_id, sampleIndex=draw.sample
                )
            ends[draw.sample] = bytes(forced_true_end)
        # as the contract: one multiproof of every claimed checkpoint (each sample's start and
        # end, one per index; two states of one checkpoint are no proof)
        proven = claim_end_proofs(
            proof, job.merkle_root, job.total_steps, k, segments, claims.start_hashes, ends
        )
        if proven is None:
            raise revert("InvalidClaimsProof", submissionId=submission_id)
        self._client.chain.proven_ends[job_id] = proven
        self._client.chain.secrets[job_id] = bytes(secret)
        self._client.chain.forced_true_ends[job_id] = bytes(forced_true_end)
        if not and_finalize:
            return self._client._tx("revealSecret", job_id, secret)
        try:  # one transaction: a finalize that reverts undoes the reveal
            self._client.jobs.finalize(job_id)
        except Exception:
            for store in ("proven_ends", "secrets", "forced_true_ends"):
                getattr(self._client.chain, store).pop(job_id, None)
            raise
        return self._client._tx("revealSecretAndFinalize", job_id, secret)


class FakeCommittee:
    """`client.committee` of the fake (the methods the nodes call)."""

    def __init__(self, client: FakeClient) -> None:
        self._client = client

    def dispute_count(self) -> int:
        return 0

    def dispute_phase(self, dispute_id: int) -> DisputePhase:
        return DisputePhase.None_

    def get_dispute(self, dispute_id: int) -> DisputeView:
        return DisputeView(
            dispute_id=dispute_id,
            job_id=0,
            segment=0,
            status=DisputeStatus.AwaitingCommittee,
            randomness_block=2**62,
            commit_deadline=0,
            reveal_deadline=0,
            seat_stake=0,
            committed=0,
            revealed=0,
            valid_votes=0,
            invalid_votes=0,
            segment_valid=False,
        )

    # A dispute that was never opened: empty views, and every transaction reverts with the
    # contract's phase error (phase None), as ArbitrationCommittee does.
    def committee_of(self, dispute_id: int, /) -> list[str]:
        return []

    def ballot_of(self, dispute_id: int, member: str, /) -> tuple[bytes, bool, bool]:
        return b"\x00" * 32, False, False

    def step_claim_of(self, dispute_id: int, /) -> StepClaimView:
        return StepClaimView(dispute_id, False, 0, b"\x00" * 32, b"\x00" * 32)

    def _no_dispute(self, dispute_id: int) -> ContractRevert:
        return revert("UnexpectedDisputePhase", disputeId=dispute_id, phase=0)

    def draw_committee(self, dispute_id: int, /) -> object:
        raise self._no_dispute(dispute_id)

    def commit_vote(self, dispute_id: int, commitment: bytes, /) -> object:
        raise self._no_dispute(dispute_id)

    def reveal_vote(self, dispute_id: int, segment_valid: bool, salt: bytes, /) -> object:
        raise self._no_dispute(dispute_id)

    def resolve(self, dispute_id: int, /) -> object:
        raise self._no_dispute(dispute_id)


class FakeAdjudicator:
    """`client.adjudicator` of the fake: the v0 committee (its disputes are left to the Anvil
    tests)."""

    name = "committee"

    def __init__(self, client: FakeClient) -> None:
        self._client = client

    def resolved(self, dispute_id: int, /) -> bool:
        return self._client.committee.get_dispute(dispute_id).status is DisputeStatus.Resolved


class FakeGame:
    """`client.game` of the fake: its deployment runs the committee, so, like the real
    client's facade on such a deployment, every call raises ``ChainValueError``."""

    def __init__(self, client: FakeClient) -> None:
        self._client = client

    def _absent(self) -> ChainValueError:
        return ChainValueError("this deployment has no BisectionGame")

    def get_game(self, dispute_id: int, /) -> GameView:
        raise self._absent()

    def move_bond(self) -> int:
        raise self._absent()

    def move_bond_due(self, dispute_id: int, /) -> int:
        raise self._absent()

    def post_endpoints(
        self,
        dispute_id: int,
        start_hash: bytes,
        end_hash: bytes,
        start_proof: Sequence[bytes],
        end_proof: Sequence[bytes],
        /,
    ) -> object:
        raise self._absent()

    def arity(self) -> int:
        raise self._absent()

    def pending_hashes(self, game: GameView, /) -> list[bytes]:
        raise self._absent()

    def bisect(self, dispute_id: int, lo: int, hi: int, hashes: Sequence[bytes], /) -> object:
        raise self._absent()

    def respond(
        self, dispute_id: int, lo: int, hi: int, index: int, hashes: Sequence[bytes], /
    ) -> object:
        raise self._absent()

    def escalate(self, dispute_id: int, lo: int, hi: int, /) -> object:
        raise self._absent()

    def claim_timeout(self, dispute_id: int, /) -> object:
        raise self._absent()
