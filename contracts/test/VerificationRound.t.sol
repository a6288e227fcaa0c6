// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Deployers} from "./utils/Deployers.sol";
// Contracts
import {VerificationRound} from "../src/VerificationRound.sol";
// Interfaces
import {IJobManager} from "../src/interfaces/IJobManager.sol";
import {IJobManagerErrors} from "../src/interfaces/IJobManagerErrors.sol";
import {IVerificationRound} from "../src/interfaces/IVerificationRound.sol";
// Types
import {LibSubmission, SubmissionId} from "../src/types/SubmissionId.sol";
import {Job, JobStatus, Verdict} from "../src/types/JobTypes.sol";
import {Claims, RoundOutcome} from "../src/types/RoundTypes.sol";
import {roundHash} from "../src/types/RoundWord.sol";

/// @notice Shared setup for the VerificationRound tests (docs/FORCED_ERRORS.md).
abstract contract VerificationRound_Init is Deployers {
    /// @notice A Verifying job whose solver has not posted claims yet.
    function _unclaimedJob() internal returns (uint256 jobId) {
        jobId = _postJob();
        _claimAndCommit(jobId);
        vm.roll(block.number + 2);
        jobManager.assignVerifiers(jobId);
    }

    function _seal(uint256 jobId, address verifier, uint256 rejectMask) internal {
        bytes32 commitment =
            _verdictCommitment(jobId, verifier, _ends(jobId, rejectMask), _verdictSalt(jobId, verifier));
        vm.prank(verifier);
        round.commitVerdicts(_sid(jobId), commitment);
    }

    function _open(uint256 jobId, address verifier, uint256 rejectMask) internal {
        bytes32[] memory ends = _ends(jobId, rejectMask);
        bytes32 salt = _verdictSalt(jobId, verifier);
        vm.prank(verifier);
        round.revealVerdicts(_sid(jobId), ends, salt, _claimsArg(_sid(jobId)));
    }

    function _segments(uint256 jobId) internal view returns (uint32[] memory segments) {
        (, segments) = jobManager.getAssignment(jobId);
    }

    /// @notice The draw of docs/FORCED_ERRORS.md section 1, written out independently.
    function _referenceDraw(bytes32 secret, uint256 jobId, uint32[] memory segments, uint256 rateBps)
        internal
        pure
        returns (bool forced, uint256 sampleIndex)
    {
        bytes32 draw = keccak256(abi.encode(secret, jobId, segments));
        if (uint256(draw) % 10_000 >= rateBps) return (false, 0);
        uint256[] memory eligible = new uint256[](segments.length);
        uint256 count;
        for (uint256 j; j < segments.length; ++j) {
            bool covered;
            for (uint256 i; i < segments.length; ++i) {
                if (uint256(segments[i]) == uint256(segments[j]) + 1) covered = true;
            }
            if (!covered) eligible[count++] = j;
        }
        return (true, eligible[uint256(keccak256(abi.encode(draw, uint256(1)))) % count]);
    }
}

contract VerificationRound_Constructor_Test is VerificationRound_Init {
    function test_constructor_setsWiring_succeeds() public {
        assertEq(round.jobManager(), address(jobManager));
        assertEq(round.forcedErrorRateBps(), 0);
        assertEq(round.FORCED_ERROR_TAG(), keccak256("veritrain.forced-error.v1"));
    }

    function testFuzz_constructor_rateAboveOne_reverts(uint256 rateBps) public {
        rateBps = bound(rateBps, 10_001, type(uint256).max);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.InvalidRate.selector, rateBps));
        new VerificationRound(IJobManager(address(jobManager)), rateBps);
    }

    function test_constructor_rateAboveOne_reverts() public {
        testFuzz_constructor_rateAboveOne_reverts(10_001);
    }

    /// @notice At a rate of 10_000 every jackpot is farmable (docs/FORCED_ERRORS.md section 5).
    function test_constructor_fullRate_reverts() public {
        uint256 gain = 10_000 * params.verifiersPerJob * params.jackpot;
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.JackpotFarmingProfitable.selector, gain, 0));
        new VerificationRound(IJobManager(address(jobManager)), 10_000);
    }
}

