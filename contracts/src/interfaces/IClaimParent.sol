// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title IClaimParent
/// @notice Callback the arbitration committee makes to its claim parent (the RunRegistry) when a
///         claim dispute the parent opened (`IArbitrationCommittee.openClaimDispute`) is resolved.
/// @dev Contract of the committee (mirrors `IStepParent`): exactly once per claim dispute, never from
///      inside `openClaimDispute`. The voters' seats are unlocked by the committee before the call;
///      each non-voter's seat (`Dispute.seatStake`, Role.Verifier) is left locked for the parent to
///      slash.
interface IClaimParent {
    /// @notice Reports the outcome of a claim dispute (only the arbitration committee).
    /// @param disputeId Committee dispute id returned by `openClaimDispute`.
    /// @param claimValid True if the claim under dispute is right (a tie or no vote keeps it).
    /// @param majority Members that voted with the outcome (the parent pays each `arbiterFee`
    ///        while its pot lasts).
    /// @param nonVoters Members that did not reveal (their seat stake is still locked; the parent
    ///        slashes it).
    function onClaimResolved(
        uint256 disputeId,
        bool claimValid,
        address[] calldata majority,
        address[] calldata nonVoters
    ) external;
}
