// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice Id of a submission: one solver's attempt at one job (ABI: bytes32). Verification rounds,
///         disputes and share mints act on a submission; job-level calls keep the job id.
/// @dev keccak256(abi.encode(jobId, solver)) (`LibSubmission.id`). A solver that replaces another
///      after `reclaimExpired` gets a fresh id; today a job has one active submission at a time.
type SubmissionId is bytes32;

using {eqSubmissionId as ==, neqSubmissionId as !=} for SubmissionId global;
using LibSubmission for SubmissionId global;

/// @notice `a == b` for submission ids.
function eqSubmissionId(SubmissionId a, SubmissionId b) pure returns (bool) {
    return SubmissionId.unwrap(a) == SubmissionId.unwrap(b);
}

/// @notice `a != b` for submission ids.
function neqSubmissionId(SubmissionId a, SubmissionId b) pure returns (bool) {
    return SubmissionId.unwrap(a) != SubmissionId.unwrap(b);
}

/// @title LibSubmission
/// @notice Builds and inspects submission ids.
library LibSubmission {
    /// @notice The id of `solver`'s submission to job `jobId`: keccak256(abi.encode(jobId, solver)).
    /// @param jobId Job.
    /// @param solver Solver.
    /// @return submissionId The id.
    function id(uint256 jobId, address solver) internal pure returns (SubmissionId submissionId) {
        submissionId = SubmissionId.wrap(keccak256(abi.encode(jobId, solver)));
    }

    /// @notice Whether the id is zero (no submission).
    /// @param submissionId Id.
    /// @return zero True for the zero id.
    function isZero(SubmissionId submissionId) internal pure returns (bool zero) {
        zero = SubmissionId.unwrap(submissionId) == bytes32(0);
    }
}
