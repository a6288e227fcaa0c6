// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Interfaces
import {IAdjudicator} from "./IAdjudicator.sol";
import {IEscrow} from "./IEscrow.sol";
import {IJobManager} from "./IJobManager.sol";
import {IStepAdjudicator, IStepParent} from "./IStepAdjudicator.sol";
// Types
import {Game, GameStatus, Side} from "../types/BisectionTypes.sol";

/// @title IBisectionGame
/// @notice `IAdjudicator` that scales disputes with the segment length k (docs/DISPUTES.md): the
///         defender (the job's solver) and the challenger narrow the disputed segment's steps by
///         n-way dissection (the defender posts its hashes at `DISSECTION_ARITY - 1` evenly spaced
///         points, the challenger picks the one part whose start it accepts and whose end it
///         disputes; Truebit's and Arbitrum's dissection games) under chess clocks and move bonds
///         until one step is left, which an `IStepAdjudicator` judges.
///         The outcome goes to `JobManager.onDisputeResolved` (segmentValid = defender won), so the
///         v0 settlement is unchanged. Game ids are the JobManager's dispute ids.
interface IBisectionGame is IAdjudicator, IStepParent {
    ////// Errors //////

    /// @notice Thrown when a constructor parameter is out of range.
    /// @param name Parameter name.
    /// @param value Value received.
    error InvalidParam(string name, uint256 value);

    /// @notice Thrown when an address argument is zero.
    error ZeroAddress();

    /// @notice Thrown when `openDispute` is not called by the JobManager.
    /// @param caller msg.sender.
    error NotJobManager(address caller);

    /// @notice Thrown when `onStepResolved` is not called by the step adjudicator.
    /// @param caller msg.sender.
    error NotStepAdjudicator(address caller);

    /// @notice Thrown when the JobManager opens a dispute without a challenger.
    /// @param jobId Job.
    /// @param segment Disputed segment.
    error ChallengerNotFound(uint256 jobId, uint32 segment);

    /// @notice Thrown when a game does not exist.
    /// @param disputeId Game.
    error UnknownGame(uint256 disputeId);

    /// @notice Thrown when a step dispute does not belong to a game waiting for it.
    /// @param stepDisputeId Step adjudicator's dispute id.
    error UnknownStepDispute(uint256 stepDisputeId);

    /// @notice Thrown when a move or a timeout claim arrives after the game was resolved.
    /// @param disputeId Game.
    /// @param status Final status.
    error GameAlreadyResolved(uint256 disputeId, GameStatus status);

    /// @notice Thrown when the caller is neither the defender nor the challenger.
    /// @param disputeId Game.
    /// @param caller msg.sender.
    error NotParty(uint256 disputeId, address caller);

    /// @notice Thrown when a party moves while it is not its turn.
    /// @param disputeId Game.
    /// @param caller msg.sender.
    /// @param turn Side to move (None while the step adjudicator decides).
    error OutOfTurn(uint256 disputeId, address caller, Side turn);

    /// @notice Thrown when the side to move makes a move of the wrong kind (e.g. `bisect` before
    ///         `postEndpoints`).
    /// @param disputeId Game.
    /// @param status Current status.
    error UnexpectedMove(uint256 disputeId, GameStatus status);

    /// @notice Thrown when a move names an interval other than the current one.
    /// @param disputeId Game.
    /// @param expectedLo Lower end the mover expected.
    /// @param expectedHi Upper end the mover expected.
    /// @param lo Current lower end.
    /// @param hi Current upper end.
    error WrongInterval(uint256 disputeId, uint32 expectedLo, uint32 expectedHi, uint32 lo, uint32 hi);

    /// @notice Thrown when a bisection posts other than one hash per interior dissection point.
    /// @param disputeId Game.
    /// @param expected min(DISSECTION_ARITY, hi - lo) - 1.
    /// @param got Hashes posted.
    error WrongHashCount(uint256 disputeId, uint256 expected, uint256 got);

    /// @notice Thrown when a response's hashes are not the ones the defender posted.
    /// @param disputeId Game.
    error HashesMismatch(uint256 disputeId);

