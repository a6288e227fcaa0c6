// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {Vm} from "@prb/test/Vm.sol";
import {Merkle} from "./utils/Merkle.sol";
import {Deploy} from "../script/Deploy.sol";
import {Escrow} from "../src/Escrow.sol";
import {JobManager} from "../src/JobManager.sol";
import {ShareRegistry} from "../src/ShareRegistry.sol";
import {StakeManager} from "../src/StakeManager.sol";
import {VerificationRound} from "../src/VerificationRound.sol";
import {LibCheckpoint} from "../src/libraries/LibCheckpoint.sol";
import {IEscrow} from "../src/interfaces/IEscrow.sol";
import {IJobManager} from "../src/interfaces/IJobManager.sol";
import {IJobManagerErrors} from "../src/interfaces/IJobManagerErrors.sol";
import {IShareRegistry} from "../src/interfaces/IShareRegistry.sol";
import {IStakeManager} from "../src/interfaces/IStakeManager.sol";
import {IVerificationRound} from "../src/interfaces/IVerificationRound.sol";
import {Bucket} from "../src/types/EscrowTypes.sol";
import {Job, JobStatus, Verdict} from "../src/types/JobTypes.sol";
import {Role} from "../src/types/Role.sol";
import {JobManager_Init} from "./utils/JobManagerInit.sol";

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
            assertEq(_locked(verifiers[i], Role.Verifier), _seatLock(), "its stake and first reject bond");
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

    /// @notice The seats are kept as the verifiers' StakeManager ids, eight to a word: assigning
    ///         V = 3 writes 8 JobManager words (the ids' word, the three seats, the sample, the
    ///         submission's word, the job's status word and its deadlines' word); keeping each
    ///         seat's address in a word of its own wrote 10. The ids resolve back to the drawn
    ///         accounts.
    function test_assignVerifiers_seatIdsShareOneWord_succeeds() public {
        vm.roll(block.number + 2);
        vm.record();
        jobManager.assignVerifiers(jobId);
        (, bytes32[] memory writes) = vm.accesses(address(jobManager));
        // The sample and the seats' ids share one word (`Submission.draw`).
        assertEq(_distinct(writes), 7, "JobManager words written by the assignment");
        (address[] memory verifiers,) = jobManager.getAssignment(jobId);
        assertEq(verifiers.length, 3);
        uint32[] memory ids = stakeManager.verifierIdsOf(verifiers);
        address[] memory back = stakeManager.verifiersById(ids);
        for (uint256 i; i < verifiers.length; ++i) {
            assertNotEq(uint256(ids[i]), 0, "a seat without an id");
            assertEq(back[i], verifiers[i]);
        }
    }

    /// @notice Number of distinct entries of `slots`.
    function _distinct(bytes32[] memory slots) internal pure returns (uint256 count) {
        for (uint256 i; i < slots.length; ++i) {
            bool seen = false;
            for (uint256 j; j < i; ++j) {
                if (slots[j] == slots[i]) seen = true;
            }
            if (!seen) ++count;
        }
    }

    /// @notice A verifier stays in the active set while its stake meets the minimum, but the draw
    ///         seats only one whose free stake covers a seat's lock (verifierStake and its first
    ///         reject bond, `_seatLock`): under a minimum of verifierStake (a deployment the Python
    ///         deployer refuses, the contracts do not), a verifier holding free stake between
    ///         verifierStake and that lock is active, never drawn, and nothing of its stake is
    ///         locked, job after job; the draw seats the others.
    function test_assignVerifiers_freeStakeBelowSeatLock_neverDrawn_succeeds() public {
        Deploy.Config memory cfg = _testConfig();
        cfg.minStake[1] = cfg.params.verifierStake;
        _deploy(cfg);
        delete verifierPool;
        _setUpActors();
        uint256 short = _seatLock() - 1;
        // Four verifiers keep their 500e18; the other three keep one wei short of a seat's lock.
        for (uint256 i = 4; i < verifierPool.length; ++i) {
            vm.prank(verifierPool[i]);
            stakeManager.requestUnbond(Role.Verifier, 500e18 - short);
            assertTrue(stakeManager.isActive(verifierPool[i], Role.Verifier), "active at the minimum");
        }
        for (uint256 n; n < 4; ++n) {
            uint256 id = _postJob();
            _claimAndCommit(id);
            _assign(id);
            (address[] memory verifiers,) = jobManager.getAssignment(id);
            assertEq(verifiers.length, 3, "three seats from the four that can pay a seat's lock");
            for (uint256 i; i < verifiers.length; ++i) {
                bool full = false;
                for (uint256 j; j < 4; ++j) {
                    if (verifiers[i] == verifierPool[j]) full = true;
                }
                assertTrue(full, "a verifier short of a seat's lock was drawn");
            }
        }
        for (uint256 i = 4; i < verifierPool.length; ++i) {
            assertEq(_locked(verifierPool[i], Role.Verifier), 0, "nothing of a short verifier's stake locked");
            assertEq(stakeManager.freeStake(verifierPool[i], Role.Verifier), short);
        }
    }

    function test_assignVerifiers_sameBlock_reverts() public {
        uint64 randomnessBlock = _job(jobId).randomnessBlock;
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.RandomnessNotReady.selector, jobId, randomnessBlock, block.number)
        );
        jobManager.assignVerifiers(jobId);
        vm.roll(randomnessBlock);
        vm.expectRevert(
            abi.encodeWithSelector(
                IJobManagerErrors.RandomnessNotReady.selector, jobId, randomnessBlock, randomnessBlock
            )
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
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.NoEligibleVerifiers.selector, jobId, 0));
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
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.UnexpectedJobStatus.selector, jobId, JobStatus.Verifying)
        );
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
            abi.encodeWithSelector(IJobManagerErrors.ChallengeWindowClosed.selector, jobId, deadline, deadline + 1)
        );
        vm.prank(whistleblower);
        jobManager.challengeApproval(jobId, 2, verifiers[1]);
    }

    function test_challengeApproval_notWhistleblower_reverts() public {
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.NotActiveStaker.selector, stranger, Role.Whistleblower)
        );
        vm.prank(stranger);
        jobManager.challengeApproval(jobId, 2, verifiers[1]);
    }

    function test_challengeApproval_sampleOutOfRange_reverts() public {
        uint256 samples = _samples(jobId);
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.SampleIndexOutOfRange.selector, jobId, samples, samples)
        );
        vm.prank(whistleblower);
        jobManager.challengeApproval(jobId, samples, verifiers[1]);
    }

    function test_challengeApproval_notAssigned_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.NotAssignedVerifier.selector, jobId, stranger));
        vm.prank(whistleblower);
        jobManager.challengeApproval(jobId, 0, stranger);
    }

    function test_challengeApproval_reject_reverts() public {
        vm.expectRevert(
            abi.encodeWithSelector(
                IJobManagerErrors.VerdictNotApproval.selector, jobId, 0, verifiers[0], Verdict.Reject
            )
        );
        vm.prank(whistleblower);
        jobManager.challengeApproval(jobId, 0, verifiers[0]);
    }

    function test_challengeApproval_noVerdict_reverts() public {
        uint256 freshJob = _verifyingJob();
        address verifier = _assigned(freshJob)[0];
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.VerdictNotApproval.selector, freshJob, 0, verifier, Verdict.None)
        );
        vm.prank(whistleblower);
        jobManager.challengeApproval(freshJob, 0, verifier);
    }

    function test_challengeApproval_bySolver_reverts() public {
        _stake(solver, Role.Whistleblower, 10e18);
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.ChallengerConflicted.selector, jobId, solver));
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
                IJobManagerErrors.ApprovalAlreadyChallenged.selector, jobId, 1, verifiers[1], whistleblower
            )
        );
        vm.prank(other);
        jobManager.challengeApproval(jobId, 1, verifiers[1]);
    }

    function test_challengeApproval_notVerifying_reverts() public {
        uint256 openJob = _postJob();
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.UnexpectedJobStatus.selector, openJob, JobStatus.Open));
        vm.prank(whistleblower);
        jobManager.challengeApproval(openJob, 0, verifiers[1]);
    }
}

