// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title LibBits
/// @notice Bit counting on the protocol's masks (a seat's rejected samples, a run round's
///         accepted or registered seats): the one home of the population count.
/// @dev Internal functions only: compiled into their callers, so nothing is linked.
library LibBits {
    /// @notice Number of set bits of `mask` (Kernighan's loop: one iteration per set bit).
    /// @param mask Any 256-bit mask.
    /// @return count Set bits (0..256).
    function popCount(uint256 mask) internal pure returns (uint256 count) {
        while (mask != 0) {
            // SAFETY: mask != 0, so mask - 1 does not underflow; count <= 256.
            unchecked {
                mask &= mask - 1;
                ++count;
            }
        }
    }
}
