// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {SignedReveals_Init} from "./SignedReveals.t.sol";
import {Deployers} from "./utils/Deployers.sol";
// Interfaces
import {IVerificationRound} from "../src/interfaces/IVerificationRound.sol";
// Types
import {SubmissionId} from "../src/types/SubmissionId.sol";
import {JobStatus, Verdict} from "../src/types/JobTypes.sol";
import {Claims} from "../src/types/RoundTypes.sol";
import {Role} from "../src/types/Role.sol";

/// @notice Seals and reveals submitted together (`commitVerdictsFor`, `revealVerdictsFor`;
///         docs/SECURITY.md P-37): each seat's EIP-712 signature or salt is its consent, a seat that
///         acted itself is skipped, and the aggregator can neither change a verdict nor censor one.
contract VerdictBatches_Test is SignedReveals_Init {
    ////// Helpers //////

    function _commitmentOf(address verifier, uint256 rejectMask) internal view returns (bytes32) {
        return _verdictCommitment(jobId, verifier, _ends(jobId, rejectMask), _verdictSalt(jobId, verifier));
    }

    /// @notice Every seat's seal (verdicts `rejectMask`), each signed by its own key.
    function _seals(uint256 rejectMask)
        internal
        view
        returns (bytes32[] memory commitments, bytes[] memory signatures)
    {
        commitments = new bytes32[](verifiers.length);
        signatures = new bytes[](verifiers.length);
        for (uint256 i; i < verifiers.length; ++i) {
            commitments[i] = _commitmentOf(verifiers[i], rejectMask);
            signatures[i] = _signature(_keys[verifiers[i]], _sid(jobId), commitments[i]);
        }
    }

    /// @notice A reject mask of one sample: the lowest of `verifier`'s own draw.
    function _firstOwnSample(address verifier) internal view returns (uint256 rejectMask) {
        (, uint64 own,,,) = jobManager.seatOf(_sid(jobId), verifier);
        rejectMask = uint256(own) & (~uint256(own) + 1);
    }

    /// @notice The first two samples of `verifier`'s own draw (bit i = sample i): a reveal rejecting
    ///         both locks one bond (the first is in the seat's lock since its draw).
    function _firstTwoOwnSamples(address verifier) internal view returns (uint256 rejectMask) {
        (, uint64 own,,,) = jobManager.seatOf(_sid(jobId), verifier);
        uint256 first = uint256(own) & (~uint256(own) + 1);
        uint256 rest = uint256(own) & ~first;
        require(rest != 0, "a seat of two samples");
        rejectMask = first | (rest & (~rest + 1));
    }

    function _commitAll(uint256 rejectMask) internal {
        (bytes32[] memory commitments, bytes[] memory signatures) = _seals(rejectMask);
        vm.prank(stranger);
        round.commitVerdictsFor(_sid(jobId), verifiers, commitments, signatures);
    }

    function _batchReveals(uint256 rejectMask) internal view returns (bytes32[][] memory ends, bytes32[] memory salts) {
        ends = new bytes32[][](verifiers.length);
        salts = new bytes32[](verifiers.length);
        for (uint256 i; i < verifiers.length; ++i) {
            ends[i] = _ends(jobId, rejectMask);
            salts[i] = _verdictSalt(jobId, verifiers[i]);
        }
    }

    function _revealAll(uint256 rejectMask) internal {
        (bytes32[][] memory ends, bytes32[] memory salts) = _batchReveals(rejectMask);
        vm.prank(stranger);
        round.revealVerdictsFor(_sid(jobId), verifiers, ends, salts, _claimsArg(_sid(jobId)));
    }

    ////// Seals //////

    function test_commitVerdictsFor_storesEverySeal_succeeds() public {
        (bytes32[] memory commitments, bytes[] memory signatures) = _seals(0);
        for (uint256 i; i < verifiers.length; ++i) {
            vm.expectEmit(address(round));
            emit IVerificationRound.VerdictsCommitted(_sid(jobId), verifiers[i], commitments[i]);
        }
        vm.prank(stranger);
        round.commitVerdictsFor(_sid(jobId), verifiers, commitments, signatures);
        for (uint256 i; i < verifiers.length; ++i) {
            (bytes32 stored,) = round.verdictCommitmentOf(_sid(jobId), verifiers[i]);
            assertEq(stored, commitments[i]);
        }
        (,, uint32 committed,) = round.roundOf(_sid(jobId));
        assertEq(uint256(committed), verifiers.length);
    }

    /// @notice A seat that sealed itself first (other verdicts than the batch's) keeps its own seal
    ///         and cannot make the batch revert.
    function test_commitVerdictsFor_seatSealedFirst_isSkipped_succeeds() public {
        bytes32 own = bytes32(uint256(7));
        vm.prank(verifiers[0]);
        round.commitVerdicts(_sid(jobId), own);
        _commitAll(0);
        (bytes32 stored,) = round.verdictCommitmentOf(_sid(jobId), verifiers[0]);
        assertEq(stored, own);
        (,, uint32 committed,) = round.roundOf(_sid(jobId));
        assertEq(uint256(committed), verifiers.length);
    }

    /// @notice Attack: the aggregator changes a seat's verdict (another commitment under the seat's
    ///         signature), or signs for the seat itself.
    function test_commitVerdictsFor_alteredCommitment_reverts() public {
        (bytes32[] memory commitments, bytes[] memory signatures) = _seals(0);
        commitments[1] = _commitmentOf(verifiers[1], 1);
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.InvalidSealSignature.selector, _sid(jobId), verifiers[1])
        );
        round.commitVerdictsFor(_sid(jobId), verifiers, commitments, signatures);

        (commitments, signatures) = _seals(0);
        signatures[2] = _signature(uint256(keccak256("aggregator")), _sid(jobId), commitments[2]);
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.InvalidSealSignature.selector, _sid(jobId), verifiers[2])
        );
        round.commitVerdictsFor(_sid(jobId), verifiers, commitments, signatures);
    }

    /// @notice Attack: a seal signed for another submission, another chain or a malformed signature
    ///         is not accepted here.
    function test_commitVerdictsFor_replayedOrMalformedSignature_reverts() public {
        (bytes32[] memory commitments, bytes[] memory signatures) = _seals(0);
        signatures[0] = _signature(_keys[verifiers[0]], SubmissionId.wrap(keccak256("other")), commitments[0]);
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.InvalidSealSignature.selector, _sid(jobId), verifiers[0])
        );
        round.commitVerdictsFor(_sid(jobId), verifiers, commitments, signatures);

        (commitments, signatures) = _seals(0);
        uint256 chainId = block.chainid;
        vm.chainId(chainId + 1);
        bytes memory otherChain = _signature(_keys[verifiers[0]], _sid(jobId), commitments[0]);
        vm.chainId(chainId);
        signatures[0] = otherChain;
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.InvalidSealSignature.selector, _sid(jobId), verifiers[0])
        );
        round.commitVerdictsFor(_sid(jobId), verifiers, commitments, signatures);

        (commitments, signatures) = _seals(0);
        signatures[0] = hex"1234";
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.InvalidSealSignature.selector, _sid(jobId), verifiers[0])
        );
        round.commitVerdictsFor(_sid(jobId), verifiers, commitments, signatures);
    }

    /// @notice A keyed account that holds no seat signs a valid seal: refused like its own call.
    function test_commitVerdictsFor_notAssigned_reverts() public {
        (address outsider, uint256 key) = _keyedActor("keyed outsider");
        address[] memory seats = new address[](1);
        seats[0] = outsider;
        bytes32[] memory commitments = new bytes32[](1);
        commitments[0] = bytes32(uint256(9));
        bytes[] memory signatures = new bytes[](1);
        signatures[0] = _signature(key, _sid(jobId), commitments[0]);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.NotAssignedVerifier.selector, _sid(jobId), outsider));
        round.commitVerdictsFor(_sid(jobId), seats, commitments, signatures);
    }

    function test_commitVerdictsFor_lengthMismatch_reverts() public {
        (bytes32[] memory commitments, bytes[] memory signatures) = _seals(0);
        bytes[] memory short = new bytes[](1);
        short[0] = signatures[0];
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.LengthMismatch.selector, _sid(jobId), verifiers.length, 1)
        );
        round.commitVerdictsFor(_sid(jobId), verifiers, commitments, short);
    }

    function test_commitVerdictsFor_afterDeadline_reverts() public {
        (bytes32[] memory commitments, bytes[] memory signatures) = _seals(0);
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
        round.commitVerdictsFor(_sid(jobId), verifiers, commitments, signatures);
    }

    ////// Reveals //////

    function test_revealVerdictsFor_recordsEverySeat_succeeds() public {
        _commitAll(0);
        _revealAll(0);
        for (uint256 i; i < verifiers.length; ++i) {
            (, bool revealed) = round.verdictCommitmentOf(_sid(jobId), verifiers[i]);
            assertTrue(revealed);
            assertEq(uint8(jobManager.verdictOf(jobId, verifiers[i])[0]), uint8(Verdict.Approve));
        }
    }

    /// @notice A rejecting seat's bonds come from that seat's stake, never from whoever sent the
    ///         batch: no token moves; the first is in the seat's lock since its draw, the seat's
    ///         locked verifier stake grows by the second.
    function test_revealVerdictsFor_rejectBondFromTheSeat_succeeds() public {
        uint256 rejects = _firstTwoOwnSamples(verifiers[0]);
        _commitAll(rejects);
        uint256 callerBefore = token.balanceOf(stranger);
        uint256 seatBefore = token.balanceOf(verifiers[0]);
        (, uint256 lockedBefore,,) = stakeManager.stakeOf(verifiers[0], Role.Verifier);
        _revealAll(rejects);
        assertEq(token.balanceOf(stranger), callerBefore);
        assertEq(token.balanceOf(verifiers[0]), seatBefore);
        (, uint256 lockedAfter,,) = stakeManager.stakeOf(verifiers[0], Role.Verifier);
        assertEq(lockedAfter - lockedBefore, params.challengeBond);
        for (uint256 t; rejects >> t != 0; ++t) {
            if ((rejects >> t) & 1 == 1) {
                assertEq(uint8(jobManager.verdictOf(jobId, verifiers[0])[t]), uint8(Verdict.Reject));
            }
        }
    }

    /// @notice Attack: a rejecting seat hands its reveal to the aggregator, then unbonds its free
    ///         verifier stake before the batch is mined, to make the batch revert on its bond and the
    ///         sender pay for nothing. The batch records the other seats and skips this one, which
    ///         keeps its seal and may still reveal itself, bond covered.
    function test_revealVerdictsFor_seatCannotCoverItsBond_isSkipped_succeeds() public {
        address griefer = verifiers[0];
        // Two rejects: the second bond is the one its free stake must cover.
        uint256 reject = _firstTwoOwnSamples(griefer);
        _commitAll(reject);
        uint256 free = stakeManager.freeStake(griefer, Role.Verifier);
        vm.prank(griefer);
        stakeManager.requestUnbond(Role.Verifier, free - params.challengeBond + 1);
        uint256 senderBefore = token.balanceOf(stranger);

        vm.expectEmit(address(round));
        emit IVerificationRound.RevealSkipped(_sid(jobId), griefer, params.challengeBond);
        _revealAll(reject);

        (, bool revealed) = round.verdictCommitmentOf(_sid(jobId), griefer);
        assertFalse(revealed, "the uncovered seat is skipped");
        for (uint256 i = 1; i < verifiers.length; ++i) {
            (, revealed) = round.verdictCommitmentOf(_sid(jobId), verifiers[i]);
            assertTrue(revealed, "every covered seat is recorded");
        }
        assertEq(token.balanceOf(stranger), senderBefore, "the sender pays no token");

        // The seat covers its bond again (stakes more) and reveals itself, in the window.
        vm.startPrank(griefer);
        token.approve(address(stakeManager), params.challengeBond);
        stakeManager.stake(Role.Verifier, params.challengeBond);
        (, uint256 lockedBefore,,) = stakeManager.stakeOf(griefer, Role.Verifier);
        round.revealVerdicts(_sid(jobId), _ends(jobId, reject), _verdictSalt(jobId, griefer), _claimsArg(_sid(jobId)));
        vm.stopPrank();
        (, uint256 lockedAfter,,) = stakeManager.stakeOf(griefer, Role.Verifier);
        assertEq(lockedAfter - lockedBefore, params.challengeBond);
    }

    /// @notice A seat's wallet does not matter any more: one that moved every token away after its
    ///         hand-off is still recorded, its bond locked from its free verifier stake.
    function test_revealVerdictsFor_seatWithEmptyWallet_isRecorded_succeeds() public {
        address seat = verifiers[0];
        uint256 reject = _firstOwnSample(seat);
        _commitAll(reject);
        uint256 balance = token.balanceOf(seat);
        vm.prank(seat);
        token.transfer(stranger, balance);
        uint256 senderBefore = token.balanceOf(stranger);
        _revealAll(reject);
        (, bool revealed) = round.verdictCommitmentOf(_sid(jobId), seat);
        assertTrue(revealed);
        assertEq(token.balanceOf(seat), 0);
        assertEq(token.balanceOf(stranger), senderBefore);
    }

    function test_revealVerdictsFor_seatRevealedFirst_isSkipped_succeeds() public {
        _commitAll(0);
        bytes32[] memory ends = _ends(jobId, 0);
        vm.prank(verifiers[1]);
        round.revealVerdicts(_sid(jobId), ends, _verdictSalt(jobId, verifiers[1]), _claimsArg(_sid(jobId)));
        _revealAll(0);
        for (uint256 i; i < verifiers.length; ++i) {
            (, bool revealed) = round.verdictCommitmentOf(_sid(jobId), verifiers[i]);
            assertTrue(revealed);
        }
    }

    /// @notice Attack: the aggregator opens a seal to other verdicts, or with forged claims.
    function test_revealVerdictsFor_otherVerdictsOrClaims_reverts() public {
        _commitAll(0);
        (bytes32[][] memory ends, bytes32[] memory salts) = _batchReveals(0);
        ends[2] = _ends(jobId, 1);
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.VerdictCommitmentMismatch.selector, _sid(jobId), verifiers[2])
        );
        round.revealVerdictsFor(_sid(jobId), verifiers, ends, salts, _claimsArg(_sid(jobId)));

        (ends, salts) = _batchReveals(0);
        salts[0] = keccak256("guessed salt");
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.VerdictCommitmentMismatch.selector, _sid(jobId), verifiers[0])
        );
        round.revealVerdictsFor(_sid(jobId), verifiers, ends, salts, _claimsArg(_sid(jobId)));

        (ends, salts) = _batchReveals(0);
        (bytes32[] memory starts, bytes32[] memory claimed) = _claimsOf(_sid(jobId));
        claimed[0] = keccak256("forged");
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.ClaimsMismatch.selector, _sid(jobId)));
        round.revealVerdictsFor(
            _sid(jobId),
            verifiers,
            ends,
            salts,
            Claims({startHashes: starts, endHashes: claimed, secretCommitment: _secretCommitmentOf(_sid(jobId))})
        );
    }

    /// @notice Before every seat sealed and before the verdict deadline nobody can open a seal, in a
    ///         batch either (a copier would read it).
    function test_revealVerdictsFor_beforeWindowOpens_reverts() public {
        bytes32 commitment = _commitmentOf(verifiers[0], 0);
        vm.prank(verifiers[0]);
        round.commitVerdicts(_sid(jobId), commitment);
        address[] memory first = new address[](1);
        first[0] = verifiers[0];
        bytes32[][] memory ends = new bytes32[][](1);
        ends[0] = _ends(jobId, 0);
        bytes32[] memory salts = new bytes32[](1);
        salts[0] = _verdictSalt(jobId, verifiers[0]);
        uint64 deadline = _job(jobId).verdictDeadline;
        vm.expectRevert(
            abi.encodeWithSelector(
                IVerificationRound.OutsideWindow.selector,
                _sid(jobId),
                deadline + 1,
                deadline + params.revealWindow,
                uint64(block.timestamp)
            )
        );
        round.revealVerdictsFor(_sid(jobId), first, ends, salts, _claimsArg(_sid(jobId)));
    }

    ////// Whole job //////

    /// @notice Attack: the aggregator leaves a seat out of both batches. The seat seals and reveals
    ///         itself, the job finalizes, and every seat's and the solver's holdings end as on the
    ///         per-seat path (the fee and the reward paid, no stake lost).
    function test_attack_aggregatorOmitsASeat_seatActsItself_everyonePaid() public {
        uint256[] memory before = new uint256[](verifiers.length);
        for (uint256 i; i < verifiers.length; ++i) {
            before[i] = _holdings(verifiers[i]);
        }
        uint256 solverBefore = _holdings(solver);
        address omitted = verifiers[2];
        address[] memory two = new address[](2);
        two[0] = verifiers[0];
        two[1] = verifiers[1];
        (bytes32[] memory commitments, bytes[] memory signatures) = _seals(0);
        bytes32[] memory c2 = new bytes32[](2);
        bytes[] memory s2 = new bytes[](2);
        for (uint256 i; i < 2; ++i) {
            c2[i] = commitments[i];
            s2[i] = signatures[i];
        }
        round.commitVerdictsFor(_sid(jobId), two, c2, s2);
        vm.prank(omitted);
        round.commitVerdicts(_sid(jobId), commitments[2]);
        (bytes32[][] memory ends, bytes32[] memory salts) = _batchReveals(0);
        bytes32[][] memory e2 = new bytes32[][](2);
        bytes32[] memory salt2 = new bytes32[](2);
        for (uint256 i; i < 2; ++i) {
            e2[i] = ends[i];
            salt2[i] = salts[i];
        }
        round.revealVerdictsFor(_sid(jobId), two, e2, salt2, _claimsArg(_sid(jobId)));
        vm.prank(omitted);
        round.revealVerdicts(_sid(jobId), ends[2], salts[2], _claimsArg(_sid(jobId)));
        _passChallengeWindow(jobId);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        for (uint256 i; i < verifiers.length; ++i) {
            assertGt(_holdings(verifiers[i]), before[i]);
        }
        assertGt(_holdings(solver), solverBefore);
    }
}