contract JobManager_Finalize_Test is JobManager_Init {
    function test_finalize_noDispute_finalizes_succeeds() public {
        uint256 jobId = _verifyingJob();
        _submitAll(jobId, 0);
        _passChallengeWindow(jobId);
        uint256 solverBefore = token.balanceOf(solver);
        uint256 solverStaked = _staked(solver, Role.Solver);
        vm.expectEmit(address(jobManager));
        emit IJobManager.JobFinalized(jobId, solver, REWARD, TOTAL_STEPS);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        // The reward is restaked, not paid to the wallet.
        assertEq(token.balanceOf(solver), solverBefore);
        assertEq(_staked(solver, Role.Solver), solverStaked + REWARD);
        assertEq(escrow.creditOf(solver), 0);
        assertEq(_locked(solver, Role.Solver), 0);
    }

    /// @notice Finalize restakes the solver's reward and each approving seat's fee instead of
    ///         paying their wallets: one `IEscrow.Paid` of their total to the StakeManager (one
    ///         token transfer for the whole job), then one `StakesRestaked` for the solver (its
    ///         solverStake unlocked, the reward added to its stake) and one for the seats (each
    ///         seat's lock off, its fee added). Exact stake deltas, wallets unchanged, no credit
    ///         booked for them, the Escrow's liabilities (and token balance) drop by exactly what
    ///         was restaked and the StakeManager's `totalHeld` grows by it; nothing else moves.
    function test_finalize_restakesSolverAndSeatEarnings_succeeds() public {
        uint256 jobId = _verifyingJob();
        address[] memory verifiers = _assigned(jobId);
        _submitAll(jobId, 0);
        _passChallengeWindow(jobId);
        uint256 solverBefore = token.balanceOf(solver);
        uint256 solverStaked = _staked(solver, Role.Solver);
        uint256[] memory seatsBefore = new uint256[](verifiers.length);
        uint256[] memory seatsStaked = new uint256[](verifiers.length);
        for (uint256 i; i < verifiers.length; ++i) {
            seatsBefore[i] = token.balanceOf(verifiers[i]);
            seatsStaked[i] = _staked(verifiers[i], Role.Verifier);
        }
        uint256 submitterCredit = escrow.creditOf(submitter);
        uint256[6] memory books = _books();

        // The reward and the fees in one payment to the StakeManager, then the solver's restake
        // and the seats' (LibSettlement.finalizeJob).
        uint256 paid = REWARD + verifiers.length * params.verifierFee;
        _expectStakesFunded(paid);
        _expectSolverRestaked(solver, REWARD);
        _expectSeatsRestaked(verifiers, _seatLock(), params.verifierFee);
        vm.recordLogs();
        jobManager.finalize(jobId);
        assertEq(_paidEvents(vm.getRecordedLogs()), 1, "one payment for the whole job");

        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        assertEq(token.balanceOf(solver), solverBefore, "no wallet payment to the solver");
        assertEq(_staked(solver, Role.Solver) - solverStaked, REWARD, "reward restaked");
        assertEq(_locked(solver, Role.Solver), 0, "solverStake unlocked");
        assertEq(escrow.creditOf(solver), 0, "no reward credit");
        for (uint256 i; i < verifiers.length; ++i) {
            assertEq(token.balanceOf(verifiers[i]), seatsBefore[i], "no wallet payment to a seat");
            assertEq(_staked(verifiers[i], Role.Verifier) - seatsStaked[i], params.verifierFee, "fee restaked");
            assertEq(_locked(verifiers[i], Role.Verifier), 0, "seat unlocked");
            assertEq(escrow.creditOf(verifiers[i]), 0, "no fee credit");
        }
        assertEq(escrow.creditOf(submitter), submitterCredit, "nothing refunded");
        uint256[6] memory booksAfter = _books();
        assertEq(books[0] - booksAfter[0], paid, "escrowed drops by what was restaked");
        assertEq(booksAfter[1], books[1], "bonds");
        assertEq(booksAfter[2], books[2], "credits");
        assertEq(booksAfter[3], books[3], "jackpot pool");
        assertEq(books[4] - booksAfter[4], paid, "the Escrow's balance drops by what was restaked");
        assertEq(booksAfter[5] - books[5], paid, "the StakeManager holds what was restaked");
        _assertEscrowSolvent();
    }

    /// @notice The Escrow's liabilities (escrowed, bonds, credits, jackpot pool), its token
    ///         balance and the StakeManager's `totalHeld` (wei), in that order.
    function _books() internal view returns (uint256[6] memory books) {
        (books[0], books[1], books[2], books[3]) = escrow.liabilities();
        books[4] = token.balanceOf(address(escrow));
        books[5] = stakeManager.totalHeld();
    }

    /// @notice `IEscrow.Paid` events among `logs`.
    function _paidEvents(Vm.Log[] memory logs) internal view returns (uint256 count) {
        for (uint256 i; i < logs.length; ++i) {
            if (logs[i].emitter == address(escrow) && logs[i].topics[0] == IEscrow.Paid.selector) ++count;
        }
    }

    function test_finalize_beforeWindow_reverts() public {
        uint256 jobId = _verifyingJob();
        _submitAll(jobId, 0);
        uint64 deadline = _job(jobId).challengeDeadline;
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.ChallengeWindowOpen.selector, jobId, deadline, block.timestamp)
        );
        jobManager.finalize(jobId);
    }

    function test_finalize_secretNotRevealed_reverts() public {
        uint256 jobId = _verifyingJob();
        _submitAll(jobId, 0);
        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.RoundPending.selector, jobId));
        jobManager.finalize(jobId);
    }

    function test_finalize_wrongStatus_reverts() public {
        uint256 jobId = _postJob();
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.UnexpectedJobStatus.selector, jobId, JobStatus.Open));
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
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.DisputePending.selector, jobId, 1));
        jobManager.finalize(jobId);
    }

    function test_finalize_missedVerdict_slashes_succeeds() public {
        uint256 poolBefore = escrow.jackpotPool();
        uint256 jobId = _verifyingJob();
        address[] memory verifiers = _assigned(jobId);
        _submit(jobId, verifiers[0], 0);
        _submit(jobId, verifiers[1], 0);
        _passChallengeWindow(jobId);
        uint256 paidBefore = token.balanceOf(verifiers[0]);
        uint256 paidStaked = _staked(verifiers[0], Role.Verifier);
        uint256 missedBefore = token.balanceOf(verifiers[2]);
        vm.expectEmit(address(jobManager));
        emit IJobManager.VerdictMissed(jobId, verifiers[2], params.verifierStake);
        jobManager.finalize(jobId);
        // The fee goes back to the submitter; the stake to the jackpot pool, never to a party of
        // the job (P-19).
        assertEq(escrow.creditOf(submitter), params.verifierFee);
        assertEq(escrow.jackpotPool(), poolBefore + params.verifierStake);
        assertEq(escrow.creditOf(verifiers[2]), 0);
        assertEq(token.balanceOf(verifiers[2]), missedBefore, "a missed seat is paid nothing");
        assertEq(_staked(verifiers[2], Role.Verifier), 500e18 - params.verifierStake);
        assertEq(_locked(verifiers[2], Role.Verifier), 0);
        // A seat that revealed has its fee restaked, its wallet untouched.
        assertEq(token.balanceOf(verifiers[0]), paidBefore);
        assertEq(_staked(verifiers[0], Role.Verifier), paidStaked + params.verifierFee);
        assertEq(escrow.creditOf(verifiers[0]), 0);
        _assertEscrowSolvent();
    }

    function test_finalize_adjudicatorNotSet_reverts() public {
        // A JobManager deployed by hand whose adjudicator is never set, with a StakeManager, an
        // Escrow and a registry of its own. Each is given the JobManager's address before it
        // exists (immutables): the StakeManager is nonce n, the Escrow n + 1, the registry n + 2,
        // the JobManager n + 3 and its round n + 4. This contract stands in for the RunRegistry.
        uint256 nonce = vm.getNonce(address(this));
        address nextJobManager = vmx.computeCreateAddress(address(this), nonce + 3);
        address nextRound = vmx.computeCreateAddress(address(this), nonce + 4);
        Deploy.Config memory cfg = _testConfig();
        stakeManager = new StakeManager(
            token, cfg.unbondingDelay, cfg.minStake, nextJobManager, address(committee), address(this)
        );
        escrow = new Escrow(token, nextJobManager, address(0), address(this));
        registry = new ShareRegistry(token, Deploy.MAX_SEGMENT_COMPUTE, nextJobManager, address(this));
        JobManager fresh = new JobManager(
            escrow,
            IStakeManager(address(stakeManager)),
            IShareRegistry(address(registry)),
            IVerificationRound(nextRound),
            params,
            address(this)
        );
        assertEq(address(fresh), nextJobManager, "the JobManager at its precomputed address");
        round = new VerificationRound(IJobManager(address(fresh)), 0);
        assertEq(address(round), nextRound, "the round at its precomputed address");
        jobManager = fresh;
        // The actors again: funded, approving the new Escrow and StakeManager, staked, the model
        // registered.
        delete verifierPool;
        _setUpActors();
        (uint256 jobId,) = _rejectedJob();
        _passChallengeWindow(jobId);
        vm.expectRevert(IJobManagerErrors.AdjudicatorNotSet.selector);
        fresh.finalize(jobId);
    }
}

