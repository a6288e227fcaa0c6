// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Deployers} from "./utils/Deployers.sol";
import {BisectionGame_Init} from "./utils/BisectionGameInit.sol";
// Deployment
import {Deploy} from "../script/Deploy.sol";
// Interfaces
import {IJobManager} from "../src/interfaces/IJobManager.sol";
// Types
import {GameStatus} from "../src/types/BisectionTypes.sol";
import {Bucket} from "../src/types/EscrowTypes.sol";
import {JobStatus} from "../src/types/JobTypes.sol";
import {Role} from "../src/types/Role.sol";

/// @notice Helpers of the settlement attack tests (holdings: `Deployers._holdings`).
abstract contract AttackHelpers is Deployers {
    /// @notice `ends` sealed by a verifier that rejects every sample without replaying anything.
    function _garbageEnds(uint256 samples) internal pure returns (bytes32[] memory ends) {
        ends = new bytes32[](samples);
        for (uint256 j; j < samples; ++j) {
            ends[j] = keccak256(abi.encode("no replay", j));
        }
    }
}

/// @notice P-22 (docs/SECURITY.md): a rejecter of the forced sample that is also the whistleblower
///         of another verifier's approval of it. Its whistleblower role is settled (paid) by the
///         forced error; its rejecter role must still be settled by the committee's ruling.
contract Settlement_DoubleRole_Committee_Test is AttackHelpers {
    function setUp() public override {
        super.setUp();
        _redeployWithRate(3000);
    }

    /// @notice The double-role verifier rejects only the forced sample (without replaying) and
    ///         challenges the lazy approver's approval of it; the committee rules the segment valid.
    ///         It is slashed one verifierStake and loses its reject bond; no bond is left orphaned.
    function test_doubleRole_rejecterAlsoWhistleblower_isSlashed_succeeds() public {
        uint256 jobId = _forcedVerifyingJob();
        address[] memory verifiers = _assigned(jobId);
        assertEq(verifiers.length, 3);
        (address attacker, address lazy, address honest) = (verifiers[0], verifiers[1], verifiers[2]);
        _stake(attacker, Role.Whistleblower, 100e18);
        (, uint256 f) = round.drawForcedError(_sid(jobId), _secret(jobId));
        uint256 samples = _samples(jobId);

        // The attacker rejects f with an end it never replayed; the lazy verifier approves all.
        bytes32[] memory ends = _ends(jobId, 0);
        ends[f] = keccak256("no replay");
        _submitEnds(jobId, attacker, ends);
        _submit(jobId, lazy, 0);
        _submit(jobId, honest, uint256(1) << f);
        vm.prank(attacker);
        jobManager.challengeApproval(jobId, f, lazy);
        _passChallengeWindow(jobId);

        uint256 attackerBefore = _holdings(attacker);
        uint256 honestBefore = _holdings(honest);
        uint256 solverBefore = _holdings(solver);
        uint256 attackerStake = _staked(attacker, Role.Verifier);

        jobManager.finalize(jobId); // forced error settled; f goes to the committee
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Disputed));
        _arbitrate(_job(jobId).disputeId, true);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));

        // The rejecter role was settled: slashed and its reject bond forfeited (both from its
        // stake), nothing orphaned or left locked.
        assertEq(
            _staked(attacker, Role.Verifier),
            attackerStake - params.verifierStake - params.challengeBond,
            "rejecter not slashed"
        );
        assertEq(_locked(attacker, Role.Verifier), 0, "bond left locked");
        assertEq(escrow.bucketOf(Bucket.Bonds), 0, "bond orphaned in the Escrow");
        // Whistle: its challenge bond (tokens) back + jackpot; reject: its bond and one stake lost
        // (the holdings before count the reject bond, locked in its stake).
        assertEq(
            _holdings(attacker) + params.verifierStake + params.challengeBond,
            attackerBefore + params.challengeBond + params.jackpot,
            "attacker"
        );
        // The honest verifier gets its fee and the jackpot, its bond unlocked; the solver its reward.
        assertGte(_holdings(honest), honestBefore + params.verifierFee + params.jackpot);
        assertEq(_locked(honest, Role.Verifier), 0, "bond left locked");
        assertGte(_holdings(solver), solverBefore + REWARD);
        assertEq(samples, _samples(jobId));
        _assertEscrowSolvent();
    }
}

