// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Contracts
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
// Interfaces
import {IJobManager} from "../interfaces/IJobManager.sol";
import {IStakeManager} from "../interfaces/IStakeManager.sol";
import {IVerificationRound} from "../interfaces/IVerificationRound.sol";
// Types
import {JobStatus, Params, RoundJob} from "../types/JobTypes.sol";
import {Claims, SeatVerdicts} from "../types/RoundTypes.sol";
import {RoundPhase, RoundWord, roundHash} from "../types/RoundWord.sol";
import {LibStateHash} from "../types/StateHash.sol";
import {SubmissionId} from "../types/SubmissionId.sol";

/// @title VerificationRoundBase
/// @notice The state of the verification round (docs/FORCED_ERRORS.md) and what its parts share:
///         the per-submission round, the seats' seals and replayed ends, the JobManager's params
///         cached as immutables, and the checks and records of a seal or a reveal. The seats'
///         own calls and the secret are in `VerificationRound`, the EIP-712 signed paths in
///         `VerificationRoundSigned`.
/// @dev Holds no tokens: bonds, slashes and jackpots are booked by the JobManager.
abstract contract VerificationRoundBase is IVerificationRound, EIP712 {
    ////// Types //////

    /// @notice The verdicts a seat's sealed ends imply (`_verdictsOf`), computed before anything is
    ///         stored.
    /// @param approveMask Bit j set = ends[j] is the claimed end (an approval).
    /// @param abstainMask Bit j set = ends[j] is zero (an abstention, P-20).
    /// @param replayedMask Bit j set = ends[j] is a replayed end other than the claim (a rejection).
    /// @param ownRejects Non-approvals on the seat's own samples: the reject bonds its reveal books
    ///        (one challengeBond each; `IJobManager.recordVerdicts` locks all but the first, which
    ///        the seat's lock holds since its draw).
    /// @param tagged 1 + the first sample of the seat's own draw it rejected with a replayed end (0
    ///        if none): that end is kept as a tag in the seat's word at the JobManager
    ///        (`LibStateHash.endTag`), not in `_replayedEnds`.
    struct Verdicts {
        uint256 approveMask;
        uint256 abstainMask;
        uint256 replayedMask;
        uint256 ownRejects;
        uint256 tagged;
    }

    ////// Constants / Immutables //////

    /// @inheritdoc IVerificationRound
    bytes32 public constant FORCED_ERROR_TAG = LibStateHash.FORCED_ERROR_TAG;

    /// @notice Basis points in one (a rate of 10_000 forces an error in every job).
    uint256 internal constant BPS = 10_000;

    IJobManager internal immutable _JOB_MANAGER;
    uint256 internal immutable _RATE_BPS;
    /// @notice The JobManager's verdictWindow (seconds).
    uint64 internal immutable _VERDICT_WINDOW;
    /// @notice The JobManager's claimsWindow (seconds).
    uint64 internal immutable _CLAIMS_WINDOW;
    /// @notice The JobManager's revealWindow (seconds).
    uint64 internal immutable _REVEAL_WINDOW;
    /// @notice The JobManager's challengeBond (wei per non-approval), for the batch's bond check.
    uint256 internal immutable _CHALLENGE_BOND;
    /// @notice The JobManager's StakeManager, whose free verifier stake the reject bonds are locked
    ///         from (the batch's bond check reads it).
    IStakeManager internal immutable _STAKE_MANAGER;
    /// @notice One seat per job (docs/SECURITY.md P-39): the last sample is fetched, not replayed,
    ///         unless the seat also holds the segment before it (`fetchOnlyMaskOf`).
    bool internal immutable _SINGLE_SEAT;

    ////// State //////

    /// @notice Each submission's round, one word (`RoundWord`): from the checkpoints' commit the
    ///         solver's secret commitment, keccak256(abi.encode(jobId, solver, secret)) (`onCommit`
    ///         refuses zero); once the claims are posted the claims hash that binds it,
    ///         keccak256(abi.encode(secretCommitment, startHashes, endHashes)) (`_claimsHash`), with
    ///         the count of seats that sealed on chain and whether one signed reveal covered every
    ///         seat; once the secret is revealed, the forced error's sample and end tag. Its job and
    ///         solver are the submission id itself (`LibSubmission.jobIdOf`, `solverOf`), so no round
    ///         action reads a cold word to find them. A call that needs the claims or the secret
    ///         commitment takes them back as calldata (`Claims`); the claims themselves, with the
    ///         secret commitment, are only in the `ClaimsPosted` event, and the revealed secret only
    ///         in `SecretRevealed`. Which samples are covered is not kept: it is read from the
    ///         JobManager's seats (`_covered`) unless the word says one signed reveal covered all.
    /// @dev The commit creates this word and nothing after it creates another (docs/SECURITY.md,
    ///      "Gas cuts").
    mapping(SubmissionId submissionId => RoundWord round) internal _rounds;
    /// @notice Each verifier's sealed verdicts: keccak256(abi.encode(jobId, verifier, ends, salt)),
    ///         zero if none (`revealVerdictsSigned` stores none). Whether they were revealed is the JobManager's seat flag (`seatOf`),
    ///         set in the same call as the reveal.
    mapping(SubmissionId submissionId => mapping(address verifier => bytes32 commitment)) internal _seals;
    /// @notice End state hash each verifier revealed for each sample it rejected, but the first of its
    ///         own draw: that one is a tag in its seat's word at the JobManager (`LibStateHash.endTag`,
    ///         `IJobManager.endTagOf`), so a reveal rejecting one sample creates no word here.
    mapping(SubmissionId submissionId => mapping(address verifier => mapping(uint256 sampleIndex => bytes32 end)))
        internal _replayedEnds;

    ////// Constructor //////

    /// @param jobManager_ JobManager served (its params fix the verdict and reveal windows).
    /// @param forcedErrorRateBps_ Share of jobs carrying a forced error (basis points, <= 10_000).
    ///        Reverts JackpotFarmingProfitable unless a solver that abandons every job without a
    ///        forced error loses more than its verifiers win on the forced ones
    ///        (docs/FORCED_ERRORS.md section 5): p * V * jackpot < (1 - p) * solverStake.
    constructor(IJobManager jobManager_, uint256 forcedErrorRateBps_) EIP712("veritrain VerificationRound", "1") {
        if (forcedErrorRateBps_ > BPS) revert InvalidRate(forcedErrorRateBps_);
        Params memory params = jobManager_.params();
        uint256 farmingGain = forcedErrorRateBps_ * params.verifiersPerJob * params.jackpot;
        uint256 abandonCost = (BPS - forcedErrorRateBps_) * params.solverStake;
        // No jackpot or no forced error: nothing to farm.
        if (farmingGain != 0 && farmingGain >= abandonCost) {
            revert JackpotFarmingProfitable(farmingGain, abandonCost);
        }
        _JOB_MANAGER = jobManager_;
        _RATE_BPS = forcedErrorRateBps_;
        _VERDICT_WINDOW = params.verdictWindow;
        _CLAIMS_WINDOW = params.claimsWindow;
        _REVEAL_WINDOW = params.revealWindow;
        _CHALLENGE_BOND = params.challengeBond;
        _STAKE_MANAGER = jobManager_.stakeManager();
        _SINGLE_SEAT = params.verifiersPerJob == 1;
    }

    ////// Internal //////

    /// @notice Stores `verifier`'s seal: it holds a seat, the claims are posted, the verdict deadline
    ///         has not passed, the commitment is non-zero and the seat has neither sealed nor
    ///         revealed (`revealVerdictsSigned` reveals a seat without storing its seal).
    function _commit(SubmissionId submissionId, RoundJob memory job, address verifier, bytes32 commitment) internal {
        // slither-disable-next-line unused-return
        (bool assigned,, bool revealed,,) = _JOB_MANAGER.seatOf(submissionId, verifier);
        if (!assigned) revert NotAssignedVerifier(submissionId, verifier);
        _requireBeforeVerdictDeadline(submissionId, job);
        RoundWord round = _rounds[submissionId];
        if (round.phase() != RoundPhase.Claimed) revert ClaimsNotPosted(submissionId);
        if (commitment == bytes32(0)) revert ZeroCommitment(submissionId);
        mapping(address verifier => bytes32 commitment) storage seals = _seals[submissionId];
        if (revealed || seals[verifier] != bytes32(0)) revert VerdictAlreadyCommitted(submissionId, verifier);
        seals[verifier] = commitment;
        _rounds[submissionId] = round.withSeals(round.seals() + 1);
        emit VerdictsCommitted(submissionId, verifier, commitment);
    }

    /// @notice Records `verifier`'s revealed verdicts (`_seatVerdicts`) at the JobManager, which
    ///         locks the reject bonds from `verifier`'s free verifier stake.
    function _recordVerdicts(
        SubmissionId submissionId,
        address verifier,
        bytes32[] calldata ends,
        Verdicts memory verdicts
    ) internal {
        SeatVerdicts[] memory seats = new SeatVerdicts[](1);
        seats[0] = _seatVerdicts(submissionId, verifier, ends, verdicts);
        _recordSeats(submissionId, seats, _rounds[submissionId]);
    }

    /// @notice Records `seats`' verdicts at the JobManager (one call) and stores `round`, the round's
    ///         word as the caller leaves it (its claims posted), in one write: with the all-covered
    ///         flag set when every seat of the draw has then revealed (every sample is in some seat's
    ///         own draw, P-27, so `_covered` need not read the seats again).
    function _recordSeats(SubmissionId submissionId, SeatVerdicts[] memory seats, RoundWord round) internal {
        // SAFETY: the JobManager is trusted.
        if (_JOB_MANAGER.recordVerdicts(submissionId, seats)) round = round.withAllCovered(true);
        _rounds[submissionId] = round;
    }

    /// @notice Keeps the end of each sample in `verdicts.replayedMask` for the forced-error check (the
    ///         seat's first rejected own sample as a tag, `LibStateHash.endTag`; the others whole) and
    ///         emits `verifier`'s revealed verdicts.
    /// @return seat What the JobManager records of the seat (`IJobManager.recordVerdicts`): its
    ///         approvals, abstentions and the tag.
    function _seatVerdicts(
        SubmissionId submissionId,
        address verifier,
        bytes32[] calldata ends,
        Verdicts memory verdicts
    ) internal returns (SeatVerdicts memory seat) {
        uint256 tagged = verdicts.tagged;
        bytes5 tag = tagged == 0 ? bytes5(0) : LibStateHash.endTag(tagged - 1, bytes12(ends[tagged - 1]));
        // the tagged sample's bit is cleared: its end rides in the seat's word
        uint256 replayed = tagged == 0 ? verdicts.replayedMask : verdicts.replayedMask & ~(uint256(1) << (tagged - 1));
        for (uint256 j; replayed >> j != 0; ++j) {
            if ((replayed >> j) & 1 == 1) _replayedEnds[submissionId][verifier][j] = ends[j];
        }
        emit VerdictsRevealed(submissionId, verifier, ends, verdicts.approveMask);
        seat = SeatVerdicts({
            verifier: verifier, approveMask: verdicts.approveMask, abstainMask: verdicts.abstainMask, endTag: tag
        });
    }

    /// @notice Samples covered (bit i = sample i): some seat of the current draw whose own draw
    ///         holds the sample revealed verdicts that stand (docs/SECURITY.md P-27). Every sample
    ///         once every seat of the draw revealed (the word's flag, set by the reveal that
    ///         completed them, `_recordSeats`, and cleared when a seat's verdicts are voided); else
    ///         read from the JobManager's seats, those assigned (a voided seat is not) that revealed.
    /// @param all Bit mask of every sample (bit i = sample i).
    function _covered(SubmissionId submissionId, RoundWord round, uint64 all) internal view returns (uint64 covered) {
        if (round.allCovered()) return all;
        // slither-disable-next-line unused-return
        (address[] memory seats,) = _JOB_MANAGER.getAssignment(submissionId.jobIdOf());
        for (uint256 i; i < seats.length; ++i) {
            // slither-disable-next-line unused-return
            (bool assigned, uint64 sampleMask, bool revealed,,) = _JOB_MANAGER.seatOf(submissionId, seats[i]);
            if (assigned && revealed) covered |= sampleMask;
        }
    }

    /// @notice The submission's job, reverting unless the submission has a round, is its job's
    ///         active one and the job is Verifying.
    ///         A Verifying job's solver committed, so its round exists.
    function _verifyingJob(SubmissionId submissionId) internal view returns (uint256 jobId, RoundJob memory job) {
        jobId = submissionId.jobIdOf();
        address solver = submissionId.solverOf();
        if (jobId == 0 || solver == address(0)) revert UnknownSubmission(submissionId);
        job = _JOB_MANAGER.roundJobOf(jobId);
        if (job.solver != solver) revert UnknownSubmission(submissionId);
        if (job.status != JobStatus.Verifying) revert WrongJobStatus(jobId, uint8(job.status));
    }

    /// @notice The verdicts implied by a verifier's sealed ends, computed before anything is
    ///         stored: sample j is approved iff ends[j] is the claimed end, an abstention iff ends[j]
    ///         is zero (no data, P-20), else rejected (its end is kept for the forced-error check; the
    ///         first such sample of the seat's own draw is `tagged`).
    /// @param sampleMask The seat's own draw (bit j = sample j).
    /// @param claimed The posted end hashes (checked against the stored claims hash by the caller).
    /// @return verdicts Approvals, abstentions, replayed ends and the seat's own non-approvals.
    function _verdictsOf(uint64 sampleMask, bytes32[] calldata ends, bytes32[] calldata claimed)
        internal
        pure
        returns (Verdicts memory verdicts)
    {
        uint256 samples = ends.length;
        for (uint256 j; j < samples; ++j) {
            if (ends[j] == claimed[j]) {
                verdicts.approveMask |= uint256(1) << j;
                continue;
            }
            if (ends[j] != bytes32(0)) verdicts.replayedMask |= uint256(1) << j;
            else verdicts.abstainMask |= uint256(1) << j;
            if ((sampleMask >> j) & 1 == 0) continue;
            ++verdicts.ownRejects;
            if (verdicts.tagged == 0 && ends[j] != bytes32(0)) verdicts.tagged = j + 1;
        }
    }

    /// @notice Reverts after the verdict deadline (claims and sealed verdicts share this window).
    function _requireBeforeVerdictDeadline(SubmissionId submissionId, RoundJob memory job) internal view {
        if (block.timestamp > job.verdictDeadline) {
            revert OutsideWindow(
                submissionId, job.verdictDeadline - _VERDICT_WINDOW, job.verdictDeadline, uint64(block.timestamp)
            );
        }
    }

    /// @notice Reverts ClaimsMismatch unless the round's claims are posted and `claims` hash to the
    ///         claims hash it keeps (its top 208 bits, `roundHash`), so the calldata copy, its secret
    ///         commitment included, is exactly what the solver posted.
    function _checkClaims(SubmissionId submissionId, RoundWord round, Claims calldata claims) internal pure {
        if (
            round.phase() != RoundPhase.Claimed
                || roundHash(_claimsHash(claims.secretCommitment, claims.startHashes, claims.endHashes)) != round.hash()
        ) {
            revert ClaimsMismatch(submissionId);
        }
    }

    /// @notice keccak256(abi.encode(secretCommitment, startHashes, endHashes)): the claims hash the
    ///         round stores in place of the secret commitment it binds.
    function _claimsHash(bytes32 secretCommitment, bytes32[] calldata startHashes, bytes32[] calldata endHashes)
        internal
        pure
        returns (bytes32 hash)
    {
        hash = keccak256(abi.encode(secretCommitment, startHashes, endHashes));
    }
}
