"""ADVERSARY verifiers, for testing the protocol only, built on the production `VerifierNode`
override points.

- `LazyVerifierNode`: approves every claimed segment and votes valid on every dispute without
  replaying (the verifier's dilemma): it seals the claimed end hashes, echoing public values.
  At a forced error it has approved the forced claim, so it is slashed (and whistleblowers
  challenge its approvals).
- `GriefingVerifierNode`: rejects every segment without replaying (it seals a made-up end,
  `griefing_end`, claiming a replay it did not make: a zero end would be an abstention, which
  costs nothing and earns nothing, P-20) and, as a dissection challenger, always disputes the
  first part (index 0, whatever the hashes say); its committee votes stay honest. It loses its
  bond (and stake) to an honest solver. At a forced error its end for the forced sample is not
  the solver's true end (only a replay yields that), so the sample stays disputed against it,
  and it loses that dispute too instead of sharing the jackpot.
- `EquivocatingVerifierNode`: hands the solver one signed seal and, once the solver shows every
  seat's, stores a second, different seal on chain with its own ``commitVerdicts`` (the move a
  copier of the one-shot call's openings must make, docs/SECURITY.md P-40). The honest seats
  kept the first seal and prove both: it loses one verifierStake and its verdicts are voided.

Run: not a script; ``LazyVerifierNode(client, data_dir)`` or
``veritrain adversary verifier --lazy ...``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from noderuntime.records import CheckResult
from verifier.handoff import hand_off_cutoff
from verifier.node import VerifierNode
from verifier.sealset import solver_seal_set
from veritrain.bisection import Chooser
from veritrain.commitments import new_salt, verdict_commitment

__all__ = [
    "EquivocatingVerifierNode",
    "GriefingVerifierNode",
    "LazyVerifierNode",
    "griefing_end",
    "verifier_node",
]


class LazyVerifierNode(VerifierNode):
    """A verifier that approves and votes valid without replaying (testing only): it seals the
    claimed end hashes, so a forced error's claim is approved and the node is slashed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.log.warning("LAZY verifier (adversary for testing): approves without replaying")

    def judge_claim(
        self, job_id: int, job: Any, segment: int, start_hash: bytes, claimed_end: bytes
    ) -> CheckResult | None:
        """Approve without replaying (no replayed end: the claim itself is sealed)."""
        return CheckResult(ok=True, reason="LAZY: not replayed")

    def judge_dispute(self, dispute: Any) -> bool | None:
        """Vote valid without replaying."""
        return True


class GriefingVerifierNode(VerifierNode):
    """A verifier that rejects everything and disputes the first part of every dissection
    (testing only): it seals a made-up end (`griefing_end`) for every sample, which never
    matches a forced error's true end, so it plays (and loses) a dispute even on the forced
    sample."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.log.warning("REJECT-ALL verifier (griefing adversary for testing): rejects all")

    def judge_claim(
        self, job_id: int, job: Any, segment: int, start_hash: bytes, claimed_end: bytes
    ) -> CheckResult | None:
        """Reject without replaying: seal a made-up end (`griefing_end`)."""
        return CheckResult(
            ok=False,
            reason="REJECT-ALL: griefing adversary, not replayed",
            end=griefing_end(job_id, segment),
        )

    def respond_rule(self) -> Chooser | None:
        """Dispute the first part of every dissection (index 0): the game ends at the
        segment's first step, which the honest defender computed right."""
        return lambda _mine, _theirs: 0


