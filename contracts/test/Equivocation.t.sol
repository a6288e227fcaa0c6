// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Vm} from "@prb/test/Vm.sol";
import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {SignedReveals_Init} from "./SignedReveals.t.sol";
// Deployment
import {Deploy} from "../script/Deploy.sol";
// Interfaces
import {IEscrow} from "../src/interfaces/IEscrow.sol";
import {IJobManager} from "../src/interfaces/IJobManager.sol";
import {IJobManagerErrors} from "../src/interfaces/IJobManagerErrors.sol";
import {IStakeManager} from "../src/interfaces/IStakeManager.sol";
import {IVerificationRound} from "../src/interfaces/IVerificationRound.sol";
// Types
import {Bucket} from "../src/types/EscrowTypes.sol";
import {JobStatus, Verdict} from "../src/types/JobTypes.sol";
import {Role} from "../src/types/Role.sol";
import {SignedReveal} from "../src/types/RoundTypes.sol";
import {SubmissionId} from "../src/types/SubmissionId.sol";

/// @notice A lazy seat `lazy` (seat 1) that signs two seals for one submission: its first seal
///         (shown to the other seats) and, after an honest seat opened its ends to the aggregator,
///         a second one that copies them, which the one-shot reveal carries (docs/SECURITY.md P-40).
abstract contract Equivocation_Init is SignedReveals_Init {
    uint256 internal lazyIndex;
    address internal lazy;
    /// @notice The lazy seat's first seal (what it showed the other seats) and its signature.
    bytes32 internal firstSeal;
    bytes internal firstSignature;

    function setUp() public virtual override {
        super.setUp();
        _setLazy(1);
    }

    /// @notice Seat `index` is the lazy one; its first seal: other ends (a zero end on sample 0,
    ///         "no data"), under a salt of its own.
    function _setLazy(uint256 index) internal {
        (lazyIndex, lazy) = (index, verifiers[index]);
        bytes32[] memory first = _ends(jobId, 0);
        first[0] = bytes32(0);
        firstSeal = _verdictCommitment(jobId, lazy, first, keccak256("first salt"));
        firstSignature = _signed(lazy, firstSeal);
    }

    /// @notice Every seat's opening of the ends of `rejectMask`, in one `revealVerdictsSigned`; the
    ///         lazy seat's is its second seal. Returns the lazy seat's second seal and signature.
    function _oneShot(uint256 rejectMask) internal returns (bytes32 seal, bytes memory signature) {
        SignedReveal[] memory reveals = _reveals(rejectMask);
        _revealSigned(reveals);
        SignedReveal memory own = reveals[lazyIndex];
        (seal, signature) = (_commitmentOf(lazy, own.ends), own.signature);
    }

    /// @notice `prover` proves that `lazy` signed `seal` and the first seal.
    function _prove(address prover, bytes32 seal, bytes memory signature) internal {
        vm.prank(prover);
        round.proveEquivocation(_sid(jobId), lazy, seal, signature, firstSeal, firstSignature);
    }

    /// @notice Asserts that `verifier`'s seat is slashed with every verdict voided.
    function _assertVoided(address verifier) internal {
        Verdict[] memory verdicts = jobManager.verdictOf(jobId, verifier);
        for (uint256 j; j < verdicts.length; ++j) {
            assertEq(uint8(verdicts[j]), uint8(Verdict.None), "verdict voided");
        }
        (bool assigned, uint64 sampleMask, bool revealed,,) = jobManager.seatOf(_sid(jobId), verifier);
        assertFalse(assigned);
        assertEq(uint256(sampleMask), 0);
        assertTrue(revealed);
        assertEq(_staked(verifier, Role.Verifier), 500e18 - params.verifierStake, "one stake slashed");
        assertEq(_locked(verifier, Role.Verifier), 0, "nothing left locked");
    }
}

