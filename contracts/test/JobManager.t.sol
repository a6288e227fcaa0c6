// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {Deployers} from "./utils/Deployers.sol";
import {Merkle} from "./utils/Merkle.sol";
import {JobManager} from "../src/JobManager.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {IERC20Errors} from "@openzeppelin/contracts/interfaces/draft-IERC6093.sol";
import {IEscrow} from "../src/interfaces/IEscrow.sol";
import {IAdjudicator} from "../src/interfaces/IAdjudicator.sol";
import {IJobManager} from "../src/interfaces/IJobManager.sol";
import {IJobManagerErrors} from "../src/interfaces/IJobManagerErrors.sol";
import {IShareRegistry} from "../src/interfaces/IShareRegistry.sol";
import {IStakeManager} from "../src/interfaces/IStakeManager.sol";
import {IVerificationRound} from "../src/interfaces/IVerificationRound.sol";
import {LibSubmission, SubmissionId} from "../src/types/SubmissionId.sol";
import {Bucket} from "../src/types/EscrowTypes.sol";
import {Job, JobStatus, Params, RoundJob} from "../src/types/JobTypes.sol";
import {Role} from "../src/types/Role.sol";
import {SeatVerdicts} from "../src/types/RoundTypes.sol";
import {roundHash} from "../src/types/RoundWord.sol";
import {JobManager_Init} from "./utils/JobManagerInit.sol";

contract JobManager_Constructor_Test is JobManager_Init {
    function _deployWith(Params memory p) internal returns (JobManager) {
        return new JobManager(
            escrow, IStakeManager(address(stakeManager)), IShareRegistry(address(registry)), round, p, address(this)
        );
    }

    function test_constructor_zeroAddress_reverts() public {
        Params memory p = _defaultParams();
        vm.expectRevert(IJobManagerErrors.ZeroAddress.selector);
        new JobManager(
            IEscrow(address(0)),
            IStakeManager(address(stakeManager)),
            IShareRegistry(address(registry)),
            round,
            p,
            address(this)
        );
        vm.expectRevert(IJobManagerErrors.ZeroAddress.selector);
        new JobManager(
            escrow, IStakeManager(address(stakeManager)), IShareRegistry(address(registry)), round, p, address(0)
        );
        // No JobManager without its verification round: the round is an immutable.
        vm.expectRevert(IJobManagerErrors.ZeroAddress.selector);
        new JobManager(
            escrow,
            IStakeManager(address(stakeManager)),
            IShareRegistry(address(registry)),
            IVerificationRound(address(0)),
            p,
            address(this)
        );
    }

    function test_constructor_verifiersPerJobOutOfRange_reverts() public {
        Params memory p = _defaultParams();
        p.verifiersPerJob = 0;
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.InvalidParam.selector, "verifiersPerJob", 0));
        _deployWith(p);
        p.verifiersPerJob = 33;
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.InvalidParam.selector, "verifiersPerJob", 33));
        _deployWith(p);
    }

    function test_constructor_samplesPerJobOutOfRange_reverts() public {
        Params memory p = _defaultParams();
        p.samplesPerJob = 65;
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.InvalidParam.selector, "samplesPerJob", 65));
        _deployWith(p);
        p.samplesPerJob = 0;
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.InvalidParam.selector, "samplesPerJob", 0));
        _deployWith(p);
    }

    /// @notice A sampled segment's index is stored in 16 bits: a deployment allowing more than 2^16
    ///         segments per job is refused, exactly 2^16 is accepted.
    function test_constructor_maxSegmentsAbove16Bits_reverts() public {
        Params memory p = _defaultParams();
        p.maxSegments = 65_537;
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.InvalidParam.selector, "maxSegments", 65_537));
        _deployWith(p);
        p.maxSegments = 65_536;
        assertEq(_deployWith(p).params().maxSegments, 65_536);
    }

    function test_constructor_zeroWindow_reverts() public {
        Params memory p = _defaultParams();
        p.commitWindow = 0;
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.InvalidParam.selector, "commitWindow", 0));
        _deployWith(p);
        p = _defaultParams();
        p.verdictWindow = 0;
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.InvalidParam.selector, "verdictWindow", 0));
        _deployWith(p);
        p = _defaultParams();
        p.revealWindow = 0;
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.InvalidParam.selector, "revealWindow", 0));
        _deployWith(p);
        p = _defaultParams();
        p.challengeWindow = 0;
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.InvalidParam.selector, "challengeWindow", 0));
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

