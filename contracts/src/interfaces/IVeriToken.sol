// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Interfaces
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";

/// @title IVeriToken
/// @notice Devnet payment token of veritrain ("Veritrain Test Token", VTT, 18 decimals) with an
///         open faucet. On a public testnet any existing ERC-20 may replace it.
interface IVeriToken is IERC20 {
    ////// Errors //////

    /// @notice Thrown when a faucet call asks for more than `FAUCET_LIMIT`.
    /// @param requested Amount asked for (wei).
    /// @param limit Maximum per call (wei).
    error FaucetLimitExceeded(uint256 requested, uint256 limit);

    ////// Events //////

    /// @notice Emitted when the faucet minted tokens.
    /// @param account Receiver (the caller).
    /// @param amount Amount minted (wei).
    event FaucetDripped(address indexed account, uint256 amount);

    ////// Functions //////

    /// @notice Maximum amount one faucet call may mint (wei).
    /// @return limit 1_000_000e18.
    function FAUCET_LIMIT() external view returns (uint256 limit);

    /// @notice Mints `amount` tokens to the caller.
    /// @param amount Amount to mint (wei), at most `FAUCET_LIMIT`.
    function faucet(uint256 amount) external;
}
