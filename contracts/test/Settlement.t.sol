// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Deployers} from "./utils/Deployers.sol";
import {BisectionGame_Init} from "./BisectionGame.t.sol";
// Deployment
import {Deploy} from "../script/Deploy.sol";
// Types
import {GameStatus} from "../src/types/BisectionTypes.sol";
import {Bucket} from "../src/types/EscrowTypes.sol";
import {JobStatus} from "../src/types/JobTypes.sol";
import {Role} from "../src/types/Role.sol";

/// @notice Every token an account holds in the protocol's reach: its wallet, its credit at the
///         Escrow and its stake in every role.
abstract contract Wealth is Deployers {
    function _wealth(address account) internal view returns (uint256 total) {
        total = token.balanceOf(account) + escrow.creditOf(account);
        total += _staked(account, Role.Solver) + _staked(account, Role.Verifier) + _staked(account, Role.Whistleblower);
    }

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
contract Settlement_DoubleRole_Committee_Test is Wealth {
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

        uint256 attackerBefore = _wealth(attacker);
        uint256 honestBefore = _wealth(honest);
        uint256 solverBefore = _wealth(solver);
        uint256 attackerStake = _staked(attacker, Role.Verifier);

        jobManager.finalize(jobId); // forced error settled; f goes to the committee
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Disputed));
        _arbitrate(_job(jobId).disputeId, true);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));

        // The rejecter role was settled: slashed and its reject bond forfeited, nothing orphaned.
        assertEq(_staked(attacker, Role.Verifier), attackerStake - params.verifierStake, "rejecter not slashed");
        assertEq(escrow.bucketOf(Bucket.Bonds), 0, "bond orphaned in the Escrow");
        // Whistle: bond back + jackpot; reject: bond and one stake lost.
        assertEq(
            _wealth(attacker) + params.verifierStake, attackerBefore + params.challengeBond + params.jackpot, "attacker"
        );
        // The honest verifier gets its fee, its bond and the jackpot; the solver its reward.
        assertGte(_wealth(honest), honestBefore + params.verifierFee + params.challengeBond + params.jackpot);
        assertGte(_wealth(solver), solverBefore + REWARD);
        assertEq(samples, _samples(jobId));
        _assertEscrowSolvent();
    }
}

/// @notice P-23 (docs/SECURITY.md) and the liveness bound (docs/DISPUTES.md): a verifier that is
///         also a whistleblower rejects every sample without replaying, challenges another
///         verifier's approval of every sample, then throws every game. The job must still reach a
///         terminal state within its bound, with every honest party paid.
contract Settlement_DoubleRole_Bisection_Test is BisectionGame_Init, Wealth {
    uint32 internal constant SMALL_K = 4;

    function setUp() public override(BisectionGame_Init, Deployers) {
        vm.warp(START_TIME);
        vm.roll(START_BLOCK);
        Deploy.Config memory cfg = Deploy.defaultConfig();
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

        uint256 attackerBefore = _wealth(attacker);
        uint256 honestBefore = _wealth(honest);
        uint256 solverBefore = _wealth(solver);
        uint256 submitterBefore = _wealth(submitter);

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
        // forced claim); the honest verifier got its fee, bond and jackpot; the solver its reward.
        assertLt(_wealth(attacker), attackerBefore, "attacker gained");
        assertEq(_staked(attacker, Role.Verifier), 500e18 - params.verifierStake, "attacker not slashed");
        assertGte(_wealth(honest), honestBefore + params.verifierFee + params.challengeBond + params.jackpot);
        assertGte(_wealth(solver), solverBefore + REWARD);
        assertEq(_staked(solver, Role.Solver), 1000e18, "honest solver slashed");
        assertEq(_locked(solver, Role.Solver), 0, "solver stake still locked");
        assertEq(_locked(honest, Role.Verifier), 0, "honest verifier stake still locked");
        // The submitter gets back the fees of the slashed seats, and pays nothing more.
        assertEq(_wealth(submitter), submitterBefore + 2 * params.verifierFee, "submitter");
        assertEq(escrow.bucketOf(Bucket.Bonds), 0, "bond orphaned in the Escrow");
        _assertEscrowSolvent();
    }
}

/// @notice P-19 (docs/SECURITY.md): no slash is ever credited to a party of its job.
contract Settlement_SlashDestination_Test is Wealth {
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
        uint256 solverBefore = _wealth(solver);
        uint256 approverBefore = _wealth(verifiers[1]);
        uint256 poolBefore = escrow.jackpotPool();
        jobManager.finalize(jobId);
        _arbitrate(_job(jobId).disputeId, true);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));

        // Pot: the rejecter's stake and bond, less the three majority arbiters' fees, split among
        // the solver and the two approvers.
        uint256 share = (params.verifierStake + params.challengeBond - 3 * params.arbiterFee) / 3;
        assertEq(_wealth(solver), solverBefore + REWARD, "solver credited a slash");
        assertEq(escrow.jackpotPool(), poolBefore + share, "solver's share not pooled");
        assertEq(_wealth(verifiers[1]), approverBefore + params.verifierFee + share, "approver");
        _assertEscrowSolvent();
    }
}