contract VerificationRound_OnCommit_Test is VerificationRound_Init {
    function test_onCommit_notJobManager_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.NotJobManager.selector, stranger));
        vm.prank(stranger);
        round.onCommit(LibSubmission.id(1, solver), bytes32(uint256(1)));
    }

    function test_onCommit_zero_reverts() public {
        SubmissionId id = LibSubmission.id(1, solver);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.ZeroCommitment.selector, id));
        vm.prank(address(jobManager));
        round.onCommit(id, bytes32(0));
    }

    function test_onCommit_records_succeeds() public {
        SubmissionId id = LibSubmission.id(1, solver);
        bytes32 secretCommitment = keccak256("a secret commitment");
        vm.recordLogs();
        vm.prank(address(jobManager));
        round.onCommit(id, secretCommitment);
        // The JobManager's CheckpointsCommitted announces it: the round emits nothing.
        assertEq(vm.getRecordedLogs().length, 0, "an event of the round");
        (bytes32 commitment, bool revealed, uint32 committed, uint64 claimsBlock) = round.roundOf(id);
        assertEq(commitment, roundHash(secretCommitment), "its top 208 bits kept");
        assertEq(uint256(commitment) >> 48, uint256(secretCommitment) >> 48);
        assertEq(uint256(commitment) & 0xffffffffffff, 0);
        assertFalse(revealed);
        assertEq(uint256(committed), 0);
        assertEq(uint256(claimsBlock), 0, "no claims yet: the word keeps the bare secret commitment");
    }
}

