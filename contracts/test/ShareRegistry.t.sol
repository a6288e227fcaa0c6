// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Deployers} from "./utils/Deployers.sol";
// Contracts
import {ModelShares} from "../src/ModelShares.sol";
import {ShareRegistry} from "../src/ShareRegistry.sol";
// Interfaces
import {IAccessControl} from "@openzeppelin/contracts/access/IAccessControl.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IModelShares} from "../src/interfaces/IModelShares.sol";
import {IShareRegistry} from "../src/interfaces/IShareRegistry.sol";

contract ShareRegistry_SetMinter_Test is Deployers {
    function test_constructor_zeroAddress_reverts() public {
        vm.expectRevert(IShareRegistry.ZeroAddress.selector);
        new ShareRegistry(IERC20(address(0)), address(this));
    }

    function test_setMinter_again_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.MinterAlreadySet.selector, address(jobManager)));
        registry.setMinter(stranger);
    }

    function test_setMinter_notAdmin_reverts() public {
        ShareRegistry fresh = new ShareRegistry(token, address(this));
        bytes32 role = fresh.DEFAULT_ADMIN_ROLE();
        vm.expectRevert(
            abi.encodeWithSelector(IAccessControl.AccessControlUnauthorizedAccount.selector, stranger, role)
        );
        vm.prank(stranger);
        fresh.setMinter(stranger);
    }

    function test_setMinter_zero_reverts() public {
        ShareRegistry fresh = new ShareRegistry(token, address(this));
        vm.expectRevert(IShareRegistry.ZeroAddress.selector);
        fresh.setMinter(address(0));
    }
}

contract ShareRegistry_MintShares_Test is Deployers {
    function test_mintShares_createsModelOnce_succeeds() public {
        vm.expectEmit(false, false, false, false, address(registry));
        emit IShareRegistry.ModelCreated(MODEL_ID, address(0));
        vm.prank(address(jobManager));
        registry.mintShares(MODEL_ID, solver, 16);
        address shares = registry.sharesOf(MODEL_ID);
        assertNotEq(shares, address(0));
        vm.prank(address(jobManager));
        registry.mintShares(MODEL_ID, stranger, 8);
        assertEq(registry.sharesOf(MODEL_ID), shares);
        assertEq(registry.modelCount(), 1);
        assertEq(registry.modelAt(0), MODEL_ID);
        ModelShares model = ModelShares(shares);
        assertEq(model.balanceOf(solver), 16);
        assertEq(model.totalSupply(), 24);
        assertEq(uint256(model.decimals()), 0);
        assertEq(model.modelId(), MODEL_ID);
        assertEq(address(model.paymentToken()), address(token));
        assertEq(model.registry(), address(registry));
        assertEq(address(registry.paymentToken()), address(token));
    }

    function test_mintShares_notMinter_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IShareRegistry.NotMinter.selector, stranger));
        vm.prank(stranger);
        registry.mintShares(MODEL_ID, stranger, 1);
    }

    function test_mint_notRegistry_reverts() public {
        vm.prank(address(jobManager));
        registry.mintShares(MODEL_ID, solver, 1);
        ModelShares model = ModelShares(registry.sharesOf(MODEL_ID));
        vm.expectRevert(abi.encodeWithSelector(IModelShares.NotRegistry.selector, stranger));
        vm.prank(stranger);
        model.mint(stranger, 1);
    }
}
