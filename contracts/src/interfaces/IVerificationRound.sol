// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Types
import {Claims, RoundOutcome, SignedReveal} from "../types/RoundTypes.sol";
import {SubmissionId} from "../types/SubmissionId.sol";

/// @title IVerificationRound
/// @notice The verification round of a job (docs/FORCED_ERRORS.md): the solver's secret commitment
///         and claims on the sampled segments, the verifiers' sealed (commit-reveal) verdicts, and
///         the forced-error draw revealed with the solver's secret. Verdicts are recorded at the
///         JobManager (`recordVerdicts`) when revealed; the JobManager reads `outcome` at finalize.
interface IVerificationRound {
    ////// Errors //////

    /// @notice Thrown when a submission has no round (its checkpoints were never committed) or is no
    ///         longer its job's active submission.
    /// @param submissionId Submission.
    error UnknownSubmission(SubmissionId submissionId);

    /// @notice Thrown when a JobManager-only entry point is called by another account.
    error NotJobManager(address caller);
    /// @notice Thrown when the forced-error rate is above 10_000 basis points.
    error InvalidRate(uint256 rateBps);
    /// @notice Thrown when a secret or verdict commitment is zero.
    error ZeroCommitment(SubmissionId submissionId);
    /// @notice Thrown when the job is not in the status the action needs (JobStatus as uint8).
    error WrongJobStatus(uint256 jobId, uint8 status);
    /// @notice Thrown when the caller is not the job's solver.
    error NotSolver(SubmissionId submissionId, address caller);
    /// @notice Thrown when the caller is not an assigned verifier of the job.
    error NotAssignedVerifier(SubmissionId submissionId, address caller);
    /// @notice Thrown when claims are posted twice.
    error ClaimsAlreadyPosted(SubmissionId submissionId);
    /// @notice Thrown when a claimed end state hash is zero (a verifier that could not replay seals
    ///         the zero hash, which must always be a reject).
    error ZeroClaim(SubmissionId submissionId, uint256 sampleIndex);
    /// @notice Thrown when a verdict commitment is attempted before the solver posted claims.
    error ClaimsNotPosted(SubmissionId submissionId);
    /// @notice Thrown when claims passed as calldata do not hash to the posted ones (or none were
    ///         posted).
    error ClaimsMismatch(SubmissionId submissionId);
    /// @notice Thrown when a claim or sealed-end array does not have one entry per sampled segment.
    error LengthMismatch(SubmissionId submissionId, uint256 expected, uint256 actual);
    /// @notice Thrown when `assignAndPostClaims`'s claims are for another sample than the draw.
    /// @param jobId Job.
    /// @param sampleHash The hash the caller gave (keccak256(abi.encode(segments))).
    error SampleMismatch(uint256 jobId, bytes32 sampleHash);
    /// @notice Thrown when a verifier commits twice, or after its verdicts were revealed (by
    ///         `revealVerdictsSigned`, which stores no seal).
    error VerdictAlreadyCommitted(SubmissionId submissionId, address verifier);
    /// @notice Thrown when a verifier reveals without a commitment, or twice.
    error NothingToReveal(SubmissionId submissionId, address verifier);
    /// @notice Thrown when revealed verdicts do not hash to the commitment.
    error VerdictCommitmentMismatch(SubmissionId submissionId, address verifier);
    /// @notice Thrown when an action is attempted outside its window [opens, closes] (seconds).
    error OutsideWindow(SubmissionId submissionId, uint64 opens, uint64 closes, uint64 nowTs);
    /// @notice Thrown when the revealed secret does not hash to the secret commitment.
    error SecretCommitmentMismatch(SubmissionId submissionId);
    /// @notice Thrown when the secret is revealed twice.
    error SecretAlreadyRevealed(SubmissionId submissionId);
    /// @notice Thrown when the secret reveal's multiproof does not place every claimed start and end
    ///         (the forced claim replaced by its true end) at its checkpoint under the job's root, or
    ///         when two adjacent samples claim two different states for the checkpoint they share.
    error InvalidClaimsProof(SubmissionId submissionId);
    /// @notice Thrown when the forced sample's end claim is not the forced claim of `forcedTrueEnd`.
    error ForcedClaimMismatch(SubmissionId submissionId, uint256 sampleIndex);
    /// @notice Thrown when the secret is revealed while some sample has no revealed verdict of a seat
    ///         whose own draw holds it (docs/SECURITY.md P-27: verifiers are drawn again for those
    ///         samples; the secret must stay hidden from them).
    /// @param uncoveredMask Bit i set = sample i has no revealed verdict.
    error SamplesUncovered(SubmissionId submissionId, uint64 uncoveredMask);
    /// @notice Thrown at construction when jackpot farming would pay (docs/FORCED_ERRORS.md section
    ///         5): rateBps * V * jackpot must be below (10_000 - rateBps) * solverStake.
    /// @param farmingGain rateBps * verifiersPerJob * jackpot (bps * wei).
    /// @param abandonCost (10_000 - rateBps) * solverStake (bps * wei).
    error JackpotFarmingProfitable(uint256 farmingGain, uint256 abandonCost);

