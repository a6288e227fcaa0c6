// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Types
import {JobStatus} from "../types/JobTypes.sol";
import {RunInfo, RunRound, RunRoundPhase} from "../types/RunTypes.sol";

/// @title IRunRegistry
/// @notice DiLoCo training runs (Douillard et al. 2023, arXiv 2311.08105) over the JobManager's
///         verified jobs. Each round t, the run's posters post one contribution job per seat
///         through `postContribution` (a JobManager job whose specHash is
///         keccak256(abi.encode(runHash, t, seat)), a contribution from its post: it never holds a
///         lineage head). Registration closes by a rule, when every seat of the round is
///         registered or `registrationWindow` after the round opened, never by a proposal. Once it
///         is closed and every job of the round is terminal, any account proposes the round's
///         result with a
///         bond: the next outer state hash and the seats it counts. The result is a pure function
///         of public data (veritrain.diloco.advance_round): a Finalized contribution counts when it
///         started from the prescribed state and its pseudo-gradient is finite. Anyone may
///         challenge the claim with an equal bond inside the challenge window; the arbitration
///         committee recomputes the round and rules. A claim that stands becomes final: each
///         counted contribution's solver is minted `innerSteps * computePerStep` shares of the
///         model, and the next round opens. Optimistic-rollup style (Optimism fault proofs,
///         Arbitrum BoLD): one honest watcher suffices.
/// @dev Bonds and winnings move through the Escrow (Bucket.Bonds, then credits). The loser's bond
///      and the slashed seat stakes of non-voting arbiters form the pot: each member of the
///      ruling majority is credited `arbiterFee` while the pot lasts, the rest goes to the winner.
///      Excluded from the committee: every party with a stake in the outcome: the proposer, the
///      challenger, the solvers and posters of the round's jobs, the run's opener, the model's
///      owner and its authorised posters. See docs/RUNS.md.
interface IRunRegistry {
    ////// Errors //////

    /// @notice Thrown when a constructor parameter is out of range.
    error InvalidParam(string name, uint256 value);

    /// @notice Thrown when an address argument is zero.
    error ZeroAddress();

    /// @notice Thrown when the caller may not post jobs of the run's model (ShareRegistry.canPost).
    error NotPoster(bytes32 modelId, address caller);

    /// @notice Thrown when a run with this runHash exists already.
    error RunHashTaken(bytes32 runHash, uint256 runId);

    /// @notice Thrown when `openRun` gets seats outside 1..256, rounds outside 1..2^24 - 1 or zero
    ///         inner steps.
    error InvalidRun(string name, uint256 value);

    /// @notice Thrown when a run id does not exist.
    error UnknownRun(uint256 runId);

    /// @notice Thrown when the run has finished all its rounds.
    error RunEnded(uint256 runId);

    /// @notice Thrown when the current round is not in the phase the call needs.
    error UnexpectedRoundPhase(uint256 runId, uint32 round, RunRoundPhase phase);

    /// @notice Thrown when a seat is >= the run's seats.
    error SeatOutOfRange(uint256 runId, uint32 seat);

    /// @notice Thrown when a seat of the round already has a registered job.
    error SeatTaken(uint256 runId, uint32 round, uint32 seat, uint256 jobId);

    /// @notice Thrown when a contribution is posted after the round's registration closed (every
    ///         seat registered, or its registration deadline passed).
    error RegistrationClosed(uint256 runId, uint32 round);

    /// @notice Thrown when a claim is proposed before the round's registration closed: `registered`
    ///         (bit j: seat j registered) does not cover every seat and `deadline` has not passed
    ///         (P-28).
    error RegistrationOpen(uint256 runId, uint32 round, uint256 registered, uint64 deadline);

    /// @notice Thrown when a claim is proposed while a registered job of the round is not terminal.
    error RoundNotSettled(uint256 runId, uint32 round, uint256 jobId, JobStatus status);

    /// @notice Thrown when a claim counts a seat whose registered job is missing or not Finalized.
    error SeatNotFinalized(uint256 runId, uint32 round, uint32 seat);

    /// @notice Thrown when a claim's state hash is zero.
    error ZeroStateHash();

    /// @notice Thrown when challenging after the challenge window.
    error ChallengeWindowClosed(uint256 runId, uint32 round, uint64 deadline);

