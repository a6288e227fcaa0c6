// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Vm} from "@prb/test/Vm.sol";
import {Deployers} from "./utils/Deployers.sol";
import {Dissection} from "./utils/Dissection.sol";
import {Merkle} from "./utils/Merkle.sol";
import {HonestDefender} from "./actors/HonestDefender.sol";
// Deployment
import {Deploy} from "../script/Deploy.sol";
// Contracts
import {BisectionGame} from "../src/BisectionGame.sol";
import {LibCheckpoint} from "../src/libraries/LibCheckpoint.sol";
// Interfaces
import {IArbitrationCommittee} from "../src/interfaces/IArbitrationCommittee.sol";
import {IBisectionGame} from "../src/interfaces/IBisectionGame.sol";
import {IEscrow} from "../src/interfaces/IEscrow.sol";
import {IJobManager} from "../src/interfaces/IJobManager.sol";
import {IStepAdjudicator} from "../src/interfaces/IStepAdjudicator.sol";
import {IVerificationRound} from "../src/interfaces/IVerificationRound.sol";
// Types
import {Game, GameStatus, Side, StepClaim} from "../src/types/BisectionTypes.sol";
import {Bucket} from "../src/types/EscrowTypes.sol";
import {Dispute} from "../src/types/DisputeTypes.sol";
import {JobStatus} from "../src/types/JobTypes.sol";
import {Role} from "../src/types/Role.sol";

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

contract BisectionGame_Constructor_Test is BisectionGame_Init {
    function test_constructor_zeroAddress_reverts() public {
        vm.expectRevert(IBisectionGame.ZeroAddress.selector);
        new BisectionGame(IJobManager(address(0)), IStepAdjudicator(address(committee)), CLOCK, BOND);
        vm.expectRevert(IBisectionGame.ZeroAddress.selector);
        new BisectionGame(IJobManager(address(jobManager)), IStepAdjudicator(address(0)), CLOCK, BOND);
    }

    function test_constructor_badClock_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.InvalidParam.selector, "clockSeconds", 0));
        new BisectionGame(IJobManager(address(jobManager)), IStepAdjudicator(address(committee)), 0, BOND);
        uint64 tooLong = 365 days + 1;
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.InvalidParam.selector, "clockSeconds", tooLong));
        new BisectionGame(IJobManager(address(jobManager)), IStepAdjudicator(address(committee)), tooLong, BOND);
    }

    function test_constructor_setsConfig_succeeds() public {
        assertEq(address(game.jobManager()), address(jobManager));
        assertEq(address(game.stepAdjudicator()), address(committee));
        assertEq(address(game.escrow()), address(escrow));
        assertEq(uint256(game.clockSeconds()), CLOCK);
        assertEq(game.moveBond(), BOND);
        assertEq(address(jobManager.adjudicator()), address(game));
        assertEq(committee.stepParent(), address(game));
    }
}

contract BisectionGame_OpenDispute_Test is BisectionGame_Init {
    function test_openDispute_rejecterIsChallenger_succeeds() public {
        _openDefault(NO_CHEAT);
        Game memory g = _game();
        assertEq(disputeId, 1);
        assertEq(game.gameCount(), 1);
        assertEq(g.jobId, jobId);
        assertEq(uint256(g.segment), 1);
        assertEq(g.defender, solver);
        assertEq(g.challenger, _assigned(jobId)[0]);
        assertEq(uint256(g.lo), K);
        assertEq(uint256(g.hi), 2 * K);
        assertEq(uint8(g.turn), uint8(Side.Defender));
        assertEq(uint8(g.status), uint8(GameStatus.AwaitingEndpoints));
        assertEq(uint256(g.defenderClock), CLOCK);
        assertEq(uint256(g.challengerClock), CLOCK);
        assertEq(uint256(g.turnStartedAt), block.timestamp);
        assertEq(uint256(g.moves), 0);
        assertEq(g.stepDisputeId, 0);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Disputed));
    }

    function test_openDispute_whistleblowerIsChallenger_succeeds() public {
        _openGame(K, _chain(2 * uint256(K), NO_CHEAT), 0, true, solver);
        assertEq(_game().challenger, whistleblower);
        assertEq(uint256(_game().lo), 0);
    }

    function test_openDispute_notJobManager_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.NotJobManager.selector, stranger));
        vm.prank(stranger);
        game.openDispute(1, 0, stranger, new address[](0), new address[](0));
    }

    function test_openDispute_emitsGameOpened_succeeds() public {
        vm.recordLogs();
        _openDefault(NO_CHEAT);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        uint256 found;
        for (uint256 i; i < logs.length; ++i) {
            if (logs[i].emitter != address(game)) continue;
            assertEq(logs[i].topics[0], IBisectionGame.GameOpened.selector);
            assertEq(uint256(logs[i].topics[1]), disputeId);
            assertEq(uint256(logs[i].topics[2]), jobId);
            (uint32 seg, address def, address chal, uint32 lo, uint32 hi) =
                abi.decode(logs[i].data, (uint32, address, address, uint32, uint32));
            assertEq(uint256(seg), 1);
            assertEq(def, solver);
            assertEq(chal, challenger);
            assertEq(uint256(lo), K);
            assertEq(uint256(hi), 2 * K);
            ++found;
        }
        assertEq(found, 1);
    }
}

contract BisectionGame_PostEndpoints_Test is BisectionGame_Init {
    function setUp() public override {
        super.setUp();
        _openDefault(NO_CHEAT);
    }

    function test_postEndpoints_recordsEndpoints_succeeds() public {
        uint256 before = token.balanceOf(solver);
        vm.warp(block.timestamp + 100);
        _postEndpoints();
        Game memory g = _game();
        assertEq(g.agreedHash, committed[K]);
        assertEq(g.claimedHash, committed[2 * K]);
        assertEq(uint256(g.moves), 1);
        assertEq(game.moveCount(disputeId), 1);
        assertEq(uint8(g.status), uint8(GameStatus.AwaitingBisection));
        assertEq(uint8(g.turn), uint8(Side.Defender));
        assertEq(uint256(g.defenderClock), CLOCK - 100);
        // The defender prepays its longest play: the endpoints and K_ROUNDS = 2 bisections.
        assertEq(g.depth, K_ROUNDS);
        assertEq(game.depthOf(K), K_ROUNDS);
        assertEq(token.balanceOf(solver), before - 3 * BOND);
        assertEq(_gameBonds(), 3 * BOND);
    }

    function test_postEndpoints_badStartProof_reverts() public {
        bytes32[] memory startProof = _proof(segment);
        bytes32[] memory endProof = _proof(uint256(segment) + 1);
        bytes32 bogus = keccak256("bogus");
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.InvalidEndpointProof.selector, disputeId, 1, bogus));
        vm.prank(solver);
        game.postEndpoints(disputeId, bogus, committed[2 * K], startProof, endProof);
    }

    function test_postEndpoints_badEndProof_reverts() public {
        bytes32[] memory startProof = _proof(segment);
        bytes32 bogus = keccak256("bogus");
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.InvalidEndpointProof.selector, disputeId, 2, bogus));
        vm.prank(solver);
        game.postEndpoints(disputeId, committed[K], bogus, startProof, startProof);
    }

    function test_postEndpoints_challenger_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.OutOfTurn.selector, disputeId, challenger, Side.Defender));
        vm.prank(challenger);
        game.postEndpoints(disputeId, bytes32(0), bytes32(0), new bytes32[](0), new bytes32[](0));
    }

    function test_postEndpoints_stranger_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.NotParty.selector, disputeId, stranger));
        vm.prank(stranger);
        game.postEndpoints(disputeId, bytes32(0), bytes32(0), new bytes32[](0), new bytes32[](0));
    }

    function test_postEndpoints_twice_reverts() public {
        _postEndpoints();
        vm.expectRevert(
            abi.encodeWithSelector(IBisectionGame.UnexpectedMove.selector, disputeId, GameStatus.AwaitingBisection)
        );
        vm.prank(solver);
        game.postEndpoints(disputeId, bytes32(0), bytes32(0), new bytes32[](0), new bytes32[](0));
    }

    function test_postEndpoints_unknownGame_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.UnknownGame.selector, 99));
        vm.prank(solver);
        game.postEndpoints(99, bytes32(0), bytes32(0), new bytes32[](0), new bytes32[](0));
    }

    function test_postEndpoints_clockExpired_reverts() public {
        uint64 deadline = uint64(block.timestamp) + CLOCK;
        vm.warp(uint256(deadline) + 1);
        bytes32[] memory startProof = _proof(segment);
        bytes32[] memory endProof = _proof(uint256(segment) + 1);
        vm.expectRevert(
            abi.encodeWithSelector(
                IBisectionGame.ClockExpired.selector, disputeId, Side.Defender, deadline, deadline + 1
            )
        );
        vm.prank(solver);
        game.postEndpoints(disputeId, committed[K], committed[2 * K], startProof, endProof);
    }

    function test_postEndpoints_atDeadline_succeeds() public {
        vm.warp(block.timestamp + CLOCK);
        _postEndpoints();
        assertEq(uint256(_game().defenderClock), 0);
    }
}

