// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Libraries
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {LibSampling} from "./LibSampling.sol";
// Interfaces
import {IJobManager} from "../interfaces/IJobManager.sol";
import {IJobManagerErrors} from "../interfaces/IJobManagerErrors.sol";
// Types
import {Bucket} from "../types/EscrowTypes.sol";
import {Job, JobStatus} from "../types/JobTypes.sol";
import {Role} from "../types/Role.sol";
import {
    Seat,
    SeatStatus,
    Settlement,
    Submission,
    fetchesLastSample,
    pushVerifier,
    sampledSegments,
    verifiersOf
} from "../types/SubmissionTypes.sol";

/// @title LibAssignment
/// @notice How the JobManager seats the verifiers of a submission: the verifier draw, each seat's
///         own samples (docs/SECURITY.md P-27) and the deadlines of its verification round
///         (PROTOCOL.md 3.2), at the first assignment and on a reassignment.
/// @dev An external library (DELEGATECALL) like LibSettlement: it runs in the JobManager's context
///      and storage, emits the JobManager's events and keeps it under the contract size limit.
///      Linked at deployment (contracts/script/Deploy.sol).
library LibAssignment {
    ////// External //////

    /// @notice Draws the verifiers and their own samples, sets the deadlines, seats the verifiers,
    ///         refunds the fees of seats that could not be filled and locks one verifierStake per
    ///         new verifier. Verifiers always get the whole verdict window after the claims: the
    ///         solver posts them by claimsDeadline = now + claimsWindow, the verifiers seal by
    ///         claimsDeadline + verdictWindow. On a reassignment (the sample is already drawn) the
    ///         claims are already posted (claimsDeadline = now), the sample and the seats that
    ///         revealed are kept, and new seats are drawn, as many as the silent ones, for the
    ///         samples no revealed verdict covers. Reverts NoEligibleVerifiers if nobody can sit.
    /// @dev Own draws (docs/SECURITY.md P-27): the verifiers are drawn with seed
    ///      keccak256(abi.encode(seed, "verifiers")) among the staked ones other than the job's
    ///      submitter, its solver and every verifier seated on the submission before (P-42). At
    ///      the first assignment each verifier v draws `q` segments (of all M, or of the first
    ///      M - 1 with one seat per job, P-39) with seed keccak256(abi.encode(seed, "segments", v)),
    ///      plus
    ///      the last segment (P-36), and the sample is the union of the draws and the last segment
    ///      in increasing segment order (at most V * q + 1 <= 64);
    ///      on a reassignment each new v draws `q` of the uncovered samples with seed
    ///      keccak256(abi.encode(seed, "samples", v)), and an uncovered sample no new draw holds is
    ///      dealt to the new seats in turn. Either way every sample is in some seat's mask.
    function assign(
        Job storage job,
        Submission storage sub,
        Settlement memory s,
        uint256 jobId,
        bytes32 seed,
        uint256 q
    ) external {
        address[] memory drawn = _drawVerifiers(sub, s, jobId, seed, _keepRevealed(job, sub));
        uint64[] memory masks = _drawMasks(job, sub, s, drawn, seed, q);
        _seat(job, sub, s, jobId, drawn, masks);
    }

    /// @notice Draws as many new verifiers as the held fees pay for beyond the kept seats (V at
    ///         first, the silent and voided seats' on a reassignment; verifierFee > 0, enforced at
    ///         construction), none of them `excluded` (`_keepRevealed`: on a reassignment every
    ///         verifier ever seated on the submission).
    ///         Reverts NoEligibleVerifiers if none can sit.
    function _drawVerifiers(
        Submission storage sub,
        Settlement memory s,
        uint256 jobId,
        bytes32 seed,
        address[] memory excluded
    ) internal view returns (address[] memory drawn) {
        uint256 kept = sub.seatCount;
        uint256 candidates;
        // SAFETY: trusted StakeManager view: the protocol's one verifier draw.
        (drawn, candidates) = s.stakeManager
            .drawVerifiers(
                keccak256(abi.encode(seed, "verifiers")),
                sub.feesHeld / s.verifierFee - kept,
                s.verifierStake,
                excluded,
                new address[](0)
            );
        if (drawn.length == 0) revert IJobManagerErrors.NoEligibleVerifiers(jobId, candidates);
    }

    /// @notice Sets the deadlines and draws the `drawn` verifiers' own samples: their segments at the
    ///         first assignment (which stores the sample), else the samples no kept seat covers.
    /// @return masks Per drawn verifier, bit i set = sample i is its to verify.
    function _drawMasks(
        Job storage job,
        Submission storage sub,
        Settlement memory s,
        address[] memory drawn,
        bytes32 seed,
        uint256 q
    ) internal returns (uint64[] memory masks) {
        if (sub.sampleCount == 0) {
            _setDeadlines(job, s, s.claimsWindow);
            return
                _drawOwnSegments(sub, drawn, seed, job.totalSteps / job.checkpointInterval, q, s.verifiersPerJob == 1);
        }
        _setDeadlines(job, s, 0);
        uint64 covered = 0;
        for (uint256 i; i < sub.seatCount; ++i) {
            covered |= sub.seats[sub.verifiers[i]].sampleMask;
        }
        // SAFETY: samples <= MAX_SAMPLES_PER_JOB = 64.
        masks = _drawOwnSamples(drawn, seed, uint64((uint256(1) << sub.sampleCount) - 1) & ~covered, q);
    }

    /// @notice Keeps the previous draw's seats that revealed (`sub.verifiers` becomes them, in seat
    ///         order; empty at the first assignment) and adds the others (Missed or voided) to
    ///         `sub.pastSeats`.
    /// @dev One seat per verifier and submission (docs/SECURITY.md P-42): a seal is stored per
    ///      submission, so a Missed seat drawn again would find its old seal still stored while the
    ///      draw's seal count starts again (it could not seal anew, would not stop a one-shot reveal,
    ///      and its stale seal with any new signed one would "prove" an equivocation), and a voided
    ///      seat's two signatures would prove it again. The draw excludes them, so it fills every
    ///      place it can with verifiers never seated.
    /// @return excluded The submitter, the solver and every verifier ever seated on the submission:
    ///         none is drawn again.
    function _keepRevealed(Job storage job, Submission storage sub) internal returns (address[] memory excluded) {
        address[] memory previous = verifiersOf(sub);
        uint256 count = previous.length;
        if (count == 0) {
            // The first assignment: nobody was seated yet (and `pastSeats` is not read).
            excluded = new address[](2);
            (excluded[0], excluded[1]) = (job.submitter, job.solver);
            return excluded;
        }
        address[] storage pastSeats = sub.pastSeats;
        uint256 older = pastSeats.length; // seats of the draws before the previous one
        excluded = new address[](2 + count + older);
        (excluded[0], excluded[1]) = (job.submitter, job.solver);
        for (uint256 i; i < older; ++i) {
            excluded[2 + count + i] = pastSeats[i];
        }
        sub.seatCount = 0;
        for (uint256 i; i < count; ++i) {
            excluded[2 + i] = previous[i];
            if (sub.seats[previous[i]].status == SeatStatus.Submitted) pushVerifier(sub, previous[i]);
            else pastSeats.push(previous[i]);
        }
    }

    /// @notice Seats the `drawn` verifiers next to the kept seats with their own sample `masks`,
    ///         refunds the fees of seats that could not be filled and locks one verifierStake per
    ///         drawn verifier.
    function _seat(
        Job storage job,
        Submission storage sub,
        Settlement memory s,
        uint256 jobId,
        address[] memory drawn,
        uint64[] memory masks
    ) internal {
        uint256 kept = sub.seatCount;
        uint256 count = drawn.length;
        bool singleSeat = s.verifiersPerJob == 1;
        uint32[] memory segments = sampledSegments(sub);
        for (uint256 i; i < count; ++i) {
            pushVerifier(sub, drawn[i]);
            Seat storage seat = sub.seats[drawn[i]];
            seat.status = SeatStatus.Assigned;
            seat.sampleMask = masks[i];
            // Single seat (P-39): the last sample is fetched, not replayed, unless the seat also
            // holds the segment before it.
            if (singleSeat && fetchesLastSample(masks[i], segments)) seat.fetchesLast = true;
            emit IJobManager.SeatSamplesDrawn(jobId, drawn[i], masks[i]);
        }
        emit IJobManager.VerifiersAssigned(
            jobId, verifiersOf(sub), segments, job.verdictDeadline, job.challengeDeadline
        );

        // Fees of seats that could not be filled go back to the submitter.
        uint256 unused = sub.feesHeld - (kept + count) * s.verifierFee;
        if (unused != 0) {
            sub.feesHeld = SafeCast.toUint120(sub.feesHeld - unused);
            // SAFETY: trusted Escrow; the fees were deposited into Bucket.Escrowed at postJob.
            s.escrow.credit(Bucket.Escrowed, job.submitter, unused);
        }

        for (uint256 i; i < count; ++i) {
            s.stakeManager.lock(drawn[i], Role.Verifier, s.verifierStake);
        }
    }

    ////// Internal //////

    /// @notice Sets the deadlines of a verifier draw (claims in `claimsWindow` from now, verdicts
    ///         verdictWindow after, then the reveal and challenge windows) -> Verifying.
    function _setDeadlines(Job storage job, Settlement memory s, uint64 claimsWindow) internal {
        uint64 claimsDeadline = uint64(block.timestamp) + claimsWindow;
        uint64 verdictDeadline = claimsDeadline + s.verdictWindow;
        job.claimsDeadline = SafeCast.toUint40(claimsDeadline);
        job.verdictDeadline = SafeCast.toUint40(verdictDeadline);
        job.challengeDeadline = SafeCast.toUint40(uint256(verdictDeadline) + s.revealWindow + s.challengeWindow);
        job.status = JobStatus.Verifying;
    }

    /// @notice First assignment: each verifier draws its own `q` of the `segmentCount` segments and
    ///         always holds the last one too (docs/SECURITY.md P-36: every seat holds the final
    ///         state before the job may be paid); stores their union, in increasing segment order,
    ///         as the submission's sample. With `singleSeat` (one seat per job, P-39) the seat draws
    ///         among the segments before the last and replays the last one only when its draw
    ///         holds the segment before it; otherwise it fetches the final state (`_seat`).
    /// @return masks Per verifier (assignment order), bit i set = sample i is in its draw.
    function _drawOwnSegments(
        Submission storage sub,
        address[] memory verifiers,
        bytes32 seed,
        uint256 segmentCount,
        uint256 q,
        bool singleSeat
    ) internal returns (uint64[] memory masks) {
        uint256 pool = singleSeat && segmentCount > 1 ? segmentCount - 1 : segmentCount;
        uint256 count = verifiers.length;
        uint32[][] memory draws = new uint32[][](count);
        // INVARIANT: count * min(q, pool) + 1 <= V * q + 1 <= MAX_SAMPLES_PER_JOB (constructor).
        uint32[] memory union = new uint32[](count * (q < pool ? q : pool) + 1);
        // SAFETY: segmentCount = N / k with N < 2**32 and k >= 1.
        // forge-lint: disable-next-line(unsafe-typecast)
        uint32 last = uint32(segmentCount - 1);
        uint256 size = _insertSorted(union, 0, last);
        for (uint256 v; v < count; ++v) {
            draws[v] = LibSampling.drawSegments(keccak256(abi.encode(seed, "segments", verifiers[v])), pool, q);
            for (uint256 j; j < draws[v].length; ++j) {
                size = _insertSorted(union, size, draws[v][j]);
            }
        }
        for (uint256 i; i < size; ++i) {
            sub.segments[i] = union[i];
        }
        // SAFETY: size <= V * q + 1 <= MAX_SAMPLES_PER_JOB = 64.
        // forge-lint: disable-next-line(unsafe-typecast)
        sub.sampleCount = uint8(size);
        masks = new uint64[](count);
        for (uint256 v; v < count; ++v) {
            // the last segment is the union's last sample
            masks[v] = uint64(1) << (size - 1);
            for (uint256 j; j < draws[v].length; ++j) {
                uint256 i;
                while (union[i] != draws[v][j]) ++i;
                masks[v] |= uint64(1) << i;
            }
        }
    }

    /// @notice Reassignment: each new verifier draws its own `q` of the samples in `open` (those no
    ///         revealed verdict covers; the claims are on them); an open sample no draw holds goes
    ///         to the new seats in turn.
    /// @return masks Per verifier (assignment order), bit i set = sample i is its to verify.
    function _drawOwnSamples(address[] memory verifiers, bytes32 seed, uint64 open, uint256 q)
        internal
        pure
        returns (uint64[] memory masks)
    {
        uint256[] memory indices = new uint256[](64);
        uint256 size = 0;
        for (uint256 i; i < 64; ++i) {
            if ((open >> i) & 1 == 1) indices[size++] = i;
        }
        uint256 count = verifiers.length;
        masks = new uint64[](count);
        uint64 covered = 0;
        for (uint256 v; v < count; ++v) {
            uint32[] memory picked =
                LibSampling.drawSegments(keccak256(abi.encode(seed, "samples", verifiers[v])), size, q);
            for (uint256 j; j < picked.length; ++j) {
                masks[v] |= uint64(1) << indices[picked[j]];
            }
            covered |= masks[v];
        }
        uint256 turn = 0;
        for (uint256 i; i < size; ++i) {
            if ((covered >> indices[i]) & 1 == 1) continue;
            masks[turn++ % count] |= uint64(1) << indices[i];
        }
    }

    /// @notice Inserts `value` into the increasing first `size` entries of `values` unless present.
    /// @return newSize The new number of entries.
    function _insertSorted(uint32[] memory values, uint256 size, uint32 value) internal pure returns (uint256 newSize) {
        uint256 i;
        while (i < size && values[i] < value) ++i;
        if (i < size && values[i] == value) return size;
        for (uint256 k = size; k > i; --k) {
            values[k] = values[k - 1];
        }
        values[i] = value;
        newSize = size + 1;
    }
}