    /// @notice Thrown when finalizing an unchallenged claim before its challenge window ended.
    error ChallengeWindowOpen(uint256 runId, uint32 round, uint64 deadline);

    /// @notice Thrown when the proposer challenges its own claim.
    error SelfChallenge(uint256 runId, address account);

    /// @notice Thrown when `onClaimResolved` is called by another account than the committee.
    error NotCommittee(address caller);

    /// @notice Thrown when `onClaimResolved` names a dispute this registry did not open.
    error UnknownClaimDispute(uint256 disputeId);

    ////// Events //////

    /// @notice Emitted when a run is opened; its round 0 is Open. `specURI` is where the run's
    ///         spec is read, once for the whole run: its contributions carry none (their jobs'
    ///         `JobPosted` has an empty URI) and are resolved from it by (run, round, seat), the
    ///         spec fetched checked against `runHash` and each job's spec hash.
    event RunOpened(
        uint256 indexed runId,
        bytes32 indexed modelId,
        bytes32 indexed runHash,
        address opener,
        bytes32 startHash,
        uint32 seats,
        uint32 rounds,
        uint32 innerSteps,
        string specURI
    );

    /// @notice Emitted when job `jobId` is posted and registered as contribution (round, seat).
    event ContributionAdded(uint256 indexed runId, uint32 indexed round, uint32 seat, uint256 indexed jobId);

    /// @notice Emitted when the last seat of a round was registered: registration is closed and a
    ///         claim may be proposed once every job is terminal.
    event RegistrationClosedForRound(uint256 indexed runId, uint32 indexed round);

    /// @notice Emitted when a round opens (round 0 at `openRun`, the next when a claim is final):
    ///         its contributions may be posted until `registrationDeadline` (seconds).
    event RoundOpened(uint256 indexed runId, uint32 indexed round, uint64 registrationDeadline);

    /// @notice Emitted when a round claim is proposed (bond `claimBond` held).
    event RoundProposed(
        uint256 indexed runId,
        uint32 indexed round,
        address indexed proposer,
        bytes32 stateHash,
        uint256 accepted,
        uint64 challengeDeadline
    );

    /// @notice Emitted when the standing claim is challenged (bond held) and dispute opened.
    event RoundChallenged(uint256 indexed runId, uint32 indexed round, address indexed challenger, uint256 disputeId);

    /// @notice Emitted when the committee ruled on a challenged claim.
    /// @param claimValid True: the claim stands (and is final); false: it is struck and the round
    ///        is Open again for a new claim.
    /// @param winner The proposer if `claimValid`, else the challenger.
    /// @param pot Loser's bond plus slashed non-voters' stakes (wei), shared as documented.
    event ClaimRuled(
        uint256 indexed runId,
        uint32 indexed round,
        uint256 indexed disputeId,
        bool claimValid,
        address winner,
        uint256 pot
    );

    /// @notice Emitted for each arbiter that did not vote on a claim dispute, slashed its seat stake.
    event ClaimArbiterSlashed(uint256 indexed disputeId, address indexed arbiter, uint256 amount);

    /// @notice Emitted when a round becomes final: `stateHash` is the run's outer state t + 1.
    /// @param sharesPerSeat Shares minted to each counted seat's solver (innerSteps * computePerStep).
    event RoundFinalized(
        uint256 indexed runId, uint32 indexed round, bytes32 stateHash, uint256 accepted, uint256 sharesPerSeat
    );

    /// @notice Emitted when a counted contribution's solver was minted shares.
    event ContributionRewarded(
        uint256 indexed runId, uint32 indexed round, uint32 seat, uint256 jobId, address indexed solver, uint256 shares
    );

    ////// Runs //////

    /// @notice Opens a run of `modelId` (the model's owner or an authorised poster only).
    /// @param modelId Registered ShareRegistry model.
    /// @param runHash keccak256 of the run's canonical JSON; unique across runs.
    /// @param startHash State hash of the outer state 0 (not checked on chain; nodes check it).
    /// @param seats M, 1..256.
    /// @param rounds R, 1..2^24 - 1 (16,777,215).
    /// @param innerSteps H, >= 1: every contribution job's totalSteps.
    /// @param specURI URI of the run's spec (in `RunOpened` only; not stored).
    /// @return runId Fresh id (from 1).
    function openRun(
        bytes32 modelId,
        bytes32 runHash,
        bytes32 startHash,
        uint32 seats,
        uint32 rounds,
        uint32 innerSteps,
        string calldata specURI
    ) external returns (uint256 runId);

