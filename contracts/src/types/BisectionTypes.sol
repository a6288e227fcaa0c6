// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice Lifecycle of a bisection (n-way dissection) game (ABI: uint8).
/// @dev None -> AwaitingEndpoints -> (AwaitingBisection <-> AwaitingResponse)* -> AwaitingStep
///      -> DefenderWon | ChallengerWon. Any moving status ends in a win for the other side when
///      the side to move runs out of clock (`claimTimeout`).
enum GameStatus {
    None,
    AwaitingEndpoints,
    AwaitingBisection,
    AwaitingResponse,
    AwaitingStep,
    DefenderWon,
    ChallengerWon
}

/// @notice A side of a bisection game (ABI: uint8). `None` while nobody is to move.
enum Side {
    None,
    Defender,
    Challenger
}

/// @notice A bisection game as returned by `BisectionGame.getGame`.
/// @param jobId JobManager job under dispute.
/// @param segment Segment index s whose end checkpoint (leaf s+1) is challenged.
/// @param depth Dissection rounds needed to narrow k steps down to one (`BisectionGame.depthOf`:
///        4 for k = 1024 at arity 8): the most bisections (and responses) the game can take; each
///        side prepays the move bonds of its longest play at its first move (docs/DISPUTES.md).
/// @param pendingBlock Block of the last `bisect` (its `Bisected` log carries the posted hashes
///        the challenger passes back to `respond`); 0 before the first.
/// @param defender The job's solver (defends its committed leaf s+1).
/// @param challenger The party that opened the dispute (first rejecter, else first whistleblower).
/// @param lo Lower end of the disputed interval (steps); both sides accept the hash at lo.
/// @param hi Upper end of the disputed interval (steps); the defender's hash at hi is disputed.
/// @param agreedHash State hash at `lo` both sides accept.
/// @param claimedHash The defender's state hash at `hi` (disputed).
/// @param pendingHash keccak256 of the defender's hashes at the interval's interior dissection
///        points (`abi.encodePacked(bytes32[])`), awaiting the challenger's response (meaningful
///        while AwaitingResponse).
/// @param turn Side to move (None while the step adjudicator decides or once resolved).
/// @param status Current lifecycle status.
/// @param defenderClock Seconds left on the defender's chess clock at `turnStartedAt`.
/// @param challengerClock Seconds left on the challenger's chess clock at `turnStartedAt`.
/// @param turnStartedAt Timestamp at which the side to move started thinking (seconds).
/// @param moves Moves made so far (each posted one move bond).
/// @param stepDisputeId Step adjudicator's dispute id once hi = lo + 1 (0 before).
struct Game {
    uint256 jobId;
    uint32 segment;
    uint8 depth;
    uint48 pendingBlock;
    address defender;
    address challenger;
    uint32 lo;
    uint32 hi;
    bytes32 agreedHash;
    bytes32 claimedHash;
    bytes32 pendingHash;
    Side turn;
    GameStatus status;
    uint64 defenderClock;
    uint64 challengerClock;
    uint64 turnStartedAt;
    uint32 moves;
    uint256 stepDisputeId;
}

/// @notice The steps a step adjudicator judges, as returned by `ArbitrationCommittee.stepClaimOf`:
///         one step when the game narrowed down to it, the game's whole interval when the
///         challenger escalated it (it could not get the data to play on, docs/DISPUTES.md).
/// @param isStep True if the dispute is a step dispute opened by the step parent.
/// @param step Step t: replay t -> t + steps from the state whose hash is `startHash`.
/// @param startHash State hash at step t both sides of the parent game accept.
/// @param claimedEndHash The defender's state hash at step t + steps; the vote says whether it is right.
/// @param steps Steps to replay (>= 1).
struct StepClaim {
    bool isStep;
    uint32 step;
    bytes32 startHash;
    bytes32 claimedEndHash;
    uint32 steps;
}
