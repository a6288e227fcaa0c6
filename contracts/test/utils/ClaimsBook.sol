// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Contracts
import {VerificationRound} from "../../src/VerificationRound.sol";
// Types
import {Claims} from "../../src/types/RoundTypes.sol";
import {SubmissionId} from "../../src/types/SubmissionId.sol";
import {roundHash} from "../../src/types/RoundWord.sol";

/// @title ClaimsBook
/// @notice Test-side record of the claims each submission posted: the round stores only their hash
///         and emits them in `ClaimsPosted`, so tests keep the copy they pass back as calldata.
abstract contract ClaimsBook {
    mapping(SubmissionId submissionId => Claims claims) internal _claimsBook;

    /// @notice Records `startHashes` / `endHashes`, with the solver's secret commitment
    ///         (`_secretCommitmentOf`), as `submissionId`'s claims if the round now holds exactly
    ///         their hash (call right after `postClaims`; a reverted post records nothing).
    function _bookClaims(
        VerificationRound round_,
        SubmissionId submissionId,
        bytes32[] memory startHashes,
        bytes32[] memory endHashes
    ) internal {
        (bytes32 stored,,, uint64 claimsBlock) = round_.roundOf(submissionId);
        bytes32 secretCommitment = _secretCommitmentOf(submissionId);
        if (claimsBlock == 0 || stored != roundHash(keccak256(abi.encode(secretCommitment, startHashes, endHashes)))) {
            return;
        }
        _claimsBook[submissionId] =
            Claims({startHashes: startHashes, endHashes: endHashes, secretCommitment: secretCommitment});
    }

    /// @notice The secret commitment the submission's solver committed, as the round keeps it and
    ///         `ClaimsPosted` announces it (`roundHash`: the round's claims hash binds it;
    ///         `Claims.secretCommitment`).
    function _secretCommitmentOf(SubmissionId submissionId) internal view virtual returns (bytes32);

    /// @notice The claims `submissionId` posted (empty arrays if none); reads no contract, so it can
    ///         sit between a prank and the call it pranks.
    function _claimsOf(SubmissionId submissionId)
        internal
        view
        returns (bytes32[] memory startHashes, bytes32[] memory endHashes)
    {
        Claims storage claims = _claimsBook[submissionId];
        (startHashes, endHashes) = (claims.startHashes, claims.endHashes);
    }

    /// @notice The claims `submissionId` posted, as the calldata argument of `revealVerdicts` /
    ///         `revealSecret`.
    function _claimsArg(SubmissionId submissionId) internal view returns (Claims memory claims) {
        claims = _claimsBook[submissionId];
    }
}
