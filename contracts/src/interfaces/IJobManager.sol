// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Interfaces
import {IAdjudicator} from "./IAdjudicator.sol";
import {IJobManagerErrors} from "./IJobManagerErrors.sol";
import {IEscrow} from "./IEscrow.sol";
import {IStakeManager} from "./IStakeManager.sol";
import {IShareRegistry} from "./IShareRegistry.sol";
import {IVerificationRound} from "./IVerificationRound.sol";
// Types
import {Job, JobStatus, Params, RoundJob, Verdict} from "../types/JobTypes.sol";
import {Role} from "../types/Role.sol";
import {RoundOutcome, SeatVerdicts} from "../types/RoundTypes.sol";
import {SubmissionId} from "../types/SubmissionId.sol";

/// @title IJobManager
/// @notice Escrows training jobs and runs their lifecycle: post, claim, commit checkpoints,
///         random verifier assignment, sealed verdicts and forced errors through an
///         `IVerificationRound` (docs/FORCED_ERRORS.md), whistleblower challenges, disputes through
///         an `IAdjudicator`, finalization (reward, fees, ownership shares, jackpots). The solver's
///         reward and the seats' fees are paid straight to their wallets at the `IEscrow`
///         (`IEscrow.pay`, a credit when the token refuses the transfer); every other payment is a
///         credit there.
interface IJobManager is IJobManagerErrors {
    ////// Events //////

    /// @notice Emitted once, when the adjudicator was set.
    /// @param adjudicator Adjudicator.
    event AdjudicatorSet(address indexed adjudicator);

    /// @notice Emitted when a forced error was settled at finalize (docs/FORCED_ERRORS.md section 3).
    /// @param jobId Job.
    /// @param sampleIndex Sample carrying the forced error.
    /// @param slashed Stakes of its approvers slashed into the jackpot pool (wei).
    /// @param paid Jackpots paid from the pool to its rejecters and whistleblowers (wei).
    event ForcedErrorSettled(uint256 indexed jobId, uint256 sampleIndex, uint256 slashed, uint256 paid);

    /// @notice Emitted at a forced-error settlement for each rejecter of the forced sample whose sealed
    ///         end is not the solver's true end: the sample stays disputed and it challenges that
    ///         end (docs/FORCED_ERRORS.md section 3).
    /// @param jobId Job.
    /// @param sampleIndex The forced sample.
    /// @param verifier The rejecter, now a challenger of the solver's true end.
    event ForcedEndDisputed(uint256 indexed jobId, uint256 sampleIndex, address indexed verifier);

    /// @notice Emitted when a jackpot was credited from the pool.
    /// @param jobId Job of the forced error.
    /// @param account Rejecter or whistleblower credited.
    /// @param amount Amount (wei): min(jackpot, pool).
    event JackpotPaid(uint256 indexed jobId, address indexed account, uint256 amount);

    /// @notice Emitted when a solver was slashed for posting no claims or not revealing its secret.
    /// @param jobId Job.
    /// @param solver Solver.
    /// @param outcome Round outcome (NoClaims or NoReveal).
    /// @param slashed Stake slashed into the jackpot pool (wei).
    event SolverFaulted(uint256 indexed jobId, address indexed solver, RoundOutcome outcome, uint256 slashed);

    /// @notice Emitted when a job was posted and its escrow taken.
    /// @param jobId New job id.
    /// @param submitter Submitter.
    /// @param modelId Model id (keccak256 of the model name).
    /// @param specHash keccak256 of the canonical spec JSON.
    /// @param initHash State hash of the spec's seed-initialised state (step 0): the job keeps it
    ///        only until the commit, whose root then takes its word (`Job.root`).
    /// @param totalSteps N (steps).
    /// @param checkpointInterval k (steps).
    /// @param reward Reward (wei).
    /// @param escrow Total escrowed: reward + V * verifierFee + the forced-error premium (wei).
    /// @param specURI URI of the spec (data:, http(s):, file:); kept only in this event (the
    ///        contract stores `specHash`, against which every reader checks the fetched spec).
    event JobPosted(
        uint256 indexed jobId,
        address indexed submitter,
        bytes32 indexed modelId,
        bytes32 specHash,
        bytes32 initHash,
        uint32 totalSteps,
        uint32 checkpointInterval,
        uint256 reward,
        uint256 escrow,
        string specURI
    );

    /// @notice Emitted when a submitter cancelled an Open job.
    /// @param jobId Job.
    /// @param refund Escrow credited back to the submitter (wei).
    event JobCancelled(uint256 indexed jobId, uint256 refund);