contract VerificationRound_PostClaims_Test is VerificationRound_Init {
    uint256 internal jobId;

    function setUp() public override {
        super.setUp();
        jobId = _unclaimedJob();
    }

    function test_postClaims_records_succeeds() public {
        (bytes32[] memory starts, bytes32[] memory ends) = _claims(jobId);
        vm.expectEmit(address(round));
        emit IVerificationRound.ClaimsPosted(_sid(jobId), _secretCommitmentOf(_sid(jobId)), starts, ends);
        vm.prank(solver);
        round.postClaims(_sid(jobId), starts, ends);
        _bookClaims(round, _sid(jobId), starts, ends);
        (bytes32[] memory s, bytes32[] memory e) = _claimsOf(_sid(jobId));
        assertEq(s, starts);
        assertEq(e, ends);
        // Only the hash's top 208 bits are stored, in the secret commitment's word and binding it,
        // with the block of the event that carries the claims.
        (bytes32 stored,,, uint64 postedBlock) = round.roundOf(_sid(jobId));
        assertEq(stored, roundHash(keccak256(abi.encode(_secretCommitmentOf(_sid(jobId)), starts, ends))));
        assertEq(uint256(postedBlock), block.number);
    }

    function test_postClaims_atDeadline_succeeds() public {
        vm.warp(_job(jobId).claimsDeadline);
        _postClaims(jobId);
        assertTrue(_claimsPosted(jobId));
    }

    function test_postClaims_afterDeadline_reverts() public {
        uint64 deadline = _job(jobId).claimsDeadline;
        vm.warp(uint256(deadline) + 1);
        (bytes32[] memory starts, bytes32[] memory ends) = _claims(jobId);
        vm.expectRevert(
            abi.encodeWithSelector(
                IVerificationRound.OutsideWindow.selector,
                _sid(jobId),
                deadline - params.claimsWindow,
                deadline,
                deadline + 1
            )
        );
        vm.prank(solver);
        round.postClaims(_sid(jobId), starts, ends);
        _bookClaims(round, _sid(jobId), starts, ends);
    }

    function test_postClaims_notSolver_reverts() public {
        (bytes32[] memory starts, bytes32[] memory ends) = _claims(jobId);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.NotSolver.selector, _sid(jobId), stranger));
        vm.prank(stranger);
        round.postClaims(_sid(jobId), starts, ends);
        _bookClaims(round, _sid(jobId), starts, ends);
    }

    function test_postClaims_twice_reverts() public {
        _postClaims(jobId);
        (bytes32[] memory starts, bytes32[] memory ends) = _claims(jobId);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.ClaimsAlreadyPosted.selector, _sid(jobId)));
        vm.prank(solver);
        round.postClaims(_sid(jobId), starts, ends);
        _bookClaims(round, _sid(jobId), starts, ends);
    }

    function test_postClaims_lengthMismatch_reverts() public {
        (bytes32[] memory starts, bytes32[] memory ends) = _claims(jobId);
        bytes32[] memory short = new bytes32[](3);
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.LengthMismatch.selector, _sid(jobId), _samples(jobId), 3)
        );
        vm.prank(solver);
        round.postClaims(_sid(jobId), short, ends);
        _bookClaims(round, _sid(jobId), short, ends);
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.LengthMismatch.selector, _sid(jobId), _samples(jobId), 3)
        );
        vm.prank(solver);
        round.postClaims(_sid(jobId), starts, short);
        _bookClaims(round, _sid(jobId), starts, short);
    }

    function test_postClaims_noSubmission_reverts() public {
        uint256 openJob = _postJob();
        bytes32[] memory none = new bytes32[](0);
        SubmissionId id = LibSubmission.id(openJob, solver);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.UnknownSubmission.selector, id));
        vm.prank(solver);
        round.postClaims(id, none, none);
        _bookClaims(round, id, none, none);
    }

    /// @notice A submission id is its (job, solver) pair, so anyone can name a live job with
    ///         another solver, or none: every round action refuses such an id, and the views
    ///         read it as a round that never started.
    function test_forgedSubmissionId_liveJobOtherSolver_reverts() public {
        uint256 jobId = _verifyingJob(); // its solver posted its claims
        (bytes32[] memory starts, bytes32[] memory ends) = _claims(jobId);
        address seat = _assigned(jobId)[0];
        SubmissionId[2] memory forged = [LibSubmission.id(jobId, stranger), LibSubmission.id(jobId, address(0))];
        for (uint256 i; i < forged.length; ++i) {
            SubmissionId id = forged[i];
            assertEq(id.jobIdOf(), jobId, "names the live job");
            vm.expectRevert(abi.encodeWithSelector(IVerificationRound.UnknownSubmission.selector, id));
            vm.prank(stranger);
            round.postClaims(id, starts, ends);
            vm.expectRevert(abi.encodeWithSelector(IVerificationRound.UnknownSubmission.selector, id));
            vm.prank(seat);
            round.commitVerdicts(id, keccak256("seal"));
            (RoundOutcome outcome_,) = round.outcome(id);
            assertEq(uint8(outcome_), uint8(RoundOutcome.Pending), "no round");
            (uint64 opens, uint64 closes,,) = jobManager.windowsOf(id);
            assertEq(opens, 0, "no window");
            assertEq(closes, 0, "no window");
        }
        // The active submission's claims are untouched.
        assertTrue(_claimsPosted(jobId), "claims of the active submission");
    }

    function test_postClaims_notVerifying_reverts() public {
        // Committed, not yet assigned: the round exists but the job is not Verifying.
        uint256 openJob = _postJob();
        _claimAndCommit(openJob);
        bytes32[] memory none = new bytes32[](0);
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.WrongJobStatus.selector, openJob, uint8(JobStatus.Committed))
        );
        vm.prank(solver);
        round.postClaims(_sid(openJob), none, none);
        _bookClaims(round, _sid(openJob), none, none);
    }
}

