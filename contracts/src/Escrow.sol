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
/// @dev Deployment: `constructor(token, jobManager, bisectionGame, runRegistry)`, the protocol
///      contracts given before they exist (the deployer's CREATE addresses at their steps' nonces;
///      the game zero with the committee adjudicator). No admin: nobody can make another account a
///      protocol contract. The StakeManager slashes stake to this
///      contract; the JobManager books it from `Bucket.Unbooked`, which can never exceed what
///      really arrived (balance minus everything booked).
contract Escrow is ReentrancyGuardTransient, IEscrow {
    using SafeERC20 for IERC20;

    ////// Constants / Immutables //////

    IERC20 internal immutable _TOKEN;

    /// @notice The protocol contracts (`protocols`): immutables, so the check on every call that
    ///         moves balances reads no storage word (a mapping cost a cold read, 2,100 gas, in each
    ///         transaction of a job that deposits or pays).
    address internal immutable _JOB_MANAGER;
    address internal immutable _BISECTION_GAME;
    address internal immutable _RUN_REGISTRY;

    /// @notice What a liability word holds on top of its amount once written: a bucket, a credit
    ///         or the credit total that empties keeps a live (non-zero) word, so the next job's
    ///         deposit or credit rewrites it (2,900 gas, EIP-2929/2200) instead of creating it
    ///         (20,000). The bucket words and the total are made live at deployment; an account's
    ///         credit word at its first credit (its claims then forgo the 4,800 refund of a
    ///         cleared word, EIP-3529, and each later credit saves 17,100). Every view returns
    ///         amounts, never words.
    uint256 internal constant _LIVE = 1;

    ////// State //////

    /// @notice Per bucket: its amount (wei) plus `_LIVE`.
    mapping(Bucket bucket => uint256 word) internal _bucketWords;
    /// @notice Per account: its credit (wei) plus `_LIVE`, or 0 before its first credit.
    mapping(address account => uint256 word) internal _creditWords;
    /// @notice Sum of every credit (wei) plus `_LIVE`.
    uint256 internal _totalCreditsWord;

    ////// Modifiers //////

    modifier onlyAuthorized() {
        if (!isAuthorized(msg.sender)) revert NotAuthorized(msg.sender);
        _;
    }

    ////// Constructor //////

    /// @param token_ Payment token (the one the StakeManager stakes).
    /// @param jobManager_ The JobManager (may not exist yet: its address at deployment). Non-zero.
    /// @param bisectionGame_ The BisectionGame (likewise), or zero with the committee adjudicator.
    /// @param runRegistry_ The RunRegistry (likewise). Non-zero.
    constructor(IERC20 token_, address jobManager_, address bisectionGame_, address runRegistry_) {
        if (address(token_) == address(0) || jobManager_ == address(0) || runRegistry_ == address(0)) {
            revert ZeroAddress();
        }
        _TOKEN = token_;
        _JOB_MANAGER = jobManager_;
        _BISECTION_GAME = bisectionGame_;
        _RUN_REGISTRY = runRegistry_;
        _bucketWords[Bucket.Escrowed] = _LIVE;
        _bucketWords[Bucket.Bonds] = _LIVE;
        _bucketWords[Bucket.Jackpot] = _LIVE;
        _bucketWords[Bucket.Pot] = _LIVE;
        _totalCreditsWord = _LIVE;
    }

    ////// External: protocol //////

    /// @inheritdoc IEscrow
    function deposit(Bucket bucket, address from, uint256 amount) external onlyAuthorized nonReentrant {
        if (bucket == Bucket.Unbooked) revert InvalidBucket(bucket);
        if (amount == 0) return;
        _bucketWords[bucket] += amount;
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
        _bucketWords[to] += amount;
        emit Moved(msg.sender, from, to, amount);
    }

    /// @inheritdoc IEscrow
    function credit(Bucket from, address account, uint256 amount) external onlyAuthorized {
        if (account == address(0)) revert ZeroAddress();
        if (amount == 0) return;
        _take(from, amount);
        _book(account, amount);
        emit Credited(msg.sender, account, from, amount);
    }

    /// @inheritdoc IEscrow
    /// @dev Checks-effects-interactions: the bucket is booked before the transfer. A transfer that
    ///      fails books the amount as `account`'s credit after the (failed) call, which changed no
    ///      balance; `nonReentrant` shuts every entry that moves tokens meanwhile.
    function pay(Bucket from, address account, uint256 amount) external onlyAuthorized nonReentrant {
        if (account == address(0)) revert ZeroAddress();
        if (amount == 0) return;
        _take(from, amount);
        if (_TOKEN.trySafeTransfer(account, amount)) {
            emit Paid(msg.sender, account, from, amount);
            return;
        }
        // The token refused the recipient (e.g. a blocklist): pull-over-push as the fallback, so a
        // recipient never blocks the caller and nothing is lost.
        _book(account, amount);
        emit Credited(msg.sender, account, from, amount);
    }

    /// @inheritdoc IEscrow
    function fund(Bucket from, address account, uint256 amount) external onlyAuthorized nonReentrant {
        if (account == address(0)) revert ZeroAddress();
        if (amount == 0) return;
        _take(from, amount);
        // The transfer, then `Paid`, as `pay` logs them: every `Paid` comes right after the token
        // transfer that carries it.
        _TOKEN.safeTransfer(account, amount);
        emit Paid(msg.sender, account, from, amount);
    }

    /// @inheritdoc IEscrow
    function payTwo(Bucket fromA, uint256 amountA, Bucket fromB, uint256 amountB, address account)
        external
        onlyAuthorized
        nonReentrant
    {
        if (account == address(0)) revert ZeroAddress();
        if (fromA == fromB) {
            _take(fromA, amountA + amountB);
        } else if (fromB == Bucket.Unbooked) {
            // The surplus first: a booked bucket's take raises it by tokens that leave right here.
            _take(fromB, amountB);
            _take(fromA, amountA);
        } else {
            _take(fromA, amountA);
            _take(fromB, amountB);
        }
        uint256 amount = amountA + amountB;
        if (amount == 0) return;
        bool paid = _TOKEN.trySafeTransfer(account, amount);
        // The token refused the recipient: the sum becomes its credit, as in `pay`.
        if (!paid) _book(account, amount);
        _emitPayout(paid, account, fromA, amountA);
        _emitPayout(paid, account, fromB, amountB);
    }

    ////// External: anyone //////

    /// @inheritdoc IEscrow
    function fundJackpot(uint256 amount) external nonReentrant {
        _bucketWords[Bucket.Jackpot] += amount;
        emit Deposited(msg.sender, Bucket.Jackpot, msg.sender, amount);
        if (amount != 0) _TOKEN.safeTransferFrom(msg.sender, address(this), amount);
    }

    /// @inheritdoc IEscrow
    function claimCredit() external nonReentrant {
        uint256 amount = _amountOf(_creditWords[msg.sender]);
        if (amount == 0) revert NoCreditToClaim(msg.sender);
        _creditWords[msg.sender] = _LIVE;
        _totalCreditsWord -= amount;
        emit CreditClaimed(msg.sender, amount);
        _TOKEN.safeTransfer(msg.sender, amount);
    }

    ////// External: views //////

    /// @inheritdoc IEscrow
    function creditOf(address account) external view returns (uint256 amount) {
        amount = _amountOf(_creditWords[account]);
    }

    /// @inheritdoc IEscrow
    function bucketOf(Bucket bucket) external view returns (uint256 amount) {
        amount = bucket == Bucket.Unbooked ? _unbooked() : _bucket(bucket);
    }

    /// @inheritdoc IEscrow
    function liabilities()
        external
        view
        returns (uint256 escrowed, uint256 bonds, uint256 credits, uint256 jackpotPool_)
    {
        return (_bucket(Bucket.Escrowed), _bucket(Bucket.Bonds), _totalCredits(), _bucket(Bucket.Jackpot));
    }

    /// @inheritdoc IEscrow
    function jackpotPool() external view returns (uint256 amount) {
        amount = _bucket(Bucket.Jackpot);
    }

    /// @inheritdoc IEscrow
    function isAuthorized(address account) public view returns (bool authorized) {
        // A zero game never matches: no call comes from the zero address.
        authorized = account == _JOB_MANAGER || account == _RUN_REGISTRY
            || (account == _BISECTION_GAME && account != address(0));
    }

    /// @inheritdoc IEscrow
    function protocols() external view returns (address jobManager, address bisectionGame, address runRegistry) {
        return (_JOB_MANAGER, _BISECTION_GAME, _RUN_REGISTRY);
    }

    /// @inheritdoc IEscrow
    function token() external view returns (IERC20) {
        return _TOKEN;
    }

    ////// Internal //////

    /// @notice Takes `amount` out of bucket `from`; from Unbooked it books tokens that arrived.
    ///         Taking nothing reads and writes nothing (`payTwo` of a winner the empty pool owes
    ///         no jackpot).
    function _take(Bucket from, uint256 amount) internal {
        if (amount == 0) return;
        if (from == Bucket.Unbooked) {
            // INVARIANT: only tokens that really arrived (balance - booked) can be booked.
            uint256 surplus = _unbooked();
            if (surplus < amount) revert InsufficientBucket(from, surplus, amount);
            return;
        }
        uint256 word = _bucketWords[from];
        uint256 balance = _amountOf(word);
        if (balance < amount) revert InsufficientBucket(from, balance, amount);
        // SAFETY: amount <= balance = word - _LIVE, checked above: the word stays live.
        unchecked {
            _bucketWords[from] = word - amount;
        }
    }

    /// @notice Adds `amount` (wei) to `account`'s credit and to the credit total.
    function _book(address account, uint256 amount) internal {
        uint256 word = _creditWords[account];
        _creditWords[account] = (word == 0 ? _LIVE : word) + amount;
        _totalCreditsWord += amount;
    }

    /// @notice Emits `Paid` (to the wallet) or `Credited` (the transfer was refused) for a non-zero
    ///         `amount` from `from`.
    function _emitPayout(bool paid, address account, Bucket from, uint256 amount) internal {
        if (amount == 0) return;
        if (paid) emit Paid(msg.sender, account, from, amount);
        else emit Credited(msg.sender, account, from, amount);
    }

    /// @notice Token balance not booked in any bucket or credit (direct transfers, fresh slashes).
    /// @dev Sums the buckets here rather than keeping a running total: only slashes (rare) pay for it.
    function _unbooked() internal view returns (uint256) {
        uint256 booked = _totalCredits() + _bucket(Bucket.Escrowed) + _bucket(Bucket.Bonds) + _bucket(Bucket.Jackpot)
            + _bucket(Bucket.Pot);
        uint256 balance = _TOKEN.balanceOf(address(this));
        return balance > booked ? balance - booked : 0;
    }

    /// @notice The amount (wei) a liability word holds: the word less `_LIVE`, 0 for a word
    ///         never written.
    function _amountOf(uint256 word) internal pure returns (uint256) {
        return word == 0 ? 0 : word - _LIVE;
    }

    /// @notice A booked bucket's amount (wei).
    function _bucket(Bucket bucket) internal view returns (uint256) {
        return _amountOf(_bucketWords[bucket]);
    }

    /// @notice Sum of every credit (wei).
    function _totalCredits() internal view returns (uint256) {
        return _amountOf(_totalCreditsWord);
    }
}