    /// @notice A seal submitted on a seat's behalf carries no valid EIP-712 `Seal` signature of that
    ///         seat (an EOA's ECDSA signature or an ERC-1271 contract's approval).
    error InvalidSealSignature(SubmissionId submissionId, address verifier);

    /// @notice Thrown by `revealVerdictsSigned` once some seat of the current draw has sealed on
    ///         chain (`commitVerdicts`, `commitVerdictsFor`, an earlier `revealVerdictsSigned`, or a
    ///         seat kept from an earlier draw): a seat could then seal after seeing this call's ends.
    error SealsOnChain(SubmissionId submissionId);

    /// @notice Thrown by `proveEquivocation` when the two seals prove nothing: the same commitment
    ///         twice, a zero commitment, or an unsigned other seal that is not the seat's stored one.
    error NotEquivocation(SubmissionId submissionId, address verifier);

    ////// Events //////

    /// @notice The solver posted its claims on the sampled segments (state hashes, bytes32). The
    ///         round keeps only the top 208 bits of keccak256(abi.encode(secretCommitment,
    ///         startHashes, endHashes)), in the word that held the secret commitment's
    ///         (`RoundWord`): readers take the claims and the secret commitment from this event.
    /// @param secretCommitment The top 208 bits of the solver's secret commitment (low 48 bits zero,
    ///        `roundHash`): what the round kept of it, and what `Claims.secretCommitment` carries.
    event ClaimsPosted(
        SubmissionId indexed submissionId, bytes32 secretCommitment, bytes32[] startHashes, bytes32[] endHashes
    );
    /// @notice A verifier sealed its verdicts on chain (`commitVerdicts`, `commitVerdictsFor`; a seal
    ///         `revealVerdictsSigned` checks is only in that call's calldata).
    event VerdictsCommitted(SubmissionId indexed submissionId, address indexed verifier, bytes32 commitment);
    /// @notice A verifier revealed the end state hashes it replayed, and the verdicts they imply were
    ///         recorded at the JobManager in the same call: this is the one record of a seat's
    ///         reveal (the JobManager emits none of its own, docs/SECURITY.md, "Gas cuts"), with
    ///         `IJobManager.VerdictsAbstained` when some non-approvals are abstentions and the
    ///         StakeManager's `StakesLocked` for the reject bonds (challengeBond per non-approval
    ///         of the seat's own samples but the first, which the seat's lock holds since its
    ///         draw: none for a seat with at most one).
    /// @param ends One end state hash per sampled segment, in sample order (zero: abstained); empty
    ///        for a `revealVerdictsSigned` entry that carried none (it opened the claimed ends: every
    ///        sample approved, `approveMask` has one bit per sample).
    /// @param approveMask Bit j set = it approved sample j (ends[j] == endHashes[j] of
    ///        `ClaimsPosted`); bits outside the seat's own draw (`IJobManager.VerifiersAssigned`)
    ///        are ignored by the JobManager. No bit at or above the sample count.
    event VerdictsRevealed(
        SubmissionId indexed submissionId, address indexed verifier, bytes32[] ends, uint256 approveMask
    );
    /// @notice `revealVerdictsFor` skipped a seat whose reject bonds (`bond` wei) its free verifier
    ///         stake does not cover: the batch goes on without it, and the seat keeps its seal and may
    ///         still reveal itself in the window (docs/SECURITY.md P-38).
    event RevealSkipped(SubmissionId indexed submissionId, address indexed verifier, uint256 bond);
    /// @notice Someone proved that `verifier` signed two different seals for one submission
    ///         (`proveEquivocation`); the JobManager slashed the seat and voided its verdicts
    ///         (`IJobManager.VerifierEquivocated`). The prover is paid nothing.
    /// @param submissionId Submission.
    /// @param verifier The seat that signed both seals.
    /// @param prover The caller.
    /// @param commitment The signed seal.
    /// @param otherCommitment The other seal (signed, or the seat's stored one).
    event EquivocationProven(
        SubmissionId indexed submissionId,
        address indexed verifier,
        address indexed prover,
        bytes32 commitment,
        bytes32 otherCommitment
    );
    /// @notice Every assigned verifier stayed silent; the sealed-verdict counts were reset for the
    ///         verifiers drawn next (`IJobManager.VerifiersReassigning`).
    event VerdictRoundReset(SubmissionId indexed submissionId);
    /// @notice The solver revealed its secret; `forced` tells whether `forcedSample` is a forced error.
    event SecretRevealed(SubmissionId indexed submissionId, bytes32 secret, bool forced, uint256 forcedSample);

