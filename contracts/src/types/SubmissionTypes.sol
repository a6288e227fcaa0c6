// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Interfaces
import {IEscrow} from "../interfaces/IEscrow.sol";
import {IShareRegistry} from "../interfaces/IShareRegistry.sol";
import {IStakeManager} from "../interfaces/IStakeManager.sol";
import {IVerificationRound} from "../interfaces/IVerificationRound.sol";

/// @notice Status of an assigned verifier's seat on a submission.
/// @dev Assigned -> Submitted -> Slashed; Assigned -> Missed. A Submitted seat proven to have signed
///      two seals becomes Slashed while the job is Verifying, its verdicts voided (`LibEquivocation`),
///      and is never seated on that submission again. When the job ends (Finalized, Rejected,
///      Expired) its standing seats are paid and unlocked and keep their status: the job's status
///      says they were released, and nothing reads a seat of an ended job (docs/SECURITY.md, "Gas
///      cuts").
enum SeatStatus {
    None,
    Assigned,
    Submitted,
    Missed,
    Slashed
}

/// @notice A verifier's seat: its status, the samples it must verify (bit i set = sample i is in
///         its own draw, docs/SECURITY.md P-27) and, once submitted, bit i set = rejected sample i
///         (an abstention counts as a rejection there) and bit i set = abstained on sample i (sealed
///         a zero end: no data, docs/SECURITY.md P-20). Both verdict masks lie inside `sampleMask`.
///         `revealed` is set (never cleared) when the seat's sealed verdicts are revealed and recorded:
///         the VerificationRound reads it (`seatOf`) instead of keeping a flag of its own, so a reveal
///         writes one word fewer (all seven fields share one word). `fetchesLast` is set when the
///         seat's duty on the job's last sample is availability, not replay: a single-seat
///         deployment's seat whose draw does not hold the segment before the last fetches the
///         final state and checks it against the claim (docs/SECURITY.md P-39); its approval of the
///         last sample vouches that the state was served, not that the segment is valid.
///         `endTag` is the VerificationRound's 40-bit tag of the end the seat revealed for its
///         first rejected sample of its own draw (zero if it rejected none): the round keeps the
///         whole end only of any further rejected sample, so a reveal with one rejection (a caught
///         forced error) writes no word but this one (docs/SECURITY.md, "Gas cuts").
struct Seat {
    SeatStatus status;
    uint64 rejectMask;
    uint64 abstainMask;
    uint64 sampleMask;
    bool revealed;
    bool fetchesLast;
    bytes5 endTag;
}

/// @dev Most seats a submission holds: the size of its fixed verifier array, and the JobManager's
///      `MAX_VERIFIERS_PER_JOB`, which its constructor enforces on verifiersPerJob.
uint256 constant MAX_SEATS = 32;

/// @dev Most sampled segments of a submission (`IJobManager.MAX_SAMPLES_PER_JOB`).
uint256 constant MAX_SAMPLES = 64;

/// @dev Entries of `Submission.draw`: every sampled segment (one 16-bit entry each) and every
///      seat's 32-bit StakeManager id (two entries each).
uint256 constant MAX_DRAW_ENTRIES = MAX_SAMPLES + 2 * MAX_SEATS;

/// @dev Most segments N / k of a job a deployment may allow (`Params.maxSegments`): a segment
///      index is stored in 16 bits (`Submission.draw`).
uint256 constant MAX_SEGMENTS_BOUND = 1 << 16;

