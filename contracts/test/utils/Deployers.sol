// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {PRBTest} from "@prb/test/PRBTest.sol";
import {Bound} from "./Bound.sol";
import {Merkle} from "./Merkle.sol";
import {VmExt} from "./VmExt.sol";
// Deployment
import {Deploy} from "../../script/Deploy.sol";
// Contracts
import {ArbitrationCommittee} from "../../src/ArbitrationCommittee.sol";
import {BisectionGame} from "../../src/BisectionGame.sol";
import {JobManager} from "../../src/JobManager.sol";
import {ShareRegistry} from "../../src/ShareRegistry.sol";
import {StakeManager} from "../../src/StakeManager.sol";
import {VeriToken} from "../../src/VeriToken.sol";
// Types
import {Dispute} from "../../src/types/DisputeTypes.sol";
import {Job, Params} from "../../src/types/JobTypes.sol";
import {Role} from "../../src/types/Role.sol";

/// @title Deployers
/// @notice Shared setup of the veritrain tests: deploys through script/Deploy.sol exactly as the
///         Python deployer does, funds and stakes a cast of actors, and scripts protocol steps.
abstract contract Deployers is PRBTest, Bound {
    ////// Constants //////

    VmExt internal constant vmx = VmExt(address(uint160(uint256(keccak256("hevm cheat code")))));

    bytes32 internal constant MODEL_ID = keccak256("digits-mlp");
    bytes32 internal constant SPEC_HASH = keccak256("canonical spec json");
    string internal constant SPEC_URI = "data:application/json;base64,e30=";
    string internal constant CHECKPOINT_URL = "http://127.0.0.1:8000/jobs/1";
    uint32 internal constant TOTAL_STEPS = 16;
    uint32 internal constant INTERVAL = 2;
    uint256 internal constant REWARD = 1000e18;
    uint256 internal constant FUNDS = 1_000_000e18;
    uint256 internal constant VERIFIER_POOL = 7;
    uint256 internal constant START_TIME = 1_700_000_000;
    uint256 internal constant START_BLOCK = 1000;

    ////// State //////

    VeriToken internal token;
    StakeManager internal stakeManager;
    ShareRegistry internal registry;
    JobManager internal jobManager;
    ArbitrationCommittee internal committee;
    BisectionGame internal game; // zero unless deployed with the bisection adjudicator
    Params internal params;

    address internal submitter;
    address internal solver;
    address internal whistleblower;
    address internal stranger;
    address[] internal verifierPool;

    ////// Setup //////

    function setUp() public virtual {
        vm.warp(START_TIME);
        vm.roll(START_BLOCK);
        _deploy(Deploy.defaultConfig());
        _setUpActors();
    }

    function _deploy(Deploy.Config memory cfg) internal {
        Deploy.Deployment memory d = Deploy.deploy(cfg);
        token = VeriToken(address(d.token));
        stakeManager = d.stakeManager;
        registry = d.shareRegistry;
        jobManager = d.jobManager;
        committee = d.committee;
        game = d.bisectionGame;
        params = jobManager.params();
    }

    function _setUpActors() internal {
        submitter = _actor("submitter");
        solver = _actor("solver");
        whistleblower = _actor("whistleblower");
        stranger = _actor("stranger");
        _stake(solver, Role.Solver, 1000e18);
        _stake(whistleblower, Role.Whistleblower, 100e18);
        for (uint256 i; i < VERIFIER_POOL; ++i) {
            address verifier = _actor(string.concat("verifier", vm.toString(i)));
            verifierPool.push(verifier);
            _stake(verifier, Role.Verifier, 500e18);
        }
    }

    ////// Actors //////

    /// @notice A labelled, funded address that approved the JobManager and the StakeManager.
    function _actor(string memory name) internal returns (address account) {
        account = address(uint160(uint256(keccak256(bytes(name)))));
        vm.label(account, name);
        vm.startPrank(account);
        token.faucet(FUNDS);
        token.approve(address(jobManager), type(uint256).max);
        token.approve(address(stakeManager), type(uint256).max);
        vm.stopPrank();
    }

    function _stake(address account, Role role, uint256 amount) internal {
        vm.prank(account);
        stakeManager.stake(role, amount);
    }

    ////// Protocol steps //////

    function _postJob() internal returns (uint256 jobId) {
        vm.prank(submitter);
        jobId = jobManager.postJob(MODEL_ID, SPEC_HASH, TOTAL_STEPS, INTERVAL, REWARD, SPEC_URI);
    }

    /// @notice State hashes of checkpoints 0..N/k of an honest run (any fixed values do).
    function _stateHashes(uint32 totalSteps, uint32 interval) internal pure returns (bytes32[] memory hashes) {
        hashes = new bytes32[](totalSteps / interval + 1);
        for (uint256 i; i < hashes.length; ++i) {
            hashes[i] = sha256(abi.encode("state", i));
        }
    }

    function _root(uint32 totalSteps, uint32 interval) internal pure returns (bytes32) {
        return Merkle.root(Merkle.leaves(interval, _stateHashes(totalSteps, interval)));
    }

    function _claimAndCommit(uint256 jobId) internal {
        vm.prank(solver);
        jobManager.claimJob(jobId);
        // Computed before the prank: sha256 is a precompile call and would consume it.
        bytes32 root = _root(TOTAL_STEPS, INTERVAL);
        vm.prank(solver);
        jobManager.commitCheckpoints(jobId, root, CHECKPOINT_URL);
    }

    function _assign(uint256 jobId) internal {
        vm.roll(block.number + 2);
        jobManager.assignVerifiers(jobId);
    }

    /// @notice A job posted, claimed, committed and assigned (status Verifying).
    function _verifyingJob() internal returns (uint256 jobId) {
        jobId = _postJob();
        _claimAndCommit(jobId);
        _assign(jobId);
    }

    function _assigned(uint256 jobId) internal view returns (address[] memory verifiers) {
        (verifiers,) = jobManager.getAssignment(jobId);
    }

    function _samples(uint256 jobId) internal view returns (uint256) {
        (, uint32[] memory segments) = jobManager.getAssignment(jobId);
        return segments.length;
    }

    function _approvals(uint256 count, uint256 rejectMask) internal pure returns (bool[] memory approvals) {
        approvals = new bool[](count);
        for (uint256 i; i < count; ++i) {
            approvals[i] = (rejectMask >> i) & 1 == 0;
        }
    }

    function _submit(uint256 jobId, address verifier, uint256 rejectMask) internal {
        bool[] memory approvals = _approvals(_samples(jobId), rejectMask);
        vm.prank(verifier);
        jobManager.submitVerdicts(jobId, approvals);
    }

    function _submitAll(uint256 jobId, uint256 rejectMask) internal {
        address[] memory verifiers = _assigned(jobId);
        for (uint256 i; i < verifiers.length; ++i) {
            _submit(jobId, verifiers[i], rejectMask);
        }
    }

    function _passChallengeWindow(uint256 jobId) internal {
        vm.warp(jobManager.getJob(jobId).challengeDeadline + 1);
    }

    function _drawCommittee(uint256 disputeId) internal returns (address[] memory members) {
        vm.roll(block.number + 2);
        committee.drawCommittee(disputeId);
        members = committee.committeeOf(disputeId);
    }

    function _salt(address member) internal pure returns (bytes32) {
        return keccak256(abi.encode("salt", member));
    }

    function _commitVote(uint256 disputeId, address member, bool segmentValid) internal {
        bytes32 commitment = committee.voteHash(disputeId, member, segmentValid, _salt(member));
        vm.prank(member);
        committee.commitVote(disputeId, commitment);
    }

    function _revealVote(uint256 disputeId, address member, bool segmentValid) internal {
        vm.prank(member);
        committee.revealVote(disputeId, segmentValid, _salt(member));
    }

    /// @notice Draws the committee; every member votes `segmentValid`; resolves.
    function _arbitrate(uint256 disputeId, bool segmentValid) internal returns (address[] memory members) {
        members = _drawCommittee(disputeId);
        for (uint256 i; i < members.length; ++i) {
            _commitVote(disputeId, members[i], segmentValid);
        }
        for (uint256 i; i < members.length; ++i) {
            _revealVote(disputeId, members[i], segmentValid);
        }
        committee.resolve(disputeId);
    }

    function _dispute(uint256 disputeId) internal view returns (Dispute memory) {
        return committee.getDispute(disputeId);
    }

    function _job(uint256 jobId) internal view returns (Job memory) {
        return jobManager.getJob(jobId);
    }

    function _staked(address account, Role role) internal view returns (uint256 staked) {
        (staked,,,) = stakeManager.stakeOf(account, role);
    }

    function _locked(address account, Role role) internal view returns (uint256 locked) {
        (, locked,,) = stakeManager.stakeOf(account, role);
    }

    function _isIn(address[] memory list, address account) internal pure returns (bool) {
        for (uint256 i; i < list.length; ++i) {
            if (list[i] == account) return true;
        }
        return false;
    }

    /// @notice Token balance of the JobManager minus everything it owes (must never be negative).
    function _assertJobManagerSolvent() internal {
        (uint256 escrowed, uint256 bonds, uint256 credits) = jobManager.liabilities();
        assertGte(token.balanceOf(address(jobManager)), escrowed + bonds + credits, "JobManager insolvent");
    }
}
