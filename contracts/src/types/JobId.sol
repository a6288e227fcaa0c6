// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice Id of a training job (ABI: uint256); ids start at 1, 0 means none.
/// @dev Used for the JobManager's storage keys and by `LibSubmission`; the external job-level
///      functions keep `uint256 jobId` in their ABI (a UDVT encodes as its underlying type).
type JobId is uint256;

using {eqJobId as ==, neqJobId as !=} for JobId global;
using LibJobId for JobId global;

/// @notice `a == b` for job ids.
function eqJobId(JobId a, JobId b) pure returns (bool) {
    return JobId.unwrap(a) == JobId.unwrap(b);
}

/// @notice `a != b` for job ids.
function neqJobId(JobId a, JobId b) pure returns (bool) {
    return JobId.unwrap(a) != JobId.unwrap(b);
}

/// @title LibJobId
/// @notice Helpers of job ids.
library LibJobId {
    /// @notice Whether the id is zero (no job).
    /// @param jobId Id.
    /// @return zero True for job id 0.
    function isZero(JobId jobId) internal pure returns (bool zero) {
        zero = JobId.unwrap(jobId) == 0;
    }

    /// @notice The id as a uint256 (event and error fields).
    /// @param jobId Id.
    /// @return raw The id.
    function raw(JobId jobId) internal pure returns (uint256) {
        return JobId.unwrap(jobId);
    }
}
