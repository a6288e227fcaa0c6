"""`StakesMixin`: a node's money on chain: its stake per role (`ensure_stake`, restored from the
balance when the operator allows it), the funds a bond or stake needs (`ensure_funds`, the
devnet faucet), the deployment's stake constants, and the Escrow credit it claims.

Run: not a script; `from noderuntime import NodeBase`.
"""

from __future__ import annotations

import time

from noderuntime.core import NodeCore
from veritrain.enums import Role
from veritrain.units import vtt

__all__ = ["StakesMixin"]


class StakesMixin(NodeCore):
    """Stakes, funds and credit of this node's account."""

    def ensure_stake(self, role: Role, amount: int | None = None) -> None:
        """Keep this account's stake for `role` at or above the role's minimum, when the
        operator allows it (`auto_stake`); call it every round (one view call while the stake
        is whole, and `observe_stake`'s while the metrics are served).

        A stake below the minimum (never staked, or slashed) is topped up to `amount` from the
        account's token balance (on a devnet the shortfall is minted with the faucet first);
        when the balance cannot cover that, as much as reaches the minimum; when it cannot
        even reach the minimum, the reason is logged at ERROR once per change of the figures.
        Nothing is staked while an unbond of the role is pending (the operator is leaving), nor
        when `auto_stake` is off: the node then says once what to run and gets no work.

        Args:
            role: the role to stake for.
            amount: the stake (wei) to restore; defaults to `default_stake(role)`.

        Raises:
            ContractRevert: the stake transaction reverted.
        """
        self.observe_stake(role)
        if self.client.stakes.is_active(self.client.address, int(role)):
            return
        minimum = self.min_stake(role)
        view = self.client.stakes.stake_of(self.client.address, int(role))
        staked = int(view.staked)
        word = role.name.lower()
        if int(view.unbonding) > 0 or not self.auto_stake:
            why = (
                f"an unbond of {vtt(int(view.unbonding))} is pending"
                if int(view.unbonding) > 0
                else "auto-staking is off (--no-auto-stake)"
            )
            alarm = (int(role), staked, -1 - int(view.unbonding))
            if alarm != self._stake_alarm:
                self._stake_alarm = alarm
                self.log.error(
                    "%s stake %s is below the minimum %s and %s: this node gets no %s work "
                    "until you run `veritrain stake %s AMOUNT`",
                    role.name,
                    vtt(staked),
                    vtt(minimum),
                    why,
                    word,
                    word,
                )
            return
        target = max(minimum, amount if amount is not None else self.default_stake(role))
        self.ensure_funds(target - staked)
        balance = int(self.client.token.balance_of(self.client.address))
        top_up = min(target - staked, balance)
        if staked + top_up < minimum:
            alarm = (int(role), staked, balance)
            if alarm != self._stake_alarm:
                self._stake_alarm = alarm
                self.log.error(
                    "%s stake %s is below the minimum %s and the free balance %s cannot "
                    "restore it: this node gets no %s work until it is funded",
                    role.name,
                    vtt(staked),
                    vtt(minimum),
                    vtt(balance),
                    word,
                )
            return
        self._stake_alarm = None
        self.log.info(
            "auto-staking %s as %s (stake %s, minimum %s; --no-auto-stake turns this off)",
            vtt(top_up),
            role.name,
            vtt(staked),
            vtt(minimum),
        )
        self.client.stakes.stake(int(role), top_up)

    def observe_stake(self, role: Role) -> None:
        """Set the stake gauges (`noderuntime.metrics`) from `stakeOf`, while the metrics are
        served and at most once per `stake_gauge_interval` seconds (one view call)."""
        now = time.monotonic()
        if not self.metrics.serving or now - self._stake_observed < self.stake_gauge_interval:
            return
        self._stake_observed = now
        view = self.client.stakes.stake_of(self.client.address, int(role))
        self.metrics.stake_of(role.name, int(view.staked), int(view.locked))

    def min_stake(self, role: Role) -> int:
        """`StakeManager.minStake(role)` (wei), read once: a deployment constant."""
        key = f"min_stake:{int(role)}"
        if key not in self._constants:
            self._constants[key] = int(self.client.stakes.min_stake(int(role)))
        return int(self._constants[key])

    def ensure_funds(self, amount: int) -> None:
        """Make sure the account holds `amount` wei of the payment token (bonds, stakes).

        On a devnet the shortfall is minted with the VeriToken faucet; where there is no
        faucet the revert is logged and the following transaction fails on its own.

        Args:
            amount: wei needed.
        """
        balance = int(self.client.token.balance_of(self.client.address))
        if balance < amount:
            self.send(f"faucet {vtt(amount - balance)}", self.client.token.faucet, amount - balance)

    def default_stake(self, role: Role) -> int:
        """A stake that lets the node take several jobs: 4x the per-job lock, at least min.

        Args:
            role: the role to stake for.

        Returns:
            Stake amount in wei.
        """
        params = self.job_params()
        per_job = {
            Role.Solver: params.solver_stake,
            Role.Verifier: params.verifier_stake,
            Role.Whistleblower: params.challenge_bond,
        }[role]
        return max(self.min_stake(role), 4 * int(per_job))

    def claim_credit(self) -> int:
        """Claim everything the Escrow owes this account (job payouts, committee rewards, won
        move bonds), if anything: ONE pull payment.

        Returns:
            The amount claimed (wei), 0 when there was none.
        """
        credit = int(self.client.escrow.credit_of(self.client.address))
        if credit == 0:
            return 0
        if self.send(f"claimCredit {vtt(credit)}", self.client.escrow.claim_credit) is None:
            return 0
        self.metrics.earned(credit)
        return credit
