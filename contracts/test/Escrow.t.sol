// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Vm} from "@prb/test/Vm.sol";
import {BlocklistToken} from "./utils/BlocklistToken.sol";
import {Deployers} from "./utils/Deployers.sol";
// Contracts
import {Escrow} from "../src/Escrow.sol";
// Interfaces
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IEscrow} from "../src/interfaces/IEscrow.sol";
// Types
import {Bucket} from "../src/types/EscrowTypes.sol";

/// @notice The Escrow alone: authorisation, bucket moves, unbooked arrivals, payments and claims.
///         The protocol's own use of it is covered by the JobManager, BisectionGame and invariant
///         suites.
contract Escrow_Init is Deployers {
    Escrow internal vault;
    address internal protocol;
    address internal otherProtocol;

    function setUp() public virtual override {
        super.setUp();
        protocol = _actor("protocol");
        otherProtocol = _actor("other protocol");
        // The vault's JobManager and RunRegistry stand-ins; no bisection game.
        vault = new Escrow(token, protocol, address(0), otherProtocol);
        vm.prank(submitter);
        token.approve(address(vault), type(uint256).max);
        vm.prank(stranger);
        token.approve(address(vault), type(uint256).max);
    }

    function _deposit(Bucket bucket, address from, uint256 amount) internal {
        vm.prank(protocol);
        vault.deposit(bucket, from, amount);
    }

    /// @notice The vault's balance equals its buckets and credits (nothing unbooked, no pot left).
    function _assertConserved() internal {
        (uint256 escrowed, uint256 bonds, uint256 credits, uint256 pool) = vault.liabilities();
        assertEq(token.balanceOf(address(vault)), escrowed + bonds + credits + pool + vault.bucketOf(Bucket.Pot));
        assertEq(vault.bucketOf(Bucket.Unbooked), 0);
    }
}

contract Escrow_Constructor_Test is Escrow_Init {
    /// @notice The token, the JobManager and the RunRegistry are required; the game is not (the
    ///         committee adjudicator has none).
    function test_constructor_zeroAddress_reverts() public {
        vm.expectRevert(IEscrow.ZeroAddress.selector);
        new Escrow(IERC20(address(0)), protocol, address(0), otherProtocol);
        vm.expectRevert(IEscrow.ZeroAddress.selector);
        new Escrow(token, address(0), address(0), otherProtocol);
        vm.expectRevert(IEscrow.ZeroAddress.selector);
        new Escrow(token, protocol, address(0), address(0));
    }

    function test_constructor_views_succeeds() public {
        assertEq(address(vault.token()), address(token));
        (address jm, address game, address runs) = vault.protocols();
        assertEq(jm, protocol);
        assertEq(game, address(0));
        assertEq(runs, otherProtocol);
        assertTrue(vault.isAuthorized(protocol));
        assertTrue(vault.isAuthorized(otherProtocol));
        assertFalse(vault.isAuthorized(stranger));
        assertFalse(vault.isAuthorized(address(0)), "a missing game authorises the zero address");
        assertTrue(escrow.isAuthorized(address(jobManager)));
        assertFalse(escrow.isAuthorized(address(this)), "the deployer moves balances");
    }

    /// @notice A game given at construction moves balances like the other two.
    function test_constructor_withAGame_authorizesIt_succeeds() public {
        Escrow withGame = new Escrow(token, protocol, stranger, otherProtocol);
        assertTrue(withGame.isAuthorized(stranger));
        vm.prank(stranger);
        withGame.deposit(Bucket.Escrowed, submitter, 0);
    }

    /// @notice Nobody can add a protocol contract after construction, the deployer included: the
    ///         deployment's Escrow refuses the deployer's deposit (which would pull any approver's
    ///         tokens).
    function test_deposit_deployerOfTheDeployment_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IEscrow.NotAuthorized.selector, address(this)));
        escrow.deposit(Bucket.Escrowed, submitter, 1);
    }
}

