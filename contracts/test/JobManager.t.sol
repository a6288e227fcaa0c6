// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Deployers} from "./utils/Deployers.sol";
import {Merkle} from "./utils/Merkle.sol";
import {Deploy} from "../script/Deploy.sol";
// Contracts
import {Escrow} from "../src/Escrow.sol";
import {JobManager} from "../src/JobManager.sol";
import {ShareRegistry} from "../src/ShareRegistry.sol";
import {VerificationRound} from "../src/VerificationRound.sol";
// Libraries
import {LibCheckpoint} from "../src/libraries/LibCheckpoint.sol";
// Interfaces
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {IERC20Errors} from "@openzeppelin/contracts/interfaces/draft-IERC6093.sol";
import {IEscrow} from "../src/interfaces/IEscrow.sol";
import {IAdjudicator} from "../src/interfaces/IAdjudicator.sol";
import {IJobManager} from "../src/interfaces/IJobManager.sol";
import {IShareRegistry} from "../src/interfaces/IShareRegistry.sol";
import {IStakeManager} from "../src/interfaces/IStakeManager.sol";
import {IVerificationRound} from "../src/interfaces/IVerificationRound.sol";
// Types
import {LibSubmission, SubmissionId} from "../src/types/SubmissionId.sol";
import {Bucket} from "../src/types/EscrowTypes.sol";
import {Job, JobStatus, Params, RoundJob, Verdict} from "../src/types/JobTypes.sol";
import {Role} from "../src/types/Role.sol";

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

contract JobManager_Constructor_Test is JobManager_Init {
    function _deployWith(Params memory p) internal returns (JobManager) {
        return new JobManager(
            escrow, IStakeManager(address(stakeManager)), IShareRegistry(address(registry)), p, address(this)
        );
    }

    function test_constructor_zeroAddress_reverts() public {
        Params memory p = _defaultParams();
        vm.expectRevert(IJobManager.ZeroAddress.selector);
        new JobManager(
            IEscrow(address(0)),
            IStakeManager(address(stakeManager)),
            IShareRegistry(address(registry)),
            p,
            address(this)
        );
        vm.expectRevert(IJobManager.ZeroAddress.selector);
        new JobManager(escrow, IStakeManager(address(stakeManager)), IShareRegistry(address(registry)), p, address(0));
    }

    function test_constructor_verifiersPerJobOutOfRange_reverts() public {
        Params memory p = _defaultParams();
        p.verifiersPerJob = 0;
        vm.expectRevert(abi.encodeWithSelector(IJobManager.InvalidParam.selector, "verifiersPerJob", 0));
        _deployWith(p);
        p.verifiersPerJob = 33;
        vm.expectRevert(abi.encodeWithSelector(IJobManager.InvalidParam.selector, "verifiersPerJob", 33));
        _deployWith(p);
    }

    function test_constructor_samplesPerJobOutOfRange_reverts() public {
        Params memory p = _defaultParams();
        p.samplesPerJob = 65;
        vm.expectRevert(abi.encodeWithSelector(IJobManager.InvalidParam.selector, "samplesPerJob", 65));
        _deployWith(p);
        p.samplesPerJob = 0;
        vm.expectRevert(abi.encodeWithSelector(IJobManager.InvalidParam.selector, "samplesPerJob", 0));
        _deployWith(p);
    }

    function test_constructor_zeroWindow_reverts() public {
        Params memory p = _defaultParams();
        p.commitWindow = 0;
        vm.expectRevert(abi.encodeWithSelector(IJobManager.InvalidParam.selector, "commitWindow", 0));
        _deployWith(p);
        p = _defaultParams();
        p.verdictWindow = 0;
        vm.expectRevert(abi.encodeWithSelector(IJobManager.InvalidParam.selector, "verdictWindow", 0));
        _deployWith(p);
        p = _defaultParams();
        p.revealWindow = 0;
        vm.expectRevert(abi.encodeWithSelector(IJobManager.InvalidParam.selector, "revealWindow", 0));
        _deployWith(p);
        p = _defaultParams();
        p.challengeWindow = 0;
        vm.expectRevert(abi.encodeWithSelector(IJobManager.InvalidParam.selector, "challengeWindow", 0));
        _deployWith(p);
    }

    function test_constructor_setsWiring_succeeds() public {
        assertEq(address(jobManager.escrow()), address(escrow));
        assertEq(address(jobManager.stakeManager()), address(stakeManager));
        assertEq(address(jobManager.shareRegistry()), address(registry));
        assertEq(address(jobManager.adjudicator()), address(committee));
        assertEq(jobManager.admin(), address(this));
        assertEq(address(jobManager.verificationRound()), address(round));
        assertEq(registry.minter(), address(jobManager));
        Params memory p = jobManager.params();
        assertEq(p.solverStake, 100e18);
        assertEq(uint256(p.verifiersPerJob), 3);
        assertEq(uint256(p.samplesPerJob), TOTAL_STEPS / INTERVAL);
        assertEq(p.jackpot, 20e18);
        assertEq(uint256(p.revealWindow), 10 minutes);
    }
}

contract JobManager_SetVerificationRound_Test is JobManager_Init {
    function test_setVerificationRound_again_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IJobManager.VerificationRoundAlreadySet.selector, address(round)));
        jobManager.setVerificationRound(IVerificationRound(address(1)));
    }

    function test_setVerificationRound_notAdmin_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IJobManager.NotAdmin.selector, stranger));
        vm.prank(stranger);
        jobManager.setVerificationRound(IVerificationRound(address(1)));
    }

    function test_setVerificationRound_fresh_succeeds() public {
        JobManager fresh = new JobManager(
            escrow, IStakeManager(address(stakeManager)), IShareRegistry(address(registry)), params, address(this)
        );
        vm.expectRevert(IJobManager.ZeroAddress.selector);
        fresh.setVerificationRound(IVerificationRound(address(0)));
        vm.expectEmit(address(fresh));
        emit IJobManager.VerificationRoundSet(address(round));
        fresh.setVerificationRound(round);
        assertEq(address(fresh.verificationRound()), address(round));
    }

    function test_commitCheckpoints_roundNotSet_reverts() public {
        JobManager fresh = new JobManager(
            escrow, IStakeManager(address(stakeManager)), IShareRegistry(address(registry)), params, address(this)
        );
        vm.expectRevert(IJobManager.VerificationRoundNotSet.selector);
        fresh.commitCheckpoints(
            1,
            _initRoot(TOTAL_STEPS, INTERVAL),
            _initOnlyProof(TOTAL_STEPS, INTERVAL),
            CHECKPOINT_URL,
            bytes32(uint256(1))
        );
    }
}

contract JobManager_FundJackpot_Test is JobManager_Init {
    function testFuzz_fundJackpot_addsToPool_succeeds(uint256 amount) public {
        amount = bound(amount, 0, FUNDS);
        uint256 balanceBefore = token.balanceOf(stranger);
        vm.expectEmit(address(escrow));
        emit IEscrow.Deposited(stranger, Bucket.Jackpot, stranger, amount);
        vm.prank(stranger);
        escrow.fundJackpot(amount);
        assertEq(escrow.jackpotPool(), amount);
        assertEq(token.balanceOf(stranger), balanceBefore - amount);
        (,,, uint256 pool) = escrow.liabilities();
        assertEq(pool, amount);
        _assertEscrowSolvent();
    }

    function test_fundJackpot_addsToPool_succeeds() public {
        testFuzz_fundJackpot_addsToPool_succeeds(100e18);
    }
}

