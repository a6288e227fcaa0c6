// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {Vm} from "@prb/test/Vm.sol";
import {Deployers} from "./Deployers.sol";
import {Dissection} from "./Dissection.sol";
import {Merkle} from "./Merkle.sol";
import {Deploy} from "../../script/Deploy.sol";
import {BisectionGame} from "../../src/BisectionGame.sol";
import {IEscrow} from "../../src/interfaces/IEscrow.sol";
import {Game, GameStatus, StepClaim} from "../../src/types/BisectionTypes.sol";
import {Bucket} from "../../src/types/EscrowTypes.sol";
import {Role} from "../../src/types/Role.sol";

/// @notice Shared setup: the protocol deployed with the bisection adjudicator (clock 1 h, bond 1e18),
///         and helpers that build a job of N = 2k steps whose state hashes follow a known transition
///         `h(t + 1) = keccak256(abi.encode(h(t), t))`, optionally forged from one step on.
abstract contract BisectionGame_Init is Deployers {
    uint64 internal constant CLOCK = 1 hours;
    uint256 internal constant BOND = 1e18;
    uint256 internal constant NO_CHEAT = type(uint256).max;
    uint32 internal constant K = 64;
    /// @notice The game's dissection arity (`BisectionGame.DISSECTION_ARITY`).
    uint256 internal constant ARITY = 8;
    /// @notice Rounds of a k = K game at ARITY: 64 -> 8 -> 1.
    uint256 internal constant K_ROUNDS = 2;

    /// @notice The defender's (solver's) state hash of every step 0..N.
    bytes32[] internal committed;
    /// @notice The true state hash of every step 0..N.
    bytes32[] internal truth;
    uint32 internal interval;
    uint256 internal jobId;
    uint256 internal disputeId;
    /// @notice The Escrow's Bonds bucket when the game opened (the job's reject and challenge bonds).
    uint256 internal jobBonds;
    uint32 internal segment;
    address internal defender;
    address internal challenger;
    /// @notice The hashes of the defender's last bisection (its `Bisected` log's).
    bytes32[] internal posted;

    function setUp() public virtual override {
        vm.warp(START_TIME);
        vm.roll(START_BLOCK);
        Deploy.Config memory cfg = _testConfig();
        cfg.adjudicator = Deploy.AdjudicatorKind.Bisection;
        cfg.clockSeconds = CLOCK;
        cfg.moveBond = BOND;
        _deploy(cfg);
        _setUpActors();
        _approveGame(solver);
        _approveGame(whistleblower);
        _approveGame(stranger);
        for (uint256 i; i < verifierPool.length; ++i) {
            _approveGame(verifierPool[i]);
        }
    }

    ////// Chains //////

    /// @notice The step transition every honest replay computes.
    function _transition(bytes32 stateHash, uint256 step) internal pure returns (bytes32) {
        return keccak256(abi.encode(stateHash, step));
    }

    /// @notice Hashes of steps 0..steps; the step after `cheatStep` is forged (NO_CHEAT: honest run).
    function _chain(uint256 steps, uint256 cheatStep) internal pure returns (bytes32[] memory hashes) {
        hashes = new bytes32[](steps + 1);
        hashes[0] = keccak256("genesis");
        for (uint256 t; t < steps; ++t) {
            hashes[t + 1] = t == cheatStep ? keccak256(abi.encode("forged", t)) : _transition(hashes[t], t);
        }
    }

    function _checkpointsOf(bytes32[] memory hashes, uint32 k) internal pure returns (bytes32[] memory out) {
        out = new bytes32[]((hashes.length - 1) / k + 1);
        for (uint256 i; i < out.length; ++i) {
            out[i] = hashes[i * k];
        }
    }

    function _proof(uint256 leafIndex) internal view returns (bytes32[] memory) {
        return Merkle.proof(Merkle.leaves(interval, _checkpointsOf(committed, interval)), leafIndex);
    }

    ////// Setup of a game //////

    function _approveGame(address account) internal {
        vm.prank(account);
        token.approve(address(escrow), type(uint256).max);
    }

    /// @notice A funded contract account staked as a solver, approving every protocol contract.
    function _enrollSolver(address account) internal {
        vm.startPrank(account);
        token.faucet(FUNDS);
        token.approve(address(escrow), type(uint256).max);
        token.approve(address(stakeManager), type(uint256).max);
        stakeManager.stake(Role.Solver, 1000e18);
        vm.stopPrank();
    }

    /// @notice Job of N = 2k steps committed by `solverAccount` from `hashes`; verifier 0 rejects
    ///         (or, `byWhistleblower`, the whistleblower challenges verifier 0's approval of) sample
    ///         `disputed` (= segment, as all segments are sampled); finalize opens game `disputeId`.
    function _openGame(uint32 k, bytes32[] memory hashes, uint32 disputed, bool byWhistleblower, address solverAccount)
        internal
    {
        address[] memory verifiers = _assignedJob(k, hashes, disputed, solverAccount);
        if (byWhistleblower) {
            _submitAll(jobId, 0);
            vm.prank(whistleblower);
            jobManager.challengeApproval(jobId, disputed, verifiers[0]);
            challenger = whistleblower;
        } else {
            _submit(jobId, verifiers[0], uint256(1) << disputed);
            for (uint256 i = 1; i < verifiers.length; ++i) {
                _submit(jobId, verifiers[i], 0);
            }
            challenger = verifiers[0];
        }
        _passChallengeWindow(jobId);
        jobManager.finalize(jobId);
        disputeId = _job(jobId).disputeId;
        jobBonds = escrow.bucketOf(Bucket.Bonds);
    }

    /// @notice Job of N = 2k steps committed by `solverAccount` from `hashes`, with verifiers drawn;
    ///         records the game's expected endpoints (`segment` = `disputed`).
    function _assignedJob(uint32 k, bytes32[] memory hashes, uint32 disputed, address solverAccount)
        internal
        returns (address[] memory verifiers)
    {
        interval = k;
        committed = hashes;
        truth = _chain(2 * uint256(k), NO_CHEAT);
        segment = disputed;
        defender = solverAccount;
        vm.prank(submitter);
        jobId = jobManager.postJob(MODEL_ID, SPEC_HASH, hashes[0], 2 * k, k, REWARD, SPEC_URI);
        vm.prank(solverAccount);
        jobManager.claimJob(jobId);
        _commit(jobId, solverAccount, _checkpointsOf(hashes, k));
        _assign(jobId);
        verifiers = _assigned(jobId);
    }

    /// @notice Move bonds the game holds at the Escrow (the game itself holds no tokens).
    function _gameBonds() internal returns (uint256) {
        assertEq(token.balanceOf(address(game)), 0, "game holds tokens");
        return escrow.bucketOf(Bucket.Bonds) - jobBonds;
    }

    /// @notice Credits the game booked for `account` at the Escrow in the logs recorded since
    ///         `vm.recordLogs()` (the JobManager credits the same accounts in the same calls).
    function _gameCredited(address account) internal returns (uint256 amount) {
        amount = _creditedIn(vm.getRecordedLogs(), account);
    }

    /// @notice Credits the game booked for `account` in `logs`.
    function _creditedIn(Vm.Log[] memory logs, address account) internal view returns (uint256 amount) {
        for (uint256 i; i < logs.length; ++i) {
            Vm.Log memory log = logs[i];
            if (log.emitter != address(escrow) || log.topics[0] != IEscrow.Credited.selector) continue;
            if (address(uint160(uint256(log.topics[1]))) != address(game)) continue;
            if (address(uint160(uint256(log.topics[2]))) != account) continue;
            (, uint256 credited) = abi.decode(log.data, (Bucket, uint256));
            amount += credited;
        }
    }

    /// @notice A k = K game on segment 1 whose defender forged the step after `cheatStep`.
    function _openDefault(uint256 cheatStep) internal {
        _openGame(K, _chain(2 * uint256(K), cheatStep), 1, false, solver);
    }

    ////// Moves //////

    function _game() internal view returns (Game memory) {
        return game.getGame(disputeId);
    }

    function _postEndpoints() internal {
        Game memory g = _game();
        bytes32[] memory startProof = _proof(segment);
        bytes32[] memory endProof = _proof(uint256(segment) + 1);
        vm.prank(defender);
        game.postEndpoints(disputeId, committed[g.lo], committed[g.hi], startProof, endProof);
    }

    /// @notice The defender posts its (committed) hashes at the interval's interior points.
    function _bisect() internal {
        Game memory g = _game();
        posted = Dissection.interior(committed, g.lo, g.hi, ARITY);
        vm.prank(defender);
        game.bisect(disputeId, g.lo, g.hi, posted);
    }

    /// @notice Parts of the current interval.
    function _parts() internal view returns (uint256) {
        Game memory g = _game();
        return Dissection.parts(g.lo, g.hi, ARITY);
    }

    /// @notice The challenger picks part `index` of the pending dissection.
    function _respond(uint256 index) internal {
        Game memory g = _game();
        vm.prank(challenger);
        game.respond(disputeId, g.lo, g.hi, index, posted);
    }

    /// @notice The challenger accepts every posted point (`agree`: the last part, [point(n-1), hi])
    ///         or disputes the first ([lo, point(1)]).
    function _respond(bool agree) internal {
        _respond(agree ? _parts() - 1 : 0);
    }

    /// @notice An honest challenger picks the part before its first disagreement with the truth.
    function _respondHonestly() internal {
        Game memory g = _game();
        _respond(Dissection.honestIndex(truth, posted, g.lo, g.hi, g.claimedHash, ARITY));
    }

    /// @notice An honest judge replays the claimed steps (one, or an escalated interval) from the
    ///         agreed hash.
    function _stepValid(uint256 stepDisputeId) internal view returns (bool) {
        StepClaim memory claim = committee.stepClaimOf(stepDisputeId);
        bytes32 stateHash = claim.startHash;
        for (uint256 t = claim.step; t < uint256(claim.step) + claim.steps; ++t) {
            stateHash = _transition(stateHash, t);
        }
        return claim.claimedEndHash == stateHash;
    }

    /// @notice Plays until the step adjudicator is needed: honest defender moves and honest responses.
    function _narrowHonestly() internal {
        _postEndpoints();
        while (_game().status != GameStatus.AwaitingStep) {
            _bisect();
            _respondHonestly();
        }
    }

    /// @notice The committee (honest) judges the step and resolves.
    function _judgeStep() internal {
        uint256 stepId = _game().stepDisputeId;
        _arbitrate(stepId, _stepValid(stepId));
    }

    /// @notice An interior-hash array of the right length for the current interval (contents
    ///         irrelevant: for reverts that fire before the hashes are read).
    function _anyHashes() internal view returns (bytes32[] memory) {
        return new bytes32[](_parts() - 1);
    }
}
