// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title IAdjudicator
/// @notice What the JobManager needs from whatever decides a disputed segment. The JobManager only
///         talks to this interface, so the arbitration committee can be replaced (e.g. by a bisection
///         game or an on-chain one-step check) without touching the JobManager.
/// @dev Contract of an adjudicator:
///      1. `openDispute` is called by the JobManager only, and returns a fresh non-zero id.
///      2. Exactly once per dispute it calls back `IJobManager.onDisputeResolved(disputeId,
///         segmentValid, majority, nonVoters)`. `majority` receive `arbiterFee` from the pot;
///         each `nonVoters` entry is slashed `params().verifierStake` (Verifier role) by the
///         JobManager, so the adjudicator must have locked exactly that much for each of them and
///         must not unlock it. An adjudicator without voters passes two empty arrays.
///      3. It must never call back for an unknown or already resolved dispute, and never from
///         inside `openDispute` (the JobManager records the id after `openDispute` returns).
interface IAdjudicator {
    /// @notice Opens a dispute on segment `segment` of job `jobId`.
    /// @param jobId JobManager job.
    /// @param segment Segment index s (steps s*k .. (s+1)*k).
    /// @param challenger The party whose challenge opens this dispute: the next rejecting verifier
    ///        of the sample (assignment order), else the next whistleblower that challenged one of
    ///        its approvals, skipping those that already lost a game on it. A game played one
    ///        against one pits it against the solver; a committee judges the segment itself.
    /// @param excluded Accounts that must never judge it (the solver, the submitter).
    /// @param reserve Accounts whose verdicts on the job ride on the outcome (the job's verifiers):
    ///        an adjudicator that draws judges takes them only when fewer than its quorum of
    ///        verifiers with nothing at stake are eligible (small networks, where V + K exceeds the
    ///        verifier set). With a large verifier set they never sit.
    /// @return disputeId Non-zero id of the new dispute.
    /// @return challengerOnly True when a ruling for the solver binds only `challenger` (it lost its
    ///         own game, by moves or by its clock): the JobManager then slashes that challenger alone
    ///         and opens the next challenger's dispute on the same sample, so any one honest
    ///         challenger can win (Arbitrum BoLD's guarantee). False when the ruling binds every
    ///         challenger of the sample (a committee that replays the segment itself).
    function openDispute(
        uint256 jobId,
        uint32 segment,
        address challenger,
        address[] calldata excluded,
        address[] calldata reserve
    ) external returns (uint256 disputeId, bool challengerOnly);
}
