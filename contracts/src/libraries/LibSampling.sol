// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title LibSampling
/// @notice Deterministic draws without replacement from a 32-byte seed (derived from a block hash).
/// @dev A `Shuffle` yields distinct indices of [0, size) in random order, one at a time, so callers
///      can skip ineligible candidates and stop as soon as they have enough:
///      - size <= DENSE_LIMIT: lazy Fisher-Yates over a memory array (exact, O(size) memory);
///      - larger: rejection sampling against the indices drawn so far, at most SPARSE_MAX_DRAWS of
///        them (O(draws^2) comparisons, no O(size) memory).
///      Modulo bias is at most size / 2**256 and is ignored.
library LibSampling {
    ////// Types //////

    /// @notice State of a draw without replacement.
    /// @param seed Randomness seed.
    /// @param size Population size.
    /// @param drawn Indices drawn so far.
    /// @param nonce Hashes consumed (sparse mode).
    /// @param slots Dense mode: value+1 at each swapped position (0 = identity); sparse mode: drawn values.
    struct Shuffle {
        bytes32 seed;
        uint256 size;
        uint256 drawn;
        uint256 nonce;
        uint256[] slots;
    }

    ////// Constants //////

    /// @notice Largest population shuffled with a dense memory array.
    uint256 internal constant DENSE_LIMIT = 2048;

    /// @notice Most indices a sparse shuffle hands out.
    uint256 internal constant SPARSE_MAX_DRAWS = 512;

    ////// Functions //////

    /// @notice Starts a draw without replacement from [0, size).
    /// @param seed Randomness seed.
    /// @param size Population size.
    /// @return s Shuffle state.
    function newShuffle(bytes32 seed, uint256 size) internal pure returns (Shuffle memory s) {
        s.seed = seed;
        s.size = size;
        s.slots = new uint256[](size <= DENSE_LIMIT ? size : SPARSE_MAX_DRAWS);
    }

    /// @notice Number of indices still available from `s`.
    /// @param s Shuffle state.
    /// @return count Indices left.
    function remaining(Shuffle memory s) internal pure returns (uint256 count) {
        uint256 cap = s.size <= DENSE_LIMIT ? s.size : SPARSE_MAX_DRAWS;
        // SAFETY: drawn never exceeds cap (next() reverts past it through the array bound).
        unchecked {
            count = cap - s.drawn;
        }
    }

    /// @notice Next distinct random index of [0, size). Callers must check `remaining(s) > 0`.
    /// @param s Shuffle state (updated in place).
    /// @return index Index drawn.
    function next(Shuffle memory s) internal pure returns (uint256 index) {
        uint256 i = s.drawn;
        if (s.size <= DENSE_LIMIT) {
            // Fisher-Yates step: swap position i with a uniform position j in [i, size).
            uint256 j = i + uint256(keccak256(abi.encode(s.seed, i))) % (s.size - i);
            uint256 atJ = s.slots[j];
            uint256 atI = s.slots[i];
            index = atJ == 0 ? j : atJ - 1;
            s.slots[j] = atI == 0 ? i + 1 : atI;
        } else {
            // Rejection sampling: redraw until the index was not handed out before.
            while (true) {
                index = uint256(keccak256(abi.encode(s.seed, s.nonce))) % s.size;
                // SAFETY: nonce counts hashes; it cannot reach 2**256.
                unchecked {
                    ++s.nonce;
                }
                if (!_contains(s.slots, i, index)) break;
            }
            s.slots[i] = index;
        }
        s.drawn = i + 1;
    }

    /// @notice `count` distinct segment indices of [0, segments) in draw order, or all of them in
    ///         increasing order if `count >= segments`.
    /// @param seed Randomness seed.
    /// @param segments Number of segments N/k.
    /// @param count Samples wanted q.
    /// @return picked Segment indices.
    function drawSegments(bytes32 seed, uint256 segments, uint256 count)
        internal
        pure
        returns (uint32[] memory picked)
    {
        if (count >= segments) {
            picked = new uint32[](segments);
            for (uint256 i; i < segments; ++i) {
                // SAFETY: i < segments = N / k < 2**32.
                // forge-lint: disable-next-line(unsafe-typecast)
                picked[i] = uint32(i);
            }
            return picked;
        }
        picked = new uint32[](count);
        Shuffle memory s = newShuffle(seed, segments);
        for (uint256 i; i < count; ++i) {
            // SAFETY: segments = N / k with N < 2**32, so every index fits in uint32.
            picked[i] = uint32(next(s));
        }
    }

    /// @notice Whether `value` is among the first `length` entries of `values`.
    function _contains(uint256[] memory values, uint256 length, uint256 value) private pure returns (bool found) {
        for (uint256 k; k < length; ++k) {
            if (values[k] == value) return true;
        }
    }
}
