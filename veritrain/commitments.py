"""Every commitment formula of the protocol, and the random secrets and salts behind them.

One home for the hashes a node computes locally and a contract recomputes on chain, each
byte-for-byte the Solidity formula (ABI encoding through eth_abi, keccak256):

- `leaf_hash(index, step, state_hash)`: checkpoint `index`'s leaf of the job's positional
  Merkle tree (`LibCheckpoint.leafHash`, `veritrain.merkle`).
- `secret_commitment(job_id, solver, secret)`: the solver's forced-error secret, committed with
  its checkpoints (`VerificationRound`, docs/FORCED_ERRORS.md).
- `verdict_commitment(job_id, verifier, ends, salt)`: a verifier's sealed verdicts: the end
  state hash it computed by replay for each sampled segment (`veritrain.forced.UNREPLAYED_END`
  where it could not replay); the contract approves a sample iff its end equals the claim.
- `vote_commitment(dispute_id, voter, segment_valid, salt)`: an arbiter's sealed committee vote
  (`ArbitrationCommittee.commitVote`).
- `claims_hash(secret_commitment, start_hashes, end_hashes)`: what the verification round
  keeps of a solver's posted claims, bound to its secret commitment (the claims themselves live
  in its ``ClaimsPosted`` event).
- `submission_id(job_id, solver)`: the key of one solver's submission for a job
  (``SubmissionId``: the pair packed, ``jobId << 160 | solver``, no hash); the verification
  round is keyed by it (``JobManager.submissionOf(jobId)`` reads it on chain).
- `new_secret()`, `new_salt()`: 32 cryptographically random bytes.

Hashes are 32-byte ``bytes``; addresses 0x-hex strings (any case).

Run: not a script; ``from veritrain.commitments import verdict_commitment``.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from eth_abi.abi import encode as abi_encode

from veritrain._keccak import keccak256
from veritrain.errors import MerkleError

__all__ = [
    "claims_hash",
    "job_id_of",
    "leaf_hash",
    "new_salt",
    "new_secret",
    "round_hash",
    "sample_hash",
    "secret_commitment",
    "submission_id",
    "verdict_commitment",
    "vote_commitment",
]


def submission_id(job_id: int, solver: str) -> bytes:
    """``jobId << 160 | solver`` as 32 big-endian bytes: the `SubmissionId` of ``solver``'s
    submission for ``job_id`` (``LibSubmission.id`` in contracts/src/types/SubmissionId.sol; the
    pair itself, so the chain keeps no word mapping an id back to it).

    Raises:
        ValueError: ``solver`` is not a 20-byte 0x-hex address, or ``job_id`` is negative or not
            below 2**96 (the contract's bound on job ids).
    """
    if not 0 <= job_id < 2**96:
        raise ValueError(f"job id {job_id} is outside 0 .. 2**96 - 1")
    return ((job_id << 160) | int(address_arg(solver), 16)).to_bytes(32, "big")


def job_id_of(submission_id: bytes) -> int:
    """The job of a submission: the inverse of `submission_id` (``SubmissionId.jobIdOf`` in
    contracts/src/types/SubmissionId.sol), the id's top 96 bits.

    Raises:
        ValueError: ``submission_id`` is not 32 bytes.
    """
    sid = bytes(submission_id)
    if len(sid) != 32:
        raise ValueError(f"a submission id is 32 bytes, got {len(sid)}")
    return int.from_bytes(sid, "big") >> 160


def new_secret() -> bytes:
    """A uniformly random 32-byte secret (one per job, kept in the solver's node state)."""
    return secrets.token_bytes(32)


def new_salt() -> bytes:
    """A uniformly random 32-byte salt for a sealed verdict or a committee vote."""
    return secrets.token_bytes(32)


def address_arg(value: str) -> str:
    """A 0x address as eth_abi encodes it (lower case, so any checksum case is accepted).

    Raises:
        ValueError: not a 20-byte 0x-hex address.
    """
    text = value.lower()
    if not text.startswith("0x") or len(text) != 42:
        raise ValueError(f"not a 20-byte 0x address: {value!r}")
    return text


def bytes32_arg(value: bytes, what: str) -> bytes:
    """`value` checked to be 32 bytes.

    Raises:
        ValueError: another length.
    """
    data = bytes(value)
    if len(data) != 32:
        raise ValueError(f"{what} must be 32 bytes, got {len(data)}")
    return data


def leaf_hash(index: int, step: int, state_hash: bytes) -> bytes:
    """Leaf of checkpoint `index`:
    `keccak256(bytes.concat(keccak256(abi.encode(index, step, hash))))`.

    The index and step in the leaf make it meaningful at one position of the positional tree
    only (`veritrain.merkle`, docs/SECURITY.md P-21); the double hash keeps an inner node from
    being read as a leaf.

    Args:
        index: the checkpoint index i (uint256), its position in the tree.
        step: the checkpoint's step, i * k (uint256).
        state_hash: its 32-byte state hash (bytes32).

    Returns:
        The 32-byte leaf, equal to Solidity `LibCheckpoint.leafHash(index, step, stateHash)`.

    Raises:
        MerkleError: if `index` or `step` is out of uint256 range or `state_hash` is not 32
            bytes.
    """
    if not 0 <= index < 2**256:
        raise MerkleError(f"index {index} out of uint256 range")
    if not 0 <= step < 2**256:
        raise MerkleError(f"step {step} out of uint256 range")
    if len(state_hash) != 32:
        raise MerkleError(f"state hash must be 32 bytes, got {len(state_hash)}")
    return keccak256(
        keccak256(index.to_bytes(32, "big") + step.to_bytes(32, "big") + bytes(state_hash))
    )


def secret_commitment(job_id: int, solver: str, secret: bytes) -> bytes:
    """``keccak256(abi.encode(uint256 jobId, address solver, bytes32 secret))``.

    Args:
        job_id: the job.
        solver: the job's solver (0x address).
        secret: the solver's 32-byte secret.

    Returns:
        The 32-byte commitment.

    Raises:
        ValueError: a malformed address or secret.
    """
    return keccak256(
        abi_encode(
            ["uint256", "address", "bytes32"],
            [int(job_id), address_arg(solver), bytes32_arg(secret, "secret")],
        )
    )


def verdict_commitment(job_id: int, verifier: str, ends: Sequence[bytes], salt: bytes) -> bytes:
    """``keccak256(abi.encode(uint256 jobId, address verifier, bytes32[] ends, bytes32 salt))``.

    Args:
        job_id: the job.
        verifier: the assigned verifier (0x address).
        ends: one 32-byte end state hash per sampled segment, in sample order: the end the
            verifier computed by replay (the claimed end to approve;
            `veritrain.forced.UNREPLAYED_END` for a sample it could not replay).
        salt: 32 random bytes kept until the reveal.

    Returns:
        The 32-byte commitment.

    Raises:
        ValueError: a malformed address, end hash or salt.
    """
    return keccak256(
        abi_encode(
            ["uint256", "address", "bytes32[]", "bytes32"],
            [
                int(job_id),
                address_arg(verifier),
                [bytes32_arg(e, f"end hash {j}") for j, e in enumerate(ends)],
                bytes32_arg(salt, "salt"),
            ],
        )
    )


def vote_commitment(dispute_id: int, voter: str, segment_valid: bool, salt: bytes) -> bytes:
    """``keccak256(abi.encode(uint256 disputeId, address voter, bool segmentValid, bytes32 salt))``.

    Args:
        dispute_id: the dispute.
        voter: the arbiter's address.
        segment_valid: the vote.
        salt: 32 random bytes kept secret until the reveal.

    Returns:
        The 32-byte commitment.

    Raises:
        ValueError: a malformed address or salt.
    """
    return keccak256(
        abi_encode(
            ["uint256", "address", "bool", "bytes32"],
            [int(dispute_id), address_arg(voter), bool(segment_valid), bytes32_arg(salt, "salt")],
        )
    )


def sample_hash(segments: Sequence[int]) -> bytes:
    """``keccak256(abi.encode(uint32[] segments))``: the hash of a sample (segment indices in
    sample order) that `VerificationRound.assignAndPostClaims` checks the draw against.

    Raises:
        ValueError: a segment index is negative or not below 2**32.
    """
    values = [int(s) for s in segments]
    if any(not 0 <= v < 2**32 for v in values):
        raise ValueError("segment indices must be uint32")
    return keccak256(abi_encode(["uint32[]"], [values]))


ROUND_HASH_BITS = 208
"""Bits of a secret commitment or claims hash the verification round keeps (its top 208: the
round's one storage word, ``RoundWord`` in contracts/src/types/RoundWord.sol, holds the rest)."""


def round_hash(value: bytes) -> bytes:
    """``roundHash``: a 32-byte hash with its low 48 bits cleared, what the verification round
    keeps of a secret commitment or of a claims hash (`claims_hash`), what ``roundOf`` returns of
    it and what ``ClaimsPosted`` announces of the secret commitment (the ``Claims`` a call passes
    back carry that value).

    Raises:
        ValueError: ``value`` is not 32 bytes.
    """
    if len(value) != 32:
        raise ValueError(f"a hash is 32 bytes, not {len(value)}")
    drop = 256 - ROUND_HASH_BITS
    return ((int.from_bytes(value, "big") >> drop) << drop).to_bytes(32, "big")


def claims_hash(
    secret_commitment: bytes, start_hashes: Sequence[bytes], end_hashes: Sequence[bytes]
) -> bytes:
    """``keccak256(abi.encode(bytes32 secretCommitment, bytes32[] startHashes,
    bytes32[] endHashes))``: the hash whose top 208 bits (`round_hash`)
    `VerificationRound.postClaims` stores of a solver's claims, in sample order, in place of the
    secret commitment it binds (as the round kept it: ``round_hash(secret_commitment(...))``).

    Returns:
        The 32-byte hash.
    """
    return keccak256(
        abi_encode(
            ["bytes32", "bytes32[]", "bytes32[]"],
            [
                bytes(secret_commitment),
                [bytes(h) for h in start_hashes],
                [bytes(h) for h in end_hashes],
            ],
        )
    )