    /// @notice Emitted when a job ended with nobody at fault and its escrow went back to the
    ///         submitter: an Open job nobody claimed by its open deadline, a job whose verifiers
    ///         stayed silent through every reassignment, or a Committed job that seated no verifiers
    ///         by its assign deadline (the solver's stake is unlocked; disputed samples are
    ///         adjudicated first).
    /// @param jobId Job.
    /// @param refund Escrow credited back to the submitter (wei).
    event JobExpired(uint256 indexed jobId, uint256 refund);

    /// @notice Emitted when no assigned verifier revealed a verdict and fresh verifiers will be drawn
    ///         from the hash of `randomnessBlock` (the sampled segments and claims are kept).
    /// @param jobId Job.
    /// @param reassignment Reassignments so far, including this one (1-based).
    /// @param randomnessBlock Block whose hash seeds the new draw.
    event VerifiersReassigning(uint256 indexed jobId, uint32 reassignment, uint64 randomnessBlock);

    /// @notice Emitted when a job's forced-error premium left its escrow for the jackpot pool (its
    ///         first claim): from then on it is never refunded (docs/FORCED_ERRORS.md section 5).
    /// @param jobId Job.
    /// @param premium Premium pooled (wei).
    event PremiumPooled(uint256 indexed jobId, uint256 premium);

    /// @notice Emitted when a solver claimed a job, creating its submission.
    /// @param jobId Job.
    /// @param solver Solver.
    /// @param submissionId New submission: jobId << 160 | solver.
    /// @param commitDeadline Commit deadline (seconds).
    event JobClaimed(
        uint256 indexed jobId, address indexed solver, SubmissionId indexed submissionId, uint64 commitDeadline
    );

    /// @notice Emitted when the solver committed its checkpoints.
    /// @param jobId Job.
    /// @param solver Solver.
    /// @param merkleRoot Checkpoint Merkle root.
    /// @param secretCommitment keccak256(abi.encode(jobId, solver, secret)) of the forced-error
    ///        secret, recorded by the round in the same call (`IVerificationRound.onCommit`, which
    ///        emits no event of its own; docs/SECURITY.md, "Gas cuts").
    /// @param checkpointURL Base URL of the solver's checkpoint API; kept only in this event (every
    ///        state fetched from it is checked against `merkleRoot`).
    /// @param randomnessBlock Block whose hash seeds the assignment.
    event CheckpointsCommitted(
        uint256 indexed jobId,
        address indexed solver,
        bytes32 merkleRoot,
        bytes32 secretCommitment,
        string checkpointURL,
        uint64 randomnessBlock
    );

    /// @notice Emitted when a job with a missed commit deadline went back to Open.
    /// @param jobId Job.
    /// @param solver Solver that missed the deadline.
    /// @param slashed Solver stake slashed into the jackpot pool (wei).
    event JobReclaimed(uint256 indexed jobId, address indexed solver, uint256 slashed);

    /// @notice Emitted when the randomness block hash had expired and a new block was chosen.
    /// @param jobId Job.
    /// @param randomnessBlock New randomness block.
    event RandomnessReanchored(uint256 indexed jobId, uint64 randomnessBlock);

    /// @notice Emitted when verifiers and segments were drawn.
    /// @param jobId Job.
    /// @param verifiers Assigned verifiers: on a reassignment the seats kept (they revealed) first,
    ///        then the new ones.
    /// @param sampleMasks Per verifier (same order), the samples its seat must verify: bit i set =
    ///        sample i (of `segments`) is in its own draw (docs/SECURITY.md P-27; its verdicts on
    ///        other samples are ignored; `sampleMaskOf`).
    /// @param segments Sampled segment indices, in sample order: the union of the seats' own draws
    ///        in increasing segment order.
    /// @param verdictDeadline Verdict deadline (seconds).
    /// @param challengeDeadline Challenge deadline (seconds); shortened once all verdicts are in.
    event VerifiersAssigned(
        uint256 indexed jobId,
        address[] verifiers,
        uint64[] sampleMasks,
        uint32[] segments,
        uint64 verdictDeadline,
        uint64 challengeDeadline
    );

    /// @notice Emitted with the round's `IVerificationRound.VerdictsRevealed` (the record of a
    ///         seat's reveal) when some of the verifier's non-approvals are
    ///         abstentions (zero ends: it could not obtain the data, docs/SECURITY.md P-20).
    /// @param jobId Job.
    /// @param verifier Verifier.
    /// @param abstainMask Bit i set = abstained on sample i.
    event VerdictsAbstained(uint256 indexed jobId, address indexed verifier, uint256 abstainMask);

