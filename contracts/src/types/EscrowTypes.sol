// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice A bucket of tokens the Escrow holds for the protocol (ABI: uint8).
/// @dev Unbooked is not a bucket but the source "tokens that arrived without being booked" (slashed
///      stake the StakeManager sent to the Escrow): its balance is the token balance minus every
///      bucket and credit, so an authorised contract can only book tokens that really arrived.
///      Escrowed: rewards and verifier fees of live jobs. Bonds: reject, challenge and move bonds.
///      Jackpot: the jackpot pool. Pot: a dispute pot, filled and emptied within one settlement.
enum Bucket {
    Unbooked,
    Escrowed,
    Bonds,
    Jackpot,
    Pot
}
