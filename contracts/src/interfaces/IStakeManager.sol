// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Interfaces
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
// Types
import {Role} from "../types/Role.sol";

/// @title IStakeManager
/// @notice Holds the stakes of solvers, verifiers and whistleblowers (one stake per account and
///         role). Free stake can be unbonded and withdrawn after a delay; the protocol contracts
///         fixed at construction (`protocols`) lock, unlock and slash it.
interface IStakeManager {
    ////// Errors //////

    /// @notice Thrown when an amount of zero is passed where a positive amount is required.
    error ZeroAmount();

    /// @notice Thrown when a constructor or setter receives the zero address.
    error ZeroAddress();

    /// @notice Thrown when a lock, unlock or slash comes from an account that is none of the
    ///         protocol contracts fixed at construction.
    /// @param caller The caller.
    error NotProtocol(address caller);

    /// @notice Thrown when an account has less free stake (staked - locked) than requested.
    /// @param account Account whose stake was checked.
    /// @param role Role of the stake.
    /// @param free Free stake available (wei).
    /// @param requested Amount requested (wei).
    error InsufficientFreeStake(address account, Role role, uint256 free, uint256 requested);

    /// @notice Thrown when unlocking more than is locked.
    /// @param account Account whose stake was checked.
    /// @param role Role of the stake.
    /// @param locked Locked stake (wei).
    /// @param requested Amount requested (wei).
    error InsufficientLockedStake(address account, Role role, uint256 locked, uint256 requested);

    /// @notice Thrown when withdrawing while nothing is unbonding.
    /// @param account Caller.
    /// @param role Role of the stake.
    error NothingUnbonding(address account, Role role);

    /// @notice Thrown when withdrawing before the unbonding delay has elapsed.
    /// @param account Caller.
    /// @param role Role of the stake.
    /// @param releaseAt Timestamp from which withdrawal is allowed (seconds).
    /// @param nowTs Current block timestamp (seconds).
    error UnbondingNotReleased(address account, Role role, uint64 releaseAt, uint64 nowTs);

    /// @notice Thrown when `verifierAt` is called with an index past the active verifier set.
    /// @param index Index requested.
    /// @param count Size of the set.
    error VerifierIndexOutOfRange(uint256 index, uint256 count);

    /// @notice Thrown when a verifier id was never given (`verifiersById`).
    error UnknownVerifierId(uint32 id);

    /// @notice A batch call (`lockAmounts`, `unlockAmounts`, `unlockAndRestake`) was given an
    ///         amounts array whose length does not fit its accounts.
    /// @param accounts Length of the accounts array.
    /// @param amounts Length of the amounts array.
    error LengthMismatch(uint256 accounts, uint256 amounts);

    ////// Events //////

    /// @notice Emitted when an account added stake.
    /// @param account Staker.
    /// @param role Role staked for.
    /// @param amount Amount added (wei).
    /// @param staked Total staked afterwards (wei).
    event Staked(address indexed account, Role indexed role, uint256 amount, uint256 staked);

    /// @notice Emitted when free stake moved to unbonding.
    /// @param account Staker.
    /// @param role Role of the stake.
    /// @param amount Amount moved (wei).
    /// @param unbonding Total unbonding afterwards (wei).
    /// @param releaseAt Timestamp from which the whole unbonding amount can be withdrawn (seconds).
    event UnbondRequested(
        address indexed account, Role indexed role, uint256 amount, uint256 unbonding, uint64 releaseAt
    );

    /// @notice Emitted when unbonded stake was withdrawn.
    /// @param account Staker (and receiver).
    /// @param role Role of the stake.
    /// @param amount Amount transferred (wei).
    event Withdrawn(address indexed account, Role indexed role, uint256 amount);

    /// @notice Emitted when a protocol contract locked stake.
    /// @param account Staker.
    /// @param role Role of the stake.
    /// @param amount Amount locked (wei).
    /// @param locked Total locked afterwards (wei).
    event StakeLocked(address indexed account, Role indexed role, uint256 amount, uint256 locked);

    /// @notice Emitted when a protocol contract unlocked stake.
    /// @param account Staker.
    /// @param role Role of the stake.
    /// @param amount Amount unlocked (wei).
    /// @param locked Total locked afterwards (wei).
    event StakeUnlocked(address indexed account, Role indexed role, uint256 amount, uint256 locked);

