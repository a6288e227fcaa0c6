"""Positional Merkle commitment to the checkpoint sequence: one leaf per checkpoint index.

PROTOCOL.md 2.3, Solidity `LibCheckpoint` (docs/SECURITY.md P-21, P-25). A job of N steps with
checkpoint interval k has M + 1 checkpoints, M = N / k; checkpoint i is the state after step
i * k. Its leaf is double-hashed (OpenZeppelin's recommendation against second preimages):
`leaf = keccak256(keccak256(abi.encode(uint256 i, uint256 i * k, bytes32 stateHash)))`, at
position i of a complete binary tree of depth d = ceil(log2(M + 1)); the positions after M hold
`ZERO_LEAF`. Inner nodes are `keccak256(left ++ right)`, ordered, not sorted: the pair order
is what binds a leaf to its position. A proof of index i is exactly d sibling hashes bottom-up,
folded by the bits of i (bit h set: the node at height h is a right child). The root thus fixes
one hash per position, and `verify_checkpoint` (like the contract) accepts a state at index i
only at position i, only for i <= M, only with a proof of length d: no step can have two
states, and an extra leaf cannot be proved. Pure Python; a tree of M + 1 leaves costs under
4(M + 1) keccak calls.

A *multiproof* proves several leaves at once (`MerkleTree.multiproof`, `verify_checkpoints`,
`LibCheckpoint.verifyMulti`): the leaves' sorted positions are folded level by level, left to
right; two proven nodes that are siblings hash together, any other node takes its sibling from
the proof, in the order the fold consumes them. It carries each sibling once, none that the
proven leaves imply, so a solver's secret reveal proves the 2q claimed states of q samples with
a handful of hashes where 2q single proofs carry 2q * d (PROTOCOL.md 3.5).

Run: not a script; `from veritrain.merkle import checkpoint_tree, verify_checkpoint`.
"""

from __future__ import annotations

from collections.abc import Sequence

from veritrain._keccak import keccak256
from veritrain.commitments import leaf_hash
from veritrain.errors import MerkleError

__all__ = [
    "ZERO_LEAF",
    "MerkleTree",
    "checkpoint_tree",
    "claim_end_proofs",
    "claim_indices",
    "claim_leaves",
    "expand_multiproof",
    "node_hash",
    "process_multiproof",
    "process_proof",
    "tree_depth",
    "verify_checkpoint",
    "verify_checkpoints",
    "verify_proof",
]

ZERO_LEAF = b"\x00" * 32
"""Leaf of the padding positions M + 1 .. 2^d - 1 (`LibCheckpoint.ZERO_LEAF`); never provable."""


def tree_depth(leaf_count: int) -> int:
    """Depth of the tree over `leaf_count` leaves: the smallest d with 2^d >= leaf_count.

    Args:
        leaf_count: number of leaves (>= 1).

    Returns:
        d, the length of every proof (0 for one leaf), as `LibCheckpoint.depth`.

    Raises:
        MerkleError: `leaf_count < 1`.
    """
    if leaf_count < 1:
        raise MerkleError(f"a Merkle tree needs at least one leaf, got {leaf_count}")
    return (leaf_count - 1).bit_length()


def node_hash(left: bytes, right: bytes) -> bytes:
    """Inner node: keccak256 of the ordered pair (OpenZeppelin `Hashes.efficientKeccak256`)."""
    return keccak256(bytes(left) + bytes(right))


def process_proof(proof: Sequence[bytes], index: int, leaf: bytes) -> bytes:
    """Fold `proof` into the root implied by `leaf` at position `index`.

    The Python twin of `LibCheckpoint.processProof`.

    Args:
        proof: sibling hashes bottom-up, 32 bytes each.
        index: the leaf's position; bit h says whether the node at height h is a right child.
        leaf: the 32-byte leaf.

    Returns:
        The implied 32-byte root (the proof length and index range are not checked here).
    """
    computed = bytes(leaf)
    for h, sibling in enumerate(proof):
        if (index >> h) & 1:
            computed = node_hash(bytes(sibling), computed)
        else:
            computed = node_hash(computed, bytes(sibling))
    return computed


