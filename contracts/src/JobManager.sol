// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Contracts
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
// Libraries
import {LibCheckpoint} from "./libraries/LibCheckpoint.sol";
import {LibSampling} from "./libraries/LibSampling.sol";
// Interfaces
import {IAdjudicator} from "./interfaces/IAdjudicator.sol";
import {IEscrow} from "./interfaces/IEscrow.sol";
import {IJobManager} from "./interfaces/IJobManager.sol";
import {IShareRegistry} from "./interfaces/IShareRegistry.sol";
import {IStakeManager} from "./interfaces/IStakeManager.sol";
import {IVerificationRound} from "./interfaces/IVerificationRound.sol";
// Types
import {Bucket} from "./types/EscrowTypes.sol";
import {Job, JobStatus, Params, Verdict} from "./types/JobTypes.sol";
import {Role} from "./types/Role.sol";
import {RoundOutcome} from "./types/RoundTypes.sol";

/// @title JobManager
/// @notice Escrows training jobs and runs their lifecycle (PROTOCOL.md 3.3): post, claim, commit,
///         random assignment of verifiers and segments, sealed verdicts and forced errors through
///         an `IVerificationRound` (docs/FORCED_ERRORS.md), whistleblower challenges, disputes
///         through an `IAdjudicator`, finalization and pull payments (credited at the `IEscrow`).
/// @dev Deployment: `constructor(escrow, stakeManager, shareRegistry, params, admin)`, then the admin
///      calls `setVerificationRound(round)` and `setAdjudicator(committee)` once each (both are
///      deployed after this contract because they need its address). The JobManager also needs
///      PROTOCOL_ROLE on the StakeManager, must be the ShareRegistry's minter and must be authorised
///      at the Escrow. See contracts/script/Deploy.sol for the full order.
///      The JobManager holds no tokens: rewards, fees, bonds, the jackpot pool and credits live in
///      the Escrow's buckets; slashed stake goes from the StakeManager to the Escrow and is booked
///      (credited, pooled or put in the dispute pot) at once.
contract JobManager is ReentrancyGuardTransient, IJobManager {

    ////// Types //////

    /// @notice Status of an assigned verifier's seat on a job.
    /// @dev Assigned -> Submitted -> (Slashed | Released); Assigned -> (Missed | Released).
    enum SeatStatus {
        None,
        Assigned,
        Submitted,
        Missed,
        Slashed,
        Released
    }

    /// @notice A verifier's seat: its status and, once submitted, bit i set = rejected sample i.
    struct Seat {
        SeatStatus status;
        uint64 rejectMask;
    }

    /// @notice Per-job bookkeeping that is not part of the public `Job` struct.
    /// @param disputedMask Bit i set = sample i rejected or challenged and not yet adjudicated.
    /// @param feesHeld Verifier fees of this job still in escrow (wei).
    /// @param submitted Assigned verifiers whose verdicts were recorded.
    /// @param disputeSample Sample index of the current or last dispute.
    /// @param disputePending True while a dispute is open at the adjudicator.
    struct Ledger {
        uint256 disputedMask;
        uint256 feesHeld;
        uint32 submitted;
        uint32 disputeSample;
        bool disputePending;
    }

    ////// Constants / Immutables //////

    /// @notice Most verifiers per job (bounds the loops of finalize and dispute settlement).
    uint256 public constant MAX_VERIFIERS_PER_JOB = 32;

    /// @notice Most sampled segments per job (verdicts are a uint64 bitmap).
    uint256 public constant MAX_SAMPLES_PER_JOB = 64;

    /// @custom:security non-reentrant
    IEscrow internal immutable _ESCROW;
    /// @custom:security non-reentrant
    IStakeManager internal immutable _STAKE_MANAGER;
    /// @custom:security non-reentrant
    IShareRegistry internal immutable _SHARE_REGISTRY;
    /// @notice Admin (sets the adjudicator once) and treasury of rounding dust.
    address internal immutable _ADMIN;

    uint256 internal immutable _SOLVER_STAKE;
    uint256 internal immutable _VERIFIER_STAKE;
    uint256 internal immutable _CHALLENGE_BOND;
    uint256 internal immutable _VERIFIER_FEE;
    uint256 internal immutable _ARBITER_FEE;
    uint256 internal immutable _JACKPOT;
    uint32 internal immutable _VERIFIERS_PER_JOB;
    uint32 internal immutable _SAMPLES_PER_JOB;
    uint64 internal immutable _COMMIT_WINDOW;
    uint64 internal immutable _VERDICT_WINDOW;
    uint64 internal immutable _REVEAL_WINDOW;
    uint64 internal immutable _CHALLENGE_WINDOW;

    ////// State //////

    /// @notice Adjudicator of disputes, set once.
    IAdjudicator internal _adjudicator;

    /// @notice Verification round (sealed verdicts, forced errors), set once.
    IVerificationRound internal _round;

    /// @notice Last job id.
    uint256 internal _jobCount;

    mapping(uint256 jobId => Job job) internal _jobs;
    mapping(uint256 jobId => Ledger ledger) internal _ledgers;
    mapping(uint256 jobId => string uri) internal _specURIs;
    mapping(uint256 jobId => string url) internal _checkpointURLs;
    mapping(uint256 jobId => address[] verifiers) internal _assigned;
    mapping(uint256 jobId => uint32[] segments) internal _segments;
    mapping(uint256 jobId => mapping(address verifier => Seat seat)) internal _seats;
    mapping(uint256 jobId => mapping(uint256 sampleIndex => mapping(address verifier => address challenger))) internal
        _challengers;
    mapping(uint256 disputeId => uint256 jobId) internal _disputeJobs;

    ////// Constructor //////

    /// @param escrow_ Escrow holding rewards, fees, bonds and credits (must authorise this contract).
    /// @param stakeManager_ StakeManager (must grant this contract PROTOCOL_ROLE).
    /// @param shareRegistry_ ShareRegistry (must make this contract its minter).
    /// @param params_ Protocol parameters (see `Params`).
    /// @param admin_ Admin (sets the adjudicator once) and treasury of rounding dust.
    constructor(
        IEscrow escrow_,
        IStakeManager stakeManager_,
        IShareRegistry shareRegistry_,
        Params memory params_,
        address admin_
    ) {
        if (
            address(escrow_) == address(0) || address(stakeManager_) == address(0)
                || address(shareRegistry_) == address(0) || admin_ == address(0)
        ) revert ZeroAddress();
        if (params_.verifiersPerJob == 0 || params_.verifiersPerJob > MAX_VERIFIERS_PER_JOB) {
            revert InvalidParam("verifiersPerJob", params_.verifiersPerJob);
        }
        if (params_.samplesPerJob == 0 || params_.samplesPerJob > MAX_SAMPLES_PER_JOB) {
            revert InvalidParam("samplesPerJob", params_.samplesPerJob);
        }
        if (params_.commitWindow == 0) revert InvalidParam("commitWindow", 0);
        if (params_.verdictWindow == 0) revert InvalidParam("verdictWindow", 0);
        if (params_.revealWindow == 0) revert InvalidParam("revealWindow", 0);
        if (params_.challengeWindow == 0) revert InvalidParam("challengeWindow", 0);
        _ESCROW = escrow_;
        _STAKE_MANAGER = stakeManager_;
        _SHARE_REGISTRY = shareRegistry_;
        _ADMIN = admin_;
        _SOLVER_STAKE = params_.solverStake;
        _VERIFIER_STAKE = params_.verifierStake;
        _CHALLENGE_BOND = params_.challengeBond;
        _VERIFIER_FEE = params_.verifierFee;
        _ARBITER_FEE = params_.arbiterFee;
        _JACKPOT = params_.jackpot;
        _VERIFIERS_PER_JOB = params_.verifiersPerJob;
        _SAMPLES_PER_JOB = params_.samplesPerJob;
        _COMMIT_WINDOW = params_.commitWindow;
        _VERDICT_WINDOW = params_.verdictWindow;
        _REVEAL_WINDOW = params_.revealWindow;
        _CHALLENGE_WINDOW = params_.challengeWindow;
    }

    ////// External: admin //////

    /// @inheritdoc IJobManager
    function setAdjudicator(IAdjudicator adjudicator_) external {
        if (msg.sender != _ADMIN) revert NotAdmin(msg.sender);
        if (address(adjudicator_) == address(0)) revert ZeroAddress();
        if (address(_adjudicator) != address(0)) revert AdjudicatorAlreadySet(address(_adjudicator));
        _adjudicator = adjudicator_;
        emit AdjudicatorSet(address(adjudicator_));
    }

    /// @inheritdoc IJobManager
    function setVerificationRound(IVerificationRound round) external {
        if (msg.sender != _ADMIN) revert NotAdmin(msg.sender);
        if (address(round) == address(0)) revert ZeroAddress();
        if (address(_round) != address(0)) revert VerificationRoundAlreadySet(address(_round));
        _round = round;
        emit VerificationRoundSet(address(round));
    }

    ////// External: job lifecycle //////

    /// @inheritdoc IJobManager
    function postJob(
        bytes32 modelId,
        bytes32 specHash,
        uint32 totalSteps,
        uint32 checkpointInterval,
        uint256 reward,
        string calldata specURI
    ) external nonReentrant returns (uint256 jobId) {
        if (totalSteps == 0 || checkpointInterval == 0 || totalSteps % checkpointInterval != 0) {
            revert InvalidJobShape(totalSteps, checkpointInterval);
        }
        uint256 fees = uint256(_VERIFIERS_PER_JOB) * _VERIFIER_FEE;
        uint256 escrowed = reward + fees;
        jobId = ++_jobCount;
        Job storage job = _jobs[jobId];
        job.submitter = msg.sender;
        job.modelId = modelId;
        job.specHash = specHash;
        job.totalSteps = totalSteps;
        job.checkpointInterval = checkpointInterval;
        job.reward = reward;
        job.status = JobStatus.Open;
        _ledgers[jobId].feesHeld = fees;
        _specURIs[jobId] = specURI;
        emit JobPosted(jobId, msg.sender, modelId, specHash, totalSteps, checkpointInterval, reward, escrowed, specURI);
        _ESCROW.deposit(Bucket.Escrowed, msg.sender, escrowed);
    }

    /// @inheritdoc IJobManager
    function cancelJob(uint256 jobId) external nonReentrant {
        Job storage job = _jobs[jobId];
        _requireStatus(jobId, job, JobStatus.Open);
        if (msg.sender != job.submitter) revert NotSubmitter(jobId, msg.sender);
        Ledger storage ledger = _ledgers[jobId];
        uint256 refund = job.reward + ledger.feesHeld;
        job.status = JobStatus.Cancelled;
        ledger.feesHeld = 0;
        emit JobCancelled(jobId, refund);
        _credit(Bucket.Escrowed, job.submitter, refund);
    }

    /// @inheritdoc IJobManager
    function claimJob(uint256 jobId) external nonReentrant {
        Job storage job = _jobs[jobId];
        _requireStatus(jobId, job, JobStatus.Open);
        if (!_STAKE_MANAGER.isActive(msg.sender, Role.Solver)) revert NotActiveStaker(msg.sender, Role.Solver);
        uint64 deadline = uint64(block.timestamp) + _COMMIT_WINDOW;
        job.solver = msg.sender;
        job.commitDeadline = deadline;
        job.status = JobStatus.Claimed;
        emit JobClaimed(jobId, msg.sender, deadline);
        // Reverts with IStakeManager.InsufficientFreeStake if the free stake is below solverStake.
        _STAKE_MANAGER.lock(msg.sender, Role.Solver, _SOLVER_STAKE);
    }

    /// @inheritdoc IJobManager
    function commitCheckpoints(
        uint256 jobId,
        bytes32 merkleRoot,
        string calldata checkpointURL,
        bytes32 secretCommitment
    ) external {
        IVerificationRound round = _round;
        if (address(round) == address(0)) revert VerificationRoundNotSet();
        Job storage job = _jobs[jobId];
        _requireStatus(jobId, job, JobStatus.Claimed);
        if (msg.sender != job.solver) revert NotSolver(jobId, msg.sender);
        if (block.timestamp > job.commitDeadline) {
            revert CommitDeadlinePassed(jobId, job.commitDeadline, uint64(block.timestamp));
        }
        if (merkleRoot == bytes32(0)) revert ZeroMerkleRoot(jobId);
        uint64 randomnessBlock = uint64(block.number + 1);
        job.merkleRoot = merkleRoot;
        job.randomnessBlock = randomnessBlock;
        job.status = JobStatus.Committed;
        _checkpointURLs[jobId] = checkpointURL;
        emit CheckpointsCommitted(jobId, msg.sender, merkleRoot, checkpointURL, randomnessBlock);
        // SAFETY: the round is set once by the admin; it only records the commitment (reverts
        // IVerificationRound.ZeroCommitment on zero).
        round.onCommit(jobId, msg.sender, secretCommitment);
    }

    /// @inheritdoc IJobManager
    function reclaimExpired(uint256 jobId) external nonReentrant {
        Job storage job = _jobs[jobId];
        _requireStatus(jobId, job, JobStatus.Claimed);
        if (block.timestamp <= job.commitDeadline) {
            revert CommitDeadlineNotPassed(jobId, job.commitDeadline, uint64(block.timestamp));
        }
        address solver = job.solver;
        job.solver = address(0);
        job.commitDeadline = 0;
        job.status = JobStatus.Open;
        // SAFETY: the StakeManager is trusted and sends the slashed tokens to the Escrow; the
        // credit below books exactly what arrived.
        uint256 slashed = _slash(solver, Role.Solver);
        emit JobReclaimed(jobId, solver, slashed);
        _credit(Bucket.Unbooked, job.submitter, slashed);
    }

    /// @inheritdoc IJobManager
    function assignVerifiers(uint256 jobId) external nonReentrant {
        Job storage job = _jobs[jobId];
        _requireStatus(jobId, job, JobStatus.Committed);
        uint64 randomnessBlock = job.randomnessBlock;
        if (block.number <= randomnessBlock) revert RandomnessNotReady(jobId, randomnessBlock, block.number);
        bytes32 blockHash = blockhash(randomnessBlock);
        if (blockHash == bytes32(0)) {
            // The hash is only available for the last 256 blocks: anchor to the next block instead.
            uint64 next = uint64(block.number + 1);
            job.randomnessBlock = next;
            emit RandomnessReanchored(jobId, next);
            return;
        }
        bytes32 seed = keccak256(abi.encode(blockHash, jobId, job.merkleRoot));
        uint32[] memory segments = LibSampling.drawSegments(
            keccak256(abi.encode(seed, "segments")), job.totalSteps / job.checkpointInterval, _SAMPLES_PER_JOB
        );
        address[] memory excluded = new address[](2);
        excluded[0] = job.submitter;
        excluded[1] = job.solver;
        // SAFETY: trusted StakeManager view: the protocol's one verifier draw.
        (address[] memory verifiers, uint256 candidates) = _STAKE_MANAGER.drawVerifiers(
            keccak256(abi.encode(seed, "verifiers")), _VERIFIERS_PER_JOB, _VERIFIER_STAKE, excluded, new address[](0)
        );
        if (verifiers.length == 0) revert NoEligibleVerifiers(jobId, candidates);

        uint64 verdictDeadline = uint64(block.timestamp) + _VERDICT_WINDOW;
        uint64 challengeDeadline = verdictDeadline + _REVEAL_WINDOW + _CHALLENGE_WINDOW;
        job.verdictDeadline = verdictDeadline;
        job.challengeDeadline = challengeDeadline;
        job.status = JobStatus.Verifying;
        _segments[jobId] = segments;
        _assigned[jobId] = verifiers;
        for (uint256 i; i < verifiers.length; ++i) {
            _seats[jobId][verifiers[i]].status = SeatStatus.Assigned;
        }
        emit VerifiersAssigned(jobId, verifiers, segments, verdictDeadline, challengeDeadline);

        // Fees of seats that could not be filled go back to the submitter.
        uint256 unused = (_VERIFIERS_PER_JOB - verifiers.length) * _VERIFIER_FEE;
        if (unused != 0) _refundFee(jobId, job.submitter, unused);

        for (uint256 i; i < verifiers.length; ++i) {
            _STAKE_MANAGER.lock(verifiers[i], Role.Verifier, _VERIFIER_STAKE);
        }
    }

    /// @inheritdoc IJobManager
    function recordVerdicts(uint256 jobId, address verifier, bool[] calldata approvals) external nonReentrant {
        if (msg.sender != address(_round) || msg.sender == address(0)) revert NotVerificationRound(msg.sender);
        Job storage job = _jobs[jobId];
        _requireStatus(jobId, job, JobStatus.Verifying);
        Seat storage seat = _seats[jobId][verifier];
        if (seat.status == SeatStatus.None) revert NotAssignedVerifier(jobId, verifier);
        if (seat.status != SeatStatus.Assigned) revert VerdictsAlreadySubmitted(jobId, verifier);
        uint256 samples = _segments[jobId].length;
        if (approvals.length != samples) revert VerdictCountMismatch(jobId, samples, approvals.length);

        uint256 rejectMask = 0;
        uint256 rejects = 0;
        for (uint256 i; i < samples; ++i) {
            if (!approvals[i]) {
                rejectMask |= uint256(1) << i;
                ++rejects;
            }
        }
        uint256 bond = rejects * _CHALLENGE_BOND;
        Ledger storage ledger = _ledgers[jobId];
        seat.status = SeatStatus.Submitted;
        // SAFETY: samples <= MAX_SAMPLES_PER_JOB = 64, so the mask fits in 64 bits.
        // forge-lint: disable-next-line(unsafe-typecast)
        seat.rejectMask = uint64(rejectMask);
        ledger.disputedMask |= rejectMask;
        uint32 submitted = ++ledger.submitted;
        emit VerdictsSubmitted(jobId, verifier, approvals, bond);
        if (submitted == _assigned[jobId].length) {
            // Everyone has spoken: the challenge window runs from now.
            uint64 deadline = uint64(block.timestamp) + _CHALLENGE_WINDOW;
            job.challengeDeadline = deadline;
            emit ChallengeDeadlineSet(jobId, deadline);
        }
        // `verifier` is the account that revealed in the VerificationRound, the only caller.
        _ESCROW.deposit(Bucket.Bonds, verifier, bond);
    }

    /// @inheritdoc IJobManager
    function challengeApproval(uint256 jobId, uint256 sampleIndex, address verifier) external nonReentrant {
        Job storage job = _jobs[jobId];
        _requireStatus(jobId, job, JobStatus.Verifying);
        if (block.timestamp > job.challengeDeadline) {
            revert ChallengeWindowClosed(jobId, job.challengeDeadline, uint64(block.timestamp));
        }
        if (!_STAKE_MANAGER.isActive(msg.sender, Role.Whistleblower)) {
            revert NotActiveStaker(msg.sender, Role.Whistleblower);
        }
        uint256 samples = _segments[jobId].length;
        if (sampleIndex >= samples) revert SampleIndexOutOfRange(jobId, sampleIndex, samples);
        Seat storage seat = _seats[jobId][verifier];
        if (seat.status == SeatStatus.None) revert NotAssignedVerifier(jobId, verifier);
        Verdict verdict = _verdictAt(seat, sampleIndex);
        if (verdict != Verdict.Approve) revert VerdictNotApproval(jobId, sampleIndex, verifier, verdict);
        if (msg.sender == job.solver || msg.sender == verifier) revert ChallengerConflicted(jobId, msg.sender);
        address existing = _challengers[jobId][sampleIndex][verifier];
        if (existing != address(0)) revert ApprovalAlreadyChallenged(jobId, sampleIndex, verifier, existing);

        _challengers[jobId][sampleIndex][verifier] = msg.sender;
        _ledgers[jobId].disputedMask |= uint256(1) << sampleIndex;
        emit ApprovalChallenged(jobId, sampleIndex, verifier, msg.sender, _CHALLENGE_BOND);
        _ESCROW.deposit(Bucket.Bonds, msg.sender, _CHALLENGE_BOND);
    }

    /// @inheritdoc IJobManager
    function finalize(uint256 jobId) external nonReentrant {
        Job storage job = _jobs[jobId];
        Ledger storage ledger = _ledgers[jobId];
        if (job.status == JobStatus.Verifying) {
            if (block.timestamp <= job.challengeDeadline) {
                revert ChallengeWindowOpen(jobId, job.challengeDeadline, uint64(block.timestamp));
            }
            // Runs once: the status leaves Verifying below.
            (RoundOutcome outcome, uint256 forcedSample) = _round.outcome(jobId);
            if (outcome == RoundOutcome.Pending) revert RoundPending(jobId);
            if (outcome != RoundOutcome.NoClaims) _settleMissedVerdicts(jobId, job);
            if (outcome == RoundOutcome.NoClaims || outcome == RoundOutcome.NoReveal) {
                _faultSolver(jobId, job, ledger, outcome);
                return;
            }
            if (outcome == RoundOutcome.Forced) _settleForced(jobId, job, ledger, forcedSample);
        } else if (job.status == JobStatus.Disputed) {
            if (ledger.disputePending) revert DisputePending(jobId, job.disputeId);
        } else {
            revert UnexpectedJobStatus(jobId, job.status);
        }
        if (ledger.disputedMask != 0) _openDispute(jobId, job, ledger);
        else _finalizeJob(jobId, job, ledger);
    }

    /// @inheritdoc IJobManager
    function onDisputeResolved(
        uint256 disputeId,
        bool segmentValid,
        address[] calldata majority,
        address[] calldata nonVoters
    ) external nonReentrant {
        if (msg.sender != address(_adjudicator) || msg.sender == address(0)) {
            revert NotAdjudicator(msg.sender);
        }
        uint256 jobId = _disputeJobs[disputeId];
        Job storage job = _jobs[jobId];
        Ledger storage ledger = _ledgers[jobId];
        if (jobId == 0 || job.status != JobStatus.Disputed || !ledger.disputePending || job.disputeId != disputeId) {
            revert UnknownDispute(disputeId);
        }

        uint256 sampleIndex = ledger.disputeSample;
        ledger.disputePending = false;
        ledger.disputedMask &= ~(uint256(1) << sampleIndex);

        uint256 pot = _slashArbiters(jobId, nonVoters);
        address[] memory winners;
        uint256 sidePot;
        if (segmentValid) (sidePot, winners) = _settleValid(jobId, job, sampleIndex);
        else (sidePot, winners) = _settleInvalid(jobId, disputeId, job, ledger, sampleIndex);
        pot += sidePot;
        emit DisputeSettled(jobId, disputeId, segmentValid, pot);
        _distributePot(jobId, pot, majority, winners);
    }

    ////// External: views //////

    /// @inheritdoc IJobManager
    function getJob(uint256 jobId) external view returns (Job memory job) {
        job = _jobs[jobId];
    }

    /// @inheritdoc IJobManager
    function getAssignment(uint256 jobId) external view returns (address[] memory verifiers, uint32[] memory segments) {
        verifiers = _assigned[jobId];
        segments = _segments[jobId];
    }

    /// @inheritdoc IJobManager
    function verdictOf(uint256 jobId, address verifier) external view returns (Verdict[] memory verdicts) {
        Seat storage seat = _seats[jobId][verifier];
        if (seat.status == SeatStatus.None) return verdicts;
        uint256 samples = _segments[jobId].length;
        verdicts = new Verdict[](samples);
        for (uint256 i; i < samples; ++i) {
            verdicts[i] = _verdictAt(seat, i);
        }
    }

    /// @inheritdoc IJobManager
    function challengerOf(uint256 jobId, uint256 sampleIndex, address verifier)
        external
        view
        returns (address challenger)
    {
        challenger = _challengers[jobId][sampleIndex][verifier];
    }

    /// @inheritdoc IJobManager
    function jobCount() external view returns (uint256 count) {
        count = _jobCount;
    }

    /// @inheritdoc IJobManager
    function params() external view returns (Params memory) {
        return Params({
            solverStake: _SOLVER_STAKE,
            verifierStake: _VERIFIER_STAKE,
            challengeBond: _CHALLENGE_BOND,
            verifierFee: _VERIFIER_FEE,
            arbiterFee: _ARBITER_FEE,
            jackpot: _JACKPOT,
            verifiersPerJob: _VERIFIERS_PER_JOB,
            samplesPerJob: _SAMPLES_PER_JOB,
            commitWindow: _COMMIT_WINDOW,
            verdictWindow: _VERDICT_WINDOW,
            revealWindow: _REVEAL_WINDOW,
            challengeWindow: _CHALLENGE_WINDOW
        });
    }

    /// @inheritdoc IJobManager
    function verifyCheckpoint(uint256 jobId, uint256 leafIndex, bytes32 stateHash, bytes32[] calldata proof)
        external
        view
        returns (bool valid)
    {
        Job storage job = _jobs[jobId];
        if (job.merkleRoot == bytes32(0)) return false;
        uint256 interval = job.checkpointInterval;
        if (leafIndex > job.totalSteps / interval) return false;
        valid = LibCheckpoint.verify(proof, job.merkleRoot, leafIndex * interval, stateHash);
    }

    /// @inheritdoc IJobManager
    function specURIOf(uint256 jobId) external view returns (string memory uri) {
        uri = _specURIs[jobId];
    }

    /// @inheritdoc IJobManager
    function checkpointURLOf(uint256 jobId) external view returns (string memory url) {
        url = _checkpointURLs[jobId];
    }

    /// @inheritdoc IJobManager
    function disputedSampleOf(uint256 jobId) external view returns (uint256 sampleIndex) {
        sampleIndex = _ledgers[jobId].disputeSample;
    }

    /// @inheritdoc IJobManager
    function disputedMaskOf(uint256 jobId) external view returns (uint256 mask) {
        mask = _ledgers[jobId].disputedMask;
    }

    /// @inheritdoc IJobManager
    function verificationRound() external view returns (IVerificationRound) {
        return _round;
    }

    /// @inheritdoc IJobManager
    function escrow() external view returns (IEscrow) {
        return _ESCROW;
    }

    /// @inheritdoc IJobManager
    function stakeManager() external view returns (IStakeManager) {
        return _STAKE_MANAGER;
    }

    /// @inheritdoc IJobManager
    function shareRegistry() external view returns (IShareRegistry) {
        return _SHARE_REGISTRY;
    }

    /// @inheritdoc IJobManager
    function adjudicator() external view returns (IAdjudicator) {
        return _adjudicator;
    }

    /// @inheritdoc IJobManager
    function admin() external view returns (address) {
        return _ADMIN;
    }

    ////// Internal: finalization //////

    /// @notice Slashes assigned verifiers that never revealed; their fee and stake go to the submitter.
    function _settleMissedVerdicts(uint256 jobId, Job storage job) internal {
        address[] storage verifiers = _assigned[jobId];
        for (uint256 i; i < verifiers.length; ++i) {
            address verifier = verifiers[i];
            Seat storage seat = _seats[jobId][verifier];
            if (seat.status != SeatStatus.Assigned) continue;
            seat.status = SeatStatus.Missed;
            _refundFee(jobId, job.submitter, _VERIFIER_FEE);
            // SAFETY: trusted StakeManager; the slashed tokens arrive at the Escrow and are credited at once.
            uint256 slashed = _slash(verifier, Role.Verifier);
            emit VerdictMissed(jobId, verifier, slashed);
            _credit(Bucket.Unbooked, job.submitter, slashed);
        }
    }

    /// @notice Sends the first disputed sample (in sample order) to the adjudicator.
    function _openDispute(uint256 jobId, Job storage job, Ledger storage ledger) internal {
        IAdjudicator adjudicator_ = _adjudicator;
        if (address(adjudicator_) == address(0)) revert AdjudicatorNotSet();
        uint256 mask = ledger.disputedMask;
        uint256 sampleIndex;
        while (mask & (uint256(1) << sampleIndex) == 0) {
            // SAFETY: mask != 0 (checked by the caller), so a set bit below 256 ends the loop.
            unchecked {
                ++sampleIndex;
            }
        }
        uint32 segment = _segments[jobId][sampleIndex];
        // The solver and the submitter never judge their own job. The job's verifiers, whose
        // verdicts ride on the outcome, are only a reserve: the adjudicator takes them only when
        // too few verifiers with nothing at stake are eligible (small networks).
        address[] memory excluded = new address[](2);
        excluded[0] = job.solver;
        excluded[1] = job.submitter;
        address[] memory reserve = _assigned[jobId];
        job.status = JobStatus.Disputed;
        ledger.disputePending = true;
        // SAFETY: sampleIndex < samplesPerJob <= 64.
        // forge-lint: disable-next-line(unsafe-typecast)
        ledger.disputeSample = uint32(sampleIndex);
        // SAFETY: the adjudicator is set once by the admin and must not call back from openDispute
        // (IAdjudicator @dev); the id is recorded right after and nonReentrant guards the rest.
        // slither-disable-next-line reentrancy-no-eth,reentrancy-benign
        uint256 disputeId = adjudicator_.openDispute(jobId, segment, excluded, reserve);
        job.disputeId = disputeId;
        _disputeJobs[disputeId] = jobId;
        emit JobDisputed(jobId, disputeId, sampleIndex, segment);
    }

    /// @notice No dispute left: pays the solver and the verifiers, unlocks their stakes and mints
    ///         the job's steps as ownership shares to the solver.
    function _finalizeJob(uint256 jobId, Job storage job, Ledger storage ledger) internal {
        job.status = JobStatus.Finalized;
        address[] storage verifiers = _assigned[jobId];
        uint256 count = verifiers.length;
        bool[] memory release = new bool[](count);
        for (uint256 i; i < count; ++i) {
            Seat storage seat = _seats[jobId][verifiers[i]];
            if (seat.status != SeatStatus.Submitted) continue;
            seat.status = SeatStatus.Released;
            release[i] = true;
            _payFee(ledger, verifiers[i]);
        }
        // INVARIANT: every fee is paid or refunded by now; any leftover returns to the submitter.
        if (ledger.feesHeld != 0) _refundFee(jobId, job.submitter, ledger.feesHeld);
        address solver = job.solver;
        uint256 reward = job.reward;
        emit JobFinalized(jobId, solver, reward, job.totalSteps);
        _credit(Bucket.Escrowed, solver, reward);

        // Interactions with trusted protocol contracts, after all state changes.
        _unlock(solver, Role.Solver);
        for (uint256 i; i < count; ++i) {
            if (release[i]) _unlock(verifiers[i], Role.Verifier);
        }
        _SHARE_REGISTRY.mintShares(job.modelId, solver, job.totalSteps);
    }

    ////// Internal: round settlement //////

    /// @notice NoClaims / NoReveal (docs/FORCED_ERRORS.md section 3): returns every bond, slashes the
    ///         solver to the submitter, releases the verifiers still standing (with their fee unless
    ///         nothing could be verified) and rejects the job. Missed verdicts are settled before.
    function _faultSolver(uint256 jobId, Job storage job, Ledger storage ledger, RoundOutcome outcome) internal {
        job.status = JobStatus.Rejected;
        uint256 openMask = ledger.disputedMask;
        ledger.disputedMask = 0;
        if (openMask != 0) _returnOpenBonds(jobId, openMask);
        address solver = job.solver;
        // SAFETY: trusted StakeManager; the slashed tokens arrive at the Escrow and are credited at once.
        uint256 slashed = _slash(solver, Role.Solver);
        emit SolverFaulted(jobId, solver, outcome, slashed);
        _credit(Bucket.Unbooked, job.submitter, slashed);
        _closeRejected(
            jobId, 0, job, ledger, outcome == RoundOutcome.NoClaims ? SeatStatus.Assigned : SeatStatus.Submitted
        );
    }

    /// @notice Forced error on sample `f`: its approvers are slashed into the jackpot pool, its
    ///         rejecters and the whistleblowers that challenged its approvals get their bond back
    ///         plus min(jackpot, pool) each, and `f` leaves the disputed set.
    function _settleForced(uint256 jobId, Job storage job, Ledger storage ledger, uint256 f) internal {
        ledger.disputedMask &= ~(uint256(1) << f);
        address[] storage verifiers = _assigned[jobId];
        uint256 count = verifiers.length;
        uint256 slashed = 0;
        for (uint256 i; i < count; ++i) {
            Seat storage seat = _seats[jobId][verifiers[i]];
            if (seat.status == SeatStatus.Submitted && _verdictAt(seat, f) == Verdict.Approve) {
                seat.status = SeatStatus.Slashed;
                slashed += _slashVerifier(jobId, job, verifiers[i], Bucket.Jackpot);
            }
        }
        uint256 pool = _ESCROW.jackpotPool();
        uint256 paid = 0;
        for (uint256 i; i < count; ++i) {
            address verifier = verifiers[i];
            Verdict verdict = _verdictAt(_seats[jobId][verifier], f);
            address winner = address(0);
            if (verdict == Verdict.Reject) winner = verifier;
            else if (verdict == Verdict.Approve) winner = _challengers[jobId][f][verifier];
            if (winner == address(0)) continue;
            _returnBond(winner);
            uint256 amount = pool < _JACKPOT ? pool : _JACKPOT;
            // SAFETY: amount <= pool; paid only adds amounts taken from the pool.
            unchecked {
                pool -= amount;
                paid += amount;
            }
            emit JackpotPaid(jobId, winner, amount);
            _credit(Bucket.Jackpot, winner, amount);
        }
        emit ForcedErrorSettled(jobId, f, slashed, paid);
    }

    ////// Internal: dispute settlement //////

    /// @notice Slashes each non-voting arbiter one seat (verifierStake).
    /// @return pot Total slashed (wei).
    function _slashArbiters(uint256 jobId, address[] calldata nonVoters) internal returns (uint256 pot) {
        for (uint256 i; i < nonVoters.length; ++i) {
            // SAFETY: trusted StakeManager; the slashed tokens arrive at the Escrow and join the pot.
            uint256 slashed = _slashInto(nonVoters[i], Role.Verifier, Bucket.Pot);
            emit ArbiterSlashed(jobId, nonVoters[i], slashed);
            pot += slashed;
        }
    }

    /// @notice Valid segment: rejecters are slashed and lose their bonds, challengers lose their
    ///         bonds; the job stays Disputed until `finalize` moves on.
    /// @return pot Slashes and forfeited bonds (wei).
    /// @return winners The solver and the approvers of the sample.
    function _settleValid(uint256 jobId, Job storage job, uint256 sampleIndex)
        internal
        returns (uint256 pot, address[] memory winners)
    {
        address[] storage verifiers = _assigned[jobId];
        winners = new address[](verifiers.length + 1);
        uint256 count = 0;
        winners[count++] = job.solver;
        for (uint256 i; i < verifiers.length; ++i) {
            address verifier = verifiers[i];
            Seat storage seat = _seats[jobId][verifier];
            Verdict verdict = _verdictAt(seat, sampleIndex);
            if (verdict == Verdict.Reject) {
                pot += _forfeitBond(jobId, verifier);
                // A verifier already slashed on an earlier segment loses only the bond.
                if (seat.status == SeatStatus.Submitted) {
                    seat.status = SeatStatus.Slashed;
                    pot += _slashVerifier(jobId, job, verifier, Bucket.Pot);
                }
            } else if (verdict == Verdict.Approve) {
                winners[count++] = verifier;
                address challenger = _challengers[jobId][sampleIndex][verifier];
                if (challenger != address(0)) pot += _forfeitBond(jobId, challenger);
            }
        }
        winners = _truncate(winners, count);
    }

    /// @notice Invalid segment: the solver and the approvers of the sample are slashed, every bond
    ///         is returned, surviving verifiers are paid, the submitter is refunded -> Rejected.
    /// @return pot Slashes (wei); no bond is forfeited on this side.
    /// @return winners Rejecters of the sample and challengers of its approvals (one entry per bond).
    function _settleInvalid(
        uint256 jobId,
        uint256 disputeId,
        Job storage job,
        Ledger storage ledger,
        uint256 sampleIndex
    ) internal returns (uint256 pot, address[] memory winners) {
        job.status = JobStatus.Rejected;
        // SAFETY: trusted StakeManager; the slashed tokens arrive at the Escrow and join the pot.
        pot = _slashInto(job.solver, Role.Solver, Bucket.Pot);
        emit SolverSlashed(jobId, job.solver, pot);
        uint256 verifierPot;
        (verifierPot, winners) = _judgeInvalidSample(jobId, job, sampleIndex);
        pot += verifierPot;

        // Bonds on segments that were never adjudicated go back to whoever posted them.
        uint256 openMask = ledger.disputedMask;
        ledger.disputedMask = 0;
        if (openMask != 0) _returnOpenBonds(jobId, openMask);
        _closeRejected(jobId, disputeId, job, ledger, SeatStatus.Submitted);
    }

    /// @notice Slashes the approvers of an invalid sample and returns the bonds posted against it.
    /// @return pot Slashes (wei).
    /// @return winners Rejecters of the sample and challengers of its approvals.
    function _judgeInvalidSample(uint256 jobId, Job storage job, uint256 sampleIndex)
        internal
        returns (uint256 pot, address[] memory winners)
    {
        address[] storage verifiers = _assigned[jobId];
        winners = new address[](2 * verifiers.length);
        uint256 count = 0;
        for (uint256 i; i < verifiers.length; ++i) {
            address verifier = verifiers[i];
            Seat storage seat = _seats[jobId][verifier];
            Verdict verdict = _verdictAt(seat, sampleIndex);
            if (verdict == Verdict.Reject) {
                winners[count++] = verifier;
                _returnBond(verifier);
            } else if (verdict == Verdict.Approve) {
                address challenger = _challengers[jobId][sampleIndex][verifier];
                if (challenger != address(0)) {
                    winners[count++] = challenger;
                    _returnBond(challenger);
                }
                if (seat.status == SeatStatus.Submitted) {
                    seat.status = SeatStatus.Slashed;
                    pot += _slashVerifier(jobId, job, verifier, Bucket.Pot);
                }
            }
        }
        winners = _truncate(winners, count);
    }

    /// @notice Releases the verifiers still standing (seat status `standing`: Submitted ones are
    ///         paid their fee, Assigned ones are released without it when nothing could be
    ///         verified) and refunds the reward and remaining fees to the submitter.
    function _closeRejected(
        uint256 jobId,
        uint256 disputeId,
        Job storage job,
        Ledger storage ledger,
        SeatStatus standing
    ) internal {
        address[] storage verifiers = _assigned[jobId];
        uint256 count = verifiers.length;
        bool[] memory release = new bool[](count);
        for (uint256 i; i < count; ++i) {
            Seat storage seat = _seats[jobId][verifiers[i]];
            if (seat.status != standing) continue;
            seat.status = SeatStatus.Released;
            release[i] = true;
            if (standing == SeatStatus.Submitted) _payFee(ledger, verifiers[i]);
        }
        uint256 refund = job.reward + ledger.feesHeld;
        ledger.feesHeld = 0;
        emit JobRejected(jobId, disputeId, refund);
        _credit(Bucket.Escrowed, job.submitter, refund);

        for (uint256 i; i < count; ++i) {
            if (release[i]) _unlock(verifiers[i], Role.Verifier);
        }
    }

    /// @notice Returns the reject and challenge bonds of every sample in `mask`.
    function _returnOpenBonds(uint256 jobId, uint256 mask) internal {
        address[] storage verifiers = _assigned[jobId];
        uint256 samples = _segments[jobId].length;
        for (uint256 t; t < samples; ++t) {
            if (mask & (uint256(1) << t) == 0) continue;
            for (uint256 i; i < verifiers.length; ++i) {
                address verifier = verifiers[i];
                Verdict verdict = _verdictAt(_seats[jobId][verifier], t);
                if (verdict == Verdict.Reject) {
                    _returnBond(verifier);
                } else if (verdict == Verdict.Approve) {
                    address challenger = _challengers[jobId][t][verifier];
                    if (challenger != address(0)) _returnBond(challenger);
                }
            }
        }
    }

    /// @notice Pays `arbiterFee` to each majority arbiter while the pot lasts, splits the rest
    ///         equally among the winners, and credits rounding dust to the treasury.
    function _distributePot(uint256 jobId, uint256 pot, address[] calldata majority, address[] memory winners)
        internal
    {
        for (uint256 i; i < majority.length && pot != 0; ++i) {
            uint256 fee = pot < _ARBITER_FEE ? pot : _ARBITER_FEE;
            // SAFETY: fee <= pot.
            unchecked {
                pot -= fee;
            }
            _credit(Bucket.Pot, majority[i], fee);
        }
        if (pot == 0) return;
        uint256 count = winners.length;
        if (count == 0) {
            _credit(Bucket.Pot, _ADMIN, pot);
            return;
        }
        // The dust pot - share * count is the remainder of this division, not a precision loss.
        // slither-disable-next-line divide-before-multiply
        uint256 share = pot / count;
        for (uint256 i; i < count; ++i) {
            _credit(Bucket.Pot, winners[i], share);
        }
        // SAFETY: share * count <= pot by integer division.
        unchecked {
            _credit(Bucket.Pot, _ADMIN, pot - share * count);
        }
    }

    /// @notice Slashes an assigned verifier one verifierStake into bucket `to` (the jackpot pool or
    ///         the dispute pot) and refunds its fee to the submitter.
    /// @return slashed Amount slashed (wei).
    function _slashVerifier(uint256 jobId, Job storage job, address verifier, Bucket to)
        internal
        returns (uint256 slashed)
    {
        _refundFee(jobId, job.submitter, _VERIFIER_FEE);
        // SAFETY: trusted StakeManager; the slashed tokens arrive at the Escrow and join `to`.
        slashed = _slashInto(verifier, Role.Verifier, to);
        emit VerifierSlashed(jobId, verifier, slashed);
    }

    ////// Internal: bookkeeping //////

    /// @notice Slashes one seat of `role` (solverStake or verifierStake) to the Escrow.
    /// @dev SAFETY: the StakeManager is trusted and sends the slashed tokens to the Escrow; every
    ///      caller books exactly the amount returned (from `Bucket.Unbooked`).
    /// @return slashed Amount slashed (wei).
    function _slash(address account, Role role) internal returns (uint256 slashed) {
        slashed = _STAKE_MANAGER.slash(account, role, _seatStake(role), address(_ESCROW));
    }

    /// @notice Slashes one seat of `role` and books it into bucket `to` of the Escrow.
    /// @return slashed Amount slashed (wei).
    function _slashInto(address account, Role role, Bucket to) internal returns (uint256 slashed) {
        slashed = _slash(account, role);
        if (slashed != 0) _ESCROW.move(Bucket.Unbooked, to, slashed);
    }

    /// @notice Unlocks one seat of `role` (solverStake or verifierStake).
    function _unlock(address account, Role role) internal {
        _STAKE_MANAGER.unlock(account, role, _seatStake(role));
    }

    /// @notice Stake locked per seat of `role`.
    function _seatStake(Role role) internal view returns (uint256 amount) {
        amount = role == Role.Solver ? _SOLVER_STAKE : _VERIFIER_STAKE;
    }

    /// @notice Books a pull payment at the Escrow, taken from bucket `from`.
    function _credit(Bucket from, address account, uint256 amount) internal {
        if (amount != 0) _ESCROW.credit(from, account, amount);
    }

    /// @notice Moves `amount` of the job's escrowed fees to the submitter's credit.
    function _refundFee(uint256 jobId, address submitter, uint256 amount) internal {
        _ledgers[jobId].feesHeld -= amount;
        _credit(Bucket.Escrowed, submitter, amount);
    }

    /// @notice Moves one verifier fee from escrow to `verifier`'s credit.
    function _payFee(Ledger storage ledger, address verifier) internal {
        ledger.feesHeld -= _VERIFIER_FEE;
        _credit(Bucket.Escrowed, verifier, _VERIFIER_FEE);
    }

    /// @notice Returns one bond to `account` as credit.
    function _returnBond(address account) internal {
        _credit(Bucket.Bonds, account, _CHALLENGE_BOND);
    }

    /// @notice Releases one bond into a dispute pot.
    /// @return amount Bond (wei).
    function _forfeitBond(uint256 jobId, address account) internal returns (uint256 amount) {
        amount = _CHALLENGE_BOND;
        emit BondForfeited(jobId, account, amount);
        _ESCROW.move(Bucket.Bonds, Bucket.Pot, amount);
    }

    ////// Internal: pure / view helpers //////

    /// @notice Reverts unless the job is in `status`.
    function _requireStatus(uint256 jobId, Job storage job, JobStatus status) internal view {
        if (job.status != status) revert UnexpectedJobStatus(jobId, job.status);
    }

    /// @notice Verdict of a seat on sample `sampleIndex` (None if it never submitted).
    function _verdictAt(Seat storage seat, uint256 sampleIndex) internal view returns (Verdict verdict) {
        SeatStatus status = seat.status;
        if (status == SeatStatus.None || status == SeatStatus.Assigned || status == SeatStatus.Missed) {
            return Verdict.None;
        }
        verdict = (uint256(seat.rejectMask) >> sampleIndex) & 1 == 1 ? Verdict.Reject : Verdict.Approve;
    }

    /// @notice First `count` entries of `values`.
    function _truncate(address[] memory values, uint256 count) internal pure returns (address[] memory out) {
        out = new address[](count);
        for (uint256 i; i < count; ++i) {
            out[i] = values[i];
        }
    }
}