    /// @notice Emitted when a challenge deadline was set or moved.
    /// @param jobId Job.
    /// @param challengeDeadline New challenge deadline (seconds).
    event ChallengeDeadlineSet(uint256 indexed jobId, uint64 challengeDeadline);

    /// @notice Emitted when a whistleblower challenged an approval.
    /// @param jobId Job.
    /// @param sampleIndex Sample index.
    /// @param verifier Verifier whose approval is challenged.
    /// @param challenger Whistleblower.
    /// @param bond Bond posted (wei).
    event ApprovalChallenged(
        uint256 indexed jobId, uint256 sampleIndex, address indexed verifier, address indexed challenger, uint256 bond
    );

    /// @notice Emitted when an assigned verifier that never revealed verdicts was slashed.
    /// @param jobId Job.
    /// @param verifier Verifier.
    /// @param slashed Stake slashed into the jackpot pool (wei).
    event VerdictMissed(uint256 indexed jobId, address indexed verifier, uint256 slashed);

    /// @notice Emitted when a job's disputed segment went to the adjudicator.
    /// @param jobId Job.
    /// @param disputeId Adjudicator dispute id.
    /// @param sampleIndex Sample index of the disputed segment.
    /// @param segment Disputed segment index.
    event JobDisputed(uint256 indexed jobId, uint256 indexed disputeId, uint256 sampleIndex, uint32 segment);

    /// @notice Emitted when a sample left the disputed set because none of its challengers is left
    ///         to play (every one of them settled in every role it holds on the sample).
    /// @param jobId Job.
    /// @param sampleIndex Sample index.
    event SampleUndisputed(uint256 indexed jobId, uint256 sampleIndex);

    /// @notice Emitted when the adjudicator's outcome was applied.
    /// @param jobId Job.
    /// @param disputeId Dispute.
    /// @param segmentValid Outcome.
    /// @param pot Slashes + forfeited bonds distributed (wei).
    event DisputeSettled(uint256 indexed jobId, uint256 indexed disputeId, bool segmentValid, uint256 pot);

    /// @notice Emitted when a solver was slashed for an invalid segment.
    /// @param jobId Job.
    /// @param solver Solver.
    /// @param amount Amount slashed (wei).
    event SolverSlashed(uint256 indexed jobId, address indexed solver, uint256 amount);

    /// @notice Emitted when a verifier was slashed for a wrong verdict.
    /// @param jobId Job.
    /// @param verifier Verifier.
    /// @param amount Amount slashed (wei).
    event VerifierSlashed(uint256 indexed jobId, address indexed verifier, uint256 amount);

    /// @notice Emitted when a seat proven to have signed two seals for the submission was slashed
    ///         and its verdicts voided (`slashEquivocation`): it is no challenger, winner or witness
    ///         of any sample, and the challenges of its approvals were returned.
    /// @param jobId Job.
    /// @param verifier Verifier.
    /// @param slashed Stake slashed into the jackpot pool (wei).
    /// @param bonds Its reject bonds forfeited to the jackpot pool (wei).
    event VerifierEquivocated(uint256 indexed jobId, address indexed verifier, uint256 slashed, uint256 bonds);

    /// @notice Emitted when an arbiter that did not reveal a vote was slashed.
    /// @param jobId Job.
    /// @param arbiter Arbiter.
    /// @param amount Amount slashed (wei).
    event ArbiterSlashed(uint256 indexed jobId, address indexed arbiter, uint256 amount);

    /// @notice Emitted when an abstention's bond went to the jackpot pool: another seat replayed the
    ///         sample, or the adjudicator found it valid (the data was there, docs/SECURITY.md P-33).
    /// @param jobId Job.
    /// @param sampleIndex Sample abstained on.
    /// @param verifier Abstaining verifier.
    /// @param bond Bond forfeited (wei).
    event AbstentionForfeited(uint256 indexed jobId, uint256 sampleIndex, address indexed verifier, uint256 bond);

    /// @notice Emitted when a bond was forfeited into a dispute pot.
    /// @param jobId Job.
    /// @param account Account that posted the bond (a seat's reject bond is slashed from its stake).
    /// @param amount Bond (wei).
    event BondForfeited(uint256 indexed jobId, address indexed account, uint256 amount);

