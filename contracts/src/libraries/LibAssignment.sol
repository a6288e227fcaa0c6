// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Libraries
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {LibBits} from "./LibBits.sol";
import {LibPayouts} from "./LibPayouts.sol";
import {LibSampling} from "./LibSampling.sol";
import {LibVerdict} from "./LibVerdict.sol";
// Interfaces
import {IJobManager} from "../interfaces/IJobManager.sol";
import {IJobManagerErrors} from "../interfaces/IJobManagerErrors.sol";
import {IStakeManager} from "../interfaces/IStakeManager.sol";
import {IVerificationRound} from "../interfaces/IVerificationRound.sol";
// Types
import {Bucket} from "../types/EscrowTypes.sol";
import {JobRecord, JobStatus, Verdict} from "../types/JobTypes.sol";
import {Role} from "../types/Role.sol";
import {RoundOutcome, SeatVerdicts} from "../types/RoundTypes.sol";
import {SubmissionId} from "../types/SubmissionId.sol";
import {
    Seat,
    SeatStatus,
    Settlement,
    Submission,
    fetchesLastSample,
    pushVerifier,
    revealBonds,
    sampledSegments,
    storeSample,
    verifierIdAt,
    verifiersOf
} from "../types/SubmissionTypes.sol";

/// @title LibAssignment
/// @notice How the JobManager seats the verifiers of a submission and records what each seat does
///         before settlement: the verifier draw, each seat's own samples (docs/SECURITY.md P-27)
///         and the deadlines of its verification round (PROTOCOL.md 3.2), at the first assignment
///         and on a reassignment; then each seat's revealed verdicts and the whistleblowers'
///         challenges of its approvals. Settlement of all of it is `LibSettlement`'s.
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
        JobRecord storage job,
        Submission storage sub,
        Settlement memory s,
        uint256 jobId,
        bytes32 seed,
        uint256 q
    ) external {
        (address[] memory kept, address[] memory excluded) = _keepRevealed(job, sub, s);
        (address[] memory drawn, uint32[] memory ids) = _drawVerifiers(sub, s, jobId, seed, excluded);
        uint64[] memory masks = _drawMasks(job, sub, s, kept, drawn, seed, q);
        _seat(job, sub, s, jobId, kept, drawn, ids, masks);
    }

    /// @notice The submission's assigned verifiers, in seat order (`verifiersOf` in
    ///         SubmissionTypes.sol), for the JobManager's views: resolving the seats' ids here keeps
    ///         that code out of the JobManager's bytecode.
    function assignedVerifiers(Submission storage sub, IStakeManager stakeManager)
        external
        view
        returns (address[] memory)
    {
        return verifiersOf(sub, stakeManager);
    }

    /// @notice A seat's verdict on each sample of the submission, in sample order (empty for an
    ///         address without a seat), for the JobManager's `verdictOf`: the loop lives here, out of
    ///         the JobManager's bytecode. A forced error's catch reads as the approval of the true
    ///         end it replayed: a settlement that leaves a dispute turns its reject into that
    ///         approval in its word; one that finalizes the job writes no seat (docs/SECURITY.md,
    ///         "Gas cuts"), so for a `finalized` job the reject of a seat whose end matches the true
    ///         end (`round.forcedEndMatches`) on the forced sample is read as an approval here.
    /// @param sub The submission.
    /// @param verifier The seat's account.
    /// @param round The VerificationRound (trusted view).
    /// @param submissionId The submission's id.
    /// @param finalized Whether its job is Finalized.
    /// @return verdicts One verdict per sample.
    function seatVerdicts(
        Submission storage sub,
        address verifier,
        IVerificationRound round,
        SubmissionId submissionId,
        bool finalized
    ) external view returns (Verdict[] memory verdicts) {
        Seat storage seat = sub.seats[verifier];
        if (seat.status == SeatStatus.None) return verdicts;
        uint256 samples = sub.sampleCount;
        verdicts = new Verdict[](samples);
        for (uint256 i; i < samples; ++i) {
            verdicts[i] = LibVerdict.verdictAt(seat, i);
        }
        if (!finalized) return verdicts;
        (RoundOutcome outcome, uint256 f) = round.outcome(submissionId);
        if (
            outcome == RoundOutcome.Forced && f < samples && verdicts[f] == Verdict.Reject
                && round.forcedEndMatches(submissionId, verifier)
        ) {
            verdicts[f] = Verdict.Approve;
        }
    }

    /// @notice Draws as many new verifiers as the held fees pay for beyond the kept seats (V at
    ///         first, the silent and voided seats' on a reassignment; verifierFee > 0, enforced at
    ///         construction), none of them `excluded` (`_keepRevealed`: on a reassignment every
    ///         verifier ever seated on the submission).
    ///         Reverts NoEligibleVerifiers if none can sit.
    /// @return drawn The drawn verifiers, in draw order.
    /// @return ids Their StakeManager ids, read by the draw (`IStakeManager.verifierIdOf`).
    function _drawVerifiers(
        Submission storage sub,
        Settlement memory s,
        uint256 jobId,
        bytes32 seed,
        address[] memory excluded
    ) internal view returns (address[] memory drawn, uint32[] memory ids) {
        uint256 kept = sub.seatCount;
        uint256 candidates;
        // SAFETY: trusted StakeManager view: the protocol's one verifier draw.
        (drawn, ids, candidates) = s.stakeManager
            .drawVerifiers(
                keccak256(abi.encode(seed, "verifiers")),
                sub.feesHeld / s.verifierFee - kept,
                LibPayouts.seatLock(s),
                excluded,
                new address[](0)
            );
        if (drawn.length == 0) revert IJobManagerErrors.NoEligibleVerifiers(jobId, candidates);
    }

    /// @notice Sets the deadlines and draws the `drawn` verifiers' own samples: their segments at the
    ///         first assignment (which stores the sample), else the samples no kept seat covers.
    /// @return masks Per drawn verifier, bit i set = sample i is its to verify.
    function _drawMasks(
        JobRecord storage job,
        Submission storage sub,
        Settlement memory s,
        address[] memory kept,
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
        for (uint256 i; i < kept.length; ++i) {
            covered |= sub.seats[kept[i]].sampleMask;
        }
        // SAFETY: samples <= MAX_SAMPLES_PER_JOB = 64.
        masks = _drawOwnSamples(drawn, seed, uint64((uint256(1) << sub.sampleCount) - 1) & ~covered, q);
    }

    /// @notice Keeps the previous draw's seats that revealed (the seats' ids in `sub.draw` become
    ///         theirs, in seat order; empty at the first assignment) and adds the others (Missed or
    ///         voided) to `sub.pastSeats`.
    /// @dev One seat per verifier and submission (docs/SECURITY.md P-42): a seal is stored per
    ///      submission, so a Missed seat drawn again would find its old seal still stored while the
    ///      draw's seal count starts again (it could not seal anew, would not stop a one-shot reveal,
    ///      and its stale seal with any new signed one would "prove" an equivocation), and a voided
    ///      seat's two signatures would prove it again. The draw excludes them, so it fills every
    ///      place it can with verifiers never seated.
    /// @return kept The kept seats' accounts, in seat order.
    /// @return excluded The submitter, the solver and every verifier ever seated on the submission:
    ///         none is drawn again.
    function _keepRevealed(JobRecord storage job, Submission storage sub, Settlement memory s)
        internal
        returns (address[] memory kept, address[] memory excluded)
    {
        uint256 count = sub.seatCount;
        if (count == 0) {
            // The first assignment: nobody was seated yet (and `pastSeats` is not read).
            excluded = new address[](2);
            (excluded[0], excluded[1]) = (job.submitter, job.solver);
            return (kept, excluded);
        }
        address[] memory previous = verifiersOf(sub, s.stakeManager);
        address[] storage pastSeats = sub.pastSeats;
        uint256 older = pastSeats.length; // seats of the draws before the previous one
        excluded = new address[](2 + count + older);
        (excluded[0], excluded[1]) = (job.submitter, job.solver);
        for (uint256 i; i < older; ++i) {
            excluded[2 + count + i] = pastSeats[i];
        }
        kept = new address[](count);
        sub.seatCount = 0;
        for (uint256 i; i < count; ++i) {
            excluded[2 + i] = previous[i];
            if (sub.seats[previous[i]].status != SeatStatus.Submitted) {
                pastSeats.push(previous[i]);
                continue;
            }
            // Read before the push: it writes at index kept-so-far <= i.
            kept[sub.seatCount] = previous[i];
            pushVerifier(sub, verifierIdAt(sub, i));
        }
        kept = LibVerdict.truncate(kept, sub.seatCount);
    }

    /// @notice Seats the `drawn` verifiers next to the kept seats with their own sample `masks`,
    ///         refunds the fees of seats that could not be filled and locks one verifierStake per
    ///         drawn verifier.
    function _seat(
        JobRecord storage job,
        Submission storage sub,
        Settlement memory s,
        uint256 jobId,
        address[] memory kept,
        address[] memory drawn,
        uint32[] memory ids,
        uint64[] memory masks
    ) internal {
        uint32[] memory segments = _seatDrawn(sub, drawn, ids, masks, s.verifiersPerJob == 1);
        address[] memory seated = _concat(kept, drawn);
        emit IJobManager.VerifiersAssigned(
            jobId, seated, _seatMasks(sub, kept, masks), segments, job.verdictDeadline, job.challengeDeadline
        );

        // Fees of seats that could not be filled go back to the submitter.
        uint256 unused = sub.feesHeld - seated.length * s.verifierFee;
        if (unused != 0) {
            sub.feesHeld = SafeCast.toUint120(sub.feesHeld - unused);
            // SAFETY: trusted Escrow; the fees were deposited into Bucket.Escrowed at postJob.
            s.escrow.credit(Bucket.Escrowed, job.submitter, unused);
        }

        // One call for every seat (its overhead paid once, not per seat): each seat's stake with its
        // first reject bond (`LibPayouts.seatLock`).
        s.stakeManager.lockEach(drawn, Role.Verifier, LibPayouts.seatLock(s));
    }

    /// @notice Seats each `drawn` verifier (its StakeManager id after the current seats, its seat
    ///         Assigned with its own sample mask; `singleSeat`: one seat per job, P-39).
    /// @return segments The submission's sample (`sampledSegments`).
    function _seatDrawn(
        Submission storage sub,
        address[] memory drawn,
        uint32[] memory ids,
        uint64[] memory masks,
        bool singleSeat
    ) internal returns (uint32[] memory segments) {
        segments = sampledSegments(sub);
        for (uint256 i; i < drawn.length; ++i) {
            pushVerifier(sub, ids[i]);
            Seat storage seat = sub.seats[drawn[i]];
            seat.status = SeatStatus.Assigned;
            seat.sampleMask = masks[i];
            // Single seat (P-39): the last sample is fetched, not replayed, unless the seat also
            // holds the segment before it.
            if (singleSeat && fetchesLastSample(masks[i], segments)) seat.fetchesLast = true;
        }
    }

    /// @notice Every seat's own sample mask in seat order, for `VerifiersAssigned`: the `kept` seats'
    ///         (read from their seats) followed by the new seats' `masks`.
    function _seatMasks(Submission storage sub, address[] memory kept, uint64[] memory masks)
        internal
        view
        returns (uint64[] memory all)
    {
        all = new uint64[](kept.length + masks.length);
        for (uint256 i; i < kept.length; ++i) {
            all[i] = sub.seats[kept[i]].sampleMask;
        }
        for (uint256 i; i < masks.length; ++i) {
            all[kept.length + i] = masks[i];
        }
    }

    /// @notice `first` followed by `second`.
    function _concat(address[] memory first, address[] memory second) internal pure returns (address[] memory all) {
        all = new address[](first.length + second.length);
        for (uint256 i; i < first.length; ++i) {
            all[i] = first[i];
        }
        for (uint256 i; i < second.length; ++i) {
            all[first.length + i] = second[i];
        }
    }

    /// @notice Records the revealed verdicts of each seat in `seats` on the active submission, on
    ///         its own samples only (the others are ignored, docs/SECURITY.md P-27): bit i of the
    ///         seat's reject mask for each non-approval (an abstention, a zero end, counts there
    ///         and in its own abstain mask, docs/SECURITY.md P-20), marks those samples disputed,
    ///         keeps the round's `endTag` in the seat's word and, once every seat has spoken,
    ///         starts the challenge window; then locks one challengeBond per non-approval but the
    ///         first from each seat's free verifier stake (the first is in the seat's lock since its
    ///         draw, `LibPayouts.seatLock`; docs/SECURITY.md, "Gas cuts": reject bonds from stake,
    ///         the first reject bond with the seat), every seat's bonds in one StakeManager call
    ///         after all the records, none when no seat has a second non-approval.
    /// @dev Reverts NotAssignedVerifier, VerdictsAlreadySubmitted (also for a seat named twice),
    ///      VerdictCountMismatch, and the StakeManager's InsufficientFreeStake when a seat's free
    ///      verifier stake is short of its bonds (the whole call reverts: no seat is recorded).
    function recordVerdicts(
        JobRecord storage job,
        Submission storage sub,
        Settlement memory s,
        uint256 jobId,
        SeatVerdicts[] calldata seats
    ) external {
        address[] memory bonded = new address[](seats.length);
        uint256[] memory bonds = new uint256[](seats.length);
        uint256 count = 0;
        for (uint256 i; i < seats.length; ++i) {
            uint256 bond = _recordSeat(job, sub, s, jobId, seats[i]);
            if (bond == 0) continue;
            (bonded[count], bonds[count]) = (seats[i].verifier, bond);
            ++count;
        }
        if (count == 0) return;
        // `seats` are the accounts that revealed in the VerificationRound, the only caller.
        // SAFETY: trusted StakeManager; it locks each bond from the seat's free verifier stake
        // (reverts InsufficientFreeStake when short). Every bond locked here is later unlocked
        // (returned) or slashed (forfeited) exactly once by the settlement. No reject, no bond: a
        // seat without one is left out, and no seat has one, no call. Equal bonds (each seat one
        // reject of the forced sample) lock as one amount for every seat (`LibPayouts.lockSeats`).
        LibPayouts.lockSeats(s, LibVerdict.truncate(bonded, count), LibVerdict.truncate(bonds, count));
    }

    /// @notice One seat's record in `recordVerdicts` (every effect but the bond's lock).
    /// @return bond The seat's reject bonds to lock (wei): challengeBond per non-approval but the
    ///         first, which its seat's lock holds already (`LibPayouts.seatLock`).
    function _recordSeat(
        JobRecord storage job,
        Submission storage sub,
        Settlement memory s,
        uint256 jobId,
        SeatVerdicts calldata verdicts
    ) internal returns (uint256 bond) {
        address verifier = verdicts.verifier;
        Seat storage seat = sub.seats[verifier];
        if (seat.status == SeatStatus.None) revert IJobManagerErrors.NotAssignedVerifier(jobId, verifier);
        if (seat.status != SeatStatus.Assigned) revert IJobManagerErrors.VerdictsAlreadySubmitted(jobId, verifier);
        uint256 samples = sub.sampleCount;
        uint256 approveMask = verdicts.approveMask;
        // A verdict beyond the sample (the round sends exactly one per sample).
        if ((approveMask | verdicts.abstainMask) >> samples != 0) {
            revert IJobManagerErrors.VerdictCountMismatch(
                jobId, samples, _bitLength(approveMask | verdicts.abstainMask)
            );
        }
        // Non-approvals on the seat's own samples only: its verdicts on the others are ignored (P-27).
        uint256 rejectMask = ~approveMask & seat.sampleMask;
        uint256 rejects = LibBits.popCount(rejectMask);
        bond = revealBonds(rejects, s.challengeBond);
        seat.status = SeatStatus.Submitted;
        seat.revealed = true;
        seat.endTag = verdicts.endTag;
        // SAFETY: samples <= MAX_SAMPLES_PER_JOB = 64, so both masks fit in 64 bits; an abstention
        // is a non-approval, so only those bits count (the VerificationRound derives both).
        // forge-lint: disable-next-line(unsafe-typecast)
        seat.rejectMask = uint64(rejectMask);
        // forge-lint: disable-next-line(unsafe-typecast)
        seat.abstainMask = uint64(verdicts.abstainMask & rejectMask);
        // forge-lint: disable-next-line(unsafe-typecast)
        sub.disputedMask |= uint64(rejectMask);
        if (seat.abstainMask != 0) emit IJobManager.VerdictsAbstained(jobId, verifier, seat.abstainMask);
        if (++sub.submitted == sub.seatCount) {
            // Everyone has spoken: the challenge window runs from now.
            uint64 deadline = uint64(block.timestamp) + s.challengeWindow;
            job.challengeDeadline = SafeCast.toUint32(deadline);
            emit IJobManager.ChallengeDeadlineSet(jobId, deadline);
        }
    }

    /// @notice 1 + the index of the highest set bit of `mask` (0 for 0).
    function _bitLength(uint256 mask) internal pure returns (uint256 length) {
        while (mask >> length != 0) {
            ++length;
        }
    }

    /// @notice Records the caller's challenge of `verifier`'s approval of sample `sampleIndex` of the
    ///         job's active submission (the caller is an active whistleblower, neither the solver nor
    ///         that verifier, within the challenge window), marks the sample disputed and pulls the
    ///         challenge bond into the Escrow (`IJobManager.challengeApproval`).
    /// @dev Reverts UnexpectedJobStatus, ChallengeWindowClosed, NotActiveStaker,
    ///      SampleIndexOutOfRange, NotAssignedVerifier, VerdictNotApproval, ChallengerConflicted,
    ///      ApprovalAlreadyChallenged.
    function challengeApproval(
        JobRecord storage job,
        Submission storage sub,
        Settlement memory s,
        uint256 jobId,
        uint256 sampleIndex,
        address verifier
    ) external {
        if (job.status != JobStatus.Verifying) {
            revert IJobManagerErrors.UnexpectedJobStatus(jobId, job.status);
        }
        if (block.timestamp > job.challengeDeadline) {
            revert IJobManagerErrors.ChallengeWindowClosed(jobId, job.challengeDeadline, uint64(block.timestamp));
        }
        // SAFETY: trusted StakeManager view.
        if (!s.stakeManager.isActive(msg.sender, Role.Whistleblower)) {
            revert IJobManagerErrors.NotActiveStaker(msg.sender, Role.Whistleblower);
        }
        uint256 samples = sub.sampleCount;
        if (sampleIndex >= samples) revert IJobManagerErrors.SampleIndexOutOfRange(jobId, sampleIndex, samples);
        Seat storage seat = sub.seats[verifier];
        if (seat.status == SeatStatus.None) revert IJobManagerErrors.NotAssignedVerifier(jobId, verifier);
        Verdict verdict = LibVerdict.verdictAt(seat, sampleIndex);
        if (verdict != Verdict.Approve) {
            revert IJobManagerErrors.VerdictNotApproval(jobId, sampleIndex, verifier, verdict);
        }
        if (msg.sender == job.solver || msg.sender == verifier) {
            revert IJobManagerErrors.ChallengerConflicted(jobId, msg.sender);
        }
        address existing = sub.challengers[sampleIndex][verifier];
        if (existing != address(0)) {
            revert IJobManagerErrors.ApprovalAlreadyChallenged(jobId, sampleIndex, verifier, existing);
        }

        sub.challengers[sampleIndex][verifier] = msg.sender;
        // SAFETY: sampleIndex < samples <= MAX_SAMPLES_PER_JOB = 64.
        sub.disputedMask |= uint64(uint256(1) << sampleIndex);
        emit IJobManager.ApprovalChallenged(jobId, sampleIndex, verifier, msg.sender, s.challengeBond);
        // SAFETY: trusted Escrow; it pulls the bond from the whistleblower (approved beforehand).
        s.escrow.deposit(Bucket.Bonds, msg.sender, s.challengeBond);
    }

    ////// Internal //////

    /// @notice Sets the deadlines of a verifier draw (claims in `claimsWindow` from now, verdicts
    ///         verdictWindow after, then the reveal and challenge windows) -> Verifying.
    function _setDeadlines(JobRecord storage job, Settlement memory s, uint64 claimsWindow) internal {
        uint64 claimsDeadline = uint64(block.timestamp) + claimsWindow;
        uint64 verdictDeadline = claimsDeadline + s.verdictWindow;
        job.claimsDeadline = SafeCast.toUint32(claimsDeadline);
        job.verdictDeadline = SafeCast.toUint32(verdictDeadline);
        job.challengeDeadline = SafeCast.toUint32(uint256(verdictDeadline) + s.revealWindow + s.challengeWindow);
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
        // size <= V * q + 1 <= MAX_SAMPLES_PER_JOB = 64.
        storeSample(sub, union, size);
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
