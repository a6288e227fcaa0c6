"""`client.round`: `VerificationRound`: solver claims, sealed verdicts (the end state hashes the
verifiers replayed) and the forced-error draw (docs/FORCED_ERRORS.md), keyed by the submission
id (``client.jobs.submission_of(job_id)``, or `veritrain.commitments.submission_id` for one's
own submission).

Typed calls of `VerificationRound` (ABI loaded from contracts/out). Transacting methods return the
mined receipt or raise a decoded `chain.errors.ContractRevert`; views return plain values or
the frozen views of `chain.types`. Units: wei, seconds, blocks.

Run: not a script; ``client.round.post_claims(...)``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from eth_utils.address import to_checksum_address
from web3.types import TxReceipt

from chain.contracts._base import ContractFacade
from chain.errors import ChainError
from chain.seals import SignedReveal, SignedSeal, seal_signer, sign_seal
from chain.types import (
    ClaimsView,
    DecodedEvent,
    Role,
    RoundOutcome,
    RoundView,
    RoundWindows,
    revealed_approvals,
)
from veritrain.commitments import (
    bytes32_arg,
    claims_hash,
    job_id_of,
    round_hash,
    sample_hash,
    verdict_commitment,
)
from veritrain.forced import bonded_rejects, reveal_bond, verdict_approvals
from veritrain.merkle import claim_end_proofs

if TYPE_CHECKING:
    from chain.client import ChainClient

__all__ = ["RoundFacade"]

_SECRET_REVEALS = ("revealSecret", "revealSecretAndFinalize")
"""The round's calls whose calldata carries the solver's proven ends (`proven_ends`)."""

_NO_SIGNATURE = b""
"""The signature `seals_on_chain` gives a seal the seat sent itself (``commitVerdicts``): the
round stores that seal, and ``proveEquivocation`` checks the other one against it."""


class RoundFacade(ContractFacade):
    """Typed facade of `VerificationRound` for one client (``client.round``).

    Args:
        client: the owning `ChainClient` (signing, nonces, calls).
    """

    HANDLE = "verification_round"

    def __init__(self, client: ChainClient) -> None:
        super().__init__(client)
        self._claims: dict[bytes, ClaimsView] = {}

    def post_claims(
        self, submission_id: bytes, start_hashes: Sequence[bytes], end_hashes: Sequence[bytes]
    ) -> TxReceipt:
        """Solver: post the claims on the sampled segments (one start and one end state hash
        per sample, in sample order), by the verdict deadline.

        Raises:
            ContractRevert: e.g. ``ClaimsAlreadyPosted``, ``LengthMismatch``, ``OutsideWindow``,
                ``ZeroClaim`` (a zero end hash: zero is the unreplayed end).
        """
        return self._client.transact(
            self.contract,
            "postClaims",
            submission_id,
            [bytes(h) for h in start_hashes],
            [bytes(h) for h in end_hashes],
        )

    def assign_and_post_claims(
        self,
        job_id: int,
        segments: Sequence[int],
        start_hashes: Sequence[bytes],
        end_hashes: Sequence[bytes],
    ) -> TxReceipt:
        """Solver: assign the job's verifiers and post the claims in one transaction
        (``assignAndPostClaims``), on the sample ``segments`` the assignment is expected to
        draw (`chain.contracts.jobs.JobsFacade.predict_sample`); one start and one end state
        hash per sample, in sample order. Nothing is assigned when it reverts.

        Raises:
            ContractRevert: e.g. ``SampleMismatch`` (the draw is another sample: the verifier
                set moved), ``UnexpectedJobStatus`` (assigned already: post the claims alone),
                ``WrongJobStatus`` (a stale randomness block: ``assignVerifiers`` re-anchors
                it), ``LengthMismatch``, ``ZeroClaim``.
        """
        return self._client.transact(
            self.contract,
            "assignAndPostClaims",
            job_id,
            sample_hash(segments),
            [bytes(h) for h in start_hashes],
            [bytes(h) for h in end_hashes],
        )

    def commit_verdicts(self, submission_id: bytes, commitment: bytes) -> TxReceipt:
        """Assigned verifier: seal its verdicts, the end state hashes it replayed
        (``veritrain.commitments.verdict_commitment``).

        Raises:
            ContractRevert: e.g. ``ClaimsNotPosted``, ``VerdictAlreadyCommitted``,
                ``OutsideWindow``.
        """
        return self._client.transact(self.contract, "commitVerdicts", submission_id, commitment)

    def reveal_verdicts(
        self, submission_id: bytes, ends: Sequence[bytes], salt: bytes, cover_bonds: bool = True
    ) -> TxReceipt:
        """Assigned verifier: reveal its sealed end state hashes (one per sample, in sample
        order; ``veritrain.forced.UNREPLAYED_END`` where it could not replay). The contract
        approves a sample iff its end equals the posted claim, and the JobManager locks
        ``challengeBond`` wei per non-approval of the seat's own samples from its free verifier
        stake (``InsufficientFreeStake`` when short): `cover_reveal_bonds` counts them here and
        tops the stake up from the wallet first, unless ``cover_bonds`` is False (a caller that
        staked them itself).

        Raises:
            ValueError: an end hash is not 32 bytes, or the count differs from the claims.
            ContractRevert: e.g. ``VerdictCommitmentMismatch``, ``NothingToReveal``,
                ``OutsideWindow``, ``InsufficientFreeStake``, or the top-up's
                ``ERC20InsufficientBalance``.
        """
        ends32 = [bytes32_arg(e, f"end hash {j}") for j, e in enumerate(ends)]
        if cover_bonds:
            self.cover_reveal_bonds(submission_id, ends32)
        claims = self.claims_of(submission_id)
        return self._client.transact(
            self.contract, "revealVerdicts", submission_id, ends32, salt, self._claims_arg(claims)
        )

    def cover_reveal_bonds(self, submission_id: bytes, ends: Sequence[bytes]) -> int:
        """Top this account's free verifier stake up to the reject bonds its reveal of ``ends``
        books (``challengeBond`` wei per end other than the posted claim on the seat's own
        samples, `veritrain.forced.bonded_rejects`; the JobManager locks them from that stake),
        as `reveal_verdicts` does; a seat calls it before handing its reveal to an aggregator,
        whose ``revealVerdictsFor`` skips a seat whose free verifier stake is short
        (docs/SECURITY.md P-38) and whose ``revealVerdictsSigned`` reverts for one. The
        shortfall is staked from the wallet (``stake``, which approves the StakeManager); the
        wallet must hold it (a node calls ``ensure_funds`` first). No Escrow allowance is
        involved.

        Returns:
            The number of rejects (ends other than the claim on its own samples) counted.

        Raises:
            ValueError: an end hash is not 32 bytes, or the count differs from the claims.
            ContractRevert: the top-up reverted, e.g. ``ERC20InsufficientBalance``.
        """
        ends32 = [bytes32_arg(e, f"end hash {j}") for j, e in enumerate(ends)]
        claimed = self.claims_of(submission_id).end_hashes
        if all(verdict_approvals(ends32, claimed)):
            return 0
        job_id = job_id_of(submission_id)
        own = self._client.jobs.sample_mask_of(job_id, self._client.address)
        rejects = bonded_rejects(ends32, claimed, own)
        short = self.reveal_bond_shortfall(rejects)
        if short:
            self._client.stakes.stake(Role.Verifier, short)
        return rejects

    def reveal_bond_shortfall(
        self, rejects: int, account: str | None = None, *, challenge_bond: int | None = None
    ) -> int:
        """Wei ``account`` (default: this client) must stake so that its free verifier stake
        covers the reject bonds a reveal with ``rejects`` non-approvals of its own samples locks
        from that stake (`veritrain.forced.reveal_bond`: all but the first, which the seat's lock
        holds); 0 when it already does or there is none. Reads the free stake, and the
        deployment's challenge bond (wei) unless ``challenge_bond`` gives it; sends nothing.

        Raises:
            Exception: RPC errors.
        """
        if reveal_bond(rejects, 1) == 0:  # nothing to lock: no chain read
            return 0
        if challenge_bond is None:
            challenge_bond = int(self._client.jobs.job_params().challenge_bond)
        bonds = reveal_bond(rejects, challenge_bond)
        free = int(self._client.stakes.free_stake(account or self._client.address, Role.Verifier))
        return max(0, bonds - free)

    def seal_digest(self, submission_id: bytes, commitment: bytes) -> bytes:
        """``sealDigest``: the EIP-712 digest a seat signs for `commit_verdicts_for` (32 bytes)."""
        return bytes(self._client.call(self.contract, "sealDigest", submission_id, commitment))

    def sign_seal(self, submission_id: bytes, commitment: bytes) -> SignedSeal:
        """This client's EIP-712 seal of ``commitment`` (``chain.seals``), for an aggregator to
        submit with `commit_verdicts_for`; signed locally, nothing is sent.

        Raises:
            ValueError: ``submission_id`` or ``commitment`` is not 32 bytes.
        """
        return sign_seal(
            self._client.account,
            self._client.chain_id,
            str(self.contract.address),
            bytes(submission_id),
            bytes(commitment),
        )

    def seal_signer(self, submission_id: bytes, commitment: bytes, signature: bytes) -> str | None:
        """Who signed a seal of ``commitment`` for this round (checksummed), or None for a
        malformed signature: an aggregator's off-chain check before it batches a seal
        (`chain.seals.seal_signer` in this round's EIP-712 domain).

        Raises:
            ValueError: ``submission_id`` or ``commitment`` is not 32 bytes.
        """
        return seal_signer(
            self._client.chain_id,
            str(self.contract.address),
            bytes(submission_id),
            bytes(commitment),
            bytes(signature),
        )

    def commit_verdicts_for(self, submission_id: bytes, seals: Sequence[SignedSeal]) -> TxReceipt:
        """Anyone: submit several seats' signed seals in one transaction (``commitVerdictsFor``);
        a seat that sealed already is skipped by the contract.

        Raises:
            ContractRevert: e.g. ``InvalidSealSignature``, ``NotAssignedVerifier``,
                ``ClaimsNotPosted``, ``OutsideWindow``.
        """
        return self._client.transact(
            self.contract,
            "commitVerdictsFor",
            submission_id,
            [to_checksum_address(s.verifier) for s in seals],
            [bytes32_arg(s.commitment, "commitment") for s in seals],
            [bytes(s.signature) for s in seals],
        )

    def reveal_verdicts_for(
        self, submission_id: bytes, reveals: Sequence[tuple[str, Sequence[bytes], bytes]]
    ) -> TxReceipt:
        """Anyone: reveal several seats' sealed ends in one transaction (``revealVerdictsFor``),
        ``(verifier, ends, salt)`` each; each seat's reject bonds are locked from its free
        verifier stake; a seat that revealed already, or whose free verifier stake does not cover
        its bonds (``RevealSkipped``, docs/SECURITY.md P-38), is skipped by the contract.

        Raises:
            ValueError: an end hash or a salt is not 32 bytes.
            ContractRevert: e.g. ``VerdictCommitmentMismatch``, ``NothingToReveal``,
                ``OutsideWindow``, ``ClaimsMismatch``.
        """
        claims = self.claims_of(submission_id)
        return self._client.transact(
            self.contract,
            "revealVerdictsFor",
            submission_id,
            [to_checksum_address(v) for v, _, _ in reveals],
            [
                [bytes32_arg(e, f"end hash {j}") for j, e in enumerate(ends)]
                for _, ends, _ in reveals
            ],
            [bytes32_arg(salt, "salt") for _, _, salt in reveals],
            self._claims_arg(claims),
        )

    def reveal_verdicts_signed(
        self, submission_id: bytes, reveals: Sequence[SignedReveal]
    ) -> TxReceipt:
        """Anyone: seal and reveal EVERY seat's verdicts in one transaction
        (``revealVerdictsSigned``, docs/SECURITY.md P-40): each entry's commitment is recomputed
        from its ends and salt and its EIP-712 seal signature checked; nothing of the seals is
        stored. Only before any seat sealed on chain and by the verdict deadline; the whole call
        reverts (``InsufficientFreeStake``) if one seat's free verifier stake cannot cover its
        reject bonds (no seat may be skipped: it could then seal after seeing the others' ends).
        A seat whose ends are exactly the claimed ends (it approved every sample) is sent with
        none: the contract opens the claimed ends for it (the same seal, one 32-byte word of
        calldata less per sample, docs/SECURITY.md "Gas cuts").

        Raises:
            ValueError: an end hash or a salt is not 32 bytes.
            ContractRevert: e.g. ``SealsOnChain``, ``InvalidSealSignature``, ``LengthMismatch``,
                ``VerdictsAlreadySubmitted``, ``OutsideWindow``, ``ClaimsMismatch``,
                ``InsufficientFreeStake``.
        """
        claims = self.claims_of(submission_id)
        claimed = [bytes(e) for e in claims.end_hashes]

        def ends_arg(ends: Sequence[bytes]) -> list[bytes]:
            checked = [bytes32_arg(e, f"end hash {j}") for j, e in enumerate(ends)]
            return [] if checked == claimed else checked

        return self._client.transact(
            self.contract,
            "revealVerdictsSigned",
            submission_id,
            [
                (
                    to_checksum_address(r.verifier),
                    ends_arg(r.ends),
                    bytes32_arg(r.salt, "salt"),
                    bytes(r.signature),
                )
                for r in reveals
            ],
            self._claims_arg(claims),
        )

    def prove_equivocation(
        self,
        submission_id: bytes,
        verifier: str,
        seal: tuple[bytes, bytes],
        other: tuple[bytes, bytes],
    ) -> TxReceipt:
        """Anyone: prove that a revealed seat signed two different seals for one submission
        (``proveEquivocation``, docs/SECURITY.md P-40): the seat is slashed one verifierStake
        into the jackpot pool and its verdicts are voided; nothing goes to the prover.

        Args:
            submission_id: the submission.
            verifier: the seat.
            seal: ``(commitment, signature)`` the seat signed (e.g. handed to the aggregator).
            other: the other ``(commitment, signature)``; an empty signature means the seal the
                seat stored on chain itself (``commitVerdicts``).

        Raises:
            ValueError: a commitment is not 32 bytes.
            ContractRevert: e.g. ``NotEquivocation``, ``InvalidSealSignature``, or the
                JobManager's refusal (the seat has not revealed, was slashed, or the job left
                Verifying).
        """
        return self._client.transact(
            self.contract,
            "proveEquivocation",
            submission_id,
            to_checksum_address(verifier),
            bytes32_arg(seal[0], "commitment"),
            bytes(seal[1]),
            bytes32_arg(other[0], "other commitment"),
            bytes(other[1]),
        )

    def seals_on_chain(
        self, submission_id: bytes, *, span: int = 2000
    ) -> dict[str, tuple[bytes, bytes]]:
        """Every seal the chain carries for a submission, read from its ``VerdictsCommitted``
        events, the ``VerdictsRevealed`` events of ``revealVerdictsSigned`` (which stores and
        emits no seal: its seal is recomputed from the opening in the call's calldata,
        `veritrain.commitments.verdict_commitment`) and the calldata of the transactions that
        emitted them: lower-case seat address -> ``(commitment, signature)``. The signature is
        that of the seal in a ``commitVerdictsFor`` or ``revealVerdictsSigned`` call, and empty
        for a seal the seat stored with its own ``commitVerdicts`` (``proveEquivocation`` then
        checks against the stored one); a call made through another contract, which this facade
        cannot decode, also gives an empty signature (and no seal, for a signed reveal). A seat
        after a reassignment keeps its last seal.

        Args:
            submission_id: the submission.
            span: blocks per ``eth_getLogs`` request (blocks).

        Raises:
            RpcUnavailable: the endpoint is down.
        """
        sid = bytes(submission_id)
        seals: dict[str, tuple[bytes, bytes]] = {}
        openings: dict[str, dict[str, tuple[bytes, bytes]]] = {}
        for event in self._round_events(sid, ("VerdictsCommitted", "VerdictsRevealed"), span):
            verifier = str(event.args["verifier"]).lower()
            if event.tx_hash not in openings:
                openings[event.tx_hash] = self._seal_openings(event.tx_hash, sid)
            opened = openings[event.tx_hash].get(verifier)
            if event.event == "VerdictsCommitted":
                signature = opened[1] if opened is not None else _NO_SIGNATURE
                seals[verifier] = (bytes(event.args["commitment"]), signature)
            elif opened is not None and opened[0]:
                # A signed reveal: its seal is only in the call (an own reveal's was emitted).
                seals[verifier] = opened
        return seals

    def _round_events(
        self, sid: bytes, name: str | Sequence[str], span: int
    ) -> Iterator[DecodedEvent]:
        """The submission's events ``name`` (one name or several) in chain order, from the
        block of its claims (none before them) to the latest, ``span`` blocks per
        ``eth_getLogs`` request."""
        names = [name] if isinstance(name, str) else list(name)
        start = self.round_of(sid).claims_block
        if start == 0:
            return
        latest = self._client.block_number()
        block = start
        while block <= latest:
            last = min(latest, block + span - 1)
            yield from self._client.event_logs(
                self.contract, names, block, last, int.from_bytes(sid, "big")
            )
            block = last + 1

    def _seal_openings(self, tx_hash: str, sid: bytes) -> dict[str, tuple[bytes, bytes]]:
        """The seals a ``commitVerdictsFor`` or ``revealVerdictsSigned`` transaction carried for
        ``sid``, by lower-case seat address: ``(commitment, signature)``, the commitment empty
        for ``commitVerdictsFor`` (its ``VerdictsCommitted`` event has it) and recomputed from
        the opening for ``revealVerdictsSigned``; empty for any other call."""
        to, data = self._client.transaction_call(tx_hash)
        if to is None or to.lower() != str(self.contract.address).lower():
            return {}
        try:
            fn, args = self.contract.decode_function_input(data)
        except ValueError:
            return {}
        if bytes(args.get("submissionId", b"")) != sid:
            return {}
        if fn.fn_name == "commitVerdictsFor":
            return {
                str(v).lower(): (b"", bytes(sig))
                for v, sig in zip(args["verifiers"], args["signatures"], strict=True)
            }
        if fn.fn_name == "revealVerdictsSigned":
            job_id = job_id_of(sid)
            claims = args["claims"]
            claimed = claims["endHashes"] if isinstance(claims, dict) else claims[1]
            out: dict[str, tuple[bytes, bytes]] = {}
            for entry in args["reveals"]:
                verifier, ends, salt, signature = (
                    (entry["verifier"], entry["ends"], entry["salt"], entry["signature"])
                    if isinstance(entry, dict)
                    else (entry[0], entry[1], entry[2], entry[3])
                )
                # An entry without ends opened the claimed ends (as the contract opens them).
                opened = ends if len(ends) else claimed
                commitment = verdict_commitment(
                    job_id, str(verifier), [bytes(e) for e in opened], bytes(salt)
                )
                out[str(verifier).lower()] = (commitment, bytes(signature))
            return out
        return {}

    def reveal_secret(
        self,
        submission_id: bytes,
        secret: bytes,
        forced_true_end: bytes,
        proof: Sequence[bytes],
        *,
        and_finalize: bool = False,
    ) -> TxReceipt:
        """Solver: reveal the job's secret after the challenge deadline and prove every claim
        against the Merkle root with one multiproof (``forced_true_end`` is the committed end
        hash of the forced sample, zero when the job carries none). ``proof`` is
        ``MerkleTree.multiproof`` of the checkpoints `veritrain.merkle.claim_leaves` gives for
        the sampled segments: each sample's start and end, one per index, the forced sample's
        end being its true end. The posted claims are passed back from their ``ClaimsPosted``
        event (the contract keeps only their hash). With ``and_finalize``, the job is finalized
        in the same transaction (``revealSecretAndFinalize``: one transaction fewer; it reverts
        if the finalize does).

        Raises:
            ContractRevert: e.g. ``SecretCommitmentMismatch``, ``InvalidClaimsProof`` (the
                multiproof does not prove every claim, or two adjacent samples claim two states
                of the checkpoint they share), ``ForcedClaimMismatch``, ``OutsideWindow``, or a
                finalize error.
        """
        return self._client.transact(
            self.contract,
            "revealSecretAndFinalize" if and_finalize else "revealSecret",
            submission_id,
            secret,
            forced_true_end,
            [bytes(p) for p in proof],
            self._claims_arg(self.claims_of(submission_id)),
        )

    def outcome(self, submission_id: bytes) -> tuple[RoundOutcome, int]:
        """``outcome(submissionId)``: the round's `RoundOutcome` and the forced sample index
        (meaningful only for ``Forced``)."""
        outcome, sample = self._client.call(self.contract, "outcome", submission_id)
        return RoundOutcome(int(outcome)), int(sample)

    def claims_of(self, submission_id: bytes) -> ClaimsView:
        """The solver's posted claims (empty until posted). The contract keeps only their hash,
        bound to the solver's secret commitment, and the block of their ``ClaimsPosted`` event
        (``roundOf``): the claims and the secret commitment are read from that event, checked
        against the hash, and cached (they never change once posted).

        Raises:
            ChainError: the event is missing or does not hash to the stored claims hash (an
                endpoint that drops or alters logs).
        """
        sid = bytes(submission_id)
        cached = self._claims.get(sid)
        if cached is not None:
            return cached
        view = self.round_of(sid)
        block = view.claims_block
        if block == 0:
            return ClaimsView((), (), bytes(32))
        for event in self._client.event_logs(
            self.contract, ["ClaimsPosted"], block, block, int.from_bytes(sid, "big")
        ):
            secret_commitment = bytes(event.args["secretCommitment"])
            starts = tuple(bytes(h) for h in event.args["startHashes"])
            ends = tuple(bytes(h) for h in event.args["endHashes"])
            if round_hash(claims_hash(secret_commitment, starts, ends)) == view.commitment:
                claims = self._claims[sid] = ClaimsView(starts, ends, secret_commitment)
                return claims
        raise ChainError(
            f"no ClaimsPosted event in block {block} matches the claims hash of submission "
            f"0x{sid.hex()}"
        )

    def proven_ends(
        self, submission_id: bytes, *, span: int = 2000
    ) -> list[tuple[bytes, list[bytes]]] | None:
        """The end states the solver proved against the job's Merkle root when it revealed its
        secret, in sample order: ``(state hash, Merkle proof)`` of leaf ``segments[j] + 1``
        (the true end of the forced sample, not its forced claim). Read from the calldata of
        the ``revealSecret`` transaction that emitted ``SecretRevealed``, so a node that
        replayed a sample can serve its end state with a proof the solver no longer gives
        (docs/SECURITY.md P-36). The reveal carries one multiproof of every claim: each end's
        single proof is rebuilt from it (`veritrain.merkle.claim_end_proofs`) with the job's
        sampled segments and tree shape, read from the JobManager, and the whole is checked
        against the job's root.

        Args:
            submission_id: the submission.
            span: blocks per ``eth_getLogs`` request while looking for the reveal (blocks).

        Returns:
            One pair per sample, or None while the secret is not revealed, when it was
            revealed through another contract (a call this facade cannot decode), or when the
            decoded claims and proof do not fold to the job's current root with its current
            segments (a submission that is no longer the job's active one).

        Raises:
            RpcUnavailable: the endpoint is down.
        """
        sid = bytes(submission_id)
        if not self.round_of(sid).revealed:
            return None
        for event in self._round_events(sid, "SecretRevealed", span):
            return self._ends_of_reveal(event.tx_hash, sid)
        return None

    def _ends_of_reveal(self, tx_hash: str, sid: bytes) -> list[tuple[bytes, list[bytes]]] | None:
        """Decode a ``revealSecret`` (or ``revealSecretAndFinalize``) transaction's proven ends
        (`proven_ends`)."""
        to, data = self._client.transaction_call(tx_hash)
        if to is None or to.lower() != str(self.contract.address).lower():
            return None
        try:
            fn, args = self.contract.decode_function_input(data)
        except ValueError:
            return None
        if fn.fn_name not in _SECRET_REVEALS or bytes(args["submissionId"]) != sid:
            return None
        claims = args["claims"]
        starts, ends = (
            (claims["startHashes"], claims["endHashes"])
            if isinstance(claims, dict)
            else (claims[0], claims[1])
        )
        proven = [bytes(h) for h in ends]
        forced, sample = self._forced_of(sid)
        if forced:
            if not 0 <= sample < len(proven):
                return None
            proven[sample] = bytes(args["forcedTrueEnd"])
        job_id = job_id_of(sid)
        segments = [int(s) for s in self._client.jobs.get_assignment(job_id).segments]
        root, total_steps, interval = self._client.jobs.checkpoint_commitment(job_id)
        return claim_end_proofs(
            [bytes(p) for p in args["proof"]],
            root,
            total_steps,
            interval,
            segments,
            [bytes(h) for h in starts],
            proven,
        )

    def _forced_of(self, sid: bytes) -> tuple[bool, int]:
        """Whether the revealed round carried a forced error, and its sample index."""
        outcome, sample = self.outcome(sid)
        return outcome is RoundOutcome.Forced, sample

    @staticmethod
    def _claims_arg(claims: ClaimsView) -> tuple[list[bytes], list[bytes], bytes]:
        """The ``Claims`` calldata argument (start and end hashes, in sample order, and the
        secret commitment they bind)."""
        return list(claims.start_hashes), list(claims.end_hashes), claims.secret_commitment

    def verdict_commitment_of(
        self, submission_id: bytes, verifier: str | None = None
    ) -> tuple[bytes, bool]:
        """A verifier's sealed commitment (zero if none) and whether it was revealed."""
        commitment, revealed = self._client.call(
            self.contract,
            "verdictCommitmentOf",
            submission_id,
            to_checksum_address(verifier or self._client.address),
        )
        return bytes(commitment), bool(revealed)

    def replayed_end_of(
        self, submission_id: bytes, verifier: str, sample_index: int, *, span: int = 2000
    ) -> bytes:
        """The end hash ``verifier`` revealed for a sample it rejected (32 zero bytes when it
        approved, has not revealed, or sealed a zero end), read from its ``VerdictsRevealed``
        event: the round keeps no whole end of a seat's first rejected sample, only a tag in
        its seat's word (``JobManager.endTagOf``, docs/SECURITY.md "Gas cuts").

        Args:
            submission_id: the submission.
            verifier: the seat.
            sample_index: the sample (0-based, in sample order).
            span: blocks per ``eth_getLogs`` request (blocks).

        Raises:
            RpcUnavailable: the endpoint is down.
        """
        sid = bytes(submission_id)
        seat = str(verifier).lower()
        for event in self._round_events(sid, "VerdictsRevealed", span):
            if str(event.args["verifier"]).lower() != seat:
                continue
            ends = [bytes(e) for e in event.args["ends"]]
            if not 0 <= sample_index < len(ends):
                return bytes(32)
            if revealed_approvals(event.args)[sample_index]:
                return bytes(32)
            return ends[sample_index]
        return bytes(32)

    def revealed_verdicts(self, submission_id: bytes, *, span: int = 2000) -> dict[str, list[bool]]:
        """Each seat's approvals as it revealed them (its ``VerdictsRevealed`` events, the one
        record of a reveal, docs/SECURITY.md "Gas cuts"). Unlike ``JobManager.verdictOf``,
        which a forced-error settlement changes (a rejecter's reject of the forced sample is
        cleared there so that it opens no dispute), this is the record as revealed.

        Args:
            submission_id: the submission.
            span: blocks per ``eth_getLogs`` request (blocks).

        Returns:
            ``{seat (checksummed): approvals in sample order}`` (`revealed_approvals`); seats
            that revealed nothing are absent.

        Raises:
            RpcUnavailable: the endpoint is down.
        """
        return {
            to_checksum_address(event.args["verifier"]): revealed_approvals(event.args)
            for event in self._round_events(bytes(submission_id), "VerdictsRevealed", span)
        }

    def fetch_only_mask_of(self, submission_id: bytes, verifier: str) -> int:
        """``fetchOnlyMaskOf``: samples of ``verifier``'s own draw it fetches instead of
        replaying; with one seat per job the last sample unless the seat also holds the segment
        before it (docs/SECURITY.md P-39): the seat checks the final state's hash against the
        claim and keeps the state. 0 otherwise."""
        return int(
            self._client.call(
                self.contract, "fetchOnlyMaskOf", submission_id, to_checksum_address(verifier)
            )
        )

    def forced_end_matches(self, submission_id: bytes, verifier: str) -> bool:
        """``forcedEndMatches``: whether the round carries a forced error and ``verifier``'s
        revealed end for the forced sample equals the solver's true end (revealed with the
        secret): compared on its first 96 bits, all the round keeps of it, or on the seat's
        40-bit tag of them where the forced sample is the first it rejected in its own draw
        (``JobManager.endTagOf``): a real replay, settled with its bond back and the jackpot."""
        return bool(
            self._client.call(
                self.contract,
                "forcedEndMatches",
                submission_id,
                to_checksum_address(verifier),
            )
        )

    def round_of(self, submission_id: bytes) -> RoundView:
        """``roundOf(submissionId)`` as a `RoundView`."""
        commitment, revealed, committed, claims_block = self._client.call(
            self.contract, "roundOf", submission_id
        )
        return RoundView(
            submission_id=bytes(submission_id),
            commitment=bytes(commitment),
            revealed=bool(revealed),
            committed=int(committed),
            claims_block=int(claims_block),
        )

    def windows_of(self, submission_id: bytes) -> RoundWindows:
        """``JobManager.windowsOf(submissionId)``: the verdict-reveal and secret-reveal windows
        (timestamps) the round enforces."""
        a, b, c, d = self._client.call(self._client.jobs.contract, "windowsOf", submission_id)
        return RoundWindows(int(a), int(b), int(c), int(d))

    def draw_forced_error(self, submission_id: bytes, secret: bytes) -> tuple[bool, int]:
        """The contract's forced-error draw for ``secret`` on an assigned job:
        (forced, sample index)."""
        forced, sample = self._client.call(self.contract, "drawForcedError", submission_id, secret)
        return bool(forced), int(sample)

    def forced_claim(self, true_end: bytes) -> bytes:
        """The contract's forced claim of a true end state hash."""
        return bytes(self._client.call(self.contract, "forcedClaim", true_end))

    def forced_error_rate_bps(self) -> int:
        """Share of jobs carrying a forced error, in basis points."""
        return int(self._client.call(self.contract, "forcedErrorRateBps"))

    def forced_error_tag(self) -> bytes:
        """``FORCED_ERROR_TAG`` = keccak256("veritrain.forced-error.v1")."""
        return bytes(self._client.call(self.contract, "FORCED_ERROR_TAG"))