/// @notice The JobManager's bookkeeping of one submission (one solver's attempt at one job), keyed
///         by `SubmissionId`.
/// @param disputedMask Bit i set = sample i rejected or challenged and not yet adjudicated.
/// @param feesHeld Verifier fees of the job still in escrow (wei, < 2**120: a claim reverts
///        SafeCastOverflowedUintDowncast above).
/// @param submitted Assigned verifiers whose verdicts were recorded (<= 32).
/// @param disputeSample Sample index of the current or last dispute (< 64).
/// @param disputePending True while a dispute is open at the adjudicator.
/// @param reassignments Times fresh verifiers were drawn because none revealed a verdict (at most
///        maxReassignments; a deployment above 2^24 - 1 would revert at that count, centuries of
///        verdict windows away).
/// @param seatCount Assigned verifiers (<= 32): seat i's StakeManager id is in `draw` after the
///        sample (`verifierIdAt`).
/// @param sampleCount Sampled segments (<= MAX_SAMPLES_PER_JOB = 64; zero until assigned).
/// @param draw The assignment in 16-bit entries, sixteen to a storage word: first the sample's
///        segment indices in sample order (the union of the seats' own draws, in increasing segment
///        order; `sampleCount` entries, `segmentAt`, `sampledSegments`; a segment index is below
///        maxSegments <= 2^16, `MAX_SEGMENTS_BOUND`), then each seat's StakeManager id
///        (`IStakeManager.verifierIdOf`; 32 bits, as two entries, high half first), in seat order
///        (`verifiersOf` resolves them to accounts). At V = 3 seats and a sample of up to 10
///        segments the whole draw is one storage word, where separate 32-bit arrays of ids and
///        segments took two (one 20k-gas word less per assignment). The sample is drawn before any
///        seat is pushed and never changes, so the ids' offset is fixed once they are written.
/// @param seats Seat of each assigned verifier.
/// @param challengers Whistleblower that challenged a verifier's approval of a sample.
/// @param disputeChallenger The one party whose own challenge the current dispute decides (a game
///        played one against one), or zero when the adjudicator's ruling binds every challenger of
///        the sample (a committee).
/// @param expiring True once the submission is to expire (verifiers stayed silent through every
///        reassignment, or the job could not seat verifiers by its assign deadline): its disputed
///        samples are adjudicated first (docs/SECURITY.md P-34), then it expires instead of
///        finalizing. In the word `finalize` reads anyway (no extra storage read on a dispute).
/// @param seatClosed Verifiers whose seat on a sample (their rejection or approval of it) is
///        settled: a rejecter that lost its own game on it, and, on a forced error, the approvers of
///        the forced claim (slashed). Keyed by (sample, party) in the seat role only.
/// @param challengeClosed Whistleblowers whose challenges of a sample's approvals are settled: one
///        that lost its own game on it, and, on a forced error, the whistleblowers that challenged
///        the forced claim's approvers (paid). Keyed by (sample, party) in the whistleblower role
///        only, so that settling one role of a party that holds both (a rejecter that also
///        challenged another verifier's approval of the sample) never settles the other. A party
///        that loses its own game on a sample is closed in both roles: the game refuted the one claim
///        (the sample is invalid) that both its roles make.
/// @param pastSeats Verifiers seated by an earlier draw of the submission and not kept (Missed or
///        voided), appended at each reassignment: no later draw seats them again (docs/SECURITY.md
///        P-42). Empty, and never written, unless the submission is reassigned.
/// @dev Packed so that a claim creates 1 storage word ([feesHeld, submitted, disputeSample,
///      disputePending, reassignments, expiring, disputedMask, sampleCount]; the job and the solver
///      are the submission's id itself, `LibSubmission.jobIdOf` and `solverOf`) and the first
///      recorded verdict, the first rejection and the assignment (the sample's size) update the
///      word the claim created instead of fresh ones (20k gas each); the
///      sample is a fixed array with its count in that word, not a dynamic array with a length word.
///      submitted and seatCount <= MAX_VERIFIERS_PER_JOB = 32, disputeSample < 64 and sampleCount <=
///      MAX_SAMPLES_PER_JOB = 64 fit in 8 bits, disputedMask (one bit per sample) in 64.
struct Submission {
    uint120 feesHeld;
    uint8 seatCount;
    uint8 submitted;
    uint8 disputeSample;
    bool disputePending;
    uint24 reassignments;
    bool expiring;
    uint64 disputedMask;
    uint8 sampleCount;
    uint16[MAX_DRAW_ENTRIES] draw;
    mapping(address verifier => Seat seat) seats;
    mapping(uint256 sampleIndex => mapping(address verifier => address challenger)) challengers;
    address disputeChallenger;
    mapping(uint256 sampleIndex => mapping(address verifier => bool closed)) seatClosed;
    mapping(uint256 sampleIndex => mapping(address whistleblower => bool closed)) challengeClosed;
    address[] pastSeats;
}

