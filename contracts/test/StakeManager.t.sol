// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {Vm} from "@prb/test/Vm.sol";

// Libraries
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
// Testing
import {Deployers} from "./utils/Deployers.sol";
import {Deploy} from "../script/Deploy.sol";
// Contracts
import {StakeManager} from "../src/StakeManager.sol";
// Interfaces
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IStakeManager} from "../src/interfaces/IStakeManager.sol";
// Types
import {Role} from "../src/types/Role.sol";

/// @notice Shared setup: a deployment whose StakeManager is replaced by one that names the test
///         contract as its JobManager, so the tests lock, unlock and slash directly; the deployed
///         one stays in `deployedStakeManager`.
abstract contract StakeManager_Init is Deployers {
    address internal alice;
    StakeManager internal deployedStakeManager;

    function setUp() public virtual override {
        vm.warp(START_TIME);
        vm.roll(START_BLOCK);
        Deploy.Config memory cfg = _testConfig();
        _deploy(cfg);
        deployedStakeManager = stakeManager;
        (, address committee_, address runRegistry_) = deployedStakeManager.protocols();
        stakeManager =
            new StakeManager(token, cfg.unbondingDelay, cfg.minStake, address(this), committee_, runRegistry_);
        _setUpActors();
        alice = _actor("alice");
    }
}

contract StakeManager_Constructor_Test is StakeManager_Init {
    function test_constructor_zeroToken_reverts() public {
        vm.expectRevert(IStakeManager.ZeroAddress.selector);
        new StakeManager(IERC20(address(0)), 1 days, [uint256(1), 1, 1], address(this), alice, alice);
    }

    /// @notice Each of the three protocol contracts is required: a zero one would leave its
    ///         locks and slashes to nobody.
    function test_constructor_zeroProtocol_reverts() public {
        vm.expectRevert(IStakeManager.ZeroAddress.selector);
        new StakeManager(token, 1 days, [uint256(1), 1, 1], address(0), alice, alice);
        vm.expectRevert(IStakeManager.ZeroAddress.selector);
        new StakeManager(token, 1 days, [uint256(1), 1, 1], alice, address(0), alice);
        vm.expectRevert(IStakeManager.ZeroAddress.selector);
        new StakeManager(token, 1 days, [uint256(1), 1, 1], alice, alice, address(0));
    }

    function test_constructor_setsConfig_succeeds() public {
        assertEq(address(deployedStakeManager.token()), address(token));
        assertEq(uint256(deployedStakeManager.unbondingDelay()), 1 days);
        assertEq(deployedStakeManager.minStake(Role.Solver), 100e18);
        assertEq(deployedStakeManager.minStake(Role.Verifier), 100e18);
        assertEq(deployedStakeManager.minStake(Role.Whistleblower), 10e18);
        (address jm, address arbiters, address runs) = deployedStakeManager.protocols();
        assertEq(jm, address(jobManager));
        assertEq(arbiters, address(committee));
        assertTrue(runs != address(0));
        assertTrue(deployedStakeManager.isProtocol(address(jobManager)));
        assertTrue(deployedStakeManager.isProtocol(address(committee)));
        assertTrue(deployedStakeManager.isProtocol(runs));
    }

    /// @notice Nobody outside the three contracts fixed at construction can lock or slash, the
    ///         deployer included: the StakeManager has no admin that could add one.
    function test_slash_deployerOfTheDeployment_reverts() public {
        assertFalse(deployedStakeManager.isProtocol(address(this)), "the deployer is a protocol contract");
        vm.expectRevert(abi.encodeWithSelector(IStakeManager.NotProtocol.selector, address(this)));
        deployedStakeManager.slash(verifierPool[0], Role.Verifier, 1, address(this));
        vm.expectRevert(abi.encodeWithSelector(IStakeManager.NotProtocol.selector, address(this)));
        deployedStakeManager.lock(verifierPool[0], Role.Verifier, 1);
    }
}

