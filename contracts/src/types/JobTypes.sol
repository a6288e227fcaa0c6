// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Types
import {PostKind} from "./LineageTypes.sol";

/// @notice Lifecycle of a training job (ABI: uint8).
/// @dev None -> Open -> Claimed -> Committed -> Verifying -> (Disputed ->)* Finalized | Rejected;
///      Open -> Cancelled (by the submitter); Open -> Expired (nobody claimed it by its open deadline);
///      Claimed -> Open when the commit deadline is missed; Verifying -> Committed when no verifier
///      revealed a verdict (verifiers are drawn again, at most `maxReassignments` times), then
///      Verifying (-> Disputed)* -> Expired (its disputed samples judged first: a revealed reject is
///      never forgiven; refunded, nothing paid, nobody at fault unless judged); Committed -> Expired
///      (or Disputed first) when no verifier was seated by the assign deadline (`expireUnassigned`).
enum JobStatus {
    None,
    Open,
    Claimed,
    Committed,
    Verifying,
    Disputed,
    Finalized,
    Rejected,
    Cancelled,
    Expired
}

/// @notice A verifier's verdict on one sampled segment (ABI: uint8). `Abstain`: the verifier sealed a
///         zero end, it could not obtain the segment's data (docs/SECURITY.md P-20); the sample is
///         disputed as by a rejection, but the abstainer is never slashed and never paid for it;
///         its bond goes to the pool when the data was there (another seat replayed the sample, or
///         the adjudicator found it valid, docs/SECURITY.md P-33).
enum Verdict {
    None,
    Approve,
    Reject,
    Abstain
}

/// @notice Protocol parameters of a JobManager, fixed at construction.
/// @param solverStake Stake locked from the solver per claimed job (wei).
/// @param verifierStake Stake locked per verifier assignment and per arbiter seat (wei).
/// @param challengeBond Bond posted per reject verdict and per whistleblower challenge (wei).
/// @param verifierFee Fee per assigned verifier, escrowed by the submitter on top of the reward (wei).
/// @param arbiterFee Fee per majority arbiter, paid from the dispute pot while it lasts (wei).
/// @param jackpot Paid from the jackpot pool per rejecter of a forced error and per whistleblower that
///        challenged an approval of one, at most the pool (wei; docs/FORCED_ERRORS.md).
/// @param verifiersPerJob V: verifiers drawn per job (at most 32).
/// @param samplesPerJob q: segments sampled per job (at most 64).
/// @param commitWindow Time a solver has after claiming to commit its checkpoints (seconds).
/// @param verdictWindow Time verifiers have to seal verdicts, counted from the solver's claims
///        deadline, so at least this long after the claims land (seconds).
/// @param revealWindow Length of the verdict reveal and of the secret reveal (seconds), > 0.
/// @param challengeWindow Time whistleblowers have to challenge approvals (seconds).
/// @param claimsWindow Time the solver has after assignment to post its claims (seconds), > 0.
/// @param openWindow Time an Open job waits for a solver before anyone may expire it (seconds), > 0.
/// @param maxTotalSteps Most steps N a job may ask for (steps), > 0.
/// @param maxSegments Most segments N / k a job may have (Merkle leaves - 1), > 0.
/// @param maxSegmentSteps Most steps k per segment: a verifier must replay its sampled segments
///        within `verdictWindow` (steps), > 0.
/// @param maxReassignments Times a job whose verifiers all stayed silent is given fresh verifiers
///        before it is refunded.
struct Params {
    uint256 solverStake;
    uint256 verifierStake;
    uint256 challengeBond;
    uint256 verifierFee;
    uint256 arbiterFee;
    uint256 jackpot;
    uint32 verifiersPerJob;
    uint32 samplesPerJob;
    uint64 commitWindow;
    uint64 verdictWindow;
    uint64 revealWindow;
    uint64 challengeWindow;
    uint64 claimsWindow;
    uint64 openWindow;
    uint32 maxTotalSteps;
    uint32 maxSegments;
    uint32 maxSegmentSteps;
    uint32 maxReassignments;
}

