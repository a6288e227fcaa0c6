// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {PRBTest} from "@prb/test/PRBTest.sol";
import {Bound} from "./utils/Bound.sol";
// Contracts
import {VeriToken} from "../src/VeriToken.sol";
// Interfaces
import {IVeriToken} from "../src/interfaces/IVeriToken.sol";

contract VeriToken_Faucet_Test is PRBTest, Bound {
    VeriToken internal token;
    address internal constant ALICE = address(0xA11CE);

    function setUp() public {
        token = new VeriToken();
    }

    function test_metadata_succeeds() public {
        assertEq(token.name(), "Veritrain Test Token");
        assertEq(token.symbol(), "VTT");
        assertEq(uint256(token.decimals()), 18);
        assertEq(token.FAUCET_LIMIT(), 1_000_000e18);
    }

    function testFuzz_faucet_mintsToCaller_succeeds(uint256 amount) public {
        amount = bound(amount, 0, token.FAUCET_LIMIT());
        vm.expectEmit(address(token));
        emit IVeriToken.FaucetDripped(ALICE, amount);
        vm.prank(ALICE);
        token.faucet(amount);
        assertEq(token.balanceOf(ALICE), amount);
        assertEq(token.totalSupply(), amount);
    }

    function test_faucet_mintsToCaller_succeeds() public {
        testFuzz_faucet_mintsToCaller_succeeds(1_000_000e18);
    }

    function testFuzz_faucet_overLimit_reverts(uint256 amount) public {
        amount = bound(amount, token.FAUCET_LIMIT() + 1, type(uint256).max);
        vm.expectRevert(abi.encodeWithSelector(IVeriToken.FaucetLimitExceeded.selector, amount, token.FAUCET_LIMIT()));
        vm.prank(ALICE);
        token.faucet(amount);
    }

    function test_faucet_overLimit_reverts() public {
        testFuzz_faucet_overLimit_reverts(1_000_000e18 + 1);
    }
}
