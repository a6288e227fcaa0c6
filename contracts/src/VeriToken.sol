// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Contracts
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
// Interfaces
import {IVeriToken} from "./interfaces/IVeriToken.sol";

/// @title VeriToken
/// @notice Devnet payment token ("Veritrain Test Token", VTT, 18 decimals) with an open faucet.
/// @dev Test money only: anyone can mint up to FAUCET_LIMIT per call.
contract VeriToken is ERC20, IVeriToken {
    ////// Constants //////

    /// @inheritdoc IVeriToken
    uint256 public constant FAUCET_LIMIT = 1_000_000e18;

    ////// Constructor //////

    constructor() ERC20("Veritrain Test Token", "VTT") {}

    ////// External //////

    /// @inheritdoc IVeriToken
    function faucet(uint256 amount) external {
        if (amount > FAUCET_LIMIT) revert FaucetLimitExceeded(amount, FAUCET_LIMIT);
        _mint(msg.sender, amount);
        emit FaucetDripped(msg.sender, amount);
    }
}
