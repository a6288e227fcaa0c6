"""Merkle tree/proofs: OpenZeppelin MerkleProof semantics (commutative keccak, double-hashed
leaves, odd node carried up)."""

from __future__ import annotations

import hashlib

import pytest
from eth_abi import encode as abi_encode
from hypothesis import given, settings
from hypothesis import strategies as st

from veritrain._keccak import keccak256
from veritrain.commitments import leaf_hash
from veritrain.errors import MerkleError
from veritrain.merkle import MerkleTree, checkpoint_tree, commutative_keccak256, verify_proof


def _hashes(n: int) -> list[bytes]:
    return [hashlib.sha256(i.to_bytes(4, "big")).digest() for i in range(n)]


def _reference_root(leaves: list[bytes]) -> bytes:
    """Independent recursive definition: pair left to right, carry the odd last node up."""
    if len(leaves) == 1:
        return leaves[0]
    nxt = []
    for i in range(0, len(leaves), 2):
        if i + 1 < len(leaves):
            a, b = sorted((leaves[i], leaves[i + 1]))
            nxt.append(keccak256(a + b))
        else:
            nxt.append(leaves[i])
    return _reference_root(nxt)


def test_leaf_hash_matches_solidity_encoding():
    h = hashlib.sha256(b"x").digest()
    inner = keccak256(abi_encode(["uint256", "bytes32"], [25, h]))
    assert leaf_hash(25, h) == keccak256(inner)


def test_commutative():
    a, b = _hashes(2)
    assert (
        commutative_keccak256(a, b)
        == commutative_keccak256(b, a)
        == keccak256(min(a, b) + max(a, b))
    )


def test_single_leaf():
    tree = checkpoint_tree(_hashes(1), 25)
    assert tree.root == leaf_hash(0, _hashes(1)[0])
    assert tree.proof(0) == []
    assert verify_proof([], tree.root, tree.leaves[0])


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 17, 33])
def test_all_proofs_verify(n):
    hashes = _hashes(n)
    tree = checkpoint_tree(hashes, 10)
    assert len(tree) == n
    assert tree.root == _reference_root([leaf_hash(i * 10, h) for i, h in enumerate(hashes)])
    for i in range(n):
        assert verify_proof(tree.proof(i), tree.root, leaf_hash(i * 10, hashes[i]))


def test_thirteen_leaves_wrong_proofs_fail():
    hashes = _hashes(13)
    tree = checkpoint_tree(hashes, 25)
    for i in range(13):
        leaf = leaf_hash(i * 25, hashes[i])
        proof = tree.proof(i)
        # wrong step, wrong state hash, other leaf's proof, tampered sibling, wrong root
        assert not verify_proof(proof, tree.root, leaf_hash(i * 25 + 1, hashes[i]))
        assert not verify_proof(proof, tree.root, leaf_hash(i * 25, hashes[(i + 1) % 13]))
        assert not verify_proof(tree.proof((i + 1) % 13), tree.root, leaf)
        if proof:
            bad = list(proof)
            bad[0] = bytes([bad[0][0] ^ 1]) + bad[0][1:]
            assert not verify_proof(bad, tree.root, leaf)
            assert not verify_proof(proof[:-1], tree.root, leaf)
        assert not verify_proof(proof, keccak256(b"other"), leaf)


def test_odd_layer_carries_node_up():
    leaves = [keccak256(bytes([i])) for i in range(3)]
    tree = MerkleTree(leaves)
    assert tree.root == commutative_keccak256(
        commutative_keccak256(leaves[0], leaves[1]), leaves[2]
    )
    assert tree.proof(2) == [commutative_keccak256(leaves[0], leaves[1])]


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 70), data=st.data())
def test_random_trees(n, data):
    hashes = _hashes(n)
    tree = checkpoint_tree(hashes, 3)
    i = data.draw(st.integers(0, n - 1))
    assert verify_proof(tree.proof(i), tree.root, leaf_hash(3 * i, hashes[i]))
    if n > 1:
        j = data.draw(st.integers(0, n - 1).filter(lambda j: j != i))
        assert not verify_proof(tree.proof(i), tree.root, leaf_hash(3 * j, hashes[j]))


def test_errors():
    with pytest.raises(MerkleError):
        MerkleTree([])
    with pytest.raises(MerkleError):
        MerkleTree([b"short"])
    with pytest.raises(MerkleError):
        checkpoint_tree(_hashes(3), 10).proof(3)
    with pytest.raises(MerkleError):
        leaf_hash(-1, _hashes(1)[0])
