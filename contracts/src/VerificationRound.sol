// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Contracts
import {VerificationRoundBase} from "./round/VerificationRoundBase.sol";
import {VerificationRoundSigned} from "./round/VerificationRoundSigned.sol";
// Libraries
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {LibCheckpoint} from "./libraries/LibCheckpoint.sol";
// Interfaces
import {IJobManager} from "./interfaces/IJobManager.sol";
import {IVerificationRound} from "./interfaces/IVerificationRound.sol";
// Types
import {RoundJob} from "./types/JobTypes.sol";
import {Role} from "./types/Role.sol";
import {Claims, RoundOutcome} from "./types/RoundTypes.sol";
import {LibRoundWord, RoundPhase, RoundWord, roundHash} from "./types/RoundWord.sol";
import {LibStateHash, StateHash} from "./types/StateHash.sol";
import {LibSubmission, SubmissionId} from "./types/SubmissionId.sol";
import {fetchesLastSample, revealBonds} from "./types/SubmissionTypes.sol";

/// @title VerificationRound
/// @notice Runs the verification round of each submission (docs/FORCED_ERRORS.md): the solver's secret
///         commitment and claims on the sampled segments, the verifiers' sealed verdicts (recorded
///         at the JobManager when revealed), and the forced-error draw revealed with the secret.
/// @dev Holds no tokens: bonds, slashes and jackpots are booked by the JobManager, which reads
///      `outcome` at finalize. Status, solver, deadlines, segments, root and interval are read from
///      the JobManager; the claims, verdict and reveal windows are its immutable params, cached here.
///      Its parts: the state, the JobManager's params and the checks a seal or a reveal shares are
///      in `VerificationRoundBase`; the paths that act on a seat's EIP-712 signature of its seal
///      (`commitVerdictsFor`, `revealVerdictsSigned`, `proveEquivocation`) in
///      `VerificationRoundSigned`; the seats' and the solver's own calls and the views here.
contract VerificationRound is VerificationRoundSigned {
    ////// Constructor //////

    /// @param jobManager_ JobManager served (its params fix the verdict and reveal windows).
    /// @param forcedErrorRateBps_ Share of jobs carrying a forced error (basis points, <= 10_000).
    ///        Reverts JackpotFarmingProfitable unless a solver that abandons every job without a
    ///        forced error loses more than its verifiers win on the forced ones
    ///        (docs/FORCED_ERRORS.md section 5): p * V * jackpot < (1 - p) * solverStake.
    constructor(IJobManager jobManager_, uint256 forcedErrorRateBps_)
        VerificationRoundBase(jobManager_, forcedErrorRateBps_)
    {}

    ////// External: called by the JobManager //////

    /// @inheritdoc IVerificationRound
    function onCommit(SubmissionId submissionId, bytes32 commitment) external {
        _onlyJobManager();
        if (commitment == bytes32(0)) revert ZeroCommitment(submissionId);
        // Announced by the JobManager's CheckpointsCommitted in the same call; its top 208 bits kept.
        _rounds[submissionId] = LibRoundWord.committed(commitment);
    }

    /// @inheritdoc IVerificationRound
    function onReassign(SubmissionId submissionId, uint256 kept) external {
        _onlyJobManager();
        // kept <= MAX_VERIFIERS_PER_JOB = 32: the seats a reassignment kept sealed before.
        _rounds[submissionId] = _rounds[submissionId].withSeals(kept);
        emit VerdictRoundReset(submissionId);
    }

    ////// External: round //////

    /// @inheritdoc IVerificationRound
    function postClaims(SubmissionId submissionId, bytes32[] calldata startHashes, bytes32[] calldata endHashes)
        external
    {
        _postClaims(submissionId, startHashes, endHashes);
    }

    /// @inheritdoc IVerificationRound
    function assignAndPostClaims(
        uint256 jobId,
        bytes32 sampleHash,
        bytes32[] calldata startHashes,
        bytes32[] calldata endHashes
    ) external {
        // SAFETY: trusted JobManager; anyone may assign, and the draw calls back nothing here.
        _JOB_MANAGER.assignVerifiers(jobId);
        uint32[] memory drawn = _postClaims(LibSubmission.id(jobId, msg.sender), startHashes, endHashes);
        // The claims' count matched the draw; their segments must too, or they claim other states.
        if (keccak256(abi.encode(drawn)) != sampleHash) revert SampleMismatch(jobId, sampleHash);
    }

    /// @notice Reverts NotJobManager unless the JobManager is the caller.
    function _onlyJobManager() internal view {
        if (msg.sender != address(_JOB_MANAGER)) revert NotJobManager(msg.sender);
    }

    /// @notice `postClaims`'s checks and record.
    /// @return segments The sampled segments, in sample order.
    function _postClaims(SubmissionId submissionId, bytes32[] calldata startHashes, bytes32[] calldata endHashes)
        internal
        returns (uint32[] memory segments)
    {
        (uint256 jobId, RoundJob memory job) = _verifyingJob(submissionId);
        if (msg.sender != job.solver) revert NotSolver(submissionId, msg.sender);
        if (block.timestamp > job.claimsDeadline) {
            revert OutsideWindow(
                submissionId, job.claimsDeadline - _CLAIMS_WINDOW, job.claimsDeadline, uint64(block.timestamp)
            );
        }
        RoundWord round = _rounds[submissionId];
        if (round.phase() != RoundPhase.Committed) revert ClaimsAlreadyPosted(submissionId);
        segments = _segmentsOf(jobId);
        uint256 samples = segments.length;
        if (startHashes.length != samples) revert LengthMismatch(submissionId, samples, startHashes.length);
        if (endHashes.length != samples) revert LengthMismatch(submissionId, samples, endHashes.length);
        // A sampled segment 0's start needs no check here: the commit proved checkpoint 0 is the
        // job's initHash (docs/SECURITY.md P-7, P-25), and the secret reveal proves every claimed
        // start at its index of the tree, index 0 included (`_prove`), or the solver is slashed.
        for (uint256 i; i < samples; ++i) {
            // The zero end is what a verifier seals when it could not replay: always a reject.
            if (endHashes[i] == bytes32(0)) revert ZeroClaim(submissionId, i);
        }
        // The claims hash takes the secret commitment's word and binds it (no new storage word).
        bytes32 secretCommitment = round.hash();
        _rounds[submissionId] =
            round.claimed(_claimsHash(secretCommitment, startHashes, endHashes), SafeCast.toUint32(block.number));
        emit ClaimsPosted(submissionId, secretCommitment, startHashes, endHashes);
    }

    /// @inheritdoc IVerificationRound
    function commitVerdicts(SubmissionId submissionId, bytes32 commitment) external {
        (, RoundJob memory job) = _verifyingJob(submissionId);
        _commit(submissionId, job, msg.sender, commitment);
    }

    /// @inheritdoc IVerificationRound
    function revealVerdicts(SubmissionId submissionId, bytes32[] calldata ends, bytes32 salt, Claims calldata claims)
        external
    {
        (uint256 jobId, RoundJob memory job) = _verifyingJob(submissionId);
        (uint64 sampleMask, bool revealed) = _checkVerdictReveal(submissionId, jobId, job, msg.sender, ends, salt);
        if (revealed) revert NothingToReveal(submissionId, msg.sender);
        _checkClaims(submissionId, _rounds[submissionId], claims);
        // The JobManager sets the seat's revealed flag in `recordVerdicts`, in this same call: the
        // seat's samples count as covered from then on (`_covered`).
        _recordVerdicts(submissionId, msg.sender, ends, _verdictsOf(sampleMask, ends, claims.endHashes));
    }

    /// @inheritdoc IVerificationRound
    function revealVerdictsFor(
        SubmissionId submissionId,
        address[] calldata verifiers,
        bytes32[][] calldata ends,
        bytes32[] calldata salts,
        Claims calldata claims
    ) external {
        if (ends.length != verifiers.length) {
            revert LengthMismatch(submissionId, verifiers.length, ends.length);
        }
        if (salts.length != verifiers.length) revert LengthMismatch(submissionId, verifiers.length, salts.length);
        (uint256 jobId, RoundJob memory job) = _verifyingJob(submissionId);
        _checkClaims(submissionId, _rounds[submissionId], claims);
        for (uint256 i; i < verifiers.length; ++i) {
            _revealFor(submissionId, jobId, job, verifiers[i], ends[i], salts[i], claims);
        }
    }

    /// @notice One seat's reveal in `revealVerdictsFor` (claims checked by the caller); a seat that
    ///         has revealed already (by itself or an earlier batch) is skipped, so revealing first
    ///         cannot make the batch revert, and so is a seat whose free verifier stake does not
    ///         cover its reject bonds (`RevealSkipped`, docs/SECURITY.md P-38), so a seat that
    ///         unbonds its free stake after handing its reveal over cannot make the batch revert
    ///         either: a covering free stake means the JobManager's lock of the bonds succeeds.
    function _revealFor(
        SubmissionId submissionId,
        uint256 jobId,
        RoundJob memory job,
        address verifier,
        bytes32[] calldata ends,
        bytes32 salt,
        Claims calldata claims
    ) internal {
        (uint64 sampleMask, bool revealed) = _checkVerdictReveal(submissionId, jobId, job, verifier, ends, salt);
        if (revealed) return;
        Verdicts memory verdicts = _verdictsOf(sampleMask, ends, claims.endHashes);
        // The first non-approval's bond is in the seat's lock since its draw: only the others lock.
        uint256 bond = revealBonds(verdicts.ownRejects, _CHALLENGE_BOND);
        if (bond != 0) {
            if (_STAKE_MANAGER.freeStake(verifier, Role.Verifier) < bond) {
                emit RevealSkipped(submissionId, verifier, bond);
                return;
            }
        }
        _recordVerdicts(submissionId, verifier, ends, verdicts);
    }

    /// @notice Verdict-reveal checks: `verifier` sealed, the window is open, one end per sample, and
    ///         the ends and salt open the seal (the job is Verifying: the caller read it with
    ///         `_verifyingJob`). A seat that revealed already returns at once with `revealed` set, for
    ///         the caller to refuse or skip.
    /// @return sampleMask The samples of `verifier`'s own draw (bit i = sample i).
    /// @return revealed True if `verifier` revealed already (nothing else was checked).
    function _checkVerdictReveal(
        SubmissionId submissionId,
        uint256 jobId,
        RoundJob memory job,
        address verifier,
        bytes32[] calldata ends,
        bytes32 salt
    ) internal view returns (uint64 sampleMask, bool revealed) {
        bytes32 sealedHash = _seals[submissionId][verifier];
        uint256 seats;
        uint256 samples;
        // slither-disable-next-line unused-return
        (, sampleMask, revealed, seats, samples) = _JOB_MANAGER.seatOf(submissionId, verifier);
        if (revealed) return (sampleMask, true);
        if (sealedHash == bytes32(0)) revert NothingToReveal(submissionId, verifier);
        {
            // Open at once when every verifier has sealed (nobody is left to copy), else after the
            // verdict deadline; closed after the reveal window. The seal count counts seated
            // verifiers' first seals, so it never exceeds `seats`.
            uint64 opens =
                _allSealed(submissionId, seats) ? job.claimsDeadline - _CLAIMS_WINDOW : job.verdictDeadline + 1;
            uint64 closes = job.verdictDeadline + _REVEAL_WINDOW;
            if (block.timestamp < opens || block.timestamp > closes) {
                revert OutsideWindow(submissionId, opens, closes, uint64(block.timestamp));
            }
            if (ends.length != samples) revert LengthMismatch(submissionId, samples, ends.length);
        }
        if (keccak256(abi.encode(jobId, verifier, ends, salt)) != sealedHash) {
            revert VerdictCommitmentMismatch(submissionId, verifier);
        }
    }

    /// @notice Whether `seats` seats sealed on chain (the round word's seal count).
    function _allSealed(SubmissionId submissionId, uint256 seats) internal view returns (bool) {
        return _rounds[submissionId].seals() >= seats;
    }

    /// @inheritdoc IVerificationRound
    function revealSecret(
        SubmissionId submissionId,
        bytes32 secret,
        bytes32 forcedTrueEnd,
        bytes32[] calldata proof,
        Claims calldata claims
    ) external {
        _revealSecret(submissionId, secret, forcedTrueEnd, proof, claims);
    }

    /// @inheritdoc IVerificationRound
    function revealSecretAndFinalize(
        SubmissionId submissionId,
        bytes32 secret,
        bytes32 forcedTrueEnd,
        bytes32[] calldata proof,
        Claims calldata claims
    ) external {
        uint256 jobId = _revealSecret(submissionId, secret, forcedTrueEnd, proof, claims);
        // Every effect of the reveal is stored first; the JobManager is trusted.
        _JOB_MANAGER.finalize(jobId);
    }

    /// @notice Checks the secret and every claim's proof, stores the draw's outcome and emits
    ///         `SecretRevealed`.
    /// @return jobId The submission's job.
    function _revealSecret(
        SubmissionId submissionId,
        bytes32 secret,
        bytes32 forcedTrueEnd,
        bytes32[] calldata proof,
        Claims calldata claims
    ) internal returns (uint256 jobId) {
        (bool forced, uint256 forcedSample) = _checkedDraw(submissionId, secret, proof, forcedTrueEnd, claims);
        jobId = submissionId.jobIdOf();
        // The outcome takes the claims hash's word (no call needs the claims after the secret):
        // forcedSample < samples <= MAX_SAMPLES_PER_JOB = 64; the tag only with a forced error.
        RoundWord round = _rounds[submissionId];
        _rounds[submissionId] = round.revealed(forced, forcedSample, forced ? bytes12(forcedTrueEnd) : bytes12(0));
        emit SecretRevealed(submissionId, secret, forced, forcedSample);
    }

    ////// External: views //////

    /// @inheritdoc IVerificationRound
    function outcome(SubmissionId submissionId) external view returns (RoundOutcome outcome_, uint256 forcedSample) {
        RoundWord round = _rounds[submissionId];
        RoundPhase phase = round.phase();
        // slither-disable-next-line incorrect-equality
        if (phase == RoundPhase.Revealed) {
            return (round.forced() ? RoundOutcome.Forced : RoundOutcome.Clean, round.forcedSample());
        }
        // No round (never committed): every window is still ahead.
        // slither-disable-next-line incorrect-equality
        if (phase == RoundPhase.None) return (RoundOutcome.Pending, 0);
        uint256 jobId = submissionId.jobIdOf();
        RoundJob memory job = _JOB_MANAGER.roundJobOf(jobId);
        // Not assigned yet: every window is still ahead.
        if (job.verdictDeadline == 0) return (RoundOutcome.Pending, 0);
        // slither-disable-next-line incorrect-equality
        if (phase == RoundPhase.Committed) {
            return (block.timestamp > job.claimsDeadline ? RoundOutcome.NoClaims : RoundOutcome.Pending, 0);
        }
        // A sample without a revealed verdict once the verdict reveals closed (P-27): the secret
        // can no longer be revealed.
        uint64 all = _allSamples(jobId);
        if (_covered(submissionId, round, all) != all) {
            return (
                block.timestamp > uint256(job.verdictDeadline) + _REVEAL_WINDOW
                    ? RoundOutcome.NoVerdicts
                    : RoundOutcome.Pending,
                0
            );
        }
        if (block.timestamp > uint256(job.challengeDeadline) + _REVEAL_WINDOW) return (RoundOutcome.NoReveal, 0);
        return (RoundOutcome.Pending, 0);
    }

    /// @inheritdoc IVerificationRound
    function drawForcedError(SubmissionId submissionId, bytes32 secret)
        external
        view
        returns (bool forced, uint256 sampleIndex)
    {
        uint256 jobId = submissionId.jobIdOf();
        if (jobId == 0) return (false, 0);
        (forced, sampleIndex) = _draw(jobId, secret, _segmentsOf(jobId));
    }

    /// @inheritdoc IVerificationRound
    function verdictCommitmentOf(SubmissionId submissionId, address verifier)
        external
        view
        returns (bytes32 commitment, bool revealed)
    {
        commitment = _seals[submissionId][verifier];
        // slither-disable-next-line unused-return
        (,, revealed,,) = _JOB_MANAGER.seatOf(submissionId, verifier);
    }

    /// @inheritdoc IVerificationRound
    function fetchOnlyMaskOf(SubmissionId submissionId, address verifier) external view returns (uint256 mask) {
        if (!_SINGLE_SEAT) return 0;
        // slither-disable-next-line unused-return
        (, uint64 sampleMask,,, uint256 samples) = _JOB_MANAGER.seatOf(submissionId, verifier);
        if (samples == 0) return 0;
        uint32[] memory segments = _segmentsOf(submissionId.jobIdOf());
        if (fetchesLastSample(sampleMask, segments)) {
            mask = uint256(1) << (samples - 1);
        }
    }

    /// @inheritdoc IVerificationRound
    function forcedEndMatches(SubmissionId submissionId, address verifier) external view returns (bool matches) {
        RoundWord round = _rounds[submissionId];
        if (round.phase() != RoundPhase.Revealed || !round.forced()) return false;
        uint256 f = round.forcedSample();
        bytes12 trueEnd = round.forcedEndTag();
        // The seat's first rejected own sample is a tag in its seat's word; any other, a whole end.
        // SAFETY: trusted JobManager view.
        // slither-disable-next-line incorrect-equality
        if (_JOB_MANAGER.endTagOf(submissionId, verifier) == LibStateHash.endTag(f, trueEnd)) return true;
        bytes32 end = _replayedEnds[submissionId][verifier][f];
        // slither-disable-next-line incorrect-equality
        matches = end != bytes32(0) && bytes12(end) == trueEnd;
    }

    /// @inheritdoc IVerificationRound
    function forcedEndTagOf(SubmissionId submissionId) external view returns (bytes12 tag) {
        RoundWord round = _rounds[submissionId];
        // slither-disable-next-line incorrect-equality
        if (round.phase() == RoundPhase.Revealed) tag = round.forcedEndTag();
    }

    /// @inheritdoc IVerificationRound
    function roundOf(SubmissionId submissionId)
        external
        view
        returns (bytes32 commitment, bool revealed, uint32 committed, uint64 claimsBlock)
    {
        RoundWord round = _rounds[submissionId];
        // slither-disable-next-line incorrect-equality
        revealed = round.phase() == RoundPhase.Revealed;
        // SAFETY: a claims block is kept in 32 bits.
        // forge-lint: disable-next-line(unsafe-typecast)
        claimsBlock = uint64(round.claimsBlock());
        // SAFETY: at most MAX_SEATS = 32 seals.
        // forge-lint: disable-next-line(unsafe-typecast)
        committed = uint32(round.seals());
        if (!revealed) commitment = round.hash();
    }

    /// @inheritdoc IVerificationRound
    function forcedErrorRateBps() external view returns (uint256 rateBps) {
        rateBps = _RATE_BPS;
    }

    /// @inheritdoc IVerificationRound
    function jobManager() external view returns (address) {
        return address(_JOB_MANAGER);
    }

    ////// Public //////

    /// @inheritdoc IVerificationRound
    function forcedClaim(bytes32 trueEnd) public pure returns (bytes32 claim) {
        claim = StateHash.unwrap(StateHash.wrap(trueEnd).forcedClaim());
    }

    ////// Internal //////

    /// @notice Forced-error draw of docs/FORCED_ERRORS.md section 1: forced iff
    ///         draw % 10_000 < rate; the forced sample is drawn among the eligible samples (no
    ///         sampled segment starts where theirs ends), listed in increasing sample index. A last
    ///         sample that a single seat only fetches is eligible too: the forced error there tests
    ///         the fetch (docs/SECURITY.md P-39, E-3).
    function _draw(uint256 jobId, bytes32 secret, uint32[] memory segments)
        internal
        view
        returns (bool forced, uint256 sampleIndex)
    {
        uint256 samples = segments.length;
        // segment indices and counts, not balances or times
        // slither-disable-next-line incorrect-equality
        if (samples == 0) return (false, 0);
        bytes32 draw = keccak256(abi.encode(secret, jobId, segments));
        if (uint256(draw) % BPS >= _RATE_BPS) return (false, 0);
        uint256[] memory eligible = new uint256[](samples);
        uint256 count = 0;
        for (uint256 j; j < samples; ++j) {
            uint256 next = uint256(segments[j]) + 1;
            bool covered = false;
            for (uint256 i; i < samples; ++i) {
                // slither-disable-next-line incorrect-equality
                if (segments[i] == next) {
                    covered = true;
                    break;
                }
            }
            if (!covered) eligible[count++] = j;
        }
        // INVARIANT: the sample with the largest segment is always eligible, so count >= 1.
        forced = true;
        sampleIndex = eligible[uint256(keccak256(abi.encode(draw, uint256(1)))) % count];
    }

    /// @notice Everything `revealSecret` checks before it records the secret: the reveal checks, the
    ///         draw, and a proof of every claim (the forced claim replaced by the true end it hides).
    /// @return forced Whether the draw forces an error.
    /// @return forcedSample Its sample (meaningful if `forced`).
    function _checkedDraw(
        SubmissionId submissionId,
        bytes32 secret,
        bytes32[] calldata proof,
        bytes32 forcedTrueEnd,
        Claims calldata claims
    ) internal view returns (bool forced, uint256 forcedSample) {
        RoundJob memory job;
        uint32[] memory segments;
        {
            uint256 jobId;
            (jobId, job) = _verifyingJob(submissionId);
            _checkSecretReveal(submissionId, jobId, job, secret, claims);
            segments = _segmentsOf(jobId);
            (forced, forcedSample) = _draw(jobId, secret, segments);
        }
        bytes32[] memory endHashes = _provableEnds(submissionId, claims.endHashes, forced, forcedSample, forcedTrueEnd);
        _prove(submissionId, job, segments, proof, claims.startHashes, endHashes);
    }

    /// @notice Secret-reveal checks: window (challengeDeadline, challengeDeadline + revealWindow],
    ///         not yet revealed, claims posted (and passed back unchanged), every sample covered,
    ///         commitment.
    function _checkSecretReveal(
        SubmissionId submissionId,
        uint256 jobId,
        RoundJob memory job,
        bytes32 secret,
        Claims calldata claims
    ) internal view {
        RoundWord round = _rounds[submissionId];
        // slither-disable-next-line incorrect-equality
        if (round.phase() == RoundPhase.Revealed) revert SecretAlreadyRevealed(submissionId);
        uint64 opens = job.challengeDeadline + 1;
        uint64 closes = job.challengeDeadline + _REVEAL_WINDOW;
        if (block.timestamp < opens || block.timestamp > closes) {
            revert OutsideWindow(submissionId, opens, closes, uint64(block.timestamp));
        }
        if (round.phase() != RoundPhase.Claimed) revert ClaimsNotPosted(submissionId);
        _checkClaims(submissionId, round, claims);
        uint256 samples = claims.startHashes.length;
        // SAFETY: samples <= MAX_SAMPLES_PER_JOB = 64.
        uint64 all = uint64((uint256(1) << samples) - 1);
        uint64 uncovered = all & ~_covered(submissionId, round, all);
        if (uncovered != 0) revert SamplesUncovered(submissionId, uncovered);
        // The claims' secret commitment is the one the commit stored (their hash binds its top 208
        // bits, which is all `ClaimsPosted` announced and the claims carry).
        if (roundHash(keccak256(abi.encode(jobId, job.solver, secret))) != claims.secretCommitment) {
            revert SecretCommitmentMismatch(submissionId);
        }
    }

    /// @notice The claimed end hashes with the forced claim, if any, replaced by the true end it
    ///         hides (reverts ForcedClaimMismatch unless it is exactly forcedClaim(forcedTrueEnd)).
    function _provableEnds(
        SubmissionId submissionId,
        bytes32[] calldata claimed,
        bool forced,
        uint256 forcedSample,
        bytes32 forcedTrueEnd
    ) internal pure returns (bytes32[] memory endHashes) {
        endHashes = claimed;
        if (!forced) return endHashes;
        if (endHashes[forcedSample] != forcedClaim(forcedTrueEnd)) {
            revert ForcedClaimMismatch(submissionId, forcedSample);
        }
        endHashes[forcedSample] = forcedTrueEnd;
    }

    /// @notice Bit mask of every sample of the job's assignment (bit i = sample i).
    function _allSamples(uint256 jobId) internal view returns (uint64 all) {
        // SAFETY: samples <= MAX_SAMPLES_PER_JOB = 64.
        all = uint64((uint256(1) << _segmentsOf(jobId).length) - 1);
    }

    /// @notice Sampled segments of the job, in sample order (empty before assignment): the
    ///         JobManager's `segmentsOf`, which does not copy the verifier list as `getAssignment` does.
    function _segmentsOf(uint256 jobId) internal view returns (uint32[] memory segments) {
        segments = _JOB_MANAGER.segmentsOf(jobId);
    }

    /// @notice Reverts InvalidClaimsProof unless `proof` places every `starts[j]` at checkpoint s_j
    ///         and every `ends[j]` at s_j + 1 under the job's root (`LibCheckpoint.verifyMulti`), so
    ///         one index has one state: the end of segment s - 1 and the start of segment s are one
    ///         leaf, proven once, and their claims must be equal.
    /// @dev The sample is in increasing segment order (`LibAssignment`), so the indices s_0, s_0 + 1,
    ///      s_1, s_1 + 1, ... increase, with s_j + 1 = s_(j+1) where two sampled segments touch.
    function _prove(
        SubmissionId submissionId,
        RoundJob memory job,
        uint32[] memory segments,
        bytes32[] calldata proof,
        bytes32[] calldata starts,
        bytes32[] memory ends
    ) internal pure {
        uint256 samples = segments.length;
        uint256 count = 2 * samples;
        for (uint256 j = 1; j < samples; ++j) {
            if (segments[j] == segments[j - 1] + 1) --count;
        }
        uint256[] memory indices = new uint256[](count);
        bytes32[] memory hashes = new bytes32[](count);
        count = 0;
        for (uint256 j; j < samples; ++j) {
            uint256 start = segments[j];
            if (count != 0 && indices[count - 1] == start) {
                if (hashes[count - 1] != starts[j]) revert InvalidClaimsProof(submissionId);
            } else {
                (indices[count], hashes[count]) = (start, starts[j]);
                ++count;
            }
            (indices[count], hashes[count]) = (start + 1, ends[j]);
            ++count;
        }
        if (!LibCheckpoint.verifyMulti(proof, job.merkleRoot, job.totalSteps, job.checkpointInterval, indices, hashes))
        {
            revert InvalidClaimsProof(submissionId);
        }
    }
}
