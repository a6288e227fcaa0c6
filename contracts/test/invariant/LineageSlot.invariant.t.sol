// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {PRBTest} from "@prb/test/PRBTest.sol";
import {InvariantTest} from "../utils/InvariantTest.sol";
import {LineageSlotHandler} from "./handlers/LineageSlotHandler.sol";
// Contracts
import {ModelShares} from "../../src/ModelShares.sol";

/// @title LineageSlot_Invariant_Test
/// @notice P8 of PROPERTIES.md: heads are decided by a rule, not a race (docs/SECURITY.md P-18).
///         Whatever the owner (poster and solver), its sniper and a withholder do, in any order and
///         at any time, the honest trainer of a slot job ends with exactly its shares, the sniper
///         and the withholder mint nothing, the supply is the lineage's compute and no honest
///         actor's holdings fall below their start.
/// forge-config: default.invariant.runs = 16
/// forge-config: default.invariant.depth = 24
/// forge-config: ci.invariant.runs = 32
/// forge-config: ci.invariant.depth = 32
contract LineageSlot_Invariant_Test is PRBTest, InvariantTest {
    LineageSlotHandler internal handler;

    function setUp() public {
        handler = new LineageSlotHandler();
        handler.setUp();
        targetContract(address(handler));
        bytes4[] memory selectors = new bytes4[](7);
        selectors[0] = LineageSlotHandler.post.selector;
        selectors[1] = LineageSlotHandler.trainSlot.selector;
        selectors[2] = LineageSlotHandler.ownerTrainsSlot.selector;
        selectors[3] = LineageSlotHandler.snipe.selector;
        selectors[4] = LineageSlotHandler.withhold.selector;
        selectors[5] = LineageSlotHandler.cancelSlot.selector;
        selectors[6] = LineageSlotHandler.warp.selector;
        targetSelector(FuzzSelector({addr: address(handler), selectors: selectors}));
    }

    /// @notice Every run ends with the three attacks in a row (`LineageSlotHandler.finish`), then
    ///         requires that slot jobs were trained, sniped and withheld and checks P8 once more: a
    ///         run that never reaches them fails instead of passing.
    function afterInvariant() public {
        handler.finish();
        assertGt(handler.ghost_calls("trainSlot"), 0, "no slot job trained");
        assertGt(handler.ghost_calls("snipe"), 0, "no snipe");
        assertGt(handler.ghost_calls("withhold"), 0, "no slot job withheld");
        invariant_trainerKeepsItsShares();
        invariant_noHonestLoss();
    }

    /// @custom:invariant P8a The honest trainer holds the shares of every slot job it trained and
    ///                  appended; the owner those of its own; the sniper and the withholder none.
    function invariant_trainerKeepsItsShares() public {
        ModelShares shares = handler.shares();
        assertEq(shares.balanceOf(handler.trainer()), handler.ghost_trainerSteps(), "trainer's shares");
        assertEq(shares.balanceOf(handler.owner()), handler.ghost_ownerSteps(), "owner's shares");
        assertEq(shares.balanceOf(handler.sniper()), 0, "the sniper minted");
        assertEq(shares.balanceOf(handler.withholder()), 0, "the withholder minted");
        assertEq(shares.totalSupply(), handler.ghost_trainerSteps() + handler.ghost_ownerSteps(), "supply");
    }

    /// @custom:invariant P8b No honest actor (the trainer, every verifier) ends below its start.
    function invariant_noHonestLoss() public {
        address trainer = handler.trainer();
        assertGte(handler.holdings(trainer), handler.startHoldings(trainer), "trainer lost tokens");
        uint256 count = handler.verifierCount();
        for (uint256 i; i < count; ++i) {
            address verifier = handler.verifierAt(i);
            assertGte(handler.holdings(verifier), handler.startHoldings(verifier), "verifier lost tokens");
        }
    }
}