contract StakeManager_Stake_Test is StakeManager_Init {
    function testFuzz_stake_addsStake_succeeds(uint8 roleRaw, uint256 amount) public {
        Role role = Role(bound(roleRaw, 0, 2));
        amount = bound(amount, 1, FUNDS);
        uint256 heldBefore = stakeManager.totalHeld();
        vm.expectEmit(address(stakeManager));
        emit IStakeManager.Staked(alice, role, amount, amount);
        _stake(alice, role, amount);
        (uint256 staked, uint256 locked, uint256 unbonding,) = stakeManager.stakeOf(alice, role);
        assertEq(staked, amount);
        assertEq(locked, 0);
        assertEq(unbonding, 0);
        assertEq(stakeManager.totalHeld(), heldBefore + amount);
        assertEq(token.balanceOf(address(stakeManager)), stakeManager.totalHeld());
        assertEq(stakeManager.isActive(alice, role), amount >= stakeManager.minStake(role));
    }

    function test_stake_addsStake_succeeds() public {
        testFuzz_stake_addsStake_succeeds(uint8(Role.Verifier), 100e18);
    }

    /// @notice The stake word holds 128 bits: a stake that would pass 2**128 - 1 wei reverts
    ///         instead of wrapping (SafeCast), and the largest one that fits is kept exactly.
    function test_stake_above128Bits_reverts() public {
        uint256 max = type(uint128).max;
        // OpenZeppelin ERC20 keeps balances in its first slot: fund alice past any faucet limit.
        vm.store(address(token), keccak256(abi.encode(alice, uint256(0))), bytes32(max + 1));
        assertEq(token.balanceOf(alice), max + 1);
        _stake(alice, Role.Solver, max);
        (uint256 staked,,,) = stakeManager.stakeOf(alice, Role.Solver);
        assertEq(staked, max);
        vm.expectRevert(abi.encodeWithSelector(SafeCast.SafeCastOverflowedUintDowncast.selector, 128, max + 1));
        vm.prank(alice);
        stakeManager.stake(Role.Solver, 1);
        (staked,,,) = stakeManager.stakeOf(alice, Role.Solver);
        assertEq(staked, max, "stake wrapped");
    }

    function test_stake_zero_reverts() public {
        vm.expectRevert(IStakeManager.ZeroAmount.selector);
        vm.prank(alice);
        stakeManager.stake(Role.Solver, 0);
    }

    function test_stake_activatesVerifier_succeeds() public {
        uint256 countBefore = stakeManager.verifierCount();
        _stake(alice, Role.Verifier, 99e18);
        assertEq(stakeManager.verifierCount(), countBefore);
        vm.expectEmit(address(stakeManager));
        emit IStakeManager.VerifierActivated(alice);
        _stake(alice, Role.Verifier, 1e18);
        assertEq(stakeManager.verifierCount(), countBefore + 1);
        assertEq(stakeManager.verifierAt(countBefore), alice);
    }

    /// @notice A verifier gets its id when it first becomes active and keeps it through leaving
    ///         and joining the set again; ids count up and resolve back to their accounts.
    function test_verifierIdOf_givenOnFirstActivation_keptForGood_succeeds() public {
        address bob = _actor("bob");
        _stake(alice, Role.Verifier, 99e18);
        _stake(alice, Role.Solver, 500e18);
        assertEq(stakeManager.verifierIdOf(alice), 0, "no id below the minimum or as a solver");
        uint32 next = stakeManager.verifierIdOf(_actor("unknown")) + 1; // zero + 1 if the set is empty
        address[] memory active = new address[](stakeManager.verifierCount());
        for (uint256 i; i < active.length; ++i) {
            active[i] = stakeManager.verifierAt(i);
            uint32 id = stakeManager.verifierIdOf(active[i]);
            if (id >= next) next = id + 1;
        }
        vm.expectEmit(address(stakeManager));
        emit IStakeManager.VerifierIdAssigned(alice, next);
        _stake(alice, Role.Verifier, 1e18);
        _stake(bob, Role.Verifier, 100e18);
        assertEq(stakeManager.verifierIdOf(alice), next);
        assertEq(stakeManager.verifierIdOf(bob), next + 1);
        // leaving the set and coming back keeps the id
        vm.prank(alice);
        stakeManager.requestUnbond(Role.Verifier, 100e18);
        assertFalse(stakeManager.isActive(alice, Role.Verifier));
        _stake(alice, Role.Verifier, 100e18);
        assertEq(stakeManager.verifierIdOf(alice), next, "a returning verifier got a new id");
        uint32[] memory ids = new uint32[](2);
        (ids[0], ids[1]) = (next + 1, next);
        address[] memory accounts = stakeManager.verifiersById(ids);
        assertEq(accounts.length, 2);
        assertEq(accounts[0], bob);
        assertEq(accounts[1], alice);
        uint32[] memory back = stakeManager.verifierIdsOf(accounts);
        assertEq(uint256(back[0]), uint256(next + 1));
        assertEq(uint256(back[1]), uint256(next));
    }

    /// @notice The active set holds each verifier once with its id: a top-up of an active verifier
    ///         neither adds it again nor emits an activation, a slash below the minimum removes it
    ///         (and the draw no longer returns it), a stake back returns it with its old id.
    function test_activeSet_topUpSlashRestake_keepsOneMemberWithItsId_succeeds() public {
        _stake(alice, Role.Verifier, 100e18);
        uint32 id = stakeManager.verifierIdOf(alice);
        uint256 count = stakeManager.verifierCount();
        vm.recordLogs();
        _stake(alice, Role.Verifier, 5e18); // already active
        assertEq(stakeManager.verifierCount(), count, "a top-up added the verifier again");
        Vm.Log[] memory logs = vm.getRecordedLogs();
        for (uint256 i; i < logs.length; ++i) {
            assertTrue(logs[i].topics[0] != IStakeManager.VerifierActivated.selector, "activated twice");
        }
        stakeManager.slash(alice, Role.Verifier, 10e18, address(this)); // 95 left: below the minimum
        assertFalse(stakeManager.isActive(alice, Role.Verifier));
        assertEq(stakeManager.verifierCount(), count - 1);
        (address[] memory drawn,,) =
            stakeManager.drawVerifiers(keccak256("seed"), count, 0, new address[](0), new address[](0));
        for (uint256 i; i < drawn.length; ++i) {
            assertTrue(drawn[i] != alice, "an inactive verifier was drawn");
        }
        _stake(alice, Role.Verifier, 10e18);
        assertEq(stakeManager.verifierCount(), count);
        uint32[] memory ids;
        (drawn, ids,) = stakeManager.drawVerifiers(keccak256("seed"), count, 0, new address[](0), new address[](0));
        bool seen;
        for (uint256 i; i < drawn.length; ++i) {
            if (drawn[i] != alice) continue;
            assertFalse(seen, "drawn twice");
            seen = true;
            assertEq(uint256(ids[i]), uint256(id), "the returning verifier's id");
        }
        assertTrue(seen, "the returning verifier was not drawn from the whole set");
    }

    function test_verifiersById_unknownId_reverts() public {
        _stake(alice, Role.Verifier, 100e18);
        uint32 id = stakeManager.verifierIdOf(alice);
        uint32[] memory ids = new uint32[](2);
        (ids[0], ids[1]) = (id, id + 1);
        vm.expectRevert(abi.encodeWithSelector(IStakeManager.UnknownVerifierId.selector, id + 1));
        stakeManager.verifiersById(ids);
        ids[1] = 0;
        vm.expectRevert(abi.encodeWithSelector(IStakeManager.UnknownVerifierId.selector, 0));
        stakeManager.verifiersById(ids);
    }

    function test_verifierAt_outOfRange_reverts() public {
        uint256 count = stakeManager.verifierCount();
        vm.expectRevert(abi.encodeWithSelector(IStakeManager.VerifierIndexOutOfRange.selector, count, count));
        stakeManager.verifierAt(count);
    }
}