def verify_proof(
    proof: Sequence[bytes], root: bytes, leaf: bytes, index: int, leaf_count: int
) -> bool:
    """True iff `proof` proves `leaf` at position `index` of a tree of `leaf_count` leaves.

    Args:
        proof: sibling hashes bottom-up, exactly `tree_depth(leaf_count)` of them.
        root: the committed 32-byte root.
        leaf: the 32-byte leaf (see `leaf_hash`).
        index: the position, in [0, leaf_count).
        leaf_count: the number of real leaves (M + 1 for a job's tree).

    Returns:
        Whether the index is in range, the proof has the tree's depth and folds to `root`.
    """
    if leaf_count < 1 or not 0 <= index < leaf_count:
        return False
    if len(proof) != tree_depth(leaf_count):
        return False
    return process_proof(proof, index, leaf) == bytes(root)


def verify_checkpoint(
    proof: Sequence[bytes],
    root: bytes,
    total_steps: int,
    interval: int,
    index: int,
    state_hash: bytes,
) -> bool:
    """Whether `state_hash` is checkpoint `index` of the job tree with root `root`.

    The Python twin of Solidity `LibCheckpoint.verify` (and `JobManager.verifyCheckpoint`):
    the step bound into the leaf is `index * interval`, the tree has `total_steps // interval + 1`
    leaves.

    Args:
        proof: sibling hashes bottom-up, 32 bytes each.
        root: the on-chain 32-byte root.
        total_steps: the job's N (steps).
        interval: the job's checkpoint interval k (steps).
        index: checkpoint index i.
        state_hash: the 32-byte state hash claimed for checkpoint i.

    Returns:
        False for `interval < 1`, an index outside [0, N/k], a proof of the wrong length, a
        state hash that is not 32 bytes, or a proof that does not fold to `root`.
    """
    if interval < 1 or index < 0 or len(state_hash) != 32:
        return False
    count = total_steps // interval + 1
    if index >= count:
        return False
    return verify_proof(proof, root, leaf_hash(index, index * interval, state_hash), index, count)


