"""The contracts' sample draw in Python: `LibSampling.drawSegments` and each seat's own draw
(`LibAssignment`, docs/SECURITY.md P-27 and P-36), bit for bit, plus the detection
arithmetic of docs/ECONOMICS.md "Detection".

At the first assignment of a job with seed ``seed = keccak256(abi.encode(blockHash, jobId,
merkleRoot))``, each assigned verifier ``v`` draws ``q`` of the job's ``M = N/k`` segments with
seed ``keccak256(abi.encode(seed, "segments", v))`` and also holds the last segment (P-36); the
job's sample is the union of the draws and the last segment in increasing segment order and each
seat's mask marks its own samples (bit i = sample i).

Pure: no web3 (keccak from `veritrain._keccak`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import comb

from veritrain._keccak import keccak256

__all__ = [
    "DENSE_LIMIT",
    "SPARSE_MAX_DRAWS",
    "OwnDraws",
    "detection_probability",
    "draw_segments",
    "job_seed",
    "last_fetched",
    "own_draws",
    "seat_seed",
    "verifier_seed",
]

DENSE_LIMIT = 2048
"""Largest population LibSampling shuffles with a dense array (Fisher-Yates)."""

SPARSE_MAX_DRAWS = 512
"""Most indices a sparse (rejection-sampling) LibSampling shuffle hands out."""


def _word(value: int) -> bytes:
    """``value`` as one ABI word (uint256, big-endian, 32 bytes)."""
    return int(value).to_bytes(32, "big")


def _address_word(address: str) -> bytes:
    """A 20-byte hex address as one ABI word (left-padded)."""
    return bytes.fromhex(address.removeprefix("0x").rjust(64, "0"))


def job_seed(block_hash: bytes, job_id: int, merkle_root: bytes) -> bytes:
    """``keccak256(abi.encode(blockHash, jobId, merkleRoot))``: the assignment's seed (32 bytes)."""
    return keccak256(bytes(block_hash) + _word(job_id) + bytes(merkle_root))


def seat_seed(seed: bytes, verifier: str, tag: str = "segments") -> bytes:
    """``keccak256(abi.encode(seed, tag, verifier))``: a seat's own seed (32 bytes).

    Args:
        seed: the assignment's seed (`job_seed`).
        verifier: the seat's address (hex, 20 bytes).
        tag: ``"segments"`` at the first assignment, ``"samples"`` on a reassignment.
    """
    data = tag.encode()
    padded = data + b"\x00" * (-len(data) % 32)
    # head: seed, offset of the string (3 words), address; tail: length, bytes
    return keccak256(bytes(seed) + _word(96) + _address_word(verifier) + _word(len(data)) + padded)


def verifier_seed(seed: bytes) -> bytes:
    """``keccak256(abi.encode(seed, "verifiers"))``: the seed `LibAssignment` hands the
    StakeManager's ``drawVerifiers`` (32 bytes).

    Args:
        seed: the assignment's seed (`job_seed`).
    """
    data = b"verifiers"
    padded = data + b"\x00" * (-len(data) % 32)
    # head: seed, offset of the string (2 words); tail: length, bytes
    return keccak256(bytes(seed) + _word(64) + _word(len(data)) + padded)


def draw_segments(seed: bytes, segments: int, count: int) -> list[int]:
    """``LibSampling.drawSegments``: ``count`` distinct indices of ``[0, segments)`` in draw
    order, or all of them in increasing order if ``count >= segments``.

    Args:
        seed: 32-byte seed.
        segments: population size M (> 0).
        count: indices wanted q.
    """
    if count >= segments:
        return list(range(segments))
    picked: list[int] = []
    if segments <= DENSE_LIMIT:
        slots: dict[int, int] = {}  # lazy Fisher-Yates: the value at each swapped position
        for i in range(count):
            j = i + int.from_bytes(keccak256(bytes(seed) + _word(i)), "big") % (segments - i)
            at_j, at_i = slots.get(j, j), slots.get(i, i)
            picked.append(at_j)
            slots[j] = at_i
        return picked
    nonce = 0
    while len(picked) < count:
        index = int.from_bytes(keccak256(bytes(seed) + _word(nonce)), "big") % segments
        nonce += 1
        if index not in picked:
            picked.append(index)
    return picked


def last_fetched(segments: Sequence[int], single_seat: bool) -> bool:
    """Whether a seat holding ``segments`` fetches the job's last sample instead of replaying
    it (docs/SECURITY.md P-39, `fetchesLastSample` in the contracts): with one seat per job
    (``single_seat``, `verifiersPerJob == 1`) the seat draws among the segments before the last
    and replays the last one only when it also holds the segment before it; otherwise it
    fetches the final state and checks its hash against the claim, and the solver serves that
    state while the job is sealed. The one seat holds every sample, so for it ``segments`` is
    the job's sample.

    Args:
        segments: the segments the seat holds, increasing (the last is segment M - 1).
        single_seat: whether the deployment seats one verifier per job.
    """
    if not single_seat or not segments:
        return False
    last = int(segments[-1])
    return last != 0 and (len(segments) < 2 or int(segments[-2]) + 1 != last)


@dataclass(frozen=True)
class OwnDraws:
    """A first assignment's sample: ``segments`` (the union, increasing), ``masks`` (per seat,
    in seat order: bit i set = ``segments[i]`` is in that seat's own draw) and ``fetch_only``
    (per seat: the bit of the last sample when the seat fetches it instead of replaying it,
    ``fetchOnlyMaskOf``, docs/SECURITY.md P-39; 0 otherwise)."""

    segments: tuple[int, ...]
    masks: tuple[int, ...]
    fetch_only: tuple[int, ...] = ()


def own_draws(
    seed: bytes, verifiers: Sequence[str], segment_count: int, q: int, single_seat: bool = False
) -> OwnDraws:
    """Each seat's own draw at the first assignment, as `LibAssignment` makes it: ``q`` segments
    of its own plus the last segment, which every seat holds (docs/SECURITY.md P-36: each seat
    then holds the final state before the job may be paid). With one seat per job
    (``single_seat``, P-39) the seat draws among the first M - 1 segments and fetches the last
    one unless it drew segment M - 2.

    Args:
        seed: the assignment's seed (`job_seed`).
        verifiers: seated verifiers, in assignment order.
        segment_count: M = N/k.
        q: samples per seat (``samplesPerJob``).
        single_seat: the deployment seats one verifier per job (``verifiersPerJob == 1``).
    """
    last = segment_count - 1
    pool = last if single_seat and segment_count > 1 else segment_count
    draws = [{*draw_segments(seat_seed(seed, v), pool, q), last} for v in verifiers]
    union = tuple(sorted({last}.union(*draws)))
    index = {s: i for i, s in enumerate(union)}
    masks = tuple(sum(1 << index[s] for s in draw) for draw in draws)
    fetch_only = tuple(
        1 << index[last] if last_fetched(sorted(draw), single_seat) else 0 for draw in draws
    )
    return OwnDraws(union, masks, fetch_only)


def detection_probability(segments: int, faked: int, verifiers: int, q: int) -> float:
    """P(some seat draws a faked segment): each of ``verifiers`` seats draws ``q`` of
    ``segments`` without replacement, independently; ``faked`` of them are faked.

    ``1 - (C(M - c, q) / C(M, q)) ** V`` (one shared draw, as before P-27: V = 1).
    """
    q = min(q, segments)
    miss = comb(segments - faked, q) / comb(segments, q)
    return float(1.0 - miss**verifiers)