    /// @notice Emitted when a protocol contract locked stake of several accounts in one call
    ///         (`lockEach`, `lockAmounts`): one event for the call instead of a `StakeLocked` per
    ///         account (docs/SECURITY.md, "Gas cuts"; `stakeOf` gives each total).
    /// @param role Role of the stakes.
    /// @param accounts Stakers, in the call's order.
    /// @param amounts Amount locked from each (wei), one per account (`lockAmounts`); a single
    ///        entry, the amount locked from every account, for `lockEach`.
    event StakesLocked(Role indexed role, address[] accounts, uint256[] amounts);

    /// @notice Emitted when a protocol contract unlocked stake of several accounts in one call
    ///         (`unlockEach`, `unlockAmounts`): one event for the call instead of a `StakeUnlocked`
    ///         per account.
    /// @param role Role of the stakes.
    /// @param accounts Stakers, in the call's order.
    /// @param amounts Amount unlocked from each (wei), one per account (`unlockAmounts`); a
    ///        single entry, the amount unlocked from every account, for `unlockEach`.
    event StakesUnlocked(Role indexed role, address[] accounts, uint256[] amounts);

    /// @notice Emitted when a job's end unlocked its paid parties' stakes and restaked their
    ///         earnings in one call (`unlockAndRestake`); `stakeOf` gives each total.
    /// @param role Role of the stakes.
    /// @param accounts Stakers, in the call's order.
    /// @param unlocked Amount unlocked from each (wei), one per account, or a single entry for all.
    /// @param earned Amount added to each stake (wei), one per account, or a single entry for all.
    event StakesRestaked(Role indexed role, address[] accounts, uint256[] unlocked, uint256[] earned);

    /// @notice Emitted when a protocol contract slashed stake.
    /// @param account Staker.
    /// @param role Role of the stake.
    /// @param requested Amount the protocol asked to slash (wei).
    /// @param slashed Amount actually taken (wei); less than requested if the stake ran out.
    /// @param recipient Receiver of the slashed tokens.
    event StakeSlashed(
        address indexed account, Role indexed role, uint256 requested, uint256 slashed, address indexed recipient
    );

    /// @notice Emitted when an account joined the active verifier set.
    /// @param account Verifier.
    event VerifierActivated(address indexed account);

    /// @notice Emitted when an account first joins the active verifier set and is given its
    ///         verifier id (`verifierIdOf`), which it keeps for good.
    /// @param account Verifier.
    /// @param id Its id (1, 2, ... in the order verifiers first became active).
    event VerifierIdAssigned(address indexed account, uint32 id);

    /// @notice Emitted when an account left the active verifier set.
    /// @param account Verifier.
    event VerifierDeactivated(address indexed account);

    ////// Staker functions //////

    /// @notice Adds `amount` to the caller's stake for `role` (transferFrom; approve first).
    /// @param role Role to stake for.
    /// @param amount Amount (wei), > 0.
    function stake(Role role, uint256 amount) external;

    /// @notice Moves `amount` of free stake to unbonding; resets the release time of the whole
    ///         unbonding amount to `now + unbondingDelay`.
    /// @param role Role of the stake.
    /// @param amount Amount (wei), > 0 and <= free stake.
    function requestUnbond(Role role, uint256 amount) external;

    /// @notice Transfers all unbonding stake of `role` to the caller once released.
    /// @param role Role of the stake.
    function withdraw(Role role) external;

    ////// Protocol functions (the `protocols` only) //////

    /// @notice Locks `amount` of `account`'s free stake.
    /// @param account Staker.
    /// @param role Role of the stake.
    /// @param amount Amount (wei).
    function lock(address account, Role role, uint256 amount) external;

    /// @notice Unlocks `amount` of `account`'s locked stake.
    /// @param account Staker.
    /// @param role Role of the stake.
    /// @param amount Amount (wei).
    function unlock(address account, Role role, uint256 amount) external;

    /// @notice `lock(accounts[i], role, amount)` for each account, in order, in one call (a job's
    ///         verifier seats, a dispute's committee): one call's overhead instead of one per seat,
    ///         and one `StakesLocked` event instead of a `StakeLocked` per account. Reverts
    ///         InsufficientFreeStake at the first account short of `amount`, locking none.
    /// @param accounts Stakers (an account named twice is locked twice).
    /// @param role Role of the stakes.
    /// @param amount Amount per account (wei).
    function lockEach(address[] calldata accounts, Role role, uint256 amount) external;

