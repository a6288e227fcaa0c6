// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Libraries
import {Hashes} from "@openzeppelin/contracts/utils/cryptography/Hashes.sol";
import {LibCheckpoint} from "../../src/libraries/LibCheckpoint.sol";

/// @title Merkle
/// @notice Reference builder of the positional checkpoint tree of PROTOCOL.md 2.3 (what the Python
///         solver builds): leaves at their positions, padded with LibCheckpoint.ZERO_LEAF to a power
///         of two, ordered-pair keccak, proofs bottom-up of exactly the tree depth.
library Merkle {
    /// @notice Leaves of checkpoints 0..M with state hashes of steps 0, k, 2k, ...
    function leaves(uint256 interval, bytes32[] memory stateHashes) internal pure returns (bytes32[] memory out) {
        out = new bytes32[](stateHashes.length);
        for (uint256 i; i < stateHashes.length; ++i) {
            out[i] = LibCheckpoint.leafHash(i, i * interval, stateHashes[i]);
        }
    }

    /// @notice Root of the tree over `nodes` at positions 0.. (copied, not modified).
    function root(bytes32[] memory nodes) internal pure returns (bytes32) {
        bytes32[] memory layer = _padded(nodes);
        for (uint256 n = layer.length; n > 1; n /= 2) {
            _fold(layer, n);
        }
        return layer[0];
    }

    /// @notice Proof of position `index`: one sibling per level, bottom-up.
    function proof(bytes32[] memory nodes, uint256 index) internal pure returns (bytes32[] memory out) {
        bytes32[] memory layer = _padded(nodes);
        out = new bytes32[](LibCheckpoint.depth(nodes.length));
        uint256 h;
        for (uint256 n = layer.length; n > 1; n /= 2) {
            out[h++] = layer[index ^ 1];
            _fold(layer, n);
            index /= 2;
        }
    }

    /// @notice Root implied by `leaf` at position `index` with sibling hashes `siblings` (bottom-up;
    ///         a memory twin of LibCheckpoint.processProof).
    function fold(bytes32[] memory siblings, uint256 index, bytes32 leaf) internal pure returns (bytes32 computed) {
        computed = leaf;
        for (uint256 h; h < siblings.length; ++h) {
            computed = (index >> h) & 1 == 0
                ? Hashes.efficientKeccak256(computed, siblings[h])
                : Hashes.efficientKeccak256(siblings[h], computed);
        }
    }

    /// @notice Multiproof of the strictly increasing positions `indices` (LibCheckpoint.processMultiproof
    ///         folds it): level by level, left to right, the sibling of every node whose sibling is
    ///         not itself a proven node.
    function multiproof(bytes32[] memory nodes, uint256[] memory indices) internal pure returns (bytes32[] memory out) {
        bytes32[] memory layer = _padded(nodes);
        uint256[] memory level = new uint256[](indices.length);
        for (uint256 i; i < indices.length; ++i) {
            level[i] = indices[i];
        }
        bytes32[] memory buffer = new bytes32[](indices.length * LibCheckpoint.depth(nodes.length));
        uint256 used;
        uint256 count = level.length;
        for (uint256 n = layer.length; n > 1; n /= 2) {
            uint256 written;
            for (uint256 i; i < count; ++written) {
                uint256 position = level[i];
                if (position % 2 == 0 && i + 1 < count && level[i + 1] == position + 1) {
                    i += 2;
                } else {
                    buffer[used++] = layer[position ^ 1];
                    ++i;
                }
                level[written] = position / 2;
            }
            count = written;
            _fold(layer, n);
        }
        out = new bytes32[](used);
        for (uint256 i; i < used; ++i) {
            out[i] = buffer[i];
        }
    }

    /// @notice The checkpoints a secret reveal proves for sampled `segments` (increasing): each
    ///         segment's start s and end s + 1, once each, in increasing order.
    function claimIndices(uint32[] memory segments) internal pure returns (uint256[] memory indices) {
        uint256[] memory buffer = new uint256[](2 * segments.length);
        uint256 count;
        for (uint256 j; j < segments.length; ++j) {
            if (count == 0 || buffer[count - 1] != segments[j]) buffer[count++] = segments[j];
            buffer[count++] = uint256(segments[j]) + 1;
        }
        indices = new uint256[](count);
        for (uint256 i; i < count; ++i) {
            indices[i] = buffer[i];
        }
    }

    /// @notice Hashes the first `n` nodes of `layer` pairwise (left, right) into its first n / 2.
    function _fold(bytes32[] memory layer, uint256 n) private pure {
        for (uint256 i; i < n / 2; ++i) {
            layer[i] = Hashes.efficientKeccak256(layer[2 * i], layer[2 * i + 1]);
        }
    }

    /// @notice `nodes` copied and padded with ZERO_LEAF to 2^depth entries.
    function _padded(bytes32[] memory nodes) private pure returns (bytes32[] memory out) {
        out = new bytes32[](uint256(1) << LibCheckpoint.depth(nodes.length));
        for (uint256 i; i < out.length; ++i) {
            out[i] = i < nodes.length ? nodes[i] : LibCheckpoint.ZERO_LEAF;
        }
    }
}
