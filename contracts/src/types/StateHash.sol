// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice BLAKE3 of a checkpoint's canonical state bytes (PROTOCOL.md 2.2) (ABI: bytes32).
/// @dev A claim on a segment end may be the forced claim keccak256(FORCED_ERROR_TAG, trueEnd)
///      rather than a state hash (docs/FORCED_ERRORS.md); `LibStateHash.forcedClaim` builds it.
type StateHash is bytes32;

using {eqStateHash as ==, neqStateHash as !=} for StateHash global;
using LibStateHash for StateHash global;

/// @notice `a == b` for state hashes.
function eqStateHash(StateHash a, StateHash b) pure returns (bool) {
    return StateHash.unwrap(a) == StateHash.unwrap(b);
}

/// @notice `a != b` for state hashes.
function neqStateHash(StateHash a, StateHash b) pure returns (bool) {
    return StateHash.unwrap(a) != StateHash.unwrap(b);
}

/// @title LibStateHash
/// @notice Helpers of state hashes.
library LibStateHash {
    /// @notice Tag of forced claims: keccak256("veritrain.forced-error.v1").
    bytes32 internal constant FORCED_ERROR_TAG = keccak256("veritrain.forced-error.v1");

    /// @notice The forced claim hiding `trueEnd`: keccak256(abi.encodePacked(FORCED_ERROR_TAG, trueEnd)).
    /// @param trueEnd True end state hash.
    /// @return claim The forced claim.
    function forcedClaim(StateHash trueEnd) internal pure returns (StateHash claim) {
        claim = StateHash.wrap(keccak256(abi.encodePacked(FORCED_ERROR_TAG, StateHash.unwrap(trueEnd))));
    }

    /// @notice The 40-bit tag of a replayed end of sample `sampleIndex`, from the end's first 96 bits
    ///         `end`: bytes5(keccak256(abi.encode(sampleIndex, end))) with its lowest bit set, so never
    ///         zero (zero means no tag). The VerificationRound tags a seat's first rejected sample
    ///         with it (kept in the seat's word at the JobManager) and the forced sample's true end,
    ///         whose first 96 bits it keeps, is tagged the same way to compare: binding the sample
    ///         index, a tag of one sample matches another sample's with probability 2^-39 only.
    /// @param sampleIndex Sample (< 64).
    /// @param end The end's first 96 bits.
    /// @return tag The tag.
    function endTag(uint256 sampleIndex, bytes12 end) internal pure returns (bytes5 tag) {
        tag = bytes5(keccak256(abi.encode(sampleIndex, end))) | bytes5(uint40(1));
    }

    /// @notice Whether the hash is zero.
    /// @param stateHash Hash.
    /// @return zero True for the zero hash.
    function isZero(StateHash stateHash) internal pure returns (bool zero) {
        zero = StateHash.unwrap(stateHash) == bytes32(0);
    }
}
