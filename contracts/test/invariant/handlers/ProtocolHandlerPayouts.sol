// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Testing
import {Vm} from "@prb/test/Vm.sol";
import {ProtocolHandlerBase} from "./ProtocolHandlerBase.sol";
// Interfaces
import {IEscrow} from "../../../src/interfaces/IEscrow.sol";
import {IJobManager} from "../../../src/interfaces/IJobManager.sol";
import {IStakeManager} from "../../../src/interfaces/IStakeManager.sol";
// Types
import {Bucket} from "../../../src/types/EscrowTypes.sol";
import {Job, JobStatus} from "../../../src/types/JobTypes.sol";
import {Role} from "../../../src/types/Role.sol";

/// @title ProtocolHandlerPayouts
/// @notice P12 (payouts, contracts/test/invariant/PROPERTIES.md): the check of every `IEscrow.Paid`
///         and every `IStakeManager.StakesRestaked` in the logs of a finalize or resolve against the
///         job it settles, updating `ProtocolHandlerBase`'s P12 ghosts.
abstract contract ProtocolHandlerPayouts is ProtocolHandlerBase {
    /// @notice What `_checkPayouts` tracks along a call's logs: the bond and fee of the job, the
    ///         forced-error winner named last by `JackpotPaid` and what it is still owed (its bond,
    ///         its jackpot), the catching seats whose jackpot rides with their fee (`held`,
    ///         `heldJackpots`, `heldPaid`; their jackpots moved into Bucket.Escrowed once, `moved`),
    ///         the restakes of the solver's reward, and the job end's one transfer to the
    ///         StakeManager (`funded`, `fundings`) against what its restakes add (`restaked`).
    struct Payouts {
        uint256 bond;
        uint256 fee;
        address winner;
        bool bondDue;
        uint256 jackpotDue;
        uint256 bondPaidNext;
        uint256 solverPayments;
        uint256 rewardPayments;
        address[] held;
        uint256[] heldJackpots;
        bool[] heldPaid;
        uint256 heldCount;
        uint256 heldTotal;
        bool moved;
        uint256 funded;
        uint256 fundings;
        uint256 restaked;
    }

    ////// Helpers //////

    /// @notice P12 on the logs of a finalize or resolve of `jobId`, where `winners` are the job's
    ///         forced-error winners the call must pay (`_forcedWinners`; empty unless it settles the
    ///         job's forced error). Every `Paid` is the JobManager's and carried by the token
    ///         transfer to its account just before it (of exactly its amount; the payments of one
    ///         `payTwo` share one transfer of their sum, the second `Paid` right after the first),
    ///         and is one of:
    ///         - from the Escrowed bucket: the job end's one transfer to the StakeManager, of
    ///           exactly what the call's `StakesRestaked` add to stakes (no wallet is paid from the
    ///           Escrowed bucket: earnings are restaked);
    ///         - from the Bonds bucket then the Jackpot bucket: a forced-error winner's bond
    ///           (`challengeBond`) and jackpot, right after the JobManager's `JackpotPaid(jobId,
    ///           winner, amount)` and before the next one, to that winner, of exactly the bond and
    ///           `amount` (no jackpot payment when `amount` is 0: the pool was empty);
    ///         - a held catching seat's jackpot from the Jackpot bucket when a sample stays
    ///           disputed (`_checkHeldAtSettlement`).
    ///         Every `StakesRestaked` is the StakeManager's and is one of: the solver's (its
    ///         reward, once, when the call finalized the job, and nothing otherwise), or the seats'
    ///         (each a seat of the job earning its fee, or nothing if it abstained; a catching seat
    ///         held since its `JackpotPaid`, when the settlement finalizes the job at once, its fee
    ///         plus its jackpot, after the jackpots of every held seat moved once from the Jackpot
    ///         bucket into the Escrowed bucket, `Moved`, their exact sum); a catch's reject bond is
    ///         stake, unlocked, never a `Paid`.
    ///         Every `JackpotPaid` is of `jobId` and names one of `winners` (each entry once), and
    ///         every entry of `winners` is named and paid, so each winner is paid and nobody else is
    ///         paid from the bonds or the pool.
    function _checkPayouts(uint256 jobId, Vm.Log[] memory logs, address[] memory winners) internal {
        Job memory job = jobManager.getJob(jobId);
        (address[] memory seats,) = jobManager.getAssignment(jobId);
        Payouts memory p;
        p.bond = jobManager.params().challengeBond;
        p.fee = jobManager.params().verifierFee;
        p.held = new address[](winners.length);
        p.heldJackpots = new uint256[](winners.length);
        p.heldPaid = new bool[](winners.length);
        bool[] memory named = new bool[](winners.length);
        for (uint256 i; i < logs.length; ++i) {
            Vm.Log memory log = logs[i];
            if (log.topics.length == 0) continue;
            if (log.emitter == address(jobManager) && log.topics[0] == IJobManager.JackpotPaid.selector) {
                // The previous winner is paid in full before the next one is named, or held.
                _holdOrMisroute(p, seats);
                p.winner = address(uint160(uint256(log.topics[2])));
                if (uint256(log.topics[1]) != jobId || !_name(winners, named, p.winner)) ++ghost_payoutMisrouted;
                p.bondDue = p.bond != 0;
                p.jackpotDue = abi.decode(log.data, (uint256));
                continue;
            }
            if (log.emitter == address(escrow) && log.topics[0] == IEscrow.Moved.selector) {
                _checkHeldMove(p, seats, log);
                continue;
            }
            if (log.emitter == address(stakeManager) && log.topics[0] == IStakeManager.StakesRestaked.selector) {
                _checkRestaked(p, job, seats, log);
                continue;
            }
            if (log.emitter != address(escrow) || log.topics[0] != IEscrow.Paid.selector) continue;
            _checkPaid(p, seats, logs, i);
        }
        // One transfer to the StakeManager carries exactly the earnings restaked.
        if (p.fundings > 1 || p.funded != p.restaked) ++ghost_payoutMisrouted;
        // The winner named last, still owed, is a held seat paid nothing (a zero jackpot, the job
        // still disputed); anyone else was misrouted.
        _holdOrMisroute(p, seats);
        for (uint256 k; k < p.heldCount; ++k) {
            if (p.heldPaid[k]) continue;
            // Owed nothing but its bond, unlocked from its stake: settled without a payment.
            if (p.moved || p.heldJackpots[k] != 0) ++ghost_payoutMisrouted;
            else ++ghost_winnersPaid;
        }
        for (uint256 k; k < winners.length; ++k) {
            if (!named[k]) ++ghost_winnerNotPaid;
        }
        uint256 owed = job.status == JobStatus.Finalized && job.reward != 0 ? 1 : 0;
        if (p.solverPayments != owed || p.rewardPayments != owed) ++ghost_rewardNotPaid;
        if (p.rewardPayments != 0) ++ghost_rewardsPaid;
    }

    /// @notice The winner named last is still owed: a seat of the job is held (paid with its fee
    ///         later in the call); anyone else was misrouted.
    function _holdOrMisroute(Payouts memory p, address[] memory seats) internal {
        if (!p.bondDue && p.jackpotDue == 0) return;
        if (!p.moved && (p.bondDue || p.bond == 0) && _contains(seats, p.winner)) {
            p.held[p.heldCount] = p.winner;
            p.heldJackpots[p.heldCount] = p.jackpotDue;
            p.heldTotal += p.jackpotDue;
            ++p.heldCount;
        } else {
            ++ghost_payoutMisrouted;
        }
        p.bondDue = false;
        p.jackpotDue = 0;
    }

    /// @notice A `Moved` during the call: only the held jackpots' one move into Bucket.Escrowed.
    function _checkHeldMove(Payouts memory p, address[] memory seats, Vm.Log memory log) internal {
        _holdOrMisroute(p, seats);
        Bucket from = Bucket(uint8(uint256(log.topics[2])));
        Bucket to = Bucket(uint8(uint256(log.topics[3])));
        if (from != Bucket.Jackpot || to != Bucket.Escrowed) return; // another booking, no payout
        uint256 amount = abi.decode(log.data, (uint256));
        if (p.moved || amount != p.heldTotal || p.heldCount == 0) ++ghost_payoutMisrouted;
        p.moved = true;
    }

    /// @notice One `Paid` (`logs[i]`) of `_checkPayouts`.
    function _checkPaid(Payouts memory p, address[] memory seats, Vm.Log[] memory logs, uint256 i) internal {
        Vm.Log memory log = logs[i];
        address account = address(uint160(uint256(log.topics[2])));
        (Bucket from, uint256 amount) = abi.decode(log.data, (Bucket, uint256));
        bool byJobManager = address(uint160(uint256(log.topics[1]))) == address(jobManager);
        if (!byJobManager) {
            ++ghost_payoutMisrouted;
            return;
        }
        if (from == Bucket.Bonds && !(p.bondDue && account == p.winner)) {
            // Only a whistleblower winner's challenge bond is paid from the Bonds bucket: a seat's
            // reject bonds are stake.
            ++ghost_payoutMisrouted;
            return;
        }
        if (from == Bucket.Jackpot && !(!p.bondDue && p.jackpotDue != 0 && account == p.winner)) {
            _checkHeldAtSettlement(p, seats, logs, i, account, amount);
            return;
        }
        if (from == Bucket.Escrowed) {
            // The job end's earnings, restaked: one transfer to the StakeManager, none to a wallet.
            _holdOrMisroute(p, seats);
            if (account != address(stakeManager) || !_isTransfer(logs[i - 1], address(escrow), account, amount)) {
                ++ghost_payoutMisrouted;
                return;
            }
            p.funded += amount;
            ++p.fundings;
            return;
        }
        bool carried;
        if (from == Bucket.Jackpot && p.bond != 0) {
            // The bond's `Paid` just before: one transfer carried the bond and the jackpot.
            carried = p.bondPaidNext == i;
        } else {
            // A winner's bond leaves with its jackpot (`Escrow.payTwo`): one transfer of both.
            uint256 transferred = from == Bucket.Bonds ? amount + p.jackpotDue : amount;
            carried = i != 0 && _isTransfer(logs[i - 1], address(escrow), account, transferred);
        }
        if (!carried) {
            ++ghost_payoutMisrouted;
        } else if (from == Bucket.Bonds && p.bondDue && account == p.winner && amount == p.bond) {
            p.bondDue = false;
            p.bondPaidNext = i + 1;
            ++ghost_winnersPaid;
        } else if (
            from == Bucket.Jackpot && !p.bondDue && p.jackpotDue != 0 && account == p.winner && amount == p.jackpotDue
        ) {
            p.jackpotDue = 0;
        } else {
            ++ghost_payoutMisrouted;
        }
    }

    /// @notice One `StakesRestaked` (`log`) of `_checkPayouts`: the solver's reward, or the seats'
    ///         fees (a held catch's with its jackpot), each to a party of the job.
    function _checkRestaked(Payouts memory p, Job memory job, address[] memory seats, Vm.Log memory log) internal {
        _holdOrMisroute(p, seats);
        Role role = Role(uint8(uint256(log.topics[1])));
        (address[] memory accounts,, uint256[] memory earned) = abi.decode(log.data, (address[], uint256[], uint256[]));
        for (uint256 j; j < accounts.length; ++j) {
            uint256 amount = earned.length == 1 ? earned[0] : earned[j];
            p.restaked += amount;
            if (role == Role.Solver) {
                if (accounts[j] != job.solver) ++ghost_payoutMisrouted;
                if (amount == 0) continue;
                ++p.solverPayments;
                if (amount == job.reward) ++p.rewardPayments;
                continue;
            }
            if (role != Role.Verifier || !_contains(seats, accounts[j])) {
                ++ghost_payoutMisrouted;
                continue;
            }
            uint256 k = p.moved ? _heldIndex(p, accounts[j]) : type(uint256).max;
            if (k != type(uint256).max) {
                // A held seat: its fee (none if it abstained) and its jackpot, restaked together.
                if (amount != p.fee + p.heldJackpots[k] && amount != p.heldJackpots[k]) ++ghost_payoutMisrouted;
                p.heldPaid[k] = true;
                ++ghost_winnersPaid;
            } else if (amount != p.fee && amount != 0) {
                ++ghost_payoutMisrouted;
            }
        }
    }

    /// @notice A held seat paid at the settlement (a sample stays disputed, so the job does not
    ///         finalize in the call): its jackpot (`logs[i]`) from the Jackpot bucket, in one transfer
    ///         of exactly it, after every `JackpotPaid` of the settlement.
    function _checkHeldAtSettlement(
        Payouts memory p,
        address[] memory seats,
        Vm.Log[] memory logs,
        uint256 i,
        address account,
        uint256 amount
    ) internal {
        _holdOrMisroute(p, seats);
        uint256 k = p.moved ? type(uint256).max : _heldIndex(p, account);
        if (
            k == type(uint256).max || i == 0 || amount != p.heldJackpots[k]
                || !_isTransfer(logs[i - 1], address(escrow), account, amount)
        ) {
            ++ghost_payoutMisrouted;
            return;
        }
        p.heldPaid[k] = true;
        ++ghost_winnersPaid;
    }

    /// @notice Index of `account`'s unpaid held payment, or type(uint256).max.
    function _heldIndex(Payouts memory p, address account) internal pure returns (uint256) {
        for (uint256 k; k < p.heldCount; ++k) {
            if (p.held[k] == account && !p.heldPaid[k]) return k;
        }
        return type(uint256).max;
    }

    /// @notice Marks the first entry of `winners` equal to `account` not yet `named`; false when
    ///         there is none (`account` is no winner left to pay).
    function _name(address[] memory winners, bool[] memory named, address account) internal pure returns (bool) {
        for (uint256 k; k < winners.length; ++k) {
            if (winners[k] != account || named[k]) continue;
            named[k] = true;
            return true;
        }
        return false;
    }
}