/// @notice P-23 (docs/SECURITY.md) and the liveness bound (docs/DISPUTES.md): a verifier that is
///         also a whistleblower rejects every sample without replaying, challenges another
///         verifier's approval of every sample, then throws every game. The job must still reach a
///         terminal state within its bound, with every honest party paid.
contract Settlement_DoubleRole_Bisection_Test is BisectionGame_Init, AttackHelpers {
    uint32 internal constant SMALL_K = 4;

    function setUp() public override(BisectionGame_Init, Deployers) {
        vm.warp(START_TIME);
        vm.roll(START_BLOCK);
        Deploy.Config memory cfg = _testConfig();
        cfg.adjudicator = Deploy.AdjudicatorKind.Bisection;
        cfg.clockSeconds = CLOCK;
        cfg.moveBond = BOND;
        cfg.forcedErrorRateBps = 3000;
        _deploy(cfg);
        _setUpActors();
        _approveGame(solver);
        for (uint256 i; i < verifierPool.length; ++i) {
            _approveGame(verifierPool[i]);
        }
    }

    /// @notice An honest run of N = 2k steps whose draw carries a forced error, verifiers assigned
    ///         and claims posted (tries secrets, reverting the state between tries).
    function _forcedGameJob() internal returns (address[] memory verifiers, uint256 f) {
        bytes32[] memory hashes = _chain(2 * uint256(SMALL_K), NO_CHEAT);
        for (uint256 salt = 1;; ++salt) {
            uint256 snapshot = vmx.snapshotState();
            _secretSalt = salt;
            verifiers = _assignedJob(SMALL_K, hashes, 0, solver);
            bool forced;
            (forced, f) = round.drawForcedError(_sid(jobId), _secret(jobId));
            if (forced) return (verifiers, f);
            vmx.revertToState(snapshot);
        }
    }

    /// @notice The honest solver posts its endpoints and bisects; the challenger never answers and
    ///         anyone claims its timeout.
    function _throwGame(uint256 id) internal {
        disputeId = id;
        segment = game.getGame(id).segment;
        _postEndpoints();
        _bisect();
        vm.warp(block.timestamp + CLOCK + 1);
        vm.prank(stranger);
        game.claimTimeout(id);
        assertEq(uint8(game.getGame(id).status), uint8(GameStatus.DefenderWon));
    }

    function _gameOpen(uint256 id) internal view returns (bool) {
        GameStatus status = game.getGame(id).status;
        return status != GameStatus.DefenderWon && status != GameStatus.ChallengerWon;
    }

    /// @notice Samples of `verifier`'s own draw on the job.
    function _ownSamples(address verifier) internal view returns (uint256 count) {
        for (uint256 mask = jobManager.sampleMaskOf(jobId, verifier); mask != 0; mask &= mask - 1) {
            ++count;
        }
    }

    function test_doubleRole_throwsEveryGame_jobTerminates_succeeds() public {
        (address[] memory verifiers, uint256 f) = _forcedGameJob();
        (address attacker, address lazy, address honest) = (verifiers[0], verifiers[1], verifiers[2]);
        _stake(attacker, Role.Whistleblower, 100e18);
        uint256 samples = _samples(jobId);
        uint256 start = block.timestamp;

        _submitEnds(jobId, attacker, _garbageEnds(samples));
        _submit(jobId, lazy, 0);
        _submit(jobId, honest, uint256(1) << f);
        for (uint256 t; t < samples; ++t) {
            vm.prank(attacker);
            jobManager.challengeApproval(jobId, t, lazy);
        }
        _passChallengeWindow(jobId);

        uint256 attackerBefore = _holdings(attacker);
        uint256 honestBefore = _holdings(honest);
        uint256 solverBefore = _holdings(solver);
        uint256 submitterBefore = _holdings(submitter);

        // Bound: each game closes its loser on its sample in every role, so a sample sees at most
        // one game per distinct challenger (V rejecters + V whistleblowers).
        uint256 maxGames = samples * 2 * verifiers.length;
        uint256 games;
        while (_job(jobId).status != JobStatus.Finalized) {
            if (_job(jobId).status == JobStatus.Disputed && _gameOpen(_job(jobId).disputeId)) {
                _throwGame(_job(jobId).disputeId);
                ++games;
                assertLte(games, maxGames, "more games than the bound");
            } else {
                jobManager.finalize(jobId);
            }
        }
        assertGt(games, 0, "no game played");
        // Time: the round's windows, then at most maxGames games of two chess clocks each.
        uint256 roundTime = params.claimsWindow + params.verdictWindow + params.revealWindow + params.challengeWindow;
        assertLte(block.timestamp - start, roundTime + maxGames * (2 * uint256(CLOCK) + 1), "past the time bound");

        // The attacker lost its verifier stake, its reject bonds and its whistle bonds on the
        // samples it did not win as a whistleblower (it won f: the lazy verifier approved the
        // forced claim); the honest verifier got its fee, bond and jackpot; the solver its reward,
        // restaked on its solver stake. Its reject bonds were locked from its verifier stake and are slashed from it, one per
        // sample of its own draw.
        assertLt(_holdings(attacker), attackerBefore, "attacker gained");
        assertEq(
            _staked(attacker, Role.Verifier),
            500e18 - params.verifierStake - _ownSamples(attacker) * params.challengeBond,
            "attacker not slashed"
        );
        assertEq(_locked(attacker, Role.Verifier), 0, "attacker stake still locked");
        assertGte(_holdings(honest), honestBefore + params.verifierFee + params.jackpot);
        assertGte(_holdings(solver), solverBefore + REWARD);
        assertEq(_staked(solver, Role.Solver), 1000e18 + REWARD, "honest solver slashed or its reward not restaked");
        assertEq(_locked(solver, Role.Solver), 0, "solver stake still locked");
        assertEq(_locked(honest, Role.Verifier), 0, "honest verifier stake still locked");
        // The submitter gets back the fees of the slashed seats, and pays nothing more.
        assertEq(_holdings(submitter), submitterBefore + 2 * params.verifierFee, "submitter");
        assertEq(escrow.bucketOf(Bucket.Bonds), 0, "bond orphaned in the Escrow");
        _assertEscrowSolvent();
    }
}