/// @notice The solver's assignment and claims in one call (`assignAndPostClaims`): the same state
///         as `assignVerifiers` then `postClaims`, and nothing assigned when it reverts.
contract VerificationRound_AssignAndPostClaims_Test is VerificationRound_Init {
    uint256 internal jobId;

    function setUp() public override {
        super.setUp();
        jobId = _postJob();
        _claimAndCommit(jobId);
        vm.roll(block.number + 2);
    }

    /// @notice The sample the assignment would draw now and the solver's claims on it, learnt by
    ///         assigning and undoing it (the nodes replay the draw off chain instead).
    function _predict() internal returns (bytes32 sampleHash, bytes32[] memory starts, bytes32[] memory ends) {
        uint256 snapshot = vmx.snapshotState();
        jobManager.assignVerifiers(jobId);
        sampleHash = keccak256(abi.encode(_segments(jobId)));
        (starts, ends) = _claims(jobId);
        vmx.revertToState(snapshot);
    }

    function _assertUnassigned() internal {
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Committed), "still Committed");
        assertEq(_segments(jobId).length, 0, "no sample drawn");
        assertFalse(_claimsPosted(jobId), "no claims");
    }

    function test_assignAndPostClaims_assignsAndRecords_succeeds() public {
        (bytes32 sampleHash, bytes32[] memory starts, bytes32[] memory ends) = _predict();
        vm.expectEmit(address(round));
        emit IVerificationRound.ClaimsPosted(_sid(jobId), _secretCommitmentOf(_sid(jobId)), starts, ends);
        vm.prank(solver);
        round.assignAndPostClaims(jobId, sampleHash, starts, ends);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Verifying));
        assertEq(keccak256(abi.encode(_segments(jobId))), sampleHash, "the predicted sample");
        assertEq(_assigned(jobId).length, params.verifiersPerJob, "every seat filled");
        (bytes32 stored,,, uint64 postedBlock) = round.roundOf(_sid(jobId));
        assertEq(stored, roundHash(keccak256(abi.encode(_secretCommitmentOf(_sid(jobId)), starts, ends))));
        assertEq(uint256(postedBlock), block.number);
        // The claims window runs from the assignment, as after the two calls.
        assertEq(uint256(_job(jobId).claimsDeadline), block.timestamp + params.claimsWindow);
    }

    /// @notice Claims of the right count for another sample (the verifier set moved since the
    ///         prediction) are refused: they would claim states of other segments.
    function test_assignAndPostClaims_otherSample_reverts() public {
        (bytes32 sampleHash, bytes32[] memory starts, bytes32[] memory ends) = _predict();
        bytes32 other = keccak256(abi.encode(sampleHash));
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.SampleMismatch.selector, jobId, other));
        vm.prank(solver);
        round.assignAndPostClaims(jobId, other, starts, ends);
        _assertUnassigned();
    }

    function test_assignAndPostClaims_otherCount_reverts() public {
        (bytes32 sampleHash, bytes32[] memory starts, bytes32[] memory ends) = _predict();
        bytes32[] memory shortStarts = new bytes32[](starts.length - 1);
        for (uint256 i; i < shortStarts.length; ++i) {
            shortStarts[i] = starts[i];
        }
        vm.expectRevert(
            abi.encodeWithSelector(
                IVerificationRound.LengthMismatch.selector, _sid(jobId), starts.length, shortStarts.length
            )
        );
        vm.prank(solver);
        round.assignAndPostClaims(jobId, sampleHash, shortStarts, ends);
        _assertUnassigned();
    }

    /// @notice Anyone may assign, but only the solver posts claims: a stranger's call assigns
    ///         nothing (its submission is unknown).
    function test_assignAndPostClaims_notSolver_reverts() public {
        (bytes32 sampleHash, bytes32[] memory starts, bytes32[] memory ends) = _predict();
        SubmissionId theirs = LibSubmission.id(jobId, stranger);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.UnknownSubmission.selector, theirs));
        vm.prank(stranger);
        round.assignAndPostClaims(jobId, sampleHash, starts, ends);
        _assertUnassigned();
    }

    /// @notice Once anyone assigned the job, the solver posts its claims alone.
    function test_assignAndPostClaims_alreadyAssigned_reverts() public {
        (bytes32 sampleHash, bytes32[] memory starts, bytes32[] memory ends) = _predict();
        jobManager.assignVerifiers(jobId);
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.UnexpectedJobStatus.selector, jobId, JobStatus.Verifying)
        );
        vm.prank(solver);
        round.assignAndPostClaims(jobId, sampleHash, starts, ends);
        vm.prank(solver);
        round.postClaims(_sid(jobId), starts, ends);
        assertTrue(_claimsPosted(jobId));
    }

    /// @notice A randomness block past the 256 hashes the chain keeps: `assignVerifiers` alone
    ///         re-anchors it; the merged call reverts and leaves the anchor as it was.
    function test_assignAndPostClaims_staleRandomness_reverts() public {
        (bytes32 sampleHash, bytes32[] memory starts, bytes32[] memory ends) = _predict();
        uint40 anchor = _job(jobId).randomnessBlock;
        vm.roll(block.number + 300);
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.WrongJobStatus.selector, jobId, uint8(JobStatus.Committed))
        );
        vm.prank(solver);
        round.assignAndPostClaims(jobId, sampleHash, starts, ends);
        assertEq(uint256(_job(jobId).randomnessBlock), uint256(anchor), "not re-anchored");
        _assertUnassigned();
    }
}