contract JobManager_SetAdjudicator_Test is JobManager_Init {
    function test_setAdjudicator_again_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IJobManager.AdjudicatorAlreadySet.selector, address(committee)));
        jobManager.setAdjudicator(IAdjudicator(stranger));
    }

    function test_setAdjudicator_notAdmin_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IJobManager.NotAdmin.selector, stranger));
        vm.prank(stranger);
        jobManager.setAdjudicator(IAdjudicator(stranger));
    }

    function test_setAdjudicator_zero_reverts() public {
        vm.expectRevert(IJobManager.ZeroAddress.selector);
        jobManager.setAdjudicator(IAdjudicator(address(0)));
    }

    function test_setAdjudicator_once_succeeds() public {
        JobManager fresh = new JobManager(
            escrow, IStakeManager(address(stakeManager)), IShareRegistry(address(registry)), params, address(this)
        );
        vm.expectEmit(address(fresh));
        emit IJobManager.AdjudicatorSet(stranger);
        fresh.setAdjudicator(IAdjudicator(stranger));
        assertEq(address(fresh.adjudicator()), stranger);
    }
}

contract JobManager_PostJob_Test is JobManager_Init {
    /// @notice The Job packs the reward into 96 bits: a larger reward is refused, not truncated.
    function test_postJob_rewardAbove96Bits_reverts() public {
        uint256 reward = uint256(type(uint96).max) + 1;
        vm.expectRevert(abi.encodeWithSelector(SafeCast.SafeCastOverflowedUintDowncast.selector, 96, reward));
        vm.prank(submitter);
        jobManager.postJob(MODEL_ID, SPEC_HASH, INIT_HASH, TOTAL_STEPS, INTERVAL, reward, SPEC_URI);
    }

    function testFuzz_postJob_escrows_succeeds(uint32 totalSteps, uint32 interval, uint256 reward) public {
        interval = uint32(bound(interval, 1, 1000));
        totalSteps = uint32(interval * bound(totalSteps, 1, 1000));
        reward = bound(reward, 0, 100_000e18);
        uint256 escrowAmount = reward + 3 * params.verifierFee;
        uint256 balanceBefore = token.balanceOf(submitter);
        vm.expectEmit(address(jobManager));
        emit IJobManager.JobPosted(
            1, submitter, MODEL_ID, SPEC_HASH, totalSteps, interval, reward, escrowAmount, SPEC_URI
        );
        vm.prank(submitter);
        uint256 jobId = jobManager.postJob(MODEL_ID, SPEC_HASH, INIT_HASH, totalSteps, interval, reward, SPEC_URI);
        assertEq(jobId, 1);
        assertEq(jobManager.jobCount(), 1);
        assertEq(token.balanceOf(submitter), balanceBefore - escrowAmount);
        Job memory job = _job(jobId);
        assertEq(job.submitter, submitter);
        assertEq(job.solver, address(0));
        assertEq(job.modelId, MODEL_ID);
        assertEq(job.specHash, SPEC_HASH);
        assertEq(job.initHash, INIT_HASH);
        assertEq(uint256(job.totalSteps), totalSteps);
        assertEq(uint256(job.checkpointInterval), interval);
        assertEq(job.reward, reward);
        assertEq(uint8(job.status), uint8(JobStatus.Open));
        (uint256 escrowed,,,) = escrow.liabilities();
        assertEq(escrowed, escrowAmount);
    }

    /// @notice Regression: a stranger cannot post (and so mint shares) under another owner's model.
    function test_postJob_strangerUnderOthersModel_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IJobManager.NotModelPoster.selector, MODEL_ID, stranger));
        vm.prank(stranger);
        jobManager.postJob(MODEL_ID, SPEC_HASH, INIT_HASH, 1_000_000, 1, 0, SPEC_URI);
    }

    function test_postJob_unregisteredModel_reverts() public {
        bytes32 unregistered = keccak256("unregistered");
        vm.expectRevert(abi.encodeWithSelector(IJobManager.NotModelPoster.selector, unregistered, submitter));
        vm.prank(submitter);
        jobManager.postJob(unregistered, SPEC_HASH, INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD, SPEC_URI);
    }

    function test_postJob_authorizedPoster_succeeds() public {
        vm.prank(submitter);
        registry.authorizePoster(MODEL_ID, stranger);
        vm.prank(stranger);
        uint256 jobId = jobManager.postJob(MODEL_ID, SPEC_HASH, INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD, SPEC_URI);
        assertEq(_job(jobId).submitter, stranger);
        assertEq(_job(jobId).initHash, INIT_HASH);
    }

    function test_postJob_revokedPoster_reverts() public {
        vm.startPrank(submitter);
        registry.authorizePoster(MODEL_ID, stranger);
        registry.revokePoster(MODEL_ID, stranger);
        vm.stopPrank();
        vm.expectRevert(abi.encodeWithSelector(IJobManager.NotModelPoster.selector, MODEL_ID, stranger));
        vm.prank(stranger);
        jobManager.postJob(MODEL_ID, SPEC_HASH, INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD, SPEC_URI);
    }

    function test_postJob_escrows_succeeds() public {
        testFuzz_postJob_escrows_succeeds(TOTAL_STEPS, INTERVAL, REWARD);
    }

    function test_postJob_idsIncrement_succeeds() public {
        assertEq(_postJob(), 1);
        assertEq(_postJob(), 2);
        assertEq(jobManager.jobCount(), 2);
    }

    function test_postJob_zeroSteps_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IJobManager.InvalidJobShape.selector, 0, 2));
        vm.prank(submitter);
        jobManager.postJob(MODEL_ID, SPEC_HASH, INIT_HASH, 0, 2, REWARD, SPEC_URI);
    }

    function test_postJob_zeroInterval_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IJobManager.InvalidJobShape.selector, 16, 0));
        vm.prank(submitter);
        jobManager.postJob(MODEL_ID, SPEC_HASH, INIT_HASH, 16, 0, REWARD, SPEC_URI);
    }

    function testFuzz_postJob_notMultiple_reverts(uint32 totalSteps, uint32 interval) public {
        interval = uint32(bound(interval, 2, 1000));
        totalSteps = uint32(interval * bound(totalSteps, 1, 1000) + bound(totalSteps, 1, interval - 1));
        vm.expectRevert(abi.encodeWithSelector(IJobManager.InvalidJobShape.selector, totalSteps, interval));
        vm.prank(submitter);
        jobManager.postJob(MODEL_ID, SPEC_HASH, INIT_HASH, totalSteps, interval, REWARD, SPEC_URI);
    }

    function test_postJob_notMultiple_reverts() public {
        testFuzz_postJob_notMultiple_reverts(15, 2);
    }

    function test_postJob_noAllowance_reverts() public {
        uint256 escrowAmount = REWARD + 3 * params.verifierFee;
        vm.prank(submitter);
        registry.authorizePoster(MODEL_ID, address(0xBEEF));
        vm.expectRevert(
            abi.encodeWithSelector(IERC20Errors.ERC20InsufficientAllowance.selector, address(escrow), 0, escrowAmount)
        );
        vm.prank(address(0xBEEF));
        jobManager.postJob(MODEL_ID, SPEC_HASH, INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD, SPEC_URI);
    }
}