contract StakeManager_RequestUnbond_Test is StakeManager_Init {
    function testFuzz_requestUnbond_movesFreeStake_succeeds(uint256 amount, uint256 unbond) public {
        amount = bound(amount, 1, FUNDS);
        unbond = bound(unbond, 1, amount);
        _stake(alice, Role.Solver, amount);
        vm.prank(alice);
        stakeManager.requestUnbond(Role.Solver, unbond);
        (uint256 staked,, uint256 unbonding, uint64 releaseAt) = stakeManager.stakeOf(alice, Role.Solver);
        assertEq(staked, amount - unbond);
        assertEq(unbonding, unbond);
        assertEq(uint256(releaseAt), block.timestamp + 1 days);
    }

    function test_requestUnbond_movesFreeStake_succeeds() public {
        testFuzz_requestUnbond_movesFreeStake_succeeds(100e18, 40e18);
    }

    function test_requestUnbond_zero_reverts() public {
        vm.expectRevert(IStakeManager.ZeroAmount.selector);
        vm.prank(alice);
        stakeManager.requestUnbond(Role.Solver, 0);
    }

    function test_requestUnbond_lockedStake_reverts() public {
        _stake(alice, Role.Solver, 100e18);
        stakeManager.lock(alice, Role.Solver, 60e18);
        vm.expectRevert(
            abi.encodeWithSelector(IStakeManager.InsufficientFreeStake.selector, alice, Role.Solver, 40e18, 41e18)
        );
        vm.prank(alice);
        stakeManager.requestUnbond(Role.Solver, 41e18);
    }

    function test_requestUnbond_resetsReleaseAt_succeeds() public {
        _stake(alice, Role.Solver, 100e18);
        vm.prank(alice);
        stakeManager.requestUnbond(Role.Solver, 10e18);
        vm.warp(block.timestamp + 12 hours);
        vm.prank(alice);
        stakeManager.requestUnbond(Role.Solver, 10e18);
        (,, uint256 unbonding, uint64 releaseAt) = stakeManager.stakeOf(alice, Role.Solver);
        assertEq(unbonding, 20e18);
        assertEq(uint256(releaseAt), block.timestamp + 1 days);
    }

    function test_requestUnbond_deactivatesVerifier_succeeds() public {
        _stake(alice, Role.Verifier, 100e18);
        uint256 countBefore = stakeManager.verifierCount();
        vm.expectEmit(address(stakeManager));
        emit IStakeManager.VerifierDeactivated(alice);
        vm.prank(alice);
        stakeManager.requestUnbond(Role.Verifier, 1);
        assertEq(stakeManager.verifierCount(), countBefore - 1);
        assertFalse(stakeManager.isActive(alice, Role.Verifier));
    }
}

