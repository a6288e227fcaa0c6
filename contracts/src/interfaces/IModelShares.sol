// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Interfaces
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";

/// @title IModelShares
/// @notice Ownership shares of one model (ERC-20, 0 decimals, 1 share = 1 verified training step).
///         Revenue paid in the payment token is claimable pro rata to holdings at payment time;
///         transfers never move revenue already earned.
interface IModelShares is IERC20 {
    ////// Errors //////

    /// @notice Thrown when the caller is not the ShareRegistry.
    /// @param caller msg.sender.
    error NotRegistry(address caller);

    /// @notice Thrown when paying zero revenue.
    error ZeroRevenue();

    /// @notice Thrown when paying revenue while no share exists.
    error NoSharesOutstanding();

    /// @notice Thrown when claiming with nothing claimable.
    /// @param account Caller.
    error NoRevenueToClaim(address account);

    ////// Events //////

    /// @notice Emitted when revenue was paid in.
    /// @param payer Payer.
    /// @param amount Amount (wei).
    /// @param magnifiedRevenuePerShare Cumulative revenue per share afterwards, times 2**64.
    event RevenuePaid(address indexed payer, uint256 amount, uint256 magnifiedRevenuePerShare);

    /// @notice Emitted when revenue was claimed.
    /// @param account Holder (and receiver).
    /// @param amount Amount (wei).
    event RevenueClaimed(address indexed account, uint256 amount);

    ////// Functions //////

    /// @notice Mints `amount` shares to `to` (registry only).
    /// @param to Receiver.
    /// @param amount Shares (steps).
    function mint(address to, uint256 amount) external;

    /// @notice Pays `amount` of payment token as revenue to current holders (transferFrom).
    /// @param amount Amount (wei), > 0.
    function payRevenue(uint256 amount) external;

    /// @notice Transfers the caller's claimable revenue to the caller.
    function claimRevenue() external;

    /// @notice Revenue claimable by `account` (wei).
    /// @param account Holder.
    /// @return amount Claimable (wei).
    function revenueOf(address account) external view returns (uint256 amount);

    /// @notice Share of the supply held by `account`, in basis points (balance * 10_000 / supply).
    /// @param account Holder.
    /// @return bps Basis points (0 if no supply).
    function ownershipBps(address account) external view returns (uint256 bps);

    /// @notice Model id.
    /// @return modelId Model id.
    function modelId() external view returns (bytes32 modelId);

    /// @notice Payment token.
    /// @return token ERC-20.
    function paymentToken() external view returns (IERC20 token);

    /// @notice ShareRegistry that mints.
    /// @return registry Registry.
    function registry() external view returns (address registry);

    /// @notice Revenue paid in so far (wei).
    /// @return amount Total paid in (wei).
    function totalRevenuePaid() external view returns (uint256 amount);

    /// @notice Revenue claimed so far (wei).
    /// @return amount Total claimed (wei).
    function totalRevenueClaimed() external view returns (uint256 amount);
}
