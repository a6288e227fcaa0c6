// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {Vm} from "@prb/test/Vm.sol";
import {BisectionGame} from "../src/BisectionGame.sol";
import {IArbitrationCommittee} from "../src/interfaces/IArbitrationCommittee.sol";
import {IBisectionGame} from "../src/interfaces/IBisectionGame.sol";
import {IEscrow} from "../src/interfaces/IEscrow.sol";
import {IJobManager} from "../src/interfaces/IJobManager.sol";
import {IStepAdjudicator} from "../src/interfaces/IStepAdjudicator.sol";
import {Game, GameStatus, Side, StepClaim} from "../src/types/BisectionTypes.sol";
import {Dispute} from "../src/types/DisputeTypes.sol";
import {JobStatus} from "../src/types/JobTypes.sol";
import {Role} from "../src/types/Role.sol";
import {BisectionGame_Init} from "./utils/BisectionGameInit.sol";

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

    /// @dev Anvil's `eth_call` may run at a timestamp older than the block that started the turn
    ///      (foundry-rs/foundry#11017); the view must read a full clock there, not panic.
    function test_clocksOf_callTimeBeforeTurnStart_readsFullClock() public {
        vm.warp(block.timestamp + 40 minutes);
        _postEndpoints();
        vm.warp(block.timestamp - 5);
        (uint64 defenderLeft, uint64 challengerLeft) = game.clocksOf(disputeId);
        assertEq(uint256(defenderLeft), 20 minutes);
        assertEq(uint256(challengerLeft), CLOCK);
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
        // The winning challenger keeps its stake, and its seat's fee is restaked with the rejection.
        assertEq(_staked(challenger, Role.Verifier), challengerStake + params.verifierFee);
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
        // The losing rejecter's stake and its reject bond (locked from that stake) are slashed.
        assertEq(_staked(challenger, Role.Verifier), challengerStake - params.verifierStake - params.challengeBond);
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