contract StakeManager_Withdraw_Test is StakeManager_Init {
    function test_withdraw_afterDelay_succeeds() public {
        _stake(alice, Role.Whistleblower, 50e18);
        vm.prank(alice);
        stakeManager.requestUnbond(Role.Whistleblower, 50e18);
        vm.warp(block.timestamp + 1 days);
        uint256 balanceBefore = token.balanceOf(alice);
        vm.expectEmit(address(stakeManager));
        emit IStakeManager.Withdrawn(alice, Role.Whistleblower, 50e18);
        vm.prank(alice);
        stakeManager.withdraw(Role.Whistleblower);
        assertEq(token.balanceOf(alice), balanceBefore + 50e18);
        (,, uint256 unbonding,) = stakeManager.stakeOf(alice, Role.Whistleblower);
        assertEq(unbonding, 0);
    }

    function test_withdraw_beforeDelay_reverts() public {
        _stake(alice, Role.Whistleblower, 50e18);
        vm.prank(alice);
        stakeManager.requestUnbond(Role.Whistleblower, 50e18);
        uint64 releaseAt = uint64(block.timestamp + 1 days);
        vm.warp(releaseAt - 1);
        vm.expectRevert(
            abi.encodeWithSelector(
                IStakeManager.UnbondingNotReleased.selector, alice, Role.Whistleblower, releaseAt, releaseAt - 1
            )
        );
        vm.prank(alice);
        stakeManager.withdraw(Role.Whistleblower);
    }

    function test_withdraw_nothingUnbonding_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IStakeManager.NothingUnbonding.selector, alice, Role.Solver));
        vm.prank(alice);
        stakeManager.withdraw(Role.Solver);
    }
}