contract BisectionGame_PostEndpointsSingleStep_Test is BisectionGame_Init {
    function test_postEndpoints_kIsOne_opensStep_succeeds() public {
        _openGame(1, _chain(2, 1), 1, false, solver);
        _postEndpoints();
        Game memory g = _game();
        assertEq(uint8(g.status), uint8(GameStatus.AwaitingStep));
        assertEq(uint8(g.turn), uint8(Side.None));
        StepClaim memory claim = committee.stepClaimOf(g.stepDisputeId);
        assertTrue(claim.isStep);
        assertEq(uint256(claim.step), 1);
        assertEq(claim.startHash, committed[1]);
        assertEq(claim.claimedEndHash, committed[2]);
        _judgeStep();
        assertEq(uint8(_game().status), uint8(GameStatus.ChallengerWon));
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Rejected));
    }
}

contract BisectionGame_Bisect_Test is BisectionGame_Init {
    function setUp() public override {
        super.setUp();
        _openDefault(NO_CHEAT);
    }

    function test_bisect_postsPoints_succeeds() public {
        _postEndpoints();
        vm.warp(block.timestamp + 10);
        vm.roll(block.number + 3);
        // K = 64 in 8 parts: the hashes at K + 8, K + 16, ..., K + 56.
        bytes32[] memory hashes = new bytes32[](7);
        for (uint256 j = 1; j < 8; ++j) {
            hashes[j - 1] = committed[K + 8 * j];
        }
        vm.expectEmit(address(game));
        emit IBisectionGame.Bisected(disputeId, K, 2 * K, hashes, CLOCK - 10);
        _bisect();
        Game memory g = _game();
        assertEq(g.pendingHash, keccak256(abi.encodePacked(hashes)));
        assertEq(uint256(g.pendingBlock), block.number);
        assertEq(uint8(g.turn), uint8(Side.Challenger));
        assertEq(uint8(g.status), uint8(GameStatus.AwaitingResponse));
        assertEq(uint256(g.moves), 2);
        // Prepaid with the endpoints: nothing more is pulled.
        assertEq(_gameBonds(), 3 * BOND);
    }

    function testFuzz_bisect_wrongHashCount_reverts(uint256 count) public {
        count = bound(count, 0, 20);
        if (count == 7) count = 8;
        _postEndpoints();
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.WrongHashCount.selector, disputeId, 7, count));
        vm.prank(solver);
        game.bisect(disputeId, K, 2 * K, new bytes32[](count));
    }

    function test_bisect_beforeEndpoints_reverts() public {
        vm.expectRevert(
            abi.encodeWithSelector(IBisectionGame.UnexpectedMove.selector, disputeId, GameStatus.AwaitingEndpoints)
        );
        vm.prank(solver);
        game.bisect(disputeId, K, 2 * K, new bytes32[](7));
    }

    function test_bisect_wrongInterval_reverts() public {
        _postEndpoints();
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.WrongInterval.selector, disputeId, 0, 2 * K, K, 2 * K));
        vm.prank(solver);
        game.bisect(disputeId, 0, 2 * K, new bytes32[](7));
    }

    function testFuzz_bisect_wrongInterval_reverts(uint32 lo, uint32 hi) public {
        _postEndpoints();
        lo = uint32(bound(lo, 0, type(uint32).max));
        hi = uint32(bound(hi, 0, type(uint32).max));
        if (lo == K && hi == 2 * K) hi = 2 * K + 1;
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.WrongInterval.selector, disputeId, lo, hi, K, 2 * K));
        vm.prank(solver);
        game.bisect(disputeId, lo, hi, new bytes32[](7));
    }

    function testFuzz_bisect_wrongInterval_reverts() public {
        testFuzz_bisect_wrongInterval_reverts(K, 2 * K - 1);
    }

    function test_bisect_challenger_reverts() public {
        _postEndpoints();
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.OutOfTurn.selector, disputeId, challenger, Side.Defender));
        vm.prank(challenger);
        game.bisect(disputeId, K, 2 * K, new bytes32[](7));
    }

    function test_bisect_twice_reverts() public {
        _postEndpoints();
        _bisect();
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.OutOfTurn.selector, disputeId, solver, Side.Challenger));
        vm.prank(solver);
        game.bisect(disputeId, K, 2 * K, new bytes32[](7));
    }

    function test_bisect_stranger_reverts() public {
        _postEndpoints();
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.NotParty.selector, disputeId, stranger));
        vm.prank(stranger);
        game.bisect(disputeId, K, 2 * K, new bytes32[](7));
    }

    function test_bisect_clockExpired_reverts() public {
        vm.warp(block.timestamp + CLOCK / 2);
        _postEndpoints();
        uint64 deadline = uint64(block.timestamp) + CLOCK / 2;
        vm.warp(uint256(deadline) + 1);
        vm.expectRevert(
            abi.encodeWithSelector(
                IBisectionGame.ClockExpired.selector, disputeId, Side.Defender, deadline, deadline + 1
            )
        );
        vm.prank(solver);
        game.bisect(disputeId, K, 2 * K, new bytes32[](7));
    }
}

