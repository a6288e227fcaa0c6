"""The proven ends of a secret reveal (`RoundFacade.proven_ends`, docs/SECURITY.md P-36): the
reveal carries one multiproof of every claimed checkpoint, and each sample's end proof is rebuilt
from it (`reveal_end_proofs`). The decode of a real reveal's calldata on Anvil is
tests/integration/test_chain_forced.py (the lazy-verifier job).

Run: .venv/bin/python -m pytest tests/unit/chain/test_reveal_proofs.py -q
"""

from __future__ import annotations

import hashlib

import pytest

from chain.contracts.round import reveal_end_proofs
from veritrain.forced import forced_claim
from veritrain.merkle import MerkleTree, checkpoint_tree, claim_leaves, verify_checkpoint

N, K = 120, 10  # 13 checkpoints: a tree of depth 4


def _hashes(n: int) -> list[bytes]:
    return [hashlib.sha256(b"state" + i.to_bytes(4, "big")).digest() for i in range(n)]


HASHES = _hashes(N // K + 1)
TREE = checkpoint_tree(HASHES, K)


def _multiproof(tree: MerkleTree, segments: list[int]) -> list[bytes]:
    indices, _ = claim_leaves(
        segments, [HASHES[s] for s in segments], [HASHES[s + 1] for s in segments]
    )
    return tree.multiproof(indices)


@pytest.mark.parametrize("forced_sample", [None, 0, 1, 2])
def test_each_end_proof_is_rebuilt_from_the_reveals_multiproof(forced_sample: int | None) -> None:
    """Segments 2 and 3 share checkpoint 3; the forced sample's proven end is its true end (what
    `proven_ends` passes after replacing the forced claim), and a forced claim left in place is
    not proven."""
    segments = [2, 3, 9]
    starts = [HASHES[s] for s in segments]
    ends = [HASHES[s + 1] for s in segments]
    proof = _multiproof(TREE, segments)
    rebuilt = reveal_end_proofs(proof, TREE.root, N, K, segments, starts, ends)
    assert rebuilt == [(HASHES[s + 1], TREE.proof(s + 1)) for s in segments]
    for s, (end, single) in zip(segments, rebuilt, strict=True):
        assert verify_checkpoint(single, TREE.root, N, K, s + 1, end)
    if forced_sample is not None:
        claimed = list(ends)
        claimed[forced_sample] = forced_claim(ends[forced_sample])
        assert reveal_end_proofs(proof, TREE.root, N, K, segments, starts, claimed) is None


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
