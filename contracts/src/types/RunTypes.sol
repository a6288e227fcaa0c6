// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice Phase of one round of a DiLoCo training run (ABI: uint8). See docs/RUNS.md.
/// @dev None -> Open -> Proposed -> Final (unchallenged), or Proposed -> Disputed -> Final (upheld) |
///      Open (struck: a new claim can be proposed; registration stays closed).
///      Open: the round's contribution jobs are being registered; no claim yet, or the last claim
///      was ruled wrong.
///      Proposed: a round claim is standing; it can be challenged until `challengeDeadline`.
///      Disputed: a challenged claim awaits the arbitration committee's ruling.
///      Final: the claim stands (unchallenged, or upheld); shares were minted for its seats.
enum RunRoundPhase {
    None,
    Open,
    Proposed,
    Disputed,
    Final
}

/// @notice A training run as returned by `RunRegistry.getRun`.
/// @param modelId ShareRegistry model trained by the run (shares are minted in it).
/// @param runHash keccak256 of the run's canonical JSON (veritrain.diloco.RunSpec.run_hash); the
///        specHash of contribution (round t, seat j) is keccak256(abi.encode(runHash, t, j)).
/// @param opener Account that opened the run (the model's owner or an authorised poster).
/// @param startHash State hash of the run's outer state 0 (veritrain.diloco.OuterState).
/// @param seats M: contribution seats per round, 1..256.
/// @param rounds R: rounds of the run, >= 1.
/// @param innerSteps H: the steps of every contribution job (its totalSteps).
/// @param round The current round t (== rounds once the run has ended).
struct RunInfo {
    bytes32 modelId;
    bytes32 runHash;
    address opener;
    bytes32 startHash;
    uint32 seats;
    uint32 rounds;
    uint32 innerSteps;
    uint32 round;
}

/// @notice One round of a run as returned by `RunRegistry.getRound`.
/// @param phase Current phase.
/// @param registered Bit j set: seat j has a registered contribution job (`contributionOf`).
/// @param accepted Bit j set: the standing (or final) claim counts seat j's contribution.
/// @param stateHash The standing (or final) claim's outer state t + 1 (parameters and outer
///        momentum, veritrain.diloco.OuterState.state_hash).
/// @param proposer Account whose claim stands (its bond is held until the round is final).
/// @param challenger Account challenging it while Disputed.
/// @param challengeDeadline Last timestamp at which the standing claim can be challenged (seconds).
/// @param disputeId ArbitrationCommittee dispute of the current (or last) challenge; 0 if none.
struct RunRound {
    RunRoundPhase phase;
    uint256 registered;
    uint256 accepted;
    bytes32 stateHash;
    address proposer;
    address challenger;
    uint64 challengeDeadline;
    uint256 disputeId;
}

/// @notice A run as the RunRegistry stores it: `RunInfo`'s fields packed into four words (the
///         opener with the seat, round and step counts), so opening a run creates four words, not
///         five. `RunRegistry.getRun` widens it back to a `RunInfo`.
/// @param seats M, 1..256.
/// @param rounds R, 1..2^24 - 1 (`openRun` rejects more).
/// @param round The current round t, <= rounds.
struct RunRecord {
    bytes32 modelId;
    bytes32 runHash;
    bytes32 startHash;
    address opener;
    uint16 seats;
    uint24 rounds;
    uint32 innerSteps;
    uint24 round;
}

/// @notice A round as the RunRegistry stores it: the phase, both deadlines (seconds) and the
///         proposer share one word, which opening the round creates and a proposal only updates;
///         the challenger shares one with its dispute id. `RunRegistry.getRound` widens it back to a
///         `RunRound`.
/// @param registrationDeadline Last timestamp at which a contribution of the round may be posted:
///        its opening plus the registration window (P-28).
struct RoundRecord {
    RunRoundPhase phase;
    uint40 registrationDeadline;
    uint40 challengeDeadline;
    address proposer;
    uint256 registered;
    uint256 accepted;
    bytes32 stateHash;
    address challenger;
    uint96 disputeId;
}