/// @notice An interval shorter than the arity is split into single steps.
contract BisectionGame_ShortInterval_Test is BisectionGame_Init {
    function test_bisect_shortInterval_postsEveryStep_succeeds() public {
        // k = 5 < arity: 5 parts of one step, 4 interior hashes; one round.
        _openGame(5, _chain(10, NO_CHEAT), 1, false, solver);
        _postEndpoints();
        assertEq(_game().depth, 1);
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.WrongHashCount.selector, disputeId, 4, 7));
        vm.prank(defender);
        game.bisect(disputeId, 5, 10, new bytes32[](7));
        _bisect();
        assertEq(posted.length, 4);
        assertEq(posted[0], committed[6]);
        assertEq(posted[3], committed[9]);
        _respond(uint256(2));
        Game memory g = _game();
        assertEq(uint256(g.lo), 7);
        assertEq(uint256(g.hi), 8);
        assertEq(g.agreedHash, committed[7]);
        assertEq(g.claimedHash, committed[8]);
        assertEq(uint8(g.status), uint8(GameStatus.AwaitingStep));
    }
}

contract BisectionGame_Respond_Test is BisectionGame_Init {
    function setUp() public override {
        super.setUp();
        _openDefault(NO_CHEAT);
        _postEndpoints();
        _bisect();
    }

    function test_respond_lastPart_movesLo_succeeds() public {
        vm.warp(block.timestamp + 7);
        _respond(true);
        Game memory g = _game();
        assertEq(uint256(g.lo), K + 56);
        assertEq(uint256(g.hi), 2 * K);
        assertEq(g.agreedHash, committed[K + 56]);
        assertEq(g.claimedHash, committed[2 * K]);
        assertEq(uint8(g.turn), uint8(Side.Defender));
        assertEq(uint8(g.status), uint8(GameStatus.AwaitingBisection));
        assertEq(uint256(g.challengerClock), CLOCK - 7);
        assertEq(uint256(g.moves), 3);
        // The challenger's first move prepays its 2 responses on top of the defender's 3 bonds.
        assertEq(_gameBonds(), 5 * BOND);
    }

    function test_respond_firstPart_movesHi_succeeds() public {
        vm.expectEmit(address(game));
        emit IBisectionGame.Responded(disputeId, 0, K, K + 8, CLOCK);
        _respond(false);
        Game memory g = _game();
        assertEq(uint256(g.lo), K);
        assertEq(uint256(g.hi), K + 8);
        assertEq(g.agreedHash, committed[K]);
        assertEq(g.claimedHash, committed[K + 8]);
    }

    /// @notice Part i of 8 is [K + 8i, K + 8i + 8]: its start hash is the (i-1)-th posted (lo's
    ///         agreed hash for i = 0), its end hash the i-th posted (hi's claimed hash for i = 7).
    function testFuzz_respond_innerPart_movesBoth(uint256 index) public {
        index = bound(index, 0, 7);
        _respond(index);
        Game memory g = _game();
        assertEq(uint256(g.lo), K + 8 * index);
        assertEq(uint256(g.hi), K + 8 * index + 8);
        assertEq(g.agreedHash, committed[K + 8 * index]);
        assertEq(g.claimedHash, committed[K + 8 * index + 8]);
    }

    function testFuzz_respond_innerPart_movesBoth() public {
        testFuzz_respond_innerPart_movesBoth(3);
    }

    function testFuzz_respond_indexOutOfRange_reverts(uint256 index) public {
        index = bound(index, 8, type(uint256).max);
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.InvalidIndex.selector, disputeId, index, 8));
        vm.prank(challenger);
        game.respond(disputeId, K, 2 * K, index, posted);
    }

    /// @notice The challenger cannot substitute hashes of its choosing for the defender's (e.g. to
    ///         make the defender's claimed state at a point look like one it never posted).
    function testFuzz_respond_forgedHashes_reverts(uint256 slot, bytes32 forged) public {
        slot = bound(slot, 0, 6);
        vm.assume(forged != posted[slot]);
        bytes32[] memory hashes = posted;
        hashes[slot] = forged;
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.HashesMismatch.selector, disputeId));
        vm.prank(challenger);
        game.respond(disputeId, K, 2 * K, 0, hashes);
        // Nor a shorter or longer list.
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.HashesMismatch.selector, disputeId));
        vm.prank(challenger);
        game.respond(disputeId, K, 2 * K, 0, new bytes32[](6));
    }

    function test_respond_defender_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.OutOfTurn.selector, disputeId, solver, Side.Challenger));
        vm.prank(solver);
        game.respond(disputeId, K, 2 * K, 7, posted);
    }

    function test_respond_stranger_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.NotParty.selector, disputeId, stranger));
        vm.prank(stranger);
        game.respond(disputeId, K, 2 * K, 7, posted);
    }

    function test_respond_wrongInterval_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.WrongInterval.selector, disputeId, K, K + 1, K, 2 * K));
        vm.prank(challenger);
        game.respond(disputeId, K, K + 1, 7, posted);
    }

    function test_respond_clockExpired_reverts() public {
        uint64 deadline = uint64(block.timestamp) + CLOCK;
        vm.warp(uint256(deadline) + 1);
        vm.expectRevert(
            abi.encodeWithSelector(
                IBisectionGame.ClockExpired.selector, disputeId, Side.Challenger, deadline, deadline + 1
            )
        );
        vm.prank(challenger);
        game.respond(disputeId, K, 2 * K, 7, posted);
    }

    function test_respond_lastRound_opensStepDispute_succeeds() public {
        _respond(false);
        while (_game().hi - _game().lo > 1) {
            _bisect();
            _respond(true);
        }
        Game memory g = _game();
        // [K, K + 8], then its last one-step part.
        assertEq(uint256(g.lo), K + 7);
        assertEq(uint8(g.status), uint8(GameStatus.AwaitingStep));
        assertEq(uint8(g.turn), uint8(Side.None));
        assertEq(uint256(g.moves), 1 + 2 * K_ROUNDS);
        assertEq(game.gameOfStep(g.stepDisputeId), disputeId);
        StepClaim memory claim = committee.stepClaimOf(g.stepDisputeId);
        assertTrue(claim.isStep);
        assertEq(uint256(claim.step), g.lo);
        assertEq(claim.startHash, g.agreedHash);
        assertEq(claim.claimedEndHash, g.claimedHash);
        Dispute memory d = committee.getDispute(g.stepDisputeId);
        assertEq(d.jobId, jobId);
        assertEq(uint256(d.segment), 1);
        assertTrue(committee.isExcluded(g.stepDisputeId, solver));
        assertTrue(committee.isExcluded(g.stepDisputeId, submitter));
        assertTrue(committee.isReserve(g.stepDisputeId, challenger));

        // Nobody moves while the committee decides.
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.OutOfTurn.selector, disputeId, solver, Side.None));
        vm.prank(solver);
        game.bisect(disputeId, g.lo, g.hi, new bytes32[](0));
        vm.expectRevert(
            abi.encodeWithSelector(IBisectionGame.ClockNotExpired.selector, disputeId, Side.None, 0, block.timestamp)
        );
        game.claimTimeout(disputeId);
    }
}

