// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Contracts
import {VerificationRoundBase} from "./VerificationRoundBase.sol";
// Libraries
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
// Interfaces
import {IVerificationRound} from "../interfaces/IVerificationRound.sol";
// Types
import {RoundJob} from "../types/JobTypes.sol";
import {Claims, SeatVerdicts, SignedReveal} from "../types/RoundTypes.sol";
import {RoundPhase, RoundWord} from "../types/RoundWord.sol";
import {SubmissionId} from "../types/SubmissionId.sol";

/// @title VerificationRoundSigned
/// @notice The verification round's paths that act on a seat's EIP-712 signature of its seal
///         (`Seal(bytes32 submissionId,bytes32 commitment)`, docs/SECURITY.md P-37, P-40): anyone
///         submits signed seals (`commitVerdictsFor`), seals and reveals every seat at once without
///         storing a seal (`revealVerdictsSigned`), or proves that a seat signed two seals for one
///         submission (`proveEquivocation`).
abstract contract VerificationRoundSigned is VerificationRoundBase {
    ////// Constants //////

    /// @notice EIP-712 type of a seat's seal handed to an aggregator (`commitVerdictsFor`,
    ///         `revealVerdictsSigned`).
    bytes32 internal constant SEAL_TYPEHASH = keccak256("Seal(bytes32 submissionId,bytes32 commitment)");

    ////// External //////

    /// @inheritdoc IVerificationRound
    function commitVerdictsFor(
        SubmissionId submissionId,
        address[] calldata verifiers,
        bytes32[] calldata commitments,
        bytes[] calldata signatures
    ) external {
        uint256 count = verifiers.length;
        if (commitments.length != count) revert LengthMismatch(submissionId, count, commitments.length);
        if (signatures.length != count) revert LengthMismatch(submissionId, count, signatures.length);
        (, RoundJob memory job) = _verifyingJob(submissionId);
        mapping(address verifier => bytes32 commitment) storage seals = _seals[submissionId];
        for (uint256 i; i < count; ++i) {
            address verifier = verifiers[i];
            // Sealed already (by itself or an earlier batch): skipped, so sealing first cannot make
            // the batch revert.
            if (seals[verifier] != bytes32(0)) continue;
            _requireSealSigned(submissionId, verifier, commitments[i], signatures[i]);
            _commit(submissionId, job, verifier, commitments[i]);
        }
    }

    /// @inheritdoc IVerificationRound
    function revealVerdictsSigned(SubmissionId submissionId, SignedReveal[] calldata reveals, Claims calldata claims)
        external
    {
        (uint256 jobId, RoundJob memory job) = _verifyingJob(submissionId);
        _requireBeforeVerdictDeadline(submissionId, job);
        RoundWord round = _rounds[submissionId];
        _checkClaims(submissionId, round, claims);
        // INVARIANT: no seat of the draw has a seal on chain (a kept seat counts), so none is left
        // that could seal after seeing these ends: this call covers every seat (checked below).
        if (round.seals() != 0) revert SealsOnChain(submissionId);
        uint256 count = reveals.length;
        if (count == 0) {
            // slither-disable-next-line unused-return
            (,,, uint256 seats,) = _JOB_MANAGER.seatOf(submissionId, address(0));
            revert LengthMismatch(submissionId, seats, 0);
        }
        SeatVerdicts[] memory seats = new SeatVerdicts[](count);
        for (uint256 i; i < count; ++i) {
            seats[i] = _openSignedSeat(submissionId, jobId, reveals[i], claims, count);
        }
        // The JobManager refuses a seat named twice (VerdictsAlreadySubmitted), so with one entry
        // per seat every seat is recorded, or none: a seat whose free stake cannot cover its reject
        // bonds reverts the call, since a skipped seat could seal after seeing the others' ends.
        // Every seat in one JobManager call (one call's overhead and one bond lock for all), which
        // also marks every sample covered (each is in some seat's own draw, P-27); every seat
        // sealed (views and the reveal window see it so): one write of the round's word.
        _recordSeats(submissionId, seats, round.withSeals(count));
    }

    /// @inheritdoc IVerificationRound
    function proveEquivocation(
        SubmissionId submissionId,
        address verifier,
        bytes32 commitment,
        bytes calldata signature,
        bytes32 otherCommitment,
        bytes calldata otherSignature
    ) external {
        if (commitment == otherCommitment || commitment == bytes32(0) || otherCommitment == bytes32(0)) {
            revert NotEquivocation(submissionId, verifier);
        }
        _requireSealSigned(submissionId, verifier, commitment, signature);
        if (otherSignature.length != 0) {
            _requireSealSigned(submissionId, verifier, otherCommitment, otherSignature);
        } else if (_seals[submissionId][verifier] != otherCommitment) {
            revert NotEquivocation(submissionId, verifier);
        }
        // The voided seat covers nothing: a sample only it held is uncovered again, so the secret
        // stays hidden and the sample is drawn again (P-27), never paid unverified. The coverage is
        // then read from the JobManager's seats (`_covered`), where this seat is voided below.
        RoundWord round = _rounds[submissionId];
        if (round.phase() == RoundPhase.Claimed) _rounds[submissionId] = round.withAllCovered(false);
        emit EquivocationProven(submissionId, verifier, msg.sender, commitment, otherCommitment);
        // SAFETY: the JobManager is trusted; it refuses (and so undoes the coverage) unless the job
        // is Verifying with this submission, before its challenge deadline (so before the secret
        // can be revealed), and the seat revealed and was never settled.
        _JOB_MANAGER.slashEquivocation(submissionId, verifier);
    }

    ////// External: views //////

    /// @inheritdoc IVerificationRound
    function sealDigest(SubmissionId submissionId, bytes32 commitment) external view returns (bytes32 digest) {
        digest = _sealDigest(submissionId, commitment);
    }

    ////// Internal //////

    /// @notice Opens one of the `count` entries of `revealVerdictsSigned` (`_openSignedSeal`) and
    ///         emits its seat's reveal (`_seatVerdicts`). An entry without ends opens the claimed
    ///         ends (a seat that approved every sample replayed exactly them, so the aggregator need
    ///         not repeat them; docs/SECURITY.md, "Gas cuts"): the seal is recomputed over the ends
    ///         opened either way, so an entry whose seat signed other ends fails its signature.
    /// @return seat What the JobManager records of the seat.
    function _openSignedSeat(
        SubmissionId submissionId,
        uint256 jobId,
        SignedReveal calldata reveal,
        Claims calldata claims,
        uint256 count
    ) internal returns (SeatVerdicts memory seat) {
        bytes32[] calldata sent = reveal.ends;
        bytes32[] calldata ends = sent.length == 0 ? claims.endHashes : sent;
        Verdicts memory verdicts = _openSignedSeal(submissionId, jobId, reveal, ends, claims, count);
        // Logged as sent: an entry without ends approved every sample, so its event carries no ends
        // either (the claims' `ClaimsPosted` has them) and `_seatVerdicts` reads none (no reject).
        seat = _seatVerdicts(submissionId, reveal.verifier, sent, verdicts);
    }

    /// @notice Checks one of the `count` entries of `revealVerdictsSigned`: its seat (one of
    ///         `count` seats), one end per sample, the seat's signature of the seal its opening
    ///         hashes to. No `VerdictsCommitted`: the seal is the hash of the opening the seat's
    ///         `VerdictsRevealed` and this call's calldata carry (docs/SECURITY.md, "Gas cuts").
    /// @param ends The ends the entry opens (`_openSignedSeat`).
    /// @return verdicts The verdicts the opening implies.
    function _openSignedSeal(
        SubmissionId submissionId,
        uint256 jobId,
        SignedReveal calldata reveal,
        bytes32[] calldata ends,
        Claims calldata claims,
        uint256 count
    ) internal returns (Verdicts memory verdicts) {
        address verifier = reveal.verifier;
        uint64 sampleMask;
        {
            bool assigned;
            uint256 seats;
            uint256 samples;
            // slither-disable-next-line unused-return
            (assigned, sampleMask,, seats, samples) = _JOB_MANAGER.seatOf(submissionId, verifier);
            if (!assigned) revert NotAssignedVerifier(submissionId, verifier);
            // One entry per seat; the JobManager refuses a second record of one seat, so all are in.
            if (count != seats) revert LengthMismatch(submissionId, seats, count);
            if (ends.length != samples) revert LengthMismatch(submissionId, samples, ends.length);
        }
        bytes32 commitment = keccak256(abi.encode(jobId, verifier, ends, reveal.salt));
        _requireSealSigned(submissionId, verifier, commitment, reveal.signature);
        verdicts = _verdictsOf(sampleMask, ends, claims.endHashes);
    }

    /// @notice Reverts InvalidSealSignature unless `signature` is `verifier`'s signature of
    ///         `sealDigest(submissionId, commitment)`: an ECDSA signature by the key of the
    ///         verifier's address, else an ERC-1271 approval by the contract at it.
    /// @dev ECDSA is tried first, so an EOA's signature costs no look-up of its code (EXTCODESIZE of
    ///      a cold account, 2,600 gas per seat; docs/SECURITY.md, "Gas cuts"). A signature that
    ///      recovers to the verifier's address was made with the key that sends that account's own
    ///      transactions (for an EIP-7702 account too), which could seal and reveal the seat
    ///      directly; no key exists for a contract created at its address, so a contract verifier
    ///      is only ever accepted through its ERC-1271 `isValidSignature`, which an address without
    ///      code never passes (OpenZeppelin `ECDSA.tryRecoverCalldata`,
    ///      `SignatureChecker.isValidERC1271SignatureNowCalldata`).
    function _requireSealSigned(
        SubmissionId submissionId,
        address verifier,
        bytes32 commitment,
        bytes calldata signature
    ) internal view {
        bytes32 digest = _sealDigest(submissionId, commitment);
        // The third value, the error's argument, only details a malformed signature: refused below.
        // slither-disable-next-line unused-return
        (address recovered, ECDSA.RecoverError err,) = ECDSA.tryRecoverCalldata(digest, signature);
        if (err == ECDSA.RecoverError.NoError && recovered == verifier) return;
        if (!SignatureChecker.isValidERC1271SignatureNowCalldata(verifier, digest, signature)) {
            revert InvalidSealSignature(submissionId, verifier);
        }
    }

    /// @notice The EIP-712 digest of `Seal(submissionId, commitment)` in this contract's domain.
    function _sealDigest(SubmissionId submissionId, bytes32 commitment) internal view returns (bytes32 digest) {
        digest = _hashTypedDataV4(keccak256(abi.encode(SEAL_TYPEHASH, submissionId, commitment)));
    }
}