contract JobManager_VerificationRound_Test is JobManager_Init {
    /// @notice The round given at construction is the one the JobManager serves and obeys: the
    ///         deployment put the round at the address it precomputed.
    function test_verificationRound_isTheConstructorsRound_succeeds() public {
        assertEq(address(jobManager.verificationRound()), address(round));
        assertEq(address(round.jobManager()), address(jobManager));
    }

    /// @notice Only the round records verdicts: the admin cannot either (no setter re-points it).
    function test_recordVerdicts_notTheRound_reverts() public {
        SeatVerdicts[] memory none = new SeatVerdicts[](0);
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.NotVerificationRound.selector, address(this)));
        jobManager.recordVerdicts(LibSubmission.id(1, solver), none);
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
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.AdjudicatorAlreadySet.selector, address(committee)));
        jobManager.setAdjudicator(IAdjudicator(stranger));
    }

    function test_setAdjudicator_notAdmin_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.NotAdmin.selector, stranger));
        vm.prank(stranger);
        jobManager.setAdjudicator(IAdjudicator(stranger));
    }

    function test_setAdjudicator_zero_reverts() public {
        vm.expectRevert(IJobManagerErrors.ZeroAddress.selector);
        jobManager.setAdjudicator(IAdjudicator(address(0)));
    }

    function test_setAdjudicator_once_succeeds() public {
        JobManager fresh = new JobManager(
            escrow,
            IStakeManager(address(stakeManager)),
            IShareRegistry(address(registry)),
            round,
            params,
            address(this)
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
            1, submitter, MODEL_ID, SPEC_HASH, INIT_HASH, totalSteps, interval, reward, escrowAmount, SPEC_URI
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
        assertEq(job.root, INIT_HASH, "the root's word holds initHash until the commit");
        assertFalse(job.committed);
        // The spec hash is in the JobPosted event (checked above) and in the job's training key.
        assertEq(registry.trainingJobOf(registry.trainingKey(MODEL_ID, INIT_HASH, SPEC_HASH)), jobId);
        assertEq(uint256(job.totalSteps), totalSteps);
        assertEq(uint256(job.checkpointInterval), interval);
        assertEq(job.reward, reward);
        assertEq(uint8(job.status), uint8(JobStatus.Open));
        (uint256 escrowed,,,) = escrow.liabilities();
        assertEq(escrowed, escrowAmount);
    }

    /// @notice The job stores its model's index, not its id: `getJob` names the model each job was
    ///         posted under (a second model's job is not read as the first's), and a job never posted
    ///         reads as zeros (no model, although index 0 is listed).
    function test_getJob_secondModel_namesItsModel_succeeds() public {
        bytes32 other = keccak256("other-model");
        vm.startPrank(stranger);
        registry.registerModel(other, ARCHITECTURE, FAMILY, 1, INIT_HASH);
        uint256 otherJob = jobManager.postJob(other, SPEC_HASH, INIT_HASH, TOTAL_STEPS, INTERVAL, 0, SPEC_URI);
        vm.stopPrank();
        uint256 firstJob = _postJob();
        assertEq(_job(otherJob).modelId, other, "the second model's job");
        assertEq(_job(firstJob).modelId, MODEL_ID, "the first model's job");
        assertEq(_job(otherJob).submitter, stranger);
        Job memory none = _job(firstJob + 1);
        assertEq(none.modelId, bytes32(0), "a job never posted names a model");
        assertEq(none.submitter, address(0));
        assertEq(uint8(none.status), uint8(JobStatus.None));
    }

    /// @notice Regression: a stranger cannot post (and so mint shares) under another owner's model.
    function test_postJob_strangerUnderOthersModel_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.NotModelPoster.selector, MODEL_ID, stranger));
        vm.prank(stranger);
        jobManager.postJob(MODEL_ID, SPEC_HASH, INIT_HASH, 1_000_000, 1, 0, SPEC_URI);
    }

    function test_postJob_unregisteredModel_reverts() public {
        bytes32 unregistered = keccak256("unregistered");
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.NotModelPoster.selector, unregistered, submitter));
        vm.prank(submitter);
        jobManager.postJob(unregistered, SPEC_HASH, INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD, SPEC_URI);
    }

    function test_postJob_authorizedPoster_succeeds() public {
        vm.prank(submitter);
        registry.authorizePoster(MODEL_ID, stranger);
        vm.prank(stranger);
        uint256 jobId = jobManager.postJob(MODEL_ID, SPEC_HASH, INIT_HASH, TOTAL_STEPS, INTERVAL, REWARD, SPEC_URI);
        assertEq(_job(jobId).submitter, stranger);
        assertEq(_job(jobId).root, INIT_HASH);
    }

    function test_postJob_revokedPoster_reverts() public {
        vm.startPrank(submitter);
        registry.authorizePoster(MODEL_ID, stranger);
        registry.revokePoster(MODEL_ID, stranger);
        vm.stopPrank();
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.NotModelPoster.selector, MODEL_ID, stranger));
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
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.InvalidJobShape.selector, 0, 2));
        vm.prank(submitter);
        jobManager.postJob(MODEL_ID, SPEC_HASH, INIT_HASH, 0, 2, REWARD, SPEC_URI);
    }

    function test_postJob_zeroInterval_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.InvalidJobShape.selector, 16, 0));
        vm.prank(submitter);
        jobManager.postJob(MODEL_ID, SPEC_HASH, INIT_HASH, 16, 0, REWARD, SPEC_URI);
    }

    function testFuzz_postJob_notMultiple_reverts(uint32 totalSteps, uint32 interval) public {
        interval = uint32(bound(interval, 2, 1000));
        totalSteps = uint32(interval * bound(totalSteps, 1, 1000) + bound(totalSteps, 1, interval - 1));
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.InvalidJobShape.selector, totalSteps, interval));
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
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.NotSubmitter.selector, jobId, stranger));
        vm.prank(stranger);
        jobManager.cancelJob(jobId);
    }

    function test_cancelJob_claimed_reverts() public {
        uint256 jobId = _postJob();
        vm.prank(solver);
        jobManager.claimJob(jobId);
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.UnexpectedJobStatus.selector, jobId, JobStatus.Claimed)
        );
        vm.prank(submitter);
        jobManager.cancelJob(jobId);
    }

    function test_cancelJob_unknownJob_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.UnexpectedJobStatus.selector, 42, JobStatus.None));
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
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.NotActiveStaker.selector, stranger, Role.Solver));
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
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.UnexpectedJobStatus.selector, jobId, JobStatus.Claimed)
        );
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
        assertEq(lean.merkleRoot, job.root, "merkleRoot");
        assertTrue(job.committed, "committed");
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
        emit IJobManager.CheckpointsCommitted(
            jobId, solver, root, _secretCommitment(jobId, solver), CHECKPOINT_URL, uint64(block.number + 1)
        );
        bytes32[] memory initProof = _initProof(INTERVAL, _stateHashes(TOTAL_STEPS, INTERVAL));
        vm.prank(solver);
        jobManager.commitCheckpoints(jobId, root, initProof, CHECKPOINT_URL, _secretCommitment(jobId, solver));
        (bytes32 commitment,,,) = round.roundOf(_sid(jobId));
        assertEq(commitment, roundHash(_secretCommitment(jobId, solver)), "its top 208 bits");
        Job memory job = _job(jobId);
        assertEq(job.root, root, "the root takes initHash's word");
        assertTrue(job.committed);
        assertEq(uint256(job.randomnessBlock), block.number + 1);
        assertEq(uint8(job.status), uint8(JobStatus.Committed));
    }

    function test_commitCheckpoints_notSolver_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.NotSolver.selector, jobId, stranger));
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
            abi.encodeWithSelector(IJobManagerErrors.CommitDeadlinePassed.selector, jobId, deadline, deadline + 1)
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
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.ZeroMerkleRoot.selector, jobId));
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
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.UnexpectedJobStatus.selector, jobId, JobStatus.Committed)
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

    /// @notice A run that starts from other weights (leaf 0 is not (0, initHash)) cannot be committed,
    ///         whatever proof of its own leaf 0 comes with it.
    function test_commitCheckpoints_otherInitialState_reverts() public {
        bytes32[] memory states = _stateHashes(TOTAL_STEPS, INTERVAL);
        states[0] = sha256("pre-trained weights");
        bytes32 root = Merkle.root(Merkle.leaves(INTERVAL, states));
        bytes32[] memory proof = _initProof(INTERVAL, states);
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.InitialStateNotCommitted.selector, jobId, root, INIT_HASH)
        );
        vm.prank(solver);
        jobManager.commitCheckpoints(jobId, root, proof, CHECKPOINT_URL, _secretCommitment(jobId, solver));
    }

    /// @notice An honest tree with a proof of another leaf (not leaf 0) is refused too.
    function test_commitCheckpoints_proofOfOtherLeaf_reverts() public {
        bytes32[] memory states = _stateHashes(TOTAL_STEPS, INTERVAL);
        bytes32[] memory leaves = Merkle.leaves(INTERVAL, states);
        bytes32 root = Merkle.root(leaves);
        bytes32[] memory proof = Merkle.proof(leaves, 1);
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.InitialStateNotCommitted.selector, jobId, root, INIT_HASH)
        );
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
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.CommitDeadlineNotPassed.selector, jobId, deadline, deadline)
        );
        jobManager.reclaimExpired(jobId);
    }

    function test_reclaimExpired_notClaimed_reverts() public {
        uint256 jobId = _postJob();
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.UnexpectedJobStatus.selector, jobId, JobStatus.Open));
        jobManager.reclaimExpired(jobId);
    }
}