contract JobManager_OnDisputeResolved_Test is JobManager_Init {
    function test_onDisputeResolved_notAdjudicator_reverts() public {
        address[] memory none = new address[](0);
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.NotAdjudicator.selector, stranger));
        vm.prank(stranger);
        jobManager.onDisputeResolved(1, true, none, none);
    }

    function test_onDisputeResolved_unknownDispute_reverts() public {
        address[] memory none = new address[](0);
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.UnknownDispute.selector, 7));
        vm.prank(address(committee));
        jobManager.onDisputeResolved(7, true, none, none);
    }

    function test_onDisputeResolved_twice_reverts() public {
        (uint256 jobId,) = _rejectedJob();
        _passChallengeWindow(jobId);
        jobManager.finalize(jobId);
        _arbitrate(1, true);
        address[] memory none = new address[](0);
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.UnknownDispute.selector, 1));
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

    /// @notice Until the commit the root's word holds the job's initHash (`Job.root`): a poster
    ///         who picks as initHash the root of a tree of its own proves nothing with that tree's
    ///         proofs, before the commit or after another solver's commit, and the round's view
    ///         shows no root before the commit.
    function test_verifyCheckpoint_initHashIsATreesRoot_beforeCommit_returnsFalse() public {
        uint32 interval = 5;
        bytes32[] memory forged = new bytes32[](3);
        (forged[0], forged[1], forged[2]) = (keccak256("a"), keccak256("b"), keccak256("c"));
        bytes32[] memory forgedLeaves = Merkle.leaves(interval, forged);
        bytes32 forgedRoot = Merkle.root(forgedLeaves);
        bytes32[] memory forgedProof = Merkle.proof(forgedLeaves, 2);
        vm.prank(submitter);
        uint256 jobId = jobManager.postJob(MODEL_ID, SPEC_HASH, forgedRoot, 2 * interval, interval, REWARD, SPEC_URI);
        assertEq(_job(jobId).root, forgedRoot, "initHash in the root's word");
        assertFalse(jobManager.verifyCheckpoint(jobId, 2, forged[2], forgedProof), "Open: initHash taken for a root");
        assertEq(jobManager.roundJobOf(jobId).merkleRoot, bytes32(0), "Open: a root before the commit");
        vm.prank(solver);
        jobManager.claimJob(jobId);
        assertFalse(jobManager.verifyCheckpoint(jobId, 2, forged[2], forgedProof), "Claimed: initHash taken for a root");
        // The solver commits a tree whose checkpoint 0 is that initHash: only its tree proves now.
        bytes32[] memory states = new bytes32[](3);
        (states[0], states[1], states[2]) = (forgedRoot, keccak256("s1"), keccak256("s2"));
        bytes32[] memory leaves = Merkle.leaves(interval, states);
        vm.prank(solver);
        jobManager.commitCheckpoints(
            jobId, Merkle.root(leaves), Merkle.proof(leaves, 0), CHECKPOINT_URL, _secretCommitment(jobId, solver)
        );
        assertEq(jobManager.roundJobOf(jobId).merkleRoot, Merkle.root(leaves), "committed root");
        assertFalse(jobManager.verifyCheckpoint(jobId, 2, forged[2], forgedProof), "the forged tree still proves");
        assertTrue(jobManager.verifyCheckpoint(jobId, 2, states[2], Merkle.proof(leaves, 2)), "the committed tree");
    }

    /// @notice Pins the leaf encoding of PROTOCOL.md 2.3 to an explicit formula.
    function test_leafHash_matchesSpec_succeeds() public {
        bytes32 stateHash = sha256("checkpoint bytes");
        bytes32 expected = keccak256(bytes.concat(keccak256(abi.encode(uint256(5), uint256(10), stateHash))));
        assertEq(LibCheckpoint.leafHash(5, 10, stateHash), expected);
    }
}