contract Escrow_Protocol_Test is Escrow_Init {
    function test_deposit_notAuthorized_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IEscrow.NotAuthorized.selector, stranger));
        vm.prank(stranger);
        vault.deposit(Bucket.Escrowed, stranger, 1);
    }

    function test_move_notAuthorized_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IEscrow.NotAuthorized.selector, stranger));
        vm.prank(stranger);
        vault.move(Bucket.Escrowed, Bucket.Bonds, 1);
    }

    function test_credit_notAuthorized_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IEscrow.NotAuthorized.selector, stranger));
        vm.prank(stranger);
        vault.credit(Bucket.Escrowed, stranger, 1);
    }

    function test_deposit_intoUnbooked_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IEscrow.InvalidBucket.selector, Bucket.Unbooked));
        _deposit(Bucket.Unbooked, submitter, 1);
    }

    function testFuzz_deposit_pullsIntoBucket_succeeds(uint256 amount) public {
        amount = bound(amount, 1, FUNDS);
        uint256 before = token.balanceOf(submitter);
        vm.expectEmit(address(vault));
        emit IEscrow.Deposited(protocol, Bucket.Escrowed, submitter, amount);
        _deposit(Bucket.Escrowed, submitter, amount);
        assertEq(vault.bucketOf(Bucket.Escrowed), amount);
        assertEq(token.balanceOf(submitter), before - amount);
        _assertConserved();
    }

    function test_deposit_pullsIntoBucket_succeeds() public {
        testFuzz_deposit_pullsIntoBucket_succeeds(REWARD);
    }

    function test_move_overdraft_reverts() public {
        _deposit(Bucket.Bonds, submitter, 10);
        vm.expectRevert(abi.encodeWithSelector(IEscrow.InsufficientBucket.selector, Bucket.Bonds, 10, 11));
        vm.prank(protocol);
        vault.move(Bucket.Bonds, Bucket.Pot, 11);
    }

    function test_move_intoUnbooked_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IEscrow.InvalidBucket.selector, Bucket.Unbooked));
        vm.prank(protocol);
        vault.move(Bucket.Bonds, Bucket.Unbooked, 1);
    }

    function test_credit_overdraft_reverts() public {
        _deposit(Bucket.Escrowed, submitter, 10);
        vm.expectRevert(abi.encodeWithSelector(IEscrow.InsufficientBucket.selector, Bucket.Escrowed, 10, 11));
        vm.prank(protocol);
        vault.credit(Bucket.Escrowed, stranger, 11);
    }

    function test_credit_zeroAccount_reverts() public {
        vm.expectRevert(IEscrow.ZeroAddress.selector);
        vm.prank(protocol);
        vault.credit(Bucket.Escrowed, address(0), 1);
    }

    /// @notice Unbooked is only what really arrived (a slash sent to the vault): booking more reverts.
    function testFuzz_unbooked_onlyWhatArrived_succeeds(uint256 arrived, uint256 booked) public {
        arrived = bound(arrived, 1, FUNDS);
        booked = bound(booked, 1, FUNDS);
        _deposit(Bucket.Escrowed, submitter, REWARD);
        vm.prank(stranger);
        token.transfer(address(vault), arrived);
        assertEq(vault.bucketOf(Bucket.Unbooked), arrived);
        vm.prank(protocol);
        if (booked > arrived) {
            vm.expectRevert(
                abi.encodeWithSelector(IEscrow.InsufficientBucket.selector, Bucket.Unbooked, arrived, booked)
            );
            vault.credit(Bucket.Unbooked, submitter, booked);
            return;
        }
        vm.expectEmit(address(vault));
        emit IEscrow.Credited(protocol, submitter, Bucket.Unbooked, booked);
        vault.credit(Bucket.Unbooked, submitter, booked);
        assertEq(vault.creditOf(submitter), booked);
        assertEq(vault.bucketOf(Bucket.Unbooked), arrived - booked);
        assertEq(vault.bucketOf(Bucket.Escrowed), REWARD);
    }

    function test_unbooked_onlyWhatArrived_succeeds() public {
        testFuzz_unbooked_onlyWhatArrived_succeeds(5, 5);
    }

    function test_unbooked_moreThanArrived_reverts() public {
        testFuzz_unbooked_onlyWhatArrived_succeeds(5, 6);
    }

    function test_move_unbookedIntoPot_thenCredits_succeeds() public {
        vm.prank(stranger);
        token.transfer(address(vault), 30);
        vm.startPrank(protocol);
        vault.move(Bucket.Unbooked, Bucket.Pot, 30);
        vault.credit(Bucket.Pot, submitter, 20);
        vault.credit(Bucket.Pot, stranger, 10);
        vm.stopPrank();
        assertEq(vault.bucketOf(Bucket.Pot), 0);
        assertEq(vault.creditOf(submitter), 20);
        assertEq(vault.creditOf(stranger), 10);
        _assertConserved();
    }
}

