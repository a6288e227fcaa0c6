"""Merkle tree/proofs: the positional checkpoint tree of `LibCheckpoint` (one leaf per index,
double-hashed `(index, step, stateHash)` leaves, ordered pairs, zero-leaf padding to a power of
two, proofs of exactly the tree depth; docs/SECURITY.md P-21, P-25)."""

from __future__ import annotations

import hashlib
import random

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
    claim_leaves,
    expand_multiproof,
    process_multiproof,
    tree_depth,
    verify_checkpoint,
    verify_checkpoints,
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


# --- multiproofs (`MerkleTree.multiproof`, `process_multiproof`, `verify_checkpoints`), the one
# proof of a solver's secret reveal; `LibCheckpoint.processMultiproof` folds them alike.


def _flip(h: bytes) -> bytes:
    return bytes([h[0] ^ 1]) + h[1:]


def _reference_siblings(tree: MerkleTree, indices: list[int]) -> list[bytes]:
    """What a multiproof must carry, defined without the fold: every sibling of a node on a
    proven leaf's path that is not itself on such a path, by height then position (the fold's
    level-by-level, left-to-right order); each node's hash read from a proven leaf's single
    proof."""
    on_path = {(h, i >> h) for i in indices for h in range(tree.depth + 1)}
    out = []
    for h, q in sorted({(h, p ^ 1) for h, p in on_path if h < tree.depth} - on_path):
        leaf = next(i for i in indices if i >> h == q ^ 1)
        out.append(tree.proof(leaf)[h])
    return out


def test_multiproof_of_three_leaves_matches_the_spec():
    """((l0, l1), (l2, ZERO_LEAF)): the siblings the proven leaves do not imply, in fold order."""
    hashes = _hashes(3)
    tree = checkpoint_tree(hashes, 7)
    l0, l1, _ = tree.leaves
    assert tree.multiproof([0, 2]) == [l1, ZERO_LEAF]
    assert tree.multiproof([1, 2]) == [l0, ZERO_LEAF]
    assert tree.multiproof([2]) == [ZERO_LEAF, keccak256(l0 + l1)] == tree.proof(2)
    assert tree.multiproof([0, 1]) == [keccak256(tree.leaves[2] + ZERO_LEAF)]
    assert verify_checkpoints([l1, ZERO_LEAF], tree.root, 14, 7, [0, 2], [hashes[0], hashes[2]])
    assert not verify_checkpoints([ZERO_LEAF, l1], tree.root, 14, 7, [0, 2], [hashes[0], hashes[2]])


def test_multiproofs_of_random_trees_match_the_single_proofs():
    """Seeded random trees and leaf sets: the multiproof carries exactly the reference siblings,
    folds to the root, verifies the states, and expands to every leaf's single proof."""
    rng = random.Random(20240611)
    k = 4
    for _ in range(150):
        n = rng.randint(1, 80)
        hashes = [rng.randbytes(32) for _ in range(n)]
        tree = checkpoint_tree(hashes, k)
        indices = sorted(rng.sample(range(n), rng.randint(1, min(n, 12))))
        proof = tree.multiproof(indices)
        assert proof == _reference_siblings(tree, indices)
        assert len(proof) <= tree.depth * len(indices)
        leaves = [tree.leaves[i] for i in indices]
        assert process_multiproof(tree.depth, indices, leaves, proof) == tree.root
        assert expand_multiproof(tree.depth, indices, leaves, proof) == [
            tree.proof(i) for i in indices
        ]
        states = [hashes[i] for i in indices]
        assert verify_checkpoints(proof, tree.root, (n - 1) * k, k, indices, states)
        # ... and nothing else: another state, another interval, another root
        j = rng.randrange(len(indices))
        wrong = [*states[:j], _flip(states[j]), *states[j + 1 :]]
        assert not verify_checkpoints(proof, tree.root, (n - 1) * k, k, indices, wrong)
        if indices[-1] > 0:  # checkpoint 0 is step 0 whatever the interval
            assert not verify_checkpoints(proof, tree.root, (n - 1) * 2 * k, 2 * k, indices, states)
        assert not verify_checkpoints(proof, _flip(tree.root), (n - 1) * k, k, indices, states)


