// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Contracts
import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {ModelShares} from "./ModelShares.sol";
// Interfaces
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IShareRegistry} from "./interfaces/IShareRegistry.sol";

/// @title ShareRegistry
/// @notice Creates one ModelShares token per model id and mints verified steps as shares.
/// @dev Deployment: `constructor(paymentToken, admin)` before the JobManager, then the admin calls
///      `setMinter(jobManager)` once.
contract ShareRegistry is AccessControl, IShareRegistry {
    ////// Constants / Immutables //////

    /// @notice Payment token for model revenue.
    IERC20 internal immutable _PAYMENT_TOKEN;

    ////// State //////

    /// @notice Minter (the JobManager).
    address internal _minter;

    /// @notice Share token per model.
    mapping(bytes32 modelId => address token) internal _shares;

    /// @notice Models in creation order.
    bytes32[] internal _models;

    ////// Modifiers //////

    modifier onlyMinter() {
        if (msg.sender != _minter || msg.sender == address(0)) revert NotMinter(msg.sender);
        _;
    }

    ////// Constructor //////

    /// @param paymentToken_ Token in which model revenue is paid.
    /// @param admin Holder of DEFAULT_ADMIN_ROLE (sets the minter).
    constructor(IERC20 paymentToken_, address admin) {
        if (address(paymentToken_) == address(0) || admin == address(0)) revert ZeroAddress();
        _PAYMENT_TOKEN = paymentToken_;
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
    }

    ////// External //////

    /// @inheritdoc IShareRegistry
    function setMinter(address minter_) external onlyRole(DEFAULT_ADMIN_ROLE) {
        if (minter_ == address(0)) revert ZeroAddress();
        if (_minter != address(0)) revert MinterAlreadySet(_minter);
        _minter = minter_;
        emit MinterSet(minter_);
    }

    /// @inheritdoc IShareRegistry
    function mintShares(bytes32 modelId, address to, uint256 steps) external onlyMinter {
        address token = _shares[modelId];
        if (token == address(0)) {
            token = address(new ModelShares(modelId, _PAYMENT_TOKEN, address(this)));
            _shares[modelId] = token;
            _models.push(modelId);
            emit ModelCreated(modelId, token);
        }
        emit SharesMinted(modelId, to, steps);
        // SAFETY: `token` was created by this registry; ModelShares.mint has no external calls.
        ModelShares(token).mint(to, steps);
    }

    /// @inheritdoc IShareRegistry
    function sharesOf(bytes32 modelId) external view returns (address token) {
        token = _shares[modelId];
    }

    /// @inheritdoc IShareRegistry
    function modelCount() external view returns (uint256 count) {
        count = _models.length;
    }

    /// @inheritdoc IShareRegistry
    function modelAt(uint256 index) external view returns (bytes32 modelId) {
        modelId = _models[index];
    }

    /// @inheritdoc IShareRegistry
    function minter() external view returns (address) {
        return _minter;
    }

    /// @inheritdoc IShareRegistry
    function paymentToken() external view returns (IERC20) {
        return _PAYMENT_TOKEN;
    }
}
