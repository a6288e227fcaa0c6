// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice Lifecycle of an arbitration dispute (ABI: uint8).
/// @dev None -> AwaitingCommittee -> Voting -> Resolved. Inside Voting, the commit phase ends when
///      every member has committed or at `commitDeadline`, whichever comes first; see `phaseOf`.
enum DisputeStatus {
    None,
    AwaitingCommittee,
    Voting,
    Resolved
}

/// @notice Voting phase of a dispute, derived from its status, deadlines and counters (ABI: uint8).
enum DisputePhase {
    None,
    AwaitingCommittee,
    Commit,
    Reveal,
    Resolvable,
    Resolved
}

/// @notice An arbitration dispute as returned by `ArbitrationCommittee.getDispute`.
/// @param jobId JobManager job under dispute.
/// @param segment Segment index s (steps s*k .. (s+1)*k) whose validity is judged.
/// @param status Current lifecycle status.
/// @param randomnessBlock Block whose hash seeds the committee draw.
/// @param commitDeadline Last timestamp for vote commitments (seconds).
/// @param revealDeadline Last timestamp for vote reveals (seconds).
/// @param seatStake Verifier stake locked per committee seat (wei).
/// @param committed Members that committed a vote.
/// @param revealed Members that revealed a vote.
/// @param validVotes Revealed votes saying the segment is valid.
/// @param invalidVotes Revealed votes saying the segment is invalid.
/// @param segmentValid Outcome, meaningful once Resolved (a tie or no vote keeps it valid).
/// @param size Members drawn (0 before the draw); kept in the word of the vote counts, which every
///        vote rewrites, instead of as the length of a list.
struct Dispute {
    uint256 jobId;
    uint32 segment;
    DisputeStatus status;
    uint64 randomnessBlock;
    uint64 commitDeadline;
    uint64 revealDeadline;
    uint256 seatStake;
    uint32 committed;
    uint32 revealed;
    uint32 validVotes;
    uint32 invalidVotes;
    bool segmentValid;
    uint32 size;
}