def test_tampered_short_and_long_multiproofs_are_refused():
    rng = random.Random(7)
    hashes = _hashes(23)
    tree = checkpoint_tree(hashes, 5)
    n_steps = 22 * 5
    for _ in range(30):
        indices = sorted(rng.sample(range(23), rng.randint(1, 6)))
        states = [hashes[i] for i in indices]
        leaves = [tree.leaves[i] for i in indices]
        proof = tree.multiproof(indices)
        assert proof and verify_checkpoints(proof, tree.root, n_steps, 5, indices, states)
        for p in range(len(proof)):  # every hash counts
            bad = [*proof[:p], _flip(proof[p]), *proof[p + 1 :]]
            assert not verify_checkpoints(bad, tree.root, n_steps, 5, indices, states)
        if len(set(proof)) > 1:  # and so does their order
            assert not verify_checkpoints(proof[::-1], tree.root, n_steps, 5, indices, states)
        for short in (proof[:-1], proof[1:]):
            assert process_multiproof(tree.depth, indices, leaves, short) is None
            assert expand_multiproof(tree.depth, indices, leaves, short) is None
            assert not verify_checkpoints(short, tree.root, n_steps, 5, indices, states)
        for long in ([*proof, ZERO_LEAF], [*proof, proof[-1]], [proof[0], *proof]):
            assert process_multiproof(tree.depth, indices, leaves, long) is None
            assert expand_multiproof(tree.depth, indices, leaves, long) is None
            assert not verify_checkpoints(long, tree.root, n_steps, 5, indices, states)


@pytest.mark.parametrize(
    "indices",
    [[], [3, 1], [2, 2], [1, 4, 4], [-1, 2], [0, 13], [13]],
    ids=["none", "unsorted", "duplicate", "duplicate-last", "negative", "past-M", "only-past-M"],
)
def test_multiproof_indices_must_strictly_increase_within_the_tree(indices):
    hashes = _hashes(13)  # M = 12: depth 4, positions 13..15 are padding
    tree = checkpoint_tree(hashes, 3)
    with pytest.raises(MerkleError):
        tree.multiproof(indices)
    states = [hashes[i % 13] for i in indices]
    leaves = [tree.leaves[i % 13] for i in indices]
    # a real proof of the positions offered, and the empty one
    for proof in (tree.multiproof(sorted({i % 13 for i in indices}) or [0]), []):
        assert not verify_checkpoints(proof, tree.root, 36, 3, indices, states)
        if indices != sorted(set(indices)) or not indices or indices[0] < 0:
            assert process_multiproof(tree.depth, indices, leaves, proof) is None
            assert expand_multiproof(tree.depth, indices, leaves, proof) is None


def test_a_repeated_index_never_folds_even_with_the_siblings_it_consumes():
    """Without the strict order, [2, 2] with each sibling of leaf 2 given twice would fold to
    the root (each copy climbs its own path): the fold refuses the index list itself."""
    hashes = _hashes(13)
    tree = checkpoint_tree(hashes, 3)
    doubled = [h for h in tree.proof(2) for _ in range(2)]
    leaf = tree.leaves[2]
    assert process_multiproof(tree.depth, [2, 2], [leaf, leaf], doubled) is None
    assert expand_multiproof(tree.depth, [2, 2], [leaf, leaf], doubled) is None
    assert not verify_checkpoints(doubled, tree.root, 36, 3, [2, 2], [hashes[2], hashes[2]])


def test_verify_checkpoints_refuses_a_malformed_claim():
    hashes = _hashes(13)
    tree = checkpoint_tree(hashes, 3)
    proof = tree.multiproof([2, 5])
    assert verify_checkpoints(proof, tree.root, 36, 3, [2, 5], [hashes[2], hashes[5]])
    assert not verify_checkpoints(proof, tree.root, 36, 3, [2, 5], [hashes[2]])  # one state
    assert not verify_checkpoints(proof, tree.root, 36, 3, [2, 5], [hashes[2], hashes[5][:31]])
    assert not verify_checkpoints(proof, tree.root, 36, 0, [2, 5], [hashes[2], hashes[5]])
    assert not verify_checkpoints([], tree.root, 36, 3, [], [])


