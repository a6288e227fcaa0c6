"""The proven ends of a secret reveal (`RoundFacade.proven_ends`, docs/SECURITY.md P-36): the
reveal carries one multiproof of every claimed checkpoint, and each sample's end proof is rebuilt
from it (`claim_end_proofs`). The decode of a real reveal's calldata on Anvil is
tests/integration/test_chain_forced.py (the lazy-verifier job).

Run: .venv/bin/python -m pytest tests/unit/veritrain/test_core_claim_proofs.py -q
"""

from __future__ import annotations

import hashlib

import pytest

from veritrain.errors import MerkleError
from veritrain.forced import forced_claim
from veritrain.merkle import (
    MerkleTree,
    checkpoint_tree,
    claim_end_proofs,
    claim_indices,
    verify_checkpoint,
)

N, K = 120, 10  # 13 checkpoints: a tree of depth 4


def _hashes(n: int) -> list[bytes]:
    return [hashlib.sha256(b"state" + i.to_bytes(4, "big")).digest() for i in range(n)]


HASHES = _hashes(N // K + 1)
TREE = checkpoint_tree(HASHES, K)


def _multiproof(tree: MerkleTree, segments: list[int]) -> list[bytes]:
    return tree.multiproof(claim_indices(segments))


@pytest.mark.parametrize("forced_sample", [None, 0, 1, 2])
def test_each_end_proof_is_rebuilt_from_the_reveals_multiproof(forced_sample: int | None) -> None:
    """Segments 2 and 3 share checkpoint 3; the forced sample's proven end is its true end (what
    `proven_ends` passes after replacing the forced claim), and a forced claim left in place is
    not proven."""
    segments = [2, 3, 9]
    starts = [HASHES[s] for s in segments]
    ends = [HASHES[s + 1] for s in segments]
    proof = _multiproof(TREE, segments)
    rebuilt = claim_end_proofs(proof, TREE.root, N, K, segments, starts, ends)
    assert rebuilt == [(HASHES[s + 1], TREE.proof(s + 1)) for s in segments]
    for s, (end, single) in zip(segments, rebuilt, strict=True):
        assert verify_checkpoint(single, TREE.root, N, K, s + 1, end)
    if forced_sample is not None:
        claimed = list(ends)
        claimed[forced_sample] = forced_claim(ends[forced_sample])
        assert claim_end_proofs(proof, TREE.root, N, K, segments, starts, claimed) is None


def test_claim_end_proofs_refuses_claims_the_multiproof_does_not_prove() -> None:
    segments = [0, 1, 11]  # the first and the last checkpoint, 0 and 1 adjacent
    starts = [HASHES[s] for s in segments]
    ends = [HASHES[s + 1] for s in segments]
    proof = _multiproof(TREE, segments)
    assert claim_end_proofs(proof, TREE.root, N, K, segments, starts, ends) == [
        (HASHES[s + 1], TREE.proof(s + 1)) for s in segments
    ]
    lying = [starts[0], HASHES[5], starts[2]]  # segment 1 starts where segment 0 did not end
    assert claim_end_proofs(proof, TREE.root, N, K, segments, lying, ends) is None
    wrong_end = [*ends[:2], HASHES[0]]
    assert claim_end_proofs(proof, TREE.root, N, K, segments, starts, wrong_end) is None
    assert claim_end_proofs(proof, TREE.root, N, K, segments, starts[:2], ends) is None
    assert claim_end_proofs(proof, TREE.root, N, 2 * K, segments, starts, ends) is None
    assert claim_end_proofs([*proof, bytes(32)], TREE.root, N, K, segments, starts, ends) is None
    assert claim_end_proofs(proof, TREE.root, N, K, [], [], []) is None


def test_claim_indices_are_each_start_and_end_once_in_order() -> None:
    assert claim_indices([2, 3, 9]) == [2, 3, 4, 9, 10]
    assert claim_indices([0]) == [0, 1]
    assert claim_indices([]) == []
    for bad in ([3, 3], [4, 2]):
        with pytest.raises(MerkleError, match="must increase"):
            claim_indices(bad)