/// @notice `proveEquivocation`: a seat that signs two seals for one submission is slashed and
///         voided; nobody else can be framed, and nobody profits from a proof.
contract Equivocation_ProveEquivocation_Test is Equivocation_Init {
    ////// Proofs //////

    /// @notice Two signed seals: the seat is slashed into the pool, voided, never paid nor unlocked;
    ///         the prover gets nothing; the job finalizes and the voided fee goes to the submitter.
    function test_proveEquivocation_twoSignedSeals_slashesAndVoids_succeeds() public {
        (bytes32 seal, bytes memory signature) = _oneShot(0);
        uint256 pool = escrow.jackpotPool();
        uint256 proverBefore = _holdings(whistleblower);
        vm.expectEmit(address(round));
        emit IVerificationRound.EquivocationProven(_sid(jobId), lazy, whistleblower, seal, firstSeal);
        vm.expectEmit(address(jobManager));
        emit IJobManager.VerifierEquivocated(jobId, lazy, params.verifierStake, 0);
        _prove(whistleblower, seal, signature);
        _assertVoided(lazy);
        assertEq(escrow.jackpotPool(), pool + params.verifierStake, "the stake joins the pool");
        assertEq(_holdings(whistleblower), proverBefore, "the prover is paid nothing");

        uint256 submitterBefore = _holdings(submitter);
        uint256 lazyBefore = _holdings(lazy);
        _finalizeOneShot();
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        assertEq(escrow.creditOf(lazy), 0, "no fee");
        assertEq(_holdings(lazy), lazyBefore, "no fee paid to the wallet");
        assertEq(_holdings(submitter) - submitterBefore, params.verifierFee, "its fee goes back");
        _assertVoided(lazy);
        _assertEscrowSolvent();
    }

    /// @notice A seat that sealed on chain itself (`commitVerdicts`) and signed another seal: the
    ///         signed seal against the stored one is the proof.
    function test_proveEquivocation_signedSealAgainstStoredSeal_succeeds() public {
        _submitAll(jobId, 0);
        (bytes32 stored,) = round.verdictCommitmentOf(_sid(jobId), lazy);
        vm.prank(stranger);
        round.proveEquivocation(_sid(jobId), lazy, firstSeal, firstSignature, stored, "");
        _assertVoided(lazy);
    }

    /// @notice The equivocator proves itself: it still loses its whole stake and is paid nothing.
    function test_proveEquivocation_byTheEquivocator_losesItsStake_succeeds() public {
        (bytes32 seal, bytes memory signature) = _oneShot(0);
        uint256 before = _holdings(lazy);
        _prove(lazy, seal, signature);
        assertEq(before - _holdings(lazy), params.verifierStake);
        _finalizeOneShot();
        assertEq(before - _holdings(lazy), params.verifierStake, "no fee, no credit, no unlock");
    }

    /// @notice The honest seats and the solver are paid exactly as when the lazy seat goes
    ///         unproven; the lazy seat loses its stake instead of earning its fee.
    function test_proveEquivocation_othersPaidAsWithoutIt_succeeds() public {
        (bytes32 seal, bytes memory signature) = _oneShot(0);
        uint256 snapshot = vmx.snapshotState();
        uint256[] memory before = _seatHoldings();
        uint256 solverBefore = _holdings(solver);
        _finalizeOneShot();
        uint256[] memory unproven = _seatHoldings();
        uint256 solverUnproven = _holdings(solver);
        vmx.revertToState(snapshot);

        _prove(stranger, seal, signature);
        _finalizeOneShot();
        for (uint256 i; i < verifiers.length; ++i) {
            if (verifiers[i] == lazy) continue;
            assertEq(_holdings(verifiers[i]), unproven[i], "honest seat paid the same");
        }
        assertEq(_holdings(solver), solverUnproven, "solver paid the same");
        assertEq(solverUnproven - solverBefore, REWARD);
        assertEq(unproven[lazyIndex] - before[lazyIndex], params.verifierFee);
        assertEq(before[lazyIndex] - _holdings(lazy), params.verifierStake);
        assertEq(escrow.bucketOf(Bucket.Bonds), 0);
        _assertEscrowSolvent();
    }

    /// @notice The finalize that follows a proof (every sample still covered by the other seats)
    ///         names the voided seat in no stake release and no payment: not in the seats' batch
    ///         `StakesRestaked` (their unlocks and restaked fees), not in a `StakesUnlocked` or a
    ///         `StakeUnlocked`, not in an Escrow `Paid` or `Credited`, not even for a zero amount.
    function test_proveEquivocation_finalizeNamesTheVoidedSeatNowhere_succeeds() public {
        (bytes32 seal, bytes memory signature) = _oneShot(0);
        _prove(stranger, seal, signature);
        vm.recordLogs();
        _finalizeOneShot();
        Vm.Log[] memory logs = vm.getRecordedLogs();
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized), "the job finalized");
        bool batchRelease;
        for (uint256 i; i < logs.length; ++i) {
            Vm.Log memory log = logs[i];
            bytes32 topic = log.topics[0];
            if (log.emitter == address(stakeManager) && topic == IStakeManager.StakesRestaked.selector) {
                (address[] memory released,,) = abi.decode(log.data, (address[], uint256[], uint256[]));
                for (uint256 j; j < released.length; ++j) {
                    assertTrue(released[j] != lazy, "the voided seat released in the batch");
                }
                if (log.topics[1] == bytes32(uint256(Role.Verifier))) batchRelease = true;
            } else if (log.emitter == address(stakeManager) && topic == IStakeManager.StakesUnlocked.selector) {
                (address[] memory released,) = abi.decode(log.data, (address[], uint256[]));
                for (uint256 j; j < released.length; ++j) {
                    assertTrue(released[j] != lazy, "the voided seat unlocked in a batch");
                }
            } else if (log.emitter == address(stakeManager) && topic == IStakeManager.StakeUnlocked.selector) {
                assertTrue(address(uint160(uint256(log.topics[1]))) != lazy, "the voided seat unlocked");
            } else if (
                log.emitter == address(escrow) && (topic == IEscrow.Paid.selector || topic == IEscrow.Credited.selector)
            ) {
                assertTrue(address(uint160(uint256(log.topics[2]))) != lazy, "the voided seat paid");
            }
        }
        assertTrue(batchRelease, "the other seats were released in one batch");
        _assertVoided(lazy);
    }

    ////// Not a proof //////

    /// @notice Attack: framing an honest seat needs its signature of two seals; a prover's own
    ///         signature, or the seat's one genuine seal twice, proves nothing.
    function test_proveEquivocation_framingAnHonestSeat_reverts() public {
        (bytes32 seal,) = _oneShot(0);
        address honest = verifiers[0];
        bytes32 genuine = _commitmentOf(honest, _ends(jobId, 0));
        bytes memory genuineSignature = _signed(honest, genuine);
        uint256 forger = uint256(keccak256("forger"));
        bytes32 forged = keccak256("forged seal");
        bytes memory forgedSignature = _signature(forger, _sid(jobId), forged);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.InvalidSealSignature.selector, _sid(jobId), honest));
        round.proveEquivocation(_sid(jobId), honest, genuine, genuineSignature, forged, forgedSignature);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.InvalidSealSignature.selector, _sid(jobId), honest));
        round.proveEquivocation(_sid(jobId), honest, forged, forgedSignature, genuine, genuineSignature);
        // The lazy seat's signature under the honest seat's name proves nothing either.
        bytes memory lazySignature = _signed(lazy, seal);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.InvalidSealSignature.selector, _sid(jobId), honest));
        round.proveEquivocation(_sid(jobId), honest, genuine, genuineSignature, seal, lazySignature);
    }

    function test_proveEquivocation_sameCommitmentTwice_reverts() public {
        (bytes32 seal, bytes memory signature) = _oneShot(0);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.NotEquivocation.selector, _sid(jobId), lazy));
        round.proveEquivocation(_sid(jobId), lazy, seal, signature, seal, signature);
        bytes memory zeroSignature = _signed(lazy, bytes32(0));
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.NotEquivocation.selector, _sid(jobId), lazy));
        round.proveEquivocation(_sid(jobId), lazy, seal, signature, bytes32(0), zeroSignature);
    }

    /// @notice Attack: a seat's seal of another submission (another job it sat on, the same
    ///         commitment on another chain) is no second seal of this one.
    function test_proveEquivocation_sealOfAnotherSubmission_reverts() public {
        (bytes32 seal, bytes memory signature) = _oneShot(0);
        bytes memory elsewhere = _signature(_keys[lazy], SubmissionId.wrap(keccak256("other")), firstSeal);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.InvalidSealSignature.selector, _sid(jobId), lazy));
        round.proveEquivocation(_sid(jobId), lazy, seal, signature, firstSeal, elsewhere);
    }

    /// @notice An unsigned other seal must be the seat's stored one: here the seat stored none.
    function test_proveEquivocation_unsignedSealNotStored_reverts() public {
        (bytes32 seal, bytes memory signature) = _oneShot(0);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.NotEquivocation.selector, _sid(jobId), lazy));
        round.proveEquivocation(_sid(jobId), lazy, seal, signature, firstSeal, "");
    }

    ////// Too early, too late, twice //////

    /// @notice A seat that has not revealed cannot be voided: it reveals (and can then be proven)
    ///         or is slashed as missed.
    function test_proveEquivocation_unrevealedSeat_reverts() public {
        bytes32 stored = _commitmentOf(lazy, _ends(jobId, 0));
        vm.prank(lazy);
        round.commitVerdicts(_sid(jobId), stored);
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.SeatNotSlashable.selector, jobId, lazy));
        round.proveEquivocation(_sid(jobId), lazy, firstSeal, firstSignature, stored, "");
    }

    function test_proveEquivocation_twice_reverts() public {
        (bytes32 seal, bytes memory signature) = _oneShot(0);
        _prove(stranger, seal, signature);
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.SeatNotSlashable.selector, jobId, lazy));
        round.proveEquivocation(_sid(jobId), lazy, seal, signature, firstSeal, firstSignature);
    }

    /// @notice After the challenge deadline (the secret reveal opens then) the coverage is fixed.
    function test_proveEquivocation_afterChallengeDeadline_reverts() public {
        (bytes32 seal, bytes memory signature) = _oneShot(0);
        uint64 deadline = _job(jobId).challengeDeadline;
        vm.warp(uint256(deadline) + 1);
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.ChallengeWindowClosed.selector, jobId, deadline, deadline + 1)
        );
        round.proveEquivocation(_sid(jobId), lazy, seal, signature, firstSeal, firstSignature);
    }

    function test_proveEquivocation_afterFinalize_reverts() public {
        (bytes32 seal, bytes memory signature) = _oneShot(0);
        _finalizeOneShot();
        vm.expectRevert(
            abi.encodeWithSelector(IJobManagerErrors.UnexpectedJobStatus.selector, jobId, JobStatus.Finalized)
        );
        round.proveEquivocation(_sid(jobId), lazy, seal, signature, firstSeal, firstSignature);
    }

    /// @notice Only the round voids a seat.
    function test_slashEquivocation_notTheRound_reverts() public {
        _oneShot(0);
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.NotVerificationRound.selector, stranger));
        vm.prank(stranger);
        jobManager.slashEquivocation(_sid(jobId), lazy);
    }

    ////// Whistleblowers //////

    /// @notice A whistleblower that challenged the voided approval gets its bond back, and the
    ///         challenge opens no dispute: the job finalizes.
    function test_proveEquivocation_challengeOfVoidedApproval_returned_succeeds() public {
        (bytes32 seal, bytes memory signature) = _oneShot(0);
        uint256 before = _holdings(whistleblower);
        vm.prank(whistleblower);
        jobManager.challengeApproval(jobId, 0, lazy);
        _prove(stranger, seal, signature);
        assertEq(jobManager.challengerOf(jobId, 0, lazy), address(0), "the challenge is forgotten");
        assertEq(escrow.creditOf(whistleblower), params.challengeBond, "its bond is returned");
        _finalizeOneShot();
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized), "no dispute");
        assertEq(_holdings(whistleblower), before);
        assertEq(escrow.bucketOf(Bucket.Bonds), 0);
        _assertEscrowSolvent();
    }

    /// @notice The whistleblower also challenged an honest seat's approval of the same sample: that
    ///         challenge stands (settlement is keyed by party and role, P-22) and opens the dispute.
    function test_proveEquivocation_otherChallengeOfTheSampleStands_succeeds() public {
        (bytes32 seal, bytes memory signature) = _oneShot(0);
        vm.startPrank(whistleblower);
        jobManager.challengeApproval(jobId, 0, lazy);
        jobManager.challengeApproval(jobId, 0, verifiers[0]);
        vm.stopPrank();
        _prove(stranger, seal, signature);
        assertEq(jobManager.challengerOf(jobId, 0, verifiers[0]), whistleblower);
        assertEq(escrow.bucketOf(Bucket.Bonds), params.challengeBond, "one bond still posted");
        _finalizeOneShot();
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Disputed));
        assertEq(jobManager.disputedSampleOf(jobId), 0);
    }
}

