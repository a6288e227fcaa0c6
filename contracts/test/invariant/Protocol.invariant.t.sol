// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Deployers} from "../utils/Deployers.sol";
import {InvariantTest} from "../utils/InvariantTest.sol";
import {ProtocolHandler} from "./handlers/ProtocolHandler.sol";
import {ProtocolHandlerSigned} from "./handlers/ProtocolHandlerSigned.sol";
// Deployment
import {Deploy} from "../../script/Deploy.sol";
// Contracts
import {ModelShares} from "../../src/ModelShares.sol";
// Libraries
import {LibBits} from "../../src/libraries/LibBits.sol";
// Types
import {Bucket} from "../../src/types/EscrowTypes.sol";
import {Job, JobStatus, Verdict} from "../../src/types/JobTypes.sol";
import {Role} from "../../src/types/Role.sol";

/// @title Protocol_Invariant_Test
/// @notice Protocol-wide invariants P1-P3 and P5 of PROPERTIES.md under random play by ProtocolHandler.
/// @dev Deep runs (depth 256): a dispute needs about 15 steps on one job before votes are revealed.
contract Protocol_Invariant_Test is Deployers, InvariantTest {
    ProtocolHandler internal handler;

    function setUp() public override {
        vm.warp(START_TIME);
        vm.roll(START_BLOCK);
        _deploy(_config());
        handler = new ProtocolHandler(token, stakeManager, jobManager, round, committee);
        targetContract(address(handler));
        targetSelector(FuzzSelector({addr: address(handler), selectors: _selectors()}));
    }

    /// @notice The handler's actions the fuzzer calls (a selector listed twice is drawn twice as
    ///         often).
    function _selectors() internal pure virtual returns (bytes4[] memory selectors) {
        selectors = new bytes4[](20);
        selectors[0] = ProtocolHandler.postJob.selector;
        selectors[1] = ProtocolHandler.cancelJob.selector;
        selectors[2] = ProtocolHandler.claimAndCommit.selector;
        selectors[3] = ProtocolHandler.reclaimExpired.selector;
        selectors[4] = ProtocolHandler.assignVerifiers.selector;
        selectors[5] = ProtocolHandler.submitVerdicts.selector;
        selectors[6] = ProtocolHandler.challengeApproval.selector;
        selectors[7] = ProtocolHandler.finalize.selector;
        selectors[8] = ProtocolHandler.drawCommittee.selector;
        selectors[9] = ProtocolHandler.vote.selector;
        selectors[10] = ProtocolHandler.resolve.selector;
        selectors[11] = ProtocolHandler.claimCredit.selector;
        selectors[12] = ProtocolHandler.stakeOrUnbond.selector;
        selectors[13] = ProtocolHandler.warp.selector;
        // advance twice: most calls move some job forward, so runs reach disputes and payouts.
        selectors[14] = ProtocolHandler.advance.selector;
        selectors[15] = ProtocolHandler.advance.selector;
        selectors[16] = ProtocolHandler.fundJackpot.selector;
        selectors[17] = ProtocolHandler.batchVerdicts.selector;
        selectors[18] = ProtocolHandlerSigned.signedVerdicts.selector;
        selectors[19] = ProtocolHandlerSigned.equivocate.selector;
    }

    /// @notice Every run ends by driving play until it has reached a slash, a finalized mint and a
    ///         forced-error settlement (`ProtocolHandler.settle`), then requires all three and
    ///         checks P1-P5 once more: a run that never reaches them fails instead of passing. P10,
    ///         P13 and P14 are ghost counts checked here once, at the end of every run.
    function afterInvariant() public virtual {
        handler.settle();
        assertGt(handler.ghost_slashes(), 0, "P2: no slash in this run");
        assertGt(handler.ghost_finalizedMints(), 0, "P3: no finalized mint in this run");
        assertGt(handler.ghost_forcedErrors(), 0, "P5: no forced-error settlement in this run");
        assertGt(handler.ghost_rewardsPaid(), 0, "P12: no reward restaked in this run");
        assertGt(handler.ghost_selfDealtClaims(), 0, "no submitter solved its own job in this run");
        invariant_stakeConservation();
        invariant_escrowSolvent();
        invariant_noUnjustifiedSlash();
        invariant_forcedErrorsSettled();
        invariant_sharesMatchVerifiedSteps();
        invariant_expiryJudgesRevealedRejects();
        invariant_payoutsRouted();
        _assertBatchesHonest();
        _assertSignedRevealsWhole();
        _assertEquivocationsSlashed();
    }

    /// @custom:invariant P13 One-shot signed reveals (docs/SECURITY.md P-40): every seat of a
    ///                   `revealVerdictsSigned` ends revealed with no seal stored and the verdicts
    ///                   and bonds its signed ends imply, and a call with a seat that cannot cover
    ///                   its bonds reverts whole; no draw seats a verifier with a seal of an
    ///                   earlier draw still stored (P-42).
    function _assertSignedRevealsWhole() internal {
        assertEq(handler.ghost_signedSeatMisrecorded(), 0, "P13: a one-shot reveal left a seat other than it signed");
        assertEq(handler.ghost_strippedRejectRecorded(), 0, "P13: stripped ends turned a reject into an approval");
        assertEq(handler.ghost_signedRevealNotWhole(), 0, "P13: a one-shot reveal skipped a seat");
        assertEq(handler.ghost_staleSeals(), 0, "P13: a verifier seated twice on a submission kept its old seal");
        assertEq(handler.ghost_signedOverSealOnChain(), 0, "P13: a one-shot reveal went through over a stored seal");
    }

    /// @custom:invariant P14 Equivocation (docs/SECURITY.md P-40): a proof moves exactly one
    ///                   verifierStake plus the seat's reject bonds into the jackpot pool, pays the
    ///                   prover nothing and voids the seat, which is never slashed again (P2) nor
    ///                   paid a fee, bond, jackpot or pot share of that submission afterwards.
    function _assertEquivocationsSlashed() internal {
        assertEq(handler.ghost_equivocationMisbooked(), 0, "P14: a proof booked other than stake + bonds to the pool");
        assertEq(handler.ghost_proverPaid(), 0, "P14: a prover gained from a proof");
        assertEq(handler.ghost_voidedSeatStanding(), 0, "P14: a proven seat still stands");
        assertEq(handler.ghost_voidedSeatPaid(), 0, "P14: a voided seat was paid");
    }

    /// @custom:invariant P10 Verdicts handed to an aggregator (docs/SECURITY.md P-37): no batch
    ///                   sender's tokens or credit moved, and every seat in a batch ends sealed or
    ///                   revealed as it signed or sealed, never overwritten.
    function _assertBatchesHonest() internal {
        assertEq(handler.ghost_batchSenderCharged(), 0, "P10: a batch sender paid a seat's bond");
        assertEq(handler.ghost_batchSeatMisrecorded(), 0, "P10: a batch left a seat other than it signed");
    }

    /// @notice The handler's aggregator path (P10): one `commitVerdictsFor` seals every seat, one
    ///         `revealVerdictsFor` from a stranger reveals them, and the solver's secret comes with
    ///         the finalize (`revealSecretAndFinalize`), with every check of the handler held.
    function test_handler_batchedVerdictsThenRevealWithFinalize_succeeds() public {
        (address[] memory seats, uint32[] memory segments) = _assignedJob();
        (uint256 maskSeed, address rejecter) = _seedWithAReject(seats, segments.length, false);
        uint256 rejects = _rejectsOf(maskSeed, rejecter, segments.length);
        uint256 balance = token.balanceOf(rejecter);
        (, uint256 locked,,) = stakeManager.stakeOf(rejecter, Role.Verifier);
        handler.batchVerdicts(0, maskSeed);
        assertEq(handler.ghost_calls("commitVerdictsFor"), 1, "one batch of seals");
        handler.batchVerdicts(0, maskSeed);
        assertEq(handler.ghost_calls("revealVerdictsFor"), 1, "one batch of reveals");
        // The rejecting seat's reject bonds are its own verifier stake: the first in its seat's
        // lock since the draw, the others locked at the reveal; no token moved and the sender paid
        // nothing (P10).
        (, uint256 lockedAfter,,) = stakeManager.stakeOf(rejecter, Role.Verifier);
        assertEq(lockedAfter, locked + (rejects - 1) * jobManager.params().challengeBond, "the seat's own bonds");
        assertEq(token.balanceOf(rejecter), balance, "a token moved for the bond");
        uint256 seed;
        while (
            uint256(keccak256(abi.encode(seed, "reveal"))) % 8 == 0
                || uint256(keccak256(abi.encode(seed, "reveal and finalize"))) % 2 != 0
        ) {
            ++seed;
        }
        handler.finalize(seed);
        assertEq(handler.ghost_calls("revealSecretAndFinalize"), 1, "the secret came with the finalize");
        assertEq(handler.ghost_calls("finalize"), 1, "finalized");
        _assertBatchesHonest();
        invariant_noUnjustifiedSlash();
        invariant_escrowSolvent();
        invariant_forcedErrorsSettled();
        invariant_payoutsRouted();
    }

    /// @notice The same batches, where a rejecting seat has no free verifier stake left before the
    ///         reveal batch (P-38): the batch goes through without it, the sender pays nothing, and
    ///         the seat keeps its tokens, its stake and its seal.
    function test_handler_revealBatchSkipsASeatThatCannotCoverItsBond_succeeds() public {
        (address[] memory seats, uint32[] memory segments) = _assignedJob();
        (uint256 maskSeed,) = _seedWithAReject(seats, segments.length, true);
        handler.batchVerdicts(0, maskSeed);
        uint256[] memory balances = new uint256[](seats.length);
        uint256[] memory locked = new uint256[](seats.length);
        for (uint256 i; i < seats.length; ++i) {
            balances[i] = token.balanceOf(seats[i]);
            (, locked[i],,) = stakeManager.stakeOf(seats[i], Role.Verifier);
        }
        handler.batchVerdicts(0, maskSeed);
        assertEq(handler.ghost_calls("revealVerdictsFor skipped"), 1, "a seat was skipped");
        uint256 skipped;
        for (uint256 i; i < seats.length; ++i) {
            (bytes32 sealed_, bool revealed) = round.verdictCommitmentOf(_sid(1), seats[i]);
            if (sealed_ == bytes32(0) || revealed) continue;
            ++skipped;
            assertEq(token.balanceOf(seats[i]), balances[i], "the skipped seat paid nothing");
            (, uint256 lockedAfter,,) = stakeManager.stakeOf(seats[i], Role.Verifier);
            assertEq(lockedAfter, locked[i], "the skipped seat's stake: no bond locked, its free stake back");
        }
        assertEq(skipped, 1, "exactly the uncovered seat is left to reveal itself");
        _assertBatchesHonest();
    }

    /// @notice P12 and P5 on the forced-error payouts, which fuzzed runs reach rarely (a seat that
    ///         rejects the forced claim with the true end, or a challenge of an approval of it): job 1
    ///         draws a forced error on sample f, its first seat rejects f with the end it replayed
    ///         and, with two seats (not in the one-seat suite), the other approves every sample and
    ///         the whistleblower challenges its approval of f. The finalize pays the whistleblower
    ///         its bond and jackpot straight to its wallet (`Paid` from the Bonds and Jackpot
    ///         buckets, no credit) and restakes the catching seat's fee and jackpot
    ///         (`StakesRestaked`), and the handler's P12 check accepts exactly that.
    function test_handler_forcedErrorWinnersPaid_succeeds() public {
        uint256 f = _handlerForcedJob();
        (address[] memory seats,) = jobManager.getAssignment(1);
        address whistleblower = handler.whistleblowers(0);
        // The first seat rejects f with a replay (bit f + 8 set, bit 7 clear; the handler keeps a
        // mask divisible by 3); a second seat approves every sample.
        uint256 mask = uint256(1) << (f + 8);
        mask += (3 - mask % 3) % 3;
        handler.submitVerdicts(0, 0, mask);
        if (seats.length > 1) handler.submitVerdicts(0, 1, 0);
        for (uint256 i; i < seats.length; ++i) {
            handler.submitVerdicts(0, i, 0);
        }
        if (seats.length > 1) {
            handler.challengeApproval(0, f, 1);
            assertEq(jobManager.challengerOf(1, f, seats[1]), whistleblower, "the approval of f is challenged");
        }
        _settleForcedThroughHandler();
        assertEq(uint8(jobManager.getJob(1).status), uint8(JobStatus.Finalized), "finalized");
        assertEq(handler.ghost_winnersPaid(), seats.length, "a winner not paid");
        assertEq(escrow.creditOf(seats[0]), 0, "the rejecter credited");
        assertEq(escrow.creditOf(whistleblower), 0, "the whistleblower credited");
    }

    /// @notice P12 when a forced error's catches are paid at the settlement (docs/SECURITY.md, "Gas
    ///         cuts"): every seat holding f rejects it with a replay (a catch), and one seat also
    ///         rejects another sample of its own draw with an end of its own, so that sample stays
    ///         disputed and the job does not finalize in the call. Each catch is paid its bond and
    ///         jackpot in one transfer after the settlement's last `JackpotPaid`, and the payout
    ///         checker accepts exactly that.
    function test_handler_forcedCatchesWithADisputeLeft_paidAtSettlement_succeeds() public {
        uint256 f = _handlerForcedJob();
        (address[] memory seats,) = jobManager.getAssignment(1);
        uint256 catches;
        bool disputeLeft;
        for (uint256 i; i < seats.length; ++i) {
            uint256 own = jobManager.sampleMaskOf(1, seats[i]);
            uint256 mask = ((own >> f) & 1) << (f + 8);
            if (mask != 0) ++catches;
            for (uint256 g; !disputeLeft && own >> g != 0; ++g) {
                if (g == f || (own >> g) & 1 == 0) continue;
                mask |= uint256(1) << (g + 8);
                disputeLeft = true;
            }
            mask += (3 - mask % 3) % 3;
            handler.submitVerdicts(0, i, mask);
        }
        assertTrue(disputeLeft, "no seat holds a sample besides f");
        assertGt(catches, 0, "no seat holds f");
        for (uint256 i; i < seats.length; ++i) {
            handler.submitVerdicts(0, i, 0);
        }
        _settleForcedThroughHandler();
        assertEq(uint8(jobManager.getJob(1).status), uint8(JobStatus.Disputed), "a sample left to dispute");
        assertEq(handler.ghost_winnersPaid(), catches, "a catch not paid at the settlement");
    }

    /// @notice Job 1's forced error settled by the handler's `finalize` (a seed whose secret is
    ///         revealed), then P12, P5, P2 and solvency checked on it.
    function _settleForcedThroughHandler() internal {
        uint256 seed;
        while (uint256(keccak256(abi.encode(seed, "reveal"))) % 8 == 0) {
            ++seed;
        }
        handler.finalize(seed);
        assertEq(handler.ghost_forcedErrors(), 1, "the forced error settled");
        invariant_payoutsRouted();
        invariant_forcedErrorsSettled();
        invariant_noUnjustifiedSlash();
        invariant_escrowSolvent();
    }

    /// @notice P13: an aggregator that strips every entry's ends (each would open the claims, a
    ///         seat's reject turned into an approval) is refused whole, with no seat revealed; the
    ///         honest entries then go through, the approving ones without their ends.
    function test_handler_strippedEndsOfARejecterAreRefused_succeeds() public {
        address[] memory seats = _plainJob();
        handler.signedVerdicts(0, _signedSeed(seats, false, true, 1));
        assertEq(handler.ghost_calls("revealVerdictsSigned stripped"), 1, "the stripped call was tried");
        assertEq(handler.ghost_strippedRejectRecorded(), 0, "the stripped call was refused whole");
        assertEq(handler.ghost_signedReveals(), 1, "then the honest one went through");
        for (uint256 i; i < seats.length; ++i) {
            (, bool revealed) = round.verdictCommitmentOf(_sid(1), seats[i]);
            assertTrue(revealed, "every seat revealed");
        }
        _assertSignedRevealsWhole();
        invariant_escrowSolvent();
        invariant_stakeConservation();
    }

    /// @notice P13 and P14 through the handler (docs/SECURITY.md P-40): job 1's seats are revealed in
    ///         one `revealVerdictsSigned` (a seat whose reveal locks a bond first loses its free
    ///         stake: that call reverts whole, then the call goes through), a seat signs a second
    ///         seal and its own second key proves it, and the job is played to its end with every
    ///         check held.
    function test_handler_signedVerdictsThenEquivocation_succeeds() public {
        address[] memory seats = _plainJob();
        handler.signedVerdicts(0, _signedSeed(seats, true, false, 2));
        assertEq(handler.ghost_signedReveals(), 1, "one one-shot reveal");
        assertEq(handler.ghost_calls("revealVerdictsSigned reverted"), 1, "the uncovered call reverted whole");
        for (uint256 i; i < seats.length; ++i) {
            (bytes32 sealed_, bool revealed) = round.verdictCommitmentOf(_sid(1), seats[i]);
            assertEq(sealed_, bytes32(0), "no seal stored");
            assertTrue(revealed, "every seat revealed");
        }
        uint256 seed = _equivocationSeed(false, 1);
        address seat = seats[seed % seats.length];
        uint256 pool = escrow.jackpotPool();
        uint256 secondKeyBefore = token.balanceOf(handler.secondKey());
        handler.equivocate(0, seed);
        assertEq(handler.ghost_equivocations(), 1, "one proof");
        assertGte(escrow.jackpotPool() - pool, jobManager.params().verifierStake, "the stake joined the pool");
        assertEq(token.balanceOf(handler.secondKey()), secondKeyBefore, "the second key is paid nothing");
        (bool assigned,,,,) = jobManager.seatOf(_sid(1), seat);
        assertFalse(assigned, "the seat is voided");
        _assertSignedRevealsWhole();
        _assertEquivocationsSlashed();
        invariant_noUnjustifiedSlash();
        invariant_escrowSolvent();
        invariant_stakeConservation();
        _playToTheEnd();
        assertGt(handler.ghost_voidedSettled(), 0, "the voided seat's job ended");
        _assertEquivocationsSlashed();
        invariant_noUnjustifiedSlash();
        invariant_escrowSolvent();
        invariant_stakeConservation();
        invariant_payoutsRouted();
        invariant_forcedErrorsSettled();
    }

    /// @notice P14 against a seal on chain: job 1's seats seal and reveal themselves
    ///         (`commitVerdicts`, `revealVerdicts`), and the seat itself proves its second signed
    ///         seal against the stored one with an empty second signature: it loses one verifierStake
    ///         and its reject bonds (both locked from its verifier stake) and gains nothing.
    function test_handler_equivocationAgainstStoredSeal_succeeds() public {
        address[] memory seats = _plainJob();
        for (uint256 round_; round_ < 2; ++round_) {
            for (uint256 i; i < seats.length; ++i) {
                handler.submitVerdicts(0, i, 0);
            }
        }
        uint256 seed = _equivocationSeed(true, 2);
        address seat = seats[seed % seats.length];
        (bytes32 stored, bool revealed) = round.verdictCommitmentOf(_sid(1), seat);
        assertTrue(stored != bytes32(0) && revealed, "sealed on chain and revealed");
        (uint256 staked,,,) = stakeManager.stakeOf(seat, Role.Verifier);
        uint256 bonds;
        Verdict[] memory verdicts = jobManager.verdictOf(1, seat);
        for (uint256 t; t < verdicts.length; ++t) {
            if (verdicts[t] == Verdict.Reject || verdicts[t] == Verdict.Abstain) {
                bonds += jobManager.params().challengeBond;
            }
        }
        handler.equivocate(0, seed);
        assertEq(handler.ghost_calls("proveEquivocation stored"), 1, "proven against the stored seal");
        assertEq(handler.ghost_equivocations(), 1, "one proof");
        (uint256 stakedAfter,,,) = stakeManager.stakeOf(seat, Role.Verifier);
        assertEq(
            staked - stakedAfter, jobManager.params().verifierStake + bonds, "one verifierStake and the bonds slashed"
        );
        _assertEquivocationsSlashed();
        invariant_noUnjustifiedSlash();
        invariant_escrowSolvent();
        invariant_stakeConservation();
    }

    /// @notice Job 1 (12 segments) posted, claimed, committed and assigned through the handler with
    ///         its claims posted and no silent seat drawn (the first randomness that does so): its
    ///         seats.
    function _plainJob() internal returns (address[] memory seats) {
        for (uint256 seed;; ++seed) {
            uint256 snapshot = vmx.snapshotState();
            handler.postJob(0, 1 | (12 << 8), 1e18);
            handler.claimAndCommit(0, 0, true);
            handler.claimAndCommit(0, 0, true);
            uint256 randomnessBlock = jobManager.getJob(1).randomnessBlock;
            vm.roll(randomnessBlock + 1);
            vmx.setBlockhash(randomnessBlock, keccak256(abi.encode("plain draw", seed)));
            handler.assignVerifiers(1);
            if (jobManager.getJob(1).status == JobStatus.Verifying) {
                (seats,) = jobManager.getAssignment(1);
                (,,, uint64 claimsBlock) = round.roundOf(_sid(1));
                if (claimsBlock != 0 && !_isIn(seats, handler.silentSeat())) return seats;
            }
            vmx.revertToState(snapshot);
        }
    }

    /// @notice A mask seed for `signedVerdicts` on job 1: its rolls send first the call with a seat
    ///         that cannot cover its bonds (`_sendSignedUncovered`) iff `uncovered`, and, if
    ///         `stripped`, every entry stripped of its ends (`_sendStripped`) and the approving ones
    ///         short; and some seat seals at least `nonApprovals` non-approvals of its own samples:
    ///         the griefer (it abstains on all), or a seat whose mask (`_sealOf`'s rule) rejects them.
    ///         Two make a reveal lock a bond (the first is in the seat's lock since its draw); one
    ///         makes its ends differ from the claims.
    function _signedSeed(address[] memory seats, bool uncovered, bool stripped, uint256 nonApprovals)
        internal
        view
        returns (uint256 seed)
    {
        for (;; ++seed) {
            if ((uint256(keccak256(abi.encode(seed, "signed uncovered"))) % 4 == 0) != uncovered) continue;
            if (stripped && uint256(keccak256(abi.encode(seed, "signed stripped"))) % 3 != 0) continue;
            if (stripped && uint256(keccak256(abi.encode(seed, "signed short"))) % 2 != 0) continue;
            for (uint256 i; i < seats.length; ++i) {
                uint256 own = jobManager.sampleMaskOf(1, seats[i]);
                uint256 mask = uint256(keccak256(abi.encode(seed, seats[i])));
                uint256 bonded = seats[i] == handler.griefer() ? own : mask % 3 == 0 ? (mask >> 8) & own : 0;
                if (LibBits.popCount(bonded) >= nonApprovals) return seed;
            }
        }
    }

    /// @notice A seed under which `equivocate` proves against the stored seal iff `stored` (when the
    ///         seat has one), with prover `prover` (`ProtocolHandlerSigned._prover`: 1 the second key,
    ///         2 the seat itself).
    function _equivocationSeed(bool stored, uint256 prover) internal pure returns (uint256 seed) {
        while (
            (uint256(keccak256(abi.encode(seed, "stored"))) % 2 == 0) != stored
                || uint256(keccak256(abi.encode(seed, "prover"))) % 5 != prover
        ) {
            ++seed;
        }
    }

    /// @notice Advances job 1 (the only live job) until it ends, as `settle` advances jobs (no step
    ///         may revert).
    function _playToTheEnd() internal {
        for (uint256 i; i < 600; ++i) {
            JobStatus status = jobManager.getJob(1).status;
            if (
                status == JobStatus.Finalized || status == JobStatus.Rejected || status == JobStatus.Expired
                    || status == JobStatus.Cancelled
            ) return;
            uint256 choice = uint256(keccak256(abi.encode("play", i)));
            handler.advance(0, choice);
            if (i % 4 == 3) handler.warp(choice >> 128);
        }
        revert("job 1 did not end");
    }

    /// @notice Job 1 (12 segments) posted, claimed, committed and assigned through the handler
    ///         with a forced error drawn and neither seat the silent one or the griefer (the first
    ///         randomness that does so): the forced sample.
    function _handlerForcedJob() internal returns (uint256 f) {
        for (uint256 seed;; ++seed) {
            uint256 snapshot = vmx.snapshotState();
            handler.postJob(0, 1 | (12 << 8), 1e18);
            handler.claimAndCommit(0, 0, true);
            handler.claimAndCommit(0, 0, true);
            uint256 randomnessBlock = jobManager.getJob(1).randomnessBlock;
            vm.roll(randomnessBlock + 1);
            vmx.setBlockhash(randomnessBlock, keccak256(abi.encode("draw", seed)));
            handler.assignVerifiers(1);
            if (jobManager.getJob(1).status == JobStatus.Verifying) {
                (address[] memory seats,) = jobManager.getAssignment(1);
                bool forced;
                (forced, f) = round.drawForcedError(_sid(1), keccak256(abi.encode("secret", uint256(1))));
                bool plain = !_isIn(seats, handler.silentSeat()) && !_isIn(seats, handler.griefer());
                if (forced && plain) return f;
            }
            vmx.revertToState(snapshot);
        }
    }

    /// @notice Job 1 posted, claimed, committed and assigned through the handler: its seats and
    ///         segments.
    /// @notice Job 1, posted with two segments (the shape seed's bits from 8 on) and
    ///         assigned, so that a seat can reject two samples.
    function _assignedJob() internal returns (address[] memory seats, uint32[] memory segments) {
        handler.postJob(0, 3 | (2 << 8), 1e18);
        handler.claimAndCommit(0, 0, true);
        handler.claimAndCommit(0, 0, true);
        handler.assignVerifiers(1);
        (seats, segments) = jobManager.getAssignment(1);
    }

    /// @notice A mask seed under which the handler's batch seals rejects of two samples or more by a
    ///         seat that is neither silent nor the griefer (`ProtocolHandler._sealOf`'s rule: its
    ///         reveal locks a bond from free stake, the first being in its seat's lock), and whose
    ///         reveal batch has a seat lose its free verifier stake iff `uncovered` (`_revealBatch`'s roll).
    function _seedWithAReject(address[] memory seats, uint256 samples, bool uncovered)
        internal
        view
        returns (uint256 seed, address rejecter)
    {
        require(samples > 1, "two samples to reject");
        for (;; ++seed) {
            if ((uint256(keccak256(abi.encode(seed, "uncovered"))) % 3 == 0) != uncovered) continue;
            for (uint256 i; i < seats.length; ++i) {
                if (seats[i] == handler.silentSeat() || seats[i] == handler.griefer()) continue;
                if (_rejectsOf(seed, seats[i], samples) > 1) return (seed, seats[i]);
            }
        }
    }

    /// @notice Samples `seat` rejects under the handler's mask seed `seed` (its `_sealed` draw: a
    ///         third of the seeds reject the samples of the mask's bits from 8 on, every seat holding
    ///         every sample here).
    function _rejectsOf(uint256 seed, address seat, uint256 samples) internal pure returns (uint256 count) {
        uint256 mask = uint256(keccak256(abi.encode(seed, seat)));
        if (mask % 3 == 0) count = LibBits.popCount((mask >> 8) & ((uint256(1) << samples) - 1));
    }

    /// @notice From a fresh deployment, `settle` alone reaches all four milestones.
    function test_settle_reachesProgress_succeeds() public {
        handler.settle();
        assertGt(handler.ghost_slashes(), 0, "P2: no slash");
        assertGt(handler.ghost_finalizedMints(), 0, "P3: no finalized mint");
        assertGt(handler.ghost_forcedErrors(), 0, "P5: no forced-error settlement");
        assertGt(handler.ghost_rewardsPaid(), 0, "P12: no reward restaked");
        invariant_payoutsRouted();
    }

    /// @notice The handler's P-35 path: a Committed job left past its assign deadline is expired by
    ///         `advance` (the handler's step of a Committed job), with nobody slashed (P2) and P9.
    function test_handler_committedPastAssignDeadline_expires_succeeds() public {
        handler.postJob(0, 3, 1e18);
        handler.claimAndCommit(0, 0, true);
        handler.claimAndCommit(0, 0, true);
        assertEq(uint8(jobManager.getJob(1).status), uint8(JobStatus.Committed), "committed");
        uint256 choice;
        while (uint256(keccak256(abi.encode(choice, "unassigned"))) % 6 != 0) {
            ++choice;
        }
        handler.advance(0, choice);
        assertEq(uint8(jobManager.getJob(1).status), uint8(JobStatus.Expired), "expired");
        assertEq(handler.ghost_calls("expireUnassigned"), 1, "through expireUnassigned");
        invariant_noUnjustifiedSlash();
        invariant_escrowSolvent();
        invariant_expiryJudgesRevealedRejects();
    }

    /// @notice Default config with V=2, q=3, K=3 so that 7 verifiers can fill jobs and committees,
    ///         long vote, verdict and reveal windows so that handler warps (withdrawals, deadlines) rarely
    ///         skip a vote or a reveal, and
    ///         a forced error in about one job in three.
    function _config() internal pure virtual returns (Deploy.Config memory cfg) {
        cfg = Deploy.defaultConfig();
        cfg.params.verifiersPerJob = 2;
        cfg.params.samplesPerJob = 3;
        cfg.forcedErrorRateBps = 3000;
        cfg.minStake = [uint256(100e18), 100e18, 10e18];
        cfg.unbondingDelay = 1 hours;
        cfg.voteCommitWindow = 2 days;
        cfg.voteRevealWindow = 2 days;
        cfg.params.verdictWindow = 2 days;
        cfg.params.revealWindow = 2 days;
    }

    /// @custom:invariant P1a The StakeManager's token balance equals the sum over every account and
    ///                  role of staked + unbonding, and locked never exceeds staked; the active
    ///                  verifier set holds each active verifier once with its own id, and nobody else;
    ///                  with every job ended and every dispute resolved, nothing is locked.
    /// forge-config: default.invariant.runs = 32
    /// forge-config: default.invariant.depth = 256
    /// forge-config: ci.invariant.runs = 64
    /// forge-config: ci.invariant.depth = 384
    function invariant_stakeConservation() public {
        uint256 sum;
        uint256 count = handler.actorCount();
        for (uint256 i; i < count; ++i) {
            address account = handler.actors(i);
            for (uint8 r; r < 3; ++r) {
                (uint256 staked, uint256 locked, uint256 unbonding,) = stakeManager.stakeOf(account, Role(r));
                assertLte(locked, staked, "locked > staked");
                sum += staked + unbonding;
            }
        }
        assertEq(token.balanceOf(address(stakeManager)), sum, "stake balance != sum of stakes");
        assertEq(stakeManager.totalHeld(), sum, "totalHeld != sum of stakes");
        _assertActiveVerifierSet();
        if (handler.quiescent()) _assertNothingLocked(count);
    }

    /// @notice No lock outlives what it secures: with every job ended and every dispute resolved,
    ///         no account holds a locked stake of any role (a seat, claim or arbiter lock released
    ///         twice reverts; one never released, or released short, is caught here).
    function _assertNothingLocked(uint256 count) internal {
        for (uint256 i; i < count; ++i) {
            address account = handler.actors(i);
            for (uint8 r; r < 3; ++r) {
                (, uint256 locked,,) = stakeManager.stakeOf(account, Role(r));
                assertEq(locked, 0, "a lock outlived its job");
            }
        }
    }

    /// @notice After any mix of stakes, unbonds and slashes: every member of the active verifier set
    ///         is active and listed once, every active actor is a member, and the whole-set draw
    ///         returns each member with its own verifier id (each member carries its id).
    function _assertActiveVerifierSet() internal {
        uint256 members = stakeManager.verifierCount();
        (address[] memory drawn, uint32[] memory ids,) =
            stakeManager.drawVerifiers(bytes32(members), members, 0, new address[](0), new address[](0));
        assertEq(drawn.length, members, "the whole-set draw missed a member");
        for (uint256 i; i < members; ++i) {
            address member = stakeManager.verifierAt(i);
            assertTrue(stakeManager.isActive(member, Role.Verifier), "an inactive verifier in the set");
            assertEq(uint256(ids[i]), uint256(stakeManager.verifierIdOf(drawn[i])), "a drawn id is not its own");
            for (uint256 j; j < i; ++j) {
                assertTrue(stakeManager.verifierAt(j) != member, "a verifier in the set twice");
            }
        }
        uint256 count = handler.actorCount();
        for (uint256 i; i < count; ++i) {
            address account = handler.actors(i);
            if (!stakeManager.isActive(account, Role.Verifier)) continue;
            bool listed;
            for (uint256 j; j < members && !listed; ++j) {
                listed = stakeManager.verifierAt(j) == account;
            }
            assertTrue(listed, "an active verifier missing from the set");
        }
    }

    /// @custom:invariant P1b Escrow solvency: the Escrow's token balance equals every escrow, bond and
    ///                  credit plus the jackpot pool (exactly, since nobody donates tokens: nothing is
    ///                  unbooked and no dispute pot is left over), the credits add up per account,
    ///                  and the JobManager holds no tokens.
    /// forge-config: default.invariant.runs = 32
    /// forge-config: default.invariant.depth = 256
    /// forge-config: ci.invariant.runs = 64
    /// forge-config: ci.invariant.depth = 384
    function invariant_escrowSolvent() public {
        (uint256 escrowed, uint256 bonds, uint256 credits, uint256 pool) = escrow.liabilities();
        assertEq(token.balanceOf(address(escrow)), escrowed + bonds + credits + pool, "Escrow balance != liabilities");
        assertEq(escrow.bucketOf(Bucket.Unbooked), 0, "Escrow holds unbooked tokens");
        assertEq(escrow.bucketOf(Bucket.Pot), 0, "dispute pot left over");
        assertEq(token.balanceOf(address(jobManager)), 0, "JobManager holds tokens");
        assertEq(pool, escrow.jackpotPool(), "pool != jackpotPool()");
        uint256 sum = escrow.creditOf(address(this));
        uint256 count = handler.actorCount();
        for (uint256 i; i < count; ++i) {
            sum += escrow.creditOf(handler.actors(i));
        }
        assertEq(sum, credits, "credits do not add up");
    }

    /// @custom:invariant P2 No stake is slashed without a lost verdict, lost challenge, missed commit,
    ///                  missed verdict or missed vote.
    /// forge-config: default.invariant.runs = 32
    /// forge-config: default.invariant.depth = 256
    /// forge-config: ci.invariant.runs = 64
    /// forge-config: ci.invariant.depth = 384
    function invariant_noUnjustifiedSlash() public {
        assertEq(handler.ghost_unjustifiedSlashes(), 0, "unjustified slash");
    }

    /// @custom:invariant P5 A forced error slashes every approver of its sample and no rejecter, and
    ///                  pays each rejecter its bond back plus the jackpot while the pool covers it.
    /// forge-config: default.invariant.runs = 32
    /// forge-config: default.invariant.depth = 256
    /// forge-config: ci.invariant.runs = 64
    /// forge-config: ci.invariant.depth = 384
    function invariant_forcedErrorsSettled() public {
        assertEq(handler.ghost_forcedApproverNotSlashed(), 0, "approver of a forced error kept its stake");
        assertEq(handler.ghost_forcedRejecterSlashed(), 0, "rejecter of a forced error slashed");
        assertEq(handler.ghost_forcedWinnerUnpaid(), 0, "rejecter of a forced error not paid");
        assertEq(handler.ghost_forcedMismatchUndisputed(), 0, "another end than the true one left undisputed");
    }

    /// @custom:invariant P6 Settlement is keyed by party and role: when a committee rules a disputed
    ///                  sample valid, every rejecter of it forfeits its reject bond, also one that
    ///                  was paid as the whistleblower of another verifier's approval of it (two
    ///                  verifiers of the pool also hold the whistleblower role and challenge).
    /// forge-config: default.invariant.runs = 32
    /// forge-config: default.invariant.depth = 256
    /// forge-config: ci.invariant.runs = 64
    /// forge-config: ci.invariant.depth = 384
    function invariant_validRejectersForfeitBonds() public {
        assertEq(handler.ghost_validRejecterKeptBond(), 0, "a rejecter of a valid sample kept its bond");
    }

    /// @custom:invariant P9 Nothing waits forever and expiry forgives no revealed reject: a job that
    ///                  expires (after every reassignment, or Committed past its assign deadline)
    ///                  has had every sample a seat revealed a reject of judged by a ruling. The
    ///                  handler's silent seat never seals; its griefer abstains on every sample.
    /// forge-config: default.invariant.runs = 32
    /// forge-config: default.invariant.depth = 256
    /// forge-config: ci.invariant.runs = 64
    /// forge-config: ci.invariant.depth = 384
    function invariant_expiryJudgesRevealedRejects() public {
        assertEq(handler.ghost_unjudgedRejectExpired(), 0, "a job expired with an unjudged revealed reject");
    }

    /// @custom:invariant P12 Payouts: a finalize that finalizes a job restakes its solver's
    ///                   reward, exactly the job's reward, once (`IStakeManager.StakesRestaked`, no
    ///                   credit to claim), and no finalize or resolve gives the solver anything
    ///                   else; a job's end pays its earnings (the reward, the seats' fees, a
    ///                   catching seat's jackpot when the settlement finalizes the job) in one
    ///                   `Paid` to the StakeManager of exactly what its restakes add, each to a
    ///                   party of the job; every other `Paid` is the JobManager's and the token
    ///                   transfer of exactly its amount to its account, and is a forced-error
    ///                   winner's bond and jackpot (from the Bonds and Jackpot buckets, only in the
    ///                   finalize that settles the job's forced error, to one of its winners, right
    ///                   after the `JackpotPaid` for that account, of exactly the bond and that
    ///                   jackpot); every winner of a settled forced error is paid so.
    /// forge-config: default.invariant.runs = 32
    /// forge-config: default.invariant.depth = 256
    /// forge-config: ci.invariant.runs = 64
    /// forge-config: ci.invariant.depth = 384
    function invariant_payoutsRouted() public {
        assertEq(handler.ghost_rewardNotPaid(), 0, "P12: a finalized job's reward not restaked for its solver");
        assertEq(
            handler.ghost_payoutMisrouted(),
            0,
            "P12: a payout other than the restaked earnings or a forced-error winner's transfer"
        );
        assertEq(handler.ghost_winnerNotPaid(), 0, "P12: a forced-error winner not paid");
    }

    /// @custom:invariant P3 Ownership shares minted equal the total steps of finalized jobs.
    /// forge-config: default.invariant.runs = 32
    /// forge-config: default.invariant.depth = 256
    /// forge-config: ci.invariant.runs = 64
    /// forge-config: ci.invariant.depth = 384
    function invariant_sharesMatchVerifiedSteps() public {
        // Only the slot jobs whose final state is on the lineage mint, 1 share per step at the
        // handler's 1 FLOP per step.
        bytes32 modelId = keccak256("digits-mlp");
        uint256 steps;
        uint256 length = registry.lineageLength(modelId);
        for (uint256 i; i < length; ++i) {
            (, uint256 jobId) = registry.lineageAt(modelId, i);
            steps += jobManager.getJob(jobId).totalSteps;
        }
        uint256 count = jobManager.jobCount();
        uint256 finalized;
        for (uint256 jobId = 1; jobId <= count; ++jobId) {
            Job memory job = jobManager.getJob(jobId);
            if (job.status == JobStatus.Finalized) finalized += job.totalSteps;
        }
        address shares = registry.sharesOf(modelId);
        uint256 supply = shares == address(0) ? 0 : ModelShares(shares).totalSupply();
        (,, uint64 computePerStep,) = registry.modelSpecOf(modelId);
        assertEq(supply, steps * computePerStep, "shares != lineage compute");
        assertLte(steps, finalized, "lineage steps beyond finalized steps");
    }
}
