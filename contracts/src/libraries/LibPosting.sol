// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Libraries
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {LibPayouts} from "./LibPayouts.sol";
// Interfaces
import {IEscrow} from "../interfaces/IEscrow.sol";
import {IJobManager} from "../interfaces/IJobManager.sol";
import {IJobManagerErrors} from "../interfaces/IJobManagerErrors.sol";
import {IShareRegistry} from "../interfaces/IShareRegistry.sol";
// Types
import {Bucket} from "../types/EscrowTypes.sol";
import {Job, JobRecord, JobStatus, PostArgs} from "../types/JobTypes.sol";
import {Settlement} from "../types/SubmissionTypes.sol";

/// @title LibPosting
/// @notice How the JobManager puts a job on the open market (PROTOCOL.md 3.3): the checks and the
///         record of a post, its forced-error premium (escrowed at the post, pooled at the first
///         claim: docs/FORCED_ERRORS.md section 5) and the refund of an Open job cancelled by its
///         submitter or expired unclaimed. Every token moves as a bucket move or a credit at the
///         Escrow: the premium joins the jackpot pool, a closed job's whole escrow is credited back
///         to its submitter. The slash of a solver that abandons its claim is settlement
///         (`LibSettlement.reopen`).
/// @dev An external library (DELEGATECALL) like LibSettlement and LibAssignment: it runs in the
///      JobManager's context and storage, emits the JobManager's events and keeps it under the
///      contract size limit. A job's posting and claim call only this library, its settlement only
///      LibSettlement. `premiumAt` is internal: compiled into its callers (`closeOpen` here; the
///      JobManager's post, claim and price views). Linked at deployment (contracts/script/Deploy.sol).
library LibPosting {
    ////// External //////

    /// @notice Reverts unless the job's shape is valid (N, k > 0 and N % k == 0, else
    ///         InvalidJobShape), `poster` may post jobs under `modelId` (its owner or an authorised
    ///         poster at `registry`, else NotModelPoster), and the shape is within the protocol
    ///         bounds: N <= maxTotalSteps (TotalStepsAboveMax), k <= maxSegmentSteps
    ///         (SegmentStepsAboveMax), N / k <= maxSegments (SegmentsAboveMax). Checked in this order.
    function checkPost(
        IShareRegistry registry,
        bytes32 modelId,
        address poster,
        uint32 totalSteps,
        uint32 checkpointInterval,
        uint32 maxTotalSteps,
        uint32 maxSegments,
        uint32 maxSegmentSteps
    ) external view {
        if (totalSteps == 0 || checkpointInterval == 0 || totalSteps % checkpointInterval != 0) {
            revert IJobManagerErrors.InvalidJobShape(totalSteps, checkpointInterval);
        }
        // SAFETY: trusted ShareRegistry view; only the model's owner and its posters mint its shares.
        if (!registry.canPost(modelId, poster)) revert IJobManagerErrors.NotModelPoster(modelId, poster);
        if (totalSteps > maxTotalSteps) revert IJobManagerErrors.TotalStepsAboveMax(totalSteps, maxTotalSteps);
        if (checkpointInterval > maxSegmentSteps) {
            revert IJobManagerErrors.SegmentStepsAboveMax(checkpointInterval, maxSegmentSteps);
        }
        if (totalSteps / checkpointInterval > maxSegments) {
            revert IJobManagerErrors.SegmentsAboveMax(totalSteps / checkpointInterval, maxSegments);
        }
    }

    /// @notice Records the post at the `registry` and writes the new job `jobId` of post `p` as
    ///         Open (its open deadline `openWindow` seconds from now, the forced-error rate
    ///         `rateBps` its premium was escrowed at, the kind the registry gave it) and emits
    ///         JobPosted with the `escrowed` amount (wei). Reverts SafeCastOverflowedUintDowncast
    ///         for a reward of 2**96 wei or more, and what `IShareRegistry.recordPost` reverts:
    ///         TrainingAlreadyPosted on a twin of a live or paid job (P-26),
    ///         SegmentComputeAboveMax on a segment too costly to replay (P-19).
    function openJob(
        JobRecord storage job,
        IShareRegistry registry,
        PostArgs memory p,
        uint256 jobId,
        uint256 escrowed,
        uint256 rateBps,
        uint256 openWindow,
        string calldata specURI
    ) external {
        // SAFETY: trusted ShareRegistry, called before the job is written: it fixes whether the
        // job is its head's lineage job, paid only or a contribution (P-18, P-29), a kind the job
        // keeps in the word its status is in (no word of the registry's own).
        // The registry's index of the model takes the modelId's word (no word of the job's own).
        (job.kind, job.modelIndex) =
            registry.recordPost(p.modelId, jobId, p.specHash, p.initHash, p.checkpointInterval, p.contribution);
        job.submitter = p.poster;
        job.root = p.initHash;
        job.totalSteps = p.totalSteps;
        job.checkpointInterval = p.checkpointInterval;
        // The Job packs the reward into 96 bits (reverts SafeCastOverflowedUintDowncast above).
        job.reward = SafeCast.toUint96(p.reward);
        job.status = JobStatus.Open;
        job.openDeadline = SafeCast.toUint32(block.timestamp + openWindow);
        // SAFETY: a rate is at most 10_000 bps (VerificationRound), below 2^16.
        // forge-lint: disable-next-line(unsafe-typecast)
        job.premiumBps = uint16(rateBps);
        emit IJobManager.JobPosted(
            jobId,
            p.poster,
            p.modelId,
            p.specHash,
            p.initHash,
            p.totalSteps,
            p.checkpointInterval,
            p.reward,
            escrowed,
            specURI
        );
    }

    /// @notice The `Job` view of a stored `job`: its model index resolved to the model id at the
    ///         `registry` (`modelAt`), its 32-bit times widened. A job never posted (status None)
    ///         reads as all zeros.
    /// @return view_ The job as `JobManager.getJob` returns it.
    function jobView(JobRecord storage job, IShareRegistry registry) external view returns (Job memory view_) {
        JobRecord memory stored = job;
        if (stored.status == JobStatus.None) return view_;
        view_ = Job({
            submitter: stored.submitter,
            reward: stored.reward,
            solver: stored.solver,
            totalSteps: stored.totalSteps,
            checkpointInterval: stored.checkpointInterval,
            status: stored.status,
            kind: stored.kind,
            committed: stored.committed,
            // SAFETY: trusted ShareRegistry view; the index was listed for this job's model.
            modelId: registry.modelAt(stored.modelIndex),
            root: stored.root,
            openDeadline: stored.openDeadline,
            commitDeadline: stored.commitDeadline,
            randomnessBlock: stored.randomnessBlock,
            verdictDeadline: stored.verdictDeadline,
            claimsDeadline: stored.claimsDeadline,
            challengeDeadline: stored.challengeDeadline,
            premiumBps: stored.premiumBps,
            disputeId: stored.disputeId
        });
    }

    /// @notice Closes an Open job: cancelled by its submitter, or `expired` past its open deadline
    ///         (reverts OpenDeadlineNotPassed before). Nothing was spent: the whole escrow still
    ///         held (reward + V * verifierFee + the premium at the job's `premiumBps`, wei: its
    ///         forced-error premium unless a claim already pooled it) is credited back.
    function closeOpen(JobRecord storage job, Settlement memory s, uint256 jobId, bool expired) external {
        if (expired && block.timestamp <= job.openDeadline) {
            revert IJobManagerErrors.OpenDeadlineNotPassed(jobId, job.openDeadline, uint64(block.timestamp));
        }
        uint256 refund =
            job.reward + s.verifiersPerJob * s.verifierFee + premiumAt(job.premiumBps, s.verifiersPerJob, s.jackpot);
        job.premiumBps = 0;
        if (expired) {
            job.status = JobStatus.Expired;
            emit IJobManager.JobExpired(jobId, refund);
        } else {
            job.status = JobStatus.Cancelled;
            emit IJobManager.JobCancelled(jobId, refund);
        }
        LibPayouts.credit(s, Bucket.Escrowed, job.submitter, refund);
    }

    /// @notice Moves job `jobId`'s forced-error premium (`premium` wei, escrowed at postJob) to the
    ///         jackpot pool, for good. The caller clears the job's `premiumBps` first, so it runs
    ///         once per job: at the first claim (docs/FORCED_ERRORS.md section 5).
    function poolPremium(IEscrow escrow, uint256 jobId, uint256 premium) external {
        emit IJobManager.PremiumPooled(jobId, premium);
        // SAFETY: trusted Escrow; the premium was deposited into Bucket.Escrowed at postJob.
        escrow.move(Bucket.Escrowed, Bucket.Jackpot, premium);
    }

    ////// Internal //////

    /// @notice The forced-error premium of one job at rate `rateBps`: the expected jackpots of its
    ///         V verifiers, ceil(rateBps * V * jackpot / 10_000) wei (docs/FORCED_ERRORS.md section 5).
    /// @param rateBps Forced-error rate (bps, <= 10_000).
    /// @param verifiersPerJob V.
    /// @param jackpot Jackpot per rejecter (wei).
    /// @return premium Premium (wei).
    function premiumAt(uint256 rateBps, uint256 verifiersPerJob, uint256 jackpot)
        internal
        pure
        returns (uint256 premium)
    {
        // Checked: rate <= 10_000 and V <= 32, so only an absurd jackpot could overflow (reverts).
        uint256 expected = rateBps * verifiersPerJob * jackpot;
        premium = (expected + 9_999) / 10_000;
    }
}