    ////// External: called by the JobManager //////

    /// @notice Records the solver's secret commitment; called by `JobManager.commitCheckpoints`,
    ///         whose `IJobManager.CheckpointsCommitted` carries the commitment (this emits nothing).
    /// @param submissionId Submission (jobId << 160 | solver).
    /// @param commitment keccak256(abi.encode(jobId, solver, secret)); non-zero.
    function onCommit(SubmissionId submissionId, bytes32 commitment) external;

    /// @notice Resets the sealed-verdict count of a submission some of whose samples no revealed
    ///         verdict covers, so that the freshly drawn verifiers start a new verdict round on the
    ///         same claims next to the `kept` seats that revealed (their verdicts and the samples
    ///         they cover stay); called by `JobManager.finalize`. The silent verifiers' seals stay
    ///         but can never be recorded.
    /// @param submissionId Submission.
    /// @param kept Seats kept from the previous draw (each revealed).
    function onReassign(SubmissionId submissionId, uint256 kept) external;

    ////// External: round //////

    /// @notice Solver posts its claims on the q sampled segments, by the job's claims deadline.
    ///         Reverts ZeroClaim if an end hash is zero. A sampled segment 0's start is not checked
    ///         here: the secret reveal proves it at index 0 of the tree, which the commit proved is
    ///         the job's initHash.
    /// @param startHashes State hash at step s_j*k for each sample j (q entries).
    /// @param endHashes Claimed state hash at step (s_j+1)*k for each sample j (q entries, non-zero).
    function postClaims(SubmissionId submissionId, bytes32[] calldata startHashes, bytes32[] calldata endHashes)
        external;

