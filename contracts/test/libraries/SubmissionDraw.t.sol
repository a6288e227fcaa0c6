// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {PRBTest} from "@prb/test/PRBTest.sol";
import {Bound} from "../utils/Bound.sol";
// Types
import {
    MAX_SAMPLES,
    MAX_SEATS,
    MAX_SEGMENTS_BOUND,
    Submission,
    pushVerifier,
    sampledSegments,
    segmentAt,
    storeSample,
    verifierIdAt
} from "../../src/types/SubmissionTypes.sol";

/// @notice Holds one submission in storage and drives its draw helpers as the JobManager does: the
///         sample first, then the seats.
contract DrawHarness {
    Submission internal _sub;

    function store(uint32[] memory segments) external {
        storeSample(_sub, segments, segments.length);
    }

    function push(uint32 id) external {
        pushVerifier(_sub, id);
    }

    function reseat(uint256[] memory keep) external {
        // As `LibAssignment._keepRevealed`: the kept seats, read in order, written again from seat 0.
        _sub.seatCount = 0;
        for (uint256 i; i < keep.length; ++i) {
            pushVerifier(_sub, verifierIdAt(_sub, keep[i]));
        }
    }

    function idAt(uint256 seat) external view returns (uint32) {
        return verifierIdAt(_sub, seat);
    }

    function segment(uint256 sampleIndex) external view returns (uint32) {
        return segmentAt(_sub, sampleIndex);
    }

    function sample() external view returns (uint32[] memory) {
        return sampledSegments(_sub);
    }

    function counts() external view returns (uint256 seats, uint256 samples) {
        return (_sub.seatCount, _sub.sampleCount);
    }
}

contract SubmissionDraw_Test is PRBTest, Bound {
    DrawHarness internal harness;

    function setUp() public {
        harness = new DrawHarness();
    }

    /// @notice Every segment (below 2^16) and every 32-bit id comes back as stored, whatever the
    ///         counts up to the bounds (64 samples, 32 seats): no entry overwrites another.
    function testFuzz_draw_roundTrips_succeeds(bytes32 seed, uint256 samples, uint256 seats) public {
        samples = bound(samples, 1, MAX_SAMPLES);
        seats = bound(seats, 1, MAX_SEATS);
        uint32[] memory segments = new uint32[](samples);
        for (uint256 i; i < samples; ++i) {
            segments[i] = uint32(uint256(keccak256(abi.encode(seed, "segment", i))) % MAX_SEGMENTS_BOUND);
        }
        harness.store(segments);
        uint32[] memory ids = new uint32[](seats);
        for (uint256 i; i < seats; ++i) {
            ids[i] = uint32(uint256(keccak256(abi.encode(seed, "id", i))));
            harness.push(ids[i]);
        }
        (uint256 seatCount, uint256 sampleCount) = harness.counts();
        assertEq(seatCount, seats);
        assertEq(sampleCount, samples);
        for (uint256 i; i < seats; ++i) {
            assertEq(harness.idAt(i), ids[i], "id");
        }
        uint32[] memory back = harness.sample();
        assertEq(back.length, samples);
        for (uint256 i; i < samples; ++i) {
            assertEq(back[i], segments[i], "sample");
            assertEq(harness.segment(i), segments[i], "segment");
        }
    }

    /// @notice The extremes of both widths: segment 2^16 - 1 and ids 0xFFFFFFFF, 0x00010000 and
    ///         0x0000FFFF next to each other (a half written to the wrong entry shows).
    function test_draw_extremes_succeeds() public {
        uint32[] memory segments = new uint32[](3);
        (segments[0], segments[1], segments[2]) = (0, 1, uint32(MAX_SEGMENTS_BOUND - 1));
        harness.store(segments);
        harness.push(type(uint32).max);
        harness.push(0x00010000);
        harness.push(0x0000FFFF);
        assertEq(harness.idAt(0), type(uint32).max);
        assertEq(harness.idAt(1), 0x00010000);
        assertEq(harness.idAt(2), 0x0000FFFF);
        assertEq(harness.segment(2), MAX_SEGMENTS_BOUND - 1);
        assertEq(harness.segment(0), 0);
    }

    /// @notice A reassignment keeps some seats in order, rewritten from seat 0 over the old entries
    ///         (each read before its place is written), and seats new ones after them.
    function test_draw_reseat_keepsOrder_succeeds() public {
        uint32[] memory segments = new uint32[](5);
        for (uint256 i; i < 5; ++i) {
            segments[i] = uint32(7 * i + 3);
        }
        harness.store(segments);
        harness.push(70_001);
        harness.push(2);
        harness.push(70_003);
        uint256[] memory keep = new uint256[](2);
        (keep[0], keep[1]) = (1, 2);
        harness.reseat(keep);
        harness.push(99_999);
        (uint256 seatCount,) = harness.counts();
        assertEq(seatCount, 3);
        assertEq(harness.idAt(0), 2);
        assertEq(harness.idAt(1), 70_003);
        assertEq(harness.idAt(2), 99_999);
        for (uint256 i; i < 5; ++i) {
            assertEq(harness.segment(i), 7 * i + 3, "sample untouched");
        }
    }
}
