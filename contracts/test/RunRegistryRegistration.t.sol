// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {RunRegistry_Base} from "./RunRegistry.t.sol";
// Interfaces
import {IJobManagerErrors} from "../src/interfaces/IJobManagerErrors.sol";
import {IJobManager} from "../src/interfaces/IJobManager.sol";
import {IRunRegistry} from "../src/interfaces/IRunRegistry.sol";
import {IShareRegistry} from "../src/interfaces/IShareRegistry.sol";
// Types
import {PostKind} from "../src/types/LineageTypes.sol";
import {RunInfo, RunRoundPhase} from "../src/types/RunTypes.sol";

/// @notice openRun and postContribution.
contract RunRegistry_Registration_Test is RunRegistry_Base {
    function test_openRun_opensRoundZero_succeeds() public {
        vm.expectEmit(address(runs));
        emit IRunRegistry.RunOpened(1, RUN_MODEL, RUN_HASH, submitter, START_HASH, 3, 2, INNER_STEPS, RUN_SPEC_URI);
        uint256 runId = _openRun(RUN_HASH, 3, 2);
        assertEq(runId, 1);
        RunInfo memory run = runs.getRun(runId);
        assertEq(run.modelId, RUN_MODEL);
        assertEq(run.runHash, RUN_HASH);
        assertEq(run.opener, submitter);
        assertEq(run.startHash, START_HASH);
        assertEq(uint256(run.seats), 3);
        assertEq(uint256(run.rounds), 2);
        assertEq(uint256(run.innerSteps), INNER_STEPS);
        assertEq(uint256(run.round), 0);
        assertEq(uint8(_phase(runId, 0)), uint8(RunRoundPhase.Open));
        assertEq(uint8(_phase(runId, 1)), uint8(RunRoundPhase.None));
        assertEq(runs.runIdOf(RUN_HASH), runId);
        assertEq(runs.runCount(), 1);
    }

    function test_openRun_authorizedPoster_succeeds() public {
        vm.prank(submitter);
        registry.authorizePoster(RUN_MODEL, stranger);
        vm.prank(stranger);
        uint256 runId = runs.openRun(RUN_MODEL, RUN_HASH, START_HASH, 256, 1, 1, RUN_SPEC_URI);
        assertEq(runs.getRun(runId).opener, stranger);
    }

    function test_openRun_notPoster_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.NotPoster.selector, RUN_MODEL, stranger));
        vm.prank(stranger);
        runs.openRun(RUN_MODEL, RUN_HASH, START_HASH, 2, 2, INNER_STEPS, RUN_SPEC_URI);
    }

    function test_openRun_invalidShape_reverts() public {
        vm.startPrank(submitter);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.InvalidRun.selector, "seats", 0));
        runs.openRun(RUN_MODEL, RUN_HASH, START_HASH, 0, 2, INNER_STEPS, RUN_SPEC_URI);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.InvalidRun.selector, "seats", 257));
        runs.openRun(RUN_MODEL, RUN_HASH, START_HASH, 257, 2, INNER_STEPS, RUN_SPEC_URI);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.InvalidRun.selector, "rounds", 0));
        runs.openRun(RUN_MODEL, RUN_HASH, START_HASH, 2, 0, INNER_STEPS, RUN_SPEC_URI);
        // The stored run packs R into 24 bits: one more is refused, never truncated.
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.InvalidRun.selector, "rounds", 1 << 24));
        runs.openRun(RUN_MODEL, RUN_HASH, START_HASH, 2, 1 << 24, INNER_STEPS, RUN_SPEC_URI);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.InvalidRun.selector, "innerSteps", 0));
        runs.openRun(RUN_MODEL, RUN_HASH, START_HASH, 2, 2, 0, RUN_SPEC_URI);
        vm.stopPrank();
    }

    /// @notice The run and its first round are stored packed (the opener with M, R, H and t; the
    ///         phase with both deadlines and the proposer): the widest values read back whole.
    function test_openRun_packedRecord_readsBackWidestValues_succeeds() public {
        uint32 maxRounds = type(uint24).max;
        uint32 maxSteps = type(uint32).max;
        vm.prank(submitter);
        uint256 runId = runs.openRun(RUN_MODEL, RUN_HASH, START_HASH, 256, maxRounds, maxSteps, RUN_SPEC_URI);
        RunInfo memory run = runs.getRun(runId);
        assertEq(run.opener, submitter);
        assertEq(uint256(run.seats), 256);
        assertEq(uint256(run.rounds), maxRounds);
        assertEq(uint256(run.innerSteps), maxSteps);
        assertEq(uint256(run.round), 0);
        assertEq(run.startHash, START_HASH);
        assertEq(uint256(runs.registrationDeadline(runId, 0)), block.timestamp + runs.registrationWindow());
        assertEq(uint8(_phase(runId, 0)), uint8(RunRoundPhase.Open));
    }

    function test_openRun_runHashTaken_reverts() public {
        uint256 runId = _openRun(RUN_HASH, 2, 2);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.RunHashTaken.selector, RUN_HASH, runId));
        _openRun(RUN_HASH, 2, 2);
    }

    function test_getRun_unknown_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.UnknownRun.selector, 1));
        runs.getRun(1);
    }

    /// @notice Only a registered contribution is one: a plain job and an id never posted are not
    ///         (the answer is the ShareRegistry's post kind, kept by no word of the RunRegistry).
    function test_isContribution_plainJobOrUnknownId_isFalse_succeeds() public {
        uint256 runId = _openRun(RUN_HASH, 2, 2);
        uint256 contribution = _registered(runId, 0, 0);
        uint256 plain = _postJob();
        assertTrue(runs.isContribution(contribution), "the contribution");
        assertFalse(runs.isContribution(plain), "a plain job");
        assertFalse(runs.isContribution(plain + 1), "an id never posted");
    }

    /// @notice The job is posted and registered in one call: the poster is its submitter and pays
    ///         its escrow, the job has the seat's spec hash and innerSteps, and it is a contribution
    ///         from its post (never a lineage job).
    function test_postContribution_registersTheSeat_succeeds() public {
        uint256 runId = _openRun(RUN_HASH, 2, 2);
        uint256 before = token.balanceOf(submitter);
        uint256 expected = jobManager.jobCount() + 1;
        vm.expectEmit(address(registry));
        emit IShareRegistry.ContributionPosted(RUN_MODEL, expected);
        // No spec URI of its own: the run's, at RunOpened, resolved by (run, round, seat).
        vm.expectEmit(address(jobManager));
        emit IJobManager.JobPosted(
            expected,
            submitter,
            RUN_MODEL,
            _spec(RUN_HASH, 0, 1),
            INIT_HASH,
            INNER_STEPS,
            INTERVAL,
            REWARD,
            jobManager.postCost(REWARD),
            ""
        );
        vm.expectEmit(address(runs));
        emit IRunRegistry.ContributionAdded(runId, 0, 1, expected);
        uint256 jobId = _registered(runId, 0, 1);
        assertEq(jobId, expected);
        assertEq(runs.contributionOf(runId, 0, 1), jobId);
        assertEq(runs.getRound(runId, 0).registered, 2);
        assertTrue(runs.isContribution(jobId));
        assertEq(uint8(registry.postKindOf(jobId)), uint8(PostKind.Contribution));
        assertEq(_job(jobId).submitter, submitter);
        // The seat's spec hash is the job's: its training key names the job.
        assertEq(registry.trainingJobOf(registry.trainingKey(RUN_MODEL, INIT_HASH, _spec(RUN_HASH, 0, 1))), jobId);
        assertEq(uint256(_job(jobId).totalSteps), INNER_STEPS);
        assertEq(before - token.balanceOf(submitter), jobManager.postCost(REWARD), "poster paid the escrow");
        assertEq(runs.contributionSpecHash(RUN_HASH, 0, 1), _spec(RUN_HASH, 0, 1));
    }

    /// @notice Four job ids share a word: six seats of seven posted out of order across two words,
    ///         between jobs that are not contributions, each read back as its own, each seat
    ///         taken by its own id, the free seat still free, another run's round untouched.
    function test_postContribution_packedJobIds_readBackPerSeat_succeeds() public {
        uint256 runId = _openRun(RUN_HASH, 7, 2);
        uint256 other = _openRun(keccak256("another run"), 7, 2);
        uint32[6] memory order = [uint32(5), 0, 3, 1, 4, 2];
        uint256[6] memory ids;
        for (uint256 i; i < order.length; ++i) {
            _postJob(); // a plain job in between: contribution ids are not consecutive
            ids[order[i]] = _registered(runId, 0, order[i]);
        }
        for (uint32 seat; seat < 6; ++seat) {
            assertEq(runs.contributionOf(runId, 0, seat), ids[seat], "own id");
            assertEq(runs.contributionOf(other, 0, seat), 0, "other run");
            assertEq(runs.contributionOf(runId, 1, seat), 0, "next round");
            vm.expectRevert(abi.encodeWithSelector(IRunRegistry.SeatTaken.selector, runId, 0, seat, ids[seat]));
            _postContribution(submitter, runId, seat);
        }
        assertEq(runs.contributionOf(runId, 0, 6), 0, "free seat");
        assertEq(runs.getRound(runId, 0).registered, 63);
        assertEq(_registered(runId, 0, 6), jobManager.jobCount(), "the free seat registers");
        assertEq(runs.contributionOf(runId, 0, 5), ids[5], "its word-mate kept");
    }

    function test_postContribution_unknownRun_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.UnknownRun.selector, 0));
        _postContribution(submitter, 0, 0);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.UnknownRun.selector, 9));
        _postContribution(submitter, 9, 0);
    }

    function test_postContribution_notPoster_reverts() public {
        uint256 runId = _openRun(RUN_HASH, 2, 2);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.NotPoster.selector, RUN_MODEL, stranger));
        _postContribution(stranger, runId, 0);
    }

    function test_postContribution_seatOutOfRange_reverts() public {
        uint256 runId = _openRun(RUN_HASH, 2, 2);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.SeatOutOfRange.selector, runId, 2));
        _postContribution(submitter, runId, 2);
    }

    function test_postContribution_seatTaken_reverts() public {
        uint256 runId = _openRun(RUN_HASH, 2, 2);
        uint256 first = _registered(runId, 0, 0);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.SeatTaken.selector, runId, 0, 0, first));
        _postContribution(submitter, runId, 0);
    }

    /// @notice Only the RunRegistry posts contributions at the JobManager: a job cannot be made a
    ///         contribution by anyone else (nor an existing job registered as one).
    function test_jobManagerPostContribution_notRunRegistry_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.NotRunRegistry.selector, submitter));
        vm.prank(submitter);
        jobManager.postContribution(
            submitter, RUN_MODEL, _spec(RUN_HASH, 0, 0), INIT_HASH, INNER_STEPS, INTERVAL, REWARD, SPEC_URI
        );
    }

    /// @notice Registering the last seat closes registration (an event); any later post is refused.
    function test_postContribution_registrationClosed_reverts() public {
        uint256 runId = _openRun(RUN_HASH, 2, 2);
        _registered(runId, 0, 0);
        vm.expectEmit(address(runs));
        emit IRunRegistry.RegistrationClosedForRound(runId, 0);
        _registered(runId, 0, 1);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.RegistrationClosed.selector, runId, 0));
        _postContribution(submitter, runId, 0);
    }

    /// @notice A round posted in part closes at its registration deadline: no post after it, and
    ///         its claim may then be proposed with the seats it has. The next round opens with a
    ///         deadline of its own.
    function test_registrationDeadline_closesAPartialRound_succeeds() public {
        uint256 runId = _openRun(RUN_HASH, 2, 2);
        uint256 job0 = _registered(runId, 0, 0);
        _finalizeJob(job0, solver);
        uint64 deadline = runs.registrationDeadline(runId, 0);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.RegistrationOpen.selector, runId, uint32(0), 1, deadline));
        _propose(proposer, runId, keccak256("outer 1"), 1);
        vm.warp(uint256(deadline) + 1);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.RegistrationClosed.selector, runId, 0));
        _postContribution(submitter, runId, 1);
        _propose(proposer, runId, keccak256("outer 1"), 1);
        _passClaimWindow(runId);
        vm.expectEmit(address(runs));
        emit IRunRegistry.RoundOpened(runId, 1, uint64(block.timestamp) + runs.registrationWindow());
        runs.finalizeRound(runId);
        assertEq(_runShares(solver), _shares());
    }

    function test_postContribution_afterProposal_reverts() public {
        uint256 runId = _settledRound(2, solver2);
        _propose(proposer, runId, keccak256("outer 1"), 1);
        vm.expectRevert(
            abi.encodeWithSelector(IRunRegistry.UnexpectedRoundPhase.selector, runId, 0, RunRoundPhase.Proposed)
        );
        _postContribution(submitter, runId, 1);
    }

    function test_postContribution_afterStruckClaim_reverts() public {
        uint256 runId = _settledRound(2, solver2);
        _propose(colluder, runId, keccak256("wrong outer 1"), 1);
        _arbitrateClaim(_challenge(watcher, runId), false, 0);
        assertEq(uint8(_phase(runId, 0)), uint8(RunRoundPhase.Open));
        vm.expectRevert(
            abi.encodeWithSelector(IRunRegistry.UnexpectedRoundPhase.selector, runId, 0, RunRoundPhase.Open)
        );
        _postContribution(submitter, runId, 1);
    }

    function test_postContribution_runEnded_reverts() public {
        uint256 runId = _openSettledRun(RUN_HASH, 2, 1);
        _propose(proposer, runId, keccak256("outer 1"), 0);
        _passClaimWindow(runId);
        runs.finalizeRound(runId);
        vm.expectRevert(abi.encodeWithSelector(IRunRegistry.RunEnded.selector, runId));
        _postContribution(submitter, runId, 0);
    }
}
