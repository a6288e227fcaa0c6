// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Contracts
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
// Libraries
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {LibBits} from "./libraries/LibBits.sol";
// Interfaces
import {IArbitrationCommittee} from "./interfaces/IArbitrationCommittee.sol";
import {IClaimParent} from "./interfaces/IClaimParent.sol";
import {IEscrow} from "./interfaces/IEscrow.sol";
import {IJobManager} from "./interfaces/IJobManager.sol";
import {IRunRegistry} from "./interfaces/IRunRegistry.sol";
import {IShareRegistry} from "./interfaces/IShareRegistry.sol";
import {IStakeManager} from "./interfaces/IStakeManager.sol";
// Types
import {Bucket} from "./types/EscrowTypes.sol";
import {Job, JobStatus} from "./types/JobTypes.sol";
import {PostKind} from "./types/LineageTypes.sol";
import {Role} from "./types/Role.sol";
import {RoundRecord, RunInfo, RunRecord, RunRound, RunRoundPhase} from "./types/RunTypes.sol";

/// @title RunRegistry
/// @notice DiLoCo training runs over the JobManager's verified jobs, with optimistic round claims
///         (`IRunRegistry`): contribution jobs are posted and registered per (round, seat) in one
///         call (`postContribution`), any account proposes the round's result with a bond once
///         every seat is registered and every job is terminal, any other account may challenge it
///         with an equal bond inside the challenge window, and the arbitration committee rules on
///         a challenged claim. A claim that stands mints `innerSteps * computePerStep` shares of
///         the model to each counted seat's solver and opens the next round. Registration of a
///         round closes by a rule, never by a proposal: when its last seat is registered, or
///         `registrationWindow` seconds after the round opened, whichever comes first.
/// @dev Deployment: `constructor(jobManager, committee, claimBond, challengeWindow,
///      registrationWindow)` after the
///      committee, at the address the ShareRegistry (its run minter), the StakeManager (it
///      slashes the claim disputes' non-voting arbiters) and the Escrow (it holds the bonds and
///      books the pots) were given before it existed; then `committee.setClaimParent(runRegistry)`.
///      It holds no tokens.
contract RunRegistry is ReentrancyGuardTransient, IRunRegistry, IClaimParent {
    ////// Types //////

    /// @notice The (run, round) a committee dispute judges.
    struct ClaimRef {
        uint256 runId;
        uint32 round;
    }

    /// @notice What a committee ruling changed (`_applyRuling`), for the interactions that follow.
    /// @param runId Run.
    /// @param round Round judged.
    /// @param modelId The run's model.
    /// @param winner Proposer if the claim stands, else the challenger.
    /// @param solvers Solvers of the counted seats (empty unless the claim stands).
    /// @param shares Shares to mint to each of them.
    struct Ruling {
        uint256 runId;
        uint32 round;
        bytes32 modelId;
        address winner;
        address[] solvers;
        uint256 shares;
    }

    ////// Constants / Immutables //////

    /// @notice Most seats per round (one bit each in the `registered` and `accepted` masks).
    uint32 public constant MAX_SEATS = 256;

    /// @notice Longest challenge window (one year): keeps `now + window` far from overflow.
    uint64 public constant MAX_CHALLENGE_WINDOW = 365 days;

    /// @notice Fixed accounts a claim dispute excludes besides the seats' solvers and posters and
    ///         the model's posters: proposer, challenger, run opener, model owner.
    uint256 internal constant FIXED_EXCLUDED = 4;

    IJobManager internal immutable _JOB_MANAGER;
    IArbitrationCommittee internal immutable _COMMITTEE;
    IShareRegistry internal immutable _SHARE_REGISTRY;
    IStakeManager internal immutable _STAKE_MANAGER;
    /// @custom:security non-reentrant
    IEscrow internal immutable _ESCROW;
    uint256 internal immutable _CLAIM_BOND;
    uint256 internal immutable _ARBITER_FEE;
    uint64 internal immutable _CHALLENGE_WINDOW;
    uint64 internal immutable _REGISTRATION_WINDOW;

    ////// State //////

    uint256 internal _runCount;
    mapping(uint256 runId => RunRecord run) internal _runs;
    mapping(uint256 runId => mapping(uint32 round => RoundRecord state)) internal _rounds;
    /// @notice Each round's contribution job ids, four to a word: seat j's id is bits
    ///         [64 (j % 4), 64 (j % 4) + 64) of word j / 4 (`_contributionOf`), so a round of M seats
    ///         creates ceil(M / 4) words, not M.
    mapping(uint256 runId => mapping(uint32 round => mapping(uint256 word => uint256 jobIds))) internal _contributions;
    mapping(bytes32 runHash => uint256 runId) internal _runIds;
    mapping(uint256 disputeId => ClaimRef claim) internal _claims;

    ////// Constructor //////

    /// @param jobManager_ JobManager whose jobs are the contributions; its Escrow holds the bonds,
    ///        its ShareRegistry mints the shares, its StakeManager holds the arbiters' stakes and
    ///        its `arbiterFee` is paid to each majority arbiter of a claim dispute.
    /// @param committee_ Arbitration committee judging challenged claims (must accept this
    ///        registry as its claim parent).
    /// @param claimBond_ Bond of a proposer and of a challenger (wei), > 0 and >= committeeSize *
    ///        arbiterFee (a lost bond always pays a full committee).
    /// @param challengeWindow_ How long a claim can be challenged (seconds), 1..MAX_CHALLENGE_WINDOW.
    /// @param registrationWindow_ How long after a round opens its contributions may be posted
    ///        (seconds), 1..MAX_CHALLENGE_WINDOW; a round whose every seat is registered closes
    ///        earlier.
    constructor(
        IJobManager jobManager_,
        IArbitrationCommittee committee_,
        uint256 claimBond_,
        uint64 challengeWindow_,
        uint64 registrationWindow_
    ) {
        if (address(jobManager_) == address(0) || address(committee_) == address(0)) {
            revert ZeroAddress();
        }
        // SAFETY: trusted protocol views over immutables, read once.
        uint256 arbiterFee = jobManager_.params().arbiterFee;
        if (claimBond_ == 0 || claimBond_ < uint256(committee_.committeeSize()) * arbiterFee) {
            revert InvalidParam("claimBond", claimBond_);
        }
        if (challengeWindow_ == 0 || challengeWindow_ > MAX_CHALLENGE_WINDOW) {
            revert InvalidParam("challengeWindow", challengeWindow_);
        }
        if (registrationWindow_ == 0 || registrationWindow_ > MAX_CHALLENGE_WINDOW) {
            revert InvalidParam("registrationWindow", registrationWindow_);
        }
        _JOB_MANAGER = jobManager_;
        _COMMITTEE = committee_;
        _SHARE_REGISTRY = jobManager_.shareRegistry();
        _STAKE_MANAGER = jobManager_.stakeManager();
        _ESCROW = jobManager_.escrow();
        _CLAIM_BOND = claimBond_;
        _ARBITER_FEE = arbiterFee;
        _CHALLENGE_WINDOW = challengeWindow_;
        _REGISTRATION_WINDOW = registrationWindow_;
    }

    ////// External: runs //////

    /// @inheritdoc IRunRegistry
    function openRun(
        bytes32 modelId,
        bytes32 runHash,
        bytes32 startHash,
        uint32 seats,
        uint32 rounds,
        uint32 innerSteps,
        string calldata specURI
    ) external returns (uint256 runId) {
        _checkPoster(modelId);
        if (seats == 0 || seats > MAX_SEATS) revert InvalidRun("seats", seats);
        if (rounds == 0 || rounds > type(uint24).max) revert InvalidRun("rounds", rounds);
        if (innerSteps == 0) revert InvalidRun("innerSteps", innerSteps);
        uint256 taken = _runIds[runHash];
        if (taken != 0) revert RunHashTaken(runHash, taken);
        runId = ++_runCount;
        _runIds[runHash] = runId;
        _runs[runId] = RunRecord({
            modelId: modelId,
            runHash: runHash,
            startHash: startHash,
            opener: msg.sender,
            seats: SafeCast.toUint16(seats),
            rounds: SafeCast.toUint24(rounds),
            innerSteps: innerSteps,
            round: 0
        });
        emit RunOpened(runId, modelId, runHash, msg.sender, startHash, seats, rounds, innerSteps, specURI);
        _openRound(runId, 0);
    }

    /// @inheritdoc IRunRegistry
    function postContribution(uint256 runId, uint32 seat, bytes32 initHash, uint32 checkpointInterval, uint256 reward)
        external
        nonReentrant
        returns (uint256 jobId)
    {
        (RunRecord storage run, uint32 t) = _freeSeat(runId, seat);
        // SAFETY: trusted JobManager; it checks the caller's right to post, escrows from the caller
        // and calls back nothing but the ShareRegistry (nonReentrant guards the rest). The job id
        // is only known after the post, so the registration follows it.
        // slither-disable-next-line reentrancy-no-eth,reentrancy-benign,reentrancy-events
        jobId = _JOB_MANAGER.postContribution(
            msg.sender,
            run.modelId,
            contributionSpecHash(run.runHash, t, seat),
            initHash,
            run.innerSteps,
            checkpointInterval,
            reward,
            "" // the spec is the run's (RunOpened), resolved by (run, round, seat)
        );
        _contributions[runId][t][seat >> 2] |= uint256(SafeCast.toUint64(jobId)) << _seatShift(seat);
        RoundRecord storage state = _rounds[runId][t];
        uint256 registered = state.registered | (uint256(1) << seat);
        state.registered = registered;
        emit ContributionAdded(runId, t, seat, jobId);
        if (registered == _allSeats(run.seats)) emit RegistrationClosedForRound(runId, t);
    }

    /// @inheritdoc IRunRegistry
    function proposeRound(uint256 runId, bytes32 stateHash, uint256 accepted) external nonReentrant {
        RunRecord storage run = _liveRun(runId);
        uint32 t = run.round;
        RoundRecord storage state = _rounds[runId][t];
        if (state.phase != RunRoundPhase.Open) revert UnexpectedRoundPhase(runId, t, state.phase);
        if (stateHash == bytes32(0)) revert ZeroStateHash();
        uint256 registered = state.registered;
        // Registration closes by a rule (every seat registered, or its deadline passed), never by
        // this proposal (P-28).
        uint64 registrationDeadline = state.registrationDeadline;
        if (registered != _allSeats(run.seats) && block.timestamp <= registrationDeadline) {
            revert RegistrationOpen(runId, t, registered, registrationDeadline);
        }
        for (uint256 j; registered >> j != 0; ++j) {
            if ((registered >> j) & 1 == 0) continue;
            // SAFETY: j < MAX_SEATS = 256 (a bit of a uint256).
            // forge-lint: disable-next-line(unsafe-typecast)
            uint32 seat = uint32(j);
            uint256 jobId = _contributionOf(runId, t, seat);
            // SAFETY: trusted JobManager view (the status word of the job, not its seven words).
            JobStatus status = _JOB_MANAGER.statusOf(jobId);
            if (!_isTerminal(status)) revert RoundNotSettled(runId, t, jobId, status);
            if ((accepted >> j) & 1 == 1 && status != JobStatus.Finalized) revert SeatNotFinalized(runId, t, seat);
        }
        uint256 unregistered = accepted & ~registered;
        if (unregistered != 0) revert SeatNotFinalized(runId, t, _lowestSeat(unregistered));

        uint64 deadline = uint64(block.timestamp) + _CHALLENGE_WINDOW;
        state.phase = RunRoundPhase.Proposed;
        state.stateHash = stateHash;
        state.accepted = accepted;
        state.proposer = msg.sender;
        state.challengeDeadline = SafeCast.toUint40(deadline);
        emit RoundProposed(runId, t, msg.sender, stateHash, accepted, deadline);
        // SAFETY: trusted Escrow; it pulls the bond from the proposer (approved beforehand).
        _ESCROW.deposit(Bucket.Bonds, msg.sender, _CLAIM_BOND);
    }

    /// @inheritdoc IRunRegistry
    function challengeRound(uint256 runId) external nonReentrant {
        RunRecord storage run = _liveRun(runId);
        uint32 t = run.round;
        RoundRecord storage state = _rounds[runId][t];
        if (state.phase != RunRoundPhase.Proposed) revert UnexpectedRoundPhase(runId, t, state.phase);
        uint64 deadline = state.challengeDeadline;
        if (block.timestamp > deadline) revert ChallengeWindowClosed(runId, t, deadline);
        address proposer = state.proposer;
        if (msg.sender == proposer) revert SelfChallenge(runId, msg.sender);
        address[] memory excluded = _excludedFrom(runId, run, t, state.registered, proposer);
        state.phase = RunRoundPhase.Disputed;
        state.challenger = msg.sender;
        // SAFETY: trusted Escrow; it pulls the bond from the challenger (approved beforehand).
        _ESCROW.deposit(Bucket.Bonds, msg.sender, _CLAIM_BOND);
        // SAFETY: the committee is trusted and never calls back from openClaimDispute (IClaimParent
        // @dev); the id is recorded right after and nonReentrant guards the rest.
        // slither-disable-next-line reentrancy-no-eth,reentrancy-benign
        uint256 disputeId = _COMMITTEE.openClaimDispute(excluded);
        state.disputeId = SafeCast.toUint96(disputeId);
        _claims[disputeId] = ClaimRef({runId: runId, round: t});
        emit RoundChallenged(runId, t, msg.sender, disputeId);
    }

    /// @inheritdoc IRunRegistry
    function finalizeRound(uint256 runId) external nonReentrant {
        RunRecord storage run = _liveRun(runId);
        uint32 t = run.round;
        RoundRecord storage state = _rounds[runId][t];
        if (state.phase != RunRoundPhase.Proposed) revert UnexpectedRoundPhase(runId, t, state.phase);
        uint64 deadline = state.challengeDeadline;
        if (block.timestamp <= deadline) revert ChallengeWindowOpen(runId, t, deadline);
        address proposer = state.proposer;
        (address[] memory solvers, uint256 shares) = _closeRound(runId, run, state, t);

        // Interactions with trusted protocol contracts, after all state changes.
        // SAFETY: trusted Escrow; the bond was deposited into Bucket.Bonds at proposeRound. It goes
        // straight back to the proposer's wallet (a credit only if the token refuses, as a job's
        // reward, docs/SECURITY.md P-41): no claimCredit follows.
        _ESCROW.pay(Bucket.Bonds, proposer, _CLAIM_BOND);
        _mintShares(run.modelId, solvers, shares);
    }

    ////// External: claim parent //////

    /// @inheritdoc IClaimParent
    /// @dev The pot is the loser's bond plus the slashed seat stakes of the non-voters: each member
    ///      of the majority is credited `arbiterFee` while it lasts, the rest and the winner's own
    ///      bond go to the winner (the proposer if `claimValid`, else the challenger). A valid claim
    ///      is final at once; a struck one leaves the round Open for a new claim (registration
    ///      stays closed).
    function onClaimResolved(
        uint256 disputeId,
        bool claimValid,
        address[] calldata majority,
        address[] calldata nonVoters
    ) external nonReentrant {
        if (msg.sender != address(_COMMITTEE)) revert NotCommittee(msg.sender);
        Ruling memory ruling = _applyRuling(disputeId, claimValid);

        // Interactions with trusted protocol contracts, after all state changes.
        uint256 pot = _CLAIM_BOND + _slashArbiters(disputeId, nonVoters);
        emit ClaimRuled(ruling.runId, ruling.round, disputeId, claimValid, ruling.winner, pot);
        _payPot(pot, ruling.winner, majority);
        if (claimValid) _mintShares(ruling.modelId, ruling.solvers, ruling.shares);
    }

    ////// External: views //////

    /// @inheritdoc IRunRegistry
    function getRun(uint256 runId) external view returns (RunInfo memory run) {
        if (runId == 0 || runId > _runCount) revert UnknownRun(runId);
        RunRecord storage stored = _runs[runId];
        run = RunInfo({
            modelId: stored.modelId,
            runHash: stored.runHash,
            opener: stored.opener,
            startHash: stored.startHash,
            seats: stored.seats,
            rounds: stored.rounds,
            innerSteps: stored.innerSteps,
            round: stored.round
        });
    }

    /// @inheritdoc IRunRegistry
    function getRound(uint256 runId, uint32 round) external view returns (RunRound memory state) {
        RoundRecord storage stored = _rounds[runId][round];
        state = RunRound({
            phase: stored.phase,
            registered: stored.registered,
            accepted: stored.accepted,
            stateHash: stored.stateHash,
            proposer: stored.proposer,
            challenger: stored.challenger,
            challengeDeadline: stored.challengeDeadline,
            disputeId: stored.disputeId
        });
    }

    /// @inheritdoc IRunRegistry
    function contributionOf(uint256 runId, uint32 round, uint32 seat) external view returns (uint256 jobId) {
        jobId = _contributionOf(runId, round, seat);
    }

    /// @inheritdoc IRunRegistry
    function isContribution(uint256 jobId) external view returns (bool registered) {
        // Only the ShareRegistry's run minter posts contributions (JobManager.postContribution),
        // and the ShareRegistry books each post's kind for good: no word of this contract's own.
        // SAFETY: trusted ShareRegistry views.
        registered =
            _SHARE_REGISTRY.runMinter() == address(this) && _SHARE_REGISTRY.postKindOf(jobId) == PostKind.Contribution;
    }

    /// @inheritdoc IRunRegistry
    function runIdOf(bytes32 runHash) external view returns (uint256 runId) {
        runId = _runIds[runHash];
    }

    /// @inheritdoc IRunRegistry
    function runCount() external view returns (uint256 count) {
        count = _runCount;
    }

    /// @inheritdoc IRunRegistry
    function claimOf(uint256 disputeId) external view returns (uint256 runId, uint32 round) {
        ClaimRef storage claim = _claims[disputeId];
        (runId, round) = (claim.runId, claim.round);
    }

    /// @inheritdoc IRunRegistry
    function claimBond() external view returns (uint256) {
        return _CLAIM_BOND;
    }

    /// @inheritdoc IRunRegistry
    function challengeWindow() external view returns (uint64) {
        return _CHALLENGE_WINDOW;
    }

    /// @inheritdoc IRunRegistry
    function registrationWindow() external view returns (uint64) {
        return _REGISTRATION_WINDOW;
    }

    /// @inheritdoc IRunRegistry
    function registrationDeadline(uint256 runId, uint32 round) external view returns (uint64 deadline) {
        deadline = _rounds[runId][round].registrationDeadline;
    }

    /// @notice JobManager whose jobs are the contributions.
    /// @return jobManager JobManager.
    function jobManager() external view returns (IJobManager) {
        return _JOB_MANAGER;
    }

    /// @notice Arbitration committee judging challenged claims.
    /// @return committee Committee.
    function committee() external view returns (IArbitrationCommittee) {
        return _COMMITTEE;
    }

    ////// Public //////

    /// @notice Spec hash a contribution job of (round, seat) of the run `runHash` must have:
    ///         keccak256(abi.encode(runHash, uint256(round), uint256(seat))).
    /// @param runHash The run's runHash.
    /// @param round Round t.
    /// @param seat Seat j.
    /// @return specHash The job's required specHash.
    function contributionSpecHash(bytes32 runHash, uint32 round, uint32 seat) public pure returns (bytes32 specHash) {
        specHash = keccak256(abi.encode(runHash, uint256(round), uint256(seat)));
    }

    ////// Internal //////

    /// @notice Reverts NotPoster unless the caller may post jobs of `modelId`.
    function _checkPoster(bytes32 modelId) internal view {
        // SAFETY: trusted ShareRegistry view.
        if (!_SHARE_REGISTRY.canPost(modelId, msg.sender)) revert NotPoster(modelId, msg.sender);
    }

    /// @notice The live run `runId` and its current round `t`, whose `seat` the caller (a poster of
    ///         the run's model) may post: the round is Open, never claimed, its registration open
    ///         and the seat in range and free.
    function _freeSeat(uint256 runId, uint32 seat) internal view returns (RunRecord storage run, uint32 t) {
        run = _liveRun(runId);
        _checkPoster(run.modelId);
        t = run.round;
        RoundRecord storage state = _rounds[runId][t];
        // A round that saw a claim (a dispute id) keeps registration closed after the claim is struck.
        if (state.phase != RunRoundPhase.Open || state.disputeId != 0) {
            revert UnexpectedRoundPhase(runId, t, state.phase);
        }
        if (state.registered == _allSeats(run.seats) || block.timestamp > state.registrationDeadline) {
            revert RegistrationClosed(runId, t);
        }
        if (seat >= run.seats) revert SeatOutOfRange(runId, seat);
        uint256 taken = _contributionOf(runId, t, seat);
        if (taken != 0) revert SeatTaken(runId, t, seat, taken);
    }

    /// @notice The run `runId`; reverts UnknownRun, or RunEnded once all its rounds are final.
    function _liveRun(uint256 runId) internal view returns (RunRecord storage run) {
        if (runId == 0 || runId > _runCount) revert UnknownRun(runId);
        run = _runs[runId];
        if (run.round >= run.rounds) revert RunEnded(runId);
    }

    /// @notice Makes the standing claim of round `t` final (state changes and events only): the
    ///         round is Final, the run moves to round t + 1 (Open unless the run has ended).
    /// @return solvers Solver of each counted seat, in seat order (to be minted `shares` each).
    /// @return shares Shares per counted seat: innerSteps * computePerStep.
    function _closeRound(uint256 runId, RunRecord storage run, RoundRecord storage state, uint32 t)
        internal
        returns (address[] memory solvers, uint256 shares)
    {
        // SAFETY: trusted ShareRegistry view; a model's compute per step never changes.
        // slither-disable-next-line unused-return
        (,, uint64 computePerStep,) = _SHARE_REGISTRY.modelSpecOf(run.modelId);
        shares = uint256(run.innerSteps) * computePerStep;
        uint256 accepted = state.accepted;
        solvers = new address[](LibBits.popCount(accepted));
        uint256 count = 0;
        for (uint256 j; accepted >> j != 0; ++j) {
            if ((accepted >> j) & 1 == 0) continue;
            // SAFETY: j < MAX_SEATS = 256 (a bit of a uint256).
            // forge-lint: disable-next-line(unsafe-typecast)
            uint32 seat = uint32(j);
            uint256 jobId = _contributionOf(runId, t, seat);
            // SAFETY: trusted JobManager view (one word); the job was Finalized at proposal, its
            // solver is fixed.
            address solver = _JOB_MANAGER.submissionOf(jobId).solverOf();
            solvers[count++] = solver;
            emit ContributionRewarded(runId, t, seat, jobId, solver, shares);
        }
        state.phase = RunRoundPhase.Final;
        uint32 next = t + 1;
        run.round = SafeCast.toUint24(next);
        if (next < run.rounds) _openRound(runId, next);
        emit RoundFinalized(runId, t, state.stateHash, accepted, shares);
    }

    /// @notice Applies the committee's ruling on claim dispute `disputeId` (state changes and events
    ///         only): a claim that stands makes its round final (`_closeRound`); a struck one is
    ///         cleared and its round is Open again. Reverts UnknownClaimDispute unless the dispute
    ///         judges the standing claim of a Disputed round of this registry.
    /// @return ruling The run, round, winner and the shares to mint.
    function _applyRuling(uint256 disputeId, bool claimValid) internal returns (Ruling memory ruling) {
        ClaimRef storage claim = _claims[disputeId];
        uint256 runId = claim.runId;
        if (runId == 0) revert UnknownClaimDispute(disputeId);
        uint32 t = claim.round;
        RoundRecord storage state = _rounds[runId][t];
        if (state.phase != RunRoundPhase.Disputed || state.disputeId != disputeId) {
            revert UnknownClaimDispute(disputeId);
        }
        RunRecord storage run = _runs[runId];
        ruling.runId = runId;
        ruling.round = t;
        ruling.modelId = run.modelId;
        ruling.winner = claimValid ? state.proposer : state.challenger;
        if (claimValid) {
            (ruling.solvers, ruling.shares) = _closeRound(runId, run, state, t);
        } else {
            state.phase = RunRoundPhase.Open;
            state.accepted = 0;
            state.stateHash = bytes32(0);
            state.proposer = address(0);
            state.challenger = address(0);
            state.challengeDeadline = 0;
        }
    }

    /// @notice Slashes each non-voting arbiter of claim dispute `disputeId` one seat (the dispute's
    ///         seatStake, Role.Verifier) into the Escrow's pot, as the JobManager does for segment
    ///         disputes.
    /// @return slashed Total slashed (wei).
    function _slashArbiters(uint256 disputeId, address[] calldata nonVoters) internal returns (uint256 slashed) {
        // SAFETY: trusted committee view; the seat stake its members locked.
        uint256 seatStake = _COMMITTEE.getDispute(disputeId).seatStake;
        for (uint256 i; i < nonVoters.length; ++i) {
            address arbiter = nonVoters[i];
            // SAFETY: trusted StakeManager; the seat is still locked (the committee unlocks voters
            // only) and the slashed tokens arrive at the Escrow, booked into the pot at once.
            uint256 amount = _STAKE_MANAGER.slash(arbiter, Role.Verifier, seatStake, address(_ESCROW));
            if (amount != 0) _ESCROW.move(Bucket.Unbooked, Bucket.Pot, amount);
            emit ClaimArbiterSlashed(disputeId, arbiter, amount);
            slashed += amount;
        }
    }

    /// @notice Pays a claim dispute's pot (the loser's bond, still in Bucket.Bonds, plus the slashed
    ///         stakes already in Bucket.Pot): `arbiterFee` to each majority member while it lasts,
    ///         the rest and the winner's own bond to the winner (Escrow credits).
    function _payPot(uint256 pot, address winner, address[] calldata majority) internal {
        // SAFETY: trusted Escrow; both bonds were deposited into Bucket.Bonds.
        _ESCROW.move(Bucket.Bonds, Bucket.Pot, _CLAIM_BOND);
        for (uint256 i; i < majority.length && pot != 0; ++i) {
            uint256 fee = pot < _ARBITER_FEE ? pot : _ARBITER_FEE;
            // SAFETY: fee <= pot.
            unchecked {
                pot -= fee;
            }
            _ESCROW.credit(Bucket.Pot, majority[i], fee);
        }
        _ESCROW.credit(Bucket.Pot, winner, pot);
        _ESCROW.credit(Bucket.Bonds, winner, _CLAIM_BOND);
    }

    /// @notice Mints `shares` of `modelId` to each of `solvers` (interactions, after the state changes).
    function _mintShares(bytes32 modelId, address[] memory solvers, uint256 shares) internal {
        for (uint256 i; i < solvers.length; ++i) {
            // SAFETY: trusted ShareRegistry; it mints on the model's own ModelShares token.
            _SHARE_REGISTRY.mintContribution(modelId, solvers[i], shares);
        }
    }

    /// @notice Accounts that may not judge a claim on round `t`: every party with a stake in its
    ///         outcome (P-28): its proposer, its challenger (the caller), the run's opener, the
    ///         model's owner and its authorised posters (at most ShareRegistry.MAX_POSTERS), and
    ///         the solver and the poster of each of the round's registered jobs (zero solvers
    ///         skipped, a poster only when it is not the owner or the opener).
    function _excludedFrom(uint256 runId, RunRecord storage run, uint32 t, uint256 registered, address proposer)
        internal
        view
        returns (address[] memory excluded)
    {
        bytes32 modelId = run.modelId;
        // SAFETY: trusted ShareRegistry views; the poster list is bounded by MAX_POSTERS.
        address owner = _SHARE_REGISTRY.modelOwner(modelId);
        address[] memory posters = _SHARE_REGISTRY.postersOf(modelId);
        address opener = run.opener;
        address[] memory accounts = new address[](FIXED_EXCLUDED + posters.length + 2 * LibBits.popCount(registered));
        accounts[0] = proposer;
        accounts[1] = msg.sender;
        accounts[2] = opener;
        accounts[3] = owner;
        uint256 count = FIXED_EXCLUDED;
        for (uint256 i; i < posters.length; ++i) {
            accounts[count++] = posters[i];
        }
        mapping(uint256 word => uint256 jobIds) storage words = _contributions[runId][t];
        for (uint256 j; registered >> j != 0; ++j) {
            if ((registered >> j) & 1 == 0) continue;
            // SAFETY: j < MAX_SEATS = 256; trusted JobManager view.
            // forge-lint: disable-next-line(unsafe-typecast)
            Job memory job = _JOB_MANAGER.getJob(_jobIn(words, uint32(j)));
            if (job.solver != address(0)) accounts[count++] = job.solver;
            if (job.submitter != owner && job.submitter != opener) accounts[count++] = job.submitter;
        }
        excluded = new address[](count);
        for (uint256 i; i < count; ++i) {
            excluded[i] = accounts[i];
        }
    }

    /// @notice Opens round `t` of run `runId`: its registration is open for the registration window.
    function _openRound(uint256 runId, uint32 t) internal {
        uint64 deadline = uint64(block.timestamp) + _REGISTRATION_WINDOW;
        RoundRecord storage state = _rounds[runId][t];
        state.phase = RunRoundPhase.Open;
        state.registrationDeadline = SafeCast.toUint40(deadline);
        emit RoundOpened(runId, t, deadline);
    }

    /// @notice The job registered as (round `t`, `seat`) of run `runId` (0 if none).
    function _contributionOf(uint256 runId, uint32 t, uint32 seat) internal view returns (uint256 jobId) {
        jobId = _jobIn(_contributions[runId][t], seat);
    }

    /// @notice The job id of `seat` in a round's packed `words`.
    function _jobIn(mapping(uint256 word => uint256 jobIds) storage words, uint32 seat)
        internal
        view
        returns (uint256 jobId)
    {
        jobId = uint64(words[seat >> 2] >> _seatShift(seat));
    }

    /// @notice Bit offset of `seat`'s job id in its word of `_contributions`: 64 (seat % 4).
    function _seatShift(uint32 seat) internal pure returns (uint256 shift) {
        shift = uint256(seat & 3) << 6;
    }

    /// @notice Mask of every seat of a run of `seats` seats (bits 0..seats - 1).
    function _allSeats(uint32 seats) internal pure returns (uint256 mask) {
        mask = seats == MAX_SEATS ? type(uint256).max : (uint256(1) << seats) - 1;
    }

    /// @notice Whether a job in `status` will never change again.
    function _isTerminal(JobStatus status) internal pure returns (bool) {
        return status == JobStatus.Finalized || status == JobStatus.Rejected || status == JobStatus.Cancelled
            || status == JobStatus.Expired;
    }

    /// @notice Index of the lowest set bit of `mask` (which must be non-zero).
    function _lowestSeat(uint256 mask) internal pure returns (uint32 seat) {
        while ((mask >> seat) & 1 == 0) {
            // SAFETY: mask != 0 (checked by the caller), so a set bit below 256 ends the loop.
            unchecked {
                ++seat;
            }
        }
    }
}
