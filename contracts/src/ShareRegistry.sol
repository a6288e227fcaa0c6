// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Contracts
import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {ModelShares} from "./ModelShares.sol";
// Interfaces
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IShareRegistry} from "./interfaces/IShareRegistry.sol";

/// @title ShareRegistry
/// @notice Registers models (owner, poster authorisations), creates one ModelShares token per model id
///         and mints verified steps as shares.
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

    /// @notice Owner per registered model (zero if unregistered).
    mapping(bytes32 modelId => address owner) internal _owners;

    /// @notice Account that may accept a pending hand-over.
    mapping(bytes32 modelId => address pendingOwner) internal _pendingOwners;

    /// @notice Ownership epoch: incremented on every hand-over, so authorisations lapse with it.
    mapping(bytes32 modelId => uint256 epoch) internal _epochs;

    /// @notice Posters authorised per model and ownership epoch.
    mapping(bytes32 modelId => mapping(uint256 epoch => mapping(address poster => bool authorized))) internal _posters;

    ////// Modifiers //////

    modifier onlyMinter() {
        if (msg.sender != _minter || msg.sender == address(0)) revert NotMinter(msg.sender);
        _;
    }

    modifier onlyModelOwner(bytes32 modelId) {
        if (msg.sender != _owners[modelId] || msg.sender == address(0)) revert NotModelOwner(modelId, msg.sender);
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
    function registerModel(bytes32 modelId) external {
        if (modelId == bytes32(0)) revert ZeroModelId();
        address owner = _owners[modelId];
        if (owner != address(0)) revert ModelAlreadyRegistered(modelId, owner);
        _owners[modelId] = msg.sender;
        emit ModelRegistered(modelId, msg.sender);
    }

    /// @inheritdoc IShareRegistry
    function transferModelOwnership(bytes32 modelId, address newOwner) external onlyModelOwner(modelId) {
        _pendingOwners[modelId] = newOwner;
        emit ModelOwnershipTransferStarted(modelId, msg.sender, newOwner);
    }

    /// @inheritdoc IShareRegistry
    function acceptModelOwnership(bytes32 modelId) external {
        if (msg.sender != _pendingOwners[modelId] || msg.sender == address(0)) {
            revert NotPendingModelOwner(modelId, msg.sender);
        }
        address previous = _owners[modelId];
        _owners[modelId] = msg.sender;
        delete _pendingOwners[modelId];
        ++_epochs[modelId];
        emit ModelOwnershipTransferred(modelId, previous, msg.sender);
    }

    /// @inheritdoc IShareRegistry
    function authorizePoster(bytes32 modelId, address poster) external onlyModelOwner(modelId) {
        if (poster == address(0)) revert ZeroAddress();
        mapping(address => bool) storage posters = _posters[modelId][_epochs[modelId]];
        if (posters[poster]) revert PosterAlreadyAuthorized(modelId, poster);
        posters[poster] = true;
        emit PosterAuthorized(modelId, poster);
    }

    /// @inheritdoc IShareRegistry
    function revokePoster(bytes32 modelId, address poster) external onlyModelOwner(modelId) {
        mapping(address => bool) storage posters = _posters[modelId][_epochs[modelId]];
        if (!posters[poster]) revert PosterNotAuthorized(modelId, poster);
        posters[poster] = false;
        emit PosterRevoked(modelId, poster);
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
    function modelOwner(bytes32 modelId) external view returns (address owner) {
        owner = _owners[modelId];
    }

    /// @inheritdoc IShareRegistry
    function pendingModelOwner(bytes32 modelId) external view returns (address pendingOwner) {
        pendingOwner = _pendingOwners[modelId];
    }

    /// @inheritdoc IShareRegistry
    function isPoster(bytes32 modelId, address account) external view returns (bool authorized) {
        authorized = _posters[modelId][_epochs[modelId]][account];
    }

    /// @inheritdoc IShareRegistry
    function canPost(bytes32 modelId, address account) external view returns (bool allowed) {
        address owner = _owners[modelId];
        allowed = owner != address(0) && (account == owner || _posters[modelId][_epochs[modelId]][account]);
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