    /// @notice Emitted when a dispute pot's share of a party of the job (its solver or submitter)
    ///         went to the jackpot pool instead: no slash is credited to a job's own parties.
    /// @param jobId Job.
    /// @param party The solver or the submitter whose share it was.
    /// @param amount Share moved from the dispute pot to the jackpot pool (wei).
    event PotShareToPool(uint256 indexed jobId, address indexed party, uint256 amount);

    /// @notice Emitted when a job was finalized and its payouts made.
    /// @param jobId Job.
    /// @param solver Solver.
    /// @param reward Reward paid to the solver's wallet (wei; credited when the token refuses it).
    /// @param shares Verified steps N; the ShareRegistry mints N * computePerStep shares for them if the
    ///        job extends its model's lineage (its `SharesMinted`), else none (`OffLineage`).
    event JobFinalized(uint256 indexed jobId, address indexed solver, uint256 reward, uint256 shares);

    /// @notice Emitted when a job was rejected: a segment was invalid, or the solver posted no
    ///         claims or did not reveal its secret.
    /// @param jobId Job.
    /// @param disputeId Dispute that found the invalid segment (0 for a solver fault).
    /// @param refund Reward and fees credited back to the submitter (wei).
    event JobRejected(uint256 indexed jobId, uint256 indexed disputeId, uint256 refund);

    ////// Admin //////

    /// @notice Sets the adjudicator, once (admin only). Disputes cannot open before.
    /// @param adjudicator Adjudicator (the ArbitrationCommittee in v0).
    function setAdjudicator(IAdjudicator adjudicator) external;

    ////// Job lifecycle //////

    /// @notice Posts a job and escrows `postCost(reward)` = reward + V * verifierFee + the
    ///         forced-error premium (`forcedErrorPremium`) into the Escrow (approve the Escrow). The
    ///         premium joins the jackpot pool when the job is first claimed and is refunded only if
    ///         the job is cancelled or expires before any claim.
    ///         The caller must be the model's owner or an authorised poster at the ShareRegistry.
    ///         The job can be claimed until now + openWindow. Reverts TotalStepsAboveMax,
    ///         SegmentsAboveMax or SegmentStepsAboveMax when it asks more than the protocol bounds.
    /// @param modelId Model id (keccak256 of the model name), registered at the ShareRegistry.
    /// @param specHash keccak256 of the canonical spec JSON.
    /// @param initHash State hash of the spec's seed-initialised state (step 0).
    /// @param totalSteps N (steps), > 0, <= maxTotalSteps.
    /// @param checkpointInterval k (steps), > 0, N % k == 0, k <= maxSegmentSteps, N / k <= maxSegments.
    /// @param reward Reward for the solver (wei).
    /// @param specURI URI of the spec.
    /// @return jobId New job id (ids start at 1).
    function postJob(
        bytes32 modelId,
        bytes32 specHash,
        bytes32 initHash,
        uint32 totalSteps,
        uint32 checkpointInterval,
        uint256 reward,
        string calldata specURI
    ) external returns (uint256 jobId);

    /// @notice Posts a DiLoCo run contribution for `poster` (the ShareRegistry's run minter only,
    ///         i.e. the RunRegistry's `postContribution`): exactly `postJob` with `poster` as the
    ///         job's submitter and the payer of its escrow (it approves the Escrow), except that the
    ///         ShareRegistry records the job as a contribution: it never takes a head slot and mints
    ///         nothing at finalize (docs/SECURITY.md P-29).
    /// @param poster The model's owner or an authorised poster (checked as in `postJob`).
    /// @param modelId Model id.
    /// @param specHash The contribution's spec hash (RunRegistry.contributionSpecHash).
    /// @param initHash Start state.
    /// @param totalSteps N (the run's innerSteps).
    /// @param checkpointInterval k.
    /// @param reward Reward for the solver (wei).
    /// @param specURI URI of the spec.
    /// @return jobId New job id.
    function postContribution(
        address poster,
        bytes32 modelId,
        bytes32 specHash,
        bytes32 initHash,
        uint32 totalSteps,
        uint32 checkpointInterval,
        uint256 reward,
        string calldata specURI
    ) external returns (uint256 jobId);

    /// @notice Cancels an Open job (submitter only); the escrow is credited back.
    /// @param jobId Job.
    function cancelJob(uint256 jobId) external;

    /// @notice Expires an Open job past its open deadline; the escrow is credited back to the
    ///         submitter. Callable by anyone.
    /// @param jobId Job.
    function expireJob(uint256 jobId) external;

