// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Types
import {JobStatus, Verdict} from "../types/JobTypes.sol";
import {Role} from "../types/Role.sol";
import {SubmissionId} from "../types/SubmissionId.sol";

/// @title IJobManagerErrors
/// @notice The custom errors of `IJobManager` (which inherits them, so `IJobManager.X.selector`
///         names each as before).
interface IJobManagerErrors {
    /// @notice Thrown when a constructor parameter is out of range.
    /// @param name Parameter name.
    /// @param value Value received.
    error InvalidParam(string name, uint256 value);

    /// @notice Thrown when an address argument is zero.
    error ZeroAddress();

    /// @notice Thrown when an admin-only function is called by another account.
    /// @param caller msg.sender.
    error NotAdmin(address caller);

    /// @notice Thrown when `postContribution` is called by another account than the ShareRegistry's
    ///         run minter (the RunRegistry).
    /// @param caller msg.sender.
    error NotRunRegistry(address caller);

    /// @notice Thrown when `setAdjudicator` is called a second time.
    /// @param adjudicator The adjudicator already set.
    error AdjudicatorAlreadySet(address adjudicator);

    /// @notice Thrown when a dispute would be opened before an adjudicator was set.
    error AdjudicatorNotSet();

    /// @notice Thrown when `recordVerdicts` or `slashEquivocation` is not called by the verification
    ///         round.
    /// @param caller msg.sender.
    error NotVerificationRound(address caller);

    /// @notice Thrown when a submission is not the active one of its job (its solver was replaced, or
    ///         it never existed).
    /// @param submissionId Submission.
    error SubmissionNotActive(SubmissionId submissionId);

    /// @notice Thrown when finalizing a Verifying job whose round still has a window open.
    /// @param jobId Job.
    error RoundPending(uint256 jobId);

    /// @notice Thrown when a job's step counts are invalid (zero, or N not a multiple of k).
    /// @param totalSteps N (steps).
    /// @param checkpointInterval k (steps).
    error InvalidJobShape(uint32 totalSteps, uint32 checkpointInterval);

    /// @notice Thrown when a job asks for more steps than the `maxTotalSteps` bound.
    /// @param totalSteps N asked (steps).
    /// @param maxTotalSteps The bound (steps).
    error TotalStepsAboveMax(uint32 totalSteps, uint32 maxTotalSteps);

    /// @notice Thrown when a job has more segments than the `maxSegments` bound.
    /// @param segments N / k asked.
    /// @param maxSegments The bound.
    error SegmentsAboveMax(uint32 segments, uint32 maxSegments);

    /// @notice Thrown when a job's segments are longer than the `maxSegmentSteps` bound (a verifier
    ///         could not replay them within the verdict window).
    /// @param checkpointInterval k asked (steps).
    /// @param maxSegmentSteps The bound (steps).
    error SegmentStepsAboveMax(uint32 checkpointInterval, uint32 maxSegmentSteps);

    /// @notice Thrown when an Open job is claimed after its open deadline.
    /// @param jobId Job.
    /// @param deadline Open deadline (seconds).
    /// @param nowTs Current timestamp (seconds).
    error OpenDeadlinePassed(uint256 jobId, uint64 deadline, uint64 nowTs);

    /// @notice Thrown when an Open job is expired before its open deadline has passed.
    /// @param jobId Job.
    /// @param deadline Open deadline (seconds).
    /// @param nowTs Current timestamp (seconds).
    error OpenDeadlineNotPassed(uint256 jobId, uint64 deadline, uint64 nowTs);

    /// @notice Thrown when an action is not allowed in the job's current status.
    /// @param jobId Job.
    /// @param status Current status (JobStatus.None if the job does not exist).
    error UnexpectedJobStatus(uint256 jobId, JobStatus status);

    /// @notice Thrown when the caller is not the job's submitter.
    /// @param jobId Job.
    /// @param caller msg.sender.
    error NotSubmitter(uint256 jobId, address caller);

    /// @notice Thrown when the caller is not the job's solver.
    /// @param jobId Job.
    /// @param caller msg.sender.
    error NotSolver(uint256 jobId, address caller);

    /// @notice Thrown when an account lacks an active stake in the role the action requires.
    /// @param account Account.
    /// @param role Role required.
    error NotActiveStaker(address account, Role role);

    /// @notice Thrown when committing after the commit deadline.
    /// @param jobId Job.
    /// @param deadline Commit deadline (seconds).
    /// @param nowTs Current block timestamp (seconds).
    error CommitDeadlinePassed(uint256 jobId, uint64 deadline, uint64 nowTs);

    /// @notice Thrown when reclaiming a job whose commit deadline has not passed.
    /// @param jobId Job.
    /// @param deadline Commit deadline (seconds).
    /// @param nowTs Current block timestamp (seconds).
    error CommitDeadlineNotPassed(uint256 jobId, uint64 deadline, uint64 nowTs);

    /// @notice Thrown when committing a zero Merkle root.
    /// @param jobId Job.
    error ZeroMerkleRoot(uint256 jobId);