class EquivocatingVerifierNode(VerifierNode):
    """A seat that signs two different seals for one submission (testing only).

    What it attacks: the one-shot ``revealVerdictsSigned`` (docs/SECURITY.md P-40) carries every
    seat's opening (ends and salt) and stores no seal, so nothing on chain orders the seals
    before the openings. A copier that reads that call before it is mined (a public mempool)
    would front-run it with its own ``commitVerdicts`` of the ends it read (the call then
    reverts, ``SealsOnChain``) and reveal them: verdicts without a replay, and at a forced error
    a share of the jackpot. Our solver sends that call only with every seat's opening, so the
    copier hands over its signed seal and waits until the solver's ``GET /seals`` shows every
    seat's, the moment the honest seats open theirs to the solver; then it stores a second,
    different seal on chain with its own ``commitVerdicts`` and never opens the first. The solver,
    seeing a seal on chain, falls back to its two batches (``commitVerdictsFor`` of the other
    seals, ``revealVerdictsFor``), and this seat reveals its second seal: on chain, exactly a
    copier's moves. A devnet mines each transaction at once, so there is no pending call to read:
    the second seal holds this seat's own ends under a fresh salt (`second_ends`, where a copier
    puts the ends it read).

    What stops it (P-40): each honest seat kept the first seal, signed by this seat, before it
    opened its own (`VerifierJob.seen_seals`, `verifier.sealset.open_to_solver`); once revealed,
    it finds another seal on chain and sends ``proveEquivocation`` with both, the stored one
    with an empty signature (`verifier.sealset.prove_equivocations`), before the challenge
    deadline. This seat loses one verifierStake to the jackpot pool, its verdicts are voided
    and its fee is withheld, so copying never pays.

    Args:
        *args: `VerifierNode` arguments.
        equivocate_after: chain seconds it waits once the solver's seal set is complete before it
            stores its second seal (the honest seats open theirs within a round or two).
        **kwargs: `VerifierNode` keyword arguments.

    Attributes:
        first_seals: job id -> ``(commitment, signature)`` of the seal it handed the solver (what
            the other seats hold).
        second_seals: job id -> the commitment it stored on chain instead (32 bytes).
    """

    def __init__(self, *args: Any, equivocate_after: float = 3.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.equivocate_after = equivocate_after
        self.first_seals: dict[int, tuple[bytes, bytes]] = {}
        self.second_seals: dict[int, bytes] = {}
        self._complete_at: dict[int, int] = {}  # job -> chain time the seal set was complete
        self.log.warning("EQUIVOCATING verifier (adversary for testing): signs two seals")

    def second_ends(self, job_id: int, submission: bytes, ends: list[bytes]) -> list[bytes]:
        """The ends of the second seal (32 bytes each, one per sample): its own again (with an
        honest solver there is nothing else to copy); a copier returns the ends it read."""
        return list(ends)

    def open_seal(
        self,
        job_id: int,
        submission: bytes,
        job: Any,
        ends: list[bytes],
        salt: bytes,
        commitment: bytes,
    ) -> bool:
        """Never open the handed seal: once the solver's seal set holds every seat's and
        `equivocate_after` seconds have passed, persist a second opening (`second_ends`, a fresh
        salt) and store its commitment with ``commitVerdicts``; this seat's reveal then opens
        the second seal. Until the set is complete it waits, and past the seats' hand-off cutoff
        the node's own fallback stores the first seal (no equivocation then)."""
        if job_id in self.second_seals:
            return True  # sent: the chain shows it next round
        seen = solver_seal_set(self, job_id, job, submission, commitment)
        now = self.chain_time()
        window = int(self.job_params().verdict_window)
        if seen is None or now >= hand_off_cutoff(int(job.verdict_deadline), window):
            return False
        if now < self._complete_at.setdefault(job_id, now) + self.equivocate_after:
            return False
        second_ends, second_salt = self.second_ends(job_id, submission, ends), new_salt()
        second = verdict_commitment(job_id, self.client.address, second_ends, second_salt)
        # persisted BEFORE the commit, so that its own reveal opens the second seal
        self._record_job(job_id, ends=second_ends, salt=second_salt)
        receipt = None
        try:
            receipt = self.send(
                f"commitVerdicts job {job_id} (SECOND seal: 0x{second.hex()[:12]}..)",
                self.client.round.commit_verdicts,
                submission,
                second,
            )
        finally:
            if receipt is None:  # not stored: the first seal is still the one to reveal
                self._record_job(job_id, ends=list(ends), salt=salt)
        if receipt is None:
            return False
        self.first_seals[job_id] = seen[self.client.address.lower()]
        self.second_seals[job_id] = second
        return True


def griefing_end(job_id: int, segment: int) -> bytes:
    """The end a `GriefingVerifierNode` seals for a segment: keccak256 of a label, the job and
    the segment (32 bytes), never a claimed end, a true end or zero."""
    from veritrain._keccak import keccak256

    return keccak256(
        b"veritrain.adversary.griefing-end"
        + job_id.to_bytes(32, "big")
        + segment.to_bytes(32, "big")
    )


def verifier_node(
    client: Any,
    data_dir: Path,
    *,
    lazy: bool = False,
    reject_all: bool = False,
    equivocate: bool = False,
    **kwargs: Any,
) -> VerifierNode:
    """A verifier node: honest, lazy, griefing or equivocating.

    Args:
        client: the chain client.
        data_dir: the node's directory.
        lazy: a `LazyVerifierNode`.
        reject_all: a `GriefingVerifierNode`.
        equivocate: an `EquivocatingVerifierNode`.
        **kwargs: `VerifierNode` keyword arguments.

    Raises:
        ValueError: more than one of ``lazy``, ``reject_all`` and ``equivocate``.
    """
    if lazy + reject_all + equivocate > 1:
        raise ValueError("a verifier is at most one of lazy, griefing and equivocating")
    if lazy:
        return LazyVerifierNode(client, data_dir, **kwargs)
    if reject_all:
        return GriefingVerifierNode(client, data_dir, **kwargs)
    if equivocate:
        return EquivocatingVerifierNode(client, data_dir, **kwargs)
    return VerifierNode(client, data_dir, **kwargs)