contract JobManager_CancelJob_Test is JobManager_Init {
    function test_cancelJob_refundsByCredit_succeeds() public {
        uint256 jobId = _postJob();
        uint256 escrowAmount = REWARD + 3 * params.verifierFee;
        vm.expectEmit(address(jobManager));
        emit IJobManager.JobCancelled(jobId, escrowAmount);
        vm.prank(submitter);
        jobManager.cancelJob(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Cancelled));
        assertEq(escrow.creditOf(submitter), escrowAmount);
        (uint256 escrowed,, uint256 credits,) = escrow.liabilities();
        assertEq(escrowed, 0);
        assertEq(credits, escrowAmount);
    }

    function test_cancelJob_notSubmitter_reverts() public {
        uint256 jobId = _postJob();
        vm.expectRevert(abi.encodeWithSelector(IJobManager.NotSubmitter.selector, jobId, stranger));
        vm.prank(stranger);
        jobManager.cancelJob(jobId);
    }

    function test_cancelJob_claimed_reverts() public {
        uint256 jobId = _postJob();
        vm.prank(solver);
        jobManager.claimJob(jobId);
        vm.expectRevert(abi.encodeWithSelector(IJobManager.UnexpectedJobStatus.selector, jobId, JobStatus.Claimed));
        vm.prank(submitter);
        jobManager.cancelJob(jobId);
    }

    function test_cancelJob_unknownJob_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IJobManager.UnexpectedJobStatus.selector, 42, JobStatus.None));
        vm.prank(submitter);
        jobManager.cancelJob(42);
    }
}

contract JobManager_ClaimJob_Test is JobManager_Init {
    function test_claimJob_locksStake_succeeds() public {
        uint256 jobId = _postJob();
        uint64 deadline = uint64(block.timestamp) + params.commitWindow;
        vm.expectEmit(address(jobManager));
        emit IJobManager.JobClaimed(jobId, solver, LibSubmission.id(jobId, solver), deadline);
        vm.prank(solver);
        jobManager.claimJob(jobId);
        Job memory job = _job(jobId);
        assertEq(job.solver, solver);
        assertEq(uint256(job.commitDeadline), deadline);
        assertEq(uint8(job.status), uint8(JobStatus.Claimed));
        assertEq(_locked(solver, Role.Solver), params.solverStake);
    }

    function test_claimJob_notSolver_reverts() public {
        uint256 jobId = _postJob();
        vm.expectRevert(abi.encodeWithSelector(IJobManager.NotActiveStaker.selector, stranger, Role.Solver));
        vm.prank(stranger);
        jobManager.claimJob(jobId);
    }

    function test_claimJob_insufficientFreeStake_reverts() public {
        // 1000e18 staked covers ten claims of 100e18.
        for (uint256 i; i < 10; ++i) {
            uint256 id = _postJob();
            vm.prank(solver);
            jobManager.claimJob(id);
        }
        uint256 jobId = _postJob();
        vm.expectRevert(
            abi.encodeWithSelector(IStakeManager.InsufficientFreeStake.selector, solver, Role.Solver, 0, 100e18)
        );
        vm.prank(solver);
        jobManager.claimJob(jobId);
    }

    function test_claimJob_notOpen_reverts() public {
        uint256 jobId = _postJob();
        vm.prank(solver);
        jobManager.claimJob(jobId);
        vm.expectRevert(abi.encodeWithSelector(IJobManager.UnexpectedJobStatus.selector, jobId, JobStatus.Claimed));
        vm.prank(solver);
        jobManager.claimJob(jobId);
    }
}

/// @notice `roundJobOf`, the lean view the verification round reads, returns the stored job's fields.
contract JobManager_RoundJobOf_Test is JobManager_Init {
    function test_roundJobOf_matchesGetJob_succeeds() public {
        uint256 jobId = _verifyingJob();
        Job memory job = _job(jobId);
        RoundJob memory lean = jobManager.roundJobOf(jobId);
        assertEq(lean.solver, job.solver, "solver");
        assertEq(uint8(lean.status), uint8(job.status), "status");
        assertEq(lean.initHash, job.initHash, "initHash");
        assertEq(lean.merkleRoot, job.merkleRoot, "merkleRoot");
        assertEq(uint256(lean.totalSteps), uint256(job.totalSteps), "totalSteps");
        assertEq(uint256(lean.checkpointInterval), uint256(job.checkpointInterval), "checkpointInterval");
        assertEq(uint256(lean.claimsDeadline), uint256(job.claimsDeadline), "claimsDeadline");
        assertEq(uint256(lean.verdictDeadline), uint256(job.verdictDeadline), "verdictDeadline");
        assertEq(uint256(lean.challengeDeadline), uint256(job.challengeDeadline), "challengeDeadline");
        assertEq(uint8(lean.status), uint8(JobStatus.Verifying), "verifying");
        assertTrue(lean.verdictDeadline != 0, "assigned");
    }
}