/// @notice Equivocation on a job that carries a forced error, and the voided seat's bonds.
contract Equivocation_Forced_Test is Equivocation_Init {
    uint256 internal f;

    function _setUpJob() internal override {
        f = _setUpForcedJob();
    }

    /// @notice Every seat rejects the forced sample with its true end, the lazy one by copying an
    ///         honest opening. Proven, it wins no jackpot, its reject bond goes to the pool with its
    ///         stake, and the honest rejecters still win theirs.
    function test_proveEquivocation_forcedCopier_noJackpot_succeeds() public {
        uint256[] memory before = _seatHoldings();
        (bytes32 seal, bytes memory signature) = _oneShot(uint256(1) << f);
        uint256 pool = escrow.jackpotPool();
        vm.expectEmit(address(jobManager));
        emit IJobManager.VerifierEquivocated(jobId, lazy, params.verifierStake, params.challengeBond);
        _prove(stranger, seal, signature);
        assertEq(escrow.jackpotPool(), pool + params.verifierStake + params.challengeBond);
        // The bonds are stake, never at the Escrow: the copier's forfeited one was slashed into the
        // pool, the honest seats' stay locked.
        assertEq(escrow.bucketOf(Bucket.Bonds), 0);
        assertEq(_locked(lazy, Role.Verifier), 0);

        _finalizeOneShot();
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        for (uint256 i; i < verifiers.length; ++i) {
            if (verifiers[i] == lazy) continue;
            assertEq(_holdings(verifiers[i]) - before[i], params.verifierFee + params.jackpot, "honest jackpot");
        }
        assertEq(escrow.creditOf(lazy), 0, "no jackpot, no bond, no fee");
        assertEq(before[lazyIndex] - _holdings(lazy), params.verifierStake + params.challengeBond);
        uint256 paid = (verifiers.length - 1) * params.jackpot;
        assertEq(escrow.jackpotPool(), pool + params.verifierStake + params.challengeBond - paid);
        assertEq(escrow.bucketOf(Bucket.Bonds), 0, "every bond settled");
        _assertEscrowSolvent();
    }

    /// @notice A voided approval of the forced claim is not slashed a second time at finalize.
    function test_proveEquivocation_forcedApprover_slashedOnce_succeeds() public {
        (bytes32 seal, bytes memory signature) = _oneShot(0);
        _prove(stranger, seal, signature);
        _finalizeOneShot();
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        assertEq(_staked(lazy, Role.Verifier), 500e18 - params.verifierStake, "slashed once");
        assertEq(_staked(verifiers[0], Role.Verifier), 500e18 - params.verifierStake, "approver slashed");
        _assertEscrowSolvent();
    }
}

