// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {PRBTest} from "@prb/test/PRBTest.sol";
// Types
import {LibRoundWord, RoundPhase, RoundWord, roundHash} from "../../src/types/RoundWord.sol";

/// @notice The round's one storage word: each field written reads back as written, and no write
///         of one field changes another (the layout's fields do not overlap).
contract RoundWord_Test is PRBTest {
    function testFuzz_roundWord_committedThenClaimed_fieldsKept_succeeds(
        bytes32 secretCommitment,
        bytes32 claimsHash,
        uint32 claimsBlock,
        uint8 seals,
        bool covered
    ) public {
        seals = uint8(uint256(seals) % 33);
        RoundWord word = LibRoundWord.committed(secretCommitment);
        assertEq(uint8(word.phase()), uint8(RoundPhase.Committed));
        assertEq(word.hash(), roundHash(secretCommitment));
        assertEq(uint256(word.hash()) >> 48, uint256(secretCommitment) >> 48, "its top 208 bits");
        assertEq(word.seals(), 0);
        assertEq(word.claimsBlock(), 0, "no claims block before the claims");

        word = word.claimed(claimsHash, claimsBlock).withSeals(seals).withAllCovered(covered);
        assertEq(uint8(word.phase()), uint8(RoundPhase.Claimed));
        assertEq(word.hash(), roundHash(claimsHash));
        assertEq(word.claimsBlock(), claimsBlock);
        assertEq(word.seals(), seals);
        assertEq(word.allCovered(), covered);
        // Clearing the flag and recounting the seals leave the rest as it was.
        RoundWord again = word.withAllCovered(false).withSeals(seals + 1);
        assertFalse(again.allCovered());
        assertEq(again.seals(), uint256(seals) + 1);
        assertEq(again.hash(), word.hash());
        assertEq(again.claimsBlock(), claimsBlock);
        assertEq(uint8(again.phase()), uint8(RoundPhase.Claimed));
    }

    function testFuzz_roundWord_claimedKeepsTheSealCount_succeeds(bytes32 secretCommitment, uint8 seals) public {
        seals = uint8(uint256(seals) % 33);
        RoundWord word = LibRoundWord.committed(secretCommitment).withSeals(seals);
        assertEq(word.claimed(keccak256("claims"), 7).seals(), seals);
    }

    function testFuzz_roundWord_revealed_fieldsKept_succeeds(
        bytes32 claimsHash,
        uint32 claimsBlock,
        bool forced,
        uint8 sample,
        bytes12 tag
    ) public {
        sample = uint8(uint256(sample) % 64);
        RoundWord claimedWord =
            LibRoundWord.committed(keccak256("c")).claimed(claimsHash, claimsBlock).withSeals(32).withAllCovered(true);
        RoundWord word = claimedWord.revealed(forced, sample, tag);
        assertEq(uint8(word.phase()), uint8(RoundPhase.Revealed));
        assertEq(word.forced(), forced);
        assertEq(word.forcedSample(), sample);
        assertEq(word.forcedEndTag(), tag);
        assertEq(word.claimsBlock(), claimsBlock, "the claims' block kept");
        assertEq(word.seals(), 32, "the seal count kept");
        assertFalse(word.allCovered(), "the covered flag is not a field of a revealed round");
    }

    function test_roundHash_clearsTheLow48Bits_succeeds() public {
        bytes32 ones = bytes32(type(uint256).max);
        assertEq(uint256(roundHash(ones)), type(uint256).max << 48);
        assertEq(roundHash(bytes32(uint256(0xffffffffffff))), bytes32(0));
    }
}
