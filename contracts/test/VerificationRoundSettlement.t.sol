// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Vm} from "@prb/test/Vm.sol";
import {VerificationRound_Init} from "./VerificationRound.t.sol";
// Libraries
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
// Interfaces
import {IEscrow} from "../src/interfaces/IEscrow.sol";
import {IJobManager} from "../src/interfaces/IJobManager.sol";
import {IJobManagerErrors} from "../src/interfaces/IJobManagerErrors.sol";
import {IVerificationRound} from "../src/interfaces/IVerificationRound.sol";
// Types
import {Bucket} from "../src/types/EscrowTypes.sol";
import {JobStatus, Verdict} from "../src/types/JobTypes.sol";
import {Role} from "../src/types/Role.sol";
import {RoundOutcome} from "../src/types/RoundTypes.sol";

/// @notice A Verifying job at a 50% forced-error rate whose draw forces an error on sample `f`.
abstract contract VerificationRound_Forced_Init is VerificationRound_Init {
    uint256 internal jobId;
    address[] internal verifiers;
    uint256 internal f;

    function setUp() public virtual override {
        super.setUp();
        _redeployWithRate(5000);
        jobId = _forcedVerifyingJob();
        verifiers = _assigned(jobId);
        (, f) = round.drawForcedError(_sid(jobId), _secret(jobId));
    }
}

