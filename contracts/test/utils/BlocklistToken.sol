// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Contracts
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title BlocklistToken
/// @notice A hostile ERC-20 for tests: like a stablecoin with a blocklist, it refuses every
///         transfer (and mint) to a blocklisted recipient. `Escrow.pay` must fall back to a credit
///         for such a recipient instead of reverting its caller.
contract BlocklistToken is ERC20 {
    ////// Errors //////

    /// @notice Thrown when tokens would reach a blocklisted account.
    /// @param account Recipient.
    error Blocklisted(address account);

    /// @notice Thrown when someone other than the deployer edits the blocklist.
    /// @param caller msg.sender.
    error NotOwner(address caller);

    ////// State //////

    /// @notice Deployer: the only account that may edit the blocklist.
    address public immutable owner;

    /// @notice Accounts that may not receive tokens.
    mapping(address account => bool blocked) public isBlocked;

    ////// Constructor //////

    constructor() ERC20("Blocklist Token", "BLOCK") {
        owner = msg.sender;
    }

    ////// External //////

    /// @notice Mints `amount` (wei) to `to` (anyone may: a test token).
    /// @param to Recipient.
    /// @param amount Amount (wei).
    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    /// @notice Blocks or unblocks `account` as a recipient (owner only).
    /// @param account Account.
    /// @param blocked True to refuse every transfer to it.
    function setBlocked(address account, bool blocked) external {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        isBlocked[account] = blocked;
    }

    ////// Internal //////

    /// @inheritdoc ERC20
    /// @dev Reverts `Blocklisted` when `to` is blocklisted.
    function _update(address from, address to, uint256 value) internal override {
        if (isBlocked[to]) revert Blocklisted(to);
        super._update(from, to, value);
    }
}
