"""Merkle commitment to the checkpoint sequence, compatible with OpenZeppelin `MerkleProof`.

PROTOCOL.md 2.3. Leaves are double-hashed (OpenZeppelin's recommendation against
second-preimage attacks, as in `StandardMerkleTree`):
`leaf = keccak256(keccak256(abi.encode(uint256 step, bytes32 stateHash)))`. Internal nodes are
`commutativeKeccak256(a, b) = keccak256(min(a, b) ++ max(a, b))` (OZ `Hashes`), and an odd node at
the end of a layer is carried up unchanged, so a proof is just the sibling hashes bottom-up and
`MerkleProof.verify(proof, root, leaf)` (OZ contracts/utils/cryptography/MerkleProof.sol) accepts
it on chain. Pure Python; a tree of N/k + 1 leaves costs about 2(N/k) keccak calls.

Run: not a script; `from veritrain.merkle import checkpoint_tree, verify_proof`.
"""

from __future__ import annotations

from collections.abc import Sequence

from veritrain._keccak import keccak256
from veritrain.commitments import leaf_hash
from veritrain.errors import MerkleError

__all__ = [
    "MerkleTree",
    "checkpoint_tree",
    "commutative_keccak256",
    "process_proof",
    "verify_proof",
]


def commutative_keccak256(a: bytes, b: bytes) -> bytes:
    """keccak256 of the sorted pair (OpenZeppelin `Hashes.commutativeKeccak256`)."""
    return keccak256(a + b) if a < b else keccak256(b + a)


def process_proof(proof: Sequence[bytes], leaf: bytes) -> bytes:
    """Fold a proof into the root it implies (OpenZeppelin `MerkleProof.processProof`)."""
    computed = bytes(leaf)
    for sibling in proof:
        computed = commutative_keccak256(computed, bytes(sibling))
    return computed


def verify_proof(proof: Sequence[bytes], root: bytes, leaf: bytes) -> bool:
    """True iff `proof` proves `leaf` under `root` (OpenZeppelin `MerkleProof.verify`).

    Args:
        proof: sibling hashes bottom-up, 32 bytes each.
        root: the committed 32-byte root.
        leaf: the 32-byte leaf (see `leaf_hash`).

    Returns:
        Whether the folded proof equals `root`.
    """
    return process_proof(proof, leaf) == bytes(root)


class MerkleTree:
    """Binary Merkle tree over pre-hashed leaves, with odd nodes carried up.

    Args:
        leaves: 32-byte leaves in order (at least one).

    Raises:
        MerkleError: no leaves, or a leaf that is not 32 bytes.
    """

    def __init__(self, leaves: Sequence[bytes]) -> None:
        if not leaves:
            raise MerkleError("a Merkle tree needs at least one leaf")
        layer = [bytes(x) for x in leaves]
        if any(len(x) != 32 for x in layer):
            raise MerkleError("every leaf must be 32 bytes")
        self._layers: list[list[bytes]] = [layer]
        while len(layer) > 1:
            nxt = [
                commutative_keccak256(layer[i], layer[i + 1]) for i in range(0, len(layer) - 1, 2)
            ]
            if len(layer) % 2 == 1:
                nxt.append(layer[-1])  # odd node carried up unchanged
            layer = nxt
            self._layers.append(layer)

    @property
    def leaves(self) -> list[bytes]:
        """The leaves, in order (a copy)."""
        return list(self._layers[0])

    @property
    def root(self) -> bytes:
        """The 32-byte root (equal to the single leaf when there is one leaf)."""
        return self._layers[-1][0]

    def __len__(self) -> int:
        return len(self._layers[0])

    def proof(self, index: int) -> list[bytes]:
        """Sibling hashes of leaf `index`, bottom-up (empty for a one-leaf tree).

        Raises:
            MerkleError: if `index` is out of range.
        """
        if not 0 <= index < len(self):
            raise MerkleError(f"leaf index {index} out of range [0, {len(self)})")
        out: list[bytes] = []
        i = index
        for layer in self._layers[:-1]:
            sibling = i ^ 1
            if sibling < len(layer):
                out.append(layer[sibling])
            i //= 2
        return out


def checkpoint_tree(state_hashes: Sequence[bytes], interval: int) -> MerkleTree:
    """Tree of a job's checkpoints: leaf i commits `(i * interval, state_hashes[i])`.

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
    return MerkleTree([leaf_hash(i * interval, h) for i, h in enumerate(state_hashes)])
