"""Merkle tree/proofs: the positional checkpoint tree of `LibCheckpoint` (one leaf per index,
double-hashed `(index, step, stateHash)` leaves, ordered pairs, zero-leaf padding to a power of
two, proofs of exactly the tree depth; docs/SECURITY.md P-21, P-25)."""

from __future__ import annotations

import hashlib

import pytest
from eth_abi import encode as abi_encode
from hypothesis import given, settings
from hypothesis import strategies as st

from veritrain._keccak import keccak256
from veritrain.commitments import leaf_hash
from veritrain.errors import MerkleError
from veritrain.merkle import (
    ZERO_LEAF,
    MerkleTree,
    checkpoint_tree,
    tree_depth,
    verify_checkpoint,
    verify_proof,
)


def _hashes(n: int, salt: bytes = b"") -> list[bytes]:
    return [hashlib.sha256(salt + i.to_bytes(4, "big")).digest() for i in range(n)]


def _reference_root(leaves: list[bytes]) -> bytes:
    """Independent recursive definition: pad with zero leaves to a power of two, then the root
    of a half is hashed left ++ right."""
    size = 1
    while size < len(leaves):
        size *= 2
    padded = leaves + [b"\x00" * 32] * (size - len(leaves))

    def root(nodes: list[bytes]) -> bytes:
        if len(nodes) == 1:
            return nodes[0]
        half = len(nodes) // 2
        return keccak256(root(nodes[:half]) + root(nodes[half:]))

    return root(padded)


def test_leaf_hash_matches_solidity_encoding():
    h = hashlib.sha256(b"x").digest()
    inner = keccak256(abi_encode(["uint256", "uint256", "bytes32"], [5, 25, h]))
    assert leaf_hash(5, 25, h) == keccak256(inner)


def test_depth():
    assert [tree_depth(n) for n in (1, 2, 3, 4, 5, 8, 9, 4097)] == [0, 1, 2, 2, 3, 3, 4, 13]


def test_single_leaf():
    tree = checkpoint_tree(_hashes(1), 25)
    assert tree.root == leaf_hash(0, 0, _hashes(1)[0])
    assert tree.proof(0) == []
    assert verify_proof([], tree.root, tree.leaves[0], 0, 1)


def test_three_leaves_match_the_spec():
    """((l0, l1), (l2, ZERO_LEAF)), ordered: the same tree `LibCheckpoint_Test` pins."""
    hashes = _hashes(3)
    leaves = [leaf_hash(i, 7 * i, h) for i, h in enumerate(hashes)]
    tree = checkpoint_tree(hashes, 7)
    assert tree.leaves == leaves
    assert tree.root == keccak256(
        keccak256(leaves[0] + leaves[1]) + keccak256(leaves[2] + ZERO_LEAF)
    )
    assert tree.proof(2) == [ZERO_LEAF, keccak256(leaves[0] + leaves[1])]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 17, 33])
def test_all_proofs_verify_at_their_index(n):
    hashes = _hashes(n)
    tree = checkpoint_tree(hashes, 10)
    assert len(tree) == n
    assert tree.depth == tree_depth(n)
    assert tree.root == _reference_root([leaf_hash(i, i * 10, h) for i, h in enumerate(hashes)])
    for i in range(n):
        assert len(tree.proof(i)) == tree.depth
        assert verify_checkpoint(tree.proof(i), tree.root, (n - 1) * 10, 10, i, hashes[i])


