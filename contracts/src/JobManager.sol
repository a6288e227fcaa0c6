// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Contracts
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
// Libraries
import {LibAssignment} from "./libraries/LibAssignment.sol";
import {LibCheckpoint} from "./libraries/LibCheckpoint.sol";
import {LibPosting} from "./libraries/LibPosting.sol";
import {LibSettlement} from "./libraries/LibSettlement.sol";
import {LibVerdict} from "./libraries/LibVerdict.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
// Interfaces
import {IAdjudicator} from "./interfaces/IAdjudicator.sol";
import {IEscrow} from "./interfaces/IEscrow.sol";
import {IJobManager} from "./interfaces/IJobManager.sol";
import {IShareRegistry} from "./interfaces/IShareRegistry.sol";
import {IStakeManager} from "./interfaces/IStakeManager.sol";
import {IVerificationRound} from "./interfaces/IVerificationRound.sol";
// Types
import {Bucket} from "./types/EscrowTypes.sol";
import {Job, JobRecord, JobStatus, Params, PostArgs, RoundJob, Verdict} from "./types/JobTypes.sol";
import {Role} from "./types/Role.sol";
import {RoundOutcome, SeatVerdicts} from "./types/RoundTypes.sol";
import {LibSubmission, SubmissionId} from "./types/SubmissionId.sol";
import {
    MAX_SEATS,
    MAX_SEGMENTS_BOUND,
    Seat,
    SeatStatus,
    Settlement,
    Submission,
    sampledSegments
} from "./types/SubmissionTypes.sol";