def _fold_multiproof(
    depth: int, indices: Sequence[int], leaves: Sequence[bytes], proof: Sequence[bytes]
) -> tuple[bytes, list[list[bytes]]] | None:
    """The multiproof fold (`process_multiproof`), also returning each leaf's single proof."""
    if not indices or len(indices) != len(leaves):
        return None
    if any(b <= a for a, b in zip(indices, indices[1:], strict=False)) or indices[0] < 0:
        return None
    if indices[-1] >= 1 << depth:
        return None
    # level by level: (position, hash, the proven leaves under the node)
    nodes = [(int(i), bytes(h), [j]) for j, (i, h) in enumerate(zip(indices, leaves, strict=True))]
    singles: list[list[bytes]] = [[] for _ in indices]
    used = 0
    for _ in range(depth):
        parents: list[tuple[int, bytes, list[int]]] = []
        i = 0
        while i < len(nodes):
            pos, node, under = nodes[i]
            if pos % 2 == 0 and i + 1 < len(nodes) and nodes[i + 1][0] == pos + 1:
                right, right_under = nodes[i + 1][1], nodes[i + 1][2]
                for j in under:
                    singles[j].append(right)
                for j in right_under:
                    singles[j].append(node)
                parents.append((pos // 2, node_hash(node, right), under + right_under))
                i += 2
                continue
            if used == len(proof):
                return None
            sibling = bytes(proof[used])
            used += 1
            for j in under:
                singles[j].append(sibling)
            parent = node_hash(node, sibling) if pos % 2 == 0 else node_hash(sibling, node)
            parents.append((pos // 2, parent, under))
            i += 1
        nodes = parents
    if used != len(proof):
        return None
    return nodes[0][1], singles


def process_multiproof(
    depth: int, indices: Sequence[int], leaves: Sequence[bytes], proof: Sequence[bytes]
) -> bytes | None:
    """Fold a multiproof into the root implied by `leaves` at positions `indices`.

    The Python twin of `LibCheckpoint.processMultiproof`. Level by level from the leaves, the
    proven nodes in increasing position: a node whose sibling is the next proven node hashes with
    it, any other takes its sibling from `proof`, consumed in order. After `depth` levels one node
    is left, the root.

    Args:
        depth: the tree depth d (`tree_depth`).
        indices: leaf positions, strictly increasing, each below 2^d (at least one).
        leaves: the 32-byte leaf at each position (see `leaf_hash`).
        proof: the siblings the proven leaves do not imply, in fold order (`MerkleTree.multiproof`).

    Returns:
        The implied 32-byte root, or None for positions that are not strictly increasing or
        within the tree, a length mismatch, or a proof with too few or too many hashes.
    """
    folded = _fold_multiproof(depth, indices, leaves, proof)
    return None if folded is None else folded[0]


def expand_multiproof(
    depth: int, indices: Sequence[int], leaves: Sequence[bytes], proof: Sequence[bytes]
) -> list[list[bytes]] | None:
    """The single proof of every leaf of a multiproof (what `MerkleTree.proof` would give).

    A node that replayed a sample rebuilds, from the solver's secret reveal, the proof of the end
    state it serves (docs/SECURITY.md P-36): every sibling on a proven leaf's path is either a
    proof hash or a node the proven leaves imply.

    Args:
        depth, indices, leaves, proof: as `process_multiproof`.

    Returns:
        One list of `depth` sibling hashes (bottom-up) per index, in the order of `indices`, or
        None where `process_multiproof` gives None. The root is not checked here: verify the
        single proofs (`verify_checkpoint`) or the multiproof against the root.
    """
    folded = _fold_multiproof(depth, indices, leaves, proof)
    return None if folded is None else folded[1]


def verify_checkpoints(
    proof: Sequence[bytes],
    root: bytes,
    total_steps: int,
    interval: int,
    indices: Sequence[int],
    state_hashes: Sequence[bytes],
) -> bool:
    """Whether every `state_hashes[j]` is checkpoint `indices[j]` of the job tree with `root`.

    The Python twin of Solidity `LibCheckpoint.verifyMulti`: one multiproof for many leaves.

    Args:
        proof: the multiproof (`MerkleTree.multiproof`).
        root: the on-chain 32-byte root.
        total_steps: the job's N (steps).
        interval: the job's checkpoint interval k (steps).
        indices: checkpoint indices, strictly increasing, each in [0, N/k] (at least one).
        state_hashes: the 32-byte state hash claimed for each index.

    Returns:
        False for `interval < 1`, no index, indices not strictly increasing or outside [0, N/k],
        a state hash that is not 32 bytes, a proof of the wrong size, or one that does not fold
        to `root`.
    """
    shaped = _checkpoint_leaves(total_steps, interval, indices, state_hashes)
    if shaped is None:
        return False
    return process_multiproof(shaped[0], indices, shaped[1], proof) == bytes(root)


def _checkpoint_leaves(
    total_steps: int, interval: int, indices: Sequence[int], state_hashes: Sequence[bytes]
) -> tuple[int, list[bytes]] | None:
    """The job tree's depth and the leaves of `state_hashes` at checkpoints `indices`, or None
    for `interval < 1`, no index, a length mismatch, a state hash that is not 32 bytes, or an
    index outside [0, N/k] (the order is the fold's to check)."""
    if interval < 1 or not indices or len(indices) != len(state_hashes):
        return None
    if any(len(h) != 32 for h in state_hashes):
        return None
    count = total_steps // interval + 1
    if indices[0] < 0 or indices[-1] >= count:
        return None
    leaves = [leaf_hash(i, i * interval, h) for i, h in zip(indices, state_hashes, strict=True)]
    return tree_depth(count), leaves


def claim_leaves(
    segments: Sequence[int], start_hashes: Sequence[bytes], end_hashes: Sequence[bytes]
) -> tuple[list[int], list[bytes]]:
    """The checkpoints a secret reveal proves: each sample's start and end, one per index.

    Sample j of segment s_j claims checkpoint s_j (its start) and s_j + 1 (its end); the end of
    one sample and the start of the next are one checkpoint when the segments are adjacent
    (`VerificationRound._claimLeaves`).

    Args:
        segments: the sampled segment indices, strictly increasing (sample order).
        start_hashes: the claimed start state hash of each sample (32 bytes).
        end_hashes: the end state hash of each sample to prove (the forced claim already
            replaced by the true end it hides).

    Returns:
        `(indices, state_hashes)`: strictly increasing checkpoint indices and the hash claimed
        at each.

    Raises:
        MerkleError: lengths differ, the segments are not strictly increasing, or two adjacent
            samples claim two different states for the checkpoint they share.
    """
    if not len(segments) == len(start_hashes) == len(end_hashes):
        raise MerkleError("one start and one end hash per sampled segment")
    indices = claim_indices(segments)
    state: dict[int, bytes] = {}
    for s, start, end in zip(segments, start_hashes, end_hashes, strict=True):
        for index, claimed in ((int(s), bytes(start)), (int(s) + 1, bytes(end))):
            if state.setdefault(index, claimed) != claimed:
                raise MerkleError(f"segments {s - 1} and {s} claim two states of checkpoint {s}")
    return indices, [state[i] for i in indices]


def claim_indices(segments: Sequence[int]) -> list[int]:
    """The checkpoint indices a secret reveal proves for the sampled `segments`: each segment's
    start s and end s + 1, once each, in increasing order (`claim_leaves` without the hashes;
    what the solver's multiproof covers, `MerkleTree.multiproof`).

    Raises:
        MerkleError: the segments are not strictly increasing.
    """
    indices: list[int] = []
    for s in segments:
        if indices and s < indices[-1]:
            raise MerkleError(f"sampled segments must increase, got {s} after {indices[-1] - 1}")
        if not indices or s != indices[-1]:
            indices.append(int(s))
        indices.append(int(s) + 1)
    return indices


def claim_end_proofs(
    proof: Sequence[bytes],
    root: bytes,
    total_steps: int,
    interval: int,
    segments: Sequence[int],
    start_hashes: Sequence[bytes],
    end_hashes: Sequence[bytes],
) -> list[tuple[bytes, list[bytes]]] | None:
    """Each sample's end state and its single Merkle proof, rebuilt from the one multiproof a
    secret reveal carries (docs/SECURITY.md P-36: a node that replayed a sample serves its end
    state with a proof the solver no longer gives).

    The reveal proves the checkpoints `claim_leaves` gives for the samples by one multiproof, as
    ``VerificationRound`` checks it; every sibling on a proven leaf's path is a proof hash or a
    node the proven leaves imply, so the single proof of each end follows from one fold.

    Args:
        proof: the reveal's multiproof (32-byte hashes, in fold order).
        root: the job's committed Merkle root.
        total_steps: the job's N (steps).
        interval: the job's checkpoint interval k (steps).
        segments: the sampled segments, in sample order.
        start_hashes: the posted start hash of each sample.
        end_hashes: the end hash each sample proved (the forced sample's true end, not its
            forced claim).

    Returns:
        ``(end_hashes[j], proof of leaf segments[j] + 1)`` per sample, each proof of the tree's
        depth; None when the claims do not fit the segments (lengths, order, two states of one
        checkpoint) or the multiproof does not prove them under ``root`` (what
        `verify_checkpoints` refuses).
    """
    try:
        indices, hashes = claim_leaves(segments, start_hashes, end_hashes)
    except MerkleError:
        return None
    shaped = _checkpoint_leaves(total_steps, interval, indices, hashes)
    if shaped is None:
        return None
    folded = _fold_multiproof(shaped[0], indices, shaped[1], proof)
    if folded is None or folded[0] != bytes(root):
        return None
    by_index = dict(zip(indices, folded[1], strict=True))
    return [(bytes(end), by_index[int(s) + 1]) for s, end in zip(segments, end_hashes, strict=True)]


class MerkleTree:
    """Complete binary Merkle tree over pre-hashed leaves at their positions, padded with
    `ZERO_LEAF` to a power of two.

    Args:
        leaves: 32-byte leaves in position order (at least one).

    Raises:
        MerkleError: no leaves, or a leaf that is not 32 bytes.
    """

    def __init__(self, leaves: Sequence[bytes]) -> None:
        if not leaves:
            raise MerkleError("a Merkle tree needs at least one leaf")
        real = [bytes(x) for x in leaves]
        if any(len(x) != 32 for x in real):
            raise MerkleError("every leaf must be 32 bytes")
        self._count = len(real)
        layer = real + [ZERO_LEAF] * ((1 << tree_depth(self._count)) - self._count)
        self._layers: list[list[bytes]] = [layer]
        while len(layer) > 1:
            layer = [node_hash(layer[i], layer[i + 1]) for i in range(0, len(layer), 2)]
            self._layers.append(layer)

    @property
    def leaves(self) -> list[bytes]:
        """The real leaves, in position order (a copy, without padding)."""
        return list(self._layers[0][: self._count])

    @property
    def root(self) -> bytes:
        """The 32-byte root (equal to the single leaf when there is one leaf)."""
        return self._layers[-1][0]

    @property
    def depth(self) -> int:
        """The tree depth, the length of every proof."""
        return len(self._layers) - 1

    def __len__(self) -> int:
        return self._count

    def proof(self, index: int) -> list[bytes]:
        """Sibling hashes of leaf `index`, bottom-up: exactly `depth` of them.

        Raises:
            MerkleError: if `index` is out of range.
        """
        if not 0 <= index < self._count:
            raise MerkleError(f"leaf index {index} out of range [0, {self._count})")
        out: list[bytes] = []
        i = index
        for layer in self._layers[:-1]:
            out.append(layer[i ^ 1])
            i //= 2
        return out

    def multiproof(self, indices: Sequence[int]) -> list[bytes]:
        """The multiproof of the leaves at `indices` (`process_multiproof` folds it).

        Args:
            indices: leaf positions, strictly increasing, each in range (at least one).

        Returns:
            The siblings the proven leaves do not imply, in the order the fold consumes them
            (level by level, left to right): at most `depth * len(indices)` hashes, none for
            the whole tree.

        Raises:
            MerkleError: no index, indices not strictly increasing or out of range.
        """
        if not indices:
            raise MerkleError("a multiproof needs at least one leaf index")
        if any(b <= a for a, b in zip(indices, indices[1:], strict=False)):
            raise MerkleError(f"multiproof indices must strictly increase, got {list(indices)}")
        if not 0 <= indices[0] or indices[-1] >= self._count:
            raise MerkleError(f"leaf index out of range [0, {self._count}): {list(indices)}")
        out: list[bytes] = []
        level = [int(i) for i in indices]
        for layer in self._layers[:-1]:
            parents: list[int] = []
            i = 0
            while i < len(level):
                pos = level[i]
                if pos % 2 == 0 and i + 1 < len(level) and level[i + 1] == pos + 1:
                    i += 2
                else:
                    out.append(layer[pos ^ 1])
                    i += 1
                parents.append(pos // 2)
            level = parents
        return out


def checkpoint_tree(state_hashes: Sequence[bytes], interval: int) -> MerkleTree:
    """Tree of a job's checkpoints: leaf i commits `(i, i * interval, state_hashes[i])`.

    Args:
        state_hashes: 32-byte state hashes of steps 0, k, 2k, ..., N (N/k + 1 of them).
        interval: checkpoint interval k (>= 1).

    Returns:
        The `MerkleTree`; `.root` is what the solver commits on chain.

    Raises:
        MerkleError: empty input, bad hash length or `interval < 1`.
    """
    if interval < 1:
        raise MerkleError(f"interval must be >= 1, got {interval}")
    return MerkleTree([leaf_hash(i, i * interval, h) for i, h in enumerate(state_hashes)])