contract JobManager_CommitCheckpoints_Test is JobManager_Init {
    uint256 internal jobId;

    function setUp() public override {
        super.setUp();
        jobId = _postJob();
        vm.prank(solver);
        jobManager.claimJob(jobId);
    }

    function test_commitCheckpoints_recordsRoot_succeeds() public {
        bytes32 root = _root(TOTAL_STEPS, INTERVAL);
        vm.expectEmit(address(jobManager));
        emit IJobManager.CheckpointsCommitted(jobId, solver, root, CHECKPOINT_URL, uint64(block.number + 1));
        vm.expectEmit(address(round));
        emit IVerificationRound.SecretCommitted(
            LibSubmission.id(jobId, solver), jobId, solver, _secretCommitment(jobId, solver)
        );
        bytes32[] memory initProof = _initProof(INTERVAL, _stateHashes(TOTAL_STEPS, INTERVAL));
        vm.prank(solver);
        jobManager.commitCheckpoints(jobId, root, initProof, CHECKPOINT_URL, _secretCommitment(jobId, solver));
        (bytes32 commitment,,) = round.roundOf(_sid(jobId));
        assertEq(commitment, _secretCommitment(jobId, solver));
        Job memory job = _job(jobId);
        assertEq(job.merkleRoot, root);
        assertEq(uint256(job.randomnessBlock), block.number + 1);
        assertEq(uint8(job.status), uint8(JobStatus.Committed));
    }

    function test_commitCheckpoints_notSolver_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IJobManager.NotSolver.selector, jobId, stranger));
        vm.prank(stranger);
        jobManager.commitCheckpoints(
            jobId,
            _initRoot(TOTAL_STEPS, INTERVAL),
            _initOnlyProof(TOTAL_STEPS, INTERVAL),
            CHECKPOINT_URL,
            bytes32(uint256(1))
        );
    }

    function test_commitCheckpoints_afterDeadline_reverts() public {
        uint64 deadline = _job(jobId).commitDeadline;
        vm.warp(deadline + 1);
        vm.expectRevert(
            abi.encodeWithSelector(IJobManager.CommitDeadlinePassed.selector, jobId, deadline, deadline + 1)
        );
        vm.prank(solver);
        jobManager.commitCheckpoints(
            jobId,
            _initRoot(TOTAL_STEPS, INTERVAL),
            _initOnlyProof(TOTAL_STEPS, INTERVAL),
            CHECKPOINT_URL,
            bytes32(uint256(1))
        );
    }

    function test_commitCheckpoints_zeroRoot_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IJobManager.ZeroMerkleRoot.selector, jobId));
        vm.prank(solver);
        jobManager.commitCheckpoints(jobId, bytes32(0), new bytes32[](0), CHECKPOINT_URL, bytes32(uint256(1)));
    }

    function test_commitCheckpoints_zeroSecretCommitment_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.ZeroCommitment.selector, _sid(jobId)));
        vm.prank(solver);
        jobManager.commitCheckpoints(
            jobId, _initRoot(TOTAL_STEPS, INTERVAL), _initOnlyProof(TOTAL_STEPS, INTERVAL), CHECKPOINT_URL, bytes32(0)
        );
    }

    function test_commitCheckpoints_twice_reverts() public {
        vm.prank(solver);
        jobManager.commitCheckpoints(
            jobId,
            _initRoot(TOTAL_STEPS, INTERVAL),
            _initOnlyProof(TOTAL_STEPS, INTERVAL),
            CHECKPOINT_URL,
            bytes32(uint256(1))
        );
        vm.expectRevert(abi.encodeWithSelector(IJobManager.UnexpectedJobStatus.selector, jobId, JobStatus.Committed));
        vm.prank(solver);
        jobManager.commitCheckpoints(
            jobId,
            _initRoot(TOTAL_STEPS, INTERVAL),
            _initOnlyProof(TOTAL_STEPS, INTERVAL),
            CHECKPOINT_URL,
            bytes32(uint256(1))
        );
    }

    /// @notice A run that starts from other weights (leaf 0 is not (0, initHash)) cannot be committed,
    ///         whatever proof of its own leaf 0 comes with it.
    function test_commitCheckpoints_otherInitialState_reverts() public {
        bytes32[] memory states = _stateHashes(TOTAL_STEPS, INTERVAL);
        states[0] = sha256("pre-trained weights");
        bytes32 root = Merkle.root(Merkle.leaves(INTERVAL, states));
        bytes32[] memory proof = _initProof(INTERVAL, states);
        vm.expectRevert(abi.encodeWithSelector(IJobManager.InitialStateNotCommitted.selector, jobId, root, INIT_HASH));
        vm.prank(solver);
        jobManager.commitCheckpoints(jobId, root, proof, CHECKPOINT_URL, _secretCommitment(jobId, solver));
    }

    /// @notice An honest tree with a proof of another leaf (not leaf 0) is refused too.
    function test_commitCheckpoints_proofOfOtherLeaf_reverts() public {
        bytes32[] memory states = _stateHashes(TOTAL_STEPS, INTERVAL);
        bytes32[] memory leaves = Merkle.leaves(INTERVAL, states);
        bytes32 root = Merkle.root(leaves);
        bytes32[] memory proof = Merkle.proof(leaves, 1);
        vm.expectRevert(abi.encodeWithSelector(IJobManager.InitialStateNotCommitted.selector, jobId, root, INIT_HASH));
        vm.prank(solver);
        jobManager.commitCheckpoints(jobId, root, proof, CHECKPOINT_URL, _secretCommitment(jobId, solver));
    }
}

contract JobManager_ReclaimExpired_Test is JobManager_Init {
    function test_reclaimExpired_slashesAndReopens_succeeds() public {
        uint256 jobId = _postJob();
        vm.prank(solver);
        jobManager.claimJob(jobId);
        vm.warp(_job(jobId).commitDeadline + 1);
        vm.expectEmit(address(jobManager));
        emit IJobManager.JobReclaimed(jobId, solver, params.solverStake);
        vm.prank(stranger);
        jobManager.reclaimExpired(jobId);
        Job memory job = _job(jobId);
        assertEq(uint8(job.status), uint8(JobStatus.Open));
        assertEq(job.solver, address(0));
        // Abandonment is never refunded to the submitter: the slash joins the jackpot pool.
        assertEq(escrow.creditOf(submitter), 0);
        assertEq(escrow.jackpotPool(), params.solverStake);
        assertEq(_staked(solver, Role.Solver), 1000e18 - params.solverStake);
        assertEq(_locked(solver, Role.Solver), 0);
        _assertEscrowSolvent();
    }

    function test_reclaimExpired_beforeDeadline_reverts() public {
        uint256 jobId = _postJob();
        vm.prank(solver);
        jobManager.claimJob(jobId);
        uint64 deadline = _job(jobId).commitDeadline;
        vm.warp(deadline);
        vm.expectRevert(abi.encodeWithSelector(IJobManager.CommitDeadlineNotPassed.selector, jobId, deadline, deadline));
        jobManager.reclaimExpired(jobId);
    }

    function test_reclaimExpired_notClaimed_reverts() public {
        uint256 jobId = _postJob();
        vm.expectRevert(abi.encodeWithSelector(IJobManager.UnexpectedJobStatus.selector, jobId, JobStatus.Open));
        jobManager.reclaimExpired(jobId);
    }
}

contract JobManager_Submission_Test is JobManager_Init {
    function test_submissionOf_matchesStorageRead_succeeds() public {
        uint256 jobId = _postJob();
        assertTrue(jobManager.submissionOf(jobId).isZero());
        assertTrue(_sid(jobId).isZero());
        vm.prank(solver);
        jobManager.claimJob(jobId);
        SubmissionId expected = SubmissionId.wrap(keccak256(abi.encode(jobId, solver)));
        assertTrue(jobManager.submissionOf(jobId) == expected);
        assertTrue(_sid(jobId) == expected, "Deployers._sid slot out of date");
        (uint256 subJob, address subSolver) = jobManager.getSubmission(expected);
        assertEq(subJob, jobId);
        assertEq(subSolver, solver);
    }

    function test_claimJob_afterReclaim_freshSubmission_succeeds() public {
        uint256 jobId = _postJob();
        vm.prank(solver);
        jobManager.claimJob(jobId);
        SubmissionId first = jobManager.submissionOf(jobId);
        vm.warp(_job(jobId).commitDeadline + 1);
        jobManager.reclaimExpired(jobId);
        assertTrue(jobManager.submissionOf(jobId).isZero());
        address other = _actor("other solver");
        _stake(other, Role.Solver, 1000e18);
        vm.expectEmit(address(jobManager));
        emit IJobManager.JobClaimed(
            jobId, other, LibSubmission.id(jobId, other), uint64(block.timestamp) + params.commitWindow
        );
        vm.prank(other);
        jobManager.claimJob(jobId);
        SubmissionId second = jobManager.submissionOf(jobId);
        assertTrue(second != first);
        assertTrue(second == LibSubmission.id(jobId, other));
        // The replaced solver's submission is no longer active: the round refuses it.
        _commit(jobId, other, _stateHashes(TOTAL_STEPS, INTERVAL));
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.UnknownSubmission.selector, first));
        vm.prank(solver);
        round.postClaims(first, new bytes32[](0), new bytes32[](0));
        _bookClaims(round, first, new bytes32[](0), new bytes32[](0));
    }
}