contract Escrow_FundJackpot_Test is Escrow_Init {
    function testFuzz_fundJackpot_addsToPool_succeeds(uint256 amount) public {
        amount = bound(amount, 0, FUNDS);
        vm.expectEmit(address(vault));
        emit IEscrow.Deposited(stranger, Bucket.Jackpot, stranger, amount);
        vm.prank(stranger);
        vault.fundJackpot(amount);
        assertEq(vault.jackpotPool(), amount);
        assertEq(vault.bucketOf(Bucket.Jackpot), amount);
        _assertConserved();
    }

    function test_fundJackpot_addsToPool_succeeds() public {
        testFuzz_fundJackpot_addsToPool_succeeds(100e18);
    }
}

contract Escrow_ClaimCredit_Test is Escrow_Init {
    /// @notice Credits from several buckets (and protocol contracts) are claimed at once, exactly.
    function test_claimCredit_everythingOwedAtOnce_succeeds() public {
        _deposit(Bucket.Escrowed, submitter, 100);
        _deposit(Bucket.Bonds, submitter, 10);
        vm.startPrank(protocol);
        vault.credit(Bucket.Escrowed, stranger, 60);
        vault.credit(Bucket.Bonds, stranger, 10);
        vm.stopPrank();
        uint256 before = token.balanceOf(stranger);
        vm.expectEmit(address(vault));
        emit IEscrow.CreditClaimed(stranger, 70);
        vm.prank(stranger);
        vault.claimCredit();
        assertEq(token.balanceOf(stranger), before + 70);
        assertEq(vault.creditOf(stranger), 0);
        vm.expectRevert(abi.encodeWithSelector(IEscrow.NoCreditToClaim.selector, stranger));
        vm.prank(stranger);
        vault.claimCredit();
        _assertConserved();
    }

    /// @notice A bucket, the credit total and an account's credit that empty keep a live word
    ///         (amount + 1): the next job's deposit or credit rewrites it instead of creating a
    ///         word (20,000 gas), and every view still reads the amount.
    function test_emptiedWords_stayLive_succeeds() public {
        bytes32 escrowedSlot = keccak256(abi.encode(uint256(Bucket.Escrowed), uint256(0)));
        bytes32 creditSlot = keccak256(abi.encode(stranger, uint256(1)));
        bytes32 totalSlot = bytes32(uint256(2));
        assertEq(uint256(vm.load(address(vault), escrowedSlot)), 1, "live from deployment");
        assertEq(uint256(vm.load(address(vault), totalSlot)), 1, "live from deployment");
        assertEq(uint256(vm.load(address(vault), creditSlot)), 0, "no credit yet");
        _deposit(Bucket.Escrowed, submitter, 100);
        vm.prank(protocol);
        vault.credit(Bucket.Escrowed, stranger, 100);
        assertEq(vault.bucketOf(Bucket.Escrowed), 0);
        assertEq(uint256(vm.load(address(vault), escrowedSlot)), 1, "emptied bucket stays live");
        assertEq(uint256(vm.load(address(vault), creditSlot)), 101);
        vm.prank(stranger);
        vault.claimCredit();
        assertEq(vault.creditOf(stranger), 0);
        (,, uint256 credits,) = vault.liabilities();
        assertEq(credits, 0);
        assertEq(uint256(vm.load(address(vault), creditSlot)), 1, "claimed credit stays live");
        assertEq(uint256(vm.load(address(vault), totalSlot)), 1, "credit total stays live");
        // the next round trip books and pays exact amounts on the live words
        _deposit(Bucket.Escrowed, submitter, 7);
        vm.prank(protocol);
        vault.credit(Bucket.Escrowed, stranger, 7);
        assertEq(vault.creditOf(stranger), 7);
        uint256 before = token.balanceOf(stranger);
        vm.prank(stranger);
        vault.claimCredit();
        assertEq(token.balanceOf(stranger), before + 7);
        vm.expectRevert(abi.encodeWithSelector(IEscrow.NoCreditToClaim.selector, stranger));
        vm.prank(stranger);
        vault.claimCredit();
        _assertConserved();
    }
}