    /// @notice Claims an Open job by its open deadline: the caller must be an active solver with
    ///         free stake >= solverStake, which is locked.
    /// @param jobId Job.
    function claimJob(uint256 jobId) external;

    /// @notice Commits the checkpoint Merkle root and the forced-error secret (solver only, before the
    ///         commit deadline); forwards the secret commitment to `IVerificationRound.onCommit`.
    /// @param jobId Job.
    /// @param merkleRoot Root of the checkpoint tree (PROTOCOL.md 2.3), non-zero.
    /// @param initProof Merkle proof (siblings, bottom-up, exactly the tree depth) that checkpoint 0,
    ///        at position 0 of the positional tree, is the job's initHash (LibCheckpoint.verify);
    ///        the root then takes initHash's word (`Job.root`).
    /// @param checkpointURL Base URL of the solver's checkpoint API.
    /// @param secretCommitment keccak256(abi.encode(jobId, solver, secret)), non-zero.
    function commitCheckpoints(
        uint256 jobId,
        bytes32 merkleRoot,
        bytes32[] calldata initProof,
        string calldata checkpointURL,
        bytes32 secretCommitment
    ) external;

    /// @notice After a missed commit deadline, slashes the solver's stake into the jackpot pool and
    ///         reopens the job for another openWindow. Callable by anyone.
    /// @param jobId Job.
    function reclaimExpired(uint256 jobId) external;

    /// @notice Expires a Committed job that seated no verifiers by its assign deadline
    ///         (`commitDeadline` + openWindow; a reassignment sets `commitDeadline` to its own time),
    ///         e.g. because too few verifiers are eligible (docs/SECURITY.md P-35). Disputed samples of
    ///         seats kept from an earlier draw are adjudicated first (the job goes Disputed, then
    ///         expires at a later `finalize`); else it expires at once: reward and held fees back to
    ///         the submitter, kept seats paid their fee, bonds returned, the solver unlocked.
    ///         Callable by anyone. Reverts AssignDeadlineNotPassed before the deadline.
    /// @param jobId Job.
    function expireUnassigned(uint256 jobId) external;

    /// @notice Draws the verifiers, then each verifier's own q segments (seeded by the round's
    ///         randomness and the verifier, docs/SECURITY.md P-27), once the randomness block is mined;
    ///         the sample is the union of those draws in increasing segment order. The solver must
    ///         post its claims on every sample within claimsWindow, the verifiers seal by
    ///         claimsDeadline + verdictWindow. Verifiers are drawn among the staked ones other than
    ///         the submitter, the solver and every verifier seated on the submission before
    ///         (docs/SECURITY.md P-42). On a reassignment the
    ///         segments, the claims and the seats that revealed are kept; as many new verifiers as
    ///         seats went silent each draw q of the samples no revealed verdict covers (an uncovered
    ///         sample no new draw holds goes to the new seats in turn, so every sample has a
    ///         verifier) and seal within verdictWindow. Callable by anyone. If the block hash has expired (> 256 blocks), re-anchors to the
    ///         next block instead and returns without assigning.
    /// @param jobId Job.
    function assignVerifiers(uint256 jobId) external;

    /// @notice Records revealed verdicts of one or more seats, one verdict per sampled segment each
    ///         (verification round only, which enforces the windows; every seat of one reveal call
    ///         in one call); only those on a seat's own samples count (the others are ignored:
    ///         Verdict.None, P-27); locks `challengeBond` per reject from each seat's free verifier
    ///         stake, all seats' bonds in one StakeManager call after every record (reverts the
    ///         StakeManager's InsufficientFreeStake when a seat is short, recording none). When
    ///         every assigned verifier has verdicts, the challenge deadline becomes now +
    ///         challengeWindow. Reverts NotAssignedVerifier, VerdictsAlreadySubmitted (a seat
    ///         named twice included) and VerdictCountMismatch per seat.
    /// @param submissionId Submission (the job's active one).
    /// @param seats Each seat's verdicts (`SeatVerdicts`: the seat, its approve and abstain masks,
    ///        bit i = sample i, and its end tag); a bit at or above the sample count reverts
    ///        VerdictCountMismatch(jobId, samples, the mask's bit length).
    /// @return allRevealed True if every seat of the current draw has now revealed (none voided):
    ///         every sample is then covered, since every sample is in some seat's own draw (P-27).
    function recordVerdicts(SubmissionId submissionId, SeatVerdicts[] calldata seats)
        external
        returns (bool allRevealed);