contract VerificationRound_CommitVerdicts_Test is VerificationRound_Init {
    uint256 internal jobId;
    address[] internal verifiers;

    function setUp() public override {
        super.setUp();
        jobId = _verifyingJob();
        verifiers = _assigned(jobId);
    }

    function test_commitVerdicts_records_succeeds() public {
        vm.expectEmit(address(round));
        emit IVerificationRound.VerdictsCommitted(_sid(jobId), verifiers[0], bytes32(uint256(9)));
        vm.prank(verifiers[0]);
        round.commitVerdicts(_sid(jobId), bytes32(uint256(9)));
        (bytes32 commitment, bool revealed) = round.verdictCommitmentOf(_sid(jobId), verifiers[0]);
        assertEq(commitment, bytes32(uint256(9)));
        assertFalse(revealed);
        (,, uint32 committed,) = round.roundOf(_sid(jobId));
        assertEq(uint256(committed), 1);
    }

    function test_commitVerdicts_atDeadline_succeeds() public {
        vm.warp(_job(jobId).verdictDeadline);
        _seal(jobId, verifiers[0], 0);
    }

    function test_commitVerdicts_afterDeadline_reverts() public {
        uint64 deadline = _job(jobId).verdictDeadline;
        vm.warp(uint256(deadline) + 1);
        vm.expectRevert(
            abi.encodeWithSelector(
                IVerificationRound.OutsideWindow.selector,
                _sid(jobId),
                deadline - params.verdictWindow,
                deadline,
                deadline + 1
            )
        );
        vm.prank(verifiers[0]);
        round.commitVerdicts(_sid(jobId), bytes32(uint256(9)));
    }

    function test_commitVerdicts_notAssigned_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.NotAssignedVerifier.selector, _sid(jobId), stranger));
        vm.prank(stranger);
        round.commitVerdicts(_sid(jobId), bytes32(uint256(9)));
    }

    function test_commitVerdicts_beforeClaims_reverts() public {
        uint256 bare = _unclaimedJob();
        address verifier = _assigned(bare)[0];
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.ClaimsNotPosted.selector, _sid(bare)));
        vm.prank(verifier);
        round.commitVerdicts(_sid(bare), bytes32(uint256(9)));
    }

    function test_commitVerdicts_zero_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.ZeroCommitment.selector, _sid(jobId)));
        vm.prank(verifiers[0]);
        round.commitVerdicts(_sid(jobId), bytes32(0));
    }

    function test_commitVerdicts_twice_reverts() public {
        _seal(jobId, verifiers[0], 0);
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.VerdictAlreadyCommitted.selector, _sid(jobId), verifiers[0])
        );
        vm.prank(verifiers[0]);
        round.commitVerdicts(_sid(jobId), bytes32(uint256(9)));
    }

    function test_commitVerdicts_notVerifying_reverts() public {
        // Committed, not yet assigned: the round exists but the job is not Verifying.
        uint256 openJob = _postJob();
        _claimAndCommit(openJob);
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.WrongJobStatus.selector, openJob, uint8(JobStatus.Committed))
        );
        vm.prank(verifiers[0]);
        round.commitVerdicts(_sid(openJob), bytes32(uint256(9)));
    }
}

