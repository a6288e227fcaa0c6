// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title IStepAdjudicator
/// @notice Judges a single training step t -> t + 1 for a parent game (the bisection game), once the
///         game has narrowed a disputed segment down to one step. v0's step adjudicator is the
///         arbitration committee run on one step; a later one can check the step on chain.
/// @dev Contract of a step adjudicator (mirrors `IAdjudicator`):
///      1. `openStepDispute` is called by the authorized parent only and returns a fresh non-zero id.
///      2. Exactly once per step dispute it calls back `IStepParent.onStepResolved(stepDisputeId,
///         claimValid, majority, nonVoters)`, never from inside `openStepDispute`. `nonVoters` are
///         forwarded to `IJobManager.onDisputeResolved`, so the same seat-locking rule applies:
///         each must have `params().verifierStake` locked (Verifier role) and left locked.
interface IStepAdjudicator {
    /// @notice Opens a dispute on steps t -> t + steps of job `jobId` (one step, or a whole interval
    ///         a challenger escalated because it could not get the data to bisect it).
    /// @param jobId JobManager job.
    /// @param step Step t (the claim is about the state at t + steps).
    /// @param steps Steps to replay (>= 1; within one segment).
    /// @param startHash State hash at step t (agreed by both sides).
    /// @param claimedEndHash The defender's state hash at step t + steps.
    /// @param excluded Accounts that must never judge it (the solver, the submitter).
    /// @param reserve Accounts whose stake rides on the outcome (the job's verifiers): drawn only
    ///        when too few verifiers with nothing at stake are eligible.
    /// @return stepDisputeId Non-zero id of the new step dispute.
    function openStepDispute(
        uint256 jobId,
        uint32 step,
        uint32 steps,
        bytes32 startHash,
        bytes32 claimedEndHash,
        address[] calldata excluded,
        address[] calldata reserve
    ) external returns (uint256 stepDisputeId);
}

/// @title IStepParent
/// @notice Callback a step adjudicator makes to the game that opened a step dispute.
interface IStepParent {
    /// @notice Reports the outcome of a step dispute (only the step adjudicator).
    /// @param stepDisputeId Step adjudicator's dispute id.
    /// @param claimValid True if the defender's claimed end hash is right (the defender wins).
    /// @param majority Judges that voted with the outcome (paid `arbiterFee` by the JobManager).
    /// @param nonVoters Judges that did not vote (slashed `verifierStake` by the JobManager).
    function onStepResolved(
        uint256 stepDisputeId,
        bool claimValid,
        address[] calldata majority,
        address[] calldata nonVoters
    ) external;

    /// @notice The two hashes a step dispute judges, kept by the parent (the adjudicator stores only
    ///         the steps): fixed from the moment the parent opened the step dispute.
    /// @param stepDisputeId Step adjudicator's dispute id.
    /// @return startHash State hash at the first step both sides accept.
    /// @return claimedEndHash The defender's state hash at the last step.
    function stepHashesOf(uint256 stepDisputeId) external view returns (bytes32 startHash, bytes32 claimedEndHash);
}