    /// @notice Solver of job `jobId` assigns its verifiers (`IJobManager.assignVerifiers`, which
    ///         anyone may call) and posts its claims on the sample that draw makes, in one
    ///         transaction: one intrinsic gas and the job's reads paid once (docs/SECURITY.md, "Gas
    ///         cuts"). The solver learns the sample before sending, as it would between the two
    ///         calls: the draw's seed is the committed randomness block's hash and the verifiers are
    ///         those the StakeManager's view `drawVerifiers` gives now. Reverts, and assigns
    ///         nothing, where either call would: a caller other than the job's solver
    ///         (UnknownSubmission), a job already assigned (IJobManager.UnexpectedJobStatus) or
    ///         whose randomness block is older than 256 blocks (the re-anchoring that
    ///         `assignVerifiers` alone makes leaves the job Committed: WrongJobStatus), claims of
    ///         another count than the drawn sample (LengthMismatch); and SampleMismatch when the
    ///         draw is not the sample the claims were made for (the verifier set moved since the
    ///         solver's prediction), so claims are never recorded for other segments.
    /// @param jobId Job (Committed, its randomness block mined; first assignment only).
    /// @param sampleHash keccak256(abi.encode(segments)) of the sample the claims are for
    ///        (`uint32[]` segment indices, increasing, as `IJobManager.segmentsOf` returns them).
    /// @param startHashes As in `postClaims`, one per sample, in sample order.
    /// @param endHashes As in `postClaims`.
    function assignAndPostClaims(
        uint256 jobId,
        bytes32 sampleHash,
        bytes32[] calldata startHashes,
        bytes32[] calldata endHashes
    ) external;

    /// @notice Assigned verifier seals its verdicts, after the claims and by the verdict deadline
    ///         (claimsDeadline + verdictWindow, so at least verdictWindow after the claims). A seat
    ///         whose verdicts were revealed already (`revealVerdictsSigned`) cannot seal:
    ///         VerdictAlreadyCommitted.
    /// @param commitment keccak256(abi.encode(jobId, verifier, ends, salt)) (see `revealVerdicts`).
    function commitVerdicts(SubmissionId submissionId, bytes32 commitment) external;

    /// @notice Assigned verifier reveals the end state hashes it sealed; sample j is approved iff
    ///         ends[j] equals the claimed endHashes[j], else rejected. The verdicts are recorded at
    ///         the JobManager, which locks one challengeBond per reject of its own samples but the
    ///         first (held by the seat's lock since its draw: verifierStake + challengeBond) from
    ///         the verifier's free verifier stake (reverts InsufficientFreeStake when short). The end of a rejected sample is kept: on a forced error it
    ///         is compared with the solver's true end (docs/FORCED_ERRORS.md section 3), so only a
    ///         replay earns the jackpot and a forced claim never hides a wrong segment.
    /// @param ends One state hash per sample: the end of the verifier's replay of segment s_j from
    ///        startHashes[j], or zero when it could not replay (an unavailable or mismatched start).
    /// @param salt The salt of the commitment.
    /// @param claims The posted claims and secret commitment (from `ClaimsPosted`); reverts
    ///        ClaimsMismatch unless they hash to the stored claims hash (`roundOf`).
    function revealVerdicts(SubmissionId submissionId, bytes32[] calldata ends, bytes32 salt, Claims calldata claims)
        external;

    /// @notice Anyone submits the sealed verdicts of several assigned verifiers in one transaction,
    ///         each signed by its seat (EIP-712 `Seal(bytes32 submissionId,bytes32 commitment)` in
    ///         this contract's domain, `sealDigest`). Each seal is checked and stored exactly as by
    ///         `commitVerdicts` from that seat; a seat that has sealed already (by itself or an
    ///         earlier batch) is skipped, so no seat can make a batch revert by sealing first, and no
    ///         aggregator can censor a seat, which may always call `commitVerdicts` itself.
    /// @dev Reverts LengthMismatch (arrays of different lengths), InvalidSealSignature, and every
    ///      error of `commitVerdicts` for the first offending seat.
    /// @param verifiers The seats, any order.
    /// @param commitments Per seat, its `commitVerdicts` commitment.
    /// @param signatures Per seat, its signature of `sealDigest(submissionId, commitment)` (65-byte
    ///        ECDSA for an EOA; any bytes its ERC-1271 `isValidSignature` accepts for a contract).
    function commitVerdictsFor(
        SubmissionId submissionId,
        address[] calldata verifiers,
        bytes32[] calldata commitments,
        bytes[] calldata signatures
    ) external;