    /// @notice Voids the verdicts of a seat the verification round proved to have signed two seals
    ///         for the submission (verification round only, `IVerificationRound.proveEquivocation`),
    ///         while the job is Verifying with that submission and by its challenge deadline (before
    ///         the secret can be revealed). The seat must have revealed (status Submitted). It is
    ///         slashed one verifierStake into the jackpot pool (never to the prover, which may be
    ///         the seat's own second key), its reject bonds go to the pool, the bond of each
    ///         whistleblower challenge of its approvals is returned, and its verdicts are cleared:
    ///         it is never a challenger, a winner of a pot or jackpot, nor a witness that a sample
    ///         was replayed, and never paid or unlocked. Its fee stays held: it pays the seat drawn
    ///         again for a sample no other revealed verdict covers (the round drops such a sample
    ///         from its coverage, docs/SECURITY.md P-27), or goes back to the submitter.
    /// @dev Reverts NotVerificationRound, SubmissionNotActive, UnexpectedJobStatus,
    ///      ChallengeWindowClosed, SeatNotSlashable.
    /// @param submissionId Submission (the job's active one).
    /// @param verifier The equivocating seat.
    function slashEquivocation(SubmissionId submissionId, address verifier) external;

    /// @notice Challenges `verifier`'s approval of sample `sampleIndex` (active whistleblower, before
    ///         the challenge deadline); pays `challengeBond` into the Escrow (approve the Escrow).
    /// @param jobId Job.
    /// @param sampleIndex Sample index in [0, samples).
    /// @param verifier Verifier whose approval is challenged.
    function challengeApproval(uint256 jobId, uint256 sampleIndex, address verifier) external;

    /// @notice Moves a job past its challenge deadline (and its round's secret reveal) or resolved
    ///         dispute: settles the round outcome (docs/FORCED_ERRORS.md section 3), slashes missed
    ///         verdicts (into the jackpot pool), opens a dispute on the first disputed segment that
    ///         still has a challenger (a disputed segment without one leaves the set,
    ///         `SampleUndisputed`), or finalizes. When some sample
    ///         has no revealed verdict (RoundOutcome.NoVerdicts, P-27) nothing is paid or minted yet:
    ///         the silent verifiers are slashed and fresh ones drawn for the uncovered samples, next
    ///         to the seats that revealed (the job goes back to Committed), at most
    ///         maxReassignments times, after which the job expires (open bonds returned, the seats
    ///         that revealed paid their fee, refund; solver unlocked), once every disputed sample
    ///         was adjudicated: a revealed reject is never forgiven (docs/SECURITY.md P-34).
    ///         Callable by anyone.
    /// @param jobId Job.
    function finalize(uint256 jobId) external;

    /// @notice Applies an adjudicator's outcome (adjudicator only). See PROTOCOL.md 3.3.
    /// @param disputeId Dispute.
    /// @param segmentValid Whether the disputed segment was found valid.
    /// @param majority Arbiters that voted with the outcome (paid arbiterFee while the pot lasts).
    /// @param nonVoters Arbiters that did not reveal (each slashed verifierStake).
    function onDisputeResolved(
        uint256 disputeId,
        bool segmentValid,
        address[] calldata majority,
        address[] calldata nonVoters
    ) external;

    ////// Views //////

    /// @notice The fields of a job the verification round reads, without the rest of the struct
    ///         (cheaper than `getJob` for a cross-contract call).
    /// @param jobId Job.
    /// @return job Solver, status, checkpoint root, shape and the three round deadlines.
    function roundJobOf(uint256 jobId) external view returns (RoundJob memory job);

    /// @notice A job.
    /// @param jobId Job.
    /// @return job The job (all-zero if it does not exist).
    function getJob(uint256 jobId) external view returns (Job memory job);

    /// @notice The job's active submission: jobId << 160 | solver of its current
    ///         solver (zero while no solver holds it).
    /// @param jobId Job.
    /// @return submissionId Submission.
    function submissionOf(uint256 jobId) external view returns (SubmissionId submissionId);

    /// @notice The job's lifecycle status: one storage word read, for a caller that needs nothing
    ///         else (the RunRegistry's round proposal checks each seat's job with it).
    /// @param jobId Job.
    /// @return status Its status (None for a job never posted).
    function statusOf(uint256 jobId) external view returns (JobStatus status);

    /// @notice Job and solver a submission id names, read from the id itself (`LibSubmission`):
    ///         also for an id whose solver never held the job (`submissionOf` tells the active one).
    /// @param submissionId Submission.
    /// @return jobId Job.
    /// @return solver Solver.
    function getSubmission(SubmissionId submissionId) external view returns (uint256 jobId, address solver);