/// @notice Settlement of each round outcome at `JobManager.finalize` (docs/FORCED_ERRORS.md section 3).
contract VerificationRound_Settlement_Test is VerificationRound_Forced_Init {
    /// @notice Token balances (wallets, wei) of `accounts`.
    function _wallets(address[] memory accounts) internal view returns (uint256[] memory amounts) {
        amounts = new uint256[](accounts.length);
        for (uint256 i; i < accounts.length; ++i) {
            amounts[i] = token.balanceOf(accounts[i]);
        }
    }

    /// @notice Verifier stakes (wei) of `accounts`.
    function _verifierStakes(address[] memory accounts) internal view returns (uint256[] memory amounts) {
        amounts = new uint256[](accounts.length);
        for (uint256 i; i < accounts.length; ++i) {
            amounts[i] = _staked(accounts[i], Role.Verifier);
        }
    }

    function _fund(uint256 amount) internal {
        vm.prank(stranger);
        escrow.fundJackpot(amount);
    }

    function test_finalize_forced_slashesApproversPaysRejecters_succeeds() public {
        _fund(100e18);
        _submit(jobId, verifiers[0], 0);
        _submit(jobId, verifiers[1], uint256(1) << f);
        _submit(jobId, verifiers[2], uint256(1) << f);
        _passChallengeWindow(jobId);
        uint256 paid = 2 * params.jackpot;
        uint256[] memory wallets = _wallets(verifiers);
        uint256 solverWallet = token.balanceOf(solver);
        vm.expectEmit(address(jobManager));
        emit IJobManager.ForcedErrorSettled(jobId, f, params.verifierStake, paid);
        jobManager.finalize(jobId);
        // The forced sample left the disputed set: no dispute, the job is finalized.
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        // The pool also holds the job's forced-error premium, pooled at its claim.
        assertEq(escrow.jackpotPool(), 100e18 + jobManager.forcedErrorPremium() + params.verifierStake - paid);
        assertEq(_staked(verifiers[0], Role.Verifier), 500e18 - params.verifierStake);
        assertEq(escrow.creditOf(verifiers[0]), 0);
        assertEq(token.balanceOf(verifiers[0]), wallets[0], "the slashed approver is paid nothing");
        for (uint256 i = 1; i < 3; ++i) {
            // Fee and jackpot are restaked (no wallet payment, no credit to claim); the reject bond
            // was stake and is unlocked with the seat.
            assertEq(escrow.creditOf(verifiers[i]), 0);
            assertEq(token.balanceOf(verifiers[i]), wallets[i], "no wallet payment");
            assertEq(_staked(verifiers[i], Role.Verifier), 500e18 + params.verifierFee + params.jackpot);
            assertEq(_locked(verifiers[i], Role.Verifier), 0);
        }
        // The approver's fee went back to the submitter; the solver is not penalised: its reward
        // is restaked.
        assertEq(escrow.creditOf(submitter), params.verifierFee);
        assertEq(token.balanceOf(solver), solverWallet, "no wallet payment");
        assertEq(escrow.creditOf(solver), 0);
        assertEq(_staked(solver, Role.Solver), 1000e18 + REWARD);
        _assertEscrowSolvent();
    }

    function test_finalize_forced_whistleblowerPaid_succeeds() public {
        _submitAll(jobId, 0);
        vm.prank(whistleblower);
        jobManager.challengeApproval(jobId, f, verifiers[1]);
        _passChallengeWindow(jobId);
        uint256 wbBefore = token.balanceOf(whistleblower);
        // The winner's bond comes back from the bonds and its jackpot from the pool, both paid
        // straight to its wallet (`Paid`), not credited.
        vm.expectEmit(address(jobManager));
        emit IJobManager.JackpotPaid(jobId, whistleblower, params.jackpot);
        vm.expectEmit(address(escrow));
        emit IEscrow.Paid(address(jobManager), whistleblower, Bucket.Bonds, params.challengeBond);
        vm.expectEmit(address(escrow));
        emit IEscrow.Paid(address(jobManager), whistleblower, Bucket.Jackpot, params.jackpot);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        // Pool = the job's premium + 3 slashed stakes; the whistleblower gets its bond back plus a
        // jackpot in its wallet, and no credit.
        assertEq(escrow.creditOf(whistleblower), 0, "a forced-error winner is credited");
        assertEq(
            token.balanceOf(whistleblower) - wbBefore,
            params.challengeBond + params.jackpot,
            "a forced-error winner's wallet"
        );
        assertEq(escrow.jackpotPool(), jobManager.forcedErrorPremium() + 3 * params.verifierStake - params.jackpot);
        for (uint256 i; i < 3; ++i) {
            assertEq(_staked(verifiers[i], Role.Verifier), 500e18 - params.verifierStake);
        }
        _assertEscrowSolvent();
    }

    function test_finalize_forced_poolShortfall_paysMin_succeeds() public {
        // Nobody approves: the pool holds only the job's premium (30e18 at rate 50%) and what was
        // funded, less than three jackpots.
        assertEq(jobManager.forcedErrorPremium(), 30e18);
        _fund(15e18);
        for (uint256 i; i < 3; ++i) {
            _submit(jobId, verifiers[i], uint256(1) << f);
        }
        _passChallengeWindow(jobId);
        uint256[] memory wallets = _wallets(verifiers);
        uint256[] memory stakes = _verifierStakes(verifiers);
        vm.expectEmit(address(jobManager));
        emit IJobManager.JackpotPaid(jobId, verifiers[0], 20e18);
        vm.expectEmit(address(jobManager));
        emit IJobManager.JackpotPaid(jobId, verifiers[1], 20e18);
        vm.expectEmit(address(jobManager));
        emit IJobManager.JackpotPaid(jobId, verifiers[2], 5e18);
        jobManager.finalize(jobId);
        assertEq(escrow.jackpotPool(), 0);
        // Fee and the jackpot each seat was paid (the last one min(jackpot, pool)) are restaked,
        // no wallet payment, no credit; the bond is unlocked from stake.
        uint256[3] memory jackpots = [uint256(20e18), 20e18, 5e18];
        for (uint256 i; i < 3; ++i) {
            assertEq(escrow.creditOf(verifiers[i]), 0);
            assertEq(token.balanceOf(verifiers[i]), wallets[i], "no wallet payment");
            assertEq(
                _staked(verifiers[i], Role.Verifier),
                stakes[i] + params.verifierFee + jackpots[i],
                "fee and jackpot restaked"
            );
            assertEq(_locked(verifiers[i], Role.Verifier), 0, "bond unlocked");
        }
        _assertEscrowSolvent();
    }

    /// @notice A forced error caught by every seat finalizes in its settlement without writing the
    ///         seats or the submission's word (docs/SECURITY.md, "Gas cuts"): the job reads as
    ///         Finalized with nothing disputed (`disputedMaskOf` is 0, though the word still holds
    ///         the forced sample's bit), and each catch still reads as the approval of the true end
    ///         it replayed (`verdictOf`), though its word keeps the reject it revealed.
    function test_finalize_forcedCaught_endsWithNothingDisputed_succeeds() public {
        _fund(100e18);
        for (uint256 i; i < 3; ++i) {
            _submit(jobId, verifiers[i], uint256(1) << f);
        }
        _passChallengeWindow(jobId);
        assertEq(jobManager.disputedMaskOf(jobId), uint256(1) << f, "the forced sample is disputed");
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        assertEq(jobManager.disputedMaskOf(jobId), 0, "a finalized job has nothing disputed");
        for (uint256 i; i < 3; ++i) {
            assertEq(
                uint8(jobManager.verdictOf(jobId, verifiers[i])[f]), uint8(Verdict.Approve), "approval of the true end"
            );
            assertEq(_locked(verifiers[i], Role.Verifier), 0, "seat and bond unlocked");
        }
    }

    /// @notice Caught and final in one call (docs/SECURITY.md, "Gas cuts"): when the forced error
    ///         leaves nothing disputed, the jackpots move into Bucket.Escrowed, and the solver's
    ///         reward and every catching seat's fee and jackpot leave the Escrow in one token
    ///         transfer for the whole job, to the StakeManager (`IEscrow.Paid`), which restakes
    ///         them: one `StakesRestaked` for the solver, one for the seats (each seat's lock, its
    ///         reject bond with it, off; its fee and jackpot on its stake). No wallet is paid; the
    ///         amounts and the buckets' books are those of a transfer per party.
    function test_finalize_forcedCaught_oneTransferForTheJob_succeeds() public {
        _fund(100e18);
        for (uint256 i; i < 3; ++i) {
            _submit(jobId, verifiers[i], uint256(1) << f);
        }
        _passChallengeWindow(jobId);
        uint256[] memory wallets = _wallets(verifiers);
        uint256[] memory stakes = _verifierStakes(verifiers);
        uint256 solverWallet = token.balanceOf(solver);
        uint256 solverStaked = _staked(solver, Role.Solver);
        uint256 held = stakeManager.totalHeld();
        (uint256 escrowedBefore, uint256 bondsBefore,,) = escrow.liabilities();
        uint256 catches = 3 * params.jackpot;
        uint256 total = REWARD + 3 * params.verifierFee + catches;
        vm.expectEmit(address(escrow));
        emit IEscrow.Moved(address(jobManager), Bucket.Jackpot, Bucket.Escrowed, catches);
        _expectStakesFunded(total);
        _expectSolverRestaked(solver, REWARD);
        _expectSeatsRestaked(verifiers, _seatLock(), params.verifierFee + params.jackpot);
        vm.recordLogs();
        jobManager.finalize(jobId);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        uint256 transfers = 0;
        for (uint256 j; j < logs.length; ++j) {
            if (logs[j].emitter != address(token) || logs[j].topics[0] != IERC20.Transfer.selector) continue;
            ++transfers;
            assertEq(logs[j].topics[1], bytes32(uint256(uint160(address(escrow)))), "from the Escrow");
            assertEq(logs[j].topics[2], bytes32(uint256(uint160(address(stakeManager)))), "to the StakeManager");
            assertEq(abi.decode(logs[j].data, (uint256)), total, "reward, fees and jackpots in the one transfer");
        }
        assertEq(transfers, 1, "one transfer for the whole job");
        for (uint256 i; i < 3; ++i) {
            assertEq(token.balanceOf(verifiers[i]), wallets[i], "no wallet payment");
            assertEq(_staked(verifiers[i], Role.Verifier), stakes[i] + params.verifierFee + params.jackpot);
            assertEq(escrow.creditOf(verifiers[i]), 0);
            // Its reject bond was stake: unlocked with its seat, nothing left locked.
            assertEq(_locked(verifiers[i], Role.Verifier), 0, "bond unlocked with the seat");
        }
        assertEq(token.balanceOf(solver), solverWallet, "no wallet payment");
        assertEq(_staked(solver, Role.Solver), solverStaked + REWARD, "reward restaked");
        assertEq(stakeManager.totalHeld() - held, total, "the StakeManager holds what was restaked");
        // The job's escrow (reward and fees) left the books; no bond was ever in them.
        (uint256 escrowedAfter, uint256 bondsAfter,,) = escrow.liabilities();
        assertEq(escrowedBefore - escrowedAfter, REWARD + 3 * params.verifierFee, "escrowed");
        assertEq(bondsBefore, 0, "no bond booked at the Escrow");
        assertEq(bondsAfter, 0, "bonds");
        assertEq(escrow.jackpotPool(), 100e18 + jobManager.forcedErrorPremium() - catches);
        _assertEscrowSolvent();
    }

    function test_finalize_forced_committedNeverRevealed_slashedAsMissed_succeeds() public {
        _submit(jobId, verifiers[0], uint256(1) << f);
        _submit(jobId, verifiers[1], uint256(1) << f);
        // Verifier 2 seals but never reveals.
        _seal(jobId, verifiers[2], uint256(1) << f);
        _revealPending(jobId);
        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        _revealSecret(jobId);
        vm.expectEmit(address(jobManager));
        emit IJobManager.VerdictMissed(jobId, verifiers[2], params.verifierStake);
        jobManager.finalize(jobId);
        assertEq(_staked(verifiers[2], Role.Verifier), 500e18 - params.verifierStake);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        _assertEscrowSolvent();
    }

    function test_finalize_forcedPlusGenuineDispute_succeeds() public {
        _fund(100e18);
        uint256 g = (f + 1) % 4;
        _submit(jobId, verifiers[0], (uint256(1) << f) | (uint256(1) << g));
        _submit(jobId, verifiers[1], 0);
        _submit(jobId, verifiers[2], uint256(1) << f);
        _passChallengeWindow(jobId);
        uint256 wallet0 = token.balanceOf(verifiers[0]);
        jobManager.finalize(jobId);
        // f is settled by the forced-error rule; g goes to the adjudicator.
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Disputed));
        assertEq(jobManager.disputedSampleOf(jobId), g);
        assertEq(jobManager.disputedMaskOf(jobId), uint256(1) << g);
        assertEq(_staked(verifiers[1], Role.Verifier), 500e18 - params.verifierStake);
        // The jackpot is paid to the wallet at once (no fee while disputed) and its bond on f
        // unlocked; its seat and its bond on g stay locked.
        assertEq(token.balanceOf(verifiers[0]) - wallet0, params.jackpot);
        assertEq(escrow.creditOf(verifiers[0]), 0);
        assertEq(_locked(verifiers[0], Role.Verifier), params.verifierStake + params.challengeBond);
        // The committed segment g is valid: verifier 0 loses its stake and its bond on g.
        _arbitrate(_job(jobId).disputeId, true);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        assertEq(_staked(verifiers[0], Role.Verifier), 500e18 - params.verifierStake - params.challengeBond);
        assertEq(_locked(verifiers[0], Role.Verifier), 0);
        // The standing seat's fee is restaked at the job's end.
        assertEq(_staked(verifiers[2], Role.Verifier), 500e18 + params.verifierFee);
        _assertEscrowSolvent();
    }

    function test_finalize_noClaims_rejectsAndReleases_succeeds() public {
        uint256 bare = _unclaimedJob();
        address[] memory assigned = _assigned(bare);
        vm.warp(uint256(_job(bare).challengeDeadline) + 1);
        uint256 creditBefore = escrow.creditOf(submitter);
        uint256 poolBefore = escrow.jackpotPool();
        uint256[] memory wallets = _wallets(assigned);
        uint256[] memory stakes = _verifierStakes(assigned);
        uint256[] memory lockedBefore = new uint256[](assigned.length);
        for (uint256 i; i < assigned.length; ++i) {
            lockedBefore[i] = _locked(assigned[i], Role.Verifier);
        }
        vm.expectEmit(address(jobManager));
        emit IJobManager.SolverFaulted(bare, solver, RoundOutcome.NoClaims, params.solverStake);
        jobManager.finalize(bare);
        assertEq(uint8(_job(bare).status), uint8(JobStatus.Rejected));
        // The slash joins the jackpot pool; the verifiers the job locked have their fee restaked.
        assertEq(escrow.creditOf(submitter) - creditBefore, REWARD);
        assertEq(escrow.jackpotPool() - poolBefore, params.solverStake);
        for (uint256 i; i < assigned.length; ++i) {
            assertEq(stakes[i], 500e18);
            assertEq(_staked(assigned[i], Role.Verifier), 500e18 + params.verifierFee, "fee restaked");
            assertEq(_locked(assigned[i], Role.Verifier), lockedBefore[i] - _seatLock(), "its seat's whole lock");
            assertEq(token.balanceOf(assigned[i]), wallets[i], "no wallet payment");
            assertEq(escrow.creditOf(assigned[i]), 0);
        }
        _assertEscrowSolvent();
    }

    function test_finalize_noReveal_slashesSolverReturnsBonds_succeeds() public {
        _submit(jobId, verifiers[0], 1);
        _submit(jobId, verifiers[1], 0);
        _seal(jobId, verifiers[2], 0);
        _revealPending(jobId);
        vm.prank(whistleblower);
        jobManager.challengeApproval(jobId, 2, verifiers[1]);
        vm.warp(uint256(_job(jobId).challengeDeadline) + params.revealWindow + 1);
        uint256[] memory wallets = _wallets(verifiers);
        uint256[] memory stakes = _verifierStakes(verifiers);
        vm.expectEmit(address(jobManager));
        emit IJobManager.SolverFaulted(jobId, solver, RoundOutcome.NoReveal, params.solverStake);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Rejected));
        assertEq(_staked(solver, Role.Solver), 1000e18 - params.solverStake);
        assertEq(_staked(verifiers[2], Role.Verifier), 500e18 - params.verifierStake);
        // The seats that revealed have their fee restaked, their wallets untouched; the rejecter's
        // bond is unlocked from its stake.
        assertEq(escrow.creditOf(verifiers[0]), 0);
        assertEq(_locked(verifiers[0], Role.Verifier), 0);
        assertEq(stakes[0], 500e18);
        assertEq(_staked(verifiers[0], Role.Verifier), 500e18 + params.verifierFee);
        assertEq(token.balanceOf(verifiers[0]), wallets[0]);
        assertEq(escrow.creditOf(verifiers[1]), 0);
        assertEq(token.balanceOf(verifiers[1]), wallets[1]);
        assertEq(_staked(verifiers[1], Role.Verifier), stakes[1] + params.verifierFee);
        assertEq(escrow.creditOf(verifiers[2]), 0);
        assertEq(token.balanceOf(verifiers[2]), wallets[2], "the missed seat is paid nothing");
        assertEq(escrow.creditOf(whistleblower), params.challengeBond);
        // The solver's slash and the missed verifier's stake join the jackpot pool; the missed
        // verifier's fee goes back to the submitter.
        assertEq(escrow.creditOf(submitter), REWARD + params.verifierFee);
        assertEq(escrow.jackpotPool(), jobManager.forcedErrorPremium() + params.solverStake + params.verifierStake);
        (uint256 escrowed, uint256 bonds,,) = escrow.liabilities();
        assertEq(escrowed, 0);
        assertEq(bonds, 0);
        _assertEscrowSolvent();
    }

    function test_finalize_roundPending_reverts() public {
        _submitAll(jobId, 0);
        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        vm.expectRevert(abi.encodeWithSelector(IJobManagerErrors.RoundPending.selector, jobId));
        jobManager.finalize(jobId);
    }
}

