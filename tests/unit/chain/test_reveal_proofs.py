"""The proven ends of a secret reveal (`RoundFacade.proven_ends`, docs/SECURITY.md P-36): the
reveal carries one multiproof of every claimed checkpoint, and each sample's end proof is rebuilt
from it (`reveal_end_proofs`), decoded here from real ``revealSecret`` calldata on a stub client.

Run: .venv/bin/python -m pytest tests/unit/chain/test_reveal_proofs.py -q
"""

from __future__ import annotations

import hashlib
from types import SimpleNamespace
from typing import Any

import pytest
from web3 import Web3

from chain.contracts.round import RoundFacade, reveal_end_proofs
from chain.types import Assignment
from veritrain.commitments import submission_id
from veritrain.enums import RoundOutcome
from veritrain.forced import forced_claim
from veritrain.merkle import MerkleTree, checkpoint_tree, claim_leaves, verify_checkpoint

N, K = 120, 10  # 13 checkpoints: a tree of depth 4
JOB_ID = 7
SOLVER = "0x" + "5a" * 20
SID = submission_id(JOB_ID, SOLVER)
ROUND = Web3.to_checksum_address("0x" + "0b" * 20)
TX = "0x" + "ab" * 32


def _hashes(n: int) -> list[bytes]:
    return [hashlib.sha256(b"state" + i.to_bytes(4, "big")).digest() for i in range(n)]