    /// @notice Assigned verifiers and sampled segments of the job's active submission (empty before
    ///         assignment).
    /// @param jobId Job.
    /// @return verifiers Assigned verifiers.
    /// @return segments Sampled segment indices, in sample order.
    function getAssignment(uint256 jobId) external view returns (address[] memory verifiers, uint32[] memory segments);

    /// @notice The parties of a job that a dispute's committee must respect: the submitter and the
    ///         solver never judge it, its assigned verifiers sit only as a reserve. Reads three
    ///         words plus the verifier list instead of the whole `Job` and the sample.
    /// @param jobId Job.
    /// @return submitter The job's submitter.
    /// @return solver The job's solver (zero before a claim).
    /// @return verifiers Verifiers assigned to the job's active submission (empty before assignment).
    function partiesOf(uint256 jobId)
        external
        view
        returns (address submitter, address solver, address[] memory verifiers);

    /// @notice Samples `verifier` must verify on the job's active submission: bit i set = sample i
    ///         (of `getAssignment`'s segments) is in its own draw (docs/SECURITY.md P-27). Its sealed
    ///         ends on other samples are ignored. Zero if it is not assigned.
    /// @param jobId Job.
    /// @param verifier Verifier.
    /// @return mask Sample bitmap.
    function sampleMaskOf(uint256 jobId, address verifier) external view returns (uint256 mask);

    /// @notice The sampled segments of the job's active submission, in sample order (empty before
    ///         assignment): `getAssignment`'s second value without copying the verifier list.
    /// @param jobId Job.
    /// @return segments Segment index of each sample.
    function segmentsOf(uint256 jobId) external view returns (uint32[] memory segments);

    /// @notice A verifier's seat in one submission and the size of its current draw, in one call:
    ///         all the VerificationRound reads to take a seal or a reveal.
    /// @param submissionId Submission.
    /// @param verifier Verifier.
    /// @return assigned True iff `verifier` is one of the submission's current verifiers (its seat
    ///         is Assigned or Submitted: a draw seats new verifiers as Assigned, a reassignment keeps
    ///         exactly the Submitted seats and marks the silent ones Missed). Once the job has ended
    ///         it stays what it was at the end: a seat that stood to the end is still assigned (the
    ///         job's status says it was released).
    /// @return sampleMask Bit i set = sample i is in the seat's own draw (zero if no seat).
    /// @return revealed True once the seat's verdicts were recorded (never cleared).
    /// @return seats Number of current verifiers.
    /// @return samples Number of sampled segments.
    function seatOf(SubmissionId submissionId, address verifier)
        external
        view
        returns (bool assigned, uint64 sampleMask, bool revealed, uint256 seats, uint256 samples);

    /// @notice A submission's reveal windows in seconds (all zero unless it is its job's and its
    ///         verifiers are assigned): verdict reveals open at `verdictRevealOpens` (or earlier,
    ///         once every verifier sealed) and close at `verdictRevealCloses`; the secret reveal runs
    ///         (`secretRevealOpens`, `secretRevealCloses`]. The VerificationRound enforces them with
    ///         the same deadlines and `revealWindow`.
    /// @param submissionId Submission.
    /// @return verdictRevealOpens verdictDeadline + 1.
    /// @return verdictRevealCloses verdictDeadline + revealWindow.
    /// @return secretRevealOpens challengeDeadline.
    /// @return secretRevealCloses challengeDeadline + revealWindow.
    function windowsOf(SubmissionId submissionId)
        external
        view
        returns (
            uint64 verdictRevealOpens,
            uint64 verdictRevealCloses,
            uint64 secretRevealOpens,
            uint64 secretRevealCloses
        );

    /// @notice The tag a seat's reveal recorded (`recordVerdicts`): the VerificationRound's 40-bit
    ///         tag of the end it revealed for its first rejected sample of its own draw, zero if it
    ///         rejected none or has not revealed.
    /// @param submissionId Submission.
    /// @param verifier Verifier.
    /// @return endTag The tag, or zero.
    function endTagOf(SubmissionId submissionId, address verifier) external view returns (bytes5 endTag);