contract Escrow_Pay_Test is Escrow_Init {
    function test_pay_notAuthorized_reverts() public {
        _deposit(Bucket.Escrowed, submitter, 10);
        vm.expectRevert(abi.encodeWithSelector(IEscrow.NotAuthorized.selector, stranger));
        vm.prank(stranger);
        vault.pay(Bucket.Escrowed, stranger, 1);
    }

    function test_pay_zeroAccount_reverts() public {
        _deposit(Bucket.Escrowed, submitter, 10);
        vm.expectRevert(IEscrow.ZeroAddress.selector);
        vm.prank(protocol);
        vault.pay(Bucket.Escrowed, address(0), 1);
    }

    function test_pay_overdraft_reverts() public {
        _deposit(Bucket.Escrowed, submitter, 10);
        vm.expectRevert(abi.encodeWithSelector(IEscrow.InsufficientBucket.selector, Bucket.Escrowed, 10, 11));
        vm.prank(protocol);
        vault.pay(Bucket.Escrowed, stranger, 11);
    }

    /// @notice Amount 0 is a no-op: no event, no transfer, no bucket or credit moved.
    function test_pay_zeroAmount_noop_succeeds() public {
        _deposit(Bucket.Escrowed, submitter, 10);
        uint256 before = token.balanceOf(stranger);
        vm.recordLogs();
        vm.prank(protocol);
        vault.pay(Bucket.Escrowed, stranger, 0);
        assertEq(vm.getRecordedLogs().length, 0, "an event or a transfer");
        assertEq(token.balanceOf(stranger), before);
        assertEq(vault.bucketOf(Bucket.Escrowed), 10);
        assertEq(vault.creditOf(stranger), 0);
        _assertConserved();
    }

    /// @notice `pay` takes the amount from its bucket and transfers it to the wallet at once
    ///         (`Paid`): no credit is booked, and the Escrow's liabilities and balance drop by it.
    function testFuzz_pay_transfersToWallet_succeeds(uint256 deposited, uint256 amount) public {
        deposited = bound(deposited, 1, FUNDS);
        amount = bound(amount, 1, deposited);
        _deposit(Bucket.Escrowed, submitter, deposited);
        uint256 before = token.balanceOf(stranger);
        (uint256 escrowed,, uint256 credits,) = vault.liabilities();
        vm.expectEmit(address(vault));
        emit IEscrow.Paid(protocol, stranger, Bucket.Escrowed, amount);
        vm.prank(protocol);
        vault.pay(Bucket.Escrowed, stranger, amount);
        assertEq(token.balanceOf(stranger), before + amount, "wallet");
        assertEq(vault.creditOf(stranger), 0, "credit booked");
        (uint256 escrowedAfter,, uint256 creditsAfter,) = vault.liabilities();
        assertEq(escrowed - escrowedAfter, amount, "bucket");
        assertEq(creditsAfter, credits, "credits");
        assertEq(token.balanceOf(address(vault)), deposited - amount, "vault balance");
        _assertConserved();
    }

    function test_pay_transfersToWallet_succeeds() public {
        testFuzz_pay_transfersToWallet_succeeds(REWARD, REWARD / 3);
    }

    /// @notice From Unbooked, `pay` hands out only tokens that really arrived.
    function test_pay_fromUnbooked_onlyWhatArrived_succeeds() public {
        _deposit(Bucket.Bonds, submitter, 10);
        vm.prank(stranger);
        token.transfer(address(vault), 30);
        uint256 before = token.balanceOf(submitter);
        vm.startPrank(protocol);
        vm.expectEmit(address(vault));
        emit IEscrow.Paid(protocol, submitter, Bucket.Unbooked, 30);
        vault.pay(Bucket.Unbooked, submitter, 30);
        vm.expectRevert(abi.encodeWithSelector(IEscrow.InsufficientBucket.selector, Bucket.Unbooked, 0, 1));
        vault.pay(Bucket.Unbooked, submitter, 1);
        vm.stopPrank();
        assertEq(token.balanceOf(submitter), before + 30);
        assertEq(vault.bucketOf(Bucket.Bonds), 10, "a booked bucket paid out");
        _assertConserved();
    }

    /// @notice Two amounts owed to one account leave in one transfer of their sum, each bucket
    ///         paying its own share (one `Paid` per bucket).
    function test_payTwo_oneTransferOfTheSum_succeeds() public {
        _deposit(Bucket.Bonds, submitter, 10);
        vm.prank(stranger);
        vault.fundJackpot(40);
        uint256 before = token.balanceOf(stranger);
        vm.recordLogs();
        vm.expectEmit(address(vault));
        emit IEscrow.Paid(protocol, stranger, Bucket.Bonds, 10);
        vm.expectEmit(address(vault));
        emit IEscrow.Paid(protocol, stranger, Bucket.Jackpot, 25);
        vm.prank(protocol);
        vault.payTwo(Bucket.Bonds, 10, Bucket.Jackpot, 25, stranger);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        uint256 transfers;
        for (uint256 i; i < logs.length; ++i) {
            if (logs[i].emitter == address(token) && logs[i].topics[0] == IERC20.Transfer.selector) ++transfers;
        }
        assertEq(transfers, 1, "one transfer");
        assertEq(token.balanceOf(stranger), before + 35);
        assertEq(vault.bucketOf(Bucket.Bonds), 0);
        assertEq(vault.bucketOf(Bucket.Jackpot), 15);
        _assertConserved();
    }

    /// @notice The unbooked surplus is checked before the booked bucket's take, whose tokens
    ///         leave in the same transfer: the surplus plus one reverts even with a bucket named
    ///         beside it (checked after the take, the bucket's tokens would pay the overdraft).
    function test_payTwo_unbookedBesideABucket_onlyWhatArrived_succeeds() public {
        _deposit(Bucket.Escrowed, submitter, 50);
        vm.prank(stranger);
        token.transfer(address(vault), 30);
        vm.startPrank(protocol);
        vm.expectRevert(abi.encodeWithSelector(IEscrow.InsufficientBucket.selector, Bucket.Unbooked, 30, 31));
        vault.payTwo(Bucket.Escrowed, 20, Bucket.Unbooked, 31, submitter);
        vm.expectRevert(abi.encodeWithSelector(IEscrow.InsufficientBucket.selector, Bucket.Unbooked, 30, 31));
        vault.payTwo(Bucket.Unbooked, 31, Bucket.Escrowed, 20, submitter);
        vm.expectRevert(abi.encodeWithSelector(IEscrow.InsufficientBucket.selector, Bucket.Unbooked, 30, 40));
        vault.payTwo(Bucket.Unbooked, 20, Bucket.Unbooked, 20, submitter);
        uint256 before = token.balanceOf(submitter);
        vault.payTwo(Bucket.Escrowed, 20, Bucket.Unbooked, 30, submitter);
        vm.stopPrank();
        assertEq(token.balanceOf(submitter), before + 50);
        assertEq(vault.bucketOf(Bucket.Escrowed), 30);
        _assertConserved();
    }

    function test_payTwo_notAuthorized_reverts() public {
        _deposit(Bucket.Bonds, submitter, 10);
        vm.expectRevert(abi.encodeWithSelector(IEscrow.NotAuthorized.selector, stranger));
        vm.prank(stranger);
        vault.payTwo(Bucket.Bonds, 5, Bucket.Bonds, 5, stranger);
    }
}

