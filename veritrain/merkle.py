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
    "node_hash",
    "process_proof",
    "tree_depth",
    "verify_checkpoint",
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