contract BisectionGame_ClaimTimeout_Test is BisectionGame_Init {
    function setUp() public override {
        super.setUp();
        _openDefault(NO_CHEAT);
    }

    function test_claimTimeout_defender_challengerWins_succeeds() public {
        vm.warp(block.timestamp + CLOCK + 1);
        vm.expectEmit(address(game));
        emit IBisectionGame.TimeoutClaimed(disputeId, Side.Defender, stranger);
        vm.recordLogs();
        vm.prank(stranger);
        game.claimTimeout(disputeId);
        assertEq(uint8(_game().status), uint8(GameStatus.ChallengerWon));
        assertEq(uint256(_game().defenderClock), 0);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Rejected));
        assertEq(_gameCredited(challenger), 0); // no move, no bond
    }

    function test_claimTimeout_challenger_defenderWins_succeeds() public {
        _postEndpoints();
        _bisect();
        vm.warp(block.timestamp + CLOCK + 1);
        vm.recordLogs();
        game.claimTimeout(disputeId);
        assertEq(uint8(_game().status), uint8(GameStatus.DefenderWon));
        // Its 2 played bonds and the 1 prepaid bisection it never played; the challenger never
        // moved, so it prepaid nothing and loses nothing.
        assertEq(_gameCredited(solver), 3 * BOND);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Disputed));
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
    }

    /// @notice Bonds are prepaid at each side's first move and refunded unplayed: a challenger that
    ///         responds once and then stalls loses exactly its one move bond to the defender, and
    ///         the defender gains exactly that (tokens measured, not only credits).
    function test_claimTimeout_prepaidBonds_netIsPlayedMoves_succeeds() public {
        uint256 solverBefore = token.balanceOf(solver);
        assertEq(game.moveBondDue(disputeId), 3 * BOND, "defender's first move");
        _postEndpoints();
        assertEq(game.moveBondDue(disputeId), 0, "bisect prepaid");
        _bisect();
        assertEq(game.moveBondDue(disputeId), 2 * BOND, "challenger's first move");
        uint256 challengerBefore = token.balanceOf(challenger);
        _respond(true);
        assertEq(token.balanceOf(challenger), challengerBefore - 2 * BOND, "challenger prepays 2 responses");
        assertEq(game.moveBondDue(disputeId), 0, "second bisect prepaid");
        _bisect();
        assertEq(game.moveBondDue(disputeId), 0, "second response prepaid");
        assertEq(_gameBonds(), 5 * BOND);
        vm.warp(block.timestamp + CLOCK + 1);
        vm.recordLogs();
        vm.expectEmit(address(game));
        emit IBisectionGame.MoveBondsRefunded(disputeId, 0, BOND);
        game.claimTimeout(disputeId);
        assertEq(uint8(_game().status), uint8(GameStatus.DefenderWon));
        assertEq(game.moveBondDue(disputeId), 0, "resolved");
        Vm.Log[] memory logs = vm.getRecordedLogs();
        assertEq(_creditedIn(logs, solver), 4 * BOND, "defender: 4 moves played, all 3 of its own");
        assertEq(_creditedIn(logs, challenger), BOND, "challenger: 1 response refunded");
        // 4 + 1 = the 5 bonds both sides prepaid: every one is credited back out.
        vm.prank(solver);
        escrow.claimCredit();
        vm.prank(challenger);
        escrow.claimCredit();
        // The defender's net: the challenger's one played move (the JobManager credits it nothing
        // here: the job stays Disputed until finalize).
        assertEq(token.balanceOf(solver), solverBefore + BOND, "defender wins the challenger's one move");
    }

    /// @notice An escalation is the challenger's first move: it prepays `depth` responses and is
    ///         refunded all but the escalation.
    function test_escalate_refundsUnplayedResponses_succeeds() public {
        _postEndpoints();
        _bisect();
        Game memory g = _game();
        uint256 before = token.balanceOf(challenger);
        vm.prank(challenger);
        game.escalate(disputeId, g.lo, g.hi);
        assertEq(token.balanceOf(challenger), before - 2 * BOND);
        vm.recordLogs();
        _judgeStep();
        // Defender: 2 of its 3 played (endpoints, one bisection); challenger: 1 of its 2.
        Vm.Log[] memory logs = vm.getRecordedLogs();
        bool found;
        for (uint256 i; i < logs.length; ++i) {
            if (logs[i].emitter != address(game) || logs[i].topics[0] != IBisectionGame.MoveBondsRefunded.selector) {
                continue;
            }
            (uint256 defenderRefund, uint256 challengerRefund) = abi.decode(logs[i].data, (uint256, uint256));
            assertEq(defenderRefund, BOND, "defender refund");
            assertEq(challengerRefund, BOND, "challenger refund");
            found = true;
        }
        assertTrue(found, "MoveBondsRefunded emitted");
        // The 3 played bonds go to the winner: 3 + 2 prepaid = 3 + 1 + 1.
        assertEq(_creditedIn(logs, solver) + _creditedIn(logs, challenger), 5 * BOND, "every prepaid bond credited");
    }

    function test_claimTimeout_notExpired_reverts() public {
        uint64 deadline = uint64(block.timestamp) + CLOCK;
        vm.warp(deadline);
        vm.expectRevert(
            abi.encodeWithSelector(
                IBisectionGame.ClockNotExpired.selector, disputeId, Side.Defender, deadline, deadline
            )
        );
        game.claimTimeout(disputeId);
    }

    function test_claimTimeout_chessClock_accumulates_succeeds() public {
        // The defender spends 40 min on the endpoints, then has 20 min left for the bisection.
        vm.warp(block.timestamp + 40 minutes);
        _postEndpoints();
        (uint64 defenderLeft, uint64 challengerLeft) = game.clocksOf(disputeId);
        assertEq(uint256(defenderLeft), 20 minutes);
        assertEq(uint256(challengerLeft), CLOCK);
        vm.warp(block.timestamp + 20 minutes + 1);
        (defenderLeft,) = game.clocksOf(disputeId);
        assertEq(uint256(defenderLeft), 0);
        vm.recordLogs();
        game.claimTimeout(disputeId);
        assertEq(uint8(_game().status), uint8(GameStatus.ChallengerWon));
        assertEq(_gameCredited(challenger), BOND);
    }

    function test_claimTimeout_afterResolution_reverts() public {
        vm.warp(block.timestamp + CLOCK + 1);
        game.claimTimeout(disputeId);
        vm.expectRevert(
            abi.encodeWithSelector(IBisectionGame.GameAlreadyResolved.selector, disputeId, GameStatus.ChallengerWon)
        );
        game.claimTimeout(disputeId);
    }

    function test_move_afterResolution_reverts() public {
        vm.warp(block.timestamp + CLOCK + 1);
        game.claimTimeout(disputeId);
        vm.expectRevert(
            abi.encodeWithSelector(IBisectionGame.GameAlreadyResolved.selector, disputeId, GameStatus.ChallengerWon)
        );
        vm.prank(solver);
        game.bisect(disputeId, K, 2 * K, new bytes32[](7));
    }

    function test_claimTimeout_unknownGame_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.UnknownGame.selector, 42));
        game.claimTimeout(42);
    }
}

