// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice A submission's whole verification-round state in one storage word
///         (`VerificationRoundBase._rounds`; docs/SECURITY.md, "Gas cuts": one word per round
///         instead of two, so posting the claims creates no storage word). Bits:
///         - 0-1: the phase (`RoundPhase`);
///         - 2: every seat revealed in one `revealVerdictsSigned` (`Claimed` only; cleared when a
///           seat's verdicts are voided): the samples are all covered without asking the
///           JobManager's seats;
///         - 3: the revealed draw carries a forced error (`Revealed` only);
///         - 8-15: the seats that sealed on chain (`Committed`, `Claimed`; <= MAX_SEATS = 32), or
///           the forced error's sample index (`Revealed`; < 64);
///         - 16-47: the block of the `ClaimsPosted` event (`Claimed`, `Revealed`), where readers
///           find the claims;
///         - 48-255: the top 208 bits of the solver's secret commitment (`Committed`) or of the
///           claims hash that binds it (`Claimed`), `roundHash`; in `Revealed`, bits 48-55 keep the
///           seal count and bits 160-255 are the first 96 bits of the solver's committed end of the
///           forced sample.
/// @dev 208 bits of keccak256 leave 2^104 work for a collision and 2^208 for a second preimage;
///      the forced end's 96 bits are as before (it is hidden until the reveal). A claims block
///      past 2^32 - 1 reverts the claims (`SafeCast`).
type RoundWord is bytes32;

/// @notice Where a submission's round stands (bits 0-1 of its `RoundWord`).
/// @dev None: no commit. Committed: the secret commitment is kept. Claimed: the claims hash is
///      kept (the claims are posted). Revealed: the secret was revealed and every claim proven.
enum RoundPhase {
    None,
    Committed,
    Claimed,
    Revealed
}

// The bits of a word that `roundHash` keeps (all but the low 48), and the layout's other fields.
uint256 constant ROUND_HASH_MASK = ~uint256(0xffffffffffff);

uint256 constant _PHASE_BITS = 3;
uint256 constant _ALL_COVERED = 4;
uint256 constant _FORCED = 8;
uint256 constant _COUNT_SHIFT = 8;
uint256 constant _COUNT_MASK = 0xff << _COUNT_SHIFT;
uint256 constant _BLOCK_SHIFT = 16;
uint256 constant _BLOCK_MASK = 0xffffffff << _BLOCK_SHIFT;
uint256 constant _KEPT_COUNT_SHIFT = 48;

/// @notice `hash` with its low 48 bits cleared: what a round word keeps of a secret commitment or
///         a claims hash, and the secret commitment `ClaimsPosted` announces and `Claims` carries.
function roundHash(bytes32 hash) pure returns (bytes32 kept) {
    kept = bytes32(uint256(hash) & ROUND_HASH_MASK);
}