contract JobManager_AssignVerifiers_Test is JobManager_Init {
    uint256 internal jobId;

    function setUp() public override {
        super.setUp();
        jobId = _postJob();
        _claimAndCommit(jobId);
    }

    function test_assignVerifiers_drawsDistinct_succeeds() public {
        _assign(jobId);
        (address[] memory verifiers, uint32[] memory segments) = jobManager.getAssignment(jobId);
        assertEq(verifiers.length, 3);
        // q = N/k: each seat draws every segment of the job, so the union is all of them.
        assertEq(segments.length, TOTAL_STEPS / INTERVAL);
        for (uint256 i; i < verifiers.length; ++i) {
            assertTrue(_isIn(verifierPool, verifiers[i]));
            assertEq(_locked(verifiers[i], Role.Verifier), params.verifierStake);
            assertEq(jobManager.sampleMaskOf(jobId, verifiers[i]), (uint256(1) << segments.length) - 1);
            for (uint256 j; j < i; ++j) {
                assertNotEq(verifiers[i], verifiers[j]);
            }
        }
        for (uint256 i; i < segments.length; ++i) {
            assertLt(uint256(segments[i]), TOTAL_STEPS / INTERVAL);
            for (uint256 j; j < i; ++j) {
                assertNotEq(uint256(segments[i]), uint256(segments[j]));
            }
        }
        Job memory job = _job(jobId);
        assertEq(uint8(job.status), uint8(JobStatus.Verifying));
        // The solver posts claims by claimsDeadline; verifiers seal a whole verdictWindow later.
        assertEq(uint256(job.claimsDeadline), block.timestamp + params.claimsWindow);
        assertEq(uint256(job.verdictDeadline), block.timestamp + params.claimsWindow + params.verdictWindow);
        assertEq(
            uint256(job.challengeDeadline),
            block.timestamp + params.claimsWindow + params.verdictWindow + params.revealWindow + params.challengeWindow
        );
    }

    function test_assignVerifiers_sameBlock_reverts() public {
        uint64 randomnessBlock = _job(jobId).randomnessBlock;
        vm.expectRevert(
            abi.encodeWithSelector(IJobManager.RandomnessNotReady.selector, jobId, randomnessBlock, block.number)
        );
        jobManager.assignVerifiers(jobId);
        vm.roll(randomnessBlock);
        vm.expectRevert(
            abi.encodeWithSelector(IJobManager.RandomnessNotReady.selector, jobId, randomnessBlock, randomnessBlock)
        );
        jobManager.assignVerifiers(jobId);
    }

    function test_assignVerifiers_expiredBlockhash_reanchors_succeeds() public {
        vm.roll(block.number + 300);
        vmx.setBlockhash(_job(jobId).randomnessBlock, bytes32(0));
        vm.expectEmit(address(jobManager));
        emit IJobManager.RandomnessReanchored(jobId, uint64(block.number + 1));
        jobManager.assignVerifiers(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Committed));
        assertEq(uint256(_job(jobId).randomnessBlock), block.number + 1);
        _assign(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Verifying));
    }

    function test_assignVerifiers_noEligibleVerifiers_reverts() public {
        uint256 count = verifierPool.length;
        for (uint256 i; i < count; ++i) {
            vm.prank(verifierPool[i]);
            stakeManager.requestUnbond(Role.Verifier, 500e18);
        }
        vm.roll(block.number + 2);
        vm.expectRevert(abi.encodeWithSelector(IJobManager.NoEligibleVerifiers.selector, jobId, 0));
        jobManager.assignVerifiers(jobId);
    }

    function test_assignVerifiers_fewerThanV_refundsFees_succeeds() public {
        // Leave two verifiers, one of which is the solver itself: only one can be drawn.
        for (uint256 i = 2; i < verifierPool.length; ++i) {
            vm.prank(verifierPool[i]);
            stakeManager.requestUnbond(Role.Verifier, 500e18);
        }
        vm.prank(verifierPool[1]);
        stakeManager.requestUnbond(Role.Verifier, 500e18);
        _stake(solver, Role.Verifier, 500e18);
        _assign(jobId);
        (address[] memory verifiers,) = jobManager.getAssignment(jobId);
        assertEq(verifiers.length, 1);
        assertEq(verifiers[0], verifierPool[0]);
        assertEq(escrow.creditOf(submitter), 2 * params.verifierFee);
        _assertEscrowSolvent();
    }

    function test_assignVerifiers_notCommitted_reverts() public {
        _assign(jobId);
        vm.expectRevert(abi.encodeWithSelector(IJobManager.UnexpectedJobStatus.selector, jobId, JobStatus.Verifying));
        jobManager.assignVerifiers(jobId);
    }

    function testFuzz_assignVerifiers_segmentsDistinct_succeeds(uint32 segmentCount, bytes32 blockHash) public {
        segmentCount = uint32(bound(segmentCount, 1, params.maxSegments));
        vm.prank(submitter);
        // A spec of its own: the setup already posted SPEC_HASH from INIT_HASH (P-26).
        uint256 id = jobManager.postJob(
            MODEL_ID, keccak256(abi.encode(SPEC_HASH, "fuzz")), INIT_HASH, segmentCount * 3, 3, REWARD, SPEC_URI
        );
        vm.prank(solver);
        jobManager.claimJob(id);
        bytes32 root = _initRoot(segmentCount * 3, 3);
        bytes32[] memory initProof = _initOnlyProof(segmentCount * 3, 3);
        vm.prank(solver);
        jobManager.commitCheckpoints(id, root, initProof, CHECKPOINT_URL, keccak256("secret"));
        vm.roll(block.number + 2);
        if (blockHash != bytes32(0)) vmx.setBlockhash(block.number - 1, blockHash);
        jobManager.assignVerifiers(id);
        (address[] memory seated, uint32[] memory segments) = jobManager.getAssignment(id);
        // The sample is the union of the seats' own draws and the last segment, in increasing
        // segment order (P-27, P-36).
        uint256 q = segmentCount < params.samplesPerJob ? segmentCount : params.samplesPerJob;
        assertGte(segments.length, q);
        assertLte(segments.length, seated.length * q + 1);
        assertEq(uint256(segments[segments.length - 1]), segmentCount - 1, "the last segment");
        for (uint256 i; i < segments.length; ++i) {
            assertLt(uint256(segments[i]), segmentCount);
            if (i != 0) assertGt(uint256(segments[i]), uint256(segments[i - 1]));
        }
        // Each seat holds its q samples and the last one, and every sample is some seat's.
        uint256 covered;
        for (uint256 v; v < seated.length; ++v) {
            uint256 mask = jobManager.sampleMaskOf(id, seated[v]);
            uint256 held = _popCount(mask);
            assertTrue(held == q || (held == q + 1 && q < segmentCount), "q samples, and the last");
            assertEq((mask >> (segments.length - 1)) & 1, 1, "every seat holds the last segment");
            assertEq(mask >> segments.length, 0);
            covered |= mask;
        }
        assertEq(covered, (uint256(1) << segments.length) - 1);
    }

    function _popCount(uint256 mask) internal pure returns (uint256 count) {
        for (; mask != 0; mask >>= 1) {
            count += mask & 1;
        }
    }

    function test_assignVerifiers_segmentsDistinct_succeeds() public {
        testFuzz_assignVerifiers_segmentsDistinct_succeeds(3000, keccak256("hash"));
    }
}