    /// @notice Thrown when a response picks a part the interval does not have.
    /// @param disputeId Game.
    /// @param index Part picked.
    /// @param parts Parts of the interval (min(DISSECTION_ARITY, hi - lo)).
    error InvalidIndex(uint256 disputeId, uint256 index, uint256 parts);

    /// @notice Thrown when an endpoint is not the job's committed checkpoint.
    /// @param disputeId Game.
    /// @param leafIndex Checkpoint leaf (s or s + 1).
    /// @param stateHash State hash posted.
    error InvalidEndpointProof(uint256 disputeId, uint256 leafIndex, bytes32 stateHash);

    /// @notice Thrown when the side to move has run out of clock (it can only lose by timeout now).
    /// @param disputeId Game.
    /// @param side Side to move.
    /// @param deadline Last timestamp it could move at.
    /// @param nowTs Current timestamp.
    error ClockExpired(uint256 disputeId, Side side, uint64 deadline, uint64 nowTs);

    /// @notice Thrown when claiming a timeout while the side to move still has clock.
    /// @param disputeId Game.
    /// @param side Side to move (None while nobody's clock runs).
    /// @param deadline Last timestamp it can move at.
    /// @param nowTs Current timestamp.
    error ClockNotExpired(uint256 disputeId, Side side, uint64 deadline, uint64 nowTs);

    ////// Events //////

    /// @notice Emitted when the JobManager opened a game; the defender's clock starts.
    /// @param disputeId Game (= JobManager dispute id).
    /// @param jobId Job.
    /// @param segment Segment under dispute.
    /// @param defender The job's solver.
    /// @param challenger The party that opened the dispute.
    /// @param lo First step of the segment (s * k).
    /// @param hi Last step of the segment ((s + 1) * k).
    event GameOpened(
        uint256 indexed disputeId,
        uint256 indexed jobId,
        uint32 segment,
        address defender,
        address challenger,
        uint32 lo,
        uint32 hi
    );

    /// @notice Emitted when the defender posted the segment's committed endpoints.
    /// @param disputeId Game.
    /// @param startHash State hash at lo (leaf s).
    /// @param endHash State hash at hi (leaf s + 1).
    /// @param clockLeft Defender's clock left (seconds).
    event EndpointsPosted(uint256 indexed disputeId, bytes32 startHash, bytes32 endHash, uint64 clockLeft);

    /// @notice Emitted when the defender posted its hashes at the interval's dissection points.
    /// @param disputeId Game.
    /// @param lo Lower end of the interval (steps).
    /// @param hi Upper end of the interval (steps).
    /// @param hashes Defender's state hashes at the interior points lo + (hi - lo) * j / parts,
    ///        j = 1 .. parts - 1, parts = min(DISSECTION_ARITY, hi - lo) (the challenger passes
    ///        them back to `respond`; the game keeps only their keccak256).
    /// @param clockLeft Defender's clock left (seconds).
    event Bisected(uint256 indexed disputeId, uint32 lo, uint32 hi, bytes32[] hashes, uint64 clockLeft);

    /// @notice Emitted when the challenger picked the part it disputes.
    /// @param disputeId Game.
    /// @param index Part picked: [point(index), point(index + 1)]; the challenger accepts the
    ///        defender's hash at its start and disputes the one at its end.
    /// @param lo New lower end (steps).
    /// @param hi New upper end (steps).
    /// @param clockLeft Challenger's clock left (seconds).
    event Responded(uint256 indexed disputeId, uint256 index, uint32 lo, uint32 hi, uint64 clockLeft);

    /// @notice Emitted when the game handed steps to the step adjudicator (one step, or the
    ///         escalated interval: `IArbitrationCommittee.stepClaimOf` has the count).
    /// @param disputeId Game.
    /// @param stepDisputeId Step adjudicator's dispute id.
    /// @param step Step t under dispute.
    /// @param startHash Agreed hash at t.
    /// @param claimedEndHash Defender's hash at the end of the disputed steps.
    event StepDisputeOpened(
        uint256 indexed disputeId, uint256 indexed stepDisputeId, uint32 step, bytes32 startHash, bytes32 claimedEndHash
    );

