// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Deployers} from "./utils/Deployers.sol";
import {Vm} from "@prb/test/Vm.sol";
// Interfaces
import {IJobManager} from "../src/interfaces/IJobManager.sol";
import {IJobManagerErrors} from "../src/interfaces/IJobManagerErrors.sol";
import {IStakeManager} from "../src/interfaces/IStakeManager.sol";
import {IVerificationRound} from "../src/interfaces/IVerificationRound.sol";
// Types
import {Bucket} from "../src/types/EscrowTypes.sol";
import {JobStatus, Verdict} from "../src/types/JobTypes.sol";
import {Role} from "../src/types/Role.sol";
import {Claims, SignedReveal} from "../src/types/RoundTypes.sol";
import {SubmissionId} from "../src/types/SubmissionId.sol";

/// @notice Keyed verifiers on a Verifying job (claims posted), and the helpers that build every
///         seat's signed opening for `revealVerdictsSigned` (docs/SECURITY.md P-40).
abstract contract SignedReveals_Init is Deployers {
    mapping(address account => uint256 key) internal _keys;
    uint256 internal jobId;
    address[] internal verifiers;

    /// @notice Verifiers with keys, so that they can sign seals.
    function _verifierActor(uint256 i) internal override returns (address account) {
        uint256 key;
        (account, key) = _keyedActor(string.concat("keyed verifier", vm.toString(i)));
        _keys[account] = key;
    }

    function setUp() public virtual override {
        super.setUp();
        _setUpJob();
        verifiers = _assigned(jobId);
    }

    /// @notice The job of the suite: the default Verifying job (every seat holds every sample).
    function _setUpJob() internal virtual {
        jobId = _verifyingJob();
    }

    ////// Helpers //////

    /// @notice `key`'s signature of `sealDigest(sid, commitment)`.
    function _signature(uint256 key, SubmissionId sid, bytes32 commitment) internal view returns (bytes memory) {
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(key, round.sealDigest(sid, commitment));
        return abi.encodePacked(r, s, v);
    }

    /// @notice `verifier`'s own signature of its seal `commitment` on the suite's job.
    function _signed(address verifier, bytes32 commitment) internal view returns (bytes memory) {
        return _signature(_keys[verifier], _sid(jobId), commitment);
    }

    /// @notice The seal of `ends` by `verifier` with its usual salt.
    function _commitmentOf(address verifier, bytes32[] memory ends) internal view returns (bytes32) {
        return _verdictCommitment(jobId, verifier, ends, _verdictSalt(jobId, verifier));
    }

    /// @notice `verifier`'s opening of its seal of `ends`, with its signature of that seal.
    function _entry(address verifier, bytes32[] memory ends) internal view returns (SignedReveal memory) {
        bytes32 salt = _verdictSalt(jobId, verifier);
        return SignedReveal({
            verifier: verifier,
            ends: ends,
            salt: salt,
            signature: _signed(verifier, _verdictCommitment(jobId, verifier, ends, salt))
        });
    }

    /// @notice Every seat's signed opening, each with the ends of `rejectMask`.
    function _reveals(uint256 rejectMask) internal view returns (SignedReveal[] memory reveals) {
        reveals = new SignedReveal[](verifiers.length);
        for (uint256 i; i < verifiers.length; ++i) {
            reveals[i] = _entry(verifiers[i], _ends(jobId, rejectMask));
        }
    }

    /// @notice A stranger (the aggregator) sends `reveals` in one `revealVerdictsSigned`.
    function _revealSigned(SignedReveal[] memory reveals) internal {
        Claims memory claims = _claimsArg(_sid(jobId));
        vm.prank(stranger);
        round.revealVerdictsSigned(_sid(jobId), reveals, claims);
    }

    /// @notice `_holdings` of every seat.
    function _seatHoldings() internal view returns (uint256[] memory holdings) {
        holdings = new uint256[](verifiers.length);
        for (uint256 i; i < verifiers.length; ++i) {
            holdings[i] = _holdings(verifiers[i]);
        }
    }

    /// @notice The suite's job carrying a forced error: redeploys with a forced-error rate of one
    ///         in two, funds the jackpot and takes such a job to Verifying.
    /// @return forcedSample The job's forced sample.
    function _setUpForcedJob() internal returns (uint256 forcedSample) {
        _redeployWithRate(5000);
        vm.prank(stranger);
        escrow.fundJackpot(100e18);
        jobId = _forcedVerifyingJob();
        (, forcedSample) = round.drawForcedError(_sid(jobId), _secret(jobId));
    }

    /// @notice Passes the challenge deadline and reveals the secret with the finalize.
    function _finalizeOneShot() internal {
        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        _revealSecretAndFinalize(jobId);
    }
}

