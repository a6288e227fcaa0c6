// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;
import {Protocol_Invariant_Test} from "./Protocol.invariant.t.sol";
contract Tmp2_Test is Protocol_Invariant_Test {
    function test_walk() public {
        handler.postJob(0, 2 | (4 << 8), 100e18);
        handler.claimAndCommit(0, 0, false);
        handler.claimAndCommit(0, 0, true);
        handler.assignVerifiers(0);
        handler.submitVerdicts(0, 0, 3 << 8);
        handler.submitVerdicts(0, 1, 0);
        handler.finalize(0);
        assertEq(committee.disputeCount(), 1, "disputes");
        handler.drawCommittee(0);
        handler.vote(0, 0, true);
        handler.resolve(0);
        assertEq(handler.ghost_calls("drawCommittee"), 1, "draw"); assertEq(handler.ghost_calls("commitVote"), 1, "commit"); assertEq(handler.ghost_calls("resolve"), 1, "resolve");
        emit LogNamedUint256("status", uint8(jobManager.getJob(1).status));
    }
}
