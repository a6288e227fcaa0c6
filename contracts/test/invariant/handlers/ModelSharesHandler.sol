// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Vm} from "@prb/test/Vm.sol";
import {Bound} from "../../utils/Bound.sol";
// Contracts
import {ModelShares} from "../../../src/ModelShares.sol";
import {VeriToken} from "../../../src/VeriToken.sol";
// Libraries
import {Clones} from "@openzeppelin/contracts/proxy/Clones.sol";

/// @title ModelSharesHandler
/// @notice Mints, transfers, pays and claims revenue on one ModelShares token (the handler is its
///         registry), tracking what was paid in and out (@custom:property-id P4).
contract ModelSharesHandler is Bound {
    Vm internal constant vm = Vm(address(uint160(uint256(keccak256("hevm cheat code")))));

    VeriToken public token;
    ModelShares public shares;
    address[] public holders;

    /// @custom:property-id P4 Revenue paid in.
    uint256 public ghost_paidIn;
    /// @custom:property-id P4 Revenue paid out.
    uint256 public ghost_paidOut;

    constructor(VeriToken token_) {
        token = token_;
        // As the registry makes it: an EIP-1167 clone of the implementation with the model id as argument.
        ModelShares implementation = new ModelShares(token_, address(this));
        shares = ModelShares(Clones.cloneWithImmutableArgs(address(implementation), abi.encode(keccak256("model"))));
        for (uint256 i; i < 4; ++i) {
            // forge-lint: disable-next-line(unsafe-typecast)
            address holder = address(uint160(0x1000 + i));
            holders.push(holder);
            vm.startPrank(holder);
            token.faucet(1_000_000e18);
            token.approve(address(shares), type(uint256).max);
            vm.stopPrank();
        }
    }

    function mint(uint256 holderSeed, uint256 amount) external {
        shares.mint(holders[holderSeed % holders.length], bound(amount, 1, 1e6));
    }

    function transfer(uint256 fromSeed, uint256 toSeed, uint256 amount) external {
        address from = holders[fromSeed % holders.length];
        uint256 balance = shares.balanceOf(from);
        if (balance == 0) return;
        vm.prank(from);
        require(shares.transfer(holders[toSeed % holders.length], bound(amount, 0, balance)), "transfer");
    }

    function payRevenue(uint256 payerSeed, uint256 amount) external {
        if (shares.totalSupply() == 0) return;
        amount = bound(amount, 1, 10_000e18);
        vm.prank(holders[payerSeed % holders.length]);
        shares.payRevenue(amount);
        ghost_paidIn += amount;
    }

    function claimRevenue(uint256 holderSeed) external {
        address holder = holders[holderSeed % holders.length];
        uint256 owed = shares.revenueOf(holder);
        if (owed == 0) return;
        vm.prank(holder);
        shares.claimRevenue();
        ghost_paidOut += owed;
    }

    function holderCount() external view returns (uint256) {
        return holders.length;
    }
}
