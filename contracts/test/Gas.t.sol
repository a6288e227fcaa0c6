// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Deployers} from "./utils/Deployers.sol";
// Contracts
import {ModelShares} from "../src/ModelShares.sol";
// Types
import {Role} from "../src/types/Role.sol";

/// @title Gas_Test
/// @notice Records the gas of every protocol action in contracts/snapshots/veritrain.json (and the
///         bytecode sizes), with default params (V=3, q=4, K=3, N=16, k=2). Runs in isolation mode
///         so every call is its own transaction with cold storage, as on chain (figures include
///         the 21,000 intrinsic gas and calldata).
/// forge-config: default.isolate = true
/// forge-config: ci.isolate = true
contract Gas_Test is Deployers {
    string internal constant GROUP = "veritrain";

    function _snap(string memory name) internal {
        vmx.snapshotGasLastCall(GROUP, name);
    }

    function test_stake_gas() public {
        address account = _actor("gas staker");
        vm.prank(account);
        stakeManager.stake(Role.Verifier, 500e18);
        _snap("StakeManager.stake (first, verifier)");
        vm.prank(account);
        stakeManager.requestUnbond(Role.Verifier, 500e18);
        _snap("StakeManager.requestUnbond");
        vm.warp(block.timestamp + 1 days);
        vm.prank(account);
        stakeManager.withdraw(Role.Verifier);
        _snap("StakeManager.withdraw");
    }

    function test_faucet_gas() public {
        vm.prank(stranger);
        token.faucet(1e18);
        _snap("VeriToken.faucet");
    }

    function test_honestLifecycle_gas() public {
        vm.prank(submitter);
        uint256 jobId = jobManager.postJob(MODEL_ID, SPEC_HASH, TOTAL_STEPS, INTERVAL, REWARD, SPEC_URI);
        _snap("JobManager.postJob");
        vm.prank(solver);
        jobManager.claimJob(jobId);
        _snap("JobManager.claimJob");
        bytes32 root = _root(TOTAL_STEPS, INTERVAL);
        vm.prank(solver);
        jobManager.commitCheckpoints(jobId, root, CHECKPOINT_URL);
        _snap("JobManager.commitCheckpoints");
        vm.roll(block.number + 2);
        jobManager.assignVerifiers(jobId);
        _snap("JobManager.assignVerifiers (V=3, q=4)");
        address[] memory verifiers = _assigned(jobId);
        bool[] memory approvals = _approvals(4, 0);
        vm.prank(verifiers[0]);
        jobManager.submitVerdicts(jobId, approvals);
        _snap("JobManager.submitVerdicts (approve all)");
        vm.prank(verifiers[1]);
        jobManager.submitVerdicts(jobId, approvals);
        vm.prank(verifiers[2]);
        jobManager.submitVerdicts(jobId, approvals);
        _snap("JobManager.submitVerdicts (last verifier)");
        vm.prank(whistleblower);
        jobManager.challengeApproval(jobId, 0, verifiers[0]);
        _snap("JobManager.challengeApproval");
        _passChallengeWindow(jobId);
        jobManager.finalize(jobId);
        _snap("JobManager.finalize (opens dispute)");
        uint256 disputeId = _job(jobId).disputeId;
        vm.roll(block.number + 2);
        committee.drawCommittee(disputeId);
        _snap("ArbitrationCommittee.drawCommittee (K=3)");
        address[] memory members = committee.committeeOf(disputeId);
        _commitVote(disputeId, members[0], true);
        _snap("ArbitrationCommittee.commitVote");
        _commitVote(disputeId, members[1], true);
        _commitVote(disputeId, members[2], true);
        _revealVote(disputeId, members[0], true);
        _snap("ArbitrationCommittee.revealVote");
        _revealVote(disputeId, members[1], true);
        _revealVote(disputeId, members[2], true);
        committee.resolve(disputeId);
        _snap("ArbitrationCommittee.resolve (valid, whistleblower loses)");
        jobManager.finalize(jobId);
        _snap("JobManager.finalize (finalized, first model mint)");
        vm.prank(solver);
        jobManager.claimCredit();
        _snap("JobManager.claimCredit");

        ModelShares shares = ModelShares(registry.sharesOf(MODEL_ID));
        vm.prank(solver);
        assertTrue(shares.transfer(stranger, 4));
        _snap("ModelShares.transfer");
        vm.prank(submitter);
        token.approve(address(shares), type(uint256).max);
        vm.prank(submitter);
        shares.payRevenue(100e18);
        _snap("ModelShares.payRevenue");
        vm.prank(solver);
        shares.claimRevenue();
        _snap("ModelShares.claimRevenue");
    }

    function test_finalizeNoDispute_gas() public {
        uint256 first = _verifyingJob();
        _submitAll(first, 0);
        _passChallengeWindow(first);
        jobManager.finalize(first);
        uint256 jobId = _verifyingJob();
        _submitAll(jobId, 0);
        _passChallengeWindow(jobId);
        jobManager.finalize(jobId);
        _snap("JobManager.finalize (finalized, existing model)");
    }

    function test_submitVerdictsReject_gas() public {
        uint256 jobId = _verifyingJob();
        address verifier = _assigned(jobId)[0];
        bool[] memory approvals = _approvals(4, 1);
        vm.prank(verifier);
        jobManager.submitVerdicts(jobId, approvals);
        _snap("JobManager.submitVerdicts (one reject)");
    }

    function test_resolveInvalid_gas() public {
        uint256 jobId = _verifyingJob();
        address[] memory verifiers = _assigned(jobId);
        _submit(jobId, verifiers[0], 1);
        _submit(jobId, verifiers[1], 0);
        _submit(jobId, verifiers[2], 0);
        _passChallengeWindow(jobId);
        jobManager.finalize(jobId);
        uint256 disputeId = _job(jobId).disputeId;
        address[] memory members = _drawCommittee(disputeId);
        for (uint256 i; i < members.length; ++i) {
            _commitVote(disputeId, members[i], false);
        }
        for (uint256 i; i < members.length; ++i) {
            _revealVote(disputeId, members[i], false);
        }
        committee.resolve(disputeId);
        _snap("ArbitrationCommittee.resolve (invalid, job rejected)");
    }

    function test_cancelAndReclaim_gas() public {
        uint256 jobId = _postJob();
        vm.prank(submitter);
        jobManager.cancelJob(jobId);
        _snap("JobManager.cancelJob");
        jobId = _postJob();
        vm.prank(solver);
        jobManager.claimJob(jobId);
        vm.warp(_job(jobId).commitDeadline + 1);
        jobManager.reclaimExpired(jobId);
        _snap("JobManager.reclaimExpired");
    }

    function test_bytecodeSize_gas() public {
        vmx.snapshotValue(GROUP, "size JobManager", address(jobManager).code.length);
        vmx.snapshotValue(GROUP, "size ArbitrationCommittee", address(committee).code.length);
        vmx.snapshotValue(GROUP, "size StakeManager", address(stakeManager).code.length);
        vmx.snapshotValue(GROUP, "size ShareRegistry", address(registry).code.length);
        vmx.snapshotValue(GROUP, "size VeriToken", address(token).code.length);
    }
}
