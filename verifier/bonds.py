"""A seat's reject bonds: staked before the reveal that locks them (docs/SECURITY.md, "Gas cuts",
"Reject bonds locked from stake").

At a seat's reveal the JobManager locks ``challengeBond`` wei per non-approval of the seat's own
samples from its free verifier stake, and the whole reveal reverts (``InsufficientFreeStake``)
when that stake is short; an aggregator's ``revealVerdictsFor`` skips such a seat and its
``revealVerdictsSigned`` reverts for it (P-38). So before a rejecting seat reveals, itself or
through the solver, its free verifier stake must cover its bonds: `stake_reveal_bonds` reads it
once and stakes the shortfall from the wallet (minted by the devnet faucet where the wallet is
short, `ensure_funds`).

Run: not a script; the verifier node calls it from its reveal and its seal-set hand-over.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from veritrain.enums import Role
from veritrain.forced import reveal_bond
from veritrain.units import vtt

if TYPE_CHECKING:
    from verifier.node import VerifierNode

__all__ = ["stake_reveal_bonds"]


def stake_reveal_bonds(node: VerifierNode, job_id: int, rejects: int) -> str | None:
    """Top this seat's free verifier stake up to the bonds of a reveal that rejects ``rejects``
    of its own samples (`veritrain.forced.reveal_bond`: a challengeBond each but the first, which
    the seat's lock holds); nothing is sent when it covers them.

    Args:
        node: the verifier node (its client, its wallet top-up and its transaction log).
        job_id: the job revealed (for the log).
        rejects: non-approvals of the seat's own samples (`veritrain.forced.bonded_rejects`).

    Returns:
        None once the free verifier stake covers the bonds; else one line saying why not (the
        stake transaction reverted, e.g. a wallet short of the shortfall with no faucet). The
        caller keeps the reveal back and retries on its next round.

    Raises:
        Exception: RPC errors, for the node loop to retry.
    """
    if reveal_bond(rejects, 1) == 0:  # nothing to lock: no chain read
        return None
    client = node.client
    short = client.round.reveal_bond_shortfall(
        rejects, challenge_bond=int(node.job_params().challenge_bond)
    )
    if short == 0:
        return None
    node.ensure_funds(short)
    what = f"stake {vtt(short)} for {rejects} reject bond(s) of job {job_id}"
    if node.send(what, client.stakes.stake, Role.Verifier, short) is None:
        return f"its reject bonds could not be staked ({what} reverted)"
    return None
