// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Contracts
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
// Libraries
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {EnumerableSet} from "@openzeppelin/contracts/utils/structs/EnumerableSet.sol";
import {LibSampling} from "./libraries/LibSampling.sol";
// Interfaces
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IStakeManager} from "./interfaces/IStakeManager.sol";
// Types
import {Role} from "./types/Role.sol";

/// @title StakeManager
/// @notice Stakes per account and role. Free stake (staked - locked) can be unbonded and withdrawn
///         after `unbondingDelay`; the three protocol contracts fixed at construction (JobManager,
///         ArbitrationCommittee, RunRegistry) lock, unlock and slash it. Slashing reaches unbonding
///         stake, so unbonding does not escape a pending slash.
/// @dev Deployment: `constructor(token, unbondingDelay, minStake, jobManager, committee,
///      runRegistry)`, the three protocol contracts given before they exist (the deployer's CREATE
///      addresses at their steps' nonces, docs/PROTOCOL.md). The contract has no admin: nobody can
///      make another account a protocol contract, so nobody outside the protocol's rules can slash.
contract StakeManager is ReentrancyGuardTransient, IStakeManager {
    using SafeERC20 for IERC20;
    using EnumerableSet for EnumerableSet.Bytes32Set;
    using LibSampling for LibSampling.Shuffle;

    ////// Types //////

    /// @notice Stake of one account in one role (all wei, except releaseAt in seconds). `staked`
    ///         and `locked` share a word, so locking a seat rewrites a live word instead of creating
    ///         one (and a draw reads one word per candidate); `unbonding` and `releaseAt` share the
    ///         other. 128 bits hold 3.4e38 wei, far above any token supply; every write is SafeCast.
    struct StakeInfo {
        uint128 staked;
        uint128 locked;
        uint128 unbonding;
        uint64 releaseAt;
    }

    ////// Constants / Immutables //////

    /// @notice Staking token.
    IERC20 internal immutable _TOKEN;

    /// @notice Unbonding delay (seconds).
    uint64 internal immutable _UNBONDING_DELAY;

    /// @notice Minimum stake per role (wei), indexed by uint8(Role).
    uint256 internal immutable _MIN_STAKE_SOLVER;
    uint256 internal immutable _MIN_STAKE_VERIFIER;
    uint256 internal immutable _MIN_STAKE_WHISTLEBLOWER;

    /// @notice The protocol contracts (`protocols`): immutables, so the check on every lock,
    ///         unlock and slash reads no storage word (a role mapping cost a cold read, 2,100 gas,
    ///         in each transaction of a job that locks or releases stake).
    address internal immutable _JOB_MANAGER;
    address internal immutable _COMMITTEE;
    address internal immutable _RUN_REGISTRY;

    ////// State //////

    /// @notice Stakes.
    mapping(address account => mapping(Role role => StakeInfo info)) internal _stakes;

    /// @notice Accounts whose verifier stake is active (staked > 0 and >= min), each as its
    ///         verifier id above its address (`_member`): a draw reads a candidate's account and
    ///         id in one word, so the JobManager needs no second read of the drawn seats' ids.
    EnumerableSet.Bytes32Set internal _verifiers;

    /// @notice Each verifier's id (`verifierIdOf`; zero: never an active verifier).
    mapping(address account => uint32 id) internal _verifierIds;

    /// @notice The account of each verifier id.
    mapping(uint32 id => address account) internal _verifiersById;

    /// @notice Verifier ids given so far (the last id).
    uint32 internal _verifierIdCount;

    ////// Modifiers //////

    /// @notice Reverts NotProtocol unless the caller is one of `protocols`.
    modifier onlyProtocol() {
        if (!isProtocol(msg.sender)) revert NotProtocol(msg.sender);
        _;
    }

    ////// Constructor //////

    /// @param token_ Staking token (the payment token).
    /// @param unbondingDelay_ Delay between an unbond request and withdrawal (seconds).
    /// @param minStake_ Minimum stake to be active per role [Solver, Verifier, Whistleblower] (wei).
    /// @param jobManager_ The JobManager (may not exist yet: its address at deployment). Non-zero.
    /// @param committee_ The ArbitrationCommittee (likewise). Non-zero.
    /// @param runRegistry_ The RunRegistry (likewise). Non-zero.
    constructor(
        IERC20 token_,
        uint64 unbondingDelay_,
        uint256[3] memory minStake_,
        address jobManager_,
        address committee_,
        address runRegistry_
    ) {
        if (
            address(token_) == address(0) || jobManager_ == address(0) || committee_ == address(0)
                || runRegistry_ == address(0)
        ) revert ZeroAddress();
        _TOKEN = token_;
        _JOB_MANAGER = jobManager_;
        _COMMITTEE = committee_;
        _RUN_REGISTRY = runRegistry_;
        _UNBONDING_DELAY = unbondingDelay_;
        _MIN_STAKE_SOLVER = minStake_[0];
        _MIN_STAKE_VERIFIER = minStake_[1];
        _MIN_STAKE_WHISTLEBLOWER = minStake_[2];
    }

    ////// External: stakers //////

    /// @inheritdoc IStakeManager
    function stake(Role role, uint256 amount) external nonReentrant {
        if (amount == 0) revert ZeroAmount();
        StakeInfo storage info = _stakes[msg.sender][role];
        bool wasActive = isActive(msg.sender, role);
        info.staked = SafeCast.toUint128(info.staked + amount);
        emit Staked(msg.sender, role, amount, info.staked);
        if (!wasActive) _activateVerifier(msg.sender, role);
        _TOKEN.safeTransferFrom(msg.sender, address(this), amount);
    }

    /// @inheritdoc IStakeManager
    function requestUnbond(Role role, uint256 amount) external nonReentrant {
        if (amount == 0) revert ZeroAmount();
        StakeInfo storage info = _stakes[msg.sender][role];
        uint256 free = info.staked - info.locked;
        if (amount > free) revert InsufficientFreeStake(msg.sender, role, free, amount);
        // SAFETY: amount <= free <= staked < 2^128.
        unchecked {
            // forge-lint: disable-next-line(unsafe-typecast)
            info.staked -= uint128(amount);
        }
        info.unbonding = SafeCast.toUint128(info.unbonding + amount);
        info.releaseAt = uint64(block.timestamp) + _UNBONDING_DELAY;
        emit UnbondRequested(msg.sender, role, amount, info.unbonding, info.releaseAt);
        _deactivateVerifier(msg.sender, role);
    }

    /// @inheritdoc IStakeManager
    function withdraw(Role role) external nonReentrant {
        StakeInfo storage info = _stakes[msg.sender][role];
        uint256 amount = info.unbonding;
        if (amount == 0) revert NothingUnbonding(msg.sender, role);
        if (block.timestamp < info.releaseAt) {
            revert UnbondingNotReleased(msg.sender, role, info.releaseAt, uint64(block.timestamp));
        }
        info.unbonding = 0;
        emit Withdrawn(msg.sender, role, amount);
        _TOKEN.safeTransfer(msg.sender, amount);
    }

    ////// External: protocol //////

    /// @inheritdoc IStakeManager
    function lock(address account, Role role, uint256 amount) external onlyProtocol {
        _lock(account, role, amount);
    }

    /// @inheritdoc IStakeManager
    function unlock(address account, Role role, uint256 amount) external onlyProtocol {
        _unlock(account, role, amount);
    }

    /// @inheritdoc IStakeManager
    function lockEach(address[] calldata accounts, Role role, uint256 amount) external onlyProtocol {
        for (uint256 i; i < accounts.length; ++i) {
            _take(accounts[i], role, amount);
        }
        emit StakesLocked(role, accounts, _each(amount));
    }

    /// @inheritdoc IStakeManager
    function lockAmounts(address[] calldata accounts, Role role, uint256[] calldata amounts) external onlyProtocol {
        if (accounts.length != amounts.length) revert LengthMismatch(accounts.length, amounts.length);
        for (uint256 i; i < accounts.length; ++i) {
            _take(accounts[i], role, amounts[i]);
        }
        emit StakesLocked(role, accounts, amounts);
    }

    /// @inheritdoc IStakeManager
    function unlockEach(address[] calldata accounts, Role role, uint256 amount) external onlyProtocol {
        for (uint256 i; i < accounts.length; ++i) {
            _release(accounts[i], role, amount);
        }
        emit StakesUnlocked(role, accounts, _each(amount));
    }

    /// @inheritdoc IStakeManager
    function unlockAmounts(address[] calldata accounts, Role role, uint256[] calldata amounts) external onlyProtocol {
        if (accounts.length != amounts.length) revert LengthMismatch(accounts.length, amounts.length);
        for (uint256 i; i < accounts.length; ++i) {
            _release(accounts[i], role, amounts[i]);
        }
        emit StakesUnlocked(role, accounts, amounts);
    }

    /// @inheritdoc IStakeManager
    function unlockAndRestake(
        address[] calldata accounts,
        Role role,
        uint256[] calldata unlocks,
        uint256[] calldata earnings
    ) external onlyProtocol {
        uint256 count = accounts.length;
        if (unlocks.length != count && unlocks.length != 1) revert LengthMismatch(count, unlocks.length);
        if (earnings.length != count && earnings.length != 1) revert LengthMismatch(count, earnings.length);
        for (uint256 i; i < count; ++i) {
            address account = accounts[i];
            _release(account, role, unlocks.length == 1 ? unlocks[0] : unlocks[i]);
            uint256 earned = earnings.length == 1 ? earnings[0] : earnings[i];
            if (earned == 0) continue;
            StakeInfo storage info = _stakes[account][role];
            bool wasActive = role != Role.Verifier || isActive(account, role);
            // SAFETY: the protocol caller sent the earnings to this contract before the call (the
            // token balance is the books: `totalHeld`).
            info.staked = SafeCast.toUint128(info.staked + earned);
            if (!wasActive) _activateVerifier(account, role);
        }
        emit StakesRestaked(role, accounts, unlocks, earnings);
    }

    /// @inheritdoc IStakeManager
    function slash(address account, Role role, uint256 amount, address recipient)
        external
        onlyProtocol
        nonReentrant
        returns (uint256 slashed)
    {
        if (recipient == address(0)) revert ZeroAddress();
        StakeInfo storage info = _stakes[account][role];
        uint256 fromStaked = amount < info.staked ? amount : info.staked;
        uint256 fromUnbonding = amount - fromStaked;
        if (fromUnbonding > info.unbonding) fromUnbonding = info.unbonding;
        // SAFETY: fromStaked <= staked and fromUnbonding <= unbonding; the locked part goes first,
        // so locked never exceeds staked afterwards.
        // Both are below 2^128 (at most the stored staked and unbonding).
        unchecked {
            // forge-lint: disable-next-line(unsafe-typecast)
            info.staked -= uint128(fromStaked);
            // forge-lint: disable-next-line(unsafe-typecast)
            info.locked = info.locked > fromStaked ? info.locked - uint128(fromStaked) : 0;
            // forge-lint: disable-next-line(unsafe-typecast)
            info.unbonding -= uint128(fromUnbonding);
            slashed = fromStaked + fromUnbonding;
        }
        emit StakeSlashed(account, role, amount, slashed, recipient);
        _deactivateVerifier(account, role);
        if (slashed != 0) _TOKEN.safeTransfer(recipient, slashed);
    }

    ////// External: views //////

    /// @inheritdoc IStakeManager
    function protocols() external view returns (address jobManager, address committee, address runRegistry) {
        return (_JOB_MANAGER, _COMMITTEE, _RUN_REGISTRY);
    }

    /// @inheritdoc IStakeManager
    function isProtocol(address account) public view returns (bool protocol) {
        protocol = account == _JOB_MANAGER || account == _COMMITTEE || account == _RUN_REGISTRY;
    }

    /// @inheritdoc IStakeManager
    function stakeOf(address account, Role role)
        external
        view
        returns (uint256 staked, uint256 locked, uint256 unbonding, uint64 releaseAt)
    {
        StakeInfo storage info = _stakes[account][role];
        return (info.staked, info.locked, info.unbonding, info.releaseAt);
    }

    /// @inheritdoc IStakeManager
    function freeStake(address account, Role role) external view returns (uint256 free) {
        StakeInfo storage info = _stakes[account][role];
        free = info.staked - info.locked;
    }

    /// @inheritdoc IStakeManager
    function isActive(address account, Role role) public view returns (bool active) {
        uint256 staked = _stakes[account][role].staked;
        active = staked != 0 && staked >= minStake(role);
    }

    /// @inheritdoc IStakeManager
    function minStake(Role role) public view returns (uint256 amount) {
        if (role == Role.Solver) return _MIN_STAKE_SOLVER;
        if (role == Role.Verifier) return _MIN_STAKE_VERIFIER;
        return _MIN_STAKE_WHISTLEBLOWER;
    }

    /// @inheritdoc IStakeManager
    function verifierCount() external view returns (uint256 count) {
        count = _verifiers.length();
    }

    /// @inheritdoc IStakeManager
    function verifierIdOf(address account) external view returns (uint32 id) {
        id = _verifierIds[account];
    }

    /// @inheritdoc IStakeManager
    function verifierIdsOf(address[] calldata accounts) external view returns (uint32[] memory ids) {
        ids = new uint32[](accounts.length);
        for (uint256 i; i < accounts.length; ++i) {
            ids[i] = _verifierIds[accounts[i]];
        }
    }

    /// @inheritdoc IStakeManager
    function verifiersById(uint32[] calldata ids) external view returns (address[] memory accounts) {
        accounts = new address[](ids.length);
        for (uint256 i; i < ids.length; ++i) {
            address account = _verifiersById[ids[i]];
            if (account == address(0)) revert UnknownVerifierId(ids[i]);
            accounts[i] = account;
        }
    }

    /// @inheritdoc IStakeManager
    function verifierAt(uint256 index) external view returns (address account) {
        uint256 count = _verifiers.length();
        if (index >= count) revert VerifierIndexOutOfRange(index, count);
        account = _accountOf(_verifiers.at(index));
    }

    /// @inheritdoc IStakeManager
    function drawVerifiers(
        bytes32 seed,
        uint256 count,
        uint256 minFree,
        address[] calldata excluded,
        address[] calldata reserve
    ) external view returns (address[] memory drawn, uint32[] memory ids, uint256 candidates) {
        candidates = _verifiers.length();
        bytes32[] memory picked = new bytes32[](count);
        uint256 found = _drawPass(seed, minFree, excluded, reserve, false, picked, 0);
        if (found < count && reserve.length != 0) {
            found = _drawPass(keccak256(abi.encode(seed, "reserve")), minFree, excluded, reserve, true, picked, found);
        }
        drawn = new address[](found);
        ids = new uint32[](found);
        for (uint256 i; i < found; ++i) {
            drawn[i] = _accountOf(picked[i]);
            ids[i] = _idOf(picked[i]);
        }
    }

    /// @inheritdoc IStakeManager
    function token() external view returns (IERC20) {
        return _TOKEN;
    }

    /// @inheritdoc IStakeManager
    function unbondingDelay() external view returns (uint64) {
        return _UNBONDING_DELAY;
    }

    /// @inheritdoc IStakeManager
    function totalHeld() external view returns (uint256 total) {
        total = _TOKEN.balanceOf(address(this));
    }

    ////// Internal: events //////

    /// @notice The `amounts` of a batch event for an amount every account shares (`lockEach`,
    ///         `unlockEach`): that one amount, not one copy per account (docs/SECURITY.md, "Gas
    ///         cuts").
    function _each(uint256 amount) internal pure returns (uint256[] memory amounts) {
        amounts = new uint256[](1);
        amounts[0] = amount;
    }

    ////// Internal //////

    /// @notice Locks `amount` of `account`'s free stake of `role`; reverts InsufficientFreeStake.
    function _lock(address account, Role role, uint256 amount) internal {
        emit StakeLocked(account, role, amount, _take(account, role, amount));
    }

    /// @notice Locks `amount` of `account`'s free stake of `role` without an event (the caller
    ///         emits one: `StakeLocked`, or `StakesLocked` for a batch); reverts InsufficientFreeStake.
    /// @return locked The account's locked stake of `role` afterwards (wei).
    function _take(address account, Role role, uint256 amount) internal returns (uint256 locked) {
        StakeInfo storage info = _stakes[account][role];
        uint256 free = info.staked - info.locked;
        if (amount > free) revert InsufficientFreeStake(account, role, free, amount);
        // SAFETY: amount <= free, so locked + amount <= staked < 2^128.
        unchecked {
            // forge-lint: disable-next-line(unsafe-typecast)
            info.locked += uint128(amount);
        }
        // INVARIANT: locked <= staked.
        locked = info.locked;
    }

    /// @notice Unlocks `amount` of `account`'s locked stake of `role`; reverts InsufficientLockedStake.
    function _unlock(address account, Role role, uint256 amount) internal {
        emit StakeUnlocked(account, role, amount, _release(account, role, amount));
    }

    /// @notice Unlocks `amount` of `account`'s locked stake of `role` without an event (the caller
    ///         emits one: `StakeUnlocked`, or `StakesUnlocked` for a batch); reverts
    ///         InsufficientLockedStake.
    /// @return locked The account's locked stake of `role` afterwards (wei).
    function _release(address account, Role role, uint256 amount) internal returns (uint256 locked) {
        StakeInfo storage info = _stakes[account][role];
        if (amount > info.locked) revert InsufficientLockedStake(account, role, info.locked, amount);
        // SAFETY: checked just above (amount <= locked < 2^128).
        unchecked {
            // forge-lint: disable-next-line(unsafe-typecast)
            info.locked -= uint128(amount);
        }
        locked = info.locked;
    }

    /// @notice Adds `account` to the active verifier set if its verifier stake, just raised from
    ///         below the minimum, made it active (stake only ever activates), giving it a verifier
    ///         id at its first activation.
    function _activateVerifier(address account, Role role) internal {
        if (role != Role.Verifier || !isActive(account, Role.Verifier)) return;
        uint32 id = _verifierIds[account];
        // 0 is the unset sentinel: never an active verifier before
        // slither-disable-next-line incorrect-equality
        bool first = id == 0;
        if (first) {
            // The first activation: an id for good (ids count up from 1; 2^32 - 1 verifiers).
            id = ++_verifierIdCount;
            _verifierIds[account] = id;
            _verifiersById[id] = account;
        }
        if (!_verifiers.add(_member(account, id))) return;
        emit VerifierActivated(account);
        if (first) emit VerifierIdAssigned(account, id);
    }

    /// @notice Removes `account` from the active verifier set if its verifier stake, just lowered
    ///         (an unbond or a slash: they only ever deactivate), fell below the minimum.
    function _deactivateVerifier(address account, Role role) internal {
        if (role != Role.Verifier || isActive(account, Role.Verifier)) return;
        if (_verifiers.remove(_member(account, _verifierIds[account]))) emit VerifierDeactivated(account);
    }

    ////// Internal: draw //////

    /// @notice One pass of `drawVerifiers`: walks a shuffle of the active set and appends to
    ///         `drawn` (from index `found`) each candidate not excluded, in the reserve iff
    ///         `fromReserve`, with enough free stake.
    /// @return Verifiers drawn so far.
    function _drawPass(
        bytes32 seed,
        uint256 minFree,
        address[] calldata excluded,
        address[] calldata reserve,
        bool fromReserve,
        bytes32[] memory drawn,
        uint256 found
    ) internal view returns (uint256) {
        LibSampling.Shuffle memory shuffle = LibSampling.newShuffle(seed, _verifiers.length());
        while (found < drawn.length && shuffle.remaining() != 0) {
            bytes32 member = _verifiers.at(shuffle.next());
            address candidate = _accountOf(member);
            if (_contains(excluded, candidate) || _contains(reserve, candidate) != fromReserve) continue;
            StakeInfo storage info = _stakes[candidate][Role.Verifier];
            if (info.staked - info.locked < minFree) continue;
            drawn[found++] = member;
        }
        return found;
    }

    /// @notice The active verifier set's member of `account` with verifier id `id`: the id in bits
    ///         160..191, the address below.
    function _member(address account, uint32 id) internal pure returns (bytes32) {
        return bytes32((uint256(id) << 160) | uint256(uint160(account)));
    }

    /// @notice The account of a verifier set member (`_member`).
    function _accountOf(bytes32 member) internal pure returns (address) {
        return address(uint160(uint256(member)));
    }

    /// @notice The verifier id of a verifier set member (`_member`).
    function _idOf(bytes32 member) internal pure returns (uint32) {
        // SAFETY: `_member` put a uint32 above the address; nothing is above it.
        // forge-lint: disable-next-line(unsafe-typecast)
        return uint32(uint256(member) >> 160);
    }

    /// @notice Whether `account` is in `list`.
    function _contains(address[] calldata list, address account) internal pure returns (bool) {
        for (uint256 i; i < list.length; ++i) {
            if (list[i] == account) return true;
        }
        return false;
    }
}