/// @notice The submission's assigned verifiers, in seat order: the first `seatCount` ids resolved to
///         their accounts at the StakeManager (one call).
function verifiersOf(Submission storage sub, IStakeManager stakeManager) view returns (address[] memory list) {
    uint256 count = sub.seatCount;
    if (count == 0) return list;
    uint32[] memory ids = new uint32[](count);
    // The ids follow the sample: its count is read once, not per seat; each id decoded as in
    // `verifierIdAt`, inline (a shared helper costs ~90 gas per seat list on the dispute path).
    uint256 entry = sub.sampleCount;
    for (uint256 i; i < count; ++i) {
        ids[i] = (uint32(sub.draw[entry]) << 16) | sub.draw[entry + 1];
        entry += 2;
    }
    // SAFETY: trusted StakeManager view; every stored id was given by it (`verifierIdsOf`).
    list = stakeManager.verifiersById(ids);
}

/// @notice `verifiersOf`, resolved once per library call and kept in `s.seated`: settlement reads the
///         seats many times and never changes them (only `LibAssignment` seats verifiers, and it
///         never reads this cache).
function seatedVerifiers(Submission storage sub, Settlement memory s) view returns (address[] memory list) {
    list = s.seated;
    if (list.length == sub.seatCount) return list;
    list = verifiersOf(sub, s.stakeManager);
    s.seated = list;
}

/// @notice Seats the verifier with StakeManager id `id` after the submission's current seats (at
///         most MAX_SEATS: the draw never fills more than verifiersPerJob <= 32).
function pushVerifier(Submission storage sub, uint32 id) {
    uint256 count = sub.seatCount;
    uint256 entry = sub.sampleCount + 2 * count;
    // The id's high and low halves (a 32-bit id split in two 16-bit entries).
    // forge-lint: disable-next-line(unsafe-typecast)
    sub.draw[entry] = uint16(id >> 16);
    // forge-lint: disable-next-line(unsafe-typecast)
    sub.draw[entry + 1] = uint16(id);
    // SAFETY: count < verifiersPerJob <= MAX_SEATS = 32 (the draw fills at most the held fees' seats).
    // forge-lint: disable-next-line(unsafe-typecast)
    sub.seatCount = uint8(count + 1);
}

/// @notice The submission's sampled segment indices, in sample order (a memory copy of the first
///         `sampleCount` entries of `sub.draw`).
function sampledSegments(Submission storage sub) view returns (uint32[] memory segments) {
    uint256 count = sub.sampleCount;
    segments = new uint32[](count);
    for (uint256 i; i < count; ++i) {
        segments[i] = sub.draw[i];
    }
}

/// @notice Segment index of sample `sampleIndex` (< sampleCount) of the submission's sample.
function segmentAt(Submission storage sub, uint256 sampleIndex) view returns (uint32 segment) {
    segment = sub.draw[sampleIndex];
}

/// @notice Records the sample: `segments` (in sample order, each < MAX_SEGMENTS_BOUND, at most
///         MAX_SAMPLES) and their count. Only before any seat is pushed (the ids follow the sample).
function storeSample(Submission storage sub, uint32[] memory segments, uint256 count) {
    for (uint256 i; i < count; ++i) {
        // SAFETY: a segment index is < N / k <= maxSegments <= MAX_SEGMENTS_BOUND = 2^16 (checked
        // at the JobManager's construction and at postJob).
        // forge-lint: disable-next-line(unsafe-typecast)
        sub.draw[i] = uint16(segments[i]);
    }
    // SAFETY: count <= MAX_SAMPLES = 64.
    // forge-lint: disable-next-line(unsafe-typecast)
    sub.sampleCount = uint8(count);
}

