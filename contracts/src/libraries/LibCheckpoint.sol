// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Libraries
import {MerkleProof} from "@openzeppelin/contracts/utils/cryptography/MerkleProof.sol";

/// @title LibCheckpoint
/// @notice Checkpoint Merkle commitment of PROTOCOL.md 2.3: leaves are double-hashed
///         `(step, stateHash)` pairs, pairs are hashed sorted (OpenZeppelin `commutativeKeccak256`),
///         an odd node is carried up unchanged, and proofs verify with `MerkleProof.verify`.
library LibCheckpoint {
    /// @notice Leaf of the checkpoint at `step`: keccak256(bytes.concat(keccak256(abi.encode(step, stateHash)))).
    /// @dev The double hash keeps a 64-byte inner node from ever being read as a leaf.
    /// @param step Training step of the checkpoint (steps).
    /// @param stateHash sha256 of the canonical checkpoint bytes.
    /// @return leaf The leaf hash.
    function leafHash(uint256 step, bytes32 stateHash) internal pure returns (bytes32 leaf) {
        leaf = keccak256(bytes.concat(keccak256(abi.encode(step, stateHash))));
    }

    /// @notice Whether `stateHash` at `step` is a leaf of the tree with root `root`.
    /// @param proof Sibling hashes, bottom-up.
    /// @param root Merkle root.
    /// @param step Training step of the checkpoint (steps).
    /// @param stateHash sha256 of the canonical checkpoint bytes.
    /// @return valid True if the proof verifies.
    function verify(bytes32[] calldata proof, bytes32 root, uint256 step, bytes32 stateHash)
        internal
        pure
        returns (bool valid)
    {
        valid = MerkleProof.verifyCalldata(proof, root, leafHash(step, stateHash));
    }
}
