// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Deployers} from "./utils/Deployers.sol";
// Deployment
import {Deploy} from "../script/Deploy.sol";
// Contracts
import {JobManager} from "../src/JobManager.sol";
import {VerificationRound} from "../src/VerificationRound.sol";
// Interfaces
import {IJobManager} from "../src/interfaces/IJobManager.sol";
import {IJobManagerErrors} from "../src/interfaces/IJobManagerErrors.sol";
import {IVerificationRound} from "../src/interfaces/IVerificationRound.sol";
// Types
import {Job, JobStatus, Params} from "../src/types/JobTypes.sol";
import {Role} from "../src/types/Role.sol";
import {RoundOutcome} from "../src/types/RoundTypes.sol";

/// @title Abuse_Test
/// @notice Attacks an outside review reproduced on the protocol, each played by fresh keys through
///         raw calls: late claims that starve verifiers of their window, free abandonment of
///         self-dealt jobs, jackpot farming, jobs paid without any verdict, jobs nobody can finish
///         and Open jobs that never expire.
contract Abuse_Test is Deployers {
    ////// Helpers //////

    /// @notice Posts a job (as the submitter), claims and commits it (as the solver) and draws its
    ///         verifiers, without posting claims.
    function _assignedJob(uint256 reward) internal returns (uint256 jobId) {
        // A spec of its own per job: the same training is posted once (P-26).
        bytes32 specHash = keccak256(abi.encode(SPEC_HASH, jobManager.jobCount()));
        vm.prank(submitter);
        jobId = jobManager.postJob(MODEL_ID, specHash, INIT_HASH, TOTAL_STEPS, INTERVAL, reward, SPEC_URI);
        _claimAndCommit(jobId);
        vm.roll(block.number + 2);
        jobManager.assignVerifiers(jobId);
    }

    /// @notice Every assigned verifier seals approve-all (reveals follow once all sealed).
    function _allApprove(uint256 jobId) internal {
        address[] memory verifiers = _assigned(jobId);
        for (uint256 i; i < verifiers.length; ++i) {
            _submit(jobId, verifiers[i], 0);
        }
    }

    ////// 1. Late claims //////

    /// @notice Claims posted at the last second the solver is allowed still leave every verifier the
    ///         whole verdict window: all seal verdictWindow after the claims, nobody is slashed.
    function test_postClaims_atClaimsDeadline_verifiersKeepWholeWindow_succeeds() public {
        uint256 jobId = _assignedJob(REWARD);
        Job memory job = _job(jobId);
        assertEq(job.verdictDeadline, job.claimsDeadline + params.verdictWindow);
        vm.warp(job.claimsDeadline);
        _postClaims(jobId);
        vm.warp(block.timestamp + params.verdictWindow);
        _allApprove(jobId);
        _passChallengeWindow(jobId);
        address[] memory verifiers = _assigned(jobId);
        uint256[] memory balances = new uint256[](verifiers.length);
        for (uint256 i; i < verifiers.length; ++i) {
            balances[i] = token.balanceOf(verifiers[i]);
        }
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        for (uint256 i; i < verifiers.length; ++i) {
            // Not slashed, and the fee is restaked on the seat's stake, not paid to its wallet.
            assertEq(_staked(verifiers[i], Role.Verifier), 500e18 + params.verifierFee, "verifier slashed or unpaid");
            assertEq(token.balanceOf(verifiers[i]), balances[i], "fee paid to the wallet");
            assertEq(escrow.creditOf(verifiers[i]), 0, "fee credited");
        }
    }

    /// @notice Claims after the claims deadline are refused; the solver, not the verifiers, is at fault.
    function test_postClaims_afterClaimsDeadline_solverFaulted_reverts() public {
        uint256 jobId = _assignedJob(REWARD);
        Job memory job = _job(jobId);
        vm.warp(job.claimsDeadline + 1);
        (bytes32[] memory starts, bytes32[] memory ends) = _claims(jobId);
        vm.expectRevert(
            abi.encodeWithSelector(
                IVerificationRound.OutsideWindow.selector,
                _sid(jobId),
                job.claimsDeadline - params.claimsWindow,
                job.claimsDeadline,
                job.claimsDeadline + 1
            )
        );
        vm.prank(solver);
        round.postClaims(_sid(jobId), starts, ends);
        _bookClaims(round, _sid(jobId), starts, ends);
        vm.warp(job.challengeDeadline + params.revealWindow + 1);
        (RoundOutcome outcome,) = round.outcome(_sid(jobId));
        assertEq(uint8(outcome), uint8(RoundOutcome.NoClaims));
        jobManager.finalize(jobId);
        address[] memory verifiers = _assigned(jobId);
        for (uint256 i; i < verifiers.length; ++i) {
            // Not slashed: its seat's fee is restaked with the job's rejection.
            assertEq(_staked(verifiers[i], Role.Verifier), 500e18 + params.verifierFee, "verifier slashed");
        }
        assertEq(_staked(solver, Role.Solver), 1000e18 - params.solverStake, "solver not slashed");
    }

    /// @notice A job whose segments are longer than a verifier can replay in the window is refused.
    function test_postJob_segmentAboveMaxSegmentSteps_reverts() public {
        uint32 k = params.maxSegmentSteps + 1;
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.SegmentStepsAboveMax.selector, k, params.maxSegmentSteps)
        );
        vm.prank(submitter);
        jobManager.postJob(MODEL_ID, SPEC_HASH, INIT_HASH, k, k, REWARD, SPEC_URI);
    }

    ////// 3. Abandonment //////

    /// @notice A submitter-solver pair that posts a zero-reward job and never posts claims ends
    ///         poorer by at least the solver stake; the verifiers it locked are paid their fee.
    function test_abandonAfterAssignment_costsPairAndPaysVerifiers_succeeds() public {
        uint256 pairBefore = _holdings(submitter) + _holdings(solver);
        uint256 poolBefore = escrow.jackpotPool();
        uint256 jobId = _assignedJob(0);
        address[] memory verifiers = _assigned(jobId);
        uint256[] memory verifierBefore = new uint256[](verifiers.length);
        for (uint256 i; i < verifiers.length; ++i) {
            verifierBefore[i] = _holdings(verifiers[i]);
        }
        vm.warp(_job(jobId).challengeDeadline + 1);
        jobManager.finalize(jobId);
        uint256 pairAfter = _holdings(submitter) + _holdings(solver);
        assertGte(pairBefore - pairAfter, params.solverStake, "abandonment too cheap");
        assertEq(escrow.jackpotPool(), poolBefore + params.solverStake, "slash not pooled");
        for (uint256 i; i < verifiers.length; ++i) {
            assertEq(_holdings(verifiers[i]), verifierBefore[i] + params.verifierFee, "verifier unpaid");
            assertEq(_locked(verifiers[i], Role.Verifier), 0, "verifier still locked");
        }
        _assertEscrowSolvent();
    }

    /// @notice A solver that never commits is slashed into the jackpot pool, not to the submitter.
    function test_reclaimExpired_slashGoesToPool_succeeds() public {
        uint256 pairBefore = _holdings(submitter) + _holdings(solver);
        uint256 poolBefore = escrow.jackpotPool();
        vm.prank(submitter);
        uint256 jobId = jobManager.postJob(MODEL_ID, SPEC_HASH, INIT_HASH, TOTAL_STEPS, INTERVAL, 0, SPEC_URI);
        vm.prank(solver);
        jobManager.claimJob(jobId);
        vm.warp(_job(jobId).commitDeadline + 1);
        jobManager.reclaimExpired(jobId);
        vm.prank(submitter);
        jobManager.cancelJob(jobId);
        assertEq(pairBefore - (_holdings(submitter) + _holdings(solver)), params.solverStake);
        assertEq(escrow.jackpotPool(), poolBefore + params.solverStake);
        _assertEscrowSolvent();
    }

    /// @notice A JobManager whose jobs would lock verifier stake for free cannot be deployed.
    function test_constructor_zeroVerifierFee_reverts() public {
        Params memory p = jobManager.params();
        p.verifierFee = 0;
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.InvalidParam.selector, "verifierFee", 0));
        new JobManager(escrow, stakeManager, registry, round, p, address(this));
    }

    ////// 4. Jackpot farming //////

    /// @notice The round refuses a forced-error rate at which farming pays:
    ///         p * V * jackpot >= (1 - p) * solverStake.
    function test_constructor_farmingProfitable_reverts() public {
        // Defaults: V = 3, jackpot = 20e18, solverStake = 100e18: break-even at p = 100 / 160.
        uint256 rate = 6250;
        vm.expectRevert(
            abi.encodeWithSelector(
                IVerificationRound.JackpotFarmingProfitable.selector, rate * 3 * 20e18, (10_000 - rate) * 100e18
            )
        );
        new VerificationRound(jobManager, rate);
        new VerificationRound(jobManager, rate - 1);
    }

    /// @notice The farming strategy (a coalition of submitter, solver and every verifier posts
    ///         zero-reward jobs, abandons those without a forced error and rejects the forced sample
    ///         of the others to collect the jackpots) ends with less than it started, even with a
    ///         well-funded pool (rate 30%: expected -52e18 per job with the default params).
    function test_jackpotFarming_coalitionLoses_succeeds() public {
        _redeployWithRate(3000);
        address funder = _actor("jackpot funder");
        vm.prank(funder);
        escrow.fundJackpot(10_000e18);
        address[] memory coalition = new address[](2 + verifierPool.length);
        coalition[0] = submitter;
        coalition[1] = solver;
        for (uint256 i; i < verifierPool.length; ++i) {
            coalition[2 + i] = verifierPool[i];
        }
        uint256 before;
        for (uint256 i; i < coalition.length; ++i) {
            before += _holdings(coalition[i]);
        }
        uint256 forcedJobs;
        uint256 jobs = 10;
        for (uint256 n; n < jobs; ++n) {
            uint256 jobId = _assignedJob(0);
            (bool forced, uint256 f) = round.drawForcedError(_sid(jobId), _secret(jobId));
            if (forced) {
                ++forcedJobs;
                _postClaims(jobId);
                address[] memory verifiers = _assigned(jobId);
                for (uint256 i; i < verifiers.length; ++i) {
                    _submit(jobId, verifiers[i], uint256(1) << f);
                }
                _passChallengeWindow(jobId);
                jobManager.finalize(jobId);
            } else {
                vm.warp(_job(jobId).challengeDeadline + 1);
                jobManager.finalize(jobId);
            }
            // Keep the solver able to claim: top its stake up from its own wallet.
            if (_staked(solver, Role.Solver) < 1000e18) {
                _stake(solver, Role.Solver, 1000e18 - _staked(solver, Role.Solver));
            }
        }
        uint256 afterwards;
        for (uint256 i; i < coalition.length; ++i) {
            afterwards += _holdings(coalition[i]);
        }
        assertGt(forcedJobs, 0, "no forced job drawn");
        assertLt(forcedJobs, jobs, "no job abandoned");
        assertLt(afterwards, before, "farming paid");
    }

    ////// 8. No verdicts //////

    /// @notice Verifiers seated on the submission by an earlier draw.
    mapping(address verifier => bool seated) internal _seatedBefore;
    /// @notice Seats drawn on the submission, over every draw.
    uint256 internal _seatsDrawn;

    /// @notice Every verifier silent: nothing is paid or minted, the silent verifiers are slashed and
    ///         verifiers are drawn again from a fresh randomness block; after maxReassignments the
    ///         submitter is refunded and the solver unlocked. The silent seats' stakes join the
    ///         jackpot pool, never the submitter (P-19: a submitter-solver pair that posts a job its
    ///         verifiers cannot replay in time must not collect their stakes).
    function test_finalize_noVerdicts_reassignsThenRefunds_succeeds() public {
        uint256 poolBefore = escrow.jackpotPool();
        uint256 pairBefore = _holdings(submitter) + _holdings(solver);
        uint256 jobId = _assignedJob(REWARD);
        _postClaims(jobId);
        uint256 submitterBefore = _holdings(submitter);
        uint256 solverWealth = _holdings(solver);
        for (uint256 attempt; attempt <= params.maxReassignments; ++attempt) {
            address[] memory verifiers = _assigned(jobId);
            uint256[] memory stakes = new uint256[](verifiers.length);
            for (uint256 i; i < verifiers.length; ++i) {
                // One seat per verifier and submission (P-42): no draw seats a verifier again.
                assertFalse(_seatedBefore[verifiers[i]], "a verifier seated twice on the submission");
                _seatedBefore[verifiers[i]] = true;
                stakes[i] = _staked(verifiers[i], Role.Verifier);
            }
            _seatsDrawn += verifiers.length;
            vm.warp(_job(jobId).challengeDeadline + 1);
            // The secret stays hidden from the next draw.
            bytes32[] memory none = new bytes32[](0);
            vm.expectRevert(
                abi.encodeWithSelector(
                    IVerificationRound.SamplesUncovered.selector, _sid(jobId), uint64((1 << _samples(jobId)) - 1)
                )
            );
            vm.prank(solver);
            round.revealSecret(_sid(jobId), _secret(jobId), bytes32(0), none, _claimsArg(_sid(jobId)));
            (RoundOutcome outcome,) = round.outcome(_sid(jobId));
            assertEq(uint8(outcome), uint8(RoundOutcome.NoVerdicts));
            jobManager.finalize(jobId);
            for (uint256 i; i < verifiers.length; ++i) {
                assertEq(_staked(verifiers[i], Role.Verifier), stakes[i] - params.verifierStake, "silent not slashed");
            }
            assertEq(_sharesMinted(MODEL_ID), 0, "shares minted");
            assertEq(_holdings(solver), solverWealth, "solver paid");
            if (attempt < params.maxReassignments) {
                assertEq(uint8(_job(jobId).status), uint8(JobStatus.Committed));
                assertEq(_job(jobId).randomnessBlock, block.number + 1, "no fresh randomness");
                vm.roll(block.number + 2);
                jobManager.assignVerifiers(jobId);
                assertEq(uint8(_job(jobId).status), uint8(JobStatus.Verifying));
                assertEq(_job(jobId).verdictDeadline, block.timestamp + params.verdictWindow);
                (,, uint32 committed,) = round.roundOf(_sid(jobId));
                assertEq(committed, 0);
            }
        }
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Expired));
        assertEq(_locked(solver, Role.Solver), 0, "solver still locked");
        assertEq(_holdings(solver), solverWealth, "solver paid or slashed");
        // The submitter got its reward and fees back, and nothing of the silent verifiers' stakes:
        // they joined the jackpot pool, and the pair ends with no more than it started with.
        uint256 slashes = _seatsDrawn * params.verifierStake;
        assertEq(_holdings(submitter), submitterBefore + REWARD + params.verifiersPerJob * params.verifierFee);
        assertLte(_holdings(submitter) + _holdings(solver), pairBefore, "pair gained from the slashes");
        assertGte(escrow.jackpotPool(), poolBefore + slashes, "slashes not pooled");
        _assertEscrowSolvent();
    }

    /// @notice A reassignment draws only verifiers never seated on the submission, and as many of
    ///         them as it can (docs/SECURITY.md P-42): with 7 staked verifiers at V = 3, after two
    ///         silent draws the third seats exactly the one never seated, whichever order the
    ///         shuffle puts the first draw's seats in (drawing them and dropping them afterwards
    ///         would leave the seat empty whenever the shuffle put three of them first).
    function test_reassignment_thirdDrawSeatsTheFreshVerifier_succeeds() public {
        assertEq(verifierPool.length, 7);
        assertEq(params.verifiersPerJob, 3);
        for (uint256 round; round < 8; ++round) {
            uint256 jobId = _assignedJob(REWARD);
            _postClaims(jobId);
            address[] memory first = _assigned(jobId);
            _reassign(jobId);
            jobManager.assignVerifiers(jobId);
            address[] memory second = _assigned(jobId);
            _reassign(jobId);
            jobManager.assignVerifiers(jobId);
            address[] memory third = _assigned(jobId);
            assertEq(third.length, 1, "the one verifier never seated is drawn");
            assertFalse(_isIn(first, third[0]) || _isIn(second, third[0]), "a verifier seated twice");
            // The third draw stays silent too: the job expires and frees every stake for the next.
            vm.warp(_job(jobId).challengeDeadline + 1);
            jobManager.finalize(jobId);
            assertEq(uint8(_job(jobId).status), uint8(JobStatus.Expired));
        }
    }

    ////// 10. Unbounded jobs //////

    function test_postJob_maxUint32Steps_reverts() public {
        uint32 n = type(uint32).max;
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.TotalStepsAboveMax.selector, n, params.maxTotalSteps));
        vm.prank(submitter);
        jobManager.postJob(MODEL_ID, SPEC_HASH, INIT_HASH, n, n, REWARD, SPEC_URI);
    }

    function test_postJob_tooManySegments_reverts() public {
        uint32 segments = params.maxSegments + 1;
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.SegmentsAboveMax.selector, segments, params.maxSegments)
        );
        vm.prank(submitter);
        jobManager.postJob(MODEL_ID, SPEC_HASH, INIT_HASH, segments, 1, REWARD, SPEC_URI);
    }

    ////// 11. Open jobs expire //////

    function test_claimJob_afterOpenDeadline_reverts() public {
        uint256 jobId = _postJob();
        uint64 deadline = _job(jobId).openDeadline;
        assertEq(deadline, block.timestamp + params.openWindow);
        vm.warp(uint256(deadline) + 1);
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.OpenDeadlinePassed.selector, jobId, deadline, uint64(deadline) + 1)
        );
        vm.prank(solver);
        jobManager.claimJob(jobId);
    }

    function test_expireJob_refundsSubmitter_succeeds() public {
        uint256 jobId = _postJob();
        uint64 deadline = _job(jobId).openDeadline;
        vm.expectRevert(
            abi.encodeWithSelector(
                IJobManagerErrors.OpenDeadlineNotPassed.selector, jobId, deadline, uint64(block.timestamp)
            )
        );
        jobManager.expireJob(jobId);
        vm.warp(uint256(deadline) + 1);
        uint256 refund = REWARD + params.verifiersPerJob * params.verifierFee;
        vm.expectEmit(address(jobManager));
        emit IJobManager.JobExpired(jobId, refund);
        vm.prank(stranger);
        jobManager.expireJob(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Expired));
        assertEq(escrow.creditOf(submitter), refund);
        _assertEscrowSolvent();
    }

    function test_reclaimExpired_reopensForAnotherOpenWindow_succeeds() public {
        uint256 jobId = _postJob();
        vm.prank(solver);
        jobManager.claimJob(jobId);
        vm.warp(_job(jobId).commitDeadline + 1);
        jobManager.reclaimExpired(jobId);
        assertEq(_job(jobId).openDeadline, block.timestamp + params.openWindow);
    }
}