contract JobManager_RecordVerdicts_Test is JobManager_Init {
    uint256 internal jobId;
    address[] internal verifiers;

    function setUp() public override {
        super.setUp();
        jobId = _verifyingJob();
        verifiers = _assigned(jobId);
    }

    function _seal(address verifier, uint256 rejectMask) internal {
        bytes32 commitment =
            _verdictCommitment(jobId, verifier, _ends(jobId, rejectMask), _verdictSalt(jobId, verifier));
        vm.prank(verifier);
        round.commitVerdicts(_sid(jobId), commitment);
    }

    function _open(address verifier, uint256 rejectMask) internal {
        bytes32[] memory ends = _ends(jobId, rejectMask);
        bytes32 salt = _verdictSalt(jobId, verifier);
        vm.prank(verifier);
        round.revealVerdicts(_sid(jobId), ends, salt, _claimsArg(_sid(jobId)));
    }

    function test_recordVerdicts_approveAll_succeeds() public {
        for (uint256 i; i < verifiers.length; ++i) {
            _seal(verifiers[i], 0);
        }
        bool[] memory approvals = _approvals(_samples(jobId), 0);
        vm.expectEmit(address(jobManager));
        emit IJobManager.VerdictsSubmitted(jobId, verifiers[0], approvals, 0);
        _open(verifiers[0], 0);
        Verdict[] memory verdicts = jobManager.verdictOf(jobId, verifiers[0]);
        assertEq(verdicts.length, _samples(jobId));
        for (uint256 i; i < _samples(jobId); ++i) {
            assertEq(uint8(verdicts[i]), uint8(Verdict.Approve));
        }
        assertEq(jobManager.disputedMaskOf(jobId), 0);
    }

    function testFuzz_recordVerdicts_rejectsPullBonds_succeeds(uint256 rejectMask) public {
        rejectMask = bound(rejectMask, 0, (uint256(1) << _samples(jobId)) - 1);
        uint256 rejects;
        for (uint256 i; i < _samples(jobId); ++i) {
            rejects += (rejectMask >> i) & 1;
        }
        uint256 balanceBefore = token.balanceOf(verifiers[1]);
        _submit(jobId, verifiers[0], 0);
        _submit(jobId, verifiers[2], 0);
        _submit(jobId, verifiers[1], rejectMask);
        assertEq(token.balanceOf(verifiers[1]), balanceBefore - rejects * params.challengeBond);
        assertEq(jobManager.disputedMaskOf(jobId), rejectMask);
        Verdict[] memory verdicts = jobManager.verdictOf(jobId, verifiers[1]);
        for (uint256 i; i < _samples(jobId); ++i) {
            assertEq(uint8(verdicts[i]), uint8((rejectMask >> i) & 1 == 1 ? Verdict.Reject : Verdict.Approve));
        }
        (, uint256 bonds,,) = escrow.liabilities();
        assertEq(bonds, rejects * params.challengeBond);
    }

    function test_recordVerdicts_rejectsPullBonds_succeeds() public {
        testFuzz_recordVerdicts_rejectsPullBonds_succeeds(5);
    }

    function test_recordVerdicts_lastVerifier_setsChallengeDeadline_succeeds() public {
        for (uint256 i; i < verifiers.length; ++i) {
            _seal(verifiers[i], 0);
        }
        vm.warp(block.timestamp + 60);
        _open(verifiers[0], 0);
        _open(verifiers[1], 0);
        uint64 expected = uint64(block.timestamp) + params.challengeWindow;
        vm.expectEmit(address(jobManager));
        emit IJobManager.ChallengeDeadlineSet(jobId, expected);
        _open(verifiers[2], 0);
        assertEq(uint256(_job(jobId).challengeDeadline), expected);
    }

    function test_recordVerdicts_notAllRevealed_keepsChallengeDeadline_succeeds() public {
        uint64 deadline = _job(jobId).challengeDeadline;
        _seal(verifiers[0], 0);
        vm.warp(uint256(_job(jobId).verdictDeadline) + 1);
        _open(verifiers[0], 0);
        assertEq(uint256(_job(jobId).challengeDeadline), deadline);
    }

    function test_verdictOf_beforeSubmit_returnsNone_succeeds() public {
        Verdict[] memory verdicts = jobManager.verdictOf(jobId, verifiers[0]);
        assertEq(verdicts.length, _samples(jobId));
        assertEq(uint8(verdicts[0]), uint8(Verdict.None));
        assertEq(jobManager.verdictOf(jobId, stranger).length, 0);
    }

    function test_recordVerdicts_notRound_reverts() public {
        bool[] memory approvals = _approvals(_samples(jobId), 0);
        vm.expectRevert(abi.encodeWithSelector(IJobManager.NotVerificationRound.selector, verifiers[0]));
        vm.prank(verifiers[0]);
        jobManager.recordVerdicts(_sid(jobId), verifiers[0], approvals, 0);
    }

    function test_recordVerdicts_notAssigned_reverts() public {
        bool[] memory approvals = _approvals(_samples(jobId), 0);
        vm.expectRevert(abi.encodeWithSelector(IJobManager.NotAssignedVerifier.selector, jobId, stranger));
        vm.prank(address(round));
        jobManager.recordVerdicts(_sid(jobId), stranger, approvals, 0);
    }

    function test_recordVerdicts_twice_reverts() public {
        bool[] memory approvals = _approvals(_samples(jobId), 0);
        vm.prank(address(round));
        jobManager.recordVerdicts(_sid(jobId), verifiers[0], approvals, 0);
        vm.expectRevert(abi.encodeWithSelector(IJobManager.VerdictsAlreadySubmitted.selector, jobId, verifiers[0]));
        vm.prank(address(round));
        jobManager.recordVerdicts(_sid(jobId), verifiers[0], approvals, 0);
    }

    function test_recordVerdicts_wrongCount_reverts() public {
        bool[] memory approvals = _approvals(_samples(jobId) - 1, 0);
        vm.expectRevert(
            abi.encodeWithSelector(
                IJobManager.VerdictCountMismatch.selector, jobId, _samples(jobId), _samples(jobId) - 1
            )
        );
        vm.prank(address(round));
        jobManager.recordVerdicts(_sid(jobId), verifiers[0], approvals, 0);
    }

    function test_recordVerdicts_notVerifying_reverts() public {
        uint256 claimedJob = _postJob();
        vm.prank(solver);
        jobManager.claimJob(claimedJob);
        bool[] memory approvals = _approvals(_samples(jobId), 0);
        vm.expectRevert(abi.encodeWithSelector(IJobManager.UnexpectedJobStatus.selector, claimedJob, JobStatus.Claimed));
        vm.prank(address(round));
        jobManager.recordVerdicts(_sid(claimedJob), verifiers[0], approvals, 0);
    }

    function test_recordVerdicts_unknownSubmission_reverts() public {
        SubmissionId unknown = LibSubmission.id(jobId, stranger);
        bool[] memory approvals = _approvals(_samples(jobId), 0);
        vm.expectRevert(abi.encodeWithSelector(IJobManager.SubmissionNotActive.selector, unknown));
        vm.prank(address(round));
        jobManager.recordVerdicts(unknown, verifiers[0], approvals, 0);
    }
}