contract StakeManager_LockUnlock_Test is StakeManager_Init {
    function test_lock_notProtocol_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IStakeManager.NotProtocol.selector, alice));
        vm.prank(alice);
        stakeManager.lock(alice, Role.Solver, 1);
    }

    function test_lock_insufficientFree_reverts() public {
        _stake(alice, Role.Solver, 100e18);
        vm.expectRevert(
            abi.encodeWithSelector(IStakeManager.InsufficientFreeStake.selector, alice, Role.Solver, 100e18, 101e18)
        );
        stakeManager.lock(alice, Role.Solver, 101e18);
    }

    function testFuzz_lockUnlock_roundTrip_succeeds(uint256 amount, uint256 lockAmount) public {
        amount = bound(amount, 1, FUNDS);
        lockAmount = bound(lockAmount, 0, amount);
        _stake(alice, Role.Solver, amount);
        vm.expectEmit(address(stakeManager));
        emit IStakeManager.StakeLocked(alice, Role.Solver, lockAmount, lockAmount);
        stakeManager.lock(alice, Role.Solver, lockAmount);
        assertEq(stakeManager.freeStake(alice, Role.Solver), amount - lockAmount);
        vm.expectEmit(address(stakeManager));
        emit IStakeManager.StakeUnlocked(alice, Role.Solver, lockAmount, 0);
        stakeManager.unlock(alice, Role.Solver, lockAmount);
        assertEq(stakeManager.freeStake(alice, Role.Solver), amount);
    }

    function test_lockUnlock_roundTrip_succeeds() public {
        testFuzz_lockUnlock_roundTrip_succeeds(100e18, 30e18);
    }

    function test_unlock_notProtocol_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IStakeManager.NotProtocol.selector, alice));
        vm.prank(alice);
        stakeManager.unlock(alice, Role.Solver, 1);
    }

    function test_unlock_moreThanLocked_reverts() public {
        _stake(alice, Role.Solver, 100e18);
        stakeManager.lock(alice, Role.Solver, 10e18);
        vm.expectRevert(
            abi.encodeWithSelector(IStakeManager.InsufficientLockedStake.selector, alice, Role.Solver, 10e18, 11e18)
        );
        stakeManager.unlock(alice, Role.Solver, 11e18);
    }

    function test_lockEach_notProtocol_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IStakeManager.NotProtocol.selector, alice));
        vm.prank(alice);
        stakeManager.lockEach(_pair(alice, alice), Role.Verifier, 1);
        vm.expectRevert(abi.encodeWithSelector(IStakeManager.NotProtocol.selector, alice));
        vm.prank(alice);
        stakeManager.unlockEach(_pair(alice, alice), Role.Verifier, 1);
    }

    /// @notice Each account is locked and unlocked as by `lock` and `unlock`, with one batch event
    ///         per call naming every account and its amount in order (no per-account event).
    function test_lockEachUnlockEach_eachAccount_succeeds() public {
        address bob = _actor("bob");
        _stake(alice, Role.Verifier, 100e18);
        _stake(bob, Role.Verifier, 100e18);
        // One amount for every account: the event carries it once.
        uint256[] memory each = new uint256[](1);
        each[0] = 30e18;
        vm.recordLogs();
        vm.expectEmit(address(stakeManager));
        emit IStakeManager.StakesLocked(Role.Verifier, _pair(alice, bob), each);
        stakeManager.lockEach(_pair(alice, bob), Role.Verifier, 30e18);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        uint256 fromStakeManager;
        for (uint256 i; i < logs.length; ++i) {
            if (logs[i].emitter == address(stakeManager)) ++fromStakeManager;
        }
        assertEq(fromStakeManager, 1, "one event for the call");
        assertEq(stakeManager.freeStake(alice, Role.Verifier), 70e18);
        assertEq(stakeManager.freeStake(bob, Role.Verifier), 70e18);
        vm.expectEmit(address(stakeManager));
        emit IStakeManager.StakesUnlocked(Role.Verifier, _pair(bob, alice), each);
        stakeManager.unlockEach(_pair(bob, alice), Role.Verifier, 30e18);
        assertEq(stakeManager.freeStake(alice, Role.Verifier), 100e18);
        assertEq(stakeManager.freeStake(bob, Role.Verifier), 100e18);
    }

    /// @notice One account short of the amount reverts the whole call: no seat is locked (or
    ///         unlocked) without the others.
    function test_lockEach_oneShort_locksNone_reverts() public {
        address bob = _actor("bob");
        _stake(alice, Role.Verifier, 100e18);
        _stake(bob, Role.Verifier, 10e18);
        vm.expectRevert(
            abi.encodeWithSelector(IStakeManager.InsufficientFreeStake.selector, bob, Role.Verifier, 10e18, 30e18)
        );
        stakeManager.lockEach(_pair(alice, bob), Role.Verifier, 30e18);
        assertEq(stakeManager.freeStake(alice, Role.Verifier), 100e18, "alice locked without bob");
        stakeManager.lock(alice, Role.Verifier, 30e18);
        vm.expectRevert(
            abi.encodeWithSelector(IStakeManager.InsufficientLockedStake.selector, bob, Role.Verifier, 0, 30e18)
        );
        stakeManager.unlockEach(_pair(alice, bob), Role.Verifier, 30e18);
        assertEq(stakeManager.freeStake(alice, Role.Verifier), 70e18, "alice unlocked without bob");
    }

    /// @notice Each account is locked its own amount, in order, as by `lock`; the amounts must
    ///         match the accounts one for one; only the protocol may call.
    function test_lockAmounts_eachAccountItsAmount_succeeds() public {
        address bob = _actor("bob");
        _stake(alice, Role.Verifier, 100e18);
        _stake(bob, Role.Verifier, 100e18);
        uint256[] memory amounts = new uint256[](2);
        (amounts[0], amounts[1]) = (10e18, 25e18);
        vm.expectEmit(address(stakeManager));
        emit IStakeManager.StakesLocked(Role.Verifier, _pair(alice, bob), amounts);
        stakeManager.lockAmounts(_pair(alice, bob), Role.Verifier, amounts);
        assertEq(stakeManager.freeStake(alice, Role.Verifier), 90e18);
        assertEq(stakeManager.freeStake(bob, Role.Verifier), 75e18);
        vm.expectEmit(address(stakeManager));
        emit IStakeManager.StakesUnlocked(Role.Verifier, _pair(alice, bob), amounts);
        stakeManager.unlockAmounts(_pair(alice, bob), Role.Verifier, amounts);
        assertEq(stakeManager.freeStake(alice, Role.Verifier), 100e18);
        assertEq(stakeManager.freeStake(bob, Role.Verifier), 100e18);

        uint256[] memory one = new uint256[](1);
        vm.expectRevert(abi.encodeWithSelector(IStakeManager.LengthMismatch.selector, 2, 1));
        stakeManager.lockAmounts(_pair(alice, bob), Role.Verifier, one);
        vm.expectRevert(abi.encodeWithSelector(IStakeManager.NotProtocol.selector, alice));
        vm.prank(alice);
        stakeManager.lockAmounts(_pair(alice, alice), Role.Verifier, amounts);
    }

    /// @notice One account short of its amount reverts the whole call: none is locked.
    function test_lockAmounts_oneShort_locksNone_reverts() public {
        address bob = _actor("bob");
        _stake(alice, Role.Verifier, 100e18);
        _stake(bob, Role.Verifier, 10e18);
        uint256[] memory amounts = new uint256[](2);
        (amounts[0], amounts[1]) = (5e18, 11e18);
        vm.expectRevert(
            abi.encodeWithSelector(IStakeManager.InsufficientFreeStake.selector, bob, Role.Verifier, 10e18, 11e18)
        );
        stakeManager.lockAmounts(_pair(alice, bob), Role.Verifier, amounts);
        assertEq(stakeManager.freeStake(alice, Role.Verifier), 100e18, "alice locked without bob");
    }

    /// @notice A job's end in one call: each account's lock comes off and its earnings join its
    ///         stake (free, unbonded like any stake), `totalHeld` grows by their total and still
    ///         equals the tokens held; one batch event names every amount (a shared one once).
    function test_unlockAndRestake_unlocksAndRestakesEach_succeeds() public {
        address bob = _actor("bob");
        _stake(alice, Role.Verifier, 100e18);
        _stake(bob, Role.Verifier, 100e18);
        stakeManager.lockEach(_pair(alice, bob), Role.Verifier, 30e18);
        uint256 held = stakeManager.totalHeld();
        uint256[] memory shared = new uint256[](1);
        shared[0] = 30e18;
        uint256[] memory earnings = new uint256[](2);
        (earnings[0], earnings[1]) = (5e18, 7e18);
        // The protocol sends the earnings' total first.
        vm.prank(bob);
        token.transfer(address(stakeManager), 12e18);
        uint256 bobWallet = token.balanceOf(bob);
        vm.recordLogs();
        vm.expectEmit(address(stakeManager));
        emit IStakeManager.StakesRestaked(Role.Verifier, _pair(alice, bob), shared, earnings);
        stakeManager.unlockAndRestake(_pair(alice, bob), Role.Verifier, shared, earnings);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        uint256 fromStakeManager;
        for (uint256 i; i < logs.length; ++i) {
            if (logs[i].emitter == address(stakeManager)) ++fromStakeManager;
        }
        assertEq(fromStakeManager, 1, "one event for the call");
        (uint256 staked, uint256 locked, uint256 unbonding,) = stakeManager.stakeOf(alice, Role.Verifier);
        assertEq(staked, 105e18, "alice's fee restaked");
        assertEq(locked, 0, "alice's seat unlocked");
        assertEq(unbonding, 0);
        assertEq(_staked(bob, Role.Verifier), 107e18, "bob's fee restaked");
        assertEq(stakeManager.freeStake(bob, Role.Verifier), 107e18, "the earnings are free stake");
        assertEq(token.balanceOf(bob), bobWallet, "no wallet payment");
        assertEq(stakeManager.totalHeld(), held + 12e18);
        assertEq(token.balanceOf(address(stakeManager)), stakeManager.totalHeld());
        // Earnings leave like any stake: after the unbonding delay.
        vm.prank(alice);
        stakeManager.requestUnbond(Role.Verifier, 105e18);
        vm.warp(block.timestamp + stakeManager.unbondingDelay());
        uint256 aliceWallet = token.balanceOf(alice);
        vm.prank(alice);
        stakeManager.withdraw(Role.Verifier);
        assertEq(token.balanceOf(alice), aliceWallet + 105e18);
    }

    /// @notice Earnings that raise a verifier's stake to the minimum activate it, as `stake` does
    ///         (the active set holds every active verifier, P1a); a solver's earnings activate
    ///         nothing.
    function test_unlockAndRestake_reachesMinimum_activatesVerifier_succeeds() public {
        uint256 min = stakeManager.minStake(Role.Verifier);
        _stake(alice, Role.Verifier, min - 1e18);
        assertFalse(stakeManager.isActive(alice, Role.Verifier));
        uint256 members = stakeManager.verifierCount();
        stakeManager.lock(alice, Role.Verifier, 10e18);
        vm.prank(alice);
        token.transfer(address(stakeManager), 1e18);
        uint256[] memory unlocks = new uint256[](1);
        unlocks[0] = 10e18;
        uint256[] memory earnings = new uint256[](1);
        earnings[0] = 1e18;
        address[] memory one = new address[](1);
        one[0] = alice;
        vm.expectEmit(address(stakeManager));
        emit IStakeManager.VerifierActivated(alice);
        stakeManager.unlockAndRestake(one, Role.Verifier, unlocks, earnings);
        assertTrue(stakeManager.isActive(alice, Role.Verifier));
        assertEq(stakeManager.verifierCount(), members + 1);
        assertEq(stakeManager.verifierAt(members), alice);
    }

    /// @notice Only the protocol calls it; an amounts array neither single nor one per account
    ///         reverts; one account short of its unlock reverts the whole call, restaking nothing.
    function test_unlockAndRestake_badCalls_reverts() public {
        address bob = _actor("bob");
        _stake(alice, Role.Verifier, 100e18);
        _stake(bob, Role.Verifier, 100e18);
        stakeManager.lock(alice, Role.Verifier, 30e18);
        uint256[] memory one = new uint256[](1);
        one[0] = 30e18;
        uint256[] memory three = new uint256[](3);
        vm.expectRevert(abi.encodeWithSelector(IStakeManager.NotProtocol.selector, alice));
        vm.prank(alice);
        stakeManager.unlockAndRestake(_pair(alice, bob), Role.Verifier, one, one);
        vm.expectRevert(abi.encodeWithSelector(IStakeManager.LengthMismatch.selector, 2, 3));
        stakeManager.unlockAndRestake(_pair(alice, bob), Role.Verifier, three, one);
        vm.expectRevert(abi.encodeWithSelector(IStakeManager.LengthMismatch.selector, 2, 3));
        stakeManager.unlockAndRestake(_pair(alice, bob), Role.Verifier, one, three);
        uint256 held = stakeManager.totalHeld();
        vm.expectRevert(
            abi.encodeWithSelector(IStakeManager.InsufficientLockedStake.selector, bob, Role.Verifier, 0, 30e18)
        );
        stakeManager.unlockAndRestake(_pair(alice, bob), Role.Verifier, one, one);
        assertEq(_staked(alice, Role.Verifier), 100e18, "alice restaked without bob");
        assertEq(_locked(alice, Role.Verifier), 30e18, "alice unlocked without bob");
        assertEq(stakeManager.totalHeld(), held);
    }

    function _pair(address first, address second) internal pure returns (address[] memory accounts) {
        accounts = new address[](2);
        (accounts[0], accounts[1]) = (first, second);
    }
}