/// @title LibRoundWord
/// @notice Reads and writes of a `RoundWord` (layout on the type).
library LibRoundWord {
    /// @notice The word of a committed round: `secretCommitment`'s top 208 bits.
    function committed(bytes32 secretCommitment) internal pure returns (RoundWord word) {
        word = RoundWord.wrap(bytes32((uint256(secretCommitment) & ROUND_HASH_MASK) | uint256(RoundPhase.Committed)));
    }

    /// @notice The word of a round whose claims are posted in block `claimsBlock` (< 2^32):
    ///         `claimsHash`'s top 208 bits and the seal count of `word` (seals before the claims:
    ///         none, the contract refuses them).
    function claimed(RoundWord word, bytes32 claimsHash, uint32 claimsBlock) internal pure returns (RoundWord next) {
        next = RoundWord.wrap(
            bytes32(
                (uint256(claimsHash) & ROUND_HASH_MASK) | (uint256(claimsBlock) << _BLOCK_SHIFT)
                    | (uint256(RoundWord.unwrap(word)) & _COUNT_MASK) | uint256(RoundPhase.Claimed)
            )
        );
    }

    /// @notice The word of a revealed round: `word`'s claims block and seal count, whether the draw
    ///         is `forced`, its `forcedSample` (< 256) and the first 96 bits of the forced sample's
    ///         committed end.
    function revealed(RoundWord word, bool forced, uint256 forcedSample, bytes12 forcedEndTag)
        internal
        pure
        returns (RoundWord next)
    {
        uint256 bits = uint256(bytes32(forcedEndTag)) | (seals(word) << _KEPT_COUNT_SHIFT)
            | (uint256(RoundWord.unwrap(word)) & _BLOCK_MASK) | (forcedSample << _COUNT_SHIFT)
            | uint256(RoundPhase.Revealed);
        if (forced) bits |= _FORCED;
        next = RoundWord.wrap(bytes32(bits));
    }

    /// @notice `word` with its seal count set to `count` (< 256).
    function withSeals(RoundWord word, uint256 count) internal pure returns (RoundWord next) {
        next = RoundWord.wrap(bytes32((uint256(RoundWord.unwrap(word)) & ~_COUNT_MASK) | (count << _COUNT_SHIFT)));
    }

    /// @notice `word` with its all-covered flag set (`covered`) or cleared.
    function withAllCovered(RoundWord word, bool covered) internal pure returns (RoundWord next) {
        uint256 bits = uint256(RoundWord.unwrap(word)) & ~_ALL_COVERED;
        if (covered) bits |= _ALL_COVERED;
        next = RoundWord.wrap(bytes32(bits));
    }

    /// @notice The round's phase.
    function phase(RoundWord word) internal pure returns (RoundPhase) {
        return RoundPhase(uint256(RoundWord.unwrap(word)) & _PHASE_BITS);
    }

    /// @notice The kept hash (`Committed`: the secret commitment's, `Claimed`: the claims hash's
    ///         top 208 bits, low 48 bits zero).
    function hash(RoundWord word) internal pure returns (bytes32) {
        return roundHash(RoundWord.unwrap(word));
    }

    /// @notice Seats that sealed on chain (in `Revealed`: as many as at the reveal).
    function seals(RoundWord word) internal pure returns (uint256) {
        uint256 bits = uint256(RoundWord.unwrap(word));
        if (bits & _PHASE_BITS == uint256(RoundPhase.Revealed)) return (bits >> _KEPT_COUNT_SHIFT) & 0xff;
        return (bits & _COUNT_MASK) >> _COUNT_SHIFT;
    }

    /// @notice The block of the `ClaimsPosted` event (`Claimed`, `Revealed`; else zero).
    function claimsBlock(RoundWord word) internal pure returns (uint256) {
        if (phase(word) < RoundPhase.Claimed) return 0;
        return (uint256(RoundWord.unwrap(word)) & _BLOCK_MASK) >> _BLOCK_SHIFT;
    }

    /// @notice Whether one signed reveal covered every seat (`Claimed`).
    function allCovered(RoundWord word) internal pure returns (bool) {
        return uint256(RoundWord.unwrap(word)) & _ALL_COVERED != 0;
    }

    /// @notice Whether the revealed draw carries a forced error (`Revealed`).
    function forced(RoundWord word) internal pure returns (bool) {
        return uint256(RoundWord.unwrap(word)) & _FORCED != 0;
    }

    /// @notice The forced error's sample index (`Revealed`).
    function forcedSample(RoundWord word) internal pure returns (uint256) {
        return (uint256(RoundWord.unwrap(word)) & _COUNT_MASK) >> _COUNT_SHIFT;
    }

    /// @notice The first 96 bits of the forced sample's committed end (`Revealed`, forced).
    function forcedEndTag(RoundWord word) internal pure returns (bytes12) {
        return bytes12(RoundWord.unwrap(word));
    }
}

using LibRoundWord for RoundWord global;
