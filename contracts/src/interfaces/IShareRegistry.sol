// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Interfaces
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";

/// @title IShareRegistry
/// @notice One ModelShares token per model id. The minter (the JobManager) mints verified steps as
///         ownership shares; the model's token is created on first mint.
interface IShareRegistry {
    ////// Errors //////

    /// @notice Thrown when the caller is not the minter.
    /// @param caller msg.sender.
    error NotMinter(address caller);

    /// @notice Thrown when `setMinter` is called a second time.
    /// @param minter The minter already set.
    error MinterAlreadySet(address minter);

    /// @notice Thrown when an address argument is zero.
    error ZeroAddress();

    ////// Events //////

    /// @notice Emitted once, when the minter was set.
    /// @param minter Minter (the JobManager).
    event MinterSet(address indexed minter);

    /// @notice Emitted when a model's share token was created.
    /// @param modelId Model id.
    /// @param token ModelShares token.
    event ModelCreated(bytes32 indexed modelId, address indexed token);

    /// @notice Emitted when shares were minted.
    /// @param modelId Model id.
    /// @param to Receiver.
    /// @param steps Shares minted (1 share = 1 verified step).
    event SharesMinted(bytes32 indexed modelId, address indexed to, uint256 steps);

    ////// Functions //////

    /// @notice Sets the minter, once (DEFAULT_ADMIN_ROLE).
    /// @param minter Minter (the JobManager).
    function setMinter(address minter) external;

    /// @notice Mints `steps` shares of model `modelId` to `to`, creating the token on first use
    ///         (minter only).
    /// @param modelId Model id.
    /// @param to Receiver.
    /// @param steps Verified steps (shares).
    function mintShares(bytes32 modelId, address to, uint256 steps) external;

    /// @notice Share token of `modelId` (zero if none yet).
    /// @param modelId Model id.
    /// @return token ModelShares token.
    function sharesOf(bytes32 modelId) external view returns (address token);

    /// @notice Number of models with a share token.
    /// @return count Models.
    function modelCount() external view returns (uint256 count);

    /// @notice Model id at `index` in creation order.
    /// @param index Index in [0, modelCount()).
    /// @return modelId Model id.
    function modelAt(uint256 index) external view returns (bytes32 modelId);

    /// @notice Minter (zero until set).
    /// @return minter Minter.
    function minter() external view returns (address minter);

    /// @notice Payment token in which model revenue is paid.
    /// @return token ERC-20.
    function paymentToken() external view returns (IERC20 token);
}