contract StakeManager_Slash_Test is StakeManager_Init {
    function test_slash_notProtocol_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IStakeManager.NotProtocol.selector, alice));
        vm.prank(alice);
        stakeManager.slash(alice, Role.Solver, 1, alice);
    }

    function test_slash_zeroRecipient_reverts() public {
        vm.expectRevert(IStakeManager.ZeroAddress.selector);
        stakeManager.slash(alice, Role.Solver, 1, address(0));
    }

    function test_slash_lockedFirst_succeeds() public {
        _stake(alice, Role.Solver, 100e18);
        stakeManager.lock(alice, Role.Solver, 30e18);
        vm.expectEmit(address(stakeManager));
        emit IStakeManager.StakeSlashed(alice, Role.Solver, 20e18, 20e18, stranger);
        uint256 slashed = stakeManager.slash(alice, Role.Solver, 20e18, stranger);
        assertEq(slashed, 20e18);
        (uint256 staked, uint256 locked,,) = stakeManager.stakeOf(alice, Role.Solver);
        assertEq(staked, 80e18);
        assertEq(locked, 10e18);
        assertEq(token.balanceOf(stranger), FUNDS + 20e18);
    }

    /// @notice Unbonding does not escape a slash: stake 100, lock 30, unbond 70, slash 50 takes the
    ///         30 locked then 20 of the unbonding; the rest is withdrawable after the delay.
    function test_slash_reachesUnbonding_succeeds() public {
        _stake(alice, Role.Solver, 100e18);
        stakeManager.lock(alice, Role.Solver, 30e18);
        vm.prank(alice);
        stakeManager.requestUnbond(Role.Solver, 70e18);
        uint256 slashed = stakeManager.slash(alice, Role.Solver, 50e18, stranger);
        assertEq(slashed, 50e18);
        (uint256 staked, uint256 locked, uint256 unbonding,) = stakeManager.stakeOf(alice, Role.Solver);
        assertEq(staked, 0);
        assertEq(locked, 0);
        assertEq(unbonding, 50e18);
        vm.warp(block.timestamp + 1 days);
        vm.prank(alice);
        stakeManager.withdraw(Role.Solver);
        assertEq(token.balanceOf(alice), FUNDS - 50e18);
        assertEq(token.balanceOf(address(stakeManager)), stakeManager.totalHeld());
    }

    function testFuzz_slash_capsAtAvailable_succeeds(uint256 amount, uint256 unbond, uint256 slashAmount) public {
        amount = bound(amount, 1, FUNDS);
        unbond = bound(unbond, 0, amount);
        slashAmount = bound(slashAmount, 0, 3 * FUNDS);
        _stake(alice, Role.Verifier, amount);
        if (unbond != 0) {
            vm.prank(alice);
            stakeManager.requestUnbond(Role.Verifier, unbond);
        }
        uint256 slashed = stakeManager.slash(alice, Role.Verifier, slashAmount, stranger);
        assertEq(slashed, slashAmount < amount ? slashAmount : amount);
        (uint256 staked, uint256 locked, uint256 unbonding,) = stakeManager.stakeOf(alice, Role.Verifier);
        assertEq(staked + unbonding, amount - slashed);
        assertLte(locked, staked);
        assertEq(token.balanceOf(address(stakeManager)), stakeManager.totalHeld());
        assertEq(stakeManager.isActive(alice, Role.Verifier), staked != 0 && staked >= 100e18);
    }

    function test_slash_capsAtAvailable_succeeds() public {
        testFuzz_slash_capsAtAvailable_succeeds(100e18, 40e18, 250e18);
    }
}

