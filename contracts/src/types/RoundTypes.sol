// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice What a job's verification round decided, as read by `JobManager.finalize` (ABI: uint8).
/// @dev See docs/FORCED_ERRORS.md section 3.
///      Pending: a claim, verdict-reveal or secret-reveal window is still open.
///      Clean: the secret was revealed and the job carries no forced error.
///      Forced: the secret was revealed and sample `forcedSample` carries a forced error.
///      NoClaims: the solver posted no claims by the verdict deadline.
///      NoReveal: claims were posted but the secret was not revealed in its window.
///      NoVerdicts: claims were posted but some sample has no revealed verdict of a seat whose own
///      draw holds it by the end of the verdict reveal window (docs/SECURITY.md P-27; the secret
///      cannot be revealed then; verifiers are drawn again for the uncovered samples).
enum RoundOutcome {
    Pending,
    Clean,
    Forced,
    NoClaims,
    NoReveal,
    NoVerdicts
}

/// @notice The solver's claims on the sampled segments, in sample order. The round stores only
///         their hash, bound to the secret commitment (`IVerificationRound.roundOf`), and emits
///         them in `ClaimsPosted`; a call that needs them takes them back as calldata and reverts
///         `ClaimsMismatch` unless they hash to the stored value.
/// @param startHashes State hash at step s_j * k of each sample j.
/// @param endHashes Claimed state hash at step (s_j + 1) * k of each sample j.
/// @param secretCommitment The top 208 bits of the solver's secret commitment from its commit
///        (low 48 bits zero, `roundHash`), which the stored claims hash binds (`ClaimsPosted`
///        carries it).
struct Claims {
    bytes32[] startHashes;
    bytes32[] endHashes;
    bytes32 secretCommitment;
}

/// @notice One seat's sealed verdicts, opened, with its EIP-712 signature of the seal: an entry of
///         `IVerificationRound.revealVerdictsSigned`, which recomputes the seal from the opening
///         and checks the signature over it, so that the seal is never stored.
/// @param verifier The seat.
/// @param ends Its sealed end state hashes, one per sample (see `revealVerdicts`); empty when they
///        are exactly the claimed ends (`Claims.endHashes`: the seat approved every sample), which
///        the seal is then recomputed over.
/// @param salt Its sealed salt.
/// @param signature Its signature of `sealDigest(submissionId, keccak256(abi.encode(jobId,
///        verifier, ends, salt)))` (65-byte ECDSA for an EOA; any bytes its ERC-1271
///        `isValidSignature` accepts for a contract).
struct SignedReveal {
    address verifier;
    bytes32[] ends;
    bytes32 salt;
    bytes signature;
}

/// @notice One seat's revealed verdicts as the verification round hands them to the JobManager
///         (`IJobManager.recordVerdicts`, every seat of one reveal call in one call).
/// @param verifier The seat.
/// @param approveMask Bit i set = the seat approved sample i (its end is the claimed one); clear =
///        rejected or abstained. No bit at or above the sample count.
/// @param abstainMask Bit i set = the seat sealed a zero end for sample i (it could not obtain the
///        data): an abstention, disputed like a rejection but never slashed or paid (P-20).
/// @param endTag The round's tag of the end the seat revealed for its first rejected sample of its
///        own draw (zero if none), kept in the seat's word (`IJobManager.endTagOf`).
struct SeatVerdicts {
    address verifier;
    uint256 approveMask;
    uint256 abstainMask;
    bytes5 endTag;
}
