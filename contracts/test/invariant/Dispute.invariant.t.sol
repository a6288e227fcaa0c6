// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Deployers} from "../utils/Deployers.sol";
import {InvariantTest} from "../utils/InvariantTest.sol";
import {DisputeHandler} from "./handlers/DisputeHandler.sol";
// Contracts
import {Escrow} from "../../src/Escrow.sol";
// Types
import {Bucket} from "../../src/types/EscrowTypes.sol";
import {GameStatus} from "../../src/types/BisectionTypes.sol";
import {JobStatus} from "../../src/types/JobTypes.sol";

/// @title Dispute_Invariant_Test
/// @notice Dispute-game invariants D1-D4 of PROPERTIES.md: bisection games (k = INTERVAL) with one
///         honest side, the other side's moves and all timing chosen by the fuzzer, and an honest
///         step committee (DisputeHandler).
/// @dev Default invariant settings of foundry.toml. `afterInvariant` plays every dispute left to its
///      end and checks D1-D4 once more, so that every run checks them on resolved games (about 5.4
///      games resolve during the fuzzed calls of a run and 9 by its end, at seed 0x1).
contract Dispute_Invariant_Test is Deployers, InvariantTest {
    DisputeHandler internal handler;

    function setUp() public override {
        vm.warp(START_TIME);
        vm.roll(START_BLOCK);
        handler = new DisputeHandler();
        (token, jobManager, game, committee) = handler.deployment();
        escrow = Escrow(address(jobManager.escrow()));
        targetContract(address(handler));
        bytes4[] memory selectors = new bytes4[](12);
        selectors[0] = DisputeHandler.openGame.selector;
        selectors[1] = DisputeHandler.defenderMove.selector;
        selectors[2] = DisputeHandler.challengerMove.selector;
        selectors[3] = DisputeHandler.claimTimeout.selector;
        selectors[4] = DisputeHandler.vote.selector;
        selectors[5] = DisputeHandler.driveStep.selector;
        selectors[6] = DisputeHandler.claimCredit.selector;
        // warp twice: stalling and running clocks out are as interesting as moving.
        selectors[7] = DisputeHandler.warp.selector;
        selectors[8] = DisputeHandler.warp.selector;
        selectors[9] = DisputeHandler.openGame.selector;
        selectors[10] = DisputeHandler.skipVote.selector;
        selectors[11] = DisputeHandler.challengerEscalates.selector;
        targetSelector(FuzzSelector({addr: address(handler), selectors: selectors}));
    }

    /// @notice Every run ends with its disputes played out (`DisputeHandler.settle`) and D1-D4
    ///         checked once more, so that no run checks them on unresolved games only.
    function afterInvariant() public {
        handler.settle();
        assertEq(handler.openGames().length, 0, "a game outlived settle()");
        assertEq(handler.liveJobs().length, 0, "a job stayed in dispute after settle()");
        assertGt(handler.ghost_resolved(), 0, "no game resolved in this run");
        assertGt(handler.ghost_terminalJobs(), 0, "no job reached a terminal state in this run");
        assertGt(handler.ghost_doubleRoleTerminal(), 0, "no double-role job reached a terminal state");
        invariant_disputeEndsInTime();
        invariant_jobsTerminateInBound();
        invariant_honestSideNeverLoses();
        invariant_claimsWithinCredits();
        invariant_tokensConserved();
    }

    /// @notice The sequence the fuzzer shrank (seed 0x1): job 1's game 1 ends by a fuzzed
    ///         `claimTimeout` after the keeper's last pass, so the job waits for `finalize` to open
    ///         its next game while no game is open; `settle` must still play that game to its end.
    function test_settle_jobAwaitingNextGame_succeeds() public {
        handler.openGame(25e18, 3732);
        handler.openGame(
            1637579619557843261749618616126573134024779093726534689069,
            99392045809360449040842434238654900175956411489456267
        );
        handler.defenderMove(4620, 99, "resolution not synced");
        handler.defenderMove(3000, 25e18, "k64");
        handler.warp(100_000);
        handler.challengerMove(22573565455891106104745230823, 0);
        handler.warp(1458505554503529578971898453284022879835144827085583655101583624);
        handler.claimTimeout(232152920575646);
        // The case: every game resolved, yet job 1 is still in dispute with samples to play.
        assertEq(handler.openGames().length, 0, "a game is still open");
        assertTrue(jobManager.getJob(1).status == JobStatus.Disputed, "job 1 left its dispute");
        afterInvariant();
    }

    /// @custom:invariant D1 Every game is resolved within DISPUTE_BOUND (2 * clockSeconds + vote
    ///                  commit + vote reveal windows + 1 s) of its opening, plus at most one time
    ///                  jump minus 1 s (the keeper acts before each jump); no game outlives it. Exact
    ///                  parts, checked at every keeper pass: the bisection phase lasts at most
    ///                  2 * clockSeconds, and a game is resolvable from 2 * clockSeconds + 1 s after
    ///                  opening (bisection phase) or commit + reveal window + 1 s after its step
    ///                  dispute opened.
    function invariant_disputeEndsInTime() public {
        assertLte(handler.ghost_maxJump(), handler.MAX_JUMP(), "a time jump exceeded MAX_JUMP");
        assertEq(handler.ghost_drawFailures(), 0, "a step committee could not be drawn");
        assertEq(handler.ghost_slowBisections(), 0, "bisection phase longer than 2 * clockSeconds");
        assertEq(handler.ghost_overdue(), 0, "game unresolvable past its deadline");
        assertEq(handler.ghost_refusedResolutions(), 0, "a resolving call was refused");
        uint256 limit = handler.DISPUTE_BOUND() + handler.MAX_JUMP() - 1;
        (uint256[] memory openedAt,, uint256[] memory resolvedAt) = handler.gameTimes();
        assertEq(openedAt.length, game.gameCount(), "games not synced");
        for (uint256 i; i < openedAt.length; ++i) {
            GameStatus status = game.getGame(i + 1).status;
            bool resolved = status == GameStatus.DefenderWon || status == GameStatus.ChallengerWon;
            assertEq(resolved, resolvedAt[i] != 0, "resolution not synced");
            uint256 end = resolved ? resolvedAt[i] : block.timestamp;
            assertLte(end - openedAt[i], limit, resolved ? "game resolved too late" : "game outlived its bound");
        }
    }

    /// @custom:invariant D2 An honest defender never loses a game (whatever the challenger plays and
    ///                  however the clocks run), and an honest challenger never loses against a
    ///                  solver that forged a step of the disputed segment.
    function invariant_honestSideNeverLoses() public {
        assertEq(handler.ghost_honestDefenderLosses(), 0, "honest defender lost");
        assertEq(handler.ghost_honestChallengerLosses(), 0, "honest challenger lost");
        assertEq(handler.ghost_refusedHonestMoves(), 0, "an honest move made in time was refused");
    }

    /// @custom:invariant D5 Every job reaches a terminal state within `jobBound()` of its opening
    ///                  (at most samplesPerJob * 2V games, each within D1's bound), whatever its
    ///                  parties do, a verifier that is also a whistleblower and throws its games
    ///                  included; D6 every job of an honest solver ends Finalized, and the solver is
    ///                  given exactly REWARD per Finalized job (restaked, no claim needed).
    ///                  Progress (`afterInvariant`): some job, and some double-role job, ended.
    function invariant_jobsTerminateInBound() public {
        assertEq(handler.ghost_lateJobs(), 0, "a job ended later than its bound");
        assertEq(handler.ghost_honestSolverNotPaid(), 0, "an honest solver's job did not finalize");
        (uint256 paid, uint256 owed) = handler.solverPay();
        assertEq(paid, owed, "the solver was not given the reward of each finalized job");
        uint256[] memory live = handler.liveJobs();
        for (uint256 i; i < live.length; ++i) {
            assertLte(
                block.timestamp - handler.ghost_jobOpenedAt(live[i]), handler.jobBound(), "a job outlived its bound"
            );
        }
    }

    /// @custom:invariant D3 No account claims more than it was credited: credits from the JobManager
    ///                  and from the game all land at the Escrow, the game credits exactly the bonds
    ///                  it announces, and credited - claimed is the account's current credit. Every
    ///                  payment straight to a wallet (`Paid`) is the JobManager's and is the token
    ///                  transfer of exactly its amount to that account; tokens leave the Escrow
    ///                  only as claims and payments (D4).
    function invariant_claimsWithinCredits() public {
        assertEq(handler.ghost_claimMismatches(), 0, "claim paid other than the credit");
        assertEq(handler.ghost_payMismatches(), 0, "payment other than its token transfer");
        address[] memory accounts = handler.accounts();
        uint256[4][] memory ledger = handler.creditLedger();
        uint256 gameCredited;
        uint256 outflow;
        for (uint256 i; i < accounts.length; ++i) {
            uint256 credited = ledger[i][0] + ledger[i][1];
            uint256 claimed = ledger[i][2];
            gameCredited += ledger[i][1];
            outflow += claimed + ledger[i][3];
            assertLte(claimed, credited, "Escrow: claimed > credited");
            assertEq(credited - claimed, escrow.creditOf(accounts[i]), "Escrow: credit != credited - claimed");
        }
        assertEq(gameCredited, handler.ghost_gameAnnouncedBonds(), "game: credited != bonds announced");
        assertEq(outflow, handler.ghost_escrowOutflow(), "Escrow: tokens out != claims + payments");
        assertEq(
            handler.ghost_paid(address(jobManager.stakeManager())),
            handler.ghost_restakedTotal(),
            "StakeManager: earnings paid != earnings restaked"
        );
    }

    /// @custom:invariant D4 The Escrow's token balance equals the sum of its buckets and credits
    ///                  (nothing unbooked, no dispute pot left over: a payment straight to a wallet
    ///                  leaves its bucket and the balance together); its Bonds bucket covers the move
    ///                  bonds of unresolved games; the game and the JobManager hold no tokens.
    function invariant_tokensConserved() public {
        // The handler's open games are exactly the unresolved ones (checked by D1).
        uint256 moves;
        uint256[] memory open = handler.openGames();
        for (uint256 i; i < open.length; ++i) {
            moves += game.moveCount(open[i]);
        }
        uint256 owed;
        address[] memory accounts = handler.accounts();
        for (uint256 i; i < accounts.length; ++i) {
            owed += escrow.creditOf(accounts[i]);
        }
        (uint256 escrowed, uint256 bonds, uint256 credits, uint256 pool) = escrow.liabilities();
        assertEq(owed, credits, "credits of known accounts != Escrow credits");
        assertGte(bonds, moves * game.moveBond(), "Bonds bucket < move bonds of open games");
        assertEq(token.balanceOf(address(game)), 0, "game holds tokens");
        assertEq(token.balanceOf(address(jobManager)), 0, "JobManager holds tokens");
        assertEq(escrow.bucketOf(Bucket.Pot), 0, "dispute pot left over");
        assertEq(escrow.bucketOf(Bucket.Unbooked), 0, "Escrow holds unbooked tokens");
        assertEq(token.balanceOf(address(escrow)), escrowed + bonds + credits + pool, "Escrow balance != liabilities");
    }
}
