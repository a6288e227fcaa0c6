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

    /// @notice Whether the hash is zero.
    /// @param stateHash Hash.
    /// @return zero True for the zero hash.
    function isZero(StateHash stateHash) internal pure returns (bool zero) {
        zero = StateHash.unwrap(stateHash) == bytes32(0);
    }
}