contract JobManager_ChallengeApproval_Test is JobManager_Init {
    uint256 internal jobId;
    address[] internal verifiers;

    function setUp() public override {
        super.setUp();
        (jobId, verifiers) = _rejectedJob();
    }

    function test_challengeApproval_postsBond_succeeds() public {
        uint256 balanceBefore = token.balanceOf(whistleblower);
        vm.expectEmit(address(jobManager));
        emit IJobManager.ApprovalChallenged(jobId, 2, verifiers[1], whistleblower, params.challengeBond);
        vm.prank(whistleblower);
        jobManager.challengeApproval(jobId, 2, verifiers[1]);
        assertEq(jobManager.challengerOf(jobId, 2, verifiers[1]), whistleblower);
        assertEq(token.balanceOf(whistleblower), balanceBefore - params.challengeBond);
        assertEq(jobManager.disputedMaskOf(jobId), 1 | 4);
    }

    function test_challengeApproval_afterWindow_reverts() public {
        uint64 deadline = _job(jobId).challengeDeadline;
        vm.warp(deadline + 1);
        vm.expectRevert(
            abi.encodeWithSelector(IJobManager.ChallengeWindowClosed.selector, jobId, deadline, deadline + 1)
        );
        vm.prank(whistleblower);
        jobManager.challengeApproval(jobId, 2, verifiers[1]);
    }

    function test_challengeApproval_notWhistleblower_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IJobManager.NotActiveStaker.selector, stranger, Role.Whistleblower));
        vm.prank(stranger);
        jobManager.challengeApproval(jobId, 2, verifiers[1]);
    }

    function test_challengeApproval_sampleOutOfRange_reverts() public {
        uint256 samples = _samples(jobId);
        vm.expectRevert(abi.encodeWithSelector(IJobManager.SampleIndexOutOfRange.selector, jobId, samples, samples));
        vm.prank(whistleblower);
        jobManager.challengeApproval(jobId, samples, verifiers[1]);
    }

    function test_challengeApproval_notAssigned_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IJobManager.NotAssignedVerifier.selector, jobId, stranger));
        vm.prank(whistleblower);
        jobManager.challengeApproval(jobId, 0, stranger);
    }

    function test_challengeApproval_reject_reverts() public {
        vm.expectRevert(
            abi.encodeWithSelector(IJobManager.VerdictNotApproval.selector, jobId, 0, verifiers[0], Verdict.Reject)
        );
        vm.prank(whistleblower);
        jobManager.challengeApproval(jobId, 0, verifiers[0]);
    }

    function test_challengeApproval_noVerdict_reverts() public {
        uint256 freshJob = _verifyingJob();
        address verifier = _assigned(freshJob)[0];
        vm.expectRevert(
            abi.encodeWithSelector(IJobManager.VerdictNotApproval.selector, freshJob, 0, verifier, Verdict.None)
        );
        vm.prank(whistleblower);
        jobManager.challengeApproval(freshJob, 0, verifier);
    }

    function test_challengeApproval_bySolver_reverts() public {
        _stake(solver, Role.Whistleblower, 10e18);
        vm.expectRevert(abi.encodeWithSelector(IJobManager.ChallengerConflicted.selector, jobId, solver));
        vm.prank(solver);
        jobManager.challengeApproval(jobId, 1, verifiers[1]);
    }

    function test_challengeApproval_twice_reverts() public {
        vm.prank(whistleblower);
        jobManager.challengeApproval(jobId, 1, verifiers[1]);
        address other = _actor("other whistleblower");
        _stake(other, Role.Whistleblower, 10e18);
        vm.expectRevert(
            abi.encodeWithSelector(
                IJobManager.ApprovalAlreadyChallenged.selector, jobId, 1, verifiers[1], whistleblower
            )
        );
        vm.prank(other);
        jobManager.challengeApproval(jobId, 1, verifiers[1]);
    }

    function test_challengeApproval_notVerifying_reverts() public {
        uint256 openJob = _postJob();
        vm.expectRevert(abi.encodeWithSelector(IJobManager.UnexpectedJobStatus.selector, openJob, JobStatus.Open));
        vm.prank(whistleblower);
        jobManager.challengeApproval(openJob, 0, verifiers[1]);
    }
}

contract JobManager_Finalize_Test is JobManager_Init {
    function test_finalize_noDispute_finalizes_succeeds() public {
        uint256 jobId = _verifyingJob();
        _submitAll(jobId, 0);
        _passChallengeWindow(jobId);
        vm.expectEmit(address(jobManager));
        emit IJobManager.JobFinalized(jobId, solver, REWARD, TOTAL_STEPS);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        assertEq(escrow.creditOf(solver), REWARD);
        assertEq(_locked(solver, Role.Solver), 0);
    }

    function test_finalize_beforeWindow_reverts() public {
        uint256 jobId = _verifyingJob();
        _submitAll(jobId, 0);
        uint64 deadline = _job(jobId).challengeDeadline;
        vm.expectRevert(
            abi.encodeWithSelector(IJobManager.ChallengeWindowOpen.selector, jobId, deadline, block.timestamp)
        );
        jobManager.finalize(jobId);
    }

    function test_finalize_secretNotRevealed_reverts() public {
        uint256 jobId = _verifyingJob();
        _submitAll(jobId, 0);
        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        vm.expectRevert(abi.encodeWithSelector(IJobManager.RoundPending.selector, jobId));
        jobManager.finalize(jobId);
    }

    function test_finalize_wrongStatus_reverts() public {
        uint256 jobId = _postJob();
        vm.expectRevert(abi.encodeWithSelector(IJobManager.UnexpectedJobStatus.selector, jobId, JobStatus.Open));
        jobManager.finalize(jobId);
    }

    function test_finalize_opensDispute_succeeds() public {
        (uint256 jobId, address[] memory verifiers) = _rejectedJob();
        _passChallengeWindow(jobId);
        (, uint32[] memory segments) = jobManager.getAssignment(jobId);
        vm.expectEmit(address(jobManager));
        emit IJobManager.JobDisputed(jobId, 1, 0, segments[0]);
        jobManager.finalize(jobId);
        Job memory job = _job(jobId);
        assertEq(uint8(job.status), uint8(JobStatus.Disputed));
        assertEq(job.disputeId, 1);
        assertEq(jobManager.disputedSampleOf(jobId), 0);
        assertTrue(committee.isExcluded(1, solver));
        assertTrue(committee.isExcluded(1, submitter));
        for (uint256 i; i < verifiers.length; ++i) {
            assertFalse(committee.isExcluded(1, verifiers[i]));
            assertTrue(committee.isReserve(1, verifiers[i]));
        }
    }

    function test_finalize_disputePending_reverts() public {
        (uint256 jobId,) = _rejectedJob();
        _passChallengeWindow(jobId);
        jobManager.finalize(jobId);
        vm.expectRevert(abi.encodeWithSelector(IJobManager.DisputePending.selector, jobId, 1));
        jobManager.finalize(jobId);
    }

    function test_finalize_missedVerdict_slashes_succeeds() public {
        uint256 poolBefore = escrow.jackpotPool();
        uint256 jobId = _verifyingJob();
        address[] memory verifiers = _assigned(jobId);
        _submit(jobId, verifiers[0], 0);
        _submit(jobId, verifiers[1], 0);
        _passChallengeWindow(jobId);
        vm.expectEmit(address(jobManager));
        emit IJobManager.VerdictMissed(jobId, verifiers[2], params.verifierStake);
        jobManager.finalize(jobId);
        // The fee goes back to the submitter; the stake to the jackpot pool, never to a party of
        // the job (P-19).
        assertEq(escrow.creditOf(submitter), params.verifierFee);
        assertEq(escrow.jackpotPool(), poolBefore + params.verifierStake);
        assertEq(escrow.creditOf(verifiers[2]), 0);
        assertEq(_staked(verifiers[2], Role.Verifier), 500e18 - params.verifierStake);
        assertEq(_locked(verifiers[2], Role.Verifier), 0);
        assertEq(escrow.creditOf(verifiers[0]), params.verifierFee);
        _assertEscrowSolvent();
    }

    function test_finalize_adjudicatorNotSet_reverts() public {
        escrow = new Escrow(token, address(this));
        registry = new ShareRegistry(token, Deploy.MAX_SEGMENT_COMPUTE, address(this));
        JobManager fresh = new JobManager(
            escrow, IStakeManager(address(stakeManager)), IShareRegistry(address(registry)), params, address(this)
        );
        registry.setMinter(address(fresh));
        vm.prank(submitter);
        registry.registerModel(MODEL_ID, ARCHITECTURE, FAMILY, 1, INIT_HASH);
        address[] memory protocols = new address[](1);
        protocols[0] = address(fresh);
        escrow.authorize(protocols);
        stakeManager.grantRole(stakeManager.PROTOCOL_ROLE(), address(fresh));
        round = new VerificationRound(IJobManager(address(fresh)), 0);
        fresh.setVerificationRound(round);
        jobManager = fresh;
        for (uint256 i; i < verifierPool.length; ++i) {
            vm.prank(verifierPool[i]);
            token.approve(address(escrow), type(uint256).max);
        }
        vm.prank(submitter);
        token.approve(address(escrow), type(uint256).max);
        (uint256 jobId,) = _rejectedJob();
        _passChallengeWindow(jobId);
        vm.expectRevert(IJobManager.AdjudicatorNotSet.selector);
        fresh.finalize(jobId);
    }
}

