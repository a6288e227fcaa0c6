// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Libraries
import {LibBits} from "./LibBits.sol";
import {LibPayouts} from "./LibPayouts.sol";
import {LibVerdict} from "./LibVerdict.sol";
// Interfaces
import {IJobManager} from "../interfaces/IJobManager.sol";
import {IJobManagerErrors} from "../interfaces/IJobManagerErrors.sol";
// Types
import {Bucket} from "../types/EscrowTypes.sol";
import {JobRecord} from "../types/JobTypes.sol";
import {Role} from "../types/Role.sol";
import {Seat, SeatStatus, Settlement, Submission} from "../types/SubmissionTypes.sol";

/// @title LibEquivocation
/// @notice How the JobManager settles a seat proven to have signed two different seals for one
///         submission (`IVerificationRound.proveEquivocation`): its stake goes to the jackpot pool
///         and its verdicts are voided, so a seat that copied another's opened ends
///         (`revealVerdictsSigned` stores no seal to bind it) gains nothing by it.
/// @dev Internal functions only: they are compiled into LibSettlement (an external library running
///      in the JobManager's context), so events are the JobManager's and the StakeManager and Escrow
///      see the JobManager as the caller.
library LibEquivocation {
    /// @notice Slashes and voids `verifier`'s seat, by the job's challenge deadline (the secret
    ///         reveal opens after it, so the round's coverage can still change): its status becomes
    ///         Slashed (never paid, released or slashed again), one verifierStake goes to the jackpot
    ///         pool (never to the prover or a party of the job, P-19), and so do its reject bonds; the
    ///         bond of each open whistleblower challenge of its approvals is returned (no one pays
    ///         for a verdict that no longer stands) and the challenge is forgotten, so it never
    ///         opens a dispute; its masks are cleared, so it is no challenger, winner or witness of
    ///         any sample (`LibVerdict.verdictAt` is None everywhere). Its disputed bits stay: a
    ///         disputed sample with no challenger left leaves the set at finalize. Its fee stays
    ///         held: it pays a seat drawn again for a sample no standing verdict covers, or goes
    ///         back to the submitter when the job closes.
    /// @dev Reverts ChallengeWindowClosed after the challenge deadline, SeatNotSlashable unless the
    ///      seat is Submitted (it revealed and was not settled). The caller checked that the job is
    ///      Verifying with this submission. The round drops the samples only this seat covered from
    ///      its coverage in the same call (`IVerificationRound.proveEquivocation`).
    function slash(JobRecord storage job, Submission storage sub, Settlement memory s, uint256 jobId, address verifier)
        internal
    {
        if (block.timestamp > job.challengeDeadline) {
            revert IJobManagerErrors.ChallengeWindowClosed(jobId, job.challengeDeadline, uint64(block.timestamp));
        }
        Seat storage seat = sub.seats[verifier];
        if (seat.status != SeatStatus.Submitted) revert IJobManagerErrors.SeatNotSlashable(jobId, verifier);
        uint64 rejectMask = seat.rejectMask;
        uint256 approved = uint256(seat.sampleMask) & ~uint256(rejectMask);
        // Every non-approval of its own samples (abstentions too) bonded one challengeBond (the
        // first with the seat's lock, the others at the reveal), and none is settled while the job
        // is Verifying.
        uint256 bonds = LibBits.popCount(rejectMask) * s.challengeBond;
        seat.status = SeatStatus.Slashed;
        (seat.rejectMask, seat.abstainMask, seat.sampleMask, seat.fetchesLast) = (0, 0, 0, false);
        // `submitted` counts the Submitted seats (kept ones included): without the voided seat, the
        // last reveal of a next draw starts the challenge window.
        --sub.submitted;
        _returnChallenges(sub, s, verifier, approved);
        uint256 slashed = LibPayouts.slashInto(s, verifier, Role.Verifier, Bucket.Jackpot);
        emit IJobManager.VerifierEquivocated(jobId, verifier, slashed, bonds);
        // SAFETY: trusted StakeManager and Escrow; the bonds were locked from the seat's stake at
        // the reveal: slashed to the Escrow and booked into the pool.
        // slither-disable-next-line unused-return
        if (bonds != 0) LibPayouts.forfeitSeatBonds(s, verifier, bonds, Bucket.Jackpot);
        // A seat without a non-approval gets its seat's idle bond back (it bonded no reject).
        LibPayouts.releaseIdleBond(s, rejectMask, verifier);
    }

    /// @notice Returns the bond of each open challenge of `verifier`'s approvals (`approved`, bit t =
    ///         sample t) and forgets the challenge. The challenger is not closed on the sample: its
    ///         challenge of another approval of it, if any, stands.
    function _returnChallenges(Submission storage sub, Settlement memory s, address verifier, uint256 approved)
        internal
    {
        for (uint256 t; approved >> t != 0; ++t) {
            if ((approved >> t) & 1 == 0) continue;
            address challenger = sub.challengers[t][verifier];
            if (challenger == address(0) || sub.challengeClosed[t][challenger]) continue;
            delete sub.challengers[t][verifier];
            LibPayouts.returnBond(s, challenger);
        }
    }
}
