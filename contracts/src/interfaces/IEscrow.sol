// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Interfaces
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
// Types
import {Bucket} from "../types/EscrowTypes.sol";

/// @title IEscrow
/// @notice Holds every protocol token outside the StakeManager (the role Optimism's DelayedWETH plays
///         for its games): job escrows, reject/challenge/move bonds, the jackpot pool, dispute pots
///         and the credits (pull payments) of every account. Authorised protocol contracts, set once
///         at deployment, move balances between buckets, into credits, or pay them out straight
///         to a wallet (`pay`: a job's reward and verifier fees, with a credit as the fallback);
///         every account claims all the credit it is owed with one `claimCredit`.
/// @dev Conservation: the token balance equals the sum of the buckets and the credits, plus any
///      tokens sent here directly or slashed here and not booked yet (`Unbooked`).
interface IEscrow {
    ////// Errors //////

    /// @notice Thrown when an address argument is zero.
    error ZeroAddress();

    /// @notice Thrown when a balance-moving function is called by an unauthorised account.
    /// @param caller msg.sender.
    error NotAuthorized(address caller);

    /// @notice Thrown when a bucket (or the unbooked surplus) holds less than the amount moved.
    /// @param bucket Source bucket.
    /// @param balance What it holds (wei).
    /// @param amount Amount requested (wei).
    error InsufficientBucket(Bucket bucket, uint256 balance, uint256 amount);

    /// @notice Thrown when depositing into, or moving into, `Bucket.Unbooked`.
    error InvalidBucket(Bucket bucket);

    /// @notice Thrown when claiming with no credit.
    /// @param account Caller.
    error NoCreditToClaim(address account);

    ////// Events //////

    /// @notice Emitted when tokens were pulled into a bucket.
    /// @param protocol Authorised contract that asked (or the funder, for `fundJackpot`).
    /// @param bucket Bucket credited.
    /// @param from Account the tokens came from.
    /// @param amount Amount (wei).
    event Deposited(address indexed protocol, Bucket indexed bucket, address indexed from, uint256 amount);

    /// @notice Emitted when an amount moved between buckets.
    /// @param protocol Authorised contract that moved it.
    /// @param from Source bucket.
    /// @param to Destination bucket.
    /// @param amount Amount (wei).
    event Moved(address indexed protocol, Bucket indexed from, Bucket indexed to, uint256 amount);

    /// @notice Emitted for every credit (pull payment) booked.
    /// @param protocol Authorised contract that booked it.
    /// @param account Account credited.
    /// @param from Source bucket.
    /// @param amount Amount (wei).
    event Credited(address indexed protocol, address indexed account, Bucket from, uint256 amount);

    /// @notice Emitted when `pay` transferred an amount straight to an account's wallet (when the
    ///         token refuses the transfer, `pay` books a credit and emits `Credited` instead).
    /// @param protocol Authorised contract that paid it.
    /// @param account Account (and receiver) paid.
    /// @param from Source bucket.
    /// @param amount Amount transferred (wei).
    event Paid(address indexed protocol, address indexed account, Bucket from, uint256 amount);

    /// @notice Emitted when an account claimed its credit.
    /// @param account Account (and receiver).
    /// @param amount Amount transferred (wei).
    event CreditClaimed(address indexed account, uint256 amount);

    ////// Protocol (authorised contracts) //////

    /// @notice Pulls `amount` from `from` into `bucket` (transferFrom: `from` approves the Escrow).
    /// @param bucket Destination bucket (not Unbooked).
    /// @param from Payer.
    /// @param amount Amount (wei); zero is a no-op.
    function deposit(Bucket bucket, address from, uint256 amount) external;

    /// @notice Moves `amount` from bucket `from` (or from the unbooked surplus) to bucket `to`.
    /// @param from Source bucket.
    /// @param to Destination bucket (not Unbooked).
    /// @param amount Amount (wei); zero is a no-op.
    function move(Bucket from, Bucket to, uint256 amount) external;

    /// @notice Moves `amount` from bucket `from` (or from the unbooked surplus) to `account`'s credit.
    /// @param from Source bucket.
    /// @param account Account credited.
    /// @param amount Amount (wei); zero is a no-op.
    function credit(Bucket from, address account, uint256 amount) external;

