// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;
import {Protocol_Invariant_Test} from "./Protocol.invariant.t.sol";
contract Tmp_Test is Protocol_Invariant_Test {
    function invariant_zz_report() public {
        string[14] memory names = ["postJob","cancelJob","claimJob","commitCheckpoints","reclaimExpired","assignVerifiers","submitVerdicts","challengeApproval","finalize","drawCommittee","commitVote","revealVote","resolve","claimCredit"];
        for (uint256 i; i < names.length; ++i) emit LogNamedUint256(names[i], handler.ghost_calls(bytes32(bytes(names[i]))));
        emit LogNamedUint256("slashes", handler.ghost_slashes());
        emit LogNamedUint256("jobs", jobManager.jobCount());
        emit LogNamedUint256("disputes", committee.disputeCount());
        assertTrue(handler.ghost_calls("revealVote") < 3 , "report");
    }
}