    /// @notice Anyone reveals the sealed verdicts of several seats in one transaction: each reveal is
    ///         checked and recorded exactly as by `revealVerdicts` from that seat (its reject bonds are
    ///         locked from that seat's stake). No signature is needed: a seal commits to the seat's address,
    ///         ends and secret salt, so only a holder of the salt the seat handed out can open it, and
    ///         it opens to the verdicts the seat sealed. A seat that has revealed already is skipped,
    ///         and so is a seat whose free verifier stake does not cover its reject bonds
    ///         (`RevealSkipped`; it may still reveal itself), so no seat can make the batch revert
    ///         after handing its reveal over.
    /// @dev Reverts LengthMismatch, ClaimsMismatch, and every error of `revealVerdicts` for the first
    ///      offending seat.
    /// @param verifiers The seats, any order.
    /// @param ends Per seat, its sealed ends (one per sample).
    /// @param salts Per seat, its salt.
    /// @param claims The posted claims, once for every seat.
    function revealVerdictsFor(
        SubmissionId submissionId,
        address[] calldata verifiers,
        bytes32[][] calldata ends,
        bytes32[] calldata salts,
        Claims calldata claims
    ) external;

    /// @notice Anyone seals and reveals the verdicts of EVERY seat in one transaction, storing no
    ///         seal: each entry's seal is recomputed from its opening, keccak256(abi.encode(jobId,
    ///         verifier, ends, salt)), its EIP-712 signature checked over it as in
    ///         `commitVerdictsFor` (no `VerdictsCommitted`: the seal is the hash of the opening in
    ///         this call's calldata, its ends in the seat's `VerdictsRevealed`), and its reveal recorded
    ///         exactly as by `revealVerdicts` from that seat (its reject bonds are locked from that
    ///         seat's stake). Only while no seat of the draw has sealed on chain (else SealsOnChain) and by
    ///         the verdict deadline, so no seat is left that could seal after seeing these ends; the
    ///         round then counts every seat as sealed. A seat that signs a second seal for the
    ///         submission is slashed on the proof of both (`proveEquivocation`). An entry with no
    ///         ends opens the claimed ends (a seat that approved every sample replayed exactly them):
    ///         its seal is recomputed over them, so only a seat that signed them passes.
    /// @dev Reverts SealsOnChain, OutsideWindow, ClaimsMismatch, LengthMismatch (not one entry per
    ///      seat, or ends neither empty nor one per sample), NotAssignedVerifier, InvalidSealSignature, and the
    ///      JobManager's VerdictsAlreadySubmitted for a seat named twice. Unlike
    ///      `revealVerdictsFor`, no seat is skipped: a seat whose reject bonds its free stake cannot
    ///      cover reverts the whole call (InsufficientFreeStake) (skipped, it could seal after seeing the others' ends).
    /// @param reveals One entry per seat of the current draw, any order.
    /// @param claims The posted claims, once for every seat.
    function revealVerdictsSigned(SubmissionId submissionId, SignedReveal[] calldata reveals, Claims calldata claims)
        external;