/// @notice P-9 (docs/SECURITY.md): a forced error must not shield its segment. Verifiers seal the end
///         they replayed; at the forced-error settlement a rejecter whose end is the solver's true end
///         earns the jackpot, and one whose end differs keeps the forced sample disputed, so a cheat
///         inside the forced segment is still caught and a jackpot needs a replay.
contract VerificationRound_ForcedEnd_Test is VerificationRound_Forced_Init {
    bytes32 internal constant HONEST_END = keccak256("the end an honest replay reaches");

    function setUp() public override {
        super.setUp();
        vm.prank(stranger);
        escrow.fundJackpot(100e18);
    }

    /// @notice `verifier` seals the claims except `end` for the forced sample.
    function _submitForcedEnd(address verifier, bytes32 end) internal {
        (, bytes32[] memory ends) = _claimsOf(_sid(jobId));
        ends[f] = end;
        _submitEnds(jobId, verifier, ends);
    }

    /// @notice The solver cheated inside the forced segment (its committed end is not what the
    ///         segment trains to) and two accomplices seal that end. The honest verifier's end differs:
    ///         the sample stays disputed, the committee finds it invalid, the solver and its accomplices
    ///         are slashed and nothing is minted. Before the fix the forced sample left the disputed
    ///         set and the job finalized.
    function test_finalize_cheatInsideForcedSegment_caught_succeeds() public {
        _submitForcedEnd(verifiers[0], HONEST_END);
        _submit(jobId, verifiers[1], uint256(1) << f);
        _submit(jobId, verifiers[2], uint256(1) << f);
        _passChallengeWindow(jobId);
        vm.expectEmit(address(jobManager));
        emit IJobManager.ForcedEndDisputed(jobId, f, verifiers[0]);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Disputed), "forced sample not disputed");
        assertEq(jobManager.disputedSampleOf(jobId), f);
        // The accomplices' ends matched the commitment: they now stand behind it.
        assertEq(uint8(jobManager.verdictOf(jobId, verifiers[1])[f]), uint8(Verdict.Approve));
        assertEq(uint8(jobManager.verdictOf(jobId, verifiers[0])[f]), uint8(Verdict.Reject));

        _arbitrate(_job(jobId).disputeId, false);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Rejected));
        assertEq(_staked(solver, Role.Solver), 1000e18 - params.solverStake);
        // The honest seat stands: its fee is restaked.
        assertEq(_staked(verifiers[0], Role.Verifier), 500e18 + params.verifierFee);
        assertEq(_staked(verifiers[1], Role.Verifier), 500e18 - params.verifierStake);
        assertEq(_staked(verifiers[2], Role.Verifier), 500e18 - params.verifierStake);
        assertEq(_sharesMinted(MODEL_ID), 0, "shares minted");
        (, uint256 bonds,,) = escrow.liabilities();
        assertEq(bonds, 0, "a bond left behind");
        _assertEscrowSolvent();
    }

    /// @notice A rejecter that did not replay (it seals the zero end, or any end but the true one)
    ///         earns no jackpot: the sample stays disputed, the committee finds the honest solver's
    ///         segment valid, and it loses its stake and bond. The verifiers that replayed are paid:
    ///         the jackpot to the wallet while the dispute is open, the fee restaked at the job's end.
    function test_finalize_rejectWithoutReplay_losesDispute_succeeds() public {
        _submit(jobId, verifiers[0], uint256(1) << f);
        _submit(jobId, verifiers[1], uint256(1) << f);
        // A made-up end claims a replay that did not happen (a zero end would be an abstention).
        _submitForcedEnd(verifiers[2], keccak256("made-up end"));
        _passChallengeWindow(jobId);
        uint256 wallet0 = token.balanceOf(verifiers[0]);
        uint256 wallet2 = token.balanceOf(verifiers[2]);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Disputed));
        // A replaying rejecter is paid the jackpot to its wallet (no fee while disputed); its one
        // reject is now an approval of the true end, so its bond is the seat's idle one, still in
        // its seat's lock and released with it.
        assertEq(token.balanceOf(verifiers[0]) - wallet0, params.jackpot);
        assertEq(escrow.creditOf(verifiers[0]), 0);
        assertEq(_locked(verifiers[0], Role.Verifier), _seatLock());
        assertEq(token.balanceOf(verifiers[2]), wallet2, "paid without a replay");
        assertEq(escrow.creditOf(verifiers[2]), 0, "credited without a replay");

        _arbitrate(_job(jobId).disputeId, true);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        // The made-up end's seat loses its stake and its bond, both slashed from its stake.
        assertEq(_staked(verifiers[2], Role.Verifier), 500e18 - params.verifierStake - params.challengeBond);
        assertEq(_locked(verifiers[2], Role.Verifier), 0);
        // The replaying seat's fee is restaked at the job's end (its jackpot went to its wallet
        // while the dispute was open), and so is the solver's reward.
        assertEq(_staked(verifiers[0], Role.Verifier), 500e18 + params.verifierFee);
        assertEq(token.balanceOf(verifiers[0]) - wallet0, params.jackpot, "no fee to the wallet");
        // Its idle bond went back once, with its seat: nothing left locked, none unlocked twice.
        assertEq(_locked(verifiers[0], Role.Verifier), 0);
        assertEq(_staked(solver, Role.Solver), 1000e18 + REWARD);
        _appendFinalState(jobId);
        assertGt(_sharesMinted(MODEL_ID), 0, "no shares minted");
        (, uint256 bonds,,) = escrow.liabilities();
        assertEq(bonds, 0, "a bond left behind");
        _assertEscrowSolvent();
    }

    /// @notice P-20 on the forced sample: an abstainer (zero end) has no end to compare; the two
    ///         other seats replayed the forced sample (their ends are the true end), so the data was
    ///         there: the abstention holds no dispute and forfeits its bond to the pool (P-33). The
    ///         abstainer keeps its stake and is paid neither the jackpot nor its fee.
    function test_finalize_abstainOnForcedSample_othersReplayed_forfeitsNotSlashedNotPaid_succeeds() public {
        _submit(jobId, verifiers[0], uint256(1) << f);
        _submit(jobId, verifiers[1], uint256(1) << f);
        _submitForcedEnd(verifiers[2], bytes32(0));
        _passChallengeWindow(jobId);
        uint256 abstainerWallet = token.balanceOf(verifiers[2]);
        vm.expectEmit(address(jobManager));
        emit IJobManager.AbstentionForfeited(jobId, f, verifiers[2], params.challengeBond);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized), "the abstention holds no dispute");
        // Its bond was locked from its stake and is forfeited from it; its seat's stake is not slashed.
        assertEq(
            _staked(verifiers[2], Role.Verifier), 500e18 - params.challengeBond, "an abstainer loses its bond only"
        );
        assertEq(_locked(verifiers[2], Role.Verifier), 0);
        assertEq(escrow.creditOf(verifiers[2]), 0, "no jackpot, no fee, its bond forfeited");
        assertEq(token.balanceOf(verifiers[2]), abstainerWallet, "no fee paid to the wallet");
        (, uint256 bonds,,) = escrow.liabilities();
        assertEq(bonds, 0, "a bond left behind");
        _assertEscrowSolvent();
    }

    /// @notice The approver of the forced claim and the whistleblower that challenged it are settled
    ///         once: a later dispute on the same sample neither pays the approver as a winner nor
    ///         touches the whistleblower's returned bond.
    function test_finalize_forcedApproverSettledOnce_succeeds() public {
        _submit(jobId, verifiers[0], 0);
        _submit(jobId, verifiers[1], uint256(1) << f);
        _submitForcedEnd(verifiers[2], HONEST_END);
        _revealPending(jobId);
        vm.prank(whistleblower);
        jobManager.challengeApproval(jobId, f, verifiers[0]);
        _passChallengeWindow(jobId);
        uint256 wbWallet = token.balanceOf(whistleblower);
        jobManager.finalize(jobId);
        // The whistleblower's bond and jackpot are paid to its wallet at once.
        assertEq(token.balanceOf(whistleblower) - wbWallet, params.challengeBond + params.jackpot);
        assertEq(escrow.creditOf(whistleblower), 0);
        uint256 approverCredit = escrow.creditOf(verifiers[0]);
        uint256 approverWallet = token.balanceOf(verifiers[0]);
        _arbitrate(_job(jobId).disputeId, true);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        assertEq(token.balanceOf(whistleblower) - wbWallet, params.challengeBond + params.jackpot, "bond moved twice");
        assertEq(escrow.creditOf(whistleblower), 0, "bond credited twice");
        assertEq(escrow.creditOf(verifiers[0]), approverCredit, "the forced claim's approver paid");
        assertEq(token.balanceOf(verifiers[0]), approverWallet, "the forced claim's approver paid a fee");
        assertEq(_staked(verifiers[0], Role.Verifier), 500e18 - params.verifierStake);
        _assertEscrowSolvent();
    }

    /// @notice A seat's first rejected own sample is kept as a tag in its seat's word, not as a word
    ///         of the round; an approver has no tag; two ends have two tags.
    function test_endTagOf_keepsTheFirstRejectedEnd_succeeds() public {
        _submit(jobId, verifiers[0], uint256(1) << f);
        _submit(jobId, verifiers[1], 0);
        _submitForcedEnd(verifiers[2], HONEST_END);
        _passChallengeWindow(jobId);
        bytes5 caught = jobManager.endTagOf(_sid(jobId), verifiers[0]);
        bytes5 other = jobManager.endTagOf(_sid(jobId), verifiers[2]);
        assertTrue(caught != bytes5(0), "a rejection has a tag");
        assertEq(jobManager.endTagOf(_sid(jobId), verifiers[1]), bytes5(0), "an approval has none");
        assertTrue(other != bytes5(0) && other != caught, "another end, another tag");
        assertTrue(round.forcedEndMatches(_sid(jobId), verifiers[0]));
        assertFalse(round.forcedEndMatches(_sid(jobId), verifiers[1]));
        assertFalse(round.forcedEndMatches(_sid(jobId), verifiers[2]));
    }

    /// @notice A seat that rejects the forced sample and another sample of its own draw: one of the
    ///         two ends is the seat's tag, the other a word of the round, and whichever holds the
    ///         forced sample's end is what `forcedEndMatches` compares (the true end matches, another
    ///         does not), whether the forced sample comes first or second.
    function test_forcedEndMatches_secondRejectedSample_succeeds() public {
        (, uint32[] memory segments) = jobManager.getAssignment(jobId);
        bytes32 trueEnd = _committedStates[jobId][segments[f] + 1];
        uint256 checked = 0;
        for (uint256 i; i < verifiers.length; ++i) {
            uint256 own = jobManager.sampleMaskOf(jobId, verifiers[i]);
            if ((own >> f) & 1 == 1 && own != uint256(1) << f) ++checked;
            _submitEnds(jobId, verifiers[i], _rejectEveryOwn(own, i == 0 ? trueEnd : HONEST_END));
        }
        _passChallengeWindow(jobId);
        assertGt(checked, 0, "some seat holds the forced sample and another");
        for (uint256 i; i < verifiers.length; ++i) {
            if ((jobManager.sampleMaskOf(jobId, verifiers[i]) >> f) & 1 == 0) continue;
            assertTrue(jobManager.endTagOf(_sid(jobId), verifiers[i]) != bytes5(0));
            assertEq(round.forcedEndMatches(_sid(jobId), verifiers[i]), i == 0, "the forced sample's end decides");
        }
    }

    /// @notice The claims, with every sample of `own` but the forced one rejected with an end of its
    ///         own and the forced sample sealed as `forcedEnd`.
    function _rejectEveryOwn(uint256 own, bytes32 forcedEnd) internal view returns (bytes32[] memory ends) {
        (, ends) = _claimsOf(_sid(jobId));
        for (uint256 j; j < ends.length; ++j) {
            if ((own >> j) & 1 == 1 && j != f) ends[j] = keccak256(abi.encode("another replay", j));
        }
        ends[f] = forcedEnd;
    }

    /// @notice The forced error's reveal writes one word of the round, the one its flags share
    ///         with the true end's tag: it creates no storage word. Keeping the whole true end
    ///         wrote a second word (~22k gas, docs/SECURITY.md "Gas cuts").
    function test_revealSecret_forced_writesOnlyTheFlagsWord_succeeds() public {
        _submit(jobId, verifiers[0], uint256(1) << f);
        _submit(jobId, verifiers[1], 0);
        _submit(jobId, verifiers[2], 0);
        _revealPending(jobId);
        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        vm.record();
        _revealSecret(jobId);
        (, bytes32[] memory writes) = vm.accesses(address(round));
        uint256 distinct = 0;
        for (uint256 i; i < writes.length; ++i) {
            bool seen = false;
            for (uint256 j; j < i; ++j) {
                if (writes[j] == writes[i]) seen = true;
            }
            if (!seen) ++distinct;
        }
        assertEq(distinct, 1, "the reveal writes the flags' word only");
        (RoundOutcome outcome_, uint256 sample) = round.outcome(_sid(jobId));
        assertEq(uint8(outcome_), uint8(RoundOutcome.Forced));
        assertEq(sample, f);
        assertTrue(round.forcedEndMatches(_sid(jobId), verifiers[0]), "the replayed true end matches");
    }

    /// @notice The round keeps the true end's first 96 bits: an end that differs from the true
    ///         end within them never matches, and one that shares them (only a seat that already
    ///         knows the true end can make it) matches as the true end would.
    function test_forcedEndMatches_comparesTheFirst96Bits_succeeds() public {
        (, uint32[] memory segments) = jobManager.getAssignment(jobId);
        bytes32 trueEnd = _committedStates[jobId][segments[f] + 1];
        // bytes12 keeps bits 255..160: bit 160 is the last of the first 96, bit 159 the first after
        _submitForcedEnd(verifiers[0], trueEnd ^ bytes32(uint256(1)));
        _submitForcedEnd(verifiers[1], trueEnd ^ bytes32(uint256(1) << 159));
        _submitForcedEnd(verifiers[2], trueEnd ^ bytes32(uint256(1) << 160));
        _passChallengeWindow(jobId);
        assertTrue(round.forcedEndMatches(_sid(jobId), verifiers[0]), "bit 0 is past the first 96");
        assertTrue(round.forcedEndMatches(_sid(jobId), verifiers[1]), "bit 159 is past the first 96");
        assertFalse(round.forcedEndMatches(_sid(jobId), verifiers[2]), "bit 160 is within them");
    }

    function test_postClaims_zeroEnd_reverts() public {
        uint256 bare = _unclaimedJob();
        (bytes32[] memory starts, bytes32[] memory ends) = _claims(bare);
        ends[1] = bytes32(0);
        vm.expectRevert(abi.encodeWithSelector(IVerificationRound.ZeroClaim.selector, _sid(bare), 1));
        vm.prank(solver);
        round.postClaims(_sid(bare), starts, ends);
        _bookClaims(round, _sid(bare), starts, ends);
    }
}