    /// @notice `lock(accounts[i], role, amounts[i])` for each account, in order, in one call: the
    ///         reject bonds of every seat of one verdict reveal, with one `StakesLocked`. Reverts
    ///         LengthMismatch unless both arrays have the same length, and InsufficientFreeStake at
    ///         the first account short of its amount, locking none.
    /// @param accounts Stakers (an account named twice is locked twice).
    /// @param role Role of the stakes.
    /// @param amounts Amount per account (wei), in the order of `accounts`.
    function lockAmounts(address[] calldata accounts, Role role, uint256[] calldata amounts) external;

    /// @notice `unlock(accounts[i], role, amount)` for each account, in order, in one call, with
    ///         one `StakesUnlocked`. Reverts InsufficientLockedStake at the first account short of
    ///         `amount`, unlocking none.
    /// @param accounts Stakers.
    /// @param role Role of the stakes.
    /// @param amount Amount per account (wei).
    function unlockEach(address[] calldata accounts, Role role, uint256 amount) external;

    /// @notice `unlock(accounts[i], role, amounts[i])` for each account, in order, in one call: the
    ///         settlement's release of its seats, a seat's verifierStake plus the reject bonds it
    ///         gets back, with one `StakesUnlocked`. Reverts LengthMismatch unless both arrays have
    ///         the same length, and InsufficientLockedStake at the first account short of its
    ///         amount, unlocking none.
    /// @param accounts Stakers.
    /// @param role Role of the stakes.
    /// @param amounts Amount per account (wei), in the order of `accounts`.
    function unlockAmounts(address[] calldata accounts, Role role, uint256[] calldata amounts) external;

    /// @notice A job's end for its paid parties, in one call: unlocks `unlocks[i]` of each
    ///         `accounts[i]`'s locked stake of `role` (its seat) and adds `earnings[i]` to its stake
    ///         (its fee or reward, and a forced error's jackpot: earnings are restaked, free stake
    ///         that leaves by `requestUnbond` like any other; docs/SECURITY.md P-41). A single-entry
    ///         array gives every account the same amount (the batch events' convention). Verifier
    ///         stake raised to the minimum activates, as `stake` does. The caller has sent the
    ///         earnings' total (wei) to this contract before the call: only the protocol contracts
    ///         call it, and `totalHeld` (the token balance) grows by that total. Reverts LengthMismatch unless each
    ///         array has one entry or one per account, InsufficientLockedStake at the first account
    ///         short of its unlock, changing nothing.
    /// @param accounts Stakers (a job's solver, or its standing seats in assignment order).
    /// @param role Role of the stakes.
    /// @param unlocks Amount unlocked per account (wei), or one for all.
    /// @param earnings Amount added to each account's stake (wei), or one for all.
    function unlockAndRestake(
        address[] calldata accounts,
        Role role,
        uint256[] calldata unlocks,
        uint256[] calldata earnings
    ) external;

    /// @notice Slashes up to `amount` from `account`: the locked part of the stake first, then the
    ///         free part, then unbonding stake; transfers what was taken to `recipient`.
    /// @param account Staker.
    /// @param role Role of the stake.
    /// @param amount Amount to slash (wei).
    /// @param recipient Receiver of the slashed tokens.
    /// @return slashed Amount actually taken (wei).
    function slash(address account, Role role, uint256 amount, address recipient) external returns (uint256 slashed);

    ////// Views //////

    /// @notice The contracts allowed to lock, unlock and slash, fixed at construction (no account
    ///         can add one later).
    /// @return jobManager The JobManager (seats, solver stakes, reject bonds, slashes).
    /// @return committee The ArbitrationCommittee (arbiter seats and their slashes).
    /// @return runRegistry The RunRegistry (slashes of a run's claim).
    function protocols() external view returns (address jobManager, address committee, address runRegistry);

    /// @notice Whether `account` is one of `protocols`.
    /// @param account Account.
    /// @return protocol True for the JobManager, the committee and the RunRegistry.
    function isProtocol(address account) external view returns (bool protocol);