    /// @notice Emitted when the challenger handed the whole interval to the step adjudicator.
    /// @param disputeId Game.
    /// @param lo Lower end (agreed state).
    /// @param hi Upper end (the defender's claimed state).
    /// @param clockLeft Challenger's clock left (seconds).
    event Escalated(uint256 indexed disputeId, uint32 lo, uint32 hi, uint64 clockLeft);

    /// @notice Emitted when a side lost on time.
    /// @param disputeId Game.
    /// @param loser Side that ran out of clock.
    /// @param caller Account that claimed the timeout.
    event TimeoutClaimed(uint256 indexed disputeId, Side loser, address caller);

    /// @notice Emitted when a game was resolved and reported to the JobManager.
    /// @param disputeId Game.
    /// @param defenderWon Outcome (the JobManager's segmentValid).
    /// @param winner Account credited with every move bond of the game.
    /// @param bonds Move bonds credited to the winner (wei).
    event GameResolved(uint256 indexed disputeId, bool defenderWon, address winner, uint256 bonds);

    /// @notice Emitted when a game resolved: the prepaid move bonds each side did not play, credited
    ///         back to it (wei; 0 for a side that never moved).
    /// @param disputeId Game.
    /// @param defenderRefund Credited to the defender.
    /// @param challengerRefund Credited to the challenger.
    event MoveBondsRefunded(uint256 indexed disputeId, uint256 defenderRefund, uint256 challengerRefund);

    ////// Moves //////

    /// @notice First move (defender): posts the committed state hashes at both ends of the segment
    ///         with their Merkle proofs (checked with `JobManager.verifyCheckpoint`) and a move bond.
    /// @param disputeId Game.
    /// @param startHash State hash at s * k (leaf s).
    /// @param endHash State hash at (s + 1) * k (leaf s + 1).
    /// @param startProof Merkle proof of leaf s.
    /// @param endProof Merkle proof of leaf s + 1.
    function postEndpoints(
        uint256 disputeId,
        bytes32 startHash,
        bytes32 endHash,
        bytes32[] calldata startProof,
        bytes32[] calldata endProof
    ) external;

    /// @notice Defender: posts its state hashes at the interior dissection points of [lo, hi]:
    ///         point(j) = lo + (hi - lo) * j / parts for j = 1 .. parts - 1, with
    ///         parts = min(DISSECTION_ARITY, hi - lo) (prepaid with the endpoints). The game
    ///         stores their keccak256 and the block (`Game.pendingBlock`); the hashes themselves
    ///         are in the `Bisected` log.
    /// @param disputeId Game.
    /// @param expectedLo Current lower end (guards against a stale view).
    /// @param expectedHi Current upper end.
    /// @param hashes parts - 1 state hashes, in step order (reverts `WrongHashCount` otherwise).
    function bisect(uint256 disputeId, uint32 expectedLo, uint32 expectedHi, bytes32[] calldata hashes) external;

    /// @notice Challenger: picks part `index` of the pending dissection, [point(index),
    ///         point(index + 1)], accepting the defender's hash at its start and disputing the one
    ///         at its end (point(0) = lo carries the agreed hash, point(parts) = hi the claimed
    ///         one). An honest challenger picks the part before its first disagreement. Its first
    ///         response prepays its play's move bonds. When one step is left, opens the step
    ///         dispute at the step adjudicator.
    /// @param disputeId Game.
    /// @param expectedLo Current lower end (guards against a stale view).
    /// @param expectedHi Current upper end.
    /// @param index Part picked, < parts (reverts `InvalidIndex` otherwise).
    /// @param hashes The defender's posted hashes, from its `Bisected` log (reverts
    ///        `HashesMismatch` unless their keccak256 is the pending one).
    function respond(uint256 disputeId, uint32 expectedLo, uint32 expectedHi, uint256 index, bytes32[] calldata hashes)
        external;

