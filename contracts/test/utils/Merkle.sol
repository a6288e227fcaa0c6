// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Libraries
import {Hashes} from "@openzeppelin/contracts/utils/cryptography/Hashes.sol";
import {LibCheckpoint} from "../../src/libraries/LibCheckpoint.sol";

/// @title Merkle
/// @notice Reference builder of the checkpoint tree of PROTOCOL.md 2.3 (what the Python solver
///         builds): sorted-pair keccak, odd node carried up unchanged, proofs bottom-up.
library Merkle {
    /// @notice Leaves for state hashes of steps 0, k, 2k, ...
    function leaves(uint256 interval, bytes32[] memory stateHashes) internal pure returns (bytes32[] memory out) {
        out = new bytes32[](stateHashes.length);
        for (uint256 i; i < stateHashes.length; ++i) {
            out[i] = LibCheckpoint.leafHash(i * interval, stateHashes[i]);
        }
    }

    /// @notice Root of a tree over `nodes` (copied, not modified).
    function root(bytes32[] memory nodes) internal pure returns (bytes32) {
        bytes32[] memory layer = _copy(nodes);
        uint256 n = layer.length;
        while (n > 1) {
            uint256 m = (n + 1) / 2;
            for (uint256 i; i < m; ++i) {
                layer[i] = 2 * i + 1 < n ? Hashes.commutativeKeccak256(layer[2 * i], layer[2 * i + 1]) : layer[2 * i];
            }
            n = m;
        }
        return layer[0];
    }

    /// @notice Proof of leaf `index`: sibling hashes bottom-up (no entry where the node is carried up).
    function proof(bytes32[] memory nodes, uint256 index) internal pure returns (bytes32[] memory out) {
        bytes32[] memory layer = _copy(nodes);
        bytes32[] memory buffer = new bytes32[](256);
        uint256 len;
        uint256 n = layer.length;
        while (n > 1) {
            uint256 sibling = index ^ 1;
            if (sibling < n) buffer[len++] = layer[sibling];
            uint256 m = (n + 1) / 2;
            for (uint256 i; i < m; ++i) {
                layer[i] = 2 * i + 1 < n ? Hashes.commutativeKeccak256(layer[2 * i], layer[2 * i + 1]) : layer[2 * i];
            }
            n = m;
            index /= 2;
        }
        out = new bytes32[](len);
        for (uint256 i; i < len; ++i) {
            out[i] = buffer[i];
        }
    }

    function _copy(bytes32[] memory nodes) private pure returns (bytes32[] memory out) {
        out = new bytes32[](nodes.length);
        for (uint256 i; i < nodes.length; ++i) {
            out[i] = nodes[i];
        }
    }
}
