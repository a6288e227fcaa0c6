// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";

/// @notice Id of a submission: one solver's attempt at one job (ABI: bytes32). Verification rounds,
///         disputes and share mints act on a submission; job-level calls keep the job id.
/// @dev The pair itself, packed: `jobId << 160 | solver` (`LibSubmission.id`; job ids are below
///      2^96). No storage word maps an id back to its job and solver: `jobIdOf` and `solverOf`
///      read them from the id, so a claim and a commit create one word less each than with a hash
///      (and every round action reads one cold word less). Whether the id is its job's active
///      submission is the job's solver (`JobManager.submissionOf`). A solver that replaces another
///      after `reclaimExpired` gets a fresh id; a job has one active submission at a time.
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
    /// @notice The id of `solver`'s submission to job `jobId`: `jobId << 160 | solver`. Reverts
    ///         SafeCastOverflowedUintDowncast for a job id of 2^96 or more (the JobManager's ids
    ///         stay far below).
    /// @param jobId Job.
    /// @param solver Solver.
    /// @return submissionId The id.
    function id(uint256 jobId, address solver) internal pure returns (SubmissionId submissionId) {
        submissionId = SubmissionId.wrap(bytes32((uint256(SafeCast.toUint96(jobId)) << 160) | uint160(solver)));
    }

    /// @notice The job an id names (its upper 96 bits; 0 for the zero id).
    /// @param submissionId Id.
    /// @return jobId Job.
    function jobIdOf(SubmissionId submissionId) internal pure returns (uint256 jobId) {
        jobId = uint256(SubmissionId.unwrap(submissionId)) >> 160;
    }

    /// @notice The solver an id names (its lower 160 bits; zero for the zero id).
    /// @param submissionId Id.
    /// @return solver Solver.
    function solverOf(SubmissionId submissionId) internal pure returns (address solver) {
        solver = address(uint160(uint256(SubmissionId.unwrap(submissionId))));
    }

    /// @notice Whether the id is zero (no submission).
    /// @param submissionId Id.
    /// @return zero True for the zero id.
    function isZero(SubmissionId submissionId) internal pure returns (bool zero) {
        zero = SubmissionId.unwrap(submissionId) == bytes32(0);
    }
}