/// @notice Attack (a solver and a seat in collusion): the seat approves a sample only it holds and
///         voids itself, hoping the sample is then paid unverified and no whistleblower can
///         challenge it. The sample is uncovered again: the secret stays hidden and a fresh seat,
///         paid with the voided seat's held fee, is drawn for it (P-27).
contract Equivocation_Coverage_Test is Equivocation_Init {
    /// @notice The devnet defaults: each seat draws q = 4 of the job's 8 segments (plus the last).
    function _setUpJob() internal override {
        _deploy(Deploy.defaultConfig());
        delete verifierPool;
        _setUpActors();
        jobId = _verifyingJob();
    }

    /// @notice Samples that only `verifier`'s own draw holds.
    function _soleSamples(address verifier) internal view returns (uint256 sole) {
        sole = jobManager.sampleMaskOf(jobId, verifier);
        for (uint256 i; i < verifiers.length; ++i) {
            if (verifiers[i] != verifier) sole &= ~jobManager.sampleMaskOf(jobId, verifiers[i]);
        }
    }

    /// @notice The lazy seat is one that holds a sample alone; every seat reveals in one call and
    ///         the lazy one proves itself. Returns the samples it held alone.
    function _voidSoleHolder() internal returns (uint256 sole) {
        for (uint256 i; i < verifiers.length && _soleSamples(verifiers[i]) == 0; ++i) {
            if (i + 1 < verifiers.length) _setLazy(i + 1);
        }
        sole = _soleSamples(lazy);
        assertTrue(sole != 0, "a seat holds a sample alone");
        (bytes32 seal, bytes memory signature) = _oneShot(0);
        _prove(lazy, seal, signature);
    }

    function test_proveEquivocation_soleHolderVoided_sampleDrawnAgain_succeeds() public {
        uint256 sole = _voidSoleHolder();

        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        bytes32[] memory proof = _claimsProofOf(jobId);
        bytes32 secret = _secret(jobId);
        // SAFETY: a sample mask has at most 64 bits.
        // forge-lint: disable-next-line(unsafe-typecast)
        uint64 uncovered = uint64(sole);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.SamplesUncovered.selector, _sid(jobId), uncovered));
        vm.prank(solver);
        round.revealSecret(_sid(jobId), secret, bytes32(0), proof, _claimsArg(_sid(jobId)));

        vm.warp(uint256(_job(jobId).verdictDeadline) + params.revealWindow + 1);
        vm.expectEmit(address(jobManager));
        emit IJobManager.VerifiersReassigning(jobId, 1, uint64(block.number + 1));
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Committed));
        vm.roll(block.number + 2);
        jobManager.assignVerifiers(jobId);
        address[] memory seats = _assigned(jobId);
        assertEq(seats.length, verifiers.length, "the voided seat's fee pays a fresh seat");
        address fresh = seats[seats.length - 1];
        assertFalse(_isIn(verifiers, fresh));
        assertEq(jobManager.sampleMaskOf(jobId, fresh) & sole, sole, "the fresh seat holds the sample");

        // The fresh seat replays it; its reveal is the last one due, so the challenge window starts.
        _submit(jobId, fresh, 0);
        assertEq(uint256(_job(jobId).challengeDeadline), block.timestamp + params.challengeWindow);
        uint256 freshBefore = token.balanceOf(fresh);
        uint256 freshStaked = _staked(fresh, Role.Verifier);
        uint256 lazyBefore = _holdings(lazy);
        _finalizeOneShot();
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        // The fee is restaked on the fresh seat's stake, its wallet untouched.
        assertEq(_staked(fresh, Role.Verifier), freshStaked + params.verifierFee, "paid with the voided seat's fee");
        assertEq(token.balanceOf(fresh), freshBefore, "no wallet payment");
        assertEq(escrow.creditOf(fresh), 0);
        assertEq(escrow.creditOf(lazy), 0);
        assertEq(_holdings(lazy), lazyBefore, "the voided seat is paid nothing");
        assertEq(_staked(lazy, Role.Verifier), 500e18 - params.verifierStake);
        assertEq(_locked(lazy, Role.Verifier), 0);
        _assertEscrowSolvent();
    }

    /// @notice A voided verifier is never seated on the submission again (its two signatures
    ///         would prove it again, and its settled seat is no fresh one): when the only eligible
    ///         verifier of a later draw is the voided one, nobody is seated.
    function test_assignVerifiers_voidedVerifierNeverSeatedAgain_succeeds() public {
        _voidSoleHolder();
        _reassign(jobId);
        jobManager.assignVerifiers(jobId);
        address[] memory second = _assigned(jobId);
        // The fresh seat stays silent: its samples are drawn once more.
        _reassign(jobId);
        _leaveOnlyLazyEligible(second);
        _assertLazyNotSeated();
    }

    /// @notice A verifier that sealed in an earlier draw of the submission and never revealed
    ///         (Missed) is never seated on it again (docs/SECURITY.md P-42): its seal would still be
    ///         stored while the draw's seal count starts again, so it could neither seal anew
    ///         (VerdictAlreadyCommitted) nor be kept out of a one-shot reveal (SealsOnChain), and anyone
    ///         could prove an "equivocation" from its new signed seal and the stale stored one,
    ///         slashing a second stake. When the only eligible verifier of the third draw is that
    ///         seat, nobody is seated.
    function test_assignVerifiers_missedSealedVerifierNeverSeatedAgain_succeeds() public {
        // Draw 1: a seat that holds a sample alone seals and goes silent; the others reveal.
        for (uint256 i; i < verifiers.length && _soleSamples(verifiers[i]) == 0; ++i) {
            if (i + 1 < verifiers.length) _setLazy(i + 1);
        }
        assertTrue(_soleSamples(lazy) != 0, "a seat holds a sample alone");
        vm.prank(lazy);
        round.commitVerdicts(_sid(jobId), firstSeal);
        for (uint256 i; i < verifiers.length; ++i) {
            if (verifiers[i] != lazy) _submit(jobId, verifiers[i], 0);
        }
        _revealPending(jobId);
        _reassign(jobId);
        assertEq(_staked(lazy, Role.Verifier), 500e18 - params.verifierStake, "missed: one stake slashed");
        // Draw 2 excludes draw 1's seats; its fresh seat stays silent too.
        jobManager.assignVerifiers(jobId);
        address[] memory second = _assigned(jobId);
        assertFalse(_isIn(second, lazy));
        _reassign(jobId);
        _leaveOnlyLazyEligible(second);
        (bytes32 stale,) = round.verdictCommitmentOf(_sid(jobId), lazy);
        assertEq(stale, firstSeal, "its seal of draw 1 is still stored");
        _assertLazyNotSeated();
    }

    /// @notice Every verifier a third draw could take but the lazy one (the seats of the
    ///         `second` draw are excluded anyway) leaves the active set; the lazy one stays active.
    function _leaveOnlyLazyEligible(address[] memory second) internal {
        for (uint256 i; i < verifierPool.length; ++i) {
            address v = verifierPool[i];
            if (v == lazy || _isIn(second, v)) continue;
            uint256 free = _staked(v, Role.Verifier) - _locked(v, Role.Verifier);
            vm.prank(v);
            stakeManager.requestUnbond(Role.Verifier, free);
        }
        assertTrue(stakeManager.isActive(lazy, Role.Verifier), "the lazy verifier could be drawn");
    }

    /// @notice The draw reverts NoEligibleVerifiers with the active verifiers counted, and the lazy
    ///         verifier holds no seat.
    function _assertLazyNotSeated() internal {
        uint256 candidates = 0;
        for (uint256 i; i < verifierPool.length; ++i) {
            if (stakeManager.isActive(verifierPool[i], Role.Verifier)) ++candidates;
        }
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.NoEligibleVerifiers.selector, jobId, candidates));
        jobManager.assignVerifiers(jobId);
        (bool assigned,,,,) = jobManager.seatOf(_sid(jobId), lazy);
        assertFalse(assigned);
    }
}