/// @notice StakeManager id of seat `seat` (< seatCount): its two 16-bit entries after the sample.
function verifierIdAt(Submission storage sub, uint256 seat) view returns (uint32 id) {
    uint256 entry = sub.sampleCount + 2 * seat;
    id = (uint32(sub.draw[entry]) << 16) | sub.draw[entry + 1];
}

/// @notice The single-seat rule (docs/SECURITY.md P-39): whether a seat holding `mask` fetches the
///         last sample of `segments` instead of replaying it: the job has more than one segment,
///         the seat holds the last sample, and it does not also hold the sample of the segment
///         before it. Only for one seat per job; the JobManager's draw and the round's view
///         (`fetchOnlyMaskOf`) both read it.
/// @param mask The seat's samples (bit i = sample i).
/// @param segments The job's sample: its segment indices in sample order (`sampledSegments`),
///        at least one, the last being M - 1.
function fetchesLastSample(uint64 mask, uint32[] memory segments) pure returns (bool) {
    uint256 count = segments.length;
    uint32 last = segments[count - 1];
    if (last == 0) return false;
    uint256 lastBit = uint256(1) << (count - 1);
    if (mask & lastBit == 0) return false;
    return count < 2 || segments[count - 2] + 1 != last || mask & (lastBit >> 1) == 0;
}

/// @notice Reject bonds (wei) a reveal with `rejects` non-approvals of the seat's own samples
///         locks from its free verifier stake: one `challengeBond` each but the first, which the
///         seat's lock holds since its draw (`LibPayouts.seatLock`). The JobManager's record
///         (`LibAssignment.recordVerdicts`) locks it; the round's batch (`revealVerdictsFor`) checks
///         the seat's free stake covers it first (docs/SECURITY.md P-38).
function revealBonds(uint256 rejects, uint256 challengeBond) pure returns (uint256 bonds) {
    if (rejects > 1) bonds = (rejects - 1) * challengeBond;
}

/// @notice Whether `seat` only fetches sample `sampleIndex` (the job's last sample, whose final
///         state it checks for availability without replaying it, docs/SECURITY.md P-39).
function fetchesOnly(Submission storage sub, Seat storage seat, uint256 sampleIndex) view returns (bool) {
    return seat.fetchesLast && sampleIndex + 1 == sub.sampleCount;
}

/// @notice What a job's end gives its standing seats (`LibSettlement._payStanding`), in assignment
///         order: `unlocks[i]` of seat i's stake unlocked and `earnings[i]` restaked (both 0 for a
///         seat not standing); `earned` is the earnings' total (wei), sent to the StakeManager
///         first (`LibPayouts.fundStakes`, `releaseSeats`).
struct SeatRelease {
    uint256[] unlocks;
    uint256[] earnings;
    uint256 earned;
}

/// @notice The JobManager's immutables that settlement (`LibSettlement`) needs, and with it the
///         libraries `LibPosting` and `LibAssignment`; `seated` is empty from the JobManager and
///         caches the seats' accounts within one library call (`seatedVerifiers`).
struct Settlement {
    IEscrow escrow;
    IStakeManager stakeManager;
    IShareRegistry shareRegistry;
    IVerificationRound round;
    address admin;
    uint256 solverStake;
    uint256 verifierStake;
    uint256 challengeBond;
    uint256 verifierFee;
    uint256 arbiterFee;
    uint256 jackpot;
    uint64 openWindow;
    uint64 claimsWindow;
    uint64 verdictWindow;
    uint64 revealWindow;
    uint64 challengeWindow;
    uint32 maxReassignments;
    uint32 verifiersPerJob;
    address[] seated;
}