    /// @notice Moves `amount` from bucket `from` (or from the unbooked surplus) and transfers it to
    ///         `account`'s wallet at once (`Paid`); if the token refuses the transfer (e.g. a
    ///         blocklisted recipient), books it as `account`'s credit instead, exactly as `credit`
    ///         does (`Credited`), so a recipient can never block the caller and nothing is lost.
    /// @dev Push with a pull fallback: the happy path spares the recipient a `claimCredit`
    ///      transaction and the Escrow a credit word, while pull-over-push stays the fallback for
    ///      any transfer that fails. A plain ERC-20 transfer calls no code of the recipient, so the
    ///      recipient cannot re-enter or spend the caller's gas through it. Reverts
    ///      `NotAuthorized` for an unauthorised caller, `ZeroAddress` for account 0 and
    ///      `InsufficientBucket` when `from` holds less than `amount`.
    /// @param from Source bucket.
    /// @param account Account paid (its wallet, or its credit when the transfer fails).
    /// @param amount Amount (wei); zero is a no-op.
    function pay(Bucket from, address account, uint256 amount) external;

    /// @notice Moves `amount` from bucket `from` and transfers it to `account` (`Paid`), reverting
    ///         if the token refuses: no credit fallback. For a recipient that books what it
    ///         receives, the StakeManager restaking a job's earnings (`LibPayouts.fundStakes`): a
    ///         refused transfer must not leave it counting tokens that never arrived, so the whole
    ///         call reverts instead (docs/SECURITY.md P-41). Reverts `NotAuthorized` for an
    ///         unauthorised caller, `ZeroAddress` for account 0, `InsufficientBucket` when `from`
    ///         holds less than `amount`, and the token's error when it refuses.
    /// @param from Source bucket.
    /// @param account Recipient.
    /// @param amount Amount (wei); zero is a no-op.
    function fund(Bucket from, address account, uint256 amount) external;

    /// @notice `pay` of two amounts owed to one account, from two sources, in one transfer of
    ///         their sum: `amountA` from `fromA` and `amountB` from `fromB` (one `Paid` per non-zero
    ///         amount, or one `Credited` each when the token refuses the transfer and the sum is
    ///         booked as `account`'s credit). A source named twice is taken once, for the sum; the
    ///         unbooked surplus is checked before a booked bucket's take, whose tokens leave with
    ///         the same transfer. Reverts as `pay` does.
    /// @dev One transfer per party instead of one per amount owed: a forced error's catcher is
    ///      paid its bond back and its jackpot together (docs/SECURITY.md, "Gas cuts").
    /// @param fromA First source bucket.
    /// @param amountA Amount from `fromA` (wei; zero takes nothing).
    /// @param fromB Second source bucket.
    /// @param amountB Amount from `fromB` (wei; zero takes nothing).
    /// @param account Account paid (its wallet, or its credit when the transfer fails).
    function payTwo(Bucket fromA, uint256 amountA, Bucket fromB, uint256 amountB, address account) external;

    ////// Anyone //////

    /// @notice Adds `amount` to the jackpot pool (transferFrom; approve the Escrow first).
    /// @param amount Amount (wei).
    function fundJackpot(uint256 amount) external;

    /// @notice Transfers the caller's whole credit (from every protocol contract) to the caller.
    function claimCredit() external;

    ////// Views //////

    /// @notice Credit claimable by `account` (wei).
    /// @param account Account.
    /// @return amount Credit (wei).
    function creditOf(address account) external view returns (uint256 amount);

    /// @notice Balance of `bucket` (wei); for Unbooked, the token balance not booked anywhere.
    /// @param bucket Bucket.
    /// @return amount Balance (wei).
    function bucketOf(Bucket bucket) external view returns (uint256 amount);

    /// @notice Token amounts the Escrow holds for others (wei); its token balance equals the sum
    ///         unless someone transfers tokens to it directly.
    /// @return escrowed Rewards and verifier fees held for live jobs (wei).
    /// @return bonds Reject, challenge and move bonds held (wei).
    /// @return credits Credits not yet claimed (wei).
    /// @return jackpotPool Jackpot pool (wei).
    function liabilities() external view returns (uint256 escrowed, uint256 bonds, uint256 credits, uint256 jackpotPool);

    /// @notice Jackpot pool: funded by `fundJackpot` and by approvers of forced errors (wei).
    /// @return amount Pool (wei).
    function jackpotPool() external view returns (uint256 amount);

    /// @notice Whether `account` may move balances.
    /// @param account Account.
    /// @return authorized True for the protocol contracts fixed at construction (`protocols`).
    function isAuthorized(address account) external view returns (bool authorized);

    /// @notice The contracts allowed to move balances, fixed at construction (no account can add
    ///         one later).
    /// @return jobManager The JobManager (job escrows, bonds, payments, credits).
    /// @return bisectionGame The BisectionGame (move bonds), zero with the committee adjudicator.
    /// @return runRegistry The RunRegistry (round claim bonds).
    function protocols() external view returns (address jobManager, address bisectionGame, address runRegistry);

    /// @notice Token held.
    /// @return token ERC-20 of rewards, fees, bonds and credits.
    function token() external view returns (IERC20 token);
}