contract JobManager_Submission_Test is JobManager_Init {
    /// @notice The job counter shares the adjudicator's word (slot 0: the adjudicator's address in
    ///         the low 20 bytes, the count above it), live from the wiring on: the first job of a
    ///         deployment rewrites that word and creates none (docs/SECURITY.md, "Gas cuts").
    function test_postJob_counterInTheAdjudicatorsWord_succeeds() public {
        uint256 before = uint256(vm.load(address(jobManager), bytes32(uint256(0))));
        assertEq(address(uint160(before)), address(jobManager.adjudicator()), "the adjudicator's word");
        assertEq(before >> 160, jobManager.jobCount(), "the count above the adjudicator");
        assertTrue(before != 0, "live before the first job");
        uint256 jobId = _postJob();
        uint256 word = uint256(vm.load(address(jobManager), bytes32(uint256(0))));
        assertEq(word >> 160, jobId, "the count is the last job id");
        assertEq(address(uint160(word)), address(jobManager.adjudicator()), "the adjudicator unchanged");
    }

    function test_submissionOf_matchesStorageRead_succeeds() public {
        uint256 jobId = _postJob();
        assertTrue(jobManager.submissionOf(jobId).isZero());
        assertTrue(_sid(jobId).isZero());
        vm.prank(solver);
        jobManager.claimJob(jobId);
        SubmissionId expected = SubmissionId.wrap(bytes32((jobId << 160) | uint256(uint160(solver))));
        assertTrue(jobManager.submissionOf(jobId) == expected);
        assertTrue(_sid(jobId) == expected, "Deployers._sid slot out of date");
        (uint256 subJob, address subSolver) = jobManager.getSubmission(expected);
        assertEq(subJob, jobId);
        assertEq(subSolver, solver);
    }

    /// @notice `statusOf` reads the status `getJob` returns, through the lifecycle of a job that
    ///         is finalized, and None for a job never posted.
    function test_statusOf_followsTheLifecycle_succeeds() public {
        assertEq(uint8(jobManager.statusOf(jobManager.jobCount() + 1)), uint8(JobStatus.None));
        uint256 jobId = _postJob();
        assertEq(uint8(jobManager.statusOf(jobId)), uint8(JobStatus.Open));
        vm.prank(solver);
        jobManager.claimJob(jobId);
        assertEq(uint8(jobManager.statusOf(jobId)), uint8(JobStatus.Claimed));
        Job memory job = jobManager.getJob(jobId);
        _commit(jobId, solver, _stateHashes(job.totalSteps, job.checkpointInterval));
        assertEq(uint8(jobManager.statusOf(jobId)), uint8(JobStatus.Committed));
        _assign(jobId);
        assertEq(uint8(jobManager.statusOf(jobId)), uint8(JobStatus.Verifying));
        _submitAll(jobId, 0);
        _settle(jobId, true);
        assertEq(uint8(jobManager.statusOf(jobId)), uint8(JobStatus.Finalized));
        assertEq(uint8(jobManager.statusOf(jobId)), uint8(_job(jobId).status));
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

