// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Contracts
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
// Libraries
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
// Interfaces
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IEscrow} from "./interfaces/IEscrow.sol";
// Types
import {Bucket} from "./types/EscrowTypes.sol";

/// @title Escrow
/// @notice The one token vault of the protocol outside the StakeManager: job escrows, bonds, the
///         jackpot pool, dispute pots and every account's credit. See `IEscrow`.
/// @dev Deployment: `constructor(token, admin)`, then, once the protocol contracts exist, the admin
///      calls `authorize([jobManager, bisectionGame?])` once. The StakeManager slashes stake to this
///      contract; the JobManager books it from `Bucket.Unbooked`, which can never exceed what
///      really arrived (balance minus everything booked).
contract Escrow is ReentrancyGuardTransient, IEscrow {
    using SafeERC20 for IERC20;

    ////// Constants / Immutables //////

    IERC20 internal immutable _TOKEN;
    address internal immutable _ADMIN;

    ////// State //////

    /// @notice True once `authorize` ran.
    bool internal _authorizedSet;
    mapping(address account => bool authorized) internal _authorized;
    mapping(Bucket bucket => uint256 amount) internal _buckets;
    mapping(address account => uint256 amount) internal _credits;
    /// @notice Sum of every credit (wei).
    uint256 internal _totalCredits;

    ////// Modifiers //////

    modifier onlyAuthorized() {
        if (!_authorized[msg.sender]) revert NotAuthorized(msg.sender);
        _;
    }

    ////// Constructor //////

    /// @param token_ Payment token (the one the StakeManager stakes).
    /// @param admin_ Admin (calls `authorize` once).
    constructor(IERC20 token_, address admin_) {
        if (address(token_) == address(0) || admin_ == address(0)) revert ZeroAddress();
        _TOKEN = token_;
        _ADMIN = admin_;
    }

    ////// External: admin //////

    /// @inheritdoc IEscrow
    function authorize(address[] calldata protocols) external {
        if (msg.sender != _ADMIN) revert NotAdmin(msg.sender);
        if (_authorizedSet) revert AlreadyAuthorized();
        _authorizedSet = true;
        for (uint256 i; i < protocols.length; ++i) {
            if (protocols[i] == address(0)) revert ZeroAddress();
            _authorized[protocols[i]] = true;
        }
        emit Authorized(protocols);
    }

    ////// External: protocol //////

    /// @inheritdoc IEscrow
    function deposit(Bucket bucket, address from, uint256 amount) external onlyAuthorized nonReentrant {
        if (bucket == Bucket.Unbooked) revert InvalidBucket(bucket);
        if (amount == 0) return;
        _buckets[bucket] += amount;
        emit Deposited(msg.sender, bucket, from, amount);
        // `from` is the account the authorised contract acts for (poster, bonder, mover).
        // slither-disable-next-line arbitrary-send-erc20
        _TOKEN.safeTransferFrom(from, address(this), amount);
    }

    /// @inheritdoc IEscrow
    function move(Bucket from, Bucket to, uint256 amount) external onlyAuthorized {
        if (to == Bucket.Unbooked) revert InvalidBucket(to);
        if (amount == 0) return;
        _take(from, amount);
        _buckets[to] += amount;
        emit Moved(msg.sender, from, to, amount);
    }

    /// @inheritdoc IEscrow
    function credit(Bucket from, address account, uint256 amount) external onlyAuthorized {
        if (account == address(0)) revert ZeroAddress();
        if (amount == 0) return;
        _take(from, amount);
        _credits[account] += amount;
        _totalCredits += amount;
        emit Credited(msg.sender, account, from, amount);
    }

    ////// External: anyone //////

    /// @inheritdoc IEscrow
    function fundJackpot(uint256 amount) external nonReentrant {
        _buckets[Bucket.Jackpot] += amount;
        emit Deposited(msg.sender, Bucket.Jackpot, msg.sender, amount);
        if (amount != 0) _TOKEN.safeTransferFrom(msg.sender, address(this), amount);
    }

    /// @inheritdoc IEscrow
    function claimCredit() external nonReentrant {
        uint256 amount = _credits[msg.sender];
        if (amount == 0) revert NoCreditToClaim(msg.sender);
        _credits[msg.sender] = 0;
        _totalCredits -= amount;
        emit CreditClaimed(msg.sender, amount);
        _TOKEN.safeTransfer(msg.sender, amount);
    }

    ////// External: views //////

    /// @inheritdoc IEscrow
    function creditOf(address account) external view returns (uint256 amount) {
        amount = _credits[account];
    }

    /// @inheritdoc IEscrow
    function bucketOf(Bucket bucket) external view returns (uint256 amount) {
        amount = bucket == Bucket.Unbooked ? _unbooked() : _buckets[bucket];
    }

    /// @inheritdoc IEscrow
    function liabilities()
        external
        view
        returns (uint256 escrowed, uint256 bonds, uint256 credits, uint256 jackpotPool_)
    {
        return (_buckets[Bucket.Escrowed], _buckets[Bucket.Bonds], _totalCredits, _buckets[Bucket.Jackpot]);
    }

    /// @inheritdoc IEscrow
    function jackpotPool() external view returns (uint256 amount) {
        amount = _buckets[Bucket.Jackpot];
    }

    /// @inheritdoc IEscrow
    function isAuthorized(address account) external view returns (bool authorized) {
        authorized = _authorized[account];
    }

    /// @inheritdoc IEscrow
    function token() external view returns (IERC20) {
        return _TOKEN;
    }

    /// @inheritdoc IEscrow
    function admin() external view returns (address) {
        return _ADMIN;
    }

    ////// Internal //////

    /// @notice Takes `amount` out of bucket `from`; from Unbooked it books tokens that arrived.
    function _take(Bucket from, uint256 amount) internal {
        if (from == Bucket.Unbooked) {
            // INVARIANT: only tokens that really arrived (balance - booked) can be booked.
            uint256 surplus = _unbooked();
            if (surplus < amount) revert InsufficientBucket(from, surplus, amount);
            return;
        }
        uint256 balance = _buckets[from];
        if (balance < amount) revert InsufficientBucket(from, balance, amount);
        // SAFETY: amount <= balance, checked above.
        unchecked {
            _buckets[from] = balance - amount;
        }
    }

    /// @notice Token balance not booked in any bucket or credit (direct transfers, fresh slashes).
    /// @dev Sums the buckets here rather than keeping a running total: only slashes (rare) pay for it.
    function _unbooked() internal view returns (uint256) {
        uint256 booked = _totalCredits + _buckets[Bucket.Escrowed] + _buckets[Bucket.Bonds] + _buckets[Bucket.Jackpot]
            + _buckets[Bucket.Pot];
        uint256 balance = _TOKEN.balanceOf(address(this));
        return balance > booked ? balance - booked : 0;
    }
}
