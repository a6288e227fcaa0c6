// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Libraries
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
// Contracts
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
// Interfaces
import {IAdjudicator} from "./interfaces/IAdjudicator.sol";
import {IBisectionGame} from "./interfaces/IBisectionGame.sol";
import {IEscrow} from "./interfaces/IEscrow.sol";
import {IJobManager} from "./interfaces/IJobManager.sol";
import {IStepAdjudicator, IStepParent} from "./interfaces/IStepAdjudicator.sol";
// Types
import {Bucket} from "./types/EscrowTypes.sol";
import {Game, GameStatus, Side} from "./types/BisectionTypes.sol";
import {RoundJob, Verdict} from "./types/JobTypes.sol";

/// @title BisectionGame
/// @notice Bisection dispute game of docs/DISPUTES.md, an `IAdjudicator` for the JobManager. The
///         defender (the job's solver) posts the segment's committed endpoints, then dissects the
///         interval into up to `DISSECTION_ARITY` parts, posting its hashes at the interior points
///         (n-way dissection, as in Truebit and Arbitrum's challenge protocol); the challenger
///         (first rejecter of the sample, else its first whistleblower) picks the part whose start
///         it accepts and whose end it disputes. After `depthOf(k)` rounds (4 for k = 1024) one
///         step t is left, judged by the `IStepAdjudicator`. A bisection stores only the keccak256
///         of its hashes; the response passes them back from the `Bisected` log.
///         Each side has a chess clock; each move costs `moveBond`, and the winner is credited
///         every bond of the game at the Escrow (pull payment, `Escrow.claimCredit`). A side
///         prepays the bonds of its longest play (`depth` moves, plus the endpoints for the
///         defender) in one deposit at its first move, and is refunded
///         the moves it did not play when the game resolves: one token transfer per side instead
///         of one per move, same payouts. Move bonds sit in the Escrow's Bonds bucket; the game
///         holds no tokens.
/// @dev Deployment: `constructor(jobManager, stepAdjudicator, clockSeconds, moveBond)`; then
///      `jobManager.setAdjudicator(game)` and the step adjudicator must accept the game as its
///      parent (`ArbitrationCommittee.setStepParent(game)`), and the Escrow must authorise it.
///      Needs no StakeManager role.
contract BisectionGame is ReentrancyGuardTransient, IBisectionGame {
    using SafeCast for uint256;

    ////// Constants / Immutables //////

    /// @inheritdoc IBisectionGame
    uint8 public constant DISSECTION_ARITY = 8;

    /// @notice Longest chess clock (one year): keeps `turnStartedAt + clock` far from overflow.
    uint64 public constant MAX_CLOCK_SECONDS = 365 days;

    IJobManager internal immutable _JOB_MANAGER;
    IStepAdjudicator internal immutable _STEP_ADJUDICATOR;
    /// @custom:security non-reentrant
    IEscrow internal immutable _ESCROW;
    uint64 internal immutable _CLOCK_SECONDS;
    uint256 internal immutable _MOVE_BOND;

    ////// State //////

    uint256 internal _gameCount;
    mapping(uint256 disputeId => Game game) internal _games;
    mapping(uint256 stepDisputeId => uint256 disputeId) internal _stepGames;

    ////// Constructor //////

    /// @param jobManager_ JobManager served (the only caller of `openDispute`; its Escrow holds bonds).
    /// @param stepAdjudicator_ Judges the last step (must accept this game as its parent).
    /// @param clockSeconds_ Chess clock per side (seconds), 1..MAX_CLOCK_SECONDS.
    /// @param moveBond_ Bond posted with every move (wei), may be 0.
    constructor(IJobManager jobManager_, IStepAdjudicator stepAdjudicator_, uint64 clockSeconds_, uint256 moveBond_) {
        if (address(jobManager_) == address(0) || address(stepAdjudicator_) == address(0)) revert ZeroAddress();
        if (clockSeconds_ == 0 || clockSeconds_ > MAX_CLOCK_SECONDS) {
            revert InvalidParam("clockSeconds", clockSeconds_);
        }
        _JOB_MANAGER = jobManager_;
        _STEP_ADJUDICATOR = stepAdjudicator_;
        _ESCROW = jobManager_.escrow();
        _CLOCK_SECONDS = clockSeconds_;
        _MOVE_BOND = moveBond_;
    }

    ////// External: adjudicator //////

    /// @inheritdoc IAdjudicator
    /// @dev `excluded` and `reserve` are not stored: the step dispute re-derives them from the
    ///      JobManager's views exactly as `LibSettlement.openDispute` builds them. A game is played
    ///      one against one, so its ruling binds only `challenger` (`challengerOnly = true`).
    function openDispute(uint256 jobId, uint32 segment, address challenger, address[] calldata, address[] calldata)
        external
        returns (uint256 disputeId, bool challengerOnly)
    {
        if (msg.sender != address(_JOB_MANAGER)) revert NotJobManager(msg.sender);
        if (challenger == address(0)) revert ChallengerNotFound(jobId, segment);
        challengerOnly = true;
        // SAFETY: trusted JobManager view (the lean one: solver and k, no model id resolved).
        RoundJob memory job = _JOB_MANAGER.roundJobOf(jobId);
        disputeId = ++_gameCount;
        Game storage game = _games[disputeId];
        game.jobId = jobId;
        game.segment = segment;
        game.defender = job.solver;
        game.challenger = challenger;
        // SAFETY: (segment + 1) * k <= totalSteps (uint32), since segments are drawn from [0, N/k).
        game.lo = segment * job.checkpointInterval;
        game.hi = (segment + 1) * job.checkpointInterval;
        game.depth = depthOf(job.checkpointInterval);
        game.turn = Side.Defender;
        game.status = GameStatus.AwaitingEndpoints;
        game.defenderClock = _CLOCK_SECONDS;
        game.challengerClock = _CLOCK_SECONDS;
        game.turnStartedAt = uint64(block.timestamp);
        emit GameOpened(disputeId, jobId, segment, job.solver, challenger, game.lo, game.hi);
    }

    /// @inheritdoc IStepParent
    function onStepResolved(
        uint256 stepDisputeId,
        bool claimValid,
        address[] calldata majority,
        address[] calldata nonVoters
    ) external nonReentrant {
        if (msg.sender != address(_STEP_ADJUDICATOR)) {
            revert NotStepAdjudicator(msg.sender);
        }
        uint256 disputeId = _stepGames[stepDisputeId];
        if (disputeId == 0 || _games[disputeId].status != GameStatus.AwaitingStep) {
            revert UnknownStepDispute(stepDisputeId);
        }
        _resolve(disputeId, _games[disputeId], claimValid, majority, nonVoters);
    }

    ////// External: moves //////

    /// @inheritdoc IBisectionGame
    function postEndpoints(
        uint256 disputeId,
        bytes32 startHash,
        bytes32 endHash,
        bytes32[] calldata startProof,
        bytes32[] calldata endProof
    ) external nonReentrant {
        Game storage game = _games[disputeId];
        _checkMover(disputeId, game, Side.Defender, GameStatus.AwaitingEndpoints);
        uint256 jobId = game.jobId;
        uint256 leaf = game.segment;
        // SAFETY: trusted JobManager view over the job's committed root.
        if (!_JOB_MANAGER.verifyCheckpoint(jobId, leaf, startHash, startProof)) {
            revert InvalidEndpointProof(disputeId, leaf, startHash);
        }
        if (!_JOB_MANAGER.verifyCheckpoint(jobId, leaf + 1, endHash, endProof)) {
            revert InvalidEndpointProof(disputeId, leaf + 1, endHash);
        }
        // Segment 0 starts from the job's initial state: the positional proof of index 0 implies it
        // (the commit proved checkpoint 0 is initHash, and the tree holds one leaf per index;
        // docs/SECURITY.md P-7, P-25). The job keeps no initHash after the commit (`Job.root`).
        uint64 clockLeft = _spendClock(disputeId, game, Side.Defender);
        game.agreedHash = startHash;
        game.claimedHash = endHash;
        ++game.moves;
        // The defender moves again (bisect), unless k = 1 and the step goes to the adjudicator.
        game.status = GameStatus.AwaitingBisection;
        emit EndpointsPosted(disputeId, startHash, endHash, clockLeft);
        // The defender's whole play: the endpoints and at most `depth` bisections.
        _pullBond((1 + uint256(game.depth)) * _MOVE_BOND);
        if (game.hi - game.lo == 1) _openStep(disputeId, game);
    }

    /// @inheritdoc IBisectionGame
    function bisect(uint256 disputeId, uint32 expectedLo, uint32 expectedHi, bytes32[] calldata hashes)
        external
        nonReentrant
    {
        Game storage game = _games[disputeId];
        _checkMover(disputeId, game, Side.Defender, GameStatus.AwaitingBisection);
        (uint32 lo, uint32 hi) = _checkInterval(disputeId, game, expectedLo, expectedHi);
        // hi - lo >= 2 here (a width-1 interval is AwaitingStep), so parts >= 2.
        uint256 parts = _partsOf(lo, hi);
        if (hashes.length != parts - 1) revert WrongHashCount(disputeId, parts - 1, hashes.length);
        uint64 clockLeft = _spendClock(disputeId, game, Side.Defender);
        game.pendingHash = _hashOf(hashes);
        game.pendingBlock = block.number.toUint48();
        game.turn = Side.Challenger;
        game.status = GameStatus.AwaitingResponse;
        ++game.moves;
        emit Bisected(disputeId, lo, hi, hashes, clockLeft);
        // Prepaid with the endpoints.
    }

    /// @inheritdoc IBisectionGame
    function respond(uint256 disputeId, uint32 expectedLo, uint32 expectedHi, uint256 index, bytes32[] calldata hashes)
        external
        nonReentrant
    {
        Game storage game = _games[disputeId];
        _checkMover(disputeId, game, Side.Challenger, GameStatus.AwaitingResponse);
        (uint32 lo, uint32 hi) = _checkInterval(disputeId, game, expectedLo, expectedHi);
        uint256 parts = _partsOf(lo, hi);
        if (index >= parts) revert InvalidIndex(disputeId, index, parts);
        // The bisection checked the count; the hash binds the values and their order.
        if (_hashOf(hashes) != game.pendingHash) revert HashesMismatch(disputeId);
        uint64 clockLeft = _spendClock(disputeId, game, Side.Challenger);
        // The part's start is accepted (the agreed hash moves up unless it is lo) and its end
        // disputed (the claimed hash moves down unless it is hi).
        if (index != 0) game.agreedHash = hashes[index - 1];
        if (index != parts - 1) game.claimedHash = hashes[index];
        (lo, hi) = (_pointOf(lo, hi, parts, index), _pointOf(lo, hi, parts, index + 1));
        game.lo = lo;
        game.hi = hi;
        // pendingHash is left as is (meaningful only while AwaitingResponse): rewriting a non-zero
        // slot in the next bisect costs far less than setting a zeroed one.
        game.turn = Side.Defender;
        game.status = GameStatus.AwaitingBisection;
        uint32 moves = ++game.moves;
        emit Responded(disputeId, index, lo, hi, clockLeft);
        _pullChallengerBonds(game, moves);
        if (hi - lo == 1) _openStep(disputeId, game);
    }

    /// @inheritdoc IBisectionGame
    function escalate(uint256 disputeId, uint32 expectedLo, uint32 expectedHi) external nonReentrant {
        Game storage game = _games[disputeId];
        _checkMover(disputeId, game, Side.Challenger, GameStatus.AwaitingResponse);
        (uint32 lo, uint32 hi) = _checkInterval(disputeId, game, expectedLo, expectedHi);
        uint64 clockLeft = _spendClock(disputeId, game, Side.Challenger);
        uint32 moves = ++game.moves;
        emit Escalated(disputeId, lo, hi, clockLeft);
        _pullChallengerBonds(game, moves);
        _openStep(disputeId, game);
    }

    /// @inheritdoc IBisectionGame
    function claimTimeout(uint256 disputeId) external nonReentrant {
        Game storage game = _games[disputeId];
        GameStatus status = game.status;
        if (status == GameStatus.None) revert UnknownGame(disputeId);
        if (_isResolved(status)) revert GameAlreadyResolved(disputeId, status);
        Side side = game.turn;
        uint64 deadline = _deadline(game);
        // INVARIANT: nobody's clock runs while the step adjudicator decides (turn None).
        if (side == Side.None || block.timestamp <= deadline) {
            revert ClockNotExpired(disputeId, side, deadline, uint64(block.timestamp));
        }
        if (side == Side.Defender) game.defenderClock = 0;
        else game.challengerClock = 0;
        emit TimeoutClaimed(disputeId, side, msg.sender);
        _resolve(disputeId, game, side == Side.Challenger, new address[](0), new address[](0));
    }

    ////// External: views //////

    /// @inheritdoc IBisectionGame
    function getGame(uint256 disputeId) external view returns (Game memory game) {
        game = _games[disputeId];
    }

    /// @inheritdoc IBisectionGame
    function moveCount(uint256 disputeId) external view returns (uint256 count) {
        count = _games[disputeId].moves;
    }

    /// @inheritdoc IBisectionGame
    function clocksOf(uint256 disputeId) external view returns (uint64 defender, uint64 challenger) {
        Game storage game = _games[disputeId];
        defender = game.defenderClock;
        challenger = game.challengerClock;
        Side side = game.turn;
        if (side == Side.None) return (defender, challenger);
        // A call may run at a time before the turn's block (Anvil's eth_call can lag it): no time spent.
        uint256 startedAt = game.turnStartedAt;
        uint256 elapsed = block.timestamp > startedAt ? block.timestamp - startedAt : 0;
        if (side == Side.Defender) defender = _left(defender, elapsed);
        else challenger = _left(challenger, elapsed);
    }

    /// @inheritdoc IBisectionGame
    function moveBondDue(uint256 disputeId) external view returns (uint256 amount) {
        Game storage game = _games[disputeId];
        GameStatus status = game.status;
        if (status == GameStatus.AwaitingEndpoints) {
            amount = (1 + uint256(game.depth)) * _MOVE_BOND;
        } else if (status == GameStatus.AwaitingResponse && game.moves == 2) {
            amount = uint256(game.depth) * _MOVE_BOND;
        }
    }

    /// @inheritdoc IStepParent
    /// @dev The game's agreed and claimed hashes: neither moves once the game awaits its step.
    function stepHashesOf(uint256 stepDisputeId) external view returns (bytes32 startHash, bytes32 claimedEndHash) {
        Game storage game = _games[_stepGames[stepDisputeId]];
        (startHash, claimedEndHash) = (game.agreedHash, game.claimedHash);
    }

    /// @inheritdoc IBisectionGame
    function gameOfStep(uint256 stepDisputeId) external view returns (uint256 disputeId) {
        disputeId = _stepGames[stepDisputeId];
    }

    /// @inheritdoc IBisectionGame
    function gameCount() external view returns (uint256 count) {
        count = _gameCount;
    }

    /// @inheritdoc IBisectionGame
    function jobManager() external view returns (IJobManager) {
        return _JOB_MANAGER;
    }

    /// @inheritdoc IBisectionGame
    function stepAdjudicator() external view returns (IStepAdjudicator) {
        return _STEP_ADJUDICATOR;
    }

    /// @inheritdoc IBisectionGame
    function escrow() external view returns (IEscrow) {
        return _ESCROW;
    }

    /// @inheritdoc IBisectionGame
    function depthOf(uint32 k) public pure returns (uint8 depth) {
        uint256 width = k;
        while (width > 1) {
            uint256 parts = width < DISSECTION_ARITY ? width : DISSECTION_ARITY;
            width = (width + parts - 1) / parts;
            ++depth;
        }
    }

    /// @inheritdoc IBisectionGame
    function clockSeconds() external view returns (uint64) {
        return _CLOCK_SECONDS;
    }

    /// @inheritdoc IBisectionGame
    function moveBond() external view returns (uint256) {
        return _MOVE_BOND;
    }

    ////// Internal //////

    /// @notice Reverts unless `msg.sender` is the party `side` and the game awaits move `status`.
    function _checkMover(uint256 disputeId, Game storage game, Side side, GameStatus status) internal view {
        GameStatus current = game.status;
        if (current == GameStatus.None) revert UnknownGame(disputeId);
        if (_isResolved(current)) revert GameAlreadyResolved(disputeId, current);
        address party = side == Side.Defender ? game.defender : game.challenger;
        if (msg.sender != party) {
            if (msg.sender != game.defender && msg.sender != game.challenger) revert NotParty(disputeId, msg.sender);
            revert OutOfTurn(disputeId, msg.sender, game.turn);
        }
        if (game.turn != side) revert OutOfTurn(disputeId, msg.sender, game.turn);
        if (current != status) revert UnexpectedMove(disputeId, current);
    }

    /// @notice Reverts unless the mover's view of the interval is current.
    function _checkInterval(uint256 disputeId, Game storage game, uint32 expectedLo, uint32 expectedHi)
        internal
        view
        returns (uint32 lo, uint32 hi)
    {
        lo = game.lo;
        hi = game.hi;
        if (expectedLo != lo || expectedHi != hi) revert WrongInterval(disputeId, expectedLo, expectedHi, lo, hi);
    }

    /// @notice Charges the time since the turn started to `side`'s clock; restarts the turn timer.
    /// @return clockLeft Seconds left on `side`'s clock.
    function _spendClock(uint256 disputeId, Game storage game, Side side) internal returns (uint64 clockLeft) {
        uint64 deadline = _deadline(game);
        uint64 nowTs = uint64(block.timestamp);
        if (nowTs > deadline) revert ClockExpired(disputeId, side, deadline, nowTs);
        // SAFETY: turnStartedAt <= nowTs <= deadline = turnStartedAt + clock, so no underflow.
        unchecked {
            clockLeft = deadline - nowTs;
        }
        if (side == Side.Defender) game.defenderClock = clockLeft;
        else game.challengerClock = clockLeft;
        game.turnStartedAt = nowTs;
    }

    /// @notice Last timestamp the side to move may move at (0 while nobody is to move).
    function _deadline(Game storage game) internal view returns (uint64) {
        Side side = game.turn;
        if (side == Side.None) return 0;
        uint64 clock = side == Side.Challenger ? game.challengerClock : game.defenderClock;
        // SAFETY: clock <= MAX_CLOCK_SECONDS and turnStartedAt is a block timestamp: no overflow.
        return game.turnStartedAt + clock;
    }

    /// @notice Pulls `amount` of move bonds from the mover (interaction, after the move's state
    ///         changes).
    function _pullBond(uint256 amount) internal {
        if (amount != 0) _ESCROW.deposit(Bucket.Bonds, msg.sender, amount);
    }

    /// @notice On the challenger's first move (the game's third: endpoints, bisect, then this one),
    ///         pulls the bonds of its whole play: at most `depth` responses, an escalation being one.
    function _pullChallengerBonds(Game storage game, uint32 moves) internal {
        if (moves == 3) _pullBond(uint256(game.depth) * _MOVE_BOND);
    }

    /// @notice Parts a bisection splits [lo, hi] into: min(DISSECTION_ARITY, hi - lo).
    function _partsOf(uint32 lo, uint32 hi) internal pure returns (uint256 parts) {
        parts = hi - lo;
        if (parts > DISSECTION_ARITY) parts = DISSECTION_ARITY;
    }

    /// @notice Dissection point j of [lo, hi] in `parts` parts: lo + (hi - lo) * j / parts (steps;
    ///         point 0 is lo, point `parts` is hi, and parts <= hi - lo keeps them distinct).
    function _pointOf(uint32 lo, uint32 hi, uint256 parts, uint256 j) internal pure returns (uint32 point) {
        // SAFETY: j <= parts, so the result lies in [lo, hi] and fits in uint32.
        // forge-lint: disable-next-line(unsafe-typecast)
        point = lo + uint32((uint256(hi - lo) * j) / parts);
    }

    /// @notice keccak256 of `hashes` packed (32 bytes each), as `bisect` stores and `respond` checks.
    function _hashOf(bytes32[] calldata hashes) internal pure returns (bytes32 digest) {
        digest = keccak256(abi.encodePacked(hashes));
    }

    /// @notice Stops the clocks and hands steps lo -> hi to the step adjudicator (one step when the
    ///         game narrowed down to it, more when the challenger escalated).
    function _openStep(uint256 disputeId, Game storage game) internal {
        game.turn = Side.None;
        game.status = GameStatus.AwaitingStep;
        uint256 jobId = game.jobId;
        // Same committee constraints as `JobManager._openDispute`: the solver and the submitter never
        // judge; the job's verifiers are a reserve.
        address[] memory excluded = new address[](2);
        address[] memory reserve;
        // SAFETY: trusted JobManager view.
        (excluded[1], excluded[0], reserve) = _JOB_MANAGER.partiesOf(jobId);
        uint32 step = game.lo;
        bytes32 startHash = game.agreedHash;
        bytes32 claimedEndHash = game.claimedHash;
        // SAFETY: the step adjudicator is trusted and never calls back from openStepDispute
        // (IStepAdjudicator @dev); the id is recorded right after and nonReentrant guards the rest.
        // slither-disable-next-line reentrancy-no-eth,reentrancy-benign
        uint256 stepDisputeId = _STEP_ADJUDICATOR.openStepDispute(
            jobId, step, game.hi - step, startHash, claimedEndHash, excluded, reserve
        );
        game.stepDisputeId = stepDisputeId;
        _stepGames[stepDisputeId] = disputeId;
        emit StepDisputeOpened(disputeId, stepDisputeId, step, startHash, claimedEndHash);
    }

    /// @notice Ends the game: credits the winner every move bond played (`moves * moveBond`, as if
    ///         each move had posted its own) and each side the prepaid bonds it did not play, then
    ///         reports to the JobManager.
    /// @dev Moves alternate endpoints, bisect, (respond | escalate, bisect)*: after `moves` moves
    ///      the challenger played (moves - 1) / 2 of them and the defender the rest. A side that
    ///      moved prepaid its longest play (`1 + depth` and `depth` moves), which bounds what it
    ///      can play, so neither refund underflows.
    function _resolve(
        uint256 disputeId,
        Game storage game,
        bool defenderWon,
        address[] memory majority,
        address[] memory nonVoters
    ) internal {
        game.status = defenderWon ? GameStatus.DefenderWon : GameStatus.ChallengerWon;
        game.turn = Side.None;
        uint256 bonds = uint256(game.moves) * _MOVE_BOND;
        (uint256 defenderRefund, uint256 challengerRefund) = _refunds(game);
        address winner = defenderWon ? game.defender : game.challenger;
        emit GameResolved(disputeId, defenderWon, winner, bonds);
        emit MoveBondsRefunded(disputeId, defenderRefund, challengerRefund);
        if (defenderWon) {
            _creditBonds(winner, bonds + defenderRefund);
            _creditBonds(game.challenger, challengerRefund);
        } else {
            _creditBonds(winner, bonds + challengerRefund);
            _creditBonds(game.defender, defenderRefund);
        }
        // SAFETY: trusted JobManager, called last; it does not call back into the game.
        _JOB_MANAGER.onDisputeResolved(disputeId, defenderWon, majority, nonVoters);
    }

    /// @notice The prepaid move bonds each side did not play (wei; see `_resolve`).
    function _refunds(Game storage game) internal view returns (uint256 defenderRefund, uint256 challengerRefund) {
        uint256 moves = game.moves;
        uint256 challengerMoves = moves == 0 ? 0 : (moves - 1) / 2;
        uint256 defenderMoves = moves - challengerMoves;
        uint256 depth = game.depth;
        if (defenderMoves != 0) defenderRefund = (1 + depth - defenderMoves) * _MOVE_BOND;
        if (challengerMoves != 0) challengerRefund = (depth - challengerMoves) * _MOVE_BOND;
    }

    /// @notice Credits `amount` of the Bonds bucket to `account` (nothing for 0).
    function _creditBonds(address account, uint256 amount) internal {
        if (amount != 0) _ESCROW.credit(Bucket.Bonds, account, amount);
    }

    /// @notice `clock - elapsed`, floored at zero.
    function _left(uint64 clock, uint256 elapsed) internal pure returns (uint64) {
        if (elapsed >= clock) return 0;
        // SAFETY: elapsed < clock <= type(uint64).max.
        // forge-lint: disable-next-line(unsafe-typecast)
        return clock - uint64(elapsed);
    }

    /// @notice Whether `status` is final.
    function _isResolved(GameStatus status) internal pure returns (bool) {
        return status == GameStatus.DefenderWon || status == GameStatus.ChallengerWon;
    }
}