/// @notice P-6, selective withholding (docs/SECURITY.md): a defender that serves the judges but not
///         the challenger used to win when it cheated on a later step of the segment: the challenger,
///         unable to compute its moves, disputed the first half and the game narrowed to the
///         segment's honest first step. Escalating hands the whole interval to the judges, who
///         fetch the data themselves.
contract BisectionGame_Escalate_Test is BisectionGame_Init {
    /// @notice The forged step, in the second half of segment 1 (steps K..2K).
    uint256 internal constant LATE_CHEAT = K + K / 2 + 5;

    /// @notice A default game whose defender posted its endpoints and its first midpoint.
    function _openBisected(uint256 cheatStep) internal {
        _openDefault(cheatStep);
        _postEndpoints();
        _bisect();
    }

    function _escalate() internal {
        Game memory g = _game();
        vm.prank(challenger);
        game.escalate(disputeId, g.lo, g.hi);
    }

    function test_escalate_cheatLaterInSegment_challengerWins_succeeds() public {
        _openBisected(LATE_CHEAT);
        vm.warp(block.timestamp + 11);
        vm.expectEmit(address(game));
        emit IBisectionGame.Escalated(disputeId, K, 2 * K, CLOCK - 11);
        _escalate();
        Game memory g = _game();
        assertEq(uint8(g.status), uint8(GameStatus.AwaitingStep));
        assertEq(uint8(g.turn), uint8(Side.None));
        assertEq(uint256(g.moves), 3);
        StepClaim memory claim = committee.stepClaimOf(g.stepDisputeId);
        assertTrue(claim.isStep);
        assertEq(uint256(claim.step), K);
        assertEq(uint256(claim.steps), K);
        assertEq(claim.startHash, committed[K]);
        assertEq(claim.claimedEndHash, committed[2 * K]);
        uint256 challengerStake = _staked(challenger, Role.Verifier);
        _judgeStep();
        assertEq(uint8(_game().status), uint8(GameStatus.ChallengerWon));
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Rejected));
        assertEq(_staked(solver, Role.Solver), 1000e18 - params.solverStake);
        assertEq(_staked(challenger, Role.Verifier), challengerStake);
    }

    /// @notice Without escalation the same withheld-from challenger loses: disputing the first half
    ///         narrows the game to an honest step of it.
    function test_noEscalation_cheatLaterInSegment_challengerLoses_succeeds() public {
        _openDefault(LATE_CHEAT);
        _postEndpoints();
        while (_game().status != GameStatus.AwaitingStep) {
            _bisect();
            _respond(false);
        }
        _judgeStep();
        assertEq(uint8(_game().status), uint8(GameStatus.DefenderWon));
    }

    function test_escalate_honestDefender_challengerLoses_succeeds() public {
        _openBisected(NO_CHEAT);
        _respondHonestly();
        _bisect();
        _escalate();
        assertEq(uint256(committee.stepClaimOf(_game().stepDisputeId).steps), K / ARITY);
        uint256 challengerStake = _staked(challenger, Role.Verifier);
        _judgeStep();
        assertEq(uint8(_game().status), uint8(GameStatus.DefenderWon));
        assertEq(_staked(challenger, Role.Verifier), challengerStake - params.verifierStake);
        assertEq(_staked(solver, Role.Solver), 1000e18);
    }

    function test_escalate_defender_reverts() public {
        _openBisected(NO_CHEAT);
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.OutOfTurn.selector, disputeId, solver, Side.Challenger));
        vm.prank(solver);
        game.escalate(disputeId, K, 2 * K);
    }

    function test_escalate_noPendingMidpoint_reverts() public {
        _openDefault(NO_CHEAT);
        _postEndpoints();
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.OutOfTurn.selector, disputeId, challenger, Side.Defender));
        vm.prank(challenger);
        game.escalate(disputeId, K, 2 * K);
    }

    function test_escalate_wrongInterval_reverts() public {
        _openBisected(NO_CHEAT);
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.WrongInterval.selector, disputeId, K, K + 1, K, 2 * K));
        vm.prank(challenger);
        game.escalate(disputeId, K, K + 1);
    }
}

contract BisectionGame_OnStepResolved_Test is BisectionGame_Init {
    function test_onStepResolved_notStepAdjudicator_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.NotStepAdjudicator.selector, stranger));
        vm.prank(stranger);
        game.onStepResolved(1, true, new address[](0), new address[](0));
    }

    function test_onStepResolved_unknownStep_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.UnknownStepDispute.selector, 7));
        vm.prank(address(committee));
        game.onStepResolved(7, true, new address[](0), new address[](0));
    }
}

contract BisectionGame_ClaimCredit_Test is BisectionGame_Init {
    function test_claimCredit_paysWinner_succeeds() public {
        _openDefault(NO_CHEAT);
        _postEndpoints();
        _bisect();
        vm.warp(block.timestamp + CLOCK + 1);
        game.claimTimeout(disputeId);
        uint256 before = token.balanceOf(solver);
        uint256 credit = escrow.creditOf(solver);
        assertGte(credit, 2 * BOND);
        vm.expectEmit(address(escrow));
        emit IEscrow.CreditClaimed(solver, credit);
        vm.prank(solver);
        escrow.claimCredit();
        assertEq(token.balanceOf(solver), before + credit);
        assertEq(escrow.creditOf(solver), 0);
        assertEq(token.balanceOf(address(game)), 0);
        _assertEscrowSolvent();
    }

    function test_claimCredit_none_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IEscrow.NoCreditToClaim.selector, stranger));
        vm.prank(stranger);
        escrow.claimCredit();
    }
}

contract BisectionGame_StepParent_Test is BisectionGame_Init {
    function test_setStepParent_notAdmin_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IArbitrationCommittee.NotAdmin.selector, stranger));
        vm.prank(stranger);
        committee.setStepParent(stranger);
    }

    function test_setStepParent_twice_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IArbitrationCommittee.StepParentAlreadySet.selector, address(game)));
        committee.setStepParent(stranger);
    }

    function test_openStepDispute_notParent_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IArbitrationCommittee.NotStepParent.selector, stranger));
        vm.prank(stranger);
        committee.openStepDispute(1, 0, 1, bytes32(0), bytes32(0), new address[](0), new address[](0));
    }

    function test_stepClaimOf_segmentDispute_isNotStep() public {
        assertFalse(committee.stepClaimOf(1).isStep);
    }
}