/// @notice Every seat's seal and reveal in one transaction, no seal stored (`revealVerdictsSigned`).
contract SignedReveals_RevealVerdictsSigned_Test is SignedReveals_Init {
    ////// Happy path //////

    /// @notice V = 3, all approve: each seal is announced, every seat is recorded and counted as
    ///         sealed, nothing of the seals is stored, and the job pays as on the two-call path.
    function test_revealVerdictsSigned_recordsEverySeat_succeeds() public {
        SignedReveal[] memory reveals = _reveals(0);
        uint256 senderBefore = _holdings(stranger);
        for (uint256 i; i < verifiers.length; ++i) {
            vm.expectEmit(address(round));
            emit IVerificationRound.VerdictsRevealed(
                _sid(jobId), verifiers[i], reveals[i].ends, (uint256(1) << reveals[i].ends.length) - 1
            );
        }
        vm.expectEmit(address(jobManager));
        emit IJobManager.ChallengeDeadlineSet(jobId, uint64(block.timestamp) + params.challengeWindow);
        vm.recordLogs();
        _revealSigned(reveals);
        // No seal event: each seal is the hash of the opening in the call (docs/SECURITY.md, "Gas
        // cuts"), which its VerdictsRevealed and the calldata carry.
        Vm.Log[] memory logs = vm.getRecordedLogs();
        for (uint256 j; j < logs.length; ++j) {
            assertTrue(logs[j].topics[0] != IVerificationRound.VerdictsCommitted.selector, "a seal event");
        }

        (,, uint32 committed,) = round.roundOf(_sid(jobId));
        assertEq(uint256(committed), verifiers.length, "every seat counts as sealed");
        for (uint256 i; i < verifiers.length; ++i) {
            (bytes32 stored, bool revealed) = round.verdictCommitmentOf(_sid(jobId), verifiers[i]);
            assertEq(stored, bytes32(0), "no seal stored");
            assertTrue(revealed);
            assertEq(uint8(jobManager.verdictOf(jobId, verifiers[i])[0]), uint8(Verdict.Approve));
        }
        assertEq(_holdings(stranger), senderBefore, "the sender pays no token");

        uint256[] memory before = _seatHoldings();
        uint256 solverBefore = _holdings(solver);
        _finalizeOneShot();
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        for (uint256 i; i < verifiers.length; ++i) {
            assertEq(_holdings(verifiers[i]) - before[i], params.verifierFee, "each seat earns its fee");
            assertEq(_locked(verifiers[i], Role.Verifier), 0);
        }
        assertEq(_holdings(solver) - solverBefore, REWARD);
        _assertEscrowSolvent();
    }

    /// @notice A rejecting seat's bonds come from that seat's stake, never from the sender: no
    ///         token moves and the Escrow books no bond; the first is in the seat's lock since its
    ///         draw, the second is locked from its free stake.
    function test_revealVerdictsSigned_rejectBondFromTheSeat_succeeds() public {
        SignedReveal[] memory reveals = _reveals(0);
        reveals[0] = _entry(verifiers[0], _ends(jobId, 3));
        uint256 senderBefore = token.balanceOf(stranger);
        uint256 seatBefore = token.balanceOf(verifiers[0]);
        uint256 lockedBefore = _locked(verifiers[0], Role.Verifier);
        _revealSigned(reveals);
        assertEq(token.balanceOf(stranger), senderBefore);
        assertEq(token.balanceOf(verifiers[0]), seatBefore);
        assertEq(_locked(verifiers[0], Role.Verifier) - lockedBefore, params.challengeBond);
        assertEq(uint8(jobManager.verdictOf(jobId, verifiers[0])[0]), uint8(Verdict.Reject));
        assertEq(uint8(jobManager.verdictOf(jobId, verifiers[0])[1]), uint8(Verdict.Reject));
        assertEq(escrow.bucketOf(Bucket.Bonds), 0);
    }

    /// @notice An approving seat's entry may carry no ends (docs/SECURITY.md, "Gas cuts"): the
    ///         round opens the claimed ends for it, checks the seat's signature over them, records
    ///         every approval and logs no ends either, with an approve bit per sample.
    function test_revealVerdictsSigned_approverWithoutEnds_opensTheClaimedEnds_succeeds() public {
        SignedReveal[] memory reveals = _reveals(0);
        bytes32[] memory claimed = _claimsArg(_sid(jobId)).endHashes;
        reveals[1].ends = new bytes32[](0);
        vm.expectEmit(address(round));
        emit IVerificationRound.VerdictsRevealed(
            _sid(jobId), verifiers[1], new bytes32[](0), (uint256(1) << claimed.length) - 1
        );
        _revealSigned(reveals);
        Verdict[] memory verdicts = jobManager.verdictOf(jobId, verifiers[1]);
        assertEq(verdicts.length, claimed.length);
        for (uint256 j; j < verdicts.length; ++j) {
            assertEq(uint8(verdicts[j]), uint8(Verdict.Approve));
        }
    }

    /// @notice Attack: the aggregator drops a rejecting seat's ends, to turn its reject into an
    ///         approval of the claims: the seat signed other ends, so its signature does not check
    ///         over the claimed ones and nothing is recorded.
    function test_revealVerdictsSigned_rejecterWithoutEnds_reverts() public {
        SignedReveal[] memory reveals = _reveals(0);
        reveals[0] = _entry(verifiers[0], _ends(jobId, 1));
        reveals[0].ends = new bytes32[](0);
        Claims memory claims = _claimsArg(_sid(jobId));
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.InvalidSealSignature.selector, _sid(jobId), verifiers[0])
        );
        round.revealVerdictsSigned(_sid(jobId), reveals, claims);
        (,, bool revealed,,) = jobManager.seatOf(_sid(jobId), verifiers[0]);
        assertFalse(revealed);
    }

    /// @notice Attack: the aggregator hands back the posted claims with another secret's
    ///         commitment (to let the solver reveal a secret chosen after the verdicts): refused,
    ///         and no seat is recorded.
    function test_revealVerdictsSigned_claimsWithAnotherSecretCommitment_reverts() public {
        SignedReveal[] memory reveals = _reveals(0);
        Claims memory claims = _claimsArg(_sid(jobId));
        claims.secretCommitment = keccak256("another secret commitment");
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.ClaimsMismatch.selector, _sid(jobId)));
        vm.prank(stranger);
        round.revealVerdictsSigned(_sid(jobId), reveals, claims);
        (, bool revealed) = round.verdictCommitmentOf(_sid(jobId), verifiers[0]);
        assertFalse(revealed, "nothing recorded");
    }

    ////// One entry per seat //////

    /// @notice Attack: the aggregator leaves a seat out (it could then seal after reading the
    ///         others' ends).
    function test_revealVerdictsSigned_seatMissing_reverts() public {
        SignedReveal[] memory reveals = _reveals(0);
        SignedReveal[] memory two = new SignedReveal[](2);
        (two[0], two[1]) = (reveals[0], reveals[2]);
        Claims memory claims = _claimsArg(_sid(jobId));
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.LengthMismatch.selector, _sid(jobId), verifiers.length, 2)
        );
        round.revealVerdictsSigned(_sid(jobId), two, claims);
    }

    function test_revealVerdictsSigned_empty_reverts() public {
        Claims memory claims = _claimsArg(_sid(jobId));
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.LengthMismatch.selector, _sid(jobId), verifiers.length, 0)
        );
        round.revealVerdictsSigned(_sid(jobId), new SignedReveal[](0), claims);
    }

    /// @notice Attack: a seat named twice in place of another fills the count without it.
    function test_revealVerdictsSigned_duplicateSeat_reverts() public {
        SignedReveal[] memory reveals = _reveals(0);
        reveals[2] = reveals[0];
        Claims memory claims = _claimsArg(_sid(jobId));
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.VerdictsAlreadySubmitted.selector, jobId, verifiers[0])
        );
        round.revealVerdictsSigned(_sid(jobId), reveals, claims);
        (, bool revealed) = round.verdictCommitmentOf(_sid(jobId), verifiers[0]);
        assertFalse(revealed, "nothing recorded");
    }

    /// @notice A keyed account that holds no seat signs a valid seal in place of a seat.
    function test_revealVerdictsSigned_notASeat_reverts() public {
        (address outsider, uint256 key) = _keyedActor("keyed outsider");
        SignedReveal[] memory reveals = _reveals(0);
        bytes32[] memory ends = _ends(jobId, 0);
        bytes32 salt = _verdictSalt(jobId, outsider);
        reveals[2] = SignedReveal({
            verifier: outsider,
            ends: ends,
            salt: salt,
            signature: _signature(key, _sid(jobId), _verdictCommitment(jobId, outsider, ends, salt))
        });
        Claims memory claims = _claimsArg(_sid(jobId));
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.NotAssignedVerifier.selector, _sid(jobId), outsider));
        round.revealVerdictsSigned(_sid(jobId), reveals, claims);
    }

    ////// Signatures //////

    /// @notice Attack: the aggregator signs for a seat, or opens a seat's signed seal to other ends.
    function test_revealVerdictsSigned_wrongSignature_reverts() public {
        SignedReveal[] memory reveals = _reveals(0);
        reveals[1].signature =
            _signature(uint256(keccak256("aggregator")), _sid(jobId), _commitmentOf(verifiers[1], reveals[1].ends));
        Claims memory claims = _claimsArg(_sid(jobId));
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.InvalidSealSignature.selector, _sid(jobId), verifiers[1])
        );
        round.revealVerdictsSigned(_sid(jobId), reveals, claims);

        reveals = _reveals(0);
        reveals[2].ends = _ends(jobId, 1);
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.InvalidSealSignature.selector, _sid(jobId), verifiers[2])
        );
        round.revealVerdictsSigned(_sid(jobId), reveals, claims);

        reveals = _reveals(0);
        reveals[0].signature = hex"1234";
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.InvalidSealSignature.selector, _sid(jobId), verifiers[0])
        );
        round.revealVerdictsSigned(_sid(jobId), reveals, claims);
    }

    /// @notice Attack: a seat's signature of the same seal for another submission is replayed here.
    function test_revealVerdictsSigned_signatureOfAnotherSubmission_reverts() public {
        SignedReveal[] memory reveals = _reveals(0);
        reveals[0].signature = _signature(
            _keys[verifiers[0]], SubmissionId.wrap(keccak256("other")), _commitmentOf(verifiers[0], reveals[0].ends)
        );
        Claims memory claims = _claimsArg(_sid(jobId));
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.InvalidSealSignature.selector, _sid(jobId), verifiers[0])
        );
        round.revealVerdictsSigned(_sid(jobId), reveals, claims);
    }

    ////// Shape, windows, claims //////

    /// @notice Ends not one per sample, even under the seat's valid signature of them.
    function test_revealVerdictsSigned_endsOfWrongLength_reverts() public {
        SignedReveal[] memory reveals = _reveals(0);
        uint256 samples = reveals[1].ends.length;
        bytes32[] memory short = new bytes32[](samples - 1);
        for (uint256 j; j < short.length; ++j) {
            short[j] = reveals[1].ends[j];
        }
        reveals[1] = _entry(verifiers[1], short);
        Claims memory claims = _claimsArg(_sid(jobId));
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.LengthMismatch.selector, _sid(jobId), samples, samples - 1)
        );
        round.revealVerdictsSigned(_sid(jobId), reveals, claims);
    }

    /// @notice The seals are made in the sealing window: none after the verdict deadline.
    function test_revealVerdictsSigned_afterVerdictDeadline_reverts() public {
        SignedReveal[] memory reveals = _reveals(0);
        Claims memory claims = _claimsArg(_sid(jobId));
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
        round.revealVerdictsSigned(_sid(jobId), reveals, claims);
    }

    /// @notice Attack: a seat seals on chain first (by itself or in a signed batch); it must not
    ///         then see the others' ends before its own seal is binding and theirs are.
    function test_revealVerdictsSigned_afterASeatSealedOnChain_reverts() public {
        SignedReveal[] memory reveals = _reveals(0);
        Claims memory claims = _claimsArg(_sid(jobId));
        vm.prank(verifiers[1]);
        round.commitVerdicts(_sid(jobId), _commitmentOf(verifiers[1], reveals[1].ends));
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.SealsOnChain.selector, _sid(jobId)));
        round.revealVerdictsSigned(_sid(jobId), reveals, claims);
    }

    function test_revealVerdictsSigned_afterASignedBatchSeal_reverts() public {
        SignedReveal[] memory reveals = _reveals(0);
        Claims memory claims = _claimsArg(_sid(jobId));
        address[] memory one = new address[](1);
        one[0] = verifiers[2];
        bytes32[] memory commitments = new bytes32[](1);
        commitments[0] = _commitmentOf(verifiers[2], reveals[2].ends);
        bytes[] memory signatures = new bytes[](1);
        signatures[0] = reveals[2].signature;
        round.commitVerdictsFor(_sid(jobId), one, commitments, signatures);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.SealsOnChain.selector, _sid(jobId)));
        round.revealVerdictsSigned(_sid(jobId), reveals, claims);
    }

    /// @notice Sent twice: the second finds every seat sealed.
    function test_revealVerdictsSigned_twice_reverts() public {
        SignedReveal[] memory reveals = _reveals(0);
        _revealSigned(reveals);
        Claims memory claims = _claimsArg(_sid(jobId));
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.SealsOnChain.selector, _sid(jobId)));
        round.revealVerdictsSigned(_sid(jobId), reveals, claims);
    }

    function test_revealVerdictsSigned_claimsMismatch_reverts() public {
        SignedReveal[] memory reveals = _reveals(0);
        (bytes32[] memory starts, bytes32[] memory claimed) = _claimsOf(_sid(jobId));
        claimed[0] = keccak256("forged");
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.ClaimsMismatch.selector, _sid(jobId)));
        round.revealVerdictsSigned(
            _sid(jobId),
            reveals,
            Claims({startHashes: starts, endHashes: claimed, secretCommitment: _secretCommitmentOf(_sid(jobId))})
        );
    }

    ////// Bonds //////

    /// @notice Attack: a rejecting seat hands over its opening, then unbonds its free verifier
    ///         stake. Unlike `revealVerdictsFor` the seat is not skipped (skipped, it could seal after
    ///         reading the others' ends): the whole call reverts and no seat is recorded.
    function test_revealVerdictsSigned_bondNotCovered_revertsWhole_reverts() public {
        SignedReveal[] memory reveals = _reveals(0);
        // Two rejects: the second bond is the one its free stake must cover.
        reveals[0] = _entry(verifiers[0], _ends(jobId, 3));
        Claims memory claims = _claimsArg(_sid(jobId));
        uint256 free = stakeManager.freeStake(verifiers[0], Role.Verifier);
        vm.prank(verifiers[0]);
        stakeManager.requestUnbond(Role.Verifier, free);
        vm.expectRevert(
            abi.encodeWithSelector(
                IStakeManager.InsufficientFreeStake.selector, verifiers[0], Role.Verifier, 0, params.challengeBond
            )
        );
        round.revealVerdictsSigned(_sid(jobId), reveals, claims);
        for (uint256 i; i < verifiers.length; ++i) {
            (, bool revealed) = round.verdictCommitmentOf(_sid(jobId), verifiers[i]);
            assertFalse(revealed, "no seat recorded");
        }
        (,, uint32 committed,) = round.roundOf(_sid(jobId));
        assertEq(uint256(committed), 0);
    }

    /// @notice Attack: a seat hands over one reject, then unbonds all its free verifier stake to
    ///         make the call revert. Its one reject's bond is in its seat's lock since the draw:
    ///         the call records every seat, and the bond stays at stake for the dispute.
    function test_revealVerdictsSigned_oneRejectNoFreeStake_recorded_succeeds() public {
        SignedReveal[] memory reveals = _reveals(0);
        reveals[0] = _entry(verifiers[0], _ends(jobId, 1));
        uint256 free = stakeManager.freeStake(verifiers[0], Role.Verifier);
        vm.prank(verifiers[0]);
        stakeManager.requestUnbond(Role.Verifier, free);
        _revealSigned(reveals);
        for (uint256 i; i < verifiers.length; ++i) {
            (, bool revealed) = round.verdictCommitmentOf(_sid(jobId), verifiers[i]);
            assertTrue(revealed, "every seat recorded");
        }
        assertEq(uint8(jobManager.verdictOf(jobId, verifiers[0])[0]), uint8(Verdict.Reject));
        assertEq(_locked(verifiers[0], Role.Verifier), _seatLock(), "the reject's bond at stake");
    }

    /// @notice A seat's wallet does not matter: one that moved every token away still reveals, its
    ///         second bond locked from its free verifier stake.
    function test_revealVerdictsSigned_emptyWallet_bondFromStake_succeeds() public {
        SignedReveal[] memory reveals = _reveals(0);
        reveals[2] = _entry(verifiers[2], _ends(jobId, 3));
        uint256 balance = token.balanceOf(verifiers[2]);
        vm.prank(verifiers[2]);
        assertTrue(token.transfer(stranger, balance));
        uint256 lockedBefore = _locked(verifiers[2], Role.Verifier);
        _revealSigned(reveals);
        (, bool revealed) = round.verdictCommitmentOf(_sid(jobId), verifiers[2]);
        assertTrue(revealed);
        assertEq(_locked(verifiers[2], Role.Verifier) - lockedBefore, params.challengeBond);
    }

    ////// After a one-shot reveal //////

    /// @notice A revealed seat has no stored seal, yet can never seal: not itself, not in a signed
    ///         batch (with a valid signature), and it has nothing to reveal.
    function test_commitVerdicts_afterSignedReveal_reverts() public {
        SignedReveal[] memory reveals = _reveals(0);
        _revealSigned(reveals);
        bytes32 other = _commitmentOf(verifiers[0], _ends(jobId, 1));
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.VerdictAlreadyCommitted.selector, _sid(jobId), verifiers[0])
        );
        vm.prank(verifiers[0]);
        round.commitVerdicts(_sid(jobId), other);

        address[] memory one = new address[](1);
        one[0] = verifiers[0];
        bytes32[] memory commitments = new bytes32[](1);
        commitments[0] = other;
        bytes[] memory signatures = new bytes[](1);
        signatures[0] = _signed(verifiers[0], other);
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.VerdictAlreadyCommitted.selector, _sid(jobId), verifiers[0])
        );
        round.commitVerdictsFor(_sid(jobId), one, commitments, signatures);

        Claims memory claims = _claimsArg(_sid(jobId));
        bytes32 salt = _verdictSalt(jobId, verifiers[0]);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.NothingToReveal.selector, _sid(jobId), verifiers[0]));
        vm.prank(verifiers[0]);
        round.revealVerdicts(_sid(jobId), reveals[0].ends, salt, claims);
    }
}

