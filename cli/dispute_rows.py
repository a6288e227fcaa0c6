"""Dispute rows for `veritrain dispute list` and the dashboard: one dict per dispute, read from
the views (the bisection game's, the committee's, the run registry's) over RPC.

Run: not a script; ``dispute_row(client, 1)``, ``dispute_rows(client)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cli.errors import CliError
from cli.history import EventReader, events

if TYPE_CHECKING:
    pass

__all__ = ["dispute_row", "dispute_rows", "is_bisection", "job_challengers"]


def is_bisection(client: Any) -> bool:
    """True when the deployment's adjudicator is the bisection game (dispute N is game N)."""
    return str(client.adjudicator.name) == "bisection"


def _game_count(client: Any) -> int:
    return int(client.call(client.game.contract, "gameCount"))


def _step_parents(client: Any) -> set[int]:
    """Committee dispute ids that are a game's one-step dispute."""
    found = events(client, client.committee.contract, ["StepDisputeOpened"])
    return {int(ev.args["disputeId"]) for ev in found}


def job_challengers(
    client: Any,
    job_id: int,
    dispute_id: int,
    read: EventReader = events,
    rejecters: Callable[[int], list[str]] | None = None,
) -> list[str]:
    """Who disputes the sample of a committee job dispute: the rejecters a forced-error
    settlement left disputing (``ForcedEndDisputed``), else the whistleblowers that challenged
    an approval of the sample and the verifiers whose recorded verdict of it is a reject
    (``rejecters(sample)``, in assignment order; default: the ``verdictOf`` views)."""
    names = ["JobDisputed", "ApprovalChallenged", "ForcedEndDisputed"]
    found = read(client, client.jobs.contract, names, first_indexed=job_id)
    samples = [
        int(ev.args["sampleIndex"])
        for ev in found
        if ev.event == "JobDisputed" and int(ev.args["disputeId"]) == dispute_id
    ]
    if not samples:
        return []
    sample = samples[-1]

    forced = [
        str(e.args["verifier"])
        for e in found
        if e.event == "ForcedEndDisputed" and int(e.args["sampleIndex"]) == sample
    ]
    if forced:
        return forced
    out = [
        str(e.args["challenger"])
        for e in found
        if e.event == "ApprovalChallenged" and int(e.args["sampleIndex"]) == sample
    ]
    for verifier in (rejecters or _view_rejecters(client, job_id))(sample):
        if verifier not in out:
            out.append(verifier)
    return out


def _view_rejecters(client: Any, job_id: int) -> Callable[[int], list[str]]:
    """``sample -> verifiers whose verdict of it is a reject``, from ``verdictOf``."""
    from veritrain.enums import Verdict

    def of(sample: int) -> list[str]:
        out = []
        for verifier in client.jobs.get_assignment(job_id).verifiers:
            verdicts = client.jobs.verdicts_of(job_id, verifier)
            if sample < len(verdicts) and verdicts[sample] is Verdict.Reject:
                out.append(str(verifier))
        return out

    return of


def _game_row(client: Any, dispute_id: int) -> dict[str, Any]:
    game = client.game.get_game(dispute_id)
    phase = game.status.name
    if game.step_dispute_id and not game.resolved:
        phase += f" (step committee {client.committee.dispute_phase(game.step_dispute_id).name})"
    elif not game.resolved:
        phase += f" [{game.lo}, {game.hi}]"
    winner = None
    if game.resolved:
        winner = game.defender if game.status.name == "DefenderWon" else game.challenger
    return {
        "id": dispute_id,
        "contract": "game",
        "kind": "job step",
        "adjudicator": "bisection game",
        "job_id": int(game.job_id),
        "segment": int(game.segment),
        "run_id": None,
        "round": None,
        "challenger": str(game.challenger),
        "defender": str(game.defender),
        "phase": phase,
        "resolved": bool(game.resolved),
        "winner": str(winner) if winner is not None else None,
        "moves": int(game.moves),
        "step_dispute_id": int(game.step_dispute_id) or None,
    }