/// @notice The secret revealed and the job finalized in one call (`revealSecretAndFinalize`).
contract RevealSecretAndFinalize_Test is Deployers {
    function test_revealSecretAndFinalize_paysLikeTheTwoCalls_succeeds() public {
        uint256 jobId = _verifyingJob();
        address[] memory verifiers = _assigned(jobId);
        for (uint256 i; i < verifiers.length; ++i) {
            _submit(jobId, verifiers[i], 0);
        }
        uint256 solverBefore = _holdings(solver);
        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        _revealSecretAndFinalize(jobId);
        (, bool revealed,,) = round.roundOf(_sid(jobId));
        assertTrue(revealed);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        assertEq(_holdings(solver) - solverBefore, _job(jobId).reward);
    }

    /// @notice Before the challenge deadline neither the reveal nor the finalize happens.
    function test_revealSecretAndFinalize_challengeWindowOpen_reverts() public {
        uint256 jobId = _verifyingJob();
        address[] memory verifiers = _assigned(jobId);
        for (uint256 i; i < verifiers.length; ++i) {
            _submit(jobId, verifiers[i], 0);
        }
        bytes32[] memory proof = _claimsProofOf(jobId);
        bytes32 secret = _secret(jobId);
        Claims memory claims = _claimsArg(_sid(jobId));
        uint64 challengeDeadline = _job(jobId).challengeDeadline;
        vm.expectRevert(
            abi.encodeWithSelector(
                IVerificationRound.OutsideWindow.selector,
                _sid(jobId),
                challengeDeadline + 1,
                challengeDeadline + params.revealWindow,
                uint64(block.timestamp)
            )
        );
        round.revealSecretAndFinalize(_sid(jobId), secret, bytes32(0), proof, claims);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Verifying));
    }

    /// @notice A wrong secret reveals nothing and finalizes nothing.
    function test_revealSecretAndFinalize_wrongSecret_reverts() public {
        uint256 jobId = _verifyingJob();
        address[] memory verifiers = _assigned(jobId);
        for (uint256 i; i < verifiers.length; ++i) {
            _submit(jobId, verifiers[i], 0);
        }
        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        bytes32[] memory proof = _claimsProofOf(jobId);
        Claims memory claims = _claimsArg(_sid(jobId));
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.SecretCommitmentMismatch.selector, _sid(jobId)));
        round.revealSecretAndFinalize(_sid(jobId), keccak256("guess"), bytes32(0), proof, claims);
        (, bool revealed,,) = round.roundOf(_sid(jobId));
        assertFalse(revealed);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Verifying));
    }
}
