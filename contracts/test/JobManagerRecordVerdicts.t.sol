// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {Vm} from "@prb/test/Vm.sol";
import {Escrow} from "../src/Escrow.sol";
import {IJobManager} from "../src/interfaces/IJobManager.sol";
import {IJobManagerErrors} from "../src/interfaces/IJobManagerErrors.sol";
import {IStakeManager} from "../src/interfaces/IStakeManager.sol";
import {IVerificationRound} from "../src/interfaces/IVerificationRound.sol";
import {LibSubmission, SubmissionId} from "../src/types/SubmissionId.sol";
import {Job, JobStatus, Verdict} from "../src/types/JobTypes.sol";
import {Role} from "../src/types/Role.sol";
import {SeatVerdicts} from "../src/types/RoundTypes.sol";
import {JobManager_Init} from "./utils/JobManagerInit.sol";

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

    /// @notice `recordVerdicts` for one seat, as the round's own reveal calls it.
    function _record(SubmissionId sid, address verifier, bool[] memory approvals, uint256 abstain, bytes5 tag)
        internal
    {
        uint256 approveMask;
        for (uint256 i; i < approvals.length; ++i) {
            if (approvals[i]) approveMask |= uint256(1) << i;
        }
        SeatVerdicts[] memory seats = new SeatVerdicts[](1);
        seats[0] = SeatVerdicts({verifier: verifier, approveMask: approveMask, abstainMask: abstain, endTag: tag});
        jobManager.recordVerdicts(sid, seats);
    }

    function _seatVerdicts(address verifier, uint256 rejectMask) internal view returns (SeatVerdicts memory) {
        return SeatVerdicts({
            verifier: verifier,
            approveMask: ((uint256(1) << _samples(jobId)) - 1) & ~rejectMask,
            abstainMask: 0,
            endTag: bytes5(0)
        });
    }

    /// @notice `recordVerdicts` tells the round when every seat of the draw has revealed (the round
    ///         then marks every sample covered without reading the seats again): false until the
    ///         last seat's record, true with it.
    function test_recordVerdicts_lastSeat_reportsEverySeatRevealed_succeeds() public {
        SeatVerdicts[] memory one = new SeatVerdicts[](1);
        for (uint256 i; i < verifiers.length; ++i) {
            one[0] = _seatVerdicts(verifiers[i], 0);
            vm.prank(address(round));
            bool allRevealed = jobManager.recordVerdicts(_sid(jobId), one);
            assertEq(allRevealed, i + 1 == verifiers.length, "every seat revealed only with the last");
        }
    }

    /// @notice Several seats in one call: each is recorded as alone, each seat's reject bonds are
    ///         locked from its own free stake (a seat without a reject locks nothing), and the last
    ///         record starts the challenge window.
    function test_recordVerdicts_severalSeats_eachRecordedAndBonded_succeeds() public {
        uint256 samples = _samples(jobId);
        uint256[3] memory masks = [uint256(0), 1, (uint256(1) << samples) - 1];
        uint256[3] memory lockedBefore;
        SeatVerdicts[] memory seats = new SeatVerdicts[](3);
        for (uint256 i; i < 3; ++i) {
            (, lockedBefore[i],,) = stakeManager.stakeOf(verifiers[i], Role.Verifier);
            seats[i] = _seatVerdicts(verifiers[i], masks[i]);
        }
        vm.prank(address(round));
        jobManager.recordVerdicts(_sid(jobId), seats);
        uint256 disputed;
        for (uint256 i; i < 3; ++i) {
            uint256 own = jobManager.sampleMaskOf(jobId, verifiers[i]) & masks[i];
            uint256 rejects;
            for (uint256 t; t < samples; ++t) {
                rejects += (own >> t) & 1;
            }
            (, uint256 locked,,) = stakeManager.stakeOf(verifiers[i], Role.Verifier);
            assertEq(locked, lockedBefore[i] + _revealLock(rejects), "seat's own bonds, the first in its lock");
            (,, bool revealed,,) = jobManager.seatOf(_sid(jobId), verifiers[i]);
            assertTrue(revealed);
            disputed |= own;
        }
        assertEq(jobManager.disputedMaskOf(jobId), disputed);
        assertEq(jobManager.getJob(jobId).challengeDeadline, block.timestamp + params.challengeWindow);
    }

    /// @notice A seat short of free stake for its bonds reverts the whole call: no seat of it is
    ///         recorded (the others can still reveal, and none was marked revealed).
    function test_recordVerdicts_severalSeats_oneShortOfBonds_recordsNone_reverts() public {
        uint256 free = stakeManager.freeStake(verifiers[1], Role.Verifier);
        vm.prank(verifiers[1]);
        stakeManager.requestUnbond(Role.Verifier, free);
        SeatVerdicts[] memory seats = new SeatVerdicts[](2);
        seats[0] = _seatVerdicts(verifiers[0], 0);
        seats[1] = _seatVerdicts(verifiers[1], (uint256(1) << _samples(jobId)) - 1);
        uint256 own = jobManager.sampleMaskOf(jobId, verifiers[1]);
        uint256 rejects;
        for (uint256 t; t < _samples(jobId); ++t) {
            rejects += (own >> t) & 1;
        }
        vm.expectRevert(
            abi.encodeWithSelector(
                IStakeManager.InsufficientFreeStake.selector, verifiers[1], Role.Verifier, 0, _revealLock(rejects)
            )
        );
        vm.prank(address(round));
        jobManager.recordVerdicts(_sid(jobId), seats);
        for (uint256 i; i < 2; ++i) {
            (,, bool revealed,,) = jobManager.seatOf(_sid(jobId), verifiers[i]);
            assertFalse(revealed, "recorded without the other");
        }
    }

    /// @notice A seat named twice in one call is refused as a second record would be.
    function test_recordVerdicts_seatNamedTwice_reverts() public {
        SeatVerdicts[] memory seats = new SeatVerdicts[](2);
        seats[0] = _seatVerdicts(verifiers[0], 0);
        seats[1] = _seatVerdicts(verifiers[0], 1);
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.VerdictsAlreadySubmitted.selector, jobId, verifiers[0])
        );
        vm.prank(address(round));
        jobManager.recordVerdicts(_sid(jobId), seats);
    }

    /// @notice One reject of the seat's own sample: recorded as a reject, the sample disputed, its
    ///         bond the one the seat's lock holds since the draw (nothing more locked, no
    ///         StakeManager call); the JobManager emits no event of its own for the record (the
    ///         round's `VerdictsRevealed` carries the approve mask, docs/SECURITY.md, "Gas cuts").
    function test_recordVerdicts_oneReject_recordsTheRejectAndItsBond_succeeds() public {
        uint256 samples = _samples(jobId);
        uint256 own = jobManager.sampleMaskOf(jobId, verifiers[0]);
        uint256 rejected;
        while ((own >> rejected) & 1 == 0) ++rejected;
        SeatVerdicts[] memory seats = new SeatVerdicts[](1);
        seats[0] = _seatVerdicts(verifiers[0], uint256(1) << rejected);
        (, uint256 lockedBefore,,) = stakeManager.stakeOf(verifiers[0], Role.Verifier);
        vm.recordLogs();
        vm.prank(address(round));
        jobManager.recordVerdicts(_sid(jobId), seats);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        for (uint256 j; j < logs.length; ++j) {
            assertTrue(logs[j].emitter != address(jobManager), "a JobManager event for a plain record");
            assertTrue(logs[j].emitter != address(stakeManager), "a lock for the bond the seat holds");
        }
        (, uint256 locked,,) = stakeManager.stakeOf(verifiers[0], Role.Verifier);
        assertEq(locked, lockedBefore, "the bond is in the seat's lock");
        assertEq(lockedBefore, _seatLock(), "the draw locked the stake and the first bond");
        Verdict[] memory verdicts = jobManager.verdictOf(jobId, verifiers[0]);
        for (uint256 t; t < samples; ++t) {
            if ((own >> t) & 1 == 0) continue;
            assertEq(uint8(verdicts[t]), uint8(t == rejected ? Verdict.Reject : Verdict.Approve));
        }
        assertEq(jobManager.disputedMaskOf(jobId), uint256(1) << rejected);
    }

    function test_recordVerdicts_approveAll_succeeds() public {
        for (uint256 i; i < verifiers.length; ++i) {
            _seal(verifiers[i], 0);
        }
        uint256 samples = _samples(jobId);
        vm.expectEmit(address(round));
        emit IVerificationRound.VerdictsRevealed(
            _sid(jobId), verifiers[0], _ends(jobId, 0), (uint256(1) << samples) - 1
        );
        _open(verifiers[0], 0);
        Verdict[] memory verdicts = jobManager.verdictOf(jobId, verifiers[0]);
        assertEq(verdicts.length, _samples(jobId));
        for (uint256 i; i < _samples(jobId); ++i) {
            assertEq(uint8(verdicts[i]), uint8(Verdict.Approve));
        }
        assertEq(jobManager.disputedMaskOf(jobId), 0);
    }

    function testFuzz_recordVerdicts_rejectsLockBondsFromStake_succeeds(uint256 rejectMask) public {
        rejectMask = bound(rejectMask, 0, (uint256(1) << _samples(jobId)) - 1);
        uint256 rejects;
        for (uint256 i; i < _samples(jobId); ++i) {
            rejects += (rejectMask >> i) & 1;
        }
        uint256 balanceBefore = token.balanceOf(verifiers[1]);
        (, uint256 lockedBefore,,) = stakeManager.stakeOf(verifiers[1], Role.Verifier);
        _submit(jobId, verifiers[0], 0);
        _submit(jobId, verifiers[2], 0);
        _submit(jobId, verifiers[1], rejectMask);
        // The bonds are locked from the seat's verifier stake: no token leaves its wallet and the
        // Escrow books no bond.
        assertEq(token.balanceOf(verifiers[1]), balanceBefore);
        (, uint256 lockedAfter,,) = stakeManager.stakeOf(verifiers[1], Role.Verifier);
        assertEq(lockedAfter, lockedBefore + _revealLock(rejects));
        assertEq(jobManager.disputedMaskOf(jobId), rejectMask);
        Verdict[] memory verdicts = jobManager.verdictOf(jobId, verifiers[1]);
        for (uint256 i; i < _samples(jobId); ++i) {
            assertEq(uint8(verdicts[i]), uint8((rejectMask >> i) & 1 == 1 ? Verdict.Reject : Verdict.Approve));
        }
        (, uint256 bonds,,) = escrow.liabilities();
        assertEq(bonds, 0);
    }

    function test_recordVerdicts_rejectsLockBondsFromStake_succeeds() public {
        testFuzz_recordVerdicts_rejectsLockBondsFromStake_succeeds(5);
    }

    function test_recordVerdicts_freeStakeShortOfBonds_reverts() public {
        // The seat keeps one bond of free stake and rejects three samples: its lock holds the
        // first bond, the other two must come from free stake, so the lock of its bonds reverts,
        // tokens in its wallet notwithstanding.
        uint256 free = stakeManager.freeStake(verifiers[1], Role.Verifier);
        vm.prank(verifiers[1]);
        stakeManager.requestUnbond(Role.Verifier, free - params.challengeBond);
        assertGt(token.balanceOf(verifiers[1]), 2 * params.challengeBond);
        assertGte(_samples(jobId), 3);
        bool[] memory approvals = _approvals(_samples(jobId), 7);
        vm.expectRevert(
            abi.encodeWithSelector(
                IStakeManager.InsufficientFreeStake.selector,
                verifiers[1],
                Role.Verifier,
                params.challengeBond,
                2 * params.challengeBond
            )
        );
        vm.prank(address(round));
        _record(_sid(jobId), verifiers[1], approvals, 0, bytes5(0));
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
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.NotVerificationRound.selector, verifiers[0]));
        vm.prank(verifiers[0]);
        _record(_sid(jobId), verifiers[0], approvals, 0, bytes5(0));
    }

    function test_recordVerdicts_notAssigned_reverts() public {
        bool[] memory approvals = _approvals(_samples(jobId), 0);
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.NotAssignedVerifier.selector, jobId, stranger));
        vm.prank(address(round));
        _record(_sid(jobId), stranger, approvals, 0, bytes5(0));
    }

    function test_recordVerdicts_twice_reverts() public {
        bool[] memory approvals = _approvals(_samples(jobId), 0);
        vm.prank(address(round));
        _record(_sid(jobId), verifiers[0], approvals, 0, bytes5(0));
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.VerdictsAlreadySubmitted.selector, jobId, verifiers[0])
        );
        vm.prank(address(round));
        _record(_sid(jobId), verifiers[0], approvals, 0, bytes5(0));
    }

    /// @notice A verdict beyond the sample (a mask bit at or above the sample count) is refused.
    function test_recordVerdicts_wrongCount_reverts() public {
        uint256 samples = _samples(jobId);
        SeatVerdicts[] memory seats = new SeatVerdicts[](1);
        seats[0] = SeatVerdicts({
            verifier: verifiers[0], approveMask: (uint256(1) << (samples + 1)) - 1, abstainMask: 0, endTag: bytes5(0)
        });
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.VerdictCountMismatch.selector, jobId, samples, samples + 1)
        );
        vm.prank(address(round));
        jobManager.recordVerdicts(_sid(jobId), seats);
        seats[0].approveMask = 0;
        seats[0].abstainMask = uint256(1) << samples;
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.VerdictCountMismatch.selector, jobId, samples, samples + 1)
        );
        vm.prank(address(round));
        jobManager.recordVerdicts(_sid(jobId), seats);
    }

    function test_recordVerdicts_notVerifying_reverts() public {
        uint256 claimedJob = _postJob();
        vm.prank(solver);
        jobManager.claimJob(claimedJob);
        bool[] memory approvals = _approvals(_samples(jobId), 0);
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.UnexpectedJobStatus.selector, claimedJob, JobStatus.Claimed)
        );
        vm.prank(address(round));
        _record(_sid(claimedJob), verifiers[0], approvals, 0, bytes5(0));
    }

    function test_recordVerdicts_unknownSubmission_reverts() public {
        SubmissionId unknown = LibSubmission.id(jobId, stranger);
        bool[] memory approvals = _approvals(_samples(jobId), 0);
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.SubmissionNotActive.selector, unknown));
        vm.prank(address(round));
        _record(unknown, verifiers[0], approvals, 0, bytes5(0));
    }
}
