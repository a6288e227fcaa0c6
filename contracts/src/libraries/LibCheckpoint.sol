// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Libraries
import {Hashes} from "@openzeppelin/contracts/utils/cryptography/Hashes.sol";

/// @title LibCheckpoint
/// @notice Checkpoint commitment of PROTOCOL.md 2.3: a positional Merkle tree with exactly one leaf
///         per checkpoint index (docs/SECURITY.md P-21, P-25).
///
///         A job of N steps with checkpoint interval k has M + 1 checkpoints, M = N / k; checkpoint
///         i is the state after step i * k. Its leaf is
///         `keccak256(bytes.concat(keccak256(abi.encode(i, i * k, stateHash))))` and sits at
///         position i of a complete binary tree of depth d = ceil(log2(M + 1)); the 2^d - (M + 1)
///         positions after M hold ZERO_LEAF. An inner node is `keccak256(left ++ right)`, ordered
///         (not sorted: the pair order is what binds a leaf to its position). A proof of index i is
///         exactly d sibling hashes, bottom-up; bit h of i says whether the node at height h is a
///         right child. The root therefore fixes one hash per position, and `verify` accepts a
///         state at index i only at position i, only for i <= M, only with a proof of length d:
///         a second state for one step, an extra leaf, or a leaf in a padding position cannot be
///         proved.
///
///         A multiproof (`verifyMulti`) proves several leaves at once: their sorted positions are
///         folded level by level, left to right; two proven nodes that are siblings hash together,
///         any other takes its sibling from the proof, in the order the fold consumes them. Each
///         sibling is carried once and none that the proven leaves imply (the Python twin is
///         `veritrain.merkle.process_multiproof`; the level-order fold of OpenZeppelin's
///         `MerkleProof.multiProofVerify`, kept positional: no flags, the positions say which
///         nodes pair).
/// @dev OpenZeppelin's `MerkleProof` hashes sorted pairs, which proves membership and not position,
///      so this library folds the proof itself. Every caller derives the index's step and the
///      depth from the job's (totalSteps, checkpointInterval); nothing of the shape comes from the
///      prover.
library LibCheckpoint {
    /// @notice Leaf of the padding positions M + 1 .. 2^d - 1 (never provable: `verify` refuses an
    ///         index above M).
    bytes32 internal constant ZERO_LEAF = bytes32(0);

    /// @notice Leaf of checkpoint `index`: keccak256(bytes.concat(keccak256(abi.encode(index, step, stateHash)))).
    /// @dev The double hash keeps a 64-byte inner node from ever being read as a leaf (OpenZeppelin's
    ///      recommendation against second preimages); the index and step in the leaf make a leaf
    ///      meaningful only at its own position.
    /// @param index Checkpoint index i (0..M).
    /// @param step Training step of the checkpoint, i * k (steps).
    /// @param stateHash BLAKE3 state hash of the canonical checkpoint bytes.
    /// @return leaf The leaf hash.
    function leafHash(uint256 index, uint256 step, bytes32 stateHash) internal pure returns (bytes32 leaf) {
        leaf = keccak256(bytes.concat(keccak256(abi.encode(index, step, stateHash))));
    }

    /// @notice Depth of the tree over `leafCount` leaves: the smallest d with 2^d >= leafCount.
    /// @param leafCount Number of checkpoints M + 1 (>= 1).
    /// @return d Tree depth, the length of every proof (0 for a single leaf).
    function depth(uint256 leafCount) internal pure returns (uint256 d) {
        while (d < 256 && (uint256(1) << d) < leafCount) {
            ++d;
        }
    }

    /// @notice Root implied by `leaf` at position `index` and its sibling hashes `proof`.
    /// @dev Folds exactly `proof.length` levels; bit h of `index` set means the node at height h is
    ///      the right child. The caller checks the proof length and the index range.
    /// @param proof Sibling hashes, bottom-up.
    /// @param index Leaf position.
    /// @param leaf Leaf hash (see `leafHash`).
    /// @return computed The implied root.
    function processProof(bytes32[] calldata proof, uint256 index, bytes32 leaf)
        internal
        pure
        returns (bytes32 computed)
    {
        computed = leaf;
        for (uint256 h; h < proof.length; ++h) {
            computed = (index >> h) & 1 == 0
                ? Hashes.efficientKeccak256(computed, proof[h])
                : Hashes.efficientKeccak256(proof[h], computed);
        }
    }

    /// @notice Whether `stateHash` is checkpoint `index` of the job tree with root `root`.
    /// @dev False for interval 0, for an index above M = totalSteps / interval, or for a proof whose
    ///      length is not the tree depth. The step bound into the leaf is index * interval.
    /// @param proof Sibling hashes, bottom-up (exactly depth(M + 1) of them).
    /// @param root Committed root.
    /// @param totalSteps The job's N (steps).
    /// @param interval The job's checkpoint interval k (steps).
    /// @param index Checkpoint index i.
    /// @param stateHash BLAKE3 state hash of the canonical checkpoint bytes.
    /// @return valid True if the proof places `stateHash` at position `index` under `root`.
    function verify(
        bytes32[] calldata proof,
        bytes32 root,
        uint256 totalSteps,
        uint256 interval,
        uint256 index,
        bytes32 stateHash
    ) internal pure returns (bool valid) {
        if (interval == 0) return false;
        uint256 segments = totalSteps / interval;
        if (index > segments) return false;
        if (proof.length != depth(segments + 1)) return false;
        valid = processProof(proof, index, leafHash(index, index * interval, stateHash)) == root;
    }

    /// @notice Root implied by the `leaves` at the strictly increasing positions `indices` of a
    ///         tree of depth `treeDepth`, with the siblings they do not imply in `proof`.
    /// @dev Folds in place, level by level: at each level the proven nodes (increasing position)
    ///      pair with their next node when it is their sibling, else take the next proof hash.
    ///      Parents keep increasing positions, so after `treeDepth` levels one node is left. Reverts
    ///      nothing: returns zero (never a root of real leaves) when the proof runs short, is longer
    ///      than consumed, or the positions are not strictly increasing below 2^treeDepth.
    ///      `indices` and `leaves` are overwritten.
    /// @param proof Sibling hashes in fold order.
    /// @param treeDepth Depth d of the tree.
    /// @param indices Leaf positions, strictly increasing, each < 2^d (at least one).
    /// @param leaves Leaf hash at each position (`leafHash`), as many as `indices`.
    /// @return computed The implied root, or zero for a malformed proof.
    function processMultiproof(
        bytes32[] calldata proof,
        uint256 treeDepth,
        uint256[] memory indices,
        bytes32[] memory leaves
    ) internal pure returns (bytes32 computed) {
        uint256 count = indices.length;
        if (count == 0 || count != leaves.length) return bytes32(0);
        for (uint256 i = 1; i < count; ++i) {
            if (indices[i] <= indices[i - 1]) return bytes32(0);
        }
        if (treeDepth < 256 && indices[count - 1] >> treeDepth != 0) return bytes32(0);
        uint256 used = 0;
        for (uint256 h; h < treeDepth; ++h) {
            uint256 written = 0;
            for (uint256 i; i < count; ++written) {
                uint256 position = indices[i];
                bytes32 node = leaves[i];
                if (position & 1 == 0 && i + 1 < count && indices[i + 1] == position + 1) {
                    node = Hashes.efficientKeccak256(node, leaves[i + 1]);
                    i += 2;
                } else {
                    if (used == proof.length) return bytes32(0);
                    node = position & 1 == 0
                        ? Hashes.efficientKeccak256(node, proof[used])
                        : Hashes.efficientKeccak256(proof[used], node);
                    ++used;
                    ++i;
                }
                indices[written] = position >> 1;
                leaves[written] = node;
            }
            count = written;
        }
        if (used != proof.length) return bytes32(0);
        computed = leaves[0];
    }

    /// @notice Whether every `stateHashes[j]` is checkpoint `indices[j]` of the job tree with root
    ///         `root`, by one multiproof (`processMultiproof`).
    /// @dev False for interval 0, no index, indices not strictly increasing, an index above
    ///      M = totalSteps / interval, or a proof that does not fold to `root` with exactly its
    ///      hashes. Overwrites `indices` and `stateHashes`.
    /// @param proof Siblings in fold order (`veritrain.merkle.MerkleTree.multiproof`).
    /// @param root Committed root.
    /// @param totalSteps The job's N (steps).
    /// @param interval The job's checkpoint interval k (steps).
    /// @param indices Checkpoint indices, strictly increasing (at least one).
    /// @param stateHashes BLAKE3 state hash claimed at each index.
    /// @return valid True if the proof places every state hash at its index under `root`.
    function verifyMulti(
        bytes32[] calldata proof,
        bytes32 root,
        uint256 totalSteps,
        uint256 interval,
        uint256[] memory indices,
        bytes32[] memory stateHashes
    ) internal pure returns (bool valid) {
        uint256 count = indices.length;
        if (interval == 0 || count == 0 || count != stateHashes.length) return false;
        uint256 segments = totalSteps / interval;
        if (indices[count - 1] > segments) return false;
        for (uint256 j; j < count; ++j) {
            stateHashes[j] = leafHash(indices[j], indices[j] * interval, stateHashes[j]);
        }
        bytes32 computed = processMultiproof(proof, depth(segments + 1), indices, stateHashes);
        valid = computed != bytes32(0) && computed == root;
    }
}