/// @notice A smart-wallet verifier: it approves (ERC-1271) a digest its owner key signed, until
///         its owner revokes it.
contract OwnerWallet is IERC1271 {
    address internal immutable _OWNER;
    bool public revoked;

    constructor(address owner) {
        _OWNER = owner;
    }

    function revoke() external {
        revoked = true;
    }

    function isValidSignature(bytes32 digest, bytes calldata signature) external view returns (bytes4) {
        (address signer, ECDSA.RecoverError err,) = ECDSA.tryRecoverCalldata(digest, signature);
        if (revoked || err != ECDSA.RecoverError.NoError || signer != _OWNER) return 0xffffffff;
        return IERC1271.isValidSignature.selector;
    }
}

/// @notice Seal signatures (`_requireSealSigned`, docs/SECURITY.md "Gas cuts"): ECDSA is tried
///         first, so an account's own key passes without a look-up of its code, and a contract
///         verifier passes only through its ERC-1271 approval: no ECDSA signature stands in for a
///         wallet that refuses. `proveEquivocation` checks both signatures before the JobManager
///         is asked anything, so its revert tells which check refused.
contract Equivocation_SealSignature_Test is Equivocation_Init {
    uint256 internal ownerKey;
    OwnerWallet internal wallet;

    function setUp() public override {
        super.setUp();
        address owner;
        (owner, ownerKey) = _keyedActor("wallet owner");
        wallet = new OwnerWallet(owner);
    }

    /// @notice Two seals the wallet approves pass both signature checks: the JobManager then
    ///         refuses, the wallet holds no seat of this submission.
    function test_proveEquivocation_walletApprovedSeals_passTheSignatureCheck_succeeds() public {
        bytes32 one = keccak256("seal one");
        bytes32 two = keccak256("seal two");
        bytes memory sigOne = _signature(ownerKey, _sid(jobId), one);
        bytes memory sigTwo = _signature(ownerKey, _sid(jobId), two);
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.SeatNotSlashable.selector, jobId, address(wallet)));
        round.proveEquivocation(_sid(jobId), address(wallet), one, sigOne, two, sigTwo);
    }

    /// @notice Attack: once the wallet refuses, its owner's ECDSA signature (valid for the owner's
    ///         own address, not the wallet's) does not stand in for its approval.
    function test_proveEquivocation_revokedWallet_ownerSignature_reverts() public {
        wallet.revoke();
        bytes32 one = keccak256("seal one");
        bytes32 two = keccak256("seal two");
        bytes memory sigOne = _signature(ownerKey, _sid(jobId), one);
        bytes memory sigTwo = _signature(ownerKey, _sid(jobId), two);
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.InvalidSealSignature.selector, _sid(jobId), address(wallet))
        );
        round.proveEquivocation(_sid(jobId), address(wallet), one, sigOne, two, sigTwo);
    }

    /// @notice Attack: a signature by another key, or bytes that are no signature at all, sent for
    ///         a seat that is an account without code: ECDSA recovers no match and the ERC-1271
    ///         fallback on an address without code never approves.
    function test_proveEquivocation_eoaSeat_otherKeyOrGarbage_reverts() public {
        (bytes32 seal, bytes memory signature) = _oneShot(0);
        bytes memory other = _signature(ownerKey, _sid(jobId), firstSeal);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.InvalidSealSignature.selector, _sid(jobId), lazy));
        round.proveEquivocation(_sid(jobId), lazy, seal, signature, firstSeal, other);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.InvalidSealSignature.selector, _sid(jobId), lazy));
        round.proveEquivocation(_sid(jobId), lazy, seal, signature, firstSeal, hex"deadbeef");
    }
}
