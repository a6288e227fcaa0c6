// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Deployers} from "./utils/Deployers.sol";
// Contracts
import {ModelShares} from "../src/ModelShares.sol";
// Interfaces
import {IStakeManager} from "../src/interfaces/IStakeManager.sol";
// Types
import {JobStatus} from "../src/types/JobTypes.sol";
import {Role} from "../src/types/Role.sol";

/// @notice End-to-end scenarios of PROTOCOL.md with exact token accounting (default params:
///         solverStake 100, verifierStake 50, bond 10, verifierFee 5, arbiterFee 2, V=3, q=4, K=3).
contract Lifecycle_Test is Deployers {
    /// @notice Stakers beside the default actors (a solver replaced mid-test), for `_assertDrained`.
    address[] internal _otherStakers;

    function _claim(address account) internal returns (uint256 amount) {
        amount = escrow.creditOf(account);
        if (amount == 0) return 0;
        uint256 before = token.balanceOf(account);
        vm.prank(account);
        escrow.claimCredit();
        assertEq(token.balanceOf(account), before + amount);
    }

    function _assertDrained() internal {
        (uint256 escrowed, uint256 bonds, uint256 credits, uint256 pool) = escrow.liabilities();
        assertEq(escrowed, 0, "escrow left");
        assertEq(bonds, 0, "bonds left");
        assertEq(credits, 0, "credits left");
        assertEq(token.balanceOf(address(escrow)), pool, "tokens left");
        // The StakeManager holds exactly the actors' stakes (staked + unbonding, every role): the
        // earnings it was sent were restaked, nothing more or less.
        address[] memory stakers = new address[](verifierPool.length + 3 + _otherStakers.length);
        (stakers[0], stakers[1], stakers[2]) = (solver, whistleblower, submitter);
        for (uint256 i; i < verifierPool.length; ++i) {
            stakers[i + 3] = verifierPool[i];
        }
        for (uint256 i; i < _otherStakers.length; ++i) {
            stakers[i + 3 + verifierPool.length] = _otherStakers[i];
        }
        uint256 held;
        for (uint256 i; i < stakers.length; ++i) {
            for (uint256 r; r < 3; ++r) {
                (uint256 staked,, uint256 unbonding,) = stakeManager.stakeOf(stakers[i], Role(r));
                held += staked + unbonding;
            }
        }
        assertEq(token.balanceOf(address(stakeManager)), held, "stake mismatch");
        assertEq(stakeManager.totalHeld(), held, "totalHeld mismatch");
    }

    /// @notice Token balances (wallets, wei) of `accounts`.
    function _balances(address[] memory accounts) internal view returns (uint256[] memory amounts) {
        amounts = new uint256[](accounts.length);
        for (uint256 i; i < accounts.length; ++i) {
            amounts[i] = token.balanceOf(accounts[i]);
        }
    }

    function _shares() internal view returns (ModelShares) {
        return ModelShares(registry.sharesOf(MODEL_ID));
    }

    function _claimAll(uint256 jobId, address[] memory members) internal {
        address[] memory verifiers = _assigned(jobId);
        _claim(submitter);
        _claim(solver);
        _claim(whistleblower);
        _claim(address(this));
        for (uint256 i; i < verifiers.length; ++i) {
            _claim(verifiers[i]);
        }
        for (uint256 i; i < members.length; ++i) {
            _claim(members[i]);
        }
    }

    /// @notice post -> claim -> commit -> assign -> verdicts -> finalize -> shares -> credits.
    function test_lifecycle_honestJob_succeeds() public {
        uint256 submitterBefore = token.balanceOf(submitter);
        uint256 jobId = _verifyingJob();
        address[] memory verifiers = _assigned(jobId);
        _submitAll(jobId, 0);
        _passChallengeWindow(jobId);
        uint256 solverBefore = token.balanceOf(solver);
        uint256 solverStaked = _staked(solver, Role.Solver);
        uint256[] memory seatsBefore = _balances(verifiers);
        jobManager.finalize(jobId);

        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        // The reward and the fees are restaked (no wallet payment, no credit to claim).
        assertEq(token.balanceOf(solver), solverBefore);
        assertEq(_staked(solver, Role.Solver), solverStaked + REWARD);
        assertEq(escrow.creditOf(solver), 0);
        for (uint256 i; i < verifiers.length; ++i) {
            assertEq(token.balanceOf(verifiers[i]), seatsBefore[i]);
            assertEq(_staked(verifiers[i], Role.Verifier), 500e18 + params.verifierFee);
            assertEq(escrow.creditOf(verifiers[i]), 0);
            assertEq(_locked(verifiers[i], Role.Verifier), 0);
        }
        assertEq(_locked(solver, Role.Solver), 0);
        _appendFinalState(jobId);
        ModelShares shares = _shares();
        assertEq(shares.balanceOf(solver), TOTAL_STEPS);
        assertEq(shares.totalSupply(), TOTAL_STEPS);
        assertEq(shares.ownershipBps(solver), 10_000);

        _claimAll(jobId, new address[](0));
        assertEq(token.balanceOf(submitter), submitterBefore - REWARD - 3 * params.verifierFee);
        _assertDrained();
    }

    /// @notice A cheating solver: verifier 0 rejects sample 1, verifiers 1 and 2 approve everything,
    ///         the whistleblower challenges verifier 1 on sample 1 and verifier 2 on sample 3. The
    ///         committee finds sample 1 invalid: solver and both approvers are slashed, rejecter and
    ///         whistleblower split the pot, the submitter is refunded, no shares are minted.
    function test_lifecycle_cheatingSolver_succeeds() public {
        uint256 jobId = _verifyingJob();
        address[] memory verifiers = _assigned(jobId);
        _submit(jobId, verifiers[0], 2);
        _submit(jobId, verifiers[1], 0);
        _submit(jobId, verifiers[2], 0);
        vm.startPrank(whistleblower);
        jobManager.challengeApproval(jobId, 1, verifiers[1]);
        jobManager.challengeApproval(jobId, 3, verifiers[2]);
        vm.stopPrank();
        _passChallengeWindow(jobId);
        uint256 solverBefore = token.balanceOf(solver);
        uint256[] memory seatsBefore = _balances(verifiers);
        jobManager.finalize(jobId);
        assertEq(jobManager.disputedSampleOf(jobId), 1);
        address[] memory members = _arbitrate(_job(jobId).disputeId, false);

        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Rejected));
        // Pot = 100 (solver) + 2 * 50 (approvers) = 200; 3 * 2 to arbiters; 194 / 2 winners. The
        // rejecter's fee is restaked (its wallet untouched) and its pot share is a credit; its
        // bond, locked from its stake, is unlocked.
        assertEq(token.balanceOf(verifiers[0]), seatsBefore[0]);
        assertEq(escrow.creditOf(verifiers[0]), 97e18);
        assertEq(escrow.creditOf(whistleblower), 10e18 + 97e18 + 10e18);
        assertEq(escrow.creditOf(submitter), REWARD + 2 * 5e18);
        assertEq(escrow.creditOf(solver), 0);
        assertEq(token.balanceOf(solver), solverBefore, "no reward");
        for (uint256 i = 1; i < verifiers.length; ++i) {
            assertEq(token.balanceOf(verifiers[i]), seatsBefore[i], "no fee for a slashed approver");
            assertEq(escrow.creditOf(verifiers[i]), 0);
        }
        for (uint256 i; i < members.length; ++i) {
            assertEq(escrow.creditOf(members[i]), 2e18);
        }
        assertEq(_staked(solver, Role.Solver), 900e18);
        assertEq(_locked(solver, Role.Solver), 0);
        assertEq(_staked(verifiers[1], Role.Verifier), 450e18);
        assertEq(_staked(verifiers[2], Role.Verifier), 450e18);
        assertEq(_staked(verifiers[0], Role.Verifier), 505e18, "its stake and its fee");
        assertEq(_locked(verifiers[0], Role.Verifier), 0);
        assertEq(_sharesMinted(MODEL_ID), 0);

        _claimAll(jobId, members);
        _assertDrained();
    }

    /// @notice A griefing verifier rejects a valid segment: it is slashed and loses its bond, the
    ///         approvers share the pot (the solver's share joins the jackpot pool: no slash is
    ///         credited to a party of the job), and the job then finalizes normally.
    function test_lifecycle_griefingReject_succeeds() public {
        uint256 jobId = _verifyingJob();
        address[] memory verifiers = _assigned(jobId);
        _submit(jobId, verifiers[0], 1);
        _submit(jobId, verifiers[1], 0);
        _submit(jobId, verifiers[2], 0);
        _passChallengeWindow(jobId);
        uint256 solverBefore = token.balanceOf(solver);
        uint256 solverStaked = _staked(solver, Role.Solver);
        uint256[] memory seatsBefore = _balances(verifiers);
        jobManager.finalize(jobId);
        address[] memory members = _arbitrate(_job(jobId).disputeId, true);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Disputed));
        jobManager.finalize(jobId);

        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        // Pot = 50 (rejecter) + 10 (bond) = 60; 6 to arbiters; 54 / 3 winners, the solver's to the pool.
        // The reward and the approvers' fees are restaked, the wallets untouched; the pot shares
        // are credits.
        assertEq(token.balanceOf(solver), solverBefore);
        assertEq(_staked(solver, Role.Solver), solverStaked + REWARD);
        assertEq(escrow.creditOf(solver), 0);
        assertEq(escrow.jackpotPool(), 18e18);
        assertEq(token.balanceOf(verifiers[1]), seatsBefore[1]);
        assertEq(token.balanceOf(verifiers[2]), seatsBefore[2]);
        assertEq(_staked(verifiers[1], Role.Verifier), 505e18);
        assertEq(_staked(verifiers[2], Role.Verifier), 505e18);
        assertEq(escrow.creditOf(verifiers[1]), 18e18);
        assertEq(escrow.creditOf(verifiers[2]), 18e18);
        assertEq(escrow.creditOf(verifiers[0]), 0);
        assertEq(token.balanceOf(verifiers[0]), seatsBefore[0], "no fee for the slashed rejecter");
        assertEq(escrow.creditOf(submitter), 5e18);
        // Slashed one verifierStake and its bond, both from its stake.
        assertEq(_staked(verifiers[0], Role.Verifier), 440e18);
        assertEq(_locked(verifiers[0], Role.Verifier), 0);
        _appendFinalState(jobId);
        assertEq(_shares().balanceOf(solver), TOTAL_STEPS);

        _claimAll(jobId, members);
        _assertDrained();
    }

    /// @notice A verifier that never submits is slashed into the jackpot pool, with its fee refunded
    ///         to the submitter.
    function test_lifecycle_missingVerdict_succeeds() public {
        uint256 jobId = _verifyingJob();
        address[] memory verifiers = _assigned(jobId);
        _submit(jobId, verifiers[0], 0);
        _submit(jobId, verifiers[1], 0);
        _passChallengeWindow(jobId);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        assertEq(escrow.creditOf(submitter), 5e18);
        assertEq(escrow.jackpotPool(), 50e18);
        assertEq(_staked(verifiers[2], Role.Verifier), 450e18);
        assertEq(_locked(verifiers[2], Role.Verifier), 0);
        _claimAll(jobId, new address[](0));
        _assertDrained();
    }

    /// @notice An arbiter that never votes is slashed one seat into the pot; the 1 wei of rounding
    ///         dust goes to the treasury.
    function test_lifecycle_nonVotingArbiter_succeeds() public {
        uint256 jobId = _verifyingJob();
        address[] memory verifiers = _assigned(jobId);
        _submit(jobId, verifiers[0], 1);
        _submit(jobId, verifiers[1], 0);
        _submit(jobId, verifiers[2], 0);
        _passChallengeWindow(jobId);
        uint256 solverBefore = token.balanceOf(solver);
        uint256 solverStaked = _staked(solver, Role.Solver);
        jobManager.finalize(jobId);
        uint256 disputeId = _job(jobId).disputeId;
        address[] memory members = _drawCommittee(disputeId);
        _commitVote(disputeId, members[0], true);
        _commitVote(disputeId, members[1], true);
        vm.warp(_dispute(disputeId).commitDeadline + 1);
        _revealVote(disputeId, members[0], true);
        _revealVote(disputeId, members[1], true);
        vm.warp(_dispute(disputeId).revealDeadline + 1);
        committee.resolve(disputeId);

        assertEq(_staked(members[2], Role.Verifier), 450e18);
        assertEq(_locked(members[2], Role.Verifier), 0);
        assertEq(_locked(members[0], Role.Verifier), 0);
        // Pot = 50 + 10 + 50 (non-voter) = 110; 4 to two arbiters; 106 / 3 winners, 1 wei dust;
        // the solver's share joins the jackpot pool.
        uint256 share = uint256(106e18) / 3;
        assertEq(escrow.creditOf(members[0]), 2e18);
        assertEq(escrow.creditOf(members[2]), 0);
        assertEq(escrow.creditOf(solver), 0);
        assertEq(token.balanceOf(solver), solverBefore, "not paid before finalize");
        assertEq(escrow.jackpotPool(), share);
        assertEq(escrow.creditOf(address(this)), 106e18 - 3 * share);
        jobManager.finalize(jobId);
        // The reward is restaked, not paid to the wallet.
        assertEq(token.balanceOf(solver), solverBefore);
        assertEq(_staked(solver, Role.Solver), solverStaked + REWARD);
        assertEq(escrow.creditOf(solver), 0);
        _claimAll(jobId, members);
        _assertDrained();
    }

    /// @notice A solver that misses the commit deadline is slashed to the submitter; another solver
    ///         then claims and completes the job.
    function test_lifecycle_expiredCommitReclaimed_succeeds() public {
        uint256 jobId = _postJob();
        vm.prank(solver);
        jobManager.claimJob(jobId);
        vm.warp(_job(jobId).commitDeadline + 1);
        jobManager.reclaimExpired(jobId);
        assertEq(escrow.jackpotPool(), params.solverStake);
        assertEq(_staked(solver, Role.Solver), 900e18);

        address lateSolver = solver;
        _otherStakers.push(lateSolver);
        solver = _actor("second solver");
        _stake(solver, Role.Solver, 100e18);
        _claimAndCommit(jobId);
        _assign(jobId);
        _submitAll(jobId, 0);
        _passChallengeWindow(jobId);
        jobManager.finalize(jobId);
        assertEq(_job(jobId).solver, solver);
        _appendFinalState(jobId);
        assertEq(_shares().balanceOf(solver), TOTAL_STEPS);
        assertEq(_shares().balanceOf(lateSolver), 0);
        _claimAll(jobId, new address[](0));
        _assertDrained();
    }

    /// @notice Unbonding waits for the delay, and a slash still reaches the stake while it unbonds.
    function test_lifecycle_unbondingThenSlash_succeeds() public {
        uint256 jobId = _verifyingJob();
        address[] memory verifiers = _assigned(jobId);
        address lazy = verifiers[2];
        // The lazy verifier unbonds all its free stake and then never submits.
        uint256 free = 500e18 - _seatLock();
        vm.prank(lazy);
        stakeManager.requestUnbond(Role.Verifier, free);
        assertFalse(stakeManager.isActive(lazy, Role.Verifier));
        _submit(jobId, verifiers[0], 0);
        _submit(jobId, verifiers[1], 0);
        _passChallengeWindow(jobId);
        jobManager.finalize(jobId);
        // Slashed its verifierStake; the bond its seat held for a reject it never made is free again.
        (uint256 staked, uint256 locked, uint256 unbonding, uint64 releaseAt) =
            stakeManager.stakeOf(lazy, Role.Verifier);
        assertEq(staked, params.challengeBond);
        assertEq(locked, 0);
        assertEq(unbonding, free);

        vm.warp(releaseAt - 1);
        vm.expectRevert(
            abi.encodeWithSelector(
                IStakeManager.UnbondingNotReleased.selector, lazy, Role.Verifier, releaseAt, releaseAt - 1
            )
        );
        vm.prank(lazy);
        stakeManager.withdraw(Role.Verifier);

        // A protocol slash larger than the bonded stake eats into the unbonding stake.
        vm.prank(address(jobManager));
        uint256 slashed = stakeManager.slash(lazy, Role.Verifier, 100e18, stranger);
        assertEq(slashed, 100e18);
        (,, unbonding,) = stakeManager.stakeOf(lazy, Role.Verifier);
        uint256 left = free - (100e18 - params.challengeBond);
        assertEq(unbonding, left);

        vm.warp(releaseAt);
        uint256 before = token.balanceOf(lazy);
        vm.prank(lazy);
        stakeManager.withdraw(Role.Verifier);
        assertEq(token.balanceOf(lazy), before + left);
        _claimAll(jobId, new address[](0));
        _assertDrained();
    }

    /// @notice Revenue is split pro rata and transfers never move revenue already earned.
    function test_lifecycle_revenueAcrossTransfers_succeeds() public {
        uint256 jobId = _verifyingJob();
        _submitAll(jobId, 0);
        _passChallengeWindow(jobId);
        jobManager.finalize(jobId);
        _appendFinalState(jobId);
        ModelShares shares = _shares();
        address alice = _actor("alice");
        address bob = _actor("bob");
        address payer = _actor("payer");
        vm.prank(payer);
        token.approve(address(shares), type(uint256).max);

        vm.prank(solver);
        assertTrue(shares.transfer(alice, 4));
        assertEq(shares.ownershipBps(alice), 2500);
        vm.prank(payer);
        shares.payRevenue(100e18);
        assertEq(shares.revenueOf(solver), 75e18);
        assertEq(shares.revenueOf(alice), 25e18);

        vm.prank(alice);
        assertTrue(shares.transfer(bob, 4));
        vm.prank(payer);
        shares.payRevenue(100e18);
        assertEq(shares.revenueOf(solver), 150e18);
        assertEq(shares.revenueOf(alice), 25e18);
        assertEq(shares.revenueOf(bob), 25e18);

        address[3] memory holders = [solver, alice, bob];
        for (uint256 i; i < 3; ++i) {
            vm.prank(holders[i]);
            shares.claimRevenue();
        }
        assertEq(shares.totalRevenueClaimed(), 200e18);
        assertEq(token.balanceOf(address(shares)), 0);
    }
}
