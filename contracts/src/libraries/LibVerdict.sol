// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Interfaces
import {LibPayouts} from "./LibPayouts.sol";
// Interfaces
import {IJobManager} from "../interfaces/IJobManager.sol";
// Types
import {Bucket} from "../types/EscrowTypes.sol";
import {Verdict} from "../types/JobTypes.sol";
import {Seat, SeatStatus, Settlement, Submission, fetchesOnly, seatedVerifiers} from "../types/SubmissionTypes.sol";

/// @title LibVerdict
/// @notice How settlement reads the seats' verdicts on a sample: a seat's verdict, whether the
///         sample's data was there (a seat replayed it), the sample's next challenger, and the price
///         of an abstention where the data was there (docs/SECURITY.md P-33).
/// @dev Internal functions only: they are compiled into their callers (LibSettlement, the
///      JobManager), so nothing is linked.
library LibVerdict {
    /// @notice Verdict of a seat on sample `sampleIndex` (None if it never submitted or the sample is
    ///         not in its own draw, P-27; Abstain for a zero end).
    function verdictAt(Seat storage seat, uint256 sampleIndex) internal view returns (Verdict verdict) {
        SeatStatus status = seat.status;
        if (status == SeatStatus.None || status == SeatStatus.Assigned || status == SeatStatus.Missed) {
            return Verdict.None;
        }
        if ((uint256(seat.sampleMask) >> sampleIndex) & 1 == 0) return Verdict.None;
        if ((uint256(seat.abstainMask) >> sampleIndex) & 1 == 1) return Verdict.Abstain;
        verdict = (uint256(seat.rejectMask) >> sampleIndex) & 1 == 1 ? Verdict.Reject : Verdict.Approve;
    }

    /// @notice Whether some seat revealed a real verdict on sample `sampleIndex` (an approval or a
    ///         rejection with an end of its own) and is not closed on it: the sample's data was there
    ///         to fetch, so an abstention on it is not free (docs/SECURITY.md P-33). A seat closed on
    ///         the sample (an approver of a forced claim, a rejecter that lost its game) proves
    ///         nothing and does not count, nor does a seat that only fetched the sample's end
    ///         (P-39: its start may still have been withheld).
    function replayed(Submission storage sub, Settlement memory s, uint256 sampleIndex) internal view returns (bool) {
        address[] memory verifiers = seatedVerifiers(sub, s);
        uint256 count = sub.seatCount;
        for (uint256 i; i < count; ++i) {
            address verifier = verifiers[i];
            Seat storage seat = sub.seats[verifier];
            if (fetchesOnly(sub, seat, sampleIndex)) continue;
            Verdict verdict = verdictAt(seat, sampleIndex);
            if ((verdict == Verdict.Approve || verdict == Verdict.Reject) && !sub.seatClosed[sampleIndex][verifier]) {
                return true;
            }
        }
        return false;
    }

    /// @notice The next challenger of sample `sampleIndex` that has not lost a game on it: rejecting
    ///         verifiers in assignment order, then abstainers (only while no seat replayed the
    ///         sample: an abstention alone never holds a job whose data another seat fetched,
    ///         P-33), then whistleblowers that challenged an approval of it (in the approvers'
    ///         assignment order); zero when none is left.
    function nextChallenger(Submission storage sub, Settlement memory s, uint256 sampleIndex)
        internal
        view
        returns (address)
    {
        address[] memory verifiers = seatedVerifiers(sub, s);
        uint256 count = sub.seatCount;
        address abstainer = address(0);
        for (uint256 i; i < count; ++i) {
            address verifier = verifiers[i];
            Verdict verdict = verdictAt(sub.seats[verifier], sampleIndex);
            if (verdict != Verdict.Reject && verdict != Verdict.Abstain) continue;
            if (sub.seatClosed[sampleIndex][verifier]) continue;
            if (verdict == Verdict.Reject) return verifier;
            if (abstainer == address(0)) abstainer = verifier;
        }
        // An abstainer challenges too: a sample whose data nobody could obtain is judged (P-20).
        if (abstainer != address(0) && !replayed(sub, s, sampleIndex)) return abstainer;
        for (uint256 i; i < count; ++i) {
            address challenger = sub.challengers[sampleIndex][verifiers[i]];
            if (challenger != address(0) && !sub.challengeClosed[sampleIndex][challenger]) return challenger;
        }
        return address(0);
    }

    ////// Abstentions (P-33) //////

    /// @notice Settles the bond of `verifier`'s abstention on sample `t`, never adjudicated against
    ///         it: forfeited to the pool if another seat replayed the sample (the data was there),
    ///         else returned (nobody could fetch it: the solver withheld, P-20, P-33).
    function settleAbstention(Submission storage sub, Settlement memory s, uint256 jobId, uint256 t, address verifier)
        internal
    {
        sub.seatClosed[t][verifier] = true;
        if (replayed(sub, s, t)) forfeitAbstention(s, jobId, t, verifier);
        else LibPayouts.returnSeatBond(s, verifier);
    }

    /// @notice Forfeits the bond of each abstention left open on sample `t` (their sample leaves the
    ///         disputed set: another seat replayed it, P-33).
    function forfeitAbstentions(Submission storage sub, Settlement memory s, uint256 jobId, uint256 t) internal {
        address[] memory verifiers = seatedVerifiers(sub, s);
        for (uint256 i; i < sub.seatCount; ++i) {
            address verifier = verifiers[i];
            if (sub.seatClosed[t][verifier] || verdictAt(sub.seats[verifier], t) != Verdict.Abstain) {
                continue;
            }
            sub.seatClosed[t][verifier] = true;
            forfeitAbstention(s, jobId, t, verifier);
        }
    }

    /// @notice Moves one abstention's bond into the jackpot pool: never to a party of the job, which
    ///         could be the abstainer's accomplice (P-19, P-33).
    function forfeitAbstention(Settlement memory s, uint256 jobId, uint256 t, address verifier) internal {
        emit IJobManager.AbstentionForfeited(jobId, t, verifier, s.challengeBond);
        // SAFETY: trusted StakeManager and Escrow; the bond was locked from the seat's stake at the
        // reveal: slashed to the Escrow and booked into the pool.
        // slither-disable-next-line unused-return
        LibPayouts.forfeitSeatBonds(s, verifier, s.challengeBond, Bucket.Jackpot);
    }

    ////// Pure helpers //////

    /// @notice Index of the lowest set bit of `mask` (which must be non-zero).
    function firstSet(uint256 mask) internal pure returns (uint256 index) {
        while (mask & (uint256(1) << index) == 0) {
            // SAFETY: mask != 0 (checked by the caller), so a set bit below 256 ends the loop.
            unchecked {
                ++index;
            }
        }
    }

    /// @notice First `count` entries of `values`.
    function truncate(address[] memory values, uint256 count) internal pure returns (address[] memory out) {
        out = new address[](count);
        for (uint256 i; i < count; ++i) {
            out[i] = values[i];
        }
    }

    /// @notice First `count` entries of `values` (`truncate` for amounts).
    function truncate(uint256[] memory values, uint256 count) internal pure returns (uint256[] memory out) {
        out = new uint256[](count);
        for (uint256 i; i < count; ++i) {
            out[i] = values[i];
        }
    }
}