/// @notice The one-shot path on a job that carries a forced error.
contract SignedReveals_Forced_Test is SignedReveals_Init {
    uint256 internal f;

    function _setUpJob() internal override {
        f = _setUpForcedJob();
    }

    /// @notice V = 3, every seat rejects the forced sample: the batch writes one word of the round
    ///         (its flags) and none of the replayed ends, each end's tag riding in its seat's word at
    ///         the JobManager. Keeping each rejecter's whole end created one word per seat (~22k gas
    ///         each, docs/SECURITY.md "Gas cuts"); the forced error is still caught on the tags.
    function test_revealVerdictsSigned_forced_writesNoEndWord_succeeds() public {
        SignedReveal[] memory reveals = _reveals(uint256(1) << f);
        vm.record();
        _revealSigned(reveals);
        (, bytes32[] memory writes) = vm.accesses(address(round));
        for (uint256 i; i < writes.length; ++i) {
            assertEq(writes[i], writes[0], "the batch writes the round's flags word only");
        }
        assertGt(writes.length, 0);
        _finalizeOneShot();
        for (uint256 i; i < verifiers.length; ++i) {
            assertTrue(round.forcedEndMatches(_sid(jobId), verifiers[i]), "each replay caught the forced error");
        }
    }

    /// @notice V = 3, every seat rejects the forced sample with the true end it replayed: one
    ///         call records them, the job finalizes with the secret and each seat gets its bond
    ///         back and its fee and a jackpot restaked on its stake, as on the two-call path.
    function test_revealVerdictsSigned_forcedAllReject_paysJackpots_succeeds() public {
        SignedReveal[] memory reveals = _reveals(uint256(1) << f);
        uint256[] memory before = _seatHoldings();
        uint256 solverBefore = _holdings(solver);
        uint256 pool = escrow.jackpotPool();
        _revealSigned(reveals);
        for (uint256 i; i < verifiers.length; ++i) {
            assertEq(uint8(jobManager.verdictOf(jobId, verifiers[i])[f]), uint8(Verdict.Reject));
            assertTrue(jobManager.endTagOf(_sid(jobId), verifiers[i]) != bytes5(0), "the end's tag is kept");
        }
        // The bonds are locked from the seats' stakes: none at the Escrow.
        assertEq(escrow.bucketOf(Bucket.Bonds), 0);
        for (uint256 i; i < verifiers.length; ++i) {
            assertEq(_locked(verifiers[i], Role.Verifier), params.verifierStake + params.challengeBond);
        }
        uint256[] memory wallets = new uint256[](verifiers.length);
        uint256[] memory stakes = new uint256[](verifiers.length);
        for (uint256 i; i < verifiers.length; ++i) {
            wallets[i] = token.balanceOf(verifiers[i]);
            stakes[i] = _staked(verifiers[i], Role.Verifier);
        }

        _finalizeOneShot();
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        for (uint256 i; i < verifiers.length; ++i) {
            assertEq(_holdings(verifiers[i]) - before[i], params.verifierFee + params.jackpot);
            // The fee and the jackpot are restaked (no wallet payment, no credit to claim); the
            // bond is unlocked with the seat.
            assertEq(token.balanceOf(verifiers[i]), wallets[i], "no wallet payment");
            assertEq(_staked(verifiers[i], Role.Verifier), stakes[i] + params.verifierFee + params.jackpot);
            assertEq(escrow.creditOf(verifiers[i]), 0);
            assertEq(_locked(verifiers[i], Role.Verifier), 0);
        }
        assertEq(_holdings(solver) - solverBefore, REWARD);
        assertEq(escrow.jackpotPool(), pool - verifiers.length * params.jackpot);
        assertEq(escrow.bucketOf(Bucket.Bonds), 0, "every bond settled");
        _assertEscrowSolvent();
    }
}