    /// @notice Challenger, on its turn (a dissection pending): hands the whole current interval
    ///         [lo, hi] to the step adjudicator instead of responding, and posts a move bond. For a
    ///         challenger that cannot get the defender's states (withheld from it, docs/SECURITY.md
    ///         P-6): the judges replay hi - lo steps from the agreed state at lo themselves, so a
    ///         defender that serves them is judged on every step, and one that withholds from them
    ///         loses. The clocks stop as for a one-step dispute.
    /// @param disputeId Game.
    /// @param expectedLo Current lower end (guards against a stale view).
    /// @param expectedHi Current upper end.
    function escalate(uint256 disputeId, uint32 expectedLo, uint32 expectedHi) external;

    /// @notice Anyone: once the side to move has spent its whole clock, it loses. The game resolves
    ///         without a step adjudicator (empty majority and non-voters).
    /// @param disputeId Game.
    function claimTimeout(uint256 disputeId) external;

    ////// Views //////

    /// @notice A game.
    /// @param disputeId Game.
    /// @return game The game (all-zero if it does not exist).
    function getGame(uint256 disputeId) external view returns (Game memory game);

    /// @notice Moves made in a game (each posted one move bond).
    /// @param disputeId Game.
    /// @return count Moves.
    function moveCount(uint256 disputeId) external view returns (uint256 count);

    /// @notice Both clocks now, counting the time the side to move has spent so far.
    /// @param disputeId Game.
    /// @return defender Defender's seconds left.
    /// @return challenger Challenger's seconds left.
    function clocksOf(uint256 disputeId) external view returns (uint64 defender, uint64 challenger);

    /// @notice Game waiting for a step dispute.
    /// @param stepDisputeId Step adjudicator's dispute id.
    /// @return disputeId Game (0 if none).
    function gameOfStep(uint256 stepDisputeId) external view returns (uint256 disputeId);

    /// @notice Number of games opened.
    /// @return count Games.
    function gameCount() external view returns (uint256 count);

    /// @notice JobManager served.
    /// @return jobManager JobManager.
    function jobManager() external view returns (IJobManager jobManager);

    /// @notice Step adjudicator judging the last step.
    /// @return stepAdjudicator Step adjudicator.
    function stepAdjudicator() external view returns (IStepAdjudicator stepAdjudicator);

    /// @notice Escrow holding the move bonds and crediting the winner (the JobManager's Escrow).
    /// @return escrow Escrow.
    function escrow() external view returns (IEscrow escrow);

    /// @notice Parts each bisection splits the interval into (fewer when it is shorter): 8, so a
    ///         bisection posts up to 7 hashes and a k = 1024 game takes 4 rounds instead of 10.
    /// @return arity Parts.
    // forge-lint: disable-next-line(mixed-case-function)
    function DISSECTION_ARITY() external view returns (uint8 arity);

    /// @notice Dissection rounds that narrow `k` steps down to one (a game's `depth`): w = k, then
    ///         w = ceil(w / min(DISSECTION_ARITY, w)) until w = 1 (4 for k = 1024, 2 for k = 64).
    /// @param k Segment length (steps).
    /// @return depth Rounds.
    function depthOf(uint32 k) external pure returns (uint8 depth);

    /// @notice Chess clock per side (seconds).
    /// @return seconds_ Seconds.
    function clockSeconds() external view returns (uint64 seconds_);

    /// @notice Bond of every move (wei). A side prepays the bonds of its longest play at its first
    ///         move (`moveBondDue`); what it did not play is refunded when the game resolves.
    /// @return bond Bond.
    function moveBond() external view returns (uint256 bond);

    /// @notice Tokens the next move of the side to move pulls from it (wei; the Escrow needs this
    ///         allowance): `(1 + depth) * moveBond` for the defender's `postEndpoints`,
    ///         `depth * moveBond` for the challenger's first `respond` or `escalate`, 0 for every
    ///         later move (already prepaid) and once nobody is to move.
    /// @param disputeId Game.
    /// @return amount Bond due (wei).
    function moveBondDue(uint256 disputeId) external view returns (uint256 amount);
}