def _claim_parties(client: Any, run_id: int, round_index: int, dispute_id: int) -> dict[str, Any]:
    """Claimant, challenger and (once ruled) winner of a round claim dispute, from events."""
    registry = client.runs.contract
    out: dict[str, Any] = {"claimant": None, "challenger": None, "winner": None}
    challenged = [
        ev
        for ev in events(client, registry, ["RoundChallenged"], first_indexed=run_id)
        if int(ev.args["disputeId"]) == dispute_id
    ]
    if challenged:
        out["challenger"] = str(challenged[0].args["challenger"])
        at = challenged[0].block_number
        proposed = [
            ev
            for ev in events(client, registry, ["RoundProposed"], first_indexed=run_id, to_block=at)
            if int(ev.args["round"]) == round_index
        ]
        if proposed:
            out["claimant"] = str(proposed[-1].args["proposer"])
    for ev in events(client, registry, ["ClaimRuled"], first_indexed=run_id):
        if int(ev.args["disputeId"]) == dispute_id:
            out["winner"] = str(ev.args["winner"])
    return out


def _committee_row(client: Any, dispute_id: int) -> dict[str, Any]:
    committee = client.committee
    view = committee.get_dispute(dispute_id)
    resolved = view.status.name == "Resolved"
    phase = committee.dispute_phase(dispute_id).name
    if resolved:
        verdict = "valid" if view.segment_valid else "invalid"
        phase = f"Resolved: {verdict} ({view.valid_votes}-{view.invalid_votes})"
    row: dict[str, Any] = {
        "id": dispute_id,
        "contract": "committee",
        "adjudicator": "arbitration committee",
        "phase": phase,
        "resolved": resolved,
        "moves": int(view.committed) + int(view.revealed),
        "step_dispute_id": None,
    }
    if committee.is_claim_dispute(dispute_id):
        run_id, round_index = client.runs.claim_of(dispute_id)
        parties = _claim_parties(client, run_id, round_index, dispute_id)
        return {
            **row,
            "kind": "run round claim",
            "job_id": None,
            "segment": None,
            "run_id": run_id,
            "round": round_index,
            "challenger": parties["challenger"],
            "defender": parties["claimant"],
            "winner": parties["winner"] if resolved else None,
        }
    job_id = int(view.job_id)
    solver = str(client.jobs.get_job(job_id, with_uris=False).solver)
    challengers = job_challengers(client, job_id, dispute_id)
    winner = None
    if resolved:
        winner = solver if view.segment_valid else (", ".join(challengers) or "challenger")
    return {
        **row,
        "kind": "job segment",
        "job_id": job_id,
        "segment": int(view.segment),
        "run_id": None,
        "round": None,
        "challenger": ", ".join(challengers) or None,
        "defender": solver,
        "winner": winner,
    }


def _exists(client: Any, dispute_id: int, committee: bool) -> None:
    """Refuse an id that names no dispute (one line, exit 1)."""
    if not committee and is_bisection(client):
        count, what = _game_count(client), "bisection games"
    else:
        count, what = client.committee.dispute_count(), "committee disputes"
    if not 1 <= dispute_id <= count:
        raise CliError(
            f"dispute {dispute_id} does not exist ({count} {what} on this deployment; "
            "see `veritrain dispute list`)"
        )


def dispute_row(client: Any, dispute_id: int, *, committee: bool = False) -> dict[str, Any]:
    """One dispute's summary: kind, job or run/round, challenger, defender (a round claim's
    claimant), adjudicator, phase, winner once resolved.

    Args:
        client: a `ChainClient` bound to the deployment.
        dispute_id: game id in a bisection deployment, committee id otherwise.
        committee: read committee dispute ``dispute_id`` even in a bisection deployment.

    Raises:
        CliError: no such dispute.
    """
    _exists(client, dispute_id, committee)
    if not committee and is_bisection(client):
        return _game_row(client, dispute_id)
    return _committee_row(client, dispute_id)


def dispute_rows(client: Any) -> list[dict[str, Any]]:
    """Every dispute: the games (bisection deployment) then the committee disputes that are not
    a game's step dispute (all of them in a committee deployment)."""
    rows: list[dict[str, Any]] = []
    steps: set[int] = set()
    if is_bisection(client):
        rows += [_game_row(client, i) for i in range(1, _game_count(client) + 1)]
        steps = _step_parents(client)
    for i in range(1, client.committee.dispute_count() + 1):
        if i not in steps:
            rows.append(_committee_row(client, i))
    return rows