/// @notice Whole games, with an honest committee judging the last step.
contract BisectionGame_FullGame_Test is BisectionGame_Init {
    function test_fullGame_cheatingDefenderLoses_succeeds() public {
        uint256 cheatStep = K + 37;
        _openDefault(cheatStep);
        uint256 solverStakeBefore = _staked(solver, Role.Solver);
        vm.roll(block.number + 1);
        _narrowHonestly();
        Game memory g = _game();
        assertEq(uint256(g.lo), cheatStep, "bisection finds the forged step");
        assertEq(uint256(g.moves), 1 + 2 * K_ROUNDS);
        vm.recordLogs();
        _judgeStep();
        assertEq(uint8(_game().status), uint8(GameStatus.ChallengerWon));
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Rejected));
        assertEq(_gameCredited(challenger), uint256(g.moves) * BOND);
        assertEq(escrow.creditOf(solver), 0);
        assertEq(_staked(solver, Role.Solver), solverStakeBefore - params.solverStake);
        _assertEscrowSolvent();
        assertEq(token.balanceOf(address(game)), 0);
    }

    function testFuzz_fullGame_cheatingDefenderLoses(uint256 cheatSeed, bool byWhistleblower) public {
        uint256 cheatStep = bound(cheatSeed, 0, K - 1);
        _openGame(K, _chain(2 * uint256(K), cheatStep), 0, byWhistleblower, solver);
        _narrowHonestly();
        assertEq(uint256(_game().lo), cheatStep);
        _judgeStep();
        assertEq(uint8(_game().status), uint8(GameStatus.ChallengerWon));
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Rejected));
    }

    function testFuzz_fullGame_cheatingDefenderLoses() public {
        testFuzz_fullGame_cheatingDefenderLoses(0, false);
    }

    function test_fullGame_grievingChallengerLoses_succeeds() public {
        _openDefault(NO_CHEAT);
        address griefer = challenger;
        uint256 verifierStakeBefore = _staked(griefer, Role.Verifier);
        _postEndpoints();
        // The griefer disputes every midpoint, all the way down to the first step of the segment.
        while (_game().status != GameStatus.AwaitingStep) {
            _bisect();
            _respond(false);
        }
        Game memory g = _game();
        assertEq(uint256(g.lo), K);
        vm.recordLogs();
        _judgeStep();
        assertEq(uint8(_game().status), uint8(GameStatus.DefenderWon));
        assertEq(_gameCredited(solver), uint256(g.moves) * BOND);
        assertEq(_staked(griefer, Role.Verifier), verifierStakeBefore - params.verifierStake);
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized));
        _assertEscrowSolvent();
    }
}

/// @notice An honest defender (the HonestDefender actor) never loses, whatever the challenger does.
contract BisectionGame_HonestDefender_Test is BisectionGame_Init {
    /// @param kSeed Segment length k (bounded to 1..200).
    /// @param responses Seeds the challenger's part in each round (bit 0: the segment; bit 255:
    ///        whistleblower).
    /// @param quitRound Round at which the challenger stops answering (bounded; past the end: never).
    /// @param thinkSeed Seconds each side thinks per move (bounded within the clock).
    function testFuzz_honestDefender_neverLoses(uint256 kSeed, uint256 responses, uint256 quitRound, uint256 thinkSeed)
        public
    {
        uint32 k = uint32(bound(kSeed, 1, 200));
        uint256 rounds = Dissection.rounds(k, ARITY);
        quitRound = bound(quitRound, 0, rounds + 1);
        uint256 think = bound(thinkSeed, 0, CLOCK / (rounds + 2));
        bytes32[] memory hashes = _chain(2 * uint256(k), NO_CHEAT);
        HonestDefender actor = new HonestDefender(game, k, hashes);
        _enrollSolver(address(actor));
        _openGame(k, hashes, responses & 1 == 1 ? 1 : 0, (responses >> 255) == 1, address(actor));
        vm.recordLogs();
        uint256 actorBefore = token.balanceOf(address(actor));
        uint256 challengerMoves;

        for (uint256 round; _game().status != GameStatus.AwaitingStep && !_resolved(); ++round) {
            vm.warp(block.timestamp + think);
            assertTrue(actor.play(disputeId));
            if (_game().status == GameStatus.AwaitingStep) break;
            if (_game().status == GameStatus.AwaitingBisection) {
                vm.warp(block.timestamp + think);
                assertTrue(actor.play(disputeId));
            }
            if (round == quitRound) {
                vm.warp(block.timestamp + CLOCK + 1);
                game.claimTimeout(disputeId);
                break;
            }
            vm.warp(block.timestamp + think);
            // The actor's hashes, as a node reads them: from its Bisected log.
            posted = _postedFromLog();
            // Any part, honest or not.
            _respond(uint256(keccak256(abi.encode(responses, round))) % _parts());
            ++challengerMoves;
        }
        if (_game().status == GameStatus.AwaitingStep) _judgeStep();
        assertEq(uint8(_game().status), uint8(GameStatus.DefenderWon), "honest defender lost");
        assertTrue(_job(jobId).status != JobStatus.Rejected);
        // The honest defender gets back every token it put in and wins the challenger's moves.
        uint256 paidIn = actorBefore - token.balanceOf(address(actor));
        assertEq(_gameCredited(address(actor)), paidIn + challengerMoves * BOND, "defender's net != challenger's moves");
    }

    /// @notice The hashes of this game's latest `Bisected` log among those recorded since the
    ///         last read (the actor's bisections have no return value).
    function _postedFromLog() internal returns (bytes32[] memory hashes) {
        Vm.Log[] memory logs = vm.getRecordedLogs();
        for (uint256 i; i < logs.length; ++i) {
            Vm.Log memory log = logs[i];
            if (log.emitter != address(game) || log.topics[0] != IBisectionGame.Bisected.selector) continue;
            if (uint256(log.topics[1]) != disputeId) continue;
            (,, hashes,) = abi.decode(log.data, (uint32, uint32, bytes32[], uint64));
        }
        assertGt(hashes.length, 0, "no Bisected log");
    }

    function testFuzz_honestDefender_neverLoses() public {
        testFuzz_honestDefender_neverLoses(64, 0xA5A5, 99, 60);
    }

    function _resolved() internal view returns (bool) {
        GameStatus status = _game().status;
        return status == GameStatus.DefenderWon || status == GameStatus.ChallengerWon;
    }
}

