// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Interfaces
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";

/// @title IShareRegistry
/// @notice One ModelShares token per model id. The minter (the JobManager) mints verified steps as
///         ownership shares; the model's token is created on first mint.
///         Models are registered entities: the first account to register an id owns it (first come,
///         first served), may hand it over in two steps (OpenZeppelin `Ownable2Step` pattern) and
///         authorises the accounts that may post jobs under it. The owner cannot mint shares, touch
///         revenue or change past jobs: only jobs posted by the owner or an authorised poster mint.
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

    /// @notice Thrown when registering the zero model id.
    error ZeroModelId();

    /// @notice Thrown when registering a model id that already has an owner.
    /// @param modelId Model id.
    /// @param owner Its owner.
    error ModelAlreadyRegistered(bytes32 modelId, address owner);

    /// @notice Thrown when an owner-only call comes from another account (or the model is unregistered).
    /// @param modelId Model id.
    /// @param caller msg.sender.
    error NotModelOwner(bytes32 modelId, address caller);

    /// @notice Thrown when `acceptModelOwnership` comes from an account other than the pending owner.
    /// @param modelId Model id.
    /// @param caller msg.sender.
    error NotPendingModelOwner(bytes32 modelId, address caller);

    /// @notice Thrown when authorising a poster that is already authorised.
    /// @param modelId Model id.
    /// @param poster Poster.
    error PosterAlreadyAuthorized(bytes32 modelId, address poster);

    /// @notice Thrown when revoking a poster that is not authorised.
    /// @param modelId Model id.
    /// @param poster Poster.
    error PosterNotAuthorized(bytes32 modelId, address poster);

    ////// Events //////

    /// @notice Emitted once, when the minter was set.
    /// @param minter Minter (the JobManager).
    event MinterSet(address indexed minter);

    /// @notice Emitted when a model id was registered.
    /// @param modelId Model id.
    /// @param owner Its first owner (the registrant).
    event ModelRegistered(bytes32 indexed modelId, address indexed owner);

    /// @notice Emitted when an owner started a hand-over (zero `pendingOwner` cancels one).
    /// @param modelId Model id.
    /// @param owner Current owner.
    /// @param pendingOwner Account that may accept.
    event ModelOwnershipTransferStarted(bytes32 indexed modelId, address indexed owner, address indexed pendingOwner);

    /// @notice Emitted when a pending owner accepted; every poster authorisation of the previous
    ///         owner lapses.
    /// @param modelId Model id.
    /// @param previousOwner Previous owner.
    /// @param newOwner New owner.
    event ModelOwnershipTransferred(bytes32 indexed modelId, address indexed previousOwner, address indexed newOwner);

    /// @notice Emitted when the owner authorised an account to post jobs under the model.
    /// @param modelId Model id.
    /// @param poster Poster.
    event PosterAuthorized(bytes32 indexed modelId, address indexed poster);

    /// @notice Emitted when the owner revoked a poster.
    /// @param modelId Model id.
    /// @param poster Poster.
    event PosterRevoked(bytes32 indexed modelId, address indexed poster);

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

    /// @notice Registers `modelId` with the caller as its owner (first come, first served).
    /// @param modelId Model id (keccak256 of the model name), non-zero.
    function registerModel(bytes32 modelId) external;

    /// @notice Starts handing `modelId` to `newOwner`, who must accept (owner only). A zero
    ///         `newOwner` cancels a pending hand-over.
    /// @param modelId Model id.
    /// @param newOwner Account that may accept.
    function transferModelOwnership(bytes32 modelId, address newOwner) external;

    /// @notice Accepts a pending hand-over of `modelId` (pending owner only). Posters authorised by
    ///         the previous owner lapse.
    /// @param modelId Model id.
    function acceptModelOwnership(bytes32 modelId) external;

    /// @notice Authorises `poster` to post jobs under `modelId` (owner only).
    /// @param modelId Model id.
    /// @param poster Account, non-zero.
    function authorizePoster(bytes32 modelId, address poster) external;

    /// @notice Revokes `poster` (owner only). Jobs it already posted are unaffected.
    /// @param modelId Model id.
    /// @param poster Account.
    function revokePoster(bytes32 modelId, address poster) external;

    /// @notice Mints `steps` shares of model `modelId` to `to`, creating the token on first use
    ///         (minter only).
    /// @param modelId Model id.
    /// @param to Receiver.
    /// @param steps Verified steps (shares).
    function mintShares(bytes32 modelId, address to, uint256 steps) external;

    /// @notice Owner of `modelId` (zero if unregistered).
    /// @param modelId Model id.
    /// @return owner Owner.
    function modelOwner(bytes32 modelId) external view returns (address owner);

    /// @notice Account that may accept `modelId` (zero if no hand-over is pending).
    /// @param modelId Model id.
    /// @return pendingOwner Pending owner.
    function pendingModelOwner(bytes32 modelId) external view returns (address pendingOwner);

    /// @notice Whether the current owner of `modelId` has authorised `account` as a poster.
    /// @param modelId Model id.
    /// @param account Account.
    /// @return authorized True if authorised.
    function isPoster(bytes32 modelId, address account) external view returns (bool authorized);

    /// @notice Whether `account` may post jobs under `modelId`: it is the owner or an authorised poster.
    /// @param modelId Model id.
    /// @param account Account.
    /// @return allowed False for an unregistered model.
    function canPost(bytes32 modelId, address account) external view returns (bool allowed);

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