/// @notice P-19 (docs/SECURITY.md): no slash is ever credited to a party of its job.
contract Settlement_SlashDestination_Test is AttackHelpers {
    /// @notice A rejecter loses the committee's ruling on a valid segment: its stake and bond go to
    ///         the arbiters and the approvers; the solver's share joins the jackpot pool. The honest
    ///         solver is paid its reward and nothing of the slash.
    function test_disputePot_solverShareGoesToPool_succeeds() public {
        uint256 jobId = _verifyingJob();
        address[] memory verifiers = _assigned(jobId);
        _submit(jobId, verifiers[0], 1);
        _submit(jobId, verifiers[1], 0);
        _submit(jobId, verifiers[2], 0);
        _passChallengeWindow(jobId);
        uint256 solverBefore = _holdings(solver);
        uint256 approverBefore = _holdings(verifiers[1]);
        uint256 poolBefore = escrow.jackpotPool();
        jobManager.finalize(jobId);
        _arbitrate(_job(jobId).disputeId, true);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));

        // Pot: the rejecter's stake and bond, less the three majority arbiters' fees, split among
        // the solver and the two approvers.
        uint256 share = (params.verifierStake + params.challengeBond - 3 * params.arbiterFee) / 3;
        assertEq(_holdings(solver), solverBefore + REWARD, "solver credited a slash");
        assertEq(escrow.jackpotPool(), poolBefore + share, "solver's share not pooled");
        assertEq(_holdings(verifiers[1]), approverBefore + params.verifierFee + share, "approver");
        _assertEscrowSolvent();
    }
}