contract VerificationRound_RevealVerdicts_Test is VerificationRound_Init {
    uint256 internal jobId;
    address[] internal verifiers;
    uint64 internal deadline;

    function setUp() public override {
        super.setUp();
        jobId = _verifyingJob();
        verifiers = _assigned(jobId);
        deadline = _job(jobId).verdictDeadline;
    }

    function test_revealVerdicts_allCommitted_opensAtOnce_succeeds() public {
        for (uint256 i; i < verifiers.length; ++i) {
            _seal(jobId, verifiers[i], 0);
        }
        vm.expectEmit(address(round));
        emit IVerificationRound.VerdictsRevealed(
            _sid(jobId), verifiers[0], _ends(jobId, 0), (uint256(1) << _samples(jobId)) - 1
        );
        _open(jobId, verifiers[0], 0);
        (, bool revealed) = round.verdictCommitmentOf(_sid(jobId), verifiers[0]);
        assertTrue(revealed);
        // The revealed flag is the JobManager's seat flag, set in the same call.
        (bool assigned, uint64 mask, bool seatRevealed, uint256 seats, uint256 samples) =
            jobManager.seatOf(_sid(jobId), verifiers[0]);
        assertTrue(assigned);
        assertTrue(seatRevealed);
        assertEq(uint256(mask), jobManager.sampleMaskOf(jobId, verifiers[0]));
        assertEq(seats, verifiers.length);
        assertEq(samples, _samples(jobId));
        (,, bool other,,) = jobManager.seatOf(_sid(jobId), verifiers[1]);
        assertFalse(other);
        (bool stranger,,,,) = jobManager.seatOf(_sid(jobId), address(0xBEEF));
        assertFalse(stranger);
        assertEq(uint8(jobManager.verdictOf(jobId, verifiers[0])[0]), uint8(Verdict.Approve));
    }

    function test_revealVerdicts_notAllCommitted_beforeDeadline_reverts() public {
        _seal(jobId, verifiers[0], 0);
        vm.warp(deadline);
        bytes32[] memory ends = _ends(jobId, 0);
        bytes32 salt = _verdictSalt(jobId, verifiers[0]);
        vm.expectRevert(
            abi.encodeWithSelector(
                IVerificationRound.OutsideWindow.selector,
                _sid(jobId),
                deadline + 1,
                deadline + params.revealWindow,
                deadline
            )
        );
        vm.prank(verifiers[0]);
        round.revealVerdicts(_sid(jobId), ends, salt, _claimsArg(_sid(jobId)));
    }

    function test_revealVerdicts_afterDeadline_succeeds() public {
        _seal(jobId, verifiers[0], 1);
        vm.warp(uint256(deadline) + 1);
        _open(jobId, verifiers[0], 1);
        assertEq(uint8(jobManager.verdictOf(jobId, verifiers[0])[0]), uint8(Verdict.Reject));
    }

    function test_revealVerdicts_atClose_succeeds() public {
        _seal(jobId, verifiers[0], 0);
        vm.warp(uint256(deadline) + params.revealWindow);
        _open(jobId, verifiers[0], 0);
    }

    function test_revealVerdicts_afterClose_reverts() public {
        for (uint256 i; i < verifiers.length; ++i) {
            _seal(jobId, verifiers[i], 0);
        }
        uint64 closes = deadline + params.revealWindow;
        vm.warp(uint256(closes) + 1);
        bytes32[] memory ends = _ends(jobId, 0);
        bytes32 salt = _verdictSalt(jobId, verifiers[0]);
        vm.expectRevert(
            abi.encodeWithSelector(
                IVerificationRound.OutsideWindow.selector,
                _sid(jobId),
                deadline - params.verdictWindow - params.claimsWindow,
                closes,
                closes + 1
            )
        );
        vm.prank(verifiers[0]);
        round.revealVerdicts(_sid(jobId), ends, salt, _claimsArg(_sid(jobId)));
    }

    function test_revealVerdicts_nothingCommitted_reverts() public {
        bytes32[] memory ends = _ends(jobId, 0);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.NothingToReveal.selector, _sid(jobId), verifiers[0]));
        vm.prank(verifiers[0]);
        round.revealVerdicts(_sid(jobId), ends, bytes32(0), _claimsArg(_sid(jobId)));
    }

    function test_revealVerdicts_twice_reverts() public {
        _submitAll(jobId, 0);
        bytes32[] memory ends = _ends(jobId, 0);
        bytes32 salt = _verdictSalt(jobId, verifiers[0]);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.NothingToReveal.selector, _sid(jobId), verifiers[0]));
        vm.prank(verifiers[0]);
        round.revealVerdicts(_sid(jobId), ends, salt, _claimsArg(_sid(jobId)));
    }

    function test_revealVerdicts_lengthMismatch_reverts() public {
        _seal(jobId, verifiers[0], 0);
        vm.warp(uint256(deadline) + 1);
        bytes32[] memory ends = new bytes32[](3);
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.LengthMismatch.selector, _sid(jobId), _samples(jobId), 3)
        );
        vm.prank(verifiers[0]);
        round.revealVerdicts(_sid(jobId), ends, bytes32(0), _claimsArg(_sid(jobId)));
    }

    function testFuzz_revealVerdicts_otherVerdicts_reverts(uint256 rejectMask) public {
        rejectMask = bound(rejectMask, 1, 15);
        _seal(jobId, verifiers[0], 0);
        vm.warp(uint256(deadline) + 1);
        bytes32[] memory ends = _ends(jobId, rejectMask);
        bytes32 salt = _verdictSalt(jobId, verifiers[0]);
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.VerdictCommitmentMismatch.selector, _sid(jobId), verifiers[0])
        );
        vm.prank(verifiers[0]);
        round.revealVerdicts(_sid(jobId), ends, salt, _claimsArg(_sid(jobId)));
    }

    function test_revealVerdicts_otherVerdicts_reverts() public {
        testFuzz_revealVerdicts_otherVerdicts_reverts(1);
    }

    /// @notice A lazy verifier that copies a diligent one's sealed commitment cannot open it: the
    ///         commitment binds the verifier's address, even once the verdicts and salt are public.
    function test_revealVerdicts_copiedCommitment_reverts() public {
        bytes32 honest = _verdictCommitment(jobId, verifiers[0], _ends(jobId, 2), _verdictSalt(jobId, verifiers[0]));
        vm.prank(verifiers[0]);
        round.commitVerdicts(_sid(jobId), honest);
        vm.prank(verifiers[1]);
        round.commitVerdicts(_sid(jobId), honest);
        _seal(jobId, verifiers[2], 0);
        _open(jobId, verifiers[0], 2);
        bytes32[] memory ends = _ends(jobId, 2);
        bytes32 salt = _verdictSalt(jobId, verifiers[0]);
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.VerdictCommitmentMismatch.selector, _sid(jobId), verifiers[1])
        );
        vm.prank(verifiers[1]);
        round.revealVerdicts(_sid(jobId), ends, salt, _claimsArg(_sid(jobId)));
    }

    /// @notice Claims passed back as calldata must be the posted ones: a verifier that seals a
    ///         forged end (or start) and passes a copy of the claims carrying it cannot turn its
    ///         reveal into an approval of a claim the solver never made.
    function testFuzz_revealVerdicts_forgedClaims_reverts(uint256 sample, bytes32 forged, bool onStart) public {
        (bytes32[] memory starts, bytes32[] memory ends) = _claimsOf(_sid(jobId));
        sample = bound(sample, 0, ends.length - 1);
        bytes32[] storage target = onStart ? _claimsBook[_sid(jobId)].startHashes : _claimsBook[_sid(jobId)].endHashes;
        vm.assume(forged != target[sample] && forged != bytes32(0));
        if (onStart) starts[sample] = forged;
        else ends[sample] = forged;
        // The verifier seals exactly the forged ends: against the forged copy it approves all.
        bytes32 salt = _verdictSalt(jobId, verifiers[0]);
        bytes32 commitment = _verdictCommitment(jobId, verifiers[0], ends, salt);
        vm.prank(verifiers[0]);
        round.commitVerdicts(_sid(jobId), commitment);
        vm.warp(uint256(deadline) + 1);
        Claims memory copy =
            Claims({startHashes: starts, endHashes: ends, secretCommitment: _secretCommitmentOf(_sid(jobId))});
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.ClaimsMismatch.selector, _sid(jobId)));
        vm.prank(verifiers[0]);
        round.revealVerdicts(_sid(jobId), ends, salt, copy);
    }

    /// @notice The claims passed back must carry the secret commitment the claims hash binds: the
    ///         posted start and end hashes with any other commitment are refused.
    function test_revealVerdicts_claimsWithAnotherSecretCommitment_reverts() public {
        _seal(jobId, verifiers[0], 0);
        vm.warp(uint256(deadline) + 1);
        bytes32[] memory ends = _ends(jobId, 0);
        bytes32 salt = _verdictSalt(jobId, verifiers[0]);
        Claims memory claims = _claimsArg(_sid(jobId));
        claims.secretCommitment = keccak256("another secret commitment");
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.ClaimsMismatch.selector, _sid(jobId)));
        vm.prank(verifiers[0]);
        round.revealVerdicts(_sid(jobId), ends, salt, claims);
    }

    function test_revealVerdicts_forgedClaims_reverts() public {
        testFuzz_revealVerdicts_forgedClaims_reverts(0, keccak256("forged end"), false);
    }

    function test_revealVerdicts_notVerifying_reverts() public {
        // Committed, not yet assigned: the round exists but the job is not Verifying.
        uint256 openJob = _postJob();
        _claimAndCommit(openJob);
        bytes32[] memory ends = new bytes32[](4);
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.WrongJobStatus.selector, openJob, uint8(JobStatus.Committed))
        );
        vm.prank(verifiers[0]);
        round.revealVerdicts(_sid(openJob), ends, bytes32(0), _claimsArg(_sid(openJob)));
    }

    function test_windowsOf_matchDeadlines_succeeds() public {
        Job memory job = _job(jobId);
        (uint64 vOpens, uint64 vCloses, uint64 sOpens, uint64 sCloses) = jobManager.windowsOf(_sid(jobId));
        assertEq(uint256(vOpens), uint256(job.verdictDeadline) + 1);
        assertEq(uint256(vCloses), uint256(job.verdictDeadline) + params.revealWindow);
        assertEq(uint256(sOpens), uint256(job.challengeDeadline));
        assertEq(uint256(sCloses), uint256(job.challengeDeadline) + params.revealWindow);
        (vOpens, vCloses, sOpens, sCloses) = jobManager.windowsOf(LibSubmission.id(999, solver));
        assertEq(uint256(vOpens) + vCloses + sOpens + sCloses, 0);
    }
}