/// @title JobManager
/// @notice Escrows training jobs and runs their lifecycle (PROTOCOL.md 3.3): post, claim, commit,
///         random assignment of verifiers and segments, sealed verdicts and forced errors through
///         an `IVerificationRound` (docs/FORCED_ERRORS.md), whistleblower challenges, disputes
///         through an `IAdjudicator`, finalization and payments at the `IEscrow`: the solver's
///         reward and the seats' fees straight to their wallets, everything else pull payments.
/// @dev Deployment: `constructor(escrow, stakeManager, shareRegistry, round, params, admin)` with
///      the address the VerificationRound will get (it is deployed right after this contract, by
///      the same account, because it reads this contract's parameters: the deployer computes its
///      CREATE address from its own nonce and checks it after), then the admin calls
///      `setAdjudicator(committee)` once (deployed later because it needs this address). The
///      StakeManager, the ShareRegistry (its minter) and the Escrow are given its address before it
///      exists and check callers against it. See contracts/script/Deploy.sol for the full order.
///      The JobManager holds no tokens: rewards, fees, bonds, the jackpot pool and credits live in
///      the Escrow's buckets; slashed stake goes from the StakeManager to the Escrow and is booked
///      (credited, pooled or put in the dispute pot) at once.
contract JobManager is ReentrancyGuardTransient, IJobManager {
    using SafeCast for uint256;

    ////// Constants / Immutables //////

    /// @notice Most verifiers per job (bounds the loops of finalize and dispute settlement): the
    ///         seats a submission holds (`MAX_SEATS`, the size of its fixed verifier array).
    uint256 public constant MAX_VERIFIERS_PER_JOB = MAX_SEATS;

    /// @notice Most sampled segments per job (verdicts are a uint64 bitmap): bounds the union of the
    ///         seats' own draws, so verifiersPerJob * samplesPerJob must not exceed it.
    uint256 public constant MAX_SAMPLES_PER_JOB = 64;

    /// @custom:security non-reentrant
    IEscrow internal immutable _ESCROW;
    /// @custom:security non-reentrant
    IStakeManager internal immutable _STAKE_MANAGER;
    /// @custom:security non-reentrant
    IShareRegistry internal immutable _SHARE_REGISTRY;
    /// @notice Admin (sets the adjudicator once) and treasury of rounding dust.
    address internal immutable _ADMIN;
    /// @notice Verification round (sealed verdicts, forced errors): an immutable, so no round call
    ///         or round-only check reads a cold storage word for it (docs/SECURITY.md, "Gas cuts").
    IVerificationRound internal immutable _ROUND;

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
    uint64 internal immutable _CLAIMS_WINDOW;
    uint64 internal immutable _OPEN_WINDOW;
    uint32 internal immutable _MAX_TOTAL_STEPS;
    uint32 internal immutable _MAX_SEGMENTS;
    uint32 internal immutable _MAX_SEGMENT_STEPS;
    uint32 internal immutable _MAX_REASSIGNMENTS;

    ////// State //////

    /// @notice Adjudicator of disputes, set once.
    IAdjudicator internal _adjudicator;

    /// @notice Last job id, packed into `_adjudicator`'s word: that word is live (nonzero) once the
    ///         adjudicator is wired at deployment, so the first job of a deployment rewrites a word
    ///         instead of creating one (docs/SECURITY.md, "Gas cuts"). Job ids stay below 2^96 anyway: a
    ///         submission id is jobId << 160 | solver (`LibSubmission.id`).
    uint96 internal _jobCount;

    mapping(uint256 jobId => JobRecord job) internal _jobs;
    /// @notice Per-submission bookkeeping (verifiers, segments, seats, challenges, disputes).
    mapping(SubmissionId submissionId => Submission submission) internal _submissions;
    mapping(uint256 disputeId => SubmissionId submissionId) internal _disputeSubmissions;

    ////// Constructor //////

    /// @param escrow_ Escrow holding rewards, fees, bonds and credits (must authorise this contract).
    /// @param stakeManager_ StakeManager (must name this contract as its JobManager).
    /// @param shareRegistry_ ShareRegistry (must make this contract its minter).
    /// @param round_ VerificationRound serving this contract (deployed next, with this contract's
    ///        address; the deployer checks it is there).
    /// @param params_ Protocol parameters (see `Params`).
    /// @param admin_ Admin (sets the adjudicator once) and treasury of rounding dust.
    constructor(
        IEscrow escrow_,
        IStakeManager stakeManager_,
        IShareRegistry shareRegistry_,
        IVerificationRound round_,
        Params memory params_,
        address admin_
    ) {
        if (
            address(escrow_) == address(0) || address(stakeManager_) == address(0)
                || address(shareRegistry_) == address(0) || address(round_) == address(0) || admin_ == address(0)
        ) revert ZeroAddress();
        if (params_.verifiersPerJob == 0 || params_.verifiersPerJob > MAX_VERIFIERS_PER_JOB) {
            revert InvalidParam("verifiersPerJob", params_.verifiersPerJob);
        }
        // Each seat draws its own q samples, all hold the last segment (P-36): their union (at most
        // V * q + 1) must fit the verdict bitmaps.
        if (
            params_.samplesPerJob == 0
                || uint256(params_.samplesPerJob) * params_.verifiersPerJob >= MAX_SAMPLES_PER_JOB
        ) {
            revert InvalidParam("samplesPerJob", params_.samplesPerJob);
        }
        if (params_.commitWindow == 0) revert InvalidParam("commitWindow", 0);
        if (params_.verdictWindow == 0) revert InvalidParam("verdictWindow", 0);
        if (params_.revealWindow == 0) revert InvalidParam("revealWindow", 0);
        if (params_.challengeWindow == 0) revert InvalidParam("challengeWindow", 0);
        if (params_.claimsWindow == 0) revert InvalidParam("claimsWindow", 0);
        if (params_.openWindow == 0) revert InvalidParam("openWindow", 0);
        if (params_.maxTotalSteps == 0) revert InvalidParam("maxTotalSteps", 0);
        if (params_.maxSegments == 0) revert InvalidParam("maxSegments", 0);
        // A sampled segment's index is stored in 16 bits (`Submission.draw`).
        if (params_.maxSegments > MAX_SEGMENTS_BOUND) revert InvalidParam("maxSegments", params_.maxSegments);
        if (params_.maxSegmentSteps == 0) revert InvalidParam("maxSegmentSteps", 0);
        // A job pays for the verifier stake it locks: every assigned verifier that was not at fault
        // is paid its fee, including on jobs the solver abandons (PROTOCOL.md 3.3).
        if (params_.verifierFee == 0) revert InvalidParam("verifierFee", 0);
        _ESCROW = escrow_;
        _STAKE_MANAGER = stakeManager_;
        _SHARE_REGISTRY = shareRegistry_;
        _ADMIN = admin_;
        _ROUND = round_;
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
        _CLAIMS_WINDOW = params_.claimsWindow;
        _OPEN_WINDOW = params_.openWindow;
        _MAX_TOTAL_STEPS = params_.maxTotalSteps;
        _MAX_SEGMENTS = params_.maxSegments;
        _MAX_SEGMENT_STEPS = params_.maxSegmentSteps;
        _MAX_REASSIGNMENTS = params_.maxReassignments;
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

    ////// External: job lifecycle //////

    /// @inheritdoc IJobManager
    function postJob(
        bytes32 modelId,
        bytes32 specHash,
        bytes32 initHash,
        uint32 totalSteps,
        uint32 checkpointInterval,
        uint256 reward,
        string calldata specURI
    ) external nonReentrant returns (uint256 jobId) {
        jobId = _post(
            PostArgs(msg.sender, modelId, specHash, initHash, totalSteps, checkpointInterval, reward, false), specURI
        );
    }

    /// @inheritdoc IJobManager
    function postContribution(
        address poster,
        bytes32 modelId,
        bytes32 specHash,
        bytes32 initHash,
        uint32 totalSteps,
        uint32 checkpointInterval,
        uint256 reward,
        string calldata specURI
    ) external nonReentrant returns (uint256 jobId) {
        // SAFETY: trusted ShareRegistry view; the run minter is an immutable of the registry.
        address runRegistry = _SHARE_REGISTRY.runMinter();
        if (msg.sender != runRegistry) revert NotRunRegistry(msg.sender);
        jobId =
            _post(PostArgs(poster, modelId, specHash, initHash, totalSteps, checkpointInterval, reward, true), specURI);
    }

    /// @inheritdoc IJobManager
    function cancelJob(uint256 jobId) external nonReentrant {
        JobRecord storage job = _jobs[jobId];
        _requireStatus(jobId, job, JobStatus.Open);
        if (msg.sender != job.submitter) revert NotSubmitter(jobId, msg.sender);
        LibPosting.closeOpen(job, _settlement(), jobId, false);
    }

    /// @inheritdoc IJobManager
    function expireJob(uint256 jobId) external nonReentrant {
        JobRecord storage job = _jobs[jobId];
        _requireStatus(jobId, job, JobStatus.Open);
        // Reverts OpenDeadlineNotPassed until the open deadline has passed.
        LibPosting.closeOpen(job, _settlement(), jobId, true);
    }

    /// @inheritdoc IJobManager
    function claimJob(uint256 jobId) external nonReentrant {
        JobRecord storage job = _jobs[jobId];
        _requireStatus(jobId, job, JobStatus.Open);
        if (block.timestamp > job.openDeadline) {
            revert OpenDeadlinePassed(jobId, job.openDeadline, uint64(block.timestamp));
        }
        if (!_STAKE_MANAGER.isActive(msg.sender, Role.Solver)) revert NotActiveStaker(msg.sender, Role.Solver);
        uint64 deadline = uint64(block.timestamp) + _COMMIT_WINDOW;
        job.solver = msg.sender;
        job.commitDeadline = uint256(deadline).toUint32();
        job.status = JobStatus.Claimed;
        SubmissionId submissionId = LibSubmission.id(jobId, msg.sender);
        Submission storage sub = _submissions[submissionId];
        // INVARIANT: a submission is created on claim, before any fee is spent.
        sub.feesHeld = (uint256(_VERIFIERS_PER_JOB) * _VERIFIER_FEE).toUint120();
        emit JobClaimed(jobId, msg.sender, submissionId, deadline);
        // The premium is spent once the job is claimed: it joins the jackpot pool for good, at
        // the first claim only (a reopened job's later claims find premiumBps cleared).
        uint256 premium = LibPosting.premiumAt(job.premiumBps, _VERIFIERS_PER_JOB, _JACKPOT);
        if (premium != 0) {
            job.premiumBps = 0;
            LibPosting.poolPremium(_ESCROW, jobId, premium);
        }
        // Reverts with IStakeManager.InsufficientFreeStake if the free stake is below solverStake.
        _STAKE_MANAGER.lock(msg.sender, Role.Solver, _SOLVER_STAKE);
    }

    /// @inheritdoc IJobManager
    function commitCheckpoints(
        uint256 jobId,
        bytes32 merkleRoot,
        bytes32[] calldata initProof,
        string calldata checkpointURL,
        bytes32 secretCommitment
    ) external {
        IVerificationRound round = _ROUND;
        JobRecord storage job = _jobs[jobId];
        _requireStatus(jobId, job, JobStatus.Claimed);
        if (msg.sender != job.solver) revert NotSolver(jobId, msg.sender);
        if (block.timestamp > job.commitDeadline) {
            revert CommitDeadlinePassed(jobId, job.commitDeadline, uint64(block.timestamp));
        }
        if (merkleRoot == bytes32(0)) revert ZeroMerkleRoot(jobId);
        // INVARIANT: every committed run starts from the spec's seed-initialised state: the
        // positional tree holds one leaf per index, so checkpoint 0 is initHash and nothing else.
        // The root then takes initHash's word: the proof of index 0 keeps initHash bound.
        bytes32 initHash = job.root;
        if (!LibCheckpoint.verify(initProof, merkleRoot, job.totalSteps, job.checkpointInterval, 0, initHash)) {
            revert InitialStateNotCommitted(jobId, merkleRoot, initHash);
        }
        uint64 randomnessBlock = uint64(block.number + 1);
        job.root = merkleRoot;
        job.committed = true;
        job.randomnessBlock = uint256(randomnessBlock).toUint32();
        job.status = JobStatus.Committed;
        emit CheckpointsCommitted(jobId, msg.sender, merkleRoot, secretCommitment, checkpointURL, randomnessBlock);
        // SAFETY: the round is an immutable given at construction; it only records the commitment (reverts
        // IVerificationRound.ZeroCommitment on zero).
        round.onCommit(LibSubmission.id(jobId, msg.sender), secretCommitment);
    }

    /// @inheritdoc IJobManager
    function reclaimExpired(uint256 jobId) external nonReentrant {
        JobRecord storage job = _jobs[jobId];
        _requireStatus(jobId, job, JobStatus.Claimed);
        if (block.timestamp <= job.commitDeadline) {
            revert CommitDeadlineNotPassed(jobId, job.commitDeadline, uint64(block.timestamp));
        }
        LibSettlement.reopen(job, _settlement(), jobId);
    }

    /// @inheritdoc IJobManager
    function expireUnassigned(uint256 jobId) external nonReentrant {
        JobRecord storage job = _jobs[jobId];
        _requireStatus(jobId, job, JobStatus.Committed);
        // The commit (or the reassignment, which resets it) set commitDeadline at or after entry.
        uint256 deadline = uint256(job.commitDeadline) + _OPEN_WINDOW;
        if (block.timestamp <= deadline) {
            revert AssignDeadlineNotPassed(jobId, uint64(deadline), uint64(block.timestamp));
        }
        Submission storage sub = _active(jobId, job);
        sub.expiring = true;
        _closeOrDispute(job, sub, jobId, true);
    }

    /// @inheritdoc IJobManager
    function assignVerifiers(uint256 jobId) external nonReentrant {
        JobRecord storage job = _jobs[jobId];
        _requireStatus(jobId, job, JobStatus.Committed);
        uint64 randomnessBlock = job.randomnessBlock;
        if (block.number <= randomnessBlock) revert RandomnessNotReady(jobId, randomnessBlock, block.number);
        bytes32 blockHash = blockhash(randomnessBlock);
        if (blockHash == bytes32(0)) {
            // The hash is only available for the last 256 blocks: anchor to the next block instead.
            uint64 next = uint64(block.number + 1);
            job.randomnessBlock = uint256(next).toUint32();
            emit RandomnessReanchored(jobId, next);
            return;
        }
        // Each seat draws its own samples (P-27); a reassignment keeps the sample (the solver's
        // claims are on it) and the seats that revealed, and seats new verifiers on the rest.
        LibAssignment.assign(
            job,
            _active(jobId, job),
            _settlement(),
            jobId,
            keccak256(abi.encode(blockHash, jobId, job.root)),
            _SAMPLES_PER_JOB
        );
    }

    /// @inheritdoc IJobManager
    function recordVerdicts(SubmissionId submissionId, SeatVerdicts[] calldata seats)
        external
        nonReentrant
        returns (bool allRevealed)
    {
        if (msg.sender != address(_ROUND)) {
            revert NotVerificationRound(msg.sender);
        }
        Submission storage sub = _submissions[submissionId];
        uint256 jobId = submissionId.jobIdOf();
        JobRecord storage job = _jobs[jobId];
        address solver = submissionId.solverOf();
        if (solver == address(0) || job.solver != solver) revert SubmissionNotActive(submissionId);
        _requireStatus(jobId, job, JobStatus.Verifying);
        LibAssignment.recordVerdicts(job, sub, _settlement(), jobId, seats);
        // `submitted` counts the Submitted seats; a voided one never counts again.
        allRevealed = sub.submitted == sub.seatCount;
    }

    /// @inheritdoc IJobManager
    function slashEquivocation(SubmissionId submissionId, address verifier) external nonReentrant {
        // The library checks the caller (the round), the submission and the job's status.
        LibSettlement.slashEquivocation(_jobs, _submissions, _settlement(), submissionId, verifier);
    }

    /// @inheritdoc IJobManager
    function challengeApproval(uint256 jobId, uint256 sampleIndex, address verifier) external nonReentrant {
        JobRecord storage job = _jobs[jobId];
        LibAssignment.challengeApproval(job, _active(jobId, job), _settlement(), jobId, sampleIndex, verifier);
    }

    /// @inheritdoc IJobManager
    function finalize(uint256 jobId) external nonReentrant {
        JobRecord storage job = _jobs[jobId];
        bool expiring = false;
        SubmissionId submissionId = LibSubmission.id(jobId, job.solver);
        Submission storage sub = _submissions[submissionId];
        if (job.status == JobStatus.Verifying) {
            if (block.timestamp <= job.challengeDeadline) {
                revert ChallengeWindowOpen(jobId, job.challengeDeadline, uint64(block.timestamp));
            }
            // Runs once: the status leaves Verifying below.
            (RoundOutcome outcome, uint256 forcedSample) = _ROUND.outcome(submissionId);
            if (outcome == RoundOutcome.Pending) revert RoundPending(jobId);
            if (outcome == RoundOutcome.NoVerdicts) {
                // Nothing was verified: nothing is paid or minted. Past the last reassignment the
                // submission is expiring: its disputed samples are judged, then it expires (P-34).
                (bool reassigned, uint256 kept) = LibSettlement.settleUnverified(job, sub, _settlement(), jobId);
                if (reassigned) {
                    _ROUND.onReassign(submissionId, kept);
                    return;
                }
                expiring = true;
            } else if (LibSettlement.settleRound(job, sub, _settlement(), jobId, outcome, forcedSample)) {
                return;
            }
        } else if (job.status == JobStatus.Disputed) {
            if (sub.disputePending) revert DisputePending(jobId, job.disputeId);
            expiring = sub.expiring;
        } else {
            revert UnexpectedJobStatus(jobId, job.status);
        }
        _closeOrDispute(job, sub, jobId, expiring);
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
        SubmissionId submissionId = _disputeSubmissions[disputeId];
        Submission storage sub = _submissions[submissionId];
        uint256 jobId = submissionId.jobIdOf();
        JobRecord storage job = _jobs[jobId];
        if (jobId == 0 || job.status != JobStatus.Disputed || !sub.disputePending || job.disputeId != disputeId) {
            revert UnknownDispute(disputeId);
        }
        LibSettlement.settleDispute(job, sub, _settlement(), jobId, disputeId, segmentValid, majority, nonVoters);
    }

    ////// External: views //////

    /// @inheritdoc IJobManager
    function getJob(uint256 jobId) external view returns (Job memory job) {
        job = LibPosting.jobView(_jobs[jobId], _SHARE_REGISTRY);
    }

    /// @inheritdoc IJobManager
    function roundJobOf(uint256 jobId) external view returns (RoundJob memory job) {
        JobRecord storage stored = _jobs[jobId];
        job = RoundJob({
            solver: stored.solver,
            status: stored.status,
            // Before the commit the root's word holds initHash: no root yet.
            merkleRoot: stored.committed ? stored.root : bytes32(0),
            totalSteps: stored.totalSteps,
            checkpointInterval: stored.checkpointInterval,
            claimsDeadline: stored.claimsDeadline,
            verdictDeadline: stored.verdictDeadline,
            challengeDeadline: stored.challengeDeadline
        });
    }

    /// @inheritdoc IJobManager
    function submissionOf(uint256 jobId) external view returns (SubmissionId submissionId) {
        address solver = _jobs[jobId].solver;
        if (solver != address(0)) submissionId = LibSubmission.id(jobId, solver);
    }

    /// @inheritdoc IJobManager
    function statusOf(uint256 jobId) external view returns (JobStatus status) {
        status = _jobs[jobId].status;
    }

    /// @inheritdoc IJobManager
    function getSubmission(SubmissionId submissionId) external view returns (uint256 jobId, address solver) {
        (jobId, solver) = (submissionId.jobIdOf(), submissionId.solverOf());
    }

    /// @inheritdoc IJobManager
    function getAssignment(uint256 jobId) external view returns (address[] memory verifiers, uint32[] memory segments) {
        Submission storage sub = _active(jobId, _jobs[jobId]);
        verifiers = _assignedVerifiers(sub);
        segments = sampledSegments(sub);
    }

    /// @inheritdoc IJobManager
    function partiesOf(uint256 jobId)
        external
        view
        returns (address submitter, address solver, address[] memory verifiers)
    {
        JobRecord storage job = _jobs[jobId];
        (submitter, solver) = (job.submitter, job.solver);
        verifiers = _assignedVerifiers(_active(jobId, job));
    }

    /// @inheritdoc IJobManager
    function verdictOf(uint256 jobId, address verifier) external view returns (Verdict[] memory verdicts) {
        JobRecord storage job = _jobs[jobId];
        verdicts = LibAssignment.seatVerdicts(
            _active(jobId, job),
            verifier,
            _ROUND,
            LibSubmission.id(jobId, job.solver),
            job.status == JobStatus.Finalized
        );
    }

    /// @inheritdoc IJobManager
    function sampleMaskOf(uint256 jobId, address verifier) external view returns (uint256 mask) {
        mask = _active(jobId, _jobs[jobId]).seats[verifier].sampleMask;
    }

    /// @inheritdoc IJobManager
    function segmentsOf(uint256 jobId) external view returns (uint32[] memory segments) {
        segments = sampledSegments(_active(jobId, _jobs[jobId]));
    }

    /// @inheritdoc IJobManager
    function seatOf(SubmissionId submissionId, address verifier)
        external
        view
        returns (bool assigned, uint64 sampleMask, bool revealed, uint256 seats, uint256 samples)
    {
        Submission storage sub = _submissions[submissionId];
        Seat storage seat = sub.seats[verifier];
        assigned = seat.status == SeatStatus.Assigned || seat.status == SeatStatus.Submitted;
        (sampleMask, revealed) = (seat.sampleMask, seat.revealed);
        (seats, samples) = (sub.seatCount, sub.sampleCount);
    }

    /// @inheritdoc IJobManager
    function windowsOf(SubmissionId submissionId)
        external
        view
        returns (
            uint64 verdictRevealOpens,
            uint64 verdictRevealCloses,
            uint64 secretRevealOpens,
            uint64 secretRevealCloses
        )
    {
        JobRecord storage job = _jobs[submissionId.jobIdOf()];
        uint64 verdictDeadline = job.verdictDeadline;
        // Another solver's submission, or no draw yet: no window.
        if (job.solver != submissionId.solverOf() || verdictDeadline == 0) return (0, 0, 0, 0);
        uint64 challengeDeadline = job.challengeDeadline;
        verdictRevealOpens = verdictDeadline + 1;
        verdictRevealCloses = verdictDeadline + _REVEAL_WINDOW;
        secretRevealOpens = challengeDeadline;
        secretRevealCloses = challengeDeadline + _REVEAL_WINDOW;
    }

    /// @inheritdoc IJobManager
    function endTagOf(SubmissionId submissionId, address verifier) external view returns (bytes5 endTag) {
        endTag = _submissions[submissionId].seats[verifier].endTag;
    }

    /// @inheritdoc IJobManager
    function challengerOf(uint256 jobId, uint256 sampleIndex, address verifier)
        external
        view
        returns (address challenger)
    {
        challenger = _active(jobId, _jobs[jobId]).challengers[sampleIndex][verifier];
    }

    /// @inheritdoc IJobManager
    function forcedErrorPremium() public view returns (uint256 premium) {
        premium = LibPosting.premiumAt(_forcedErrorRateBps(), _VERIFIERS_PER_JOB, _JACKPOT);
    }

    /// @notice The verification round's forced-error rate (bps, <= 10_000).
    function _forcedErrorRateBps() internal view returns (uint256 rateBps) {
        // SAFETY: trusted VerificationRound view.
        rateBps = _ROUND.forcedErrorRateBps();
    }

    /// @inheritdoc IJobManager
    function postCost(uint256 reward) external view returns (uint256 cost) {
        cost = reward + uint256(_VERIFIERS_PER_JOB) * _VERIFIER_FEE + forcedErrorPremium();
    }

    /// @inheritdoc IJobManager
    function jobCount() external view returns (uint256 count) {
        count = _jobCount;
    }

    /// @inheritdoc IJobManager
    function openWindow() external view returns (uint64 window) {
        window = _OPEN_WINDOW;
    }

    /// @inheritdoc IJobManager
    function params() external view returns (Params memory) {
        // The settlement's copy of the immutables they share: each immutable read at one site only
        // (every read site of an immutable is 33 bytes of code).
        Settlement memory s = _settlement();
        return Params({
            solverStake: s.solverStake,
            verifierStake: s.verifierStake,
            challengeBond: s.challengeBond,
            verifierFee: s.verifierFee,
            arbiterFee: s.arbiterFee,
            jackpot: s.jackpot,
            verifiersPerJob: s.verifiersPerJob,
            samplesPerJob: _SAMPLES_PER_JOB,
            commitWindow: _COMMIT_WINDOW,
            verdictWindow: s.verdictWindow,
            revealWindow: s.revealWindow,
            challengeWindow: s.challengeWindow,
            claimsWindow: s.claimsWindow,
            openWindow: s.openWindow,
            maxTotalSteps: _MAX_TOTAL_STEPS,
            maxSegments: _MAX_SEGMENTS,
            maxSegmentSteps: _MAX_SEGMENT_STEPS,
            maxReassignments: s.maxReassignments
        });
    }

    /// @inheritdoc IJobManager
    function verifyCheckpoint(uint256 jobId, uint256 leafIndex, bytes32 stateHash, bytes32[] calldata proof)
        external
        view
        returns (bool valid)
    {
        JobRecord storage job = _jobs[jobId];
        // Before the commit the root's word holds initHash, no tree's root.
        if (!job.committed) return false;
        valid = LibCheckpoint.verify(proof, job.root, job.totalSteps, job.checkpointInterval, leafIndex, stateHash);
    }

    /// @inheritdoc IJobManager
    function disputedSampleOf(uint256 jobId) external view returns (uint256 sampleIndex) {
        sampleIndex = _active(jobId, _jobs[jobId]).disputeSample;
    }

    /// @inheritdoc IJobManager
    function disputedMaskOf(uint256 jobId) external view returns (uint256 mask) {
        JobRecord storage job = _jobs[jobId];
        // A finalized job has none; a forced error's settlement that finalizes leaves the word as
        // it was (LibSettlement `_settleForced`).
        if (job.status != JobStatus.Finalized) mask = _active(jobId, job).disputedMask;
    }

    /// @inheritdoc IJobManager
    function verificationRound() external view returns (IVerificationRound) {
        return _ROUND;
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

    ////// Internal: posting //////

    /// @notice Posts a job for `p.poster` (its submitter and escrow payer); `p.contribution` marks a
    ///         run contribution at the ShareRegistry (see `postJob`, `postContribution`).
    function _post(PostArgs memory p, string calldata specURI) internal returns (uint256 jobId) {
        LibPosting.checkPost(
            _SHARE_REGISTRY,
            p.modelId,
            p.poster,
            p.totalSteps,
            p.checkpointInterval,
            _MAX_TOTAL_STEPS,
            _MAX_SEGMENTS,
            _MAX_SEGMENT_STEPS
        );
        uint256 rateBps = _forcedErrorRateBps();
        uint256 escrowed = p.reward + uint256(_VERIFIERS_PER_JOB) * _VERIFIER_FEE
            + LibPosting.premiumAt(rateBps, _VERIFIERS_PER_JOB, _JACKPOT);
        jobId = ++_jobCount;
        // Records the post at the ShareRegistry, writes the Open job with the kind it gets there and
        // emits JobPosted (in the library: the JobManager's code size).
        LibPosting.openJob(_jobs[jobId], _SHARE_REGISTRY, p, jobId, escrowed, rateBps, _OPEN_WINDOW, specURI);
        _ESCROW.deposit(Bucket.Escrowed, p.poster, escrowed);
    }

    ////// Internal: disputes //////

    /// @notice Opens a dispute on the next disputed sample that has a challenger left; when none is
    ///         left (a disputed sample with no challenger leaves the set: nothing blocks), expires an
    ///         `expiring` submission or finalizes the job.
    function _closeOrDispute(JobRecord storage job, Submission storage sub, uint256 jobId, bool expiring) internal {
        Settlement memory s = _settlement();
        if (sub.disputedMask != 0 && LibSettlement.openDispute(job, sub, s, _disputeSubmissions, _adjudicator, jobId)) {
            return;
        }
        if (expiring) LibSettlement.expire(job, sub, s, jobId);
        else LibSettlement.finalizeJob(job, sub, s, jobId);
    }

    ////// Internal: helpers //////

    /// @notice The job's active submission (the current solver's; empty storage while Open).
    function _active(uint256 jobId, JobRecord storage job) internal view returns (Submission storage sub) {
        sub = _submissions[LibSubmission.id(jobId, job.solver)];
    }

    /// @notice The submission's assigned verifiers, in seat order (their ids resolved at the
    ///         StakeManager by `LibAssignment`, one call site for both views).
    function _assignedVerifiers(Submission storage sub) internal view returns (address[] memory verifiers) {
        verifiers = LibAssignment.assignedVerifiers(sub, _STAKE_MANAGER);
    }

    /// @notice The immutables settlement needs, for `LibSettlement` (and `LibPosting`, `LibAssignment`).
    function _settlement() internal view returns (Settlement memory s) {
        s = Settlement({
            escrow: _ESCROW,
            stakeManager: _STAKE_MANAGER,
            shareRegistry: _SHARE_REGISTRY,
            round: _ROUND,
            admin: _ADMIN,
            solverStake: _SOLVER_STAKE,
            verifierStake: _VERIFIER_STAKE,
            challengeBond: _CHALLENGE_BOND,
            verifierFee: _VERIFIER_FEE,
            arbiterFee: _ARBITER_FEE,
            jackpot: _JACKPOT,
            openWindow: _OPEN_WINDOW,
            claimsWindow: _CLAIMS_WINDOW,
            verdictWindow: _VERDICT_WINDOW,
            revealWindow: _REVEAL_WINDOW,
            challengeWindow: _CHALLENGE_WINDOW,
            maxReassignments: _MAX_REASSIGNMENTS,
            verifiersPerJob: _VERIFIERS_PER_JOB,
            seated: new address[](0)
        });
    }

    /// @notice Books a pull payment at the Escrow, taken from bucket `from`.
    function _credit(Bucket from, address account, uint256 amount) internal {
        if (amount != 0) _ESCROW.credit(from, account, amount);
    }

    /// @notice Reverts unless the job is in `status`.
    function _requireStatus(uint256 jobId, JobRecord storage job, JobStatus status) internal view {
        if (job.status != status) revert UnexpectedJobStatus(jobId, job.status);
    }
}
