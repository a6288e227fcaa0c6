// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {Deployers} from "./Deployers.sol";
import {Params} from "../../src/types/JobTypes.sol";

/// @notice Shared setup for the JobManager tests (deploys through script/Deploy.sol).
abstract contract JobManager_Init is Deployers {
    /// @notice A Verifying job where verifier 0 rejected sample 0 and the others approved all.
    function _rejectedJob() internal returns (uint256 jobId, address[] memory verifiers) {
        jobId = _verifyingJob();
        verifiers = _assigned(jobId);
        _submit(jobId, verifiers[0], 1);
        for (uint256 i = 1; i < verifiers.length; ++i) {
            _submit(jobId, verifiers[i], 0);
        }
    }

    function _defaultParams() internal view returns (Params memory p) {
        p = params;
    }
}