/// @notice P-17 (docs/SECURITY.md, docs/FORCED_ERRORS.md section 5): jackpot farming by completing
///         jobs. A coalition owns the model, posts zero-reward jobs, solves them honestly and holds
///         a share phi of the verifier set; on a forced job the solver tells the coalition's
///         verifiers the true end and they seal it without replaying (the honest verifiers replay
///         and seal the same end). Every job pays the forced-error premium into the pool, so the
///         coalition's expected jackpot income per job is at most what it paid in.
/// @dev Which jobs carry a forced error is the luck of the draw: the test measures the coalition's
///      tokens before and after, then replaces the jackpots it actually won by their expectation
///      given the seats it held (rate * jackpot per seat and job): the result is its expected gain
///      over the jobs played, which must not be positive. Without the premium it is
///      +18e18 per job at phi = 1 (rate 30%, V = 3, jackpot 20e18).
contract Settlement_Farming_Test is AttackHelpers {
    uint256 internal constant RATE = 3000;
    uint256 internal constant JOBS = 20;

    /// @notice Forge prints these in verbose runs (the numbers of docs/SECURITY.md P-17).
    event log_named_uint(string key, uint256 val);
    event log_named_int(string key, int256 val);

    address[] internal coalition;
    mapping(address account => bool member) internal inCoalition;

    function setUp() public override {
        super.setUp();
        _redeployWithRate(RATE);
        address funder = _actor("jackpot funder");
        vm.prank(funder);
        escrow.fundJackpot(10_000e18);
    }

    function _join(address account) internal {
        coalition.push(account);
        inCoalition[account] = true;
    }

    function _coalitionWealth() internal view returns (uint256 total) {
        for (uint256 i; i < coalition.length; ++i) {
            total += _holdings(coalition[i]);
        }
    }

    /// @notice Plays JOBS jobs of the strategy; returns the coalition's luck-adjusted gain (wei) and
    ///         the number of forced jobs.
    function _farm() internal returns (int256 adjustedGain, uint256 forcedJobs) {
        uint256 before = _coalitionWealth();
        uint256 won;
        uint256 expected;
        for (uint256 n; n < JOBS; ++n) {
            vm.prank(submitter);
            // Each job its own spec: one training is posted once (P-26).
            bytes32 specHash = keccak256(abi.encode(SPEC_HASH, "farm", n));
            uint256 jobId = jobManager.postJob(MODEL_ID, specHash, INIT_HASH, TOTAL_STEPS, INTERVAL, 0, SPEC_URI);
            _claimAndCommit(jobId);
            _assign(jobId);
            (bool forced, uint256 f) = round.drawForcedError(_sid(jobId), _secret(jobId));
            address[] memory verifiers = _assigned(jobId);
            uint256 seats;
            for (uint256 i; i < verifiers.length; ++i) {
                if (inCoalition[verifiers[i]]) ++seats;
                _submit(jobId, verifiers[i], forced ? uint256(1) << f : 0);
            }
            _passChallengeWindow(jobId);
            jobManager.finalize(jobId);
            assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
            expected += RATE * seats * params.jackpot / 10_000;
            if (forced) {
                ++forcedJobs;
                won += seats * params.jackpot;
            }
        }
        int256 gain = int256(_coalitionWealth()) - int256(before);
        adjustedGain = gain - int256(won) + int256(expected);
        emit log_named_uint("forced jobs", forcedJobs);
        emit log_named_int("coalition gain (wei)", gain);
        emit log_named_int("luck-adjusted gain (wei)", adjustedGain);
    }

    /// @notice phi = 1: the coalition holds every verifier seat.
    function test_farmingByCompletion_wholeVerifierSet_doesNotPay_succeeds() public {
        _join(submitter);
        _join(solver);
        for (uint256 i; i < verifierPool.length; ++i) {
            _join(verifierPool[i]);
        }
        uint256 poolBefore = escrow.jackpotPool();
        (int256 adjustedGain, uint256 forcedJobs) = _farm();
        assertGt(forcedJobs, 0, "no forced job drawn");
        assertLte(adjustedGain, 0, "farming by completion pays");
        // The pool lost exactly the luck of the draw: premiums in, jackpots out.
        uint256 premium = jobManager.forcedErrorPremium();
        assertEq(premium, 18e18);
        assertEq(escrow.jackpotPool() + forcedJobs * 3 * params.jackpot, poolBefore + JOBS * premium, "pool accounting");
        _assertEscrowSolvent();
    }

    /// @notice phi = 4/7 (above the old break-even fee / (rate * jackpot + fee) = 45%): the
    ///         coalition holds 4 of the 7 verifiers; the honest ones never end poorer.
    function test_farmingByCompletion_partialVerifierSet_doesNotPay_succeeds() public {
        _join(submitter);
        _join(solver);
        for (uint256 i; i < 4; ++i) {
            _join(verifierPool[i]);
        }
        uint256[] memory honestBefore = new uint256[](3);
        for (uint256 i; i < 3; ++i) {
            honestBefore[i] = _holdings(verifierPool[4 + i]);
        }
        (int256 adjustedGain, uint256 forcedJobs) = _farm();
        assertGt(forcedJobs, 0, "no forced job drawn");
        assertLte(adjustedGain, 0, "farming by completion pays");
        for (uint256 i; i < 3; ++i) {
            assertGte(_holdings(verifierPool[4 + i]), honestBefore[i], "honest verifier lost");
        }
        _assertEscrowSolvent();
    }
}