def test_thirteen_leaves_wrong_proofs_fail():
    hashes = _hashes(13)
    tree = checkpoint_tree(hashes, 25)
    n_steps = 12 * 25
    for i in range(13):
        proof = tree.proof(i)
        assert verify_checkpoint(proof, tree.root, n_steps, 25, i, hashes[i])
        # wrong state, wrong index, other leaf's proof, another interval, tampered sibling,
        # short and long proofs, an index past M, wrong root
        assert not verify_checkpoint(proof, tree.root, n_steps, 25, i, hashes[(i + 1) % 13])
        assert not verify_checkpoint(proof, tree.root, n_steps, 25, (i + 1) % 13, hashes[i])
        assert not verify_checkpoint(tree.proof((i + 1) % 13), tree.root, n_steps, 25, i, hashes[i])
        if i:
            assert not verify_checkpoint(proof, tree.root, 2 * n_steps, 50, i, hashes[i])
        bad = list(proof)
        bad[0] = bytes([bad[0][0] ^ 1]) + bad[0][1:]
        assert not verify_checkpoint(bad, tree.root, n_steps, 25, i, hashes[i])
        assert not verify_checkpoint(proof[:-1], tree.root, n_steps, 25, i, hashes[i])
        assert not verify_checkpoint([*proof, ZERO_LEAF], tree.root, n_steps, 25, i, hashes[i])
        assert not verify_checkpoint(proof, tree.root, n_steps, 25, i + 16, hashes[i])
        assert not verify_checkpoint(proof, keccak256(b"other"), n_steps, 25, i, hashes[i])
    assert not verify_checkpoint(tree.proof(0), tree.root, n_steps, 0, 0, hashes[0])


def test_a_padding_position_is_never_provable():
    """Positions M + 1 .. 2^d - 1 hold ZERO_LEAF; whatever an attacker puts there, an index
    past M is refused."""
    hashes = _hashes(5)
    extra = hashlib.sha256(b"backdoor").digest()
    leaves = [leaf_hash(i, i * 2, h) for i, h in enumerate(hashes)] + [leaf_hash(5, 10, extra)]
    tree = MerkleTree(leaves)  # the attacker's tree: 6 leaves, depth 3 like the job's 5
    assert tree.depth == tree_depth(5)
    assert verify_proof(tree.proof(5), tree.root, leaves[5], 5, 6)  # a 6-leaf tree would take it
    assert not verify_checkpoint(tree.proof(5), tree.root, 8, 2, 5, extra)  # the job's 5 do not


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 40), extra=st.integers(1, 24), data=st.data())
def test_a_second_state_for_one_index_is_never_provable(m, extra, data):
    """P-21 / P-25: the attacker's tree holds the job's M + 1 checkpoints and `extra` more
    leaves of another trajectory (each with its own index and step), after them; with any
    proof of that tree, a state verifies only at its own position, and only if the tree has
    the job's depth. So no index has two provable states."""
    k = 3
    honest = _hashes(m + 1, b"honest")
    other = _hashes(m + 1, b"other")
    start = data.draw(st.integers(0, m))
    indices = list(range(m + 1)) + [start + x % (m + 1 - start) for x in range(extra)]
    states = honest + [other[i] for i in indices[m + 1 :]]
    tree = MerkleTree([leaf_hash(i, i * k, s) for i, s in zip(indices, states, strict=True)])
    same_depth = tree.depth == tree_depth(m + 1)
    for p, (i, s) in enumerate(zip(indices, states, strict=True)):
        ok = verify_checkpoint(tree.proof(p), tree.root, m * k, k, i, s)
        assert ok == (p <= m and same_depth)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 70), data=st.data())
def test_random_trees(n, data):
    hashes = _hashes(n)
    tree = checkpoint_tree(hashes, 3)
    i = data.draw(st.integers(0, n - 1))
    assert verify_checkpoint(tree.proof(i), tree.root, 3 * (n - 1), 3, i, hashes[i])
    if n > 1:
        j = data.draw(st.integers(0, n - 1).filter(lambda j: j != i))
        assert not verify_checkpoint(tree.proof(i), tree.root, 3 * (n - 1), 3, j, hashes[j])
        assert not verify_checkpoint(tree.proof(i), tree.root, 3 * (n - 1), 3, j, hashes[i])


def test_errors():
    with pytest.raises(MerkleError):
        MerkleTree([])
    with pytest.raises(MerkleError):
        MerkleTree([b"short"])
    with pytest.raises(MerkleError):
        checkpoint_tree(_hashes(3), 10).proof(3)
    with pytest.raises(MerkleError):
        checkpoint_tree(_hashes(3), 0)
    with pytest.raises(MerkleError):
        leaf_hash(0, -1, _hashes(1)[0])
    with pytest.raises(MerkleError):
        leaf_hash(-1, 0, _hashes(1)[0])
    with pytest.raises(MerkleError):
        tree_depth(0)
