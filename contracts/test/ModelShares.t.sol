// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {PRBTest} from "@prb/test/PRBTest.sol";
import {Bound} from "./utils/Bound.sol";
// Contracts
import {ModelShares} from "../src/ModelShares.sol";
import {VeriToken} from "../src/VeriToken.sol";
// Libraries
import {Clones} from "@openzeppelin/contracts/proxy/Clones.sol";
// Interfaces
import {IModelShares} from "../src/interfaces/IModelShares.sol";

/// @notice ModelShares in isolation: the test contract is the registry (the only minter); the token is
///         an EIP-1167 clone of an implementation with the model id as argument, as the registry makes it.
abstract contract ModelShares_Init is PRBTest, Bound {
    VeriToken internal token;
    ModelShares internal shares;
    ModelShares internal implementation;
    bytes32 internal constant MODEL = keccak256("digits-mlp");
    address internal constant ALICE = address(0xA11CE);
    address internal constant BOB = address(0xB0B);
    address internal constant CAROL = address(0xCA201);
    address internal constant PAYER = address(0xFEE);

    function setUp() public virtual {
        token = new VeriToken();
        implementation = new ModelShares(token, address(this));
        shares = ModelShares(Clones.cloneWithImmutableArgs(address(implementation), abi.encode(MODEL)));
        vm.startPrank(PAYER);
        token.faucet(1_000_000e18);
        token.approve(address(shares), type(uint256).max);
        vm.stopPrank();
    }

    function _pay(uint256 amount) internal {
        vm.prank(PAYER);
        shares.payRevenue(amount);
    }
}

/// @notice A clone reads the model id from its own code, and the implementation's immutables (payment
///         token, registry) through delegatecall; name and symbol are constants.
contract ModelShares_Clone_Test is ModelShares_Init {
    function test_clone_readsItsArguments_succeeds() public {
        assertEq(shares.modelId(), MODEL, "model id");
        assertEq(address(shares.paymentToken()), address(token), "payment token");
        assertEq(shares.registry(), address(this), "registry");
        assertEq(shares.name(), "Veritrain Model Shares", "name");
        assertEq(shares.symbol(), "VMS", "symbol");
        assertEq(uint256(shares.decimals()), 0, "decimals");
    }

    function test_clone_mintByStranger_reverts() public {
        vm.prank(ALICE);
        vm.expectRevert(abi.encodeWithSelector(IModelShares.NotRegistry.selector, ALICE));
        shares.mint(ALICE, 1);
    }

    function test_clones_keepSeparateBalances_succeeds() public {
        ModelShares other =
            ModelShares(Clones.cloneWithImmutableArgs(address(implementation), abi.encode(keccak256("other"))));
        shares.mint(ALICE, 5);
        other.mint(ALICE, 2);
        assertEq(shares.balanceOf(ALICE), 5, "first model");
        assertEq(other.balanceOf(ALICE), 2, "second model");
        assertEq(implementation.totalSupply(), 0, "implementation never minted into");
        assertEq(other.modelId(), keccak256("other"), "second id");
    }
}

contract ModelShares_PayRevenue_Test is ModelShares_Init {
    function test_payRevenue_noShares_reverts() public {
        vm.expectRevert(IModelShares.NoSharesOutstanding.selector);
        _pay(1);
    }

    function test_payRevenue_zero_reverts() public {
        shares.mint(ALICE, 1);
        vm.expectRevert(IModelShares.ZeroRevenue.selector);
        _pay(0);
    }

    function testFuzz_payRevenue_proRata_succeeds(uint256 a, uint256 b, uint256 amount) public {
        a = bound(a, 1, 1e9);
        b = bound(b, 1, 1e9);
        amount = bound(amount, 1, 1_000_000e18);
        shares.mint(ALICE, a);
        shares.mint(BOB, b);
        _pay(amount);
        uint256 owedA = shares.revenueOf(ALICE);
        uint256 owedB = shares.revenueOf(BOB);
        assertLte(owedA + owedB, amount);
        // Rounding loses at most a couple of wei per holder.
        assertAlmostEq(owedA, amount * a / (a + b), 2);
        assertAlmostEq(owedB, amount * b / (a + b), 2);
        assertEq(shares.totalRevenuePaid(), amount);
    }

    function test_payRevenue_proRata_succeeds() public {
        testFuzz_payRevenue_proRata_succeeds(3, 1, 100e18);
    }
}

contract ModelShares_ClaimRevenue_Test is ModelShares_Init {
    function test_claimRevenue_paysOut_succeeds() public {
        shares.mint(ALICE, 16);
        _pay(160e18);
        vm.expectEmit(address(shares));
        emit IModelShares.RevenueClaimed(ALICE, 160e18);
        vm.prank(ALICE);
        shares.claimRevenue();
        assertEq(token.balanceOf(ALICE), 160e18);
        assertEq(shares.revenueOf(ALICE), 0);
        assertEq(shares.totalRevenueClaimed(), 160e18);
    }

    function test_claimRevenue_nothing_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IModelShares.NoRevenueToClaim.selector, ALICE));
        vm.prank(ALICE);
        shares.claimRevenue();
    }

    /// @notice Revenue earned before a transfer stays with the sender; later revenue follows the shares.
    function testFuzz_transfer_keepsEarnedRevenue_succeeds(uint256 held, uint256 moved, uint256 r1, uint256 r2) public {
        held = bound(held, 1, 1e6);
        moved = bound(moved, 0, held);
        r1 = bound(r1, 1, 1_000e18);
        r2 = bound(r2, 1, 1_000e18);
        shares.mint(ALICE, held);
        _pay(r1);
        vm.prank(ALICE);
        assertTrue(shares.transfer(BOB, moved));
        _pay(r2);
        uint256 expectedBob = r2 * moved / held;
        assertAlmostEq(shares.revenueOf(BOB), expectedBob, 2);
        assertAlmostEq(shares.revenueOf(ALICE), r1 + r2 - expectedBob, 2);
        assertLte(shares.revenueOf(ALICE) + shares.revenueOf(BOB), r1 + r2);
    }

    function test_transfer_keepsEarnedRevenue_succeeds() public {
        testFuzz_transfer_keepsEarnedRevenue_succeeds(16, 4, 100e18, 100e18);
    }

    function test_ownershipBps_succeeds() public {
        assertEq(shares.ownershipBps(ALICE), 0);
        shares.mint(ALICE, 3);
        shares.mint(BOB, 1);
        assertEq(shares.ownershipBps(ALICE), 7500);
        assertEq(shares.ownershipBps(BOB), 2500);
        assertEq(shares.ownershipBps(CAROL), 0);
        assertEq(uint256(shares.decimals()), 0);
    }
}