    /// @notice Anyone proves that `verifier` signed two different seals for one submission: the
    ///         JobManager slashes its seat one verifierStake into the jackpot pool and voids its
    ///         verdicts (`IJobManager.slashEquivocation`); the prover is paid nothing, so an
    ///         equivocator proving itself loses as much. An honest seat hands its opening to the
    ///         aggregator only once it holds every seat's signed seal, so a seat that copies the
    ///         opened ends must sign a second seal, and the two signatures are the proof. A sample
    ///         that only the voided seat's own draw held is uncovered again: the secret cannot be
    ///         revealed and the sample is drawn again (docs/SECURITY.md P-27), never paid unverified.
    /// @dev Reverts NotEquivocation (equal or zero commitments, or an unsigned other seal that is
    ///      not the seat's stored one), InvalidSealSignature, and the JobManager's refusals: the
    ///      job left Verifying or its challenge deadline passed, or the seat has not revealed or
    ///      was slashed already (IJobManagerErrors.SeatNotSlashable). A seal signs the submission
    ///      id: a seal of another submission proves nothing here.
    /// @param verifier The seat.
    /// @param commitment One seal.
    /// @param signature `verifier`'s signature of `sealDigest(submissionId, commitment)`.
    /// @param otherCommitment The other seal.
    /// @param otherSignature `verifier`'s signature of `sealDigest(submissionId, otherCommitment)`,
    ///        or empty when `otherCommitment` is the seal the seat stored on chain.
    function proveEquivocation(
        SubmissionId submissionId,
        address verifier,
        bytes32 commitment,
        bytes calldata signature,
        bytes32 otherCommitment,
        bytes calldata otherSignature
    ) external;

    /// @notice Reveals the solver's secret after the challenge deadline and proves every claim
    ///         against the job's Merkle root (docs/FORCED_ERRORS.md section 2). Reverts
    ///         SamplesUncovered while some sample has no revealed verdict (P-27).
    /// @param secret The committed secret.
    /// @param forcedTrueEnd Committed end state hash of the forced sample (ignored if none).
    /// @param proof One multiproof (`LibCheckpoint.verifyMulti`) of every claimed checkpoint: the
    ///        start s and end s + 1 of each sampled segment s, in increasing index order, an index
    ///        shared by adjacent samples once (their claims must agree there), the forced claim
    ///        replaced by `forcedTrueEnd`. Reverts InvalidClaimsProof unless it proves them all.
    /// @param claims The posted claims and secret commitment (from `ClaimsPosted`); reverts
    ///        ClaimsMismatch unless they hash to the stored claims hash (`roundOf`).
    function revealSecret(
        SubmissionId submissionId,
        bytes32 secret,
        bytes32 forcedTrueEnd,
        bytes32[] calldata proof,
        Claims calldata claims
    ) external;

    /// @notice `revealSecret`, then `JobManager.finalize` of the job in the same transaction (one
    ///         transaction fewer on the happy path, and the job's words are warm; the secret reveal
    ///         opens after the challenge deadline, when finalize may run). Reverts with any error of
    ///         either; a caller whose finalize fails sends `revealSecret` alone.
    function revealSecretAndFinalize(
        SubmissionId submissionId,
        bytes32 secret,
        bytes32 forcedTrueEnd,
        bytes32[] calldata proof,
        Claims calldata claims
    ) external;

    ////// Views //////

    /// @notice Outcome of the job's round for `JobManager.finalize`.
    /// @return outcome See RoundOutcome.
    /// @return forcedSample Sample index of the forced error (meaningful only for Forced).
    function outcome(SubmissionId submissionId) external view returns (RoundOutcome outcome, uint256 forcedSample);

    /// @notice The forced-error draw for `secret` on job `jobId` (pure function of the secret and
    ///         the sample; used by solvers and tests to cross-check their own computation).
    ///         (false, 0) before the sample is drawn.
    function drawForcedError(SubmissionId submissionId, bytes32 secret)
        external
        view
        returns (bool forced, uint256 sampleIndex);

    /// @notice Samples of `verifier`'s own draw that it fetches instead of replaying: with one seat
    ///         per job (docs/SECURITY.md P-39) the last sample, unless the seat also holds the
    ///         segment before it. The seat fetches the final state (served while the job is sealed),
    ///         checks its hash against the claim, keeps it and seals that hash: an availability
    ///         check, never slashed as an approval of the segment. Zero otherwise.
    /// @param submissionId Submission.
    /// @param verifier Verifier.
    /// @return mask Sample bitmap (at most the last sample's bit).
    function fetchOnlyMaskOf(SubmissionId submissionId, address verifier) external view returns (uint256 mask);