contract VerificationRound_Outcome_Test is VerificationRound_Init {
    function test_outcome_pendingUntilDeadlines_succeeds() public {
        (RoundOutcome outcome,) = round.outcome(_sid(_postJob()));
        assertEq(uint8(outcome), uint8(RoundOutcome.Pending));
        uint256 bare = _unclaimedJob();
        vm.warp(_job(bare).claimsDeadline);
        (outcome,) = round.outcome(_sid(bare));
        assertEq(uint8(outcome), uint8(RoundOutcome.Pending));
        vm.warp(uint256(_job(bare).claimsDeadline) + 1);
        (outcome,) = round.outcome(_sid(bare));
        assertEq(uint8(outcome), uint8(RoundOutcome.NoClaims));
    }

    function test_outcome_noReveal_afterSecretWindow_succeeds() public {
        uint256 jobId = _verifyingJob();
        _submitAll(jobId, 0);
        uint256 closes = uint256(_job(jobId).challengeDeadline) + params.revealWindow;
        vm.warp(closes);
        (RoundOutcome outcome,) = round.outcome(_sid(jobId));
        assertEq(uint8(outcome), uint8(RoundOutcome.Pending));
        vm.warp(closes + 1);
        (outcome,) = round.outcome(_sid(jobId));
        assertEq(uint8(outcome), uint8(RoundOutcome.NoReveal));
    }

    function test_outcome_clean_succeeds() public {
        uint256 jobId = _verifyingJob();
        _submitAll(jobId, 0);
        _passChallengeWindow(jobId);
        (RoundOutcome outcome,) = round.outcome(_sid(jobId));
        assertEq(uint8(outcome), uint8(RoundOutcome.Clean));
    }
}