    /// @notice Posts the current round's contribution of `seat` and registers it, in one call
    ///         (posters of the run's model only; the round's registration must be open): the
    ///         JobManager's `postContribution` with the caller as submitter and escrow payer
    ///         (approve the Escrow for `JobManager.postCost(reward)`), specHash
    ///         keccak256(abi.encode(runHash, round, seat)) and totalSteps = innerSteps. The job is a
    ///         contribution from its post: it never holds a lineage head and its run pays it shares
    ///         once (docs/SECURITY.md P-29). Registering the last free seat closes registration.
    /// @dev The job's initHash is not checked here: whether it is the prescribed start is part of
    ///      the round claim.
    /// @param runId Run.
    /// @param seat Seat j < seats, not taken.
    /// @param initHash The job's start state.
    /// @param checkpointInterval k (steps), dividing innerSteps.
    /// @param reward Reward for the solver (wei).
    /// @return jobId The new job (its `JobPosted` has an empty spec URI: the contribution's spec
    ///         is the run's, at `RunOpened`, resolved by (run, round, seat)).
    function postContribution(uint256 runId, uint32 seat, bytes32 initHash, uint32 checkpointInterval, uint256 reward)
        external
        returns (uint256 jobId);

    /// @notice Proposes the current round's result, pulling `claimBond` through the Escrow.
    /// @dev Needs the round's registration closed (RegistrationOpen: every seat registered, or
    ///      the registration deadline passed), every job of the round terminal (Finalized,
    ///      Rejected, Cancelled, Expired) and every counted seat's job Finalized.
    /// @param stateHash Outer state t + 1.
    /// @param accepted Bit j: seat j's contribution is counted.
    function proposeRound(uint256 runId, bytes32 stateHash, uint256 accepted) external;

    /// @notice Challenges the standing claim of the current round (before its deadline), pulling
    ///         `claimBond`; opens an arbitration committee dispute.
    function challengeRound(uint256 runId) external;

    /// @notice Makes an unchallenged claim final once its window is over: mints the counted
    ///         seats' shares, pays the proposer's bond back to its wallet (a credit only if the
    ///         token refuses the transfer), opens the next round.
    function finalizeRound(uint256 runId) external;

    ////// Views //////

    /// @notice The run `runId`. Reverts UnknownRun.
    function getRun(uint256 runId) external view returns (RunInfo memory run);

    /// @notice Round `round` of run `runId` (phase None for a round not reached yet).
    function getRound(uint256 runId, uint32 round) external view returns (RunRound memory state);

    /// @notice The job registered as contribution (round, seat); 0 if none.
    function contributionOf(uint256 runId, uint32 round, uint32 seat) external view returns (uint256 jobId);

    /// @notice Whether job `jobId` is a registered contribution of some run (its work is paid by
    ///         its run's round claim, never as a lineage job: `ShareRegistry.postKindOf`).
    function isContribution(uint256 jobId) external view returns (bool registered);

    /// @notice The run with this runHash; 0 if none.
    function runIdOf(bytes32 runHash) external view returns (uint256 runId);

    /// @notice Runs opened so far (ids 1..count).
    function runCount() external view returns (uint256 count);

    /// @notice The (run, round) a committee dispute judges; runId 0 if this registry did not open it.
    function claimOf(uint256 disputeId) external view returns (uint256 runId, uint32 round);

    /// @notice Bond posted by a proposer and by a challenger (wei).
    function claimBond() external view returns (uint256);

    /// @notice How long a claim can be challenged (seconds).
    function challengeWindow() external view returns (uint64);

    /// @notice How long after a round opens its contributions may be posted (seconds).
    function registrationWindow() external view returns (uint64);

    /// @notice Last timestamp at which a contribution of round `round` of run `runId` may be
    ///         posted (0 for a round not opened yet); a round whose every seat is registered
    ///         closes earlier.
    function registrationDeadline(uint256 runId, uint32 round) external view returns (uint64 deadline);
}