/// @notice `pay` with a token that refuses some recipients (a blocklist, like some stablecoins'):
///         the amount is booked as the recipient's credit instead, so the caller never reverts and
///         nothing is lost; the recipient claims it once the token lets it receive again.
contract Escrow_PayFallback_Test is Escrow_Init {
    BlocklistToken internal hostile;
    Escrow internal hostileVault;
    address internal blocked;
    uint256 internal constant DEPOSIT = 100e18;

    function setUp() public override {
        super.setUp();
        hostile = new BlocklistToken();
        hostileVault = new Escrow(IERC20(address(hostile)), protocol, address(0), otherProtocol);
        blocked = address(uint160(uint256(keccak256("blocked"))));
        vm.label(blocked, "blocked");
        hostile.mint(submitter, DEPOSIT);
        vm.prank(submitter);
        hostile.approve(address(hostileVault), type(uint256).max);
        vm.prank(protocol);
        hostileVault.deposit(Bucket.Escrowed, submitter, DEPOSIT);
        hostile.setBlocked(blocked, true);
    }

    /// @notice The hostile vault's balance equals its buckets and credits, nothing unbooked.
    function _assertHostileConserved() internal {
        (uint256 escrowed, uint256 bonds, uint256 credits, uint256 pool) = hostileVault.liabilities();
        uint256 pot = hostileVault.bucketOf(Bucket.Pot);
        assertEq(hostile.balanceOf(address(hostileVault)), escrowed + bonds + credits + pool + pot, "conservation");
        assertEq(hostileVault.bucketOf(Bucket.Unbooked), 0, "unbooked");
    }

    /// @notice Whether `logs` hold a `Paid` of the hostile vault.
    function _paidIn(Vm.Log[] memory logs) internal view returns (bool) {
        for (uint256 i; i < logs.length; ++i) {
            if (logs[i].emitter == address(hostileVault) && logs[i].topics[0] == IEscrow.Paid.selector) return true;
        }
        return false;
    }

    function test_pay_refusedTransfer_fallsBackToCredit_succeeds() public {
        uint256 amount = 60e18;
        vm.recordLogs();
        vm.expectEmit(address(hostileVault));
        emit IEscrow.Credited(protocol, blocked, Bucket.Escrowed, amount);
        vm.prank(protocol);
        hostileVault.pay(Bucket.Escrowed, blocked, amount);
        assertFalse(_paidIn(vm.getRecordedLogs()), "Paid emitted for a refused transfer");
        assertEq(hostileVault.creditOf(blocked), amount, "credit");
        assertEq(hostile.balanceOf(blocked), 0, "wallet");
        (uint256 escrowed,, uint256 credits,) = hostileVault.liabilities();
        assertEq(escrowed, DEPOSIT - amount, "bucket");
        assertEq(credits, amount, "credits");
        assertEq(hostile.balanceOf(address(hostileVault)), DEPOSIT, "tokens left the vault");
        _assertHostileConserved();

        // While blocked, the claim fails at the token and the credit stays.
        vm.expectRevert(abi.encodeWithSelector(BlocklistToken.Blocklisted.selector, blocked));
        vm.prank(blocked);
        hostileVault.claimCredit();
        assertEq(hostileVault.creditOf(blocked), amount, "credit lost");

        // Unblocked, it claims exactly its credit.
        hostile.setBlocked(blocked, false);
        vm.expectEmit(address(hostileVault));
        emit IEscrow.CreditClaimed(blocked, amount);
        vm.prank(blocked);
        hostileVault.claimCredit();
        assertEq(hostile.balanceOf(blocked), amount, "claimed");
        assertEq(hostileVault.creditOf(blocked), 0);
        (escrowed,, credits,) = hostileVault.liabilities();
        assertEq(escrowed, DEPOSIT - amount);
        assertEq(credits, 0);
        _assertHostileConserved();
    }

    /// @notice A refused transfer of the two amounts books their sum as one credit, each bucket
    ///         paying its own share (one `Credited` per bucket, no `Paid`).
    function test_payTwo_refusedTransfer_fallsBackToCredit_succeeds() public {
        vm.recordLogs();
        vm.expectEmit(address(hostileVault));
        emit IEscrow.Credited(protocol, blocked, Bucket.Escrowed, 20);
        vm.expectEmit(address(hostileVault));
        emit IEscrow.Credited(protocol, blocked, Bucket.Escrowed, 30);
        vm.prank(protocol);
        hostileVault.payTwo(Bucket.Escrowed, 20, Bucket.Escrowed, 30, blocked);
        assertFalse(_paidIn(vm.getRecordedLogs()), "Paid emitted for a refused transfer");
        assertEq(hostileVault.creditOf(blocked), 50, "credit");
        assertEq(hostile.balanceOf(blocked), 0, "wallet");
        (uint256 escrowed,, uint256 credits,) = hostileVault.liabilities();
        assertEq(escrowed, DEPOSIT - 50, "bucket");
        assertEq(credits, 50, "credits");
        _assertHostileConserved();
    }

    /// @notice The same token pays a recipient it does not refuse straight to the wallet: the
    ///         credit is only the fallback.
    /// @notice `fund` (the StakeManager's restake funding) never falls back to a credit: a refused
    ///         transfer reverts the whole call, so a recipient that books what it receives never
    ///         counts tokens that did not arrive; the vault's books are unchanged.
    function test_fund_refusedTransfer_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(BlocklistToken.Blocklisted.selector, blocked));
        vm.prank(protocol);
        hostileVault.fund(Bucket.Escrowed, blocked, 60e18);
        assertEq(hostileVault.creditOf(blocked), 0, "credited");
        (uint256 escrowed,,,) = hostileVault.liabilities();
        assertEq(escrowed, DEPOSIT, "bucket");
        _assertHostileConserved();
    }

    /// @notice `fund` to an allowed recipient transfers from the bucket with one `Paid`; only an
    ///         authorized protocol may call it, for a bucket that holds the amount.
    function test_fund_transfersFromTheBucket_succeeds() public {
        vm.expectEmit(address(hostileVault));
        emit IEscrow.Paid(protocol, stranger, Bucket.Escrowed, 40e18);
        vm.prank(protocol);
        hostileVault.fund(Bucket.Escrowed, stranger, 40e18);
        assertEq(hostile.balanceOf(stranger), 40e18);
        assertEq(hostileVault.creditOf(stranger), 0);
        (uint256 escrowed,,,) = hostileVault.liabilities();
        assertEq(escrowed, DEPOSIT - 40e18, "bucket");
        _assertHostileConserved();
        vm.expectRevert(abi.encodeWithSelector(IEscrow.NotAuthorized.selector, stranger));
        vm.prank(stranger);
        hostileVault.fund(Bucket.Escrowed, stranger, 1);
        vm.expectRevert(
            abi.encodeWithSelector(IEscrow.InsufficientBucket.selector, Bucket.Escrowed, DEPOSIT - 40e18, DEPOSIT)
        );
        vm.prank(protocol);
        hostileVault.fund(Bucket.Escrowed, stranger, DEPOSIT);
        vm.expectRevert(IEscrow.ZeroAddress.selector);
        vm.prank(protocol);
        hostileVault.fund(Bucket.Escrowed, address(0), 1);
    }

    function test_pay_hostileTokenAllowedRecipient_paysWallet_succeeds() public {
        vm.expectEmit(address(hostileVault));
        emit IEscrow.Paid(protocol, stranger, Bucket.Escrowed, 40e18);
        vm.prank(protocol);
        hostileVault.pay(Bucket.Escrowed, stranger, 40e18);
        assertEq(hostile.balanceOf(stranger), 40e18);
        assertEq(hostileVault.creditOf(stranger), 0);
        _assertHostileConserved();
    }
}
