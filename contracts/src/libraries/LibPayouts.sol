// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Libraries
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
// Interfaces
import {IJobManager} from "../interfaces/IJobManager.sol";
// Types
import {Bucket} from "../types/EscrowTypes.sol";
import {JobRecord} from "../types/JobTypes.sol";
import {Role} from "../types/Role.sol";
import {Settlement, Submission, seatedVerifiers} from "../types/SubmissionTypes.sol";

/// @title LibPayouts
/// @notice How settlement moves tokens: slashes booked into an Escrow bucket, stake unlocks, fees,
///         bonds, credits, and the split of a dispute pot (docs/SECURITY.md P-19). Every token
///         moves as a bucket move, a credit or a direct payment at the Escrow: a verifier's fee
///         (and, in LibSettlement, the solver's reward) is paid straight to the wallet
///         (`IEscrow.pay`, a credit only when the token refuses the transfer); refunds, challenge
///         bonds, jackpots and pot shares stay credits. Stakes are slashed to the Escrow and booked
///         at once. A seat's reject bonds are stake: the first locked with its seat at the draw
///         (`seatLock`), the others at its reveal, each returned by an unlock and forfeited by a
///         slash (`returnSeatBond`, `forfeitSeatBonds`); a seat without a non-approval gets its
///         first back where its seat ends (`idleBond`).
/// @dev Internal functions only: they are compiled into their callers (LibSettlement and LibPosting,
///      external libraries running in the JobManager's context), so events are the JobManager's and
///      the StakeManager and Escrow see the JobManager as the caller.
library LibPayouts {
    /// @notice Pays `arbiterFee` to each majority arbiter while the pot lasts, splits the rest
    ///         equally among the winners, and credits rounding dust to the treasury. A winner's
    ///         share never goes to a party of the job (its solver or submitter): it joins the jackpot
    ///         pool instead (`PotShareToPool`), so no slash is ever credited to the job's own parties
    ///         (docs/SECURITY.md P-19).
    function distributePot(
        JobRecord storage job,
        Settlement memory s,
        uint256 jobId,
        uint256 pot,
        address[] calldata majority,
        address[] memory winners
    ) internal {
        for (uint256 i; i < majority.length && pot != 0; ++i) {
            uint256 fee = pot < s.arbiterFee ? pot : s.arbiterFee;
            // SAFETY: fee <= pot.
            unchecked {
                pot -= fee;
            }
            credit(s, Bucket.Pot, majority[i], fee);
        }
        if (pot == 0) return;
        uint256 count = winners.length;
        if (count == 0) {
            credit(s, Bucket.Pot, s.admin, pot);
            return;
        }
        // The dust pot - share * count is the remainder of this division, not a precision loss.
        // slither-disable-next-line divide-before-multiply
        uint256 share = pot / count;
        (address solver, address submitter) = (job.solver, job.submitter);
        for (uint256 i; i < count; ++i) {
            address winner = winners[i];
            if (winner != solver && winner != submitter) {
                credit(s, Bucket.Pot, winner, share);
            } else if (share != 0) {
                emit IJobManager.PotShareToPool(jobId, winner, share);
                s.escrow.move(Bucket.Pot, Bucket.Jackpot, share);
            }
        }
        // SAFETY: share * count <= pot by integer division.
        unchecked {
            credit(s, Bucket.Pot, s.admin, pot - share * count);
        }
    }

    /// @notice Slashes an assigned verifier one verifierStake into bucket `to` (the jackpot pool or
    ///         the dispute pot), unlocks its seat's idle bond (`releaseIdleBond`) and refunds its fee
    ///         to the submitter.
    /// @return slashed Amount slashed (wei).
    function slashVerifier(
        JobRecord storage job,
        Submission storage sub,
        Settlement memory s,
        uint256 jobId,
        address verifier,
        Bucket to
    ) internal returns (uint256 slashed) {
        refundFee(sub, s, job.submitter, s.verifierFee);
        // SAFETY: trusted StakeManager; the slashed tokens arrive at the Escrow and join `to`.
        slashed = slashInto(s, verifier, Role.Verifier, to);
        emit IJobManager.VerifierSlashed(jobId, verifier, slashed);
        releaseIdleBond(s, sub.seats[verifier].rejectMask, verifier);
    }

    /// @notice Verifier stake locked per seat at its draw (wei): verifierStake and the seat's first
    ///         reject bond, so a reveal with at most one non-approval of the seat's own samples locks
    ///         nothing more (docs/SECURITY.md, "Gas cuts": the first reject bond with the seat).
    function seatLock(Settlement memory s) internal pure returns (uint256 amount) {
        amount = s.verifierStake + s.challengeBond;
    }

    /// @notice The bond a seat's lock holds for a first non-approval it does not have (wei):
    ///         challengeBond while the seat has no non-approval of its own samples (it never
    ///         revealed, approved them all, or its one reject became an approval of a forced error's
    ///         true end), else 0: then that bond is its first non-approval's, settled with it
    ///         (returned or forfeited) like every other.
    /// @param rejectMask The seat's reject mask (`Seat.rejectMask`).
    function idleBond(Settlement memory s, uint64 rejectMask) internal pure returns (uint256 amount) {
        if (rejectMask == 0) amount = s.challengeBond;
    }

    /// @notice Unlocks the idle bond (`idleBond`) of `verifier`'s seat, whose reject mask is
    ///         `rejectMask`, if any, where the seat ends without a release of its stake (a slash):
    ///         the slash takes verifierStake, the bond goes back.
    function releaseIdleBond(Settlement memory s, uint64 rejectMask, address verifier) internal {
        uint256 idle = idleBond(s, rejectMask);
        if (idle != 0) s.stakeManager.unlock(verifier, Role.Verifier, idle);
    }

    /// @notice A job's end for its standing seats (assignment order): unlocks each seat's entry of
    ///         `unlocks` (its verifierStake, plus the reject bonds it gets back) and restakes its
    ///         entry of `earnings` (its fee, a catch's jackpot with it), in one StakeManager call
    ///         (`IStakeManager.unlockAndRestake`), after `fundStakes` sent the earnings' total. A seat
    ///         with both entries zero is not released; none released, no call. When every seat is
    ///         released, the seat list is passed as it is; otherwise only the released seats and
    ///         their amounts. An amount every seat shares is passed once (the batch event's
    ///         convention).
    function releaseSeats(
        Submission storage sub,
        Settlement memory s,
        uint256[] memory unlocks,
        uint256[] memory earnings
    ) internal {
        uint256 count = 0;
        for (uint256 i; i < unlocks.length; ++i) {
            if (unlocks[i] != 0 || earnings[i] != 0) ++count;
        }
        if (count == 0) return;
        address[] memory released = seatedVerifiers(sub, s);
        if (count != unlocks.length) {
            address[] memory verifiers = released;
            uint256[] memory allUnlocks = unlocks;
            uint256[] memory allEarnings = earnings;
            released = new address[](count);
            unlocks = new uint256[](count);
            earnings = new uint256[](count);
            count = 0;
            for (uint256 i; i < allUnlocks.length; ++i) {
                if (allUnlocks[i] == 0 && allEarnings[i] == 0) continue;
                (released[count], unlocks[count], earnings[count]) = (verifiers[i], allUnlocks[i], allEarnings[i]);
                ++count;
            }
        }
        s.stakeManager.unlockAndRestake(released, Role.Verifier, _once(unlocks), _once(earnings));
    }

    /// @notice Sends `amount` (wei) of the job's escrowed tokens to the StakeManager, the earnings
    ///         that `releaseSeats` and `releaseSolver` then restake (one token transfer for every
    ///         party of the job's end); nothing for 0.
    /// @dev SAFETY: trusted Escrow; `fund` reverts when the token refuses the transfer (never a
    ///      credit), so the StakeManager never restakes tokens it did not receive.
    function fundStakes(Settlement memory s, uint256 amount) internal {
        if (amount != 0) s.escrow.fund(Bucket.Escrowed, address(s.stakeManager), amount);
    }

    /// @notice A job's end for its solver: unlocks its solverStake and restakes `reward` (wei,
    ///         funded by `fundStakes`) in one StakeManager call.
    function releaseSolver(Settlement memory s, address solver, uint256 reward) internal {
        address[] memory accounts = new address[](1);
        accounts[0] = solver;
        s.stakeManager.unlockAndRestake(accounts, Role.Solver, _one(s.solverStake), _one(reward));
    }

    /// @notice Locks `amounts[i]` (wei, non-zero) of each `accounts[i]`'s verifier stake in one call
    ///         to the trusted StakeManager: `lockEach` when every amount is the same, whose batch
    ///         event logs that amount once, else `lockAmounts`. Reverts with the StakeManager's
    ///         InsufficientFreeStake when an account is short (none is locked then).
    function lockSeats(Settlement memory s, address[] memory accounts, uint256[] memory amounts) internal {
        (bool shared, uint256 each) = _sharedAmount(amounts);
        if (shared && each != 0) s.stakeManager.lockEach(accounts, Role.Verifier, each);
        else s.stakeManager.lockAmounts(accounts, Role.Verifier, amounts);
    }

    /// @notice Slashes one seat of `role` (solverStake or verifierStake) to the Escrow.
    /// @dev SAFETY: the StakeManager is trusted and sends the slashed tokens to the Escrow; every
    ///      caller books exactly the amount returned (from `Bucket.Unbooked`).
    /// @return slashed Amount slashed (wei).
    function slash(Settlement memory s, address account, Role role) internal returns (uint256 slashed) {
        slashed = s.stakeManager.slash(account, role, seatStake(s, role), address(s.escrow));
    }

    /// @notice Slashes one seat of `role` and books it into bucket `to` of the Escrow.
    /// @return slashed Amount slashed (wei).
    function slashInto(Settlement memory s, address account, Role role, Bucket to) internal returns (uint256 slashed) {
        slashed = slash(s, account, role);
        if (slashed != 0) s.escrow.move(Bucket.Unbooked, to, slashed);
    }

    /// @notice Unlocks one seat of `role` (solverStake or verifierStake).
    function unlock(Settlement memory s, address account, Role role) internal {
        s.stakeManager.unlock(account, role, seatStake(s, role));
    }

    /// @notice Stake locked per seat of `role`.
    function seatStake(Settlement memory s, Role role) internal pure returns (uint256 amount) {
        amount = role == Role.Solver ? s.solverStake : s.verifierStake;
    }

    /// @notice Books a pull payment at the Escrow, taken from bucket `from`.
    function credit(Settlement memory s, Bucket from, address account, uint256 amount) internal {
        if (amount != 0) s.escrow.credit(from, account, amount);
    }

    /// @notice Pays `amount` (wei) from bucket `from` straight to `account`'s wallet at the Escrow
    ///         (`IEscrow.pay`: `Paid`, or a credit with `Credited` when the token refuses the
    ///         transfer); nothing for 0.
    function pay(Settlement memory s, Bucket from, address account, uint256 amount) internal {
        if (amount != 0) s.escrow.pay(from, account, amount);
    }

    /// @notice Moves `amount` of the job's escrowed fees to the submitter's credit.
    function refundFee(Submission storage sub, Settlement memory s, address submitter, uint256 amount) internal {
        sub.feesHeld = SafeCast.toUint120(sub.feesHeld - amount);
        credit(s, Bucket.Escrowed, submitter, amount);
    }

    /// @notice Returns one whistleblower's challenge bond to `account` as credit (challenge bonds
    ///         are tokens in Bucket.Bonds; a seat's reject bonds are stake, `returnSeatBond`).
    function returnBond(Settlement memory s, address account) internal {
        credit(s, Bucket.Bonds, account, s.challengeBond);
    }

    /// @notice Releases one whistleblower's challenge bond into the dispute pot.
    /// @return amount Bond (wei).
    function forfeitBond(Settlement memory s, uint256 jobId, address account) internal returns (uint256 amount) {
        amount = s.challengeBond;
        emit IJobManager.BondForfeited(jobId, account, amount);
        s.escrow.move(Bucket.Bonds, Bucket.Pot, amount);
    }

    /// @notice Returns one of a seat's reject bonds: unlocks one challengeBond of `verifier`'s
    ///         verifier stake, where `recordVerdicts` locked it.
    function returnSeatBond(Settlement memory s, address verifier) internal {
        s.stakeManager.unlock(verifier, Role.Verifier, s.challengeBond);
    }

    /// @notice Forfeits `amount` (wei) of a seat's locked reject bonds: slashed from `verifier`'s
    ///         verifier stake to the Escrow and booked into bucket `to` (`BondForfeited` for the pot
    ///         is the caller's).
    /// @dev SAFETY: the StakeManager is trusted; the bonds were locked (the first with the seat, the
    ///      others at the reveal) and locked stake
    ///      is always staked, so the slash takes the whole amount; the amount returned is booked.
    /// @return slashed Amount slashed (wei).
    function forfeitSeatBonds(Settlement memory s, address verifier, uint256 amount, Bucket to)
        internal
        returns (uint256 slashed)
    {
        slashed = s.stakeManager.slash(verifier, Role.Verifier, amount, address(s.escrow));
        if (slashed != 0) s.escrow.move(Bucket.Unbooked, to, slashed);
    }

    /// @notice Releases one of a seat's reject bonds into the dispute pot (slashed from its stake).
    /// @return amount Bond slashed (wei).
    function forfeitSeatBond(Settlement memory s, uint256 jobId, address verifier) internal returns (uint256 amount) {
        emit IJobManager.BondForfeited(jobId, verifier, s.challengeBond);
        amount = forfeitSeatBonds(s, verifier, s.challengeBond, Bucket.Pot);
    }

    /// @notice `amounts` as a batch call takes them: a single entry when every entry is the same,
    ///         else the whole list.
    function _once(uint256[] memory amounts) private pure returns (uint256[] memory) {
        (bool shared, uint256 each) = _sharedAmount(amounts);
        return shared ? _one(each) : amounts;
    }

    /// @notice A one-entry list of `amount`.
    function _one(uint256 amount) private pure returns (uint256[] memory list) {
        list = new uint256[](1);
        list[0] = amount;
    }

    /// @notice Whether every entry of `amounts` (non-empty) is one amount, and that amount (0 when
    ///         two differ).
    function _sharedAmount(uint256[] memory amounts) private pure returns (bool shared, uint256 each) {
        each = amounts[0];
        for (uint256 i = 1; i < amounts.length; ++i) {
            if (amounts[i] != each) return (false, 0);
        }
        shared = true;
    }
}
