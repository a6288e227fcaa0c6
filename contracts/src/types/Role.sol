// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice The three staking roles of the protocol (ABI: uint8 0, 1, 2).
/// @dev Each account keeps a separate stake per role in the StakeManager.
enum Role {
    Solver,
    Verifier,
    Whistleblower
}