/// @notice The forced-error premium's escrow: refunded only while the job was never claimed.
contract Settlement_Premium_Test is AttackHelpers {
    function setUp() public override {
        super.setUp();
        _redeployWithRate(3000);
    }

    function test_postCost_includesPremium_succeeds() public {
        // ceil(3000 * 3 * 20e18 / 10_000) = 18e18.
        assertEq(jobManager.forcedErrorPremium(), 18e18);
        assertEq(jobManager.postCost(REWARD), REWARD + 3 * params.verifierFee + 18e18);
    }

    function test_postJob_escrowsPremium_cancelRefundsIt_succeeds() public {
        uint256 before = _holdings(submitter);
        uint256 poolBefore = escrow.jackpotPool();
        uint256 jobId = _postJob();
        assertEq(before - _holdings(submitter), jobManager.postCost(REWARD));
        vm.prank(submitter);
        jobManager.cancelJob(jobId);
        assertEq(_holdings(submitter), before, "premium kept on an unclaimed job");
        assertEq(escrow.jackpotPool(), poolBefore);
        _assertEscrowSolvent();
    }

    function test_postJob_expiredUnclaimed_refundsPremium_succeeds() public {
        uint256 before = _holdings(submitter);
        uint256 jobId = _postJob();
        vm.warp(_job(jobId).openDeadline + 1);
        jobManager.expireJob(jobId);
        assertEq(_holdings(submitter), before);
        _assertEscrowSolvent();
    }

    /// @notice Once claimed, the premium is in the pool for good, even if the solver abandons the
    ///         job and its submitter then cancels it.
    function test_claimJob_poolsPremium_notRefundedAfterReclaim_succeeds() public {
        uint256 before = _holdings(submitter);
        uint256 poolBefore = escrow.jackpotPool();
        uint256 premium = jobManager.forcedErrorPremium();
        uint256 jobId = _postJob();
        vm.expectEmit(address(jobManager));
        emit IJobManager.PremiumPooled(jobId, premium);
        vm.prank(solver);
        jobManager.claimJob(jobId);
        assertEq(escrow.jackpotPool(), poolBefore + premium);
        vm.warp(_job(jobId).commitDeadline + 1);
        jobManager.reclaimExpired(jobId);
        vm.prank(submitter);
        jobManager.cancelJob(jobId);
        assertEq(before - _holdings(submitter), premium, "premium refunded after a claim");
        assertEq(escrow.jackpotPool(), poolBefore + premium + params.solverStake);
        _assertEscrowSolvent();
    }
}
