"""A run's owner moving its rounds along: each round's contribution jobs posted once the round
before is final, an unchallenged claim finalized once its window is over (docs/RUNS.md).

`drive_step` reads where the run is from the chain alone and does the one thing due: it keeps
no state of its own, so a driver killed at any moment and started again never posts a seat
twice (a registered seat is never posted again) and never skips a round (only the current
round is ever posted, and only once the one before is final). `veritrain run drive` calls it
every poll; the run demo posts its rounds through it.

Run: not a script; ``from noderuntime.rundriver import drive_step``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from chain.errors import ContractRevert
from noderuntime.runs import UNAVAILABLE, find_run, post_round
from veritrain.diloco import RunSpec
from veritrain.enums import RunRoundPhase
from veritrain.errors import VeritrainError
from veritrain.units import vtt

__all__ = ["RACES", "DriveStep", "EscrowShort", "drive_step"]

Action = Literal["posted", "finalized", "waiting", "complete"]
Reason = Literal[
    "",
    "challenge_window",
    "disputed",
    "settling",
    "registration_closed",
    "states_unavailable",
    "raced",
]

RACES = frozenset({"SeatTaken", "RegistrationClosed", "UnexpectedRoundPhase", "RunEnded"})
"""`RunRegistry` reverts of a post or finalize that another account's transaction (or this
driver's own, sent before a restart) got in first: the chain is read again next poll."""


class EscrowShort(VeritrainError):
    """The poster's token balance is below the escrow of the seats it is about to post."""


@dataclass(frozen=True)
class DriveStep:
    """What one `drive_step` did, or why it did nothing.

    Attributes:
        action: ``"posted"`` (the current round's missing seats were posted), ``"finalized"``
            (this account finalized the round's claim), ``"waiting"`` (nothing to do yet:
            `reason` says why), ``"complete"`` (the run's last round is final).
        run_id: the run's `RunRegistry` id.
        round: the round acted on or waited on (R once complete).
        reason: why it waits: ``challenge_window`` (a claim stands until `until`),
            ``disputed`` (a challenged claim awaits the committee), ``settling`` (every seat
            posted: the jobs run, then someone proposes the claim), ``registration_closed``
            (seats are missing but the round's registration closed at `until`),
            ``states_unavailable`` (a counted final state no holder serves: `detail`),
            ``raced`` (another transaction got in first: `detail`); empty otherwise.
        seats: the seats posted (``posted``).
        jobs: their job ids, in seat order (``posted``).
        escrow_wei: what the posts took from the poster (wei).
        until: the Unix time (s, chain time) the wait is bounded by, when there is one.
        detail: a short explanation (the registered seats, the error of a race).
    """

    action: Action
    run_id: int
    round: int
    reason: Reason = ""
    seats: list[int] = field(default_factory=list)
    jobs: list[int] = field(default_factory=list)
    escrow_wei: int = 0
    until: int | None = None
    detail: str = ""


def drive_step(
    client: Any,
    run: RunSpec,
    *,
    reward: int,
    seats: Sequence[int] | None = None,
    store: Any = None,
    http: Any = None,
    mirrors: Sequence[str] = (),
) -> DriveStep:
    """Do the one thing a run's owner has to do now, read from the chain alone.

    - the run has ended: ``complete``;
    - the current round's claim stands past its challenge deadline: finalize it
      (`RunRegistry.finalizeRound`, as `veritrain run finalize` does);
    - the current round is open and some of `seats` are not registered while its registration
      is open: post and register them (`noderuntime.runs.post_round`, each start rebuilt from
      the chain's final claims), after checking the poster's balance covers their escrow;
    - otherwise wait (`DriveStep.reason`).

    Args:
        client: the poster's `ChainClient` (the model's owner or an authorised poster).
        run: the run (opened on chain; its contributions' spec is the URI it was opened with).
        reward: each contribution's solver reward (wei).
        seats: the seats to post each round (default: every seat whose start can be built).
        store, http, mirrors: as in `noderuntime.runs.run_state`.

    Returns:
        The `DriveStep`.

    Raises:
        RoundNotReady, RunMismatch: the run is not opened, or opened with other fields.
        EscrowShort: the balance is below the escrow of the seats due (nothing was sent).
        ContractRevert: a post or finalize reverted for a reason other than a race (`RACES`).
        ChainError: the chain cannot be read or a transaction fails.
    """
    view = find_run(client, run)
    if view.ended:
        return DriveStep("complete", view.run_id, view.round)
    t = view.round
    claim = client.runs.get_round(view.run_id, t)
    if claim.phase is RunRoundPhase.Proposed:
        if int(client.timestamp()) <= claim.challenge_deadline:
            return DriveStep(
                "waiting", view.run_id, t, "challenge_window", until=claim.challenge_deadline
            )
        try:
            client.runs.finalize_round(view.run_id)
        except ContractRevert as exc:
            return _raced(exc, view.run_id, t)
        return DriveStep("finalized", view.run_id, t)
    if claim.phase is RunRoundPhase.Disputed:
        return DriveStep(
            "waiting", view.run_id, t, "disputed", detail=f"dispute {claim.dispute_id}"
        )
    registered = client.runs.contributions(view.run_id, t)
    wanted = range(run.seats) if seats is None else sorted(set(seats))
    missing = [s for s in wanted if s not in registered]
    have = f"{len(registered)} of {run.seats} seats registered"
    if not missing:
        return DriveStep("waiting", view.run_id, t, "settling", detail=have)
    deadline = int(client.runs.registration_deadline(view.run_id, t))
    if int(client.timestamp()) > deadline:
        return DriveStep(
            "waiting", view.run_id, t, "registration_closed", until=deadline, detail=have
        )
    cost = int(client.jobs.post_cost(reward))
    balance = int(client.token.balance_of())
    if balance < len(missing) * cost:
        raise EscrowShort(
            f"token balance {vtt(balance)} of {client.address} is below the "
            f"{vtt(len(missing) * cost)} escrow of round {t}'s {len(missing)} contribution "
            f"job(s) ({vtt(cost)} each)"
        )
    try:
        jobs = post_round(
            client,
            run,
            t,
            reward=reward,
            seats=None if seats is None else missing,
            store=store,
            http=http,
            mirrors=mirrors,
        )
    except UNAVAILABLE as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return DriveStep("waiting", view.run_id, t, "states_unavailable", detail=detail)
    except ContractRevert as exc:
        return _raced(exc, view.run_id, t)
    if not jobs:  # every missing seat is withheld: its start cannot be built yet
        return DriveStep("waiting", view.run_id, t, "settling", detail=have)
    seat_of = {job: seat for seat, job in client.runs.contributions(view.run_id, t).items()}
    return DriveStep(
        "posted",
        view.run_id,
        t,
        seats=[seat_of[j] for j in jobs],
        jobs=jobs,
        escrow_wei=len(jobs) * cost,
    )


def _raced(exc: ContractRevert, run_id: int, t: int) -> DriveStep:
    """A revert another transaction caused: wait and read the chain again (else re-raise)."""
    if exc.name not in RACES:
        raise exc
    return DriveStep("waiting", run_id, t, "raced", detail=str(exc).splitlines()[0])
