// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {PRBTest} from "@prb/test/PRBTest.sol";
// Libraries
import {LibBits} from "../../src/libraries/LibBits.sol";

/// @notice The population count every mask count uses (a seat's reject bonds, a run round's
///         accepted and registered seats), against a bit-by-bit reference.
contract LibBits_Test is PRBTest {
    /// @dev Reference: one bit at a time (256 iterations at most).
    function _naive(uint256 mask) internal pure returns (uint256 count) {
        for (; mask != 0; mask >>= 1) {
            count += mask & 1;
        }
    }

    function testFuzz_popCount_matchesBitByBit_succeeds(uint256 mask) public {
        assertEq(LibBits.popCount(mask), _naive(mask));
    }

    function test_popCount_edges_succeeds() public {
        assertEq(LibBits.popCount(0), 0);
        assertEq(LibBits.popCount(1), 1);
        assertEq(LibBits.popCount(1 << 255), 1);
        assertEq(LibBits.popCount(type(uint256).max), 256);
        assertEq(LibBits.popCount(type(uint64).max), 64);
        assertEq(LibBits.popCount(0xA5), 4);
    }
}