contract StakeManager_DrawVerifiers_Test is StakeManager_Init {
    /// @notice Never an excluded account, no duplicates, only verifiers with enough free stake, at
    ///         most `count`; the reserve only when the first pass falls short.
    function testFuzz_drawVerifiers_respectsRules_succeeds(bytes32 seed, uint256 count) public {
        count = bound(count, 1, VERIFIER_POOL + 2);
        address[] memory excluded = new address[](2);
        excluded[0] = verifierPool[0];
        excluded[1] = verifierPool[1];
        address[] memory reserve = new address[](2);
        reserve[0] = verifierPool[1]; // excluded and reserved: never drawn
        reserve[1] = verifierPool[2];
        (address[] memory drawn, uint32[] memory ids, uint256 candidates) =
            stakeManager.drawVerifiers(seed, count, params.verifierStake, excluded, reserve);
        assertEq(candidates, VERIFIER_POOL);
        assertEq(ids.length, drawn.length);
        for (uint256 i; i < drawn.length; ++i) {
            assertEq(ids[i], stakeManager.verifierIdOf(drawn[i]), "the draw's id is the verifier's own");
            assertGt(ids[i], 0);
        }
        uint256 fresh = VERIFIER_POOL - 3; // neither excluded nor reserved
        uint256 expected = count < fresh + 1 ? count : fresh + 1; // the pool, then verifierPool[2]
        assertEq(drawn.length, expected);
        for (uint256 i; i < drawn.length; ++i) {
            assertTrue(drawn[i] != verifierPool[0] && drawn[i] != verifierPool[1], "excluded drawn");
            if (drawn[i] == verifierPool[2]) assertGt(count, fresh, "reserve drawn before the pool ran out");
            for (uint256 j; j < i; ++j) {
                assertTrue(drawn[i] != drawn[j], "duplicate");
            }
        }
    }

    function test_drawVerifiers_respectsRules_succeeds() public {
        testFuzz_drawVerifiers_respectsRules_succeeds(keccak256("seed"), 3);
        testFuzz_drawVerifiers_respectsRules_succeeds(keccak256("seed"), VERIFIER_POOL);
    }

    /// @notice A verifier whose free stake is below `minFree` is skipped.
    function test_drawVerifiers_skipsLowFreeStake_succeeds() public {
        stakeManager.lock(verifierPool[3], Role.Verifier, 500e18 - params.verifierStake + 1);
        (address[] memory drawn,,) = stakeManager.drawVerifiers(
            keccak256("seed"), VERIFIER_POOL, params.verifierStake, new address[](0), new address[](0)
        );
        assertEq(drawn.length, VERIFIER_POOL - 1);
        for (uint256 i; i < drawn.length; ++i) {
            assertTrue(drawn[i] != verifierPool[3], "low free stake drawn");
        }
    }
}
