// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {PRBTest} from "@prb/test/PRBTest.sol";
import {InvariantTest} from "../utils/InvariantTest.sol";
import {ModelSharesHandler} from "./handlers/ModelSharesHandler.sol";
// Contracts
import {ModelShares} from "../../src/ModelShares.sol";
import {VeriToken} from "../../src/VeriToken.sol";

/// @title ModelShares_Invariant_Test
/// @notice Revenue accounting invariants (P4 of PROPERTIES.md) under random mints, transfers,
///         payments and claims.
contract ModelShares_Invariant_Test is PRBTest, InvariantTest {
    VeriToken internal token;
    ModelSharesHandler internal handler;
    ModelShares internal shares;

    function setUp() public {
        token = new VeriToken();
        handler = new ModelSharesHandler(token);
        shares = handler.shares();
        targetContract(address(handler));
        bytes4[] memory selectors = new bytes4[](4);
        selectors[0] = ModelSharesHandler.mint.selector;
        selectors[1] = ModelSharesHandler.transfer.selector;
        selectors[2] = ModelSharesHandler.payRevenue.selector;
        selectors[3] = ModelSharesHandler.claimRevenue.selector;
        targetSelector(FuzzSelector({addr: address(handler), selectors: selectors}));
    }

    /// @custom:invariant P4a Revenue paid out never exceeds revenue paid in.
    function invariant_paidOutNotAbovePaidIn() public {
        assertLte(handler.ghost_paidOut(), handler.ghost_paidIn(), "paid out > paid in");
        assertEq(shares.totalRevenuePaid(), handler.ghost_paidIn());
        assertEq(shares.totalRevenueClaimed(), handler.ghost_paidOut());
    }

    /// @custom:invariant P4b What holders can still claim is covered by the contract's balance, which
    ///                  is exactly paid in minus paid out.
    function invariant_claimableCovered() public {
        uint256 owed;
        uint256 count = handler.holderCount();
        for (uint256 i; i < count; ++i) {
            owed += shares.revenueOf(handler.holders(i));
        }
        uint256 balance = token.balanceOf(address(shares));
        assertEq(balance, handler.ghost_paidIn() - handler.ghost_paidOut(), "balance != in - out");
        assertLte(owed, balance, "claimable > balance");
    }

    /// @custom:invariant P4c Shares are conserved by transfers: the holders' balances add up to the supply.
    function invariant_supplyAddsUp() public {
        uint256 sum;
        uint256 count = handler.holderCount();
        for (uint256 i; i < count; ++i) {
            sum += shares.balanceOf(handler.holders(i));
        }
        assertEq(sum, shares.totalSupply());
    }
}