HASHES = _hashes(N // K + 1)
TREE = checkpoint_tree(HASHES, K)


def _multiproof(tree: MerkleTree, segments: list[int]) -> list[bytes]:
    indices, _ = claim_leaves(
        segments, [HASHES[s] for s in segments], [HASHES[s + 1] for s in segments]
    )
    return tree.multiproof(indices)


def _reveal_abi(name: str) -> dict[str, Any]:
    """``revealSecret``'s ABI entry: one multiproof (``bytes32[] proof``) for every claim."""
    return {
        "type": "function",
        "name": name,
        "stateMutability": "nonpayable",
        "outputs": [],
        "inputs": [
            {"name": "submissionId", "type": "bytes32", "internalType": "SubmissionId"},
            {"name": "secret", "type": "bytes32", "internalType": "bytes32"},
            {"name": "forcedTrueEnd", "type": "bytes32", "internalType": "bytes32"},
            {"name": "proof", "type": "bytes32[]", "internalType": "bytes32[]"},
            {
                "name": "claims",
                "type": "tuple",
                "internalType": "struct Claims",
                "components": [
                    {"name": "startHashes", "type": "bytes32[]", "internalType": "bytes32[]"},
                    {"name": "endHashes", "type": "bytes32[]", "internalType": "bytes32[]"},
                ],
            },
        ],
    }


CONTRACT = Web3().eth.contract(
    address=ROUND,
    abi=[
        _reveal_abi("revealSecret"),
        _reveal_abi("revealSecretAndFinalize"),
        {
            "type": "function",
            "name": "finalize",
            "stateMutability": "nonpayable",
            "outputs": [],
            "inputs": [{"name": "jobId", "type": "uint256", "internalType": "uint256"}],
        },
    ],
)


class _RevealReader:
    """The `ChainClient` surface `RoundFacade.proven_ends` reads: a revealed round whose
    ``SecretRevealed`` event points at one transaction with calldata `data`."""

    def __init__(
        self,
        data: bytes,
        segments: list[int],
        *,
        forced_sample: int | None = None,
        revealed: bool = True,
        root: bytes = TREE.root,
    ) -> None:
        self.data = data
        self.forced_sample = forced_sample
        self.revealed = revealed

        def assignment(job_id: int) -> Assignment:
            assert job_id == JOB_ID
            return Assignment(("0x" + "11" * 20,), tuple(segments))

        def commitment(job_id: int) -> tuple[bytes, int, int]:
            assert job_id == JOB_ID
            return root, N, K

        self.jobs = SimpleNamespace(get_assignment=assignment, checkpoint_commitment=commitment)

    def handle(self, name: str) -> Any:
        assert name == "verification_round"
        return CONTRACT

    def call(self, contract: Any, fn: str, *args: Any) -> Any:
        assert args == (SID,), (fn, args)
        if fn == "roundOf":
            return b"\x01" * 32, self.revealed, 3
        if fn == "claimsHashOf":
            return b"\x02" * 32, 5
        if fn == "outcome":
            if self.forced_sample is None:
                return int(RoundOutcome.Clean), 0
            return int(RoundOutcome.Forced), self.forced_sample
        raise AssertionError(fn)

    def block_number(self) -> int:
        return 9

    def event_logs(
        self, contract: Any, names: list[str], lo: int, hi: int, first: int
    ) -> list[Any]:
        assert names == ["SecretRevealed"] and first == int.from_bytes(SID, "big")
        return [SimpleNamespace(tx_hash=TX)] if lo <= 5 <= hi else []

    def transaction_call(self, tx_hash: str) -> tuple[str, bytes]:
        assert tx_hash == TX
        return ROUND, self.data


def _calldata(
    segments: list[int],
    *,
    forced_sample: int | None = None,
    fn: str = "revealSecret",
    sid: bytes = SID,
    proof: list[bytes] | None = None,
) -> bytes:
    starts = [HASHES[s] for s in segments]
    ends = [HASHES[s + 1] for s in segments]
    true_end = bytes(32)
    if forced_sample is not None:
        true_end = ends[forced_sample]
        ends[forced_sample] = forced_claim(true_end)
    args = [
        sid,
        b"\x03" * 32,
        true_end,
        _multiproof(TREE, segments) if proof is None else proof,
        (starts, ends),
    ]
    return bytes.fromhex(CONTRACT.encode_abi(fn, args=args)[2:])


@pytest.mark.parametrize("fn", ["revealSecret", "revealSecretAndFinalize"])
@pytest.mark.parametrize("forced_sample", [None, 0, 1, 2])
def test_each_end_proof_is_rebuilt_from_the_reveals_multiproof(fn, forced_sample) -> None:
    """Segments 2 and 3 share checkpoint 3; the forced sample's proven end is its true end."""
    segments = [2, 3, 9]
    reader = _RevealReader(
        _calldata(segments, forced_sample=forced_sample, fn=fn),
        segments,
        forced_sample=forced_sample,
    )
    ends = RoundFacade(reader).proven_ends(SID)  # type: ignore[arg-type]
    assert ends == [(HASHES[s + 1], TREE.proof(s + 1)) for s in segments]
    for s, (end, proof) in zip(segments, ends, strict=True):
        assert verify_checkpoint(proof, TREE.root, N, K, s + 1, end)


def test_no_proven_ends_before_the_reveal_or_from_another_call() -> None:
    segments = [2, 3, 9]
    data = _calldata(segments)
    assert RoundFacade(_RevealReader(data, segments, revealed=False)).proven_ends(SID) is None  # type: ignore[arg-type]
    finalize = bytes.fromhex(CONTRACT.encode_abi("finalize", args=[JOB_ID])[2:])
    assert RoundFacade(_RevealReader(finalize, segments)).proven_ends(SID) is None  # type: ignore[arg-type]
    other = _calldata(segments, sid=submission_id(JOB_ID + 1, SOLVER))
    assert RoundFacade(_RevealReader(other, segments)).proven_ends(SID) is None  # type: ignore[arg-type]
    assert RoundFacade(_RevealReader(b"\x12\x34", segments)).proven_ends(SID) is None  # type: ignore[arg-type]


def test_a_reveal_that_does_not_fit_the_jobs_tree_gives_no_ends() -> None:
    """Segments or a root other than the reveal's (another submission of the job), or a proof
    that does not prove the claims: None, never a proof that does not verify."""
    segments = [2, 3, 9]
    data = _calldata(segments)
    assert RoundFacade(_RevealReader(data, [2, 4, 9])).proven_ends(SID) is None  # type: ignore[arg-type]
    assert RoundFacade(_RevealReader(data, [2, 3])).proven_ends(SID) is None  # type: ignore[arg-type]
    other_root = checkpoint_tree(_hashes(14)[1:], K).root
    assert RoundFacade(_RevealReader(data, segments, root=other_root)).proven_ends(SID) is None  # type: ignore[arg-type]
    proof = _multiproof(TREE, segments)
    tampered = _calldata(segments, proof=[*proof[:-1], bytes(32)])
    assert RoundFacade(_RevealReader(tampered, segments)).proven_ends(SID) is None  # type: ignore[arg-type]


def test_reveal_end_proofs_refuses_claims_the_multiproof_does_not_prove() -> None:
    segments = [0, 1, 11]  # the first and the last checkpoint, 0 and 1 adjacent
    starts = [HASHES[s] for s in segments]
    ends = [HASHES[s + 1] for s in segments]
    proof = _multiproof(TREE, segments)
    assert reveal_end_proofs(proof, TREE.root, N, K, segments, starts, ends) == [
        (HASHES[s + 1], TREE.proof(s + 1)) for s in segments
    ]
    lying = [starts[0], HASHES[5], starts[2]]  # segment 1 starts where segment 0 did not end
    assert reveal_end_proofs(proof, TREE.root, N, K, segments, lying, ends) is None
    wrong_end = [*ends[:2], HASHES[0]]
    assert reveal_end_proofs(proof, TREE.root, N, K, segments, starts, wrong_end) is None
    assert reveal_end_proofs(proof, TREE.root, N, K, segments, starts[:2], ends) is None
    assert reveal_end_proofs(proof, TREE.root, N, 2 * K, segments, starts, ends) is None
    assert reveal_end_proofs([*proof, bytes(32)], TREE.root, N, K, segments, starts, ends) is None
    assert reveal_end_proofs(proof, TREE.root, N, K, [], [], []) is None