def test_a_padding_position_is_never_provable_by_a_multiproof():
    """As for single proofs: an attacker's tree with a sixth leaf after the job's five has the
    job's depth and folds, but an index past M is refused."""
    hashes = _hashes(5)
    extra = hashlib.sha256(b"backdoor").digest()
    leaves = [leaf_hash(i, i * 2, h) for i, h in enumerate(hashes)] + [leaf_hash(5, 10, extra)]
    tree = MerkleTree(leaves)
    proof = tree.multiproof([4, 5])
    assert process_multiproof(3, [4, 5], leaves[4:], proof) == tree.root
    assert verify_checkpoints(proof, tree.root, 10, 2, [4, 5], [hashes[4], extra])  # 6 leaves
    assert not verify_checkpoints(proof, tree.root, 8, 2, [4, 5], [hashes[4], extra])  # job's 5
    assert process_multiproof(2, [4], leaves[4:5], tree.proof(4)[:2]) is None  # 4 >= 2^2


@pytest.mark.parametrize("n", [1, 2, 4, 8, 16])
def test_every_leaf_proven_needs_an_empty_multiproof(n):
    """A power-of-two tree with every leaf proven: every node is implied, nothing is carried,
    and a single extra hash is a malformed proof."""
    hashes = _hashes(n)
    tree = checkpoint_tree(hashes, 6)
    indices = list(range(n))
    assert tree.multiproof(indices) == []
    assert verify_checkpoints([], tree.root, (n - 1) * 6, 6, indices, hashes)
    assert expand_multiproof(tree.depth, indices, tree.leaves, []) == [
        tree.proof(i) for i in indices
    ]
    assert not verify_checkpoints([ZERO_LEAF], tree.root, (n - 1) * 6, 6, indices, hashes)
    if n > 1:
        assert not verify_checkpoints([], tree.root, (n - 1) * 6, 6, indices[1:], hashes[1:])


def test_claim_leaves_share_the_checkpoint_of_adjacent_samples():
    """Samples of segments 1, 2 and 5 claim checkpoints 1, 2, 3, 5, 6: the end of segment 1 and
    the start of segment 2 are checkpoint 2, listed once."""
    starts, ends = _hashes(3, b"start"), _hashes(3, b"end")
    starts[1] = ends[0]
    indices, hashes = claim_leaves([1, 2, 5], starts, ends)
    assert indices == [1, 2, 3, 5, 6]
    assert hashes == [starts[0], ends[0], ends[1], starts[2], ends[2]]
    assert claim_leaves([4], starts[:1], ends[:1]) == ([4, 5], [starts[0], ends[0]])
    assert claim_leaves(
        [0, 1, 2], [b"a" * 32, b"b" * 32, b"c" * 32], [b"b" * 32, b"c" * 32, b"d" * 32]
    ) == (
        [0, 1, 2, 3],
        [b"a" * 32, b"b" * 32, b"c" * 32, b"d" * 32],
    )


def test_claim_leaves_refuses_two_states_of_one_checkpoint_and_a_bad_sample():
    starts, ends = _hashes(3, b"start"), _hashes(3, b"end")
    with pytest.raises(MerkleError, match="two states of checkpoint 2"):
        claim_leaves([1, 2, 5], starts, ends)  # segment 2 starts where segment 1 did not end
    with pytest.raises(MerkleError, match="must increase"):
        claim_leaves([1, 1, 5], starts, ends)
    with pytest.raises(MerkleError, match="must increase"):
        claim_leaves([5, 2, 7], starts, ends)
    with pytest.raises(MerkleError, match="one start and one end"):
        claim_leaves([1, 3], starts, ends)


def test_a_reveal_proves_its_claims_with_one_multiproof():
    """End to end as the round checks a reveal: the committed states of the sampled segments,
    one multiproof; a start claimed other than the committed state is refused."""
    hashes = _hashes(13)
    tree = checkpoint_tree(hashes, 10)
    segments = [0, 3, 4, 11]
    indices, states = claim_leaves(
        segments, [hashes[s] for s in segments], [hashes[s + 1] for s in segments]
    )
    assert indices == [0, 1, 3, 4, 5, 11, 12]
    proof = tree.multiproof(indices)
    assert len(proof) < 2 * len(segments) * tree.depth
    assert verify_checkpoints(proof, tree.root, 120, 10, indices, states)
    lying = [hashes[s] for s in segments]
    lying[2] = _flip(lying[2])
    with pytest.raises(MerkleError):  # checkpoint 4 is segment 3's end and segment 4's start
        claim_leaves(segments, lying, [hashes[s + 1] for s in segments])
    lying = [hashes[s] for s in segments]
    lying[3] = _flip(lying[3])
    indices, states = claim_leaves(segments, lying, [hashes[s + 1] for s in segments])
    assert not verify_checkpoints(proof, tree.root, 120, 10, indices, states)