/// @title BisectionGame_Gas_Test
/// @notice Gas per move and of a whole dispute (k = 64 and k = 1024, every round played: 2 and 4
///         dissections and responses at arity 8, then the step committee). Isolation mode: every call is its own
///         transaction with cold storage, so figures include the 21,000 intrinsic gas and calldata.
///         Recorded in contracts/snapshots/bisection.json.
/// forge-config: default.isolate = true
/// forge-config: ci.isolate = true
contract BisectionGame_Gas_Test is BisectionGame_Init {
    string internal constant GROUP = "bisection";
    /// @notice Most gas a whole dispute may cost (docs/MEASURED.md "Gas", docs/DISPUTES.md: the figures
    ///         reached, rounded up), so that a regression fails here.
    uint256 internal constant K64_DISPUTE_MAX_GAS = 1_700_000;
    uint256 internal constant K1024_DISPUTE_MAX_GAS = 1_900_000;

    struct Tally {
        uint256 endpoints;
        uint256 bisectMax;
        uint256 respondMax;
        uint256 lastRespond;
        uint256 moves;
        uint256 committee;
    }

    function test_fullDispute_k64_gas() public {
        _measure(64, "k64");
        vmx.snapshotValue(GROUP, "size BisectionGame", address(game).code.length);
    }

    function test_fullDispute_k1024_gas() public {
        _measure(1024, "k1024");
    }

    /// @notice An escalation at the first response: one move opens the step dispute on all k steps.
    function test_escalate_k64_gas() public {
        _openGame(K, _chain(2 * uint256(K), K + K / 3), 1, false, solver);
        _postEndpoints();
        _bisect();
        Game memory g = _game();
        vm.prank(challenger);
        game.escalate(disputeId, g.lo, g.hi);
        uint256 used = vmx.snapshotGasLastCall(GROUP, "k64 escalate (opens step on all k)");
        emit LogNamedUint256("k64 escalate", used);
        assertEq(uint8(_game().status), uint8(GameStatus.AwaitingStep));
    }

    function _measure(uint32 k, string memory tag) internal {
        _openGame(k, _chain(2 * uint256(k), k + k / 3), 1, false, solver);
        Tally memory t;
        _postEndpoints();
        t.endpoints = vmx.snapshotGasLastCall(GROUP, string.concat(tag, " postEndpoints"));
        t.moves = t.endpoints;
        while (_game().status != GameStatus.AwaitingStep) {
            _bisect();
            uint256 used = vmx.snapshotGasLastCall(GROUP, string.concat(tag, " bisect"));
            if (used > t.bisectMax) t.bisectMax = used;
            t.moves += used;
            _respondHonestly();
            used = vmx.snapshotGasLastCall(GROUP, string.concat(tag, " respond"));
            if (_game().status == GameStatus.AwaitingStep) t.lastRespond = used;
            else if (used > t.respondMax) t.respondMax = used;
            t.moves += used;
        }
        uint256 stepId = _game().stepDisputeId;
        bool valid = _stepValid(stepId);
        vm.roll(block.number + 2);
        committee.drawCommittee(stepId);
        t.committee += vmx.snapshotGasLastCall(GROUP, string.concat(tag, " step drawCommittee"));
        address[] memory members = committee.committeeOf(stepId);
        for (uint256 i; i < members.length; ++i) {
            _commitVote(stepId, members[i], valid);
            t.committee += vmx.snapshotGasLastCall(GROUP, string.concat(tag, " step commitVote"));
        }
        for (uint256 i; i < members.length; ++i) {
            _revealVote(stepId, members[i], valid);
            t.committee += vmx.snapshotGasLastCall(GROUP, string.concat(tag, " step revealVote"));
        }
        committee.resolve(stepId);
        t.committee += vmx.snapshotGasLastCall(GROUP, string.concat(tag, " step resolve (+ game + settlement)"));
        assertEq(uint8(_game().status), uint8(GameStatus.ChallengerWon));

        vmx.snapshotValue(GROUP, string.concat(tag, " bisect (max)"), t.bisectMax);
        vmx.snapshotValue(GROUP, string.concat(tag, " respond (max, not last)"), t.respondMax);
        vmx.snapshotValue(GROUP, string.concat(tag, " respond (last, opens step)"), t.lastRespond);
        vmx.snapshotValue(GROUP, string.concat(tag, " game moves total"), t.moves);
        vmx.snapshotValue(GROUP, string.concat(tag, " dispute total (moves + step committee)"), t.moves + t.committee);
        assertLte(t.moves + t.committee, k == 64 ? K64_DISPUTE_MAX_GAS : K1024_DISPUTE_MAX_GAS, "dispute gas bound");
        emit LogNamedUint256(string.concat(tag, " postEndpoints"), t.endpoints);
        emit LogNamedUint256(string.concat(tag, " bisect (max)"), t.bisectMax);
        emit LogNamedUint256(string.concat(tag, " respond (max, not last)"), t.respondMax);
        emit LogNamedUint256(string.concat(tag, " respond (last, opens step)"), t.lastRespond);
        emit LogNamedUint256(string.concat(tag, " moves"), uint256(_game().moves));
        emit LogNamedUint256(string.concat(tag, " game moves total"), t.moves);
        emit LogNamedUint256(string.concat(tag, " step committee total"), t.committee);
        emit LogNamedUint256(string.concat(tag, " dispute total"), t.moves + t.committee);
    }
}

/// @notice P-5 (docs/SECURITY.md): every challenger of a sample plays its own game against the
///         solver, one after the other, and a lost or abandoned game costs only its owner, so any one
///         honest challenger wins (Arbitrum BoLD's guarantee), whoever plays first.
contract BisectionGame_EveryChallenger_Test is BisectionGame_Init {
    address internal accomplice;
    address internal honest;
    address internal approver;

    /// @notice A k = K job on segment 1 (the solver forged the step after `cheatStep`): verifiers 0
    ///         and 1 reject the sample, verifier 2 approves it; finalize opens verifier 0's game.
    function _openTwoRejecters(uint256 cheatStep) internal {
        address[] memory verifiers = _assignedJob(K, _chain(2 * uint256(K), cheatStep), 1, solver);
        assertEq(verifiers.length, 3, "three seats");
        (accomplice, honest, approver) = (verifiers[0], verifiers[1], verifiers[2]);
        _submit(jobId, accomplice, uint256(1) << 1);
        _submit(jobId, honest, uint256(1) << 1);
        _submit(jobId, approver, 0);
        _passChallengeWindow(jobId);
        jobManager.finalize(jobId);
        disputeId = _job(jobId).disputeId;
        challenger = _game().challenger;
    }

    /// @notice The current challenger lets its clock run out after the defender's first bisection.
    function _abandon() internal {
        _postEndpoints();
        _bisect();
        vm.warp(block.timestamp + CLOCK + 1);
        game.claimTimeout(disputeId);
        assertEq(uint8(_game().status), uint8(GameStatus.DefenderWon), "abandoned game not lost");
    }

    /// @notice The solver's accomplice rejects first and abandons its game: before the fix every
    ///         rejecter was slashed with it and the cheating solver was paid. Now only the accomplice
    ///         loses, the honest rejecter plays next and wins, and the solver is slashed.
    function test_firstChallengerAbandons_nextRejecterWins_succeeds() public {
        _openTwoRejecters(K + 10);
        assertEq(challenger, accomplice, "first rejecter plays first");
        uint256 accompliceStake = _staked(accomplice, Role.Verifier);
        uint256 honestStake = _staked(honest, Role.Verifier);
        uint256 solverStake = _staked(solver, Role.Solver);
        _abandon();

        // Only the accomplice paid for its abandoned game; the honest rejecter is still in it.
        assertEq(_staked(accomplice, Role.Verifier), accompliceStake - params.verifierStake, "accomplice kept stake");
        assertEq(_staked(honest, Role.Verifier), honestStake, "honest rejecter slashed for another's game");
        assertEq(_locked(honest, Role.Verifier), params.verifierStake, "honest rejecter released early");
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Disputed), "job left its dispute");
        assertEq(jobManager.disputedMaskOf(jobId), uint256(1) << 1, "sample no longer disputed");

        // The next finalize opens the honest rejecter's own game, which it wins.
        jobManager.finalize(jobId);
        assertTrue(_job(jobId).disputeId != disputeId, "no second game");
        disputeId = _job(jobId).disputeId;
        challenger = _game().challenger;
        assertEq(challenger, honest, "second game not the next rejecter's");
        _narrowHonestly();
        _judgeStep();
        assertEq(uint8(_game().status), uint8(GameStatus.ChallengerWon), "honest challenger lost");
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Rejected), "cheat not rejected");
        assertEq(_staked(solver, Role.Solver), solverStake - params.solverStake, "solver not slashed");
        assertEq(_staked(honest, Role.Verifier), honestStake, "winner slashed");
        assertEq(_locked(honest, Role.Verifier), 0, "winner still locked");
        // The accomplice is not repaid by the honest win: it lost its own game.
        assertEq(_staked(accomplice, Role.Verifier), accompliceStake - params.verifierStake, "loser refunded");
        _assertEscrowSolvent();
    }

    /// @notice Against an honest solver every griefing rejecter loses its own game, each pays once,
    ///         and the job then finalizes; the approver is paid.
    function test_everyChallengerLoses_eachPaysOnce_jobFinalizes_succeeds() public {
        _openTwoRejecters(NO_CHEAT);
        uint256 accompliceStake = _staked(accomplice, Role.Verifier);
        uint256 honestStake = _staked(honest, Role.Verifier);
        _abandon();
        jobManager.finalize(jobId);
        disputeId = _job(jobId).disputeId;
        challenger = _game().challenger;
        assertEq(challenger, honest, "second rejecter did not play");
        _abandon();
        assertEq(jobManager.disputedMaskOf(jobId), 0, "sample still disputed after its last challenger");
        jobManager.finalize(jobId);
        assertEq(uint8(_job(jobId).status), uint8(JobStatus.Finalized), "honest job not finalized");
        assertEq(_staked(accomplice, Role.Verifier), accompliceStake - params.verifierStake, "first loser");
        assertEq(_staked(honest, Role.Verifier), honestStake - params.verifierStake, "second loser");
        assertEq(_locked(approver, Role.Verifier), 0, "approver still locked");
        _assertEscrowSolvent();
    }

    /// @notice A loser cannot be drawn again: a third finalize has nothing left to open.
    function test_lostChallenger_neverPlaysTwice_succeeds() public {
        _openTwoRejecters(NO_CHEAT);
        _abandon();
        jobManager.finalize(jobId);
        disputeId = _job(jobId).disputeId;
        assertEq(_game().challenger, honest, "loser drawn again");
        _abandon();
        jobManager.finalize(jobId);
        assertEq(_job(jobId).disputeId, disputeId, "a third game opened");
    }
}