    /// @notice Verdicts of `verifier` per sampled segment: an array of Verdict.None (one per
    ///         sample) before it submitted, and an empty array if it is not assigned. Always
    ///         Verdict.None on samples outside its own draw (`sampleMaskOf`). Once the forced error
    ///         is settled, a seat that rejected the forced claim with the solver's true end reads
    ///         Approve there (the approval of the true end it replayed).
    /// @param jobId Job.
    /// @param verifier Verifier.
    /// @return verdicts Verdicts in sample order.
    function verdictOf(uint256 jobId, address verifier) external view returns (Verdict[] memory verdicts);

    /// @notice Whistleblower that challenged `verifier`'s approval of sample `sampleIndex` (zero if none).
    /// @param jobId Job.
    /// @param sampleIndex Sample index.
    /// @param verifier Verifier.
    /// @return challenger Whistleblower.
    function challengerOf(uint256 jobId, uint256 sampleIndex, address verifier)
        external
        view
        returns (address challenger);

    /// @notice Forced-error premium every job pays into the jackpot pool: the most its jackpots
    ///         can pay in expectation, ceil(rateBps * V * jackpot / 10_000) (a forced error pays at
    ///         most one jackpot per seat of the job's one settled draw, so at most V). A coalition's
    ///         expected jackpot income from a job is then at most its share of the seats times what
    ///         it paid in (docs/FORCED_ERRORS.md section 5).
    /// @return premium Premium (wei).
    function forcedErrorPremium() external view returns (uint256 premium);

    /// @notice What `postJob(..., reward, ...)` takes from the caller: reward + V * verifierFee +
    ///         `forcedErrorPremium()` (the amount to approve the Escrow for).
    /// @param reward Reward for the solver (wei).
    /// @return cost Total escrowed (wei).
    function postCost(uint256 reward) external view returns (uint256 cost);

    /// @notice Number of jobs posted (the last job id).
    /// @return count Jobs.
    function jobCount() external view returns (uint256 count);

    /// @notice Protocol parameters.
    /// @return params Parameters.
    function params() external view returns (Params memory params);

    /// @notice `params().openWindow` alone: how long a posted or reopened job stays open, and the
    ///         lineage window of a finalized slot job (`IShareRegistry.extendLineage`), without
    ///         `params`' 18 words (what the ShareRegistry asks at every finalize).
    /// @return window Seconds.
    function openWindow() external view returns (uint64 window);

    /// @notice Whether `stateHash` is checkpoint `leafIndex` (step leafIndex * k) of the job's
    ///         committed tree, at its position (LibCheckpoint: one leaf per index).
    /// @param jobId Job.
    /// @param leafIndex Checkpoint index in [0, N/k] (false above).
    /// @param stateHash BLAKE3 state hash of the checkpoint bytes.
    /// @param proof Sibling hashes, bottom-up: exactly ceil(log2(N/k + 1)) of them (false otherwise).
    /// @return valid True if the proof verifies against the job's Merkle root (false before the
    ///         commit).
    function verifyCheckpoint(uint256 jobId, uint256 leafIndex, bytes32 stateHash, bytes32[] calldata proof)
        external
        view
        returns (bool valid);

    /// @notice Sample index currently or last under dispute (meaningful while Disputed).
    /// @param jobId Job.
    /// @return sampleIndex Sample index.
    function disputedSampleOf(uint256 jobId) external view returns (uint256 sampleIndex);

    /// @notice Bit i set = sample i is disputed (rejected or challenged) and not yet adjudicated.
    /// @param jobId Job.
    /// @return mask Disputed-sample bitmap.
    function disputedMaskOf(uint256 jobId) external view returns (uint256 mask);

    /// @notice Verification round, given at construction (an immutable, never zero).
    /// @return round Verification round.
    function verificationRound() external view returns (IVerificationRound round);

    /// @notice Escrow holding the rewards, fees, bonds, jackpot pool and credits of every job.
    /// @return escrow Escrow.
    function escrow() external view returns (IEscrow escrow);

    /// @notice StakeManager used for stakes.
    /// @return stakeManager StakeManager.
    function stakeManager() external view returns (IStakeManager stakeManager);

    /// @notice ShareRegistry minting ownership shares.
    /// @return shareRegistry ShareRegistry.
    function shareRegistry() external view returns (IShareRegistry shareRegistry);

    /// @notice Adjudicator of disputes (zero until set).
    /// @return adjudicator Adjudicator.
    function adjudicator() external view returns (IAdjudicator adjudicator);

    /// @notice Admin given at construction (sets the adjudicator and the verification round once)
    ///         and treasury of rounding dust from dispute pots.
    /// @return admin Admin.
    function admin() external view returns (address admin);
}