contract JobManager_OnDisputeResolved_Test is JobManager_Init {
    function test_onDisputeResolved_notAdjudicator_reverts() public {
        address[] memory none = new address[](0);
        vm.expectRevert(abi.encodeWithSelector(IJobManager.NotAdjudicator.selector, stranger));
        vm.prank(stranger);
        jobManager.onDisputeResolved(1, true, none, none);
    }

    function test_onDisputeResolved_unknownDispute_reverts() public {
        address[] memory none = new address[](0);
        vm.expectRevert(abi.encodeWithSelector(IJobManager.UnknownDispute.selector, 7));
        vm.prank(address(committee));
        jobManager.onDisputeResolved(7, true, none, none);
    }

    function test_onDisputeResolved_twice_reverts() public {
        (uint256 jobId,) = _rejectedJob();
        _passChallengeWindow(jobId);
        jobManager.finalize(jobId);
        _arbitrate(1, true);
        address[] memory none = new address[](0);
        vm.expectRevert(abi.encodeWithSelector(IJobManager.UnknownDispute.selector, 1));
        vm.prank(address(committee));
        jobManager.onDisputeResolved(1, true, none, none);
    }
}

contract JobManager_ClaimCredit_Test is JobManager_Init {
    function test_claimCredit_paysOut_succeeds() public {
        uint256 jobId = _postJob();
        vm.prank(submitter);
        jobManager.cancelJob(jobId);
        uint256 credit = escrow.creditOf(submitter);
        uint256 balanceBefore = token.balanceOf(submitter);
        vm.expectEmit(address(escrow));
        emit IEscrow.CreditClaimed(submitter, credit);
        vm.prank(submitter);
        escrow.claimCredit();
        assertEq(token.balanceOf(submitter), balanceBefore + credit);
        assertEq(escrow.creditOf(submitter), 0);
        assertEq(token.balanceOf(address(escrow)), 0);
    }

    function test_claimCredit_noCredit_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IEscrow.NoCreditToClaim.selector, stranger));
        vm.prank(stranger);
        escrow.claimCredit();
    }
}

contract JobManager_VerifyCheckpoint_Test is JobManager_Init {
    function testFuzz_verifyCheckpoint_everyLeaf_succeeds(uint256 segmentCount, uint256 leafIndex) public {
        segmentCount = bound(segmentCount, 1, 40);
        leafIndex = bound(leafIndex, 0, segmentCount);
        uint32 interval = 5;
        // forge-lint: disable-next-line(unsafe-typecast)
        uint32 totalSteps = uint32(segmentCount) * interval;
        bytes32[] memory hashes = _stateHashes(totalSteps, interval);
        bytes32[] memory leaves = Merkle.leaves(interval, hashes);
        bytes32 root = Merkle.root(leaves);
        bytes32[] memory proof = Merkle.proof(leaves, leafIndex);
        vm.prank(submitter);
        uint256 jobId = jobManager.postJob(MODEL_ID, SPEC_HASH, INIT_HASH, totalSteps, interval, REWARD, SPEC_URI);
        vm.prank(solver);
        jobManager.claimJob(jobId);
        assertFalse(jobManager.verifyCheckpoint(jobId, leafIndex, hashes[leafIndex], proof));
        bytes32[] memory initProof = Merkle.proof(leaves, 0);
        vm.prank(solver);
        jobManager.commitCheckpoints(jobId, root, initProof, CHECKPOINT_URL, _secretCommitment(jobId, solver));
        assertTrue(jobManager.verifyCheckpoint(jobId, leafIndex, hashes[leafIndex], proof));
        assertFalse(jobManager.verifyCheckpoint(jobId, leafIndex, keccak256("forged"), proof));
        assertFalse(jobManager.verifyCheckpoint(jobId, segmentCount + 1, hashes[leafIndex], proof));
        _assertPositionBound(jobId, leafIndex, segmentCount, hashes[leafIndex], proof);
        assertEq(LibCheckpoint.leafHash(leafIndex, leafIndex * interval, hashes[leafIndex]), leaves[leafIndex]);
    }

    /// @notice The proof binds the position: the same state at any other index does not verify, nor
    ///         with a proof one level short or long.
    function _assertPositionBound(
        uint256 jobId,
        uint256 leafIndex,
        uint256 segmentCount,
        bytes32 stateHash,
        bytes32[] memory proof
    ) internal {
        uint256 other = (leafIndex + 1) % (segmentCount + 1);
        assertFalse(jobManager.verifyCheckpoint(jobId, other, stateHash, proof));
        bytes32[] memory longer = new bytes32[](proof.length + 1);
        for (uint256 i; i < proof.length; ++i) {
            longer[i] = proof[i];
        }
        assertFalse(jobManager.verifyCheckpoint(jobId, leafIndex, stateHash, longer));
        if (proof.length != 0) {
            bytes32[] memory shorter = new bytes32[](proof.length - 1);
            for (uint256 i; i < shorter.length; ++i) {
                shorter[i] = proof[i];
            }
            assertFalse(jobManager.verifyCheckpoint(jobId, leafIndex, stateHash, shorter));
        }
    }

    function test_verifyCheckpoint_everyLeaf_succeeds() public {
        testFuzz_verifyCheckpoint_everyLeaf_succeeds(8, 8);
    }

    /// @notice Pins the leaf encoding of PROTOCOL.md 2.3 to an explicit formula.
    function test_leafHash_matchesSpec_succeeds() public {
        bytes32 stateHash = sha256("checkpoint bytes");
        bytes32 expected = keccak256(bytes.concat(keccak256(abi.encode(uint256(5), uint256(10), stateHash))));
        assertEq(LibCheckpoint.leafHash(5, 10, stateHash), expected);
    }
}