    /// @notice Stake of `account` for `role`.
    /// @param account Staker.
    /// @param role Role of the stake.
    /// @return staked Bonded stake, including the locked part (wei).
    /// @return locked Part of `staked` locked by the protocol (wei).
    /// @return unbonding Stake waiting for `releaseAt` (wei).
    /// @return releaseAt Timestamp from which `unbonding` can be withdrawn (seconds).
    function stakeOf(address account, Role role)
        external
        view
        returns (uint256 staked, uint256 locked, uint256 unbonding, uint64 releaseAt);

    /// @notice Free stake (staked - locked) of `account` for `role` (wei).
    /// @param account Staker.
    /// @param role Role of the stake.
    /// @return free Free stake (wei).
    function freeStake(address account, Role role) external view returns (uint256 free);

    /// @notice Whether `account`'s bonded stake for `role` is non-zero and at least `minStake(role)`.
    /// @param account Staker.
    /// @param role Role of the stake.
    /// @return active True if active.
    function isActive(address account, Role role) external view returns (bool active);

    /// @notice Minimum bonded stake to be active in `role` (wei).
    /// @param role Role.
    /// @return amount Minimum (wei).
    function minStake(Role role) external view returns (uint256 amount);

    /// @notice Number of active verifiers.
    /// @return count Size of the active verifier set.
    function verifierCount() external view returns (uint256 count);

    /// @notice Active verifier at `index` (order is arbitrary and changes when the set changes).
    /// @param index Index in [0, verifierCount()).
    /// @return account Verifier.
    function verifierAt(uint256 index) external view returns (address account);

    /// @notice `account`'s verifier id: given when it first became an active verifier, never
    ///         changed or reused (it survives unbonding and slashing), so a job can record its seats
    ///         as 32-bit ids, eight to a storage word, instead of one 20-byte address per word.
    /// @param account Staker.
    /// @return id Its id, zero if it never was an active verifier.
    function verifierIdOf(address account) external view returns (uint32 id);

    /// @notice `verifierIdOf` of each account, in order.
    /// @param accounts Stakers.
    /// @return ids Their ids (zero for an account that never was an active verifier).
    function verifierIdsOf(address[] calldata accounts) external view returns (uint32[] memory ids);

    /// @notice The account of each verifier id, in order (the inverse of `verifierIdOf`).
    ///         Reverts UnknownVerifierId for an id never given.
    /// @param ids Verifier ids.
    /// @return accounts Their accounts.
    function verifiersById(uint32[] calldata ids) external view returns (address[] memory accounts);

    /// @notice The protocol's one verifier draw (JobManager assignments and committee seats): up to
    ///         `count` distinct active verifiers with free Verifier stake >= `minFree`, never one in
    ///         `excluded`, in the order of a seeded shuffle of the active set (`LibSampling`).
    ///         Pass 1 (shuffle seed `seed`) skips `reserve`; if it found fewer than `count` and
    ///         `reserve` is non-empty, pass 2 (seed keccak256(abi.encode(seed, "reserve"))) takes
    ///         only members of `reserve`.
    /// @param seed Seed of the shuffle (from a block hash).
    /// @param count Most verifiers to draw.
    /// @param minFree Least free Verifier stake a drawn verifier must have (wei).
    /// @param excluded Accounts never drawn.
    /// @param reserve Accounts drawn only when pass 1 falls short.
    /// @return drawn Drawn verifiers, in draw order.
    /// @return ids Verifier id of each drawn verifier (`verifierIdOf`), read with it.
    /// @return candidates Size of the active verifier set.
    function drawVerifiers(
        bytes32 seed,
        uint256 count,
        uint256 minFree,
        address[] calldata excluded,
        address[] calldata reserve
    ) external view returns (address[] memory drawn, uint32[] memory ids, uint256 candidates);

    /// @notice Staking token.
    /// @return token The ERC-20 staked.
    function token() external view returns (IERC20 token);

    /// @notice Delay between an unbond request and withdrawal (seconds).
    /// @return delay Unbonding delay (seconds).
    function unbondingDelay() external view returns (uint64 delay);

    /// @notice Tokens the StakeManager holds (wei): the sum over all accounts and roles of staked +
    ///         unbonding (the invariant suite's P1a), plus anything sent to it outside `stake` and
    ///         the protocol's restakes, which no function moves. The token balance is the books: no
    ///         storage word repeats it, so a stake, a withdrawal, a slash or a job's end writes one
    ///         word fewer (docs/SECURITY.md, "Gas cuts").
    /// @return total Total held (wei).
    function totalHeld() external view returns (uint256 total);
}