    /// @notice Thrown when the committed tree's proof does not show leaf 0 = (step 0, the job's initHash):
    ///         the solver did not start from the spec's seed-initialised state.
    /// @param jobId Job.
    /// @param merkleRoot Root committed.
    /// @param initHash State hash leaf 0 must commit to.
    error InitialStateNotCommitted(uint256 jobId, bytes32 merkleRoot, bytes32 initHash);

    /// @notice Thrown when the caller of `postJob` is neither the model's owner nor an authorised
    ///         poster at the ShareRegistry (or the model is unregistered).
    /// @param modelId Model id.
    /// @param caller msg.sender.
    error NotModelPoster(bytes32 modelId, address caller);

    /// @notice Thrown when the randomness block has not been mined yet.
    /// @param jobId Job.
    /// @param randomnessBlock Block whose hash is needed.
    /// @param blockNumber Current block number.
    error RandomnessNotReady(uint256 jobId, uint64 randomnessBlock, uint256 blockNumber);

    /// @notice Thrown when no active verifier is eligible for a job.
    /// @param jobId Job.
    /// @param candidates Active verifiers considered.
    error NoEligibleVerifiers(uint256 jobId, uint256 candidates);

    /// @notice Thrown when the caller is not a verifier assigned to the job.
    /// @param jobId Job.
    /// @param account Caller or named verifier.
    error NotAssignedVerifier(uint256 jobId, address account);

    /// @notice Thrown when a verifier submits verdicts twice.
    /// @param jobId Job.
    /// @param verifier Verifier.
    error VerdictsAlreadySubmitted(uint256 jobId, address verifier);

    /// @notice Thrown when the number of verdicts differs from the number of sampled segments.
    /// @param jobId Job.
    /// @param expected Number of sampled segments.
    /// @param actual Number of verdicts given.
    error VerdictCountMismatch(uint256 jobId, uint256 expected, uint256 actual);

    /// @notice Thrown when an equivocation proof names a seat whose verdicts cannot be voided: it
    ///         has not revealed (it reveals and can then be proven, or is slashed as missed), or it
    ///         was slashed or released already (a seat is slashed once).
    /// @param jobId Job.
    /// @param verifier Verifier.
    error SeatNotSlashable(uint256 jobId, address verifier);

    /// @notice Thrown when a challenge arrives after the challenge deadline.
    /// @param jobId Job.
    /// @param deadline Challenge deadline (seconds).
    /// @param nowTs Current block timestamp (seconds).
    error ChallengeWindowClosed(uint256 jobId, uint64 deadline, uint64 nowTs);

    /// @notice Thrown when finalizing before the challenge deadline has passed.
    /// @param jobId Job.
    /// @param deadline Challenge deadline (seconds).
    /// @param nowTs Current block timestamp (seconds).
    error ChallengeWindowOpen(uint256 jobId, uint64 deadline, uint64 nowTs);

    /// @notice Thrown when a sample index is past the sampled segments.
    /// @param jobId Job.
    /// @param sampleIndex Index given.
    /// @param samples Number of sampled segments.
    error SampleIndexOutOfRange(uint256 jobId, uint256 sampleIndex, uint256 samples);

    /// @notice Thrown when challenging a verdict that is not an approval.
    /// @param jobId Job.
    /// @param sampleIndex Sample index.
    /// @param verifier Verifier.
    /// @param verdict The verdict found.
    error VerdictNotApproval(uint256 jobId, uint256 sampleIndex, address verifier, Verdict verdict);

    /// @notice Thrown when an approval was already challenged.
    /// @param jobId Job.
    /// @param sampleIndex Sample index.
    /// @param verifier Verifier.
    /// @param challenger First challenger.
    error ApprovalAlreadyChallenged(uint256 jobId, uint256 sampleIndex, address verifier, address challenger);

    /// @notice Thrown when the job's solver, or the verifier itself, challenges an approval.
    /// @param jobId Job.
    /// @param challenger Caller.
    error ChallengerConflicted(uint256 jobId, address challenger);

    /// @notice Thrown when finalizing a Disputed job whose dispute is not resolved yet.
    /// @param jobId Job.
    /// @param disputeId Pending dispute.
    error DisputePending(uint256 jobId, uint256 disputeId);

    /// @notice Thrown when a Committed job is expired before its assign deadline (`commitDeadline`
    ///         + openWindow).
    /// @param jobId Job.
    /// @param deadline Assign deadline (seconds).
    /// @param nowTs block.timestamp.
    error AssignDeadlineNotPassed(uint256 jobId, uint64 deadline, uint64 nowTs);

    /// @notice Thrown when `onDisputeResolved` is not called by the adjudicator.
    /// @param caller msg.sender.
    error NotAdjudicator(address caller);

    /// @notice Thrown when `onDisputeResolved` names a dispute that is not pending.
    /// @param disputeId Dispute.
    error UnknownDispute(uint256 disputeId);
}