    /// @notice Whether the round carries a forced error and `verifier` revealed, for the forced
    ///         sample, the solver's true end (proven against the Merkle root at `revealSecret`):
    ///         evidence that it replayed the forced segment and that the solver's committed end of
    ///         it agrees with that replay. Compared on the first 96 bits, all the round keeps of the
    ///         true end, or on the seat's 40-bit tag of them where the forced sample is the first the
    ///         seat rejected in its own draw (`IJobManager.endTagOf`, `LibStateHash.endTag`: 39 bits
    ///         of keccak256 bound to the sample index), all its reveal kept; either match counts.
    ///         The end is hidden until the secret is revealed, after every verdict, so a seat that
    ///         did not replay matches with probability at most 2^-39 (and loses the forced sample's
    ///         dispute otherwise), and one that knows the end gains nothing from revealing another
    ///         end with the same tag. The whole revealed ends are in the `VerdictsRevealed` events.
    function forcedEndMatches(SubmissionId submissionId, address verifier) external view returns (bool matches);

    /// @notice The first 96 bits of the solver's true end of the forced sample, revealed with the
    ///         secret (zero unless the round carries a forced error): what `forcedEndMatches`
    ///         compares with, whole ends on their first 96 bits, seat tags through
    ///         `LibStateHash.endTag(forcedSample, tag)`.
    /// @param submissionId Submission.
    /// @return tag The true end's first 96 bits.
    function forcedEndTagOf(SubmissionId submissionId) external view returns (bytes12 tag);

    /// @notice The forced claim of a true end state hash: keccak256(abi.encodePacked(FORCED_ERROR_TAG, trueEnd)).
    function forcedClaim(bytes32 trueEnd) external pure returns (bytes32 claim);

    /// @notice The EIP-712 digest a seat signs to let anyone submit its seal (`commitVerdictsFor`,
    ///         `revealVerdictsSigned`; two of them for one submission prove an equivocation):
    ///         `Seal(bytes32 submissionId,bytes32 commitment)` in the domain ("veritrain
    ///         VerificationRound", "1", chain id, this contract).
    function sealDigest(SubmissionId submissionId, bytes32 commitment) external view returns (bytes32 digest);

    /// @notice A verifier's stored seal (zero if none: `revealVerdictsSigned` stores none) and whether
    ///         its verdicts were revealed.
    function verdictCommitmentOf(SubmissionId submissionId, address verifier)
        external
        view
        returns (bytes32 commitment, bool revealed);

    /// @notice The round's kept hash, whether the secret was revealed (the secret itself is in the
    ///         `SecretRevealed` event), the verifiers' seal count and the block of the claims, all
    ///         read from the round's one storage word (`RoundWord`).
    /// @return commitment The top 208 bits (low 48 bits zero, `roundHash`) of the solver's secret
    ///         commitment, keccak256(abi.encode(jobId, solver, secret)), until its claims are
    ///         posted, then of the claims hash that binds it, keccak256(abi.encode(roundHash(
    ///         secretCommitment), startHashes, endHashes)); zero before the commit and once the
    ///         secret is revealed.
    /// @return revealed True once the secret was revealed.
    /// @return committed Assigned verifiers that sealed verdicts.
    /// @return claimsBlock Block of the `ClaimsPosted` event, zero until the claims are posted.
    function roundOf(SubmissionId submissionId)
        external
        view
        returns (bytes32 commitment, bool revealed, uint32 committed, uint64 claimsBlock);

    /// @notice Forced-error rate (basis points of jobs).
    function forcedErrorRateBps() external view returns (uint256 rateBps);

    /// @notice keccak256("veritrain.forced-error.v1").
    function FORCED_ERROR_TAG() external view returns (bytes32 tag);

    /// @notice The JobManager this round serves.
    function jobManager() external view returns (address);
}
