"""Forced errors (docs/FORCED_ERRORS.md): the draw and the claims, shared by every role.

The commitments (secret, sealed verdicts) live in `veritrain.commitments`.

The solver draws a secret per job and commits to it with its checkpoints; once the sample is
known, the secret decides whether the job carries a forced error and on which sample. The
solver then claims a deliberately wrong end hash there (`forced_claim`), which only a verifier
that actually replays can reject. Verifiers seal their verdicts (`verdict_commitment`) and
reveal them later, so a lazy verifier cannot copy a diligent one.

A verdict is the end state hash the verifier computed by replay, one per sample: the contract
approves sample j iff ``ends[j]`` equals the claimed end (`verdict_approvals`), and a verifier
that could not replay seals `UNREPLAYED_END` (a claim is never zero, so that is never an
approval): an abstention, which disputes the sample like a rejection but is never slashed when
the segment is valid and never paid (docs/SECURITY.md P-20). At a forced error the true end
hides behind ``forced_claim(true_end)``, so only a
replay yields it: a rejecter whose sealed end equals the true end gets its bond back and the
jackpot; any other rejecter keeps the sample disputed and plays the dispute against the
solver's true end (a lazy rejecter loses it; a solver that cheated inside the forced segment
is caught).

Every function here is byte-for-byte the Solidity formula of `VerificationRound` (ABI encoding
through eth_abi), so a node can compute locally what the contract will check::

    secret = new_secret()                                          # veritrain.commitments
    commitment = secret_commitment(job_id, solver, secret)         # commitCheckpoints
    draw = draw_forced_error(secret, job_id, segments, rate_bps)   # after assignVerifiers
    claims = build_claims(segments, k, state_hashes, draw)         # postClaims
    ends = [claimed, replayed end or UNREPLAYED_END, ...]          # one per sample
    verdict_commitment(job_id, verifier, ends, salt)               # commitVerdicts
    verdict_approvals(ends, claims.end_hashes)                     # what revealVerdicts records

Hashes are 32-byte ``bytes``; addresses 0x-hex strings.

Run: not a script; ``from veritrain.forced import draw_forced_error``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from eth_abi.abi import encode as abi_encode

from veritrain._keccak import keccak256
from veritrain.commitments import bytes32_arg as _bytes32

__all__ = [
    "BPS",
    "FORCED_ERROR_TAG",
    "UNREPLAYED_END",
    "Claims",
    "ForcedDraw",
    "bonded_rejects",
    "build_claims",
    "draw_forced_error",
    "eligible_samples",
    "forced_claim",
    "forced_draw",
    "verdict_approvals",
]

BPS = 10_000
"""Basis points in one: the forced-error rate is `rate_bps / BPS` of jobs."""

FORCED_ERROR_TAG = keccak256(b"veritrain.forced-error.v1")
"""``keccak256("veritrain.forced-error.v1")``, the domain tag of a forced claim."""

UNREPLAYED_END = bytes(32)
"""The end hash a verifier seals for a sample it could not replay (start checkpoint unavailable
or not matching the claimed start): 32 zero bytes. ``postClaims`` refuses a zero claimed end
(``ZeroClaim``), so this end is never an approval and never the true end of a forced error: the
contract records it as an abstention (``Verdict.Abstain``, docs/SECURITY.md P-20)."""


def forced_draw(secret: bytes, job_id: int, segments: Sequence[int]) -> bytes:
    """``keccak256(abi.encode(bytes32 secret, uint256 jobId, uint32[] segments))``.

    Args:
        secret: the solver's secret.
        job_id: the job.
        segments: the sampled segments of `getAssignment`, in sample order.
    """
    return keccak256(
        abi_encode(
            ["bytes32", "uint256", "uint32[]"],
            [_bytes32(secret, "secret"), int(job_id), [int(s) for s in segments]],
        )
    )


def eligible_samples(segments: Sequence[int]) -> list[int]:
    """Samples that may carry the forced error, in increasing sample index.

    Sample j is eligible when no sampled segment starts where segment ``s_j`` ends (no i with
    ``s_i == s_j + 1``): otherwise the served start checkpoint of that next sample would reveal
    the true end of ``s_j``. The sample with the largest segment is always eligible; when a
    single seat only fetches it (`veritrain.sampling.last_fetched`), a forced error there tests
    the fetch (docs/SECURITY.md P-39, E-3).
    """
    sampled = {int(s) for s in segments}
    return [j for j, s in enumerate(segments) if int(s) + 1 not in sampled]


@dataclass(frozen=True)
class ForcedDraw:
    """Outcome of the forced-error draw for one job.

    Attributes:
        forced: whether the job carries a forced error.
        sample: the forced sample index (meaningful only when `forced`; 0 otherwise).
        draw: the raw 32-byte draw.
    """

    forced: bool
    sample: int
    draw: bytes


def draw_forced_error(
    secret: bytes, job_id: int, segments: Sequence[int], rate_bps: int
) -> ForcedDraw:
    """The forced-error draw, as ``VerificationRound.drawForcedError(jobId, secret)``.

    The job is forced iff ``uint256(draw) % 10_000 < rate_bps``; the forced sample is
    ``eligible[uint256(keccak256(abi.encode(draw, uint256(1)))) % eligible.length]``.

    Args:
        secret: the solver's secret.
        job_id: the job.
        segments: the sampled segments, in sample order.
        rate_bps: the round's `forcedErrorRateBps` (0..10_000).

    Raises:
        ValueError: `rate_bps` out of range.
    """
    if not 0 <= rate_bps <= BPS:
        raise ValueError(f"forced-error rate {rate_bps} bps is not in [0, {BPS}]")
    draw = forced_draw(secret, job_id, segments)
    eligible = eligible_samples(segments)
    forced = int.from_bytes(draw, "big") % BPS < rate_bps and bool(eligible)
    if not forced:
        return ForcedDraw(False, 0, draw)
    pick = int.from_bytes(keccak256(abi_encode(["bytes32", "uint256"], [draw, 1])), "big")
    return ForcedDraw(True, eligible[pick % len(eligible)], draw)


def forced_claim(true_end: bytes) -> bytes:
    """``keccak256(abi.encodePacked(FORCED_ERROR_TAG, trueEnd))``: the forced end claim."""
    return keccak256(FORCED_ERROR_TAG + _bytes32(true_end, "true end hash"))


@dataclass(frozen=True)
class Claims:
    """The solver's claims on the sampled segments (`postClaims`), in sample order.

    Attributes:
        start_hashes: state hash at step ``s_j * k`` for each sample j.
        end_hashes: claimed state hash at step ``(s_j + 1) * k`` (the forced claim for the
            forced sample).
        forced_sample: the forced sample index, or None.
        forced_true_end: the committed end hash of the forced sample (zero when none).
    """

    start_hashes: tuple[bytes, ...]
    end_hashes: tuple[bytes, ...]
    forced_sample: int | None
    forced_true_end: bytes


def build_claims(
    segments: Sequence[int], state_hashes: Sequence[bytes], draw: ForcedDraw
) -> Claims:
    """Claims for the sampled segments from the committed state hashes (leaf i = step i*k).

    Args:
        segments: the sampled segments, in sample order.
        state_hashes: the committed state hashes of steps 0, k, ..., N (what the tree is over).
        draw: the job's forced-error draw.

    Raises:
        ValueError: a segment out of range of `state_hashes`.
    """
    starts: list[bytes] = []
    ends: list[bytes] = []
    for s in segments:
        if not 0 <= int(s) < len(state_hashes) - 1:
            raise ValueError(f"segment {s} out of range for {len(state_hashes)} leaves")
        starts.append(bytes(state_hashes[int(s)]))
        ends.append(bytes(state_hashes[int(s) + 1]))
    true_end = b"\x00" * 32
    sample: int | None = None
    if draw.forced:
        sample = draw.sample
        true_end = ends[sample]
        ends[sample] = forced_claim(true_end)
    return Claims(tuple(starts), tuple(ends), sample, true_end)


def verdict_approvals(ends: Sequence[bytes], claimed_ends: Sequence[bytes]) -> list[bool]:
    """The verdicts ``revealVerdicts`` records for sealed ``ends``: approve sample j iff
    ``ends[j] == claimed_ends[j]``, else reject (a ``challengeBond`` bond on a sample of the
    seat's own draw, `bonded_rejects`).

    Args:
        ends: the verifier's end state hashes (32 bytes each), in sample order.
        claimed_ends: the solver's posted end hashes (``claims_of(sid).end_hashes``).

    Returns:
        One approval per sample (True = approve).

    Raises:
        ValueError: the lengths differ (``LengthMismatch`` on chain) or a hash is not 32 bytes.
    """
    if len(ends) != len(claimed_ends):
        raise ValueError(f"{len(ends)} ends for {len(claimed_ends)} claims")
    return [
        _bytes32(e, f"end hash {j}") == _bytes32(c, f"claimed end hash {j}")
        for j, (e, c) in enumerate(zip(ends, claimed_ends, strict=True))
    ]


def bonded_rejects(ends: Sequence[bytes], claimed_ends: Sequence[bytes], own_mask: int) -> int:
    """How many reject bonds a seat's reveal of ``ends`` books: its non-approvals (an end other
    than the claim, an abstention included) on the samples of its own draw, bit j of
    ``own_mask`` (``sampleMaskOf``); its ends elsewhere are ignored (docs/SECURITY.md P-27).
    One ``challengeBond`` each: the first is in the seat's lock since its draw, the others are
    locked at the reveal (`reveal_bond`).

    Raises:
        ValueError: as `verdict_approvals`.
    """
    approvals = verdict_approvals(ends, claimed_ends)
    return sum(1 for j, ok in enumerate(approvals) if not ok and (own_mask >> j) & 1)


def reveal_bond(rejects: int, challenge_bond: int) -> int:
    """Verifier stake (wei) a reveal with ``rejects`` bonded non-approvals (`bonded_rejects`)
    locks from the seat's free stake: ``challenge_bond`` wei for each but the first, which the
    seat's lock has held since its draw (verifierStake + challengeBond, docs/SECURITY.md "Gas
    cuts"). ``revealVerdictsFor`` skips a seat whose free verifier stake cannot cover it (P-38)
    and ``revealVerdictsSigned`` reverts.
    """
    return max(rejects - 1, 0) * challenge_bond