/// @notice A training job as returned by `JobManager.getJob`.
/// @param submitter Account that posted and funded the job.
/// @param solver Account that claimed the job (zero while Open).
/// @param modelId keccak256 of the model name (utf-8).
/// @param root The job's state commitment, one word for two roots: until the checkpoints are
///        committed, initHash, the state hash of the spec's seed-initialised state (step 0); from
///        the commit on, the root of the checkpoint Merkle tree (PROTOCOL.md 2.3), whose leaf 0 the
///        commit proved is (0, initHash), so initHash stays bound to the job (and is in its
///        `JobPosted` event). No contract reads initHash after the commit: segment 0's start is
///        proven at index 0 of the tree like any other checkpoint (docs/SECURITY.md, "Gas cuts").
/// @param totalSteps N: optimizer steps to train (steps).
/// @param checkpointInterval k: steps between checkpoints; N % k == 0 (steps).
/// @param reward Reward paid to the solver on finalization (wei), < 2**96.
/// @param status Current lifecycle status.
/// @param kind What the job is to its model's shares (`PostKind`), fixed at post by the
///        ShareRegistry (`recordPost`) and handed back to it at finalization (`recordFinalized`).
/// @param committed Whether `root` is the checkpoint root (set by the commit, never cleared: only a
///        Claimed job goes back to Open).
/// @param commitDeadline Last timestamp at which the solver may commit (seconds).
/// @param randomnessBlock Block whose hash seeds the verifier/segment draw.
/// @param verdictDeadline Last timestamp at which assigned verifiers may seal verdicts:
///        claimsDeadline + verdictWindow (seconds).
/// @param challengeDeadline Last timestamp at which approvals may be challenged (seconds).
/// @param openDeadline Last timestamp at which an Open job may be claimed (seconds).
/// @param claimsDeadline Last timestamp at which the solver may post its claims (seconds).
/// @param premiumBps Forced-error rate (bps) the submitter's premium was escrowed at, while the job
///        still holds it (0 once a claim pooled it or the job was closed): the premium is
///        ceil(premiumBps * V * jackpot / 10_000) wei, so the word of the deadlines carries it.
/// @param disputeId Adjudicator dispute id of the latest dispute (0 if none).
/// @dev The view of a `JobRecord`, the stored form (`JobManager.getJob` resolves its model index to
///      the model id and widens its times): the ABI every client decodes is unchanged.
struct Job {
    address submitter;
    uint96 reward;
    address solver;
    uint32 totalSteps;
    uint32 checkpointInterval;
    JobStatus status;
    PostKind kind;
    bool committed;
    bytes32 modelId;
    bytes32 root;
    uint40 openDeadline;
    uint40 commitDeadline;
    uint40 randomnessBlock;
    uint40 verdictDeadline;
    uint40 claimsDeadline;
    uint40 challengeDeadline;
    uint16 premiumBps;
    uint256 disputeId;
}

/// @notice A training job as the JobManager stores it: a `Job` whose model is the ShareRegistry's
///         index of the model (`modelAt`) instead of its 32-byte id.
/// @dev Packed into 4 storage words written on the happy path (was 11) and one more for disputes:
///      [submitter, reward], [solver, totalSteps, checkpointInterval, status, kind, committed],
///      root, [the six times, the premium rate and the model index], disputeId. `postJob` writes 4
///      words, every later deadline lands in the word `postJob` created, and the commit rewrites
///      the root's word instead of creating one. The model id takes no word of its own: the
///      ShareRegistry lists every model once, and the job keeps its 32-bit index in the times'
///      word (docs/SECURITY.md, "Gas cuts"). The spec hash (keccak256 of the canonical JSON job
///      spec) is in the `JobPosted` event only: no contract reads it, and the ShareRegistry keeps
///      the training key it is part of (P-26). The solver stays the low 20 bytes of word 1 (tests
///      read it with vm.load). The post kind rides in that word too: the ShareRegistry keeps no
///      word per job for it. reward < 2**96 wei, times (seconds) and blocks < 2**32 (year 2106,
///      and 1,600 years of 12-second blocks): writes go through SafeCast, which reverts above.
struct JobRecord {
    address submitter;
    uint96 reward;
    address solver;
    uint32 totalSteps;
    uint32 checkpointInterval;
    JobStatus status;
    PostKind kind;
    bool committed;
    bytes32 root;
    uint32 openDeadline;
    uint32 commitDeadline;
    uint32 randomnessBlock;
    uint32 verdictDeadline;
    uint32 claimsDeadline;
    uint32 challengeDeadline;
    uint16 premiumBps;
    uint32 modelIndex;
    uint256 disputeId;
}

/// @notice The fields of a job the verification round reads (`JobManager.roundJobOf`): 4 storage
///         words instead of the whole `Job`'s 6, read on every verdict, claim and reveal.
/// @param solver Account that claimed the job.
/// @param status Current lifecycle status.
/// @param merkleRoot Root of the checkpoint tree (the job's `root` once `committed`, zero before).
/// @param totalSteps N (steps).
/// @param checkpointInterval k (steps).
/// @param claimsDeadline Last timestamp for the solver's claims (seconds).
/// @param verdictDeadline Last timestamp to seal verdicts (seconds).
/// @param challengeDeadline Last timestamp to challenge approvals (seconds).
struct RoundJob {
    address solver;
    JobStatus status;
    bytes32 merkleRoot;
    uint32 totalSteps;
    uint32 checkpointInterval;
    uint64 claimsDeadline;
    uint64 verdictDeadline;
    uint64 challengeDeadline;
}

/// @notice A post's arguments (`JobManager.postJob`, `JobManager.postContribution`): the job's
///         submitter and escrow payer, its fields and whether it is a run contribution.
/// @param poster Submitter of the job, who pays its escrow.
/// @param modelId Model the job trains.
/// @param specHash keccak256 of the canonical spec JSON.
/// @param initHash State hash of step 0.
/// @param totalSteps N (steps).
/// @param checkpointInterval k (steps).
/// @param reward Solver reward (wei).
/// @param contribution True for a run contribution (posted through the RunRegistry).
struct PostArgs {
    address poster;
    bytes32 modelId;
    bytes32 specHash;
    bytes32 initHash;
    uint32 totalSteps;
    uint32 checkpointInterval;
    uint256 reward;
    bool contribution;
}
