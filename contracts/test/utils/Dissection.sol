// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title Dissection
/// @notice Reference arithmetic of the game's n-way dissection (docs/DISPUTES.md, what the Python
///         nodes compute), written independently of `BisectionGame`'s internals: the points of an
///         interval, the hashes a defender posts at them and the part an honest challenger picks.
library Dissection {
    /// @notice Parts [lo, hi] is split into: min(arity, hi - lo).
    function parts(uint32 lo, uint32 hi, uint256 arity) internal pure returns (uint256 n) {
        n = hi - lo < arity ? hi - lo : arity;
    }

    /// @notice Point j of [lo, hi] in `n` parts: lo + (hi - lo) * j / n (steps).
    function point(uint32 lo, uint32 hi, uint256 n, uint256 j) internal pure returns (uint32) {
        // forge-lint: disable-next-line(unsafe-typecast)
        return lo + uint32((uint256(hi - lo) * j) / n);
    }

    /// @notice Rounds that narrow k steps down to one: each keeps a part of width at most
    ///         ceil(w / parts) (the widest of the floor-spaced parts).
    function rounds(uint256 k, uint256 arity) internal pure returns (uint256 r) {
        for (uint256 w = k; w > 1; ++r) {
            uint256 n = w < arity ? w : arity;
            w = (w + n - 1) / n;
        }
    }

    /// @notice `trajectory`'s hashes at the interior points of [lo, hi] (n - 1 of them, in order).
    /// @param trajectory State hash of every step (index = step).
    function interior(bytes32[] memory trajectory, uint32 lo, uint32 hi, uint256 arity)
        internal
        pure
        returns (bytes32[] memory hashes)
    {
        uint256 n = parts(lo, hi, arity);
        hashes = new bytes32[](n - 1);
        for (uint256 j = 1; j < n; ++j) {
            hashes[j - 1] = trajectory[point(lo, hi, n, j)];
        }
    }

    /// @notice The part an honest challenger picks: the one before the first point whose posted
    ///         hash differs from `truth` (point n, hi, carrying `claimedHash`), else the last part.
    /// @param truth The true state hash of every step.
    /// @param posted The defender's interior hashes.
    /// @param claimedHash The defender's hash at hi.
    function honestIndex(
        bytes32[] memory truth,
        bytes32[] memory posted,
        uint32 lo,
        uint32 hi,
        bytes32 claimedHash,
        uint256 arity
    ) internal pure returns (uint256 index) {
        uint256 n = parts(lo, hi, arity);
        for (uint256 j = 1; j <= n; ++j) {
            bytes32 theirs = j == n ? claimedHash : posted[j - 1];
            if (theirs != truth[point(lo, hi, n, j)]) return j - 1;
        }
        return n - 1;
    }
}
