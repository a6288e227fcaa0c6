// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {PRBTest} from "@prb/test/PRBTest.sol";
import {Bound} from "../utils/Bound.sol";
// Libraries
import {LibSampling} from "../../src/libraries/LibSampling.sol";

contract LibSampling_Shuffle_Test is PRBTest, Bound {
    using LibSampling for LibSampling.Shuffle;

    /// @notice A full dense shuffle is a permutation of [0, size).
    function testFuzz_next_densePermutation_succeeds(bytes32 seed, uint256 size) public {
        size = bound(size, 1, 300);
        LibSampling.Shuffle memory s = LibSampling.newShuffle(seed, size);
        bool[] memory seen = new bool[](size);
        for (uint256 i; i < size; ++i) {
            assertEq(s.remaining(), size - i);
            uint256 index = s.next();
            assertLt(index, size);
            assertFalse(seen[index], "duplicate");
            seen[index] = true;
        }
        assertEq(s.remaining(), 0);
    }

    function test_next_densePermutation_succeeds() public {
        testFuzz_next_densePermutation_succeeds(keccak256("seed"), 7);
    }

    /// @notice Sparse mode (size > DENSE_LIMIT) still never repeats an index.
    function testFuzz_next_sparseDistinct_succeeds(bytes32 seed, uint256 size) public {
        size = bound(size, LibSampling.DENSE_LIMIT + 1, type(uint32).max);
        LibSampling.Shuffle memory s = LibSampling.newShuffle(seed, size);
        uint256[] memory drawn = new uint256[](40);
        for (uint256 i; i < drawn.length; ++i) {
            drawn[i] = s.next();
            assertLt(drawn[i], size);
            for (uint256 j; j < i; ++j) {
                assertNotEq(drawn[i], drawn[j]);
            }
        }
    }

    function test_next_sparseDistinct_succeeds() public {
        testFuzz_next_sparseDistinct_succeeds(keccak256("seed"), 2049);
    }

    function testFuzz_drawSegments_distinctInRange_succeeds(bytes32 seed, uint256 segments, uint256 count) public {
        segments = bound(segments, 1, 100_000);
        count = bound(count, 1, 64);
        uint32[] memory picked = LibSampling.drawSegments(seed, segments, count);
        assertEq(picked.length, count < segments ? count : segments);
        for (uint256 i; i < picked.length; ++i) {
            assertLt(uint256(picked[i]), segments);
            for (uint256 j; j < i; ++j) {
                assertNotEq(uint256(picked[i]), uint256(picked[j]));
            }
        }
    }

    function test_drawSegments_allWhenFew_succeeds() public {
        uint32[] memory picked = LibSampling.drawSegments(keccak256("seed"), 3, 4);
        assertEq(picked.length, 3);
        assertEq(uint256(picked[0]), 0);
        assertEq(uint256(picked[2]), 2);
        testFuzz_drawSegments_distinctInRange_succeeds(keccak256("seed"), 8, 4);
    }

    /// @notice Same seed, same draw: every node can recompute an assignment.
    function test_drawSegments_deterministic_succeeds() public {
        uint32[] memory a = LibSampling.drawSegments(keccak256("seed"), 1000, 8);
        uint32[] memory b = LibSampling.drawSegments(keccak256("seed"), 1000, 8);
        for (uint256 i; i < a.length; ++i) {
            assertEq(uint256(a[i]), uint256(b[i]));
        }
    }
}
