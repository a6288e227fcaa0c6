// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title Bound
/// @notice `bound()` for fuzz inputs (forge-std's StdUtils algorithm; PRBTest has none): maps any
///         uint256 onto [min, max] while keeping values already in range unchanged.
abstract contract Bound {
    /// @notice Thrown when min > max.
    error BoundInvalidRange(uint256 min, uint256 max);

    /// @notice `x` wrapped into [min, max].
    function bound(uint256 x, uint256 min, uint256 max) internal pure returns (uint256 result) {
        if (min > max) revert BoundInvalidRange(min, max);
        if (x >= min && x <= max) return x;
        uint256 size = max - min + 1;
        // SAFETY: size >= 1; the wrap below mirrors forge-std and cannot overflow.
        unchecked {
            if (x <= 3 && size > x) return min + x;
            if (x >= type(uint256).max - 3 && size > type(uint256).max - x) return max - (type(uint256).max - x);
            if (x > max) {
                uint256 diff = x - max;
                uint256 rem = diff % size;
                if (rem == 0) return max;
                result = min + rem - 1;
            } else {
                uint256 diff = min - x;
                uint256 rem = diff % size;
                if (rem == 0) return min;
                result = max - rem + 1;
            }
        }
    }
}