/// @notice P-7 and P-25 (docs/SECURITY.md): a solver that trained from its own weights (pre-trained,
///         backdoored) cannot commit them as checkpoint 0, and the positional tree holds no second
///         state for index 0 (CheckpointBinding_Test tries the smuggled leaf). What it can commit is
///         initHash at index 0 followed by its own trajectory; segment 0 must then start from
///         initHash, in the claims and in the game's endpoints, and its own trajectory is what it
///         defends from there.
contract BisectionGame_InitialState_Test is BisectionGame_Init {
    bytes32 internal constant OWN_START = keccak256("pretrained weights");
    bytes32 internal init;
    /// @notice The committed tree: (0, initHash), (K, own1), (2K, own2).
    bytes32[] internal tree;
    bytes32[] internal own;

    function setUp() public override {
        super.setUp();
        interval = K;
        segment = 0;
        defender = solver;
        init = keccak256("genesis");
        own = new bytes32[](3);
        own[0] = OWN_START;
        own[1] = keccak256(abi.encode(OWN_START, "after K steps"));
        own[2] = keccak256(abi.encode(own[1], "after 2K steps"));
        bytes32[] memory committedStates = new bytes32[](3);
        committedStates[0] = init;
        committedStates[1] = own[1];
        committedStates[2] = own[2];
        tree = Merkle.leaves(K, committedStates);
        vm.prank(submitter);
        jobId = jobManager.postJob(MODEL_ID, SPEC_HASH, init, 2 * K, K, REWARD, SPEC_URI);
        vm.prank(solver);
        jobManager.claimJob(jobId);
        bytes32[] memory initProof = Merkle.proof(tree, 0);
        bytes32 commitment = _secretCommitment(jobId, solver);
        vm.prank(solver);
        jobManager.commitCheckpoints(jobId, Merkle.root(tree), initProof, CHECKPOINT_URL, commitment);
        vm.roll(block.number + 2);
        jobManager.assignVerifiers(jobId);
    }

    /// @notice Claims (start, end) per sample in sample order; segment 0 starts from `start0`.
    function _claimsFrom(bytes32 start0) internal view returns (bytes32[] memory starts, bytes32[] memory ends) {
        (, uint32[] memory segments) = jobManager.getAssignment(jobId);
        starts = new bytes32[](segments.length);
        ends = new bytes32[](segments.length);
        for (uint256 j; j < segments.length; ++j) {
            starts[j] = segments[j] == 0 ? start0 : own[segments[j]];
            ends[j] = own[segments[j] + 1];
        }
    }

    function test_postClaims_segmentZeroFromOwnWeights_reverts() public {
        (bytes32[] memory starts, bytes32[] memory ends) = _claimsFrom(OWN_START);
        vm.expectRevert(
            abi.encodeWithSelector(IVerificationRound.InitialStateMismatch.selector, _sid(jobId), OWN_START, init)
        );
        vm.prank(solver);
        round.postClaims(_sid(jobId), starts, ends);
        _bookClaims(round, _sid(jobId), starts, ends);
    }

    /// @notice With claims that must start from initHash, a verifier's replay of segment 0 from the
    ///         true initial state rejects it; in the game the solver cannot post its own weights as
    ///         the start, only initHash, from which its committed end is then disputed.
    function test_postEndpoints_segmentZeroFromOwnWeights_reverts() public {
        (bytes32[] memory starts, bytes32[] memory ends) = _claimsFrom(init);
        vm.prank(solver);
        round.postClaims(_sid(jobId), starts, ends);
        _bookClaims(round, _sid(jobId), starts, ends);
        (address[] memory verifiers, uint32[] memory segments) = jobManager.getAssignment(jobId);
        uint256 mask;
        for (uint256 j; j < segments.length; ++j) {
            if (segments[j] == 0) mask = uint256(1) << j;
        }
        assertTrue(mask != 0, "segment 0 not sampled");
        _submit(jobId, verifiers[0], mask);
        for (uint256 i = 1; i < verifiers.length; ++i) {
            _submit(jobId, verifiers[i], 0);
        }
        _revealPending(jobId);
        vm.warp(uint256(_job(jobId).challengeDeadline) + 1);
        bytes32[][] memory startProofs = new bytes32[][](segments.length);
        bytes32[][] memory endProofs = new bytes32[][](segments.length);
        for (uint256 j; j < segments.length; ++j) {
            startProofs[j] = Merkle.proof(tree, segments[j]);
            endProofs[j] = Merkle.proof(tree, uint256(segments[j]) + 1);
        }
        bytes32 secret = _secret(jobId);
        vm.prank(solver);
        round.revealSecret(_sid(jobId), secret, bytes32(0), startProofs, endProofs, _claimsArg(_sid(jobId)));
        jobManager.finalize(jobId);
        disputeId = _job(jobId).disputeId;
        assertEq(uint256(_game().segment), 0, "game not on segment 0");

        // Checkpoint 0 has one state, initHash: the proof of index 0 does not prove OWN_START.
        bytes32[] memory startProof = Merkle.proof(tree, 0);
        bytes32[] memory endProof = Merkle.proof(tree, 1);
        vm.expectRevert(abi.encodeWithSelector(IBisectionGame.InvalidEndpointProof.selector, disputeId, 0, OWN_START));
        vm.prank(solver);
        game.postEndpoints(disputeId, OWN_START, own[1], startProof, endProof);
        // From initHash the game goes on, and the solver's own trajectory is what it must defend.
        vm.prank(solver);
        game.postEndpoints(disputeId, init, own[1], startProof, endProof);
        assertEq(_game().agreedHash, init, "game does not start from initHash");
    }
}
