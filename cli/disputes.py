"""`veritrain dispute list / show`: every dispute of a deployment and its whole history.

Two kinds of dispute exist (docs/DISPUTES.md): a job's disputed step, judged by the bisection
game (a deployment with ``adjudicator = "bisection"``: dispute N is game N, its one-step
committee dispute folded into it) or by the arbitration committee (``"committee"``: dispute N
is committee dispute N); and a run's round claim (``RunRegistry.challengeRound``), always a
committee dispute. In a bisection deployment a round claim's committee id is not a game id:
pass ``--committee`` to `show` it. `list` reads the views; `show` adds the timeline from
events (block, time): opening, each bisection move, escalation, the committee draw, each vote
commit and reveal, resolution, and the slashes and credits of the settlement.

With ``--db URL`` both read the chain's index (brought up to date first) instead of the views
and event logs; the phase of a committee dispute still voting depends on the time, so it is
read over RPC, every such dispute in one batched request.

Run: ``veritrain dispute list [--json] [--db URL]``;
``veritrain dispute show 1 [--committee] [--json] [--db URL]``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cli.dashboard import ReadDbOpt, synced_index
from cli.errors import CliError
from cli.history import EventReader, events
from noderuntime.options import (
    DEFAULT_RPC,
    UINT256_MAX,
    DeploymentOpt,
    JsonOpt,
    RpcUrlOpt,
    connect_reader,
    emit_json,
)

if TYPE_CHECKING:
    from cli.history import IndexedEvents

__all__ = ["app", "dispute_row", "dispute_timeline"]

app = typer.Typer(help="Inspect disputes: list them, show one's history.", no_args_is_help=True)

_GAME_EVENTS = [
    "GameOpened",
    "EndpointsPosted",
    "Bisected",
    "Responded",
    "StepDisputeOpened",
    "Escalated",
    "TimeoutClaimed",
    "GameResolved",
]
_COMMITTEE_EVENTS = [
    "DisputeOpened",
    "ClaimDisputeOpened",
    "StepDisputeOpened",
    "RandomnessReanchored",
    "CommitteeDrawn",
    "VoteCommitted",
    "RevealPhaseStarted",
    "VoteRevealed",
    "DisputeResolved",
]
_SETTLEMENT_JOB_EVENTS = [
    "SolverSlashed",
    "VerifierSlashed",
    "ArbiterSlashed",
    "BondForfeited",
    "PotShareToPool",
    "JobFinalized",
    "JobRejected",
]


def _jsonable(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return "0x" + bytes(value).hex()
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


def _h(value: Any) -> str:
    return "0x" + bytes(value).hex()


def _is_bisection(client: Any) -> bool:
    return str(client.adjudicator.name) == "bisection"


def _game_count(client: Any) -> int:
    return int(client.call(client.game.contract, "gameCount"))


def _step_parents(client: Any) -> set[int]:
    """Committee dispute ids that are a game's one-step dispute."""
    found = events(client, client.committee.contract, ["StepDisputeOpened"])
    return {int(ev.args["disputeId"]) for ev in found}


def _job_challengers(
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
    challengers = _job_challengers(client, job_id, dispute_id)
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
    if not committee and _is_bisection(client):
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
    if not committee and _is_bisection(client):
        return _game_row(client, dispute_id)
    return _committee_row(client, dispute_id)


def dispute_rows(client: Any) -> list[dict[str, Any]]:
    """Every dispute: the games (bisection deployment) then the committee disputes that are not
    a game's step dispute (all of them in a committee deployment)."""
    rows: list[dict[str, Any]] = []
    steps: set[int] = set()
    if _is_bisection(client):
        rows += [_game_row(client, i) for i in range(1, _game_count(client) + 1)]
        steps = _step_parents(client)
    for i in range(1, client.committee.dispute_count() + 1):
        if i not in steps:
            rows.append(_committee_row(client, i))
    return rows


class _Indexed:
    """`dispute_row` / `dispute_rows` read from the index (`dashboard.queries.dispute`, its
    stored events) instead of the game's and the committee's views. What no event records is
    read over RPC in ONE batched request: the time-dependent phase (``phaseOf``) of every
    committee dispute that is not resolved (a game's step dispute included).

    Args:
        client: a `ChainClient` bound to the deployment.
        session: a session of the index, brought up to date.
    """

    def __init__(self, client: Any, session: Any) -> None:
        from cli.history import IndexedEvents

        self.client = client
        self.session = session
        self.read = IndexedEvents(session)
        self.bisection = _is_bisection(client)

    def _views(self) -> list[Any]:
        from dashboard.queries import dispute, disputes

        views = [dispute(self.session, d.key) for d in disputes(self.session)]
        found = [v for v in views if v is not None]
        return sorted(found, key=lambda v: (not self._is_game(v), v.dispute_id))

    def _is_game(self, view: Any) -> bool:
        return bool(view.kind == "job" and view.adjudicator == "bisection")

    def _phases(self, views: list[Any]) -> dict[int, str]:
        """``{committee id: phaseOf name}`` of the unresolved committee disputes, batched."""
        from veritrain.enums import DisputePhase

        ids = []
        for v in views:
            if self._is_game(v):
                if v.step_dispute_id and not v.resolved:
                    ids.append(int(v.step_dispute_id))
            elif not self._resolution(v.dispute_id):
                ids.append(v.dispute_id)
        contract = self.client.committee.contract
        found = self.client.call_many([(contract, "phaseOf", (i,)) for i in ids])
        return {i: DisputePhase(int(p)).name for i, p in zip(ids, found, strict=True)}

    def _resolution(self, committee_id: int) -> Any:
        found = self.read(
            self.client,
            self.client.committee.contract,
            ["DisputeResolved"],
            first_indexed=committee_id,
        )
        return found[-1] if found else None

    def _count(self, contract: Any, names: list[str], first: int) -> list[Any]:
        return self.read(self.client, contract, names, first_indexed=first)

    def _game_row(self, v: Any, phases: dict[int, str]) -> dict[str, Any]:
        phase = v.status
        if v.step_dispute_id and not v.resolved:
            phase += f" (step committee {phases[int(v.step_dispute_id)]})"
        elif not v.resolved:
            phase += f" [{v.lo}, {v.hi}]"
        moved = ["EndpointsPosted", "Bisected", "Responded", "Escalated"]
        return {
            "id": v.dispute_id,
            "contract": "game",
            "kind": "job step",
            "adjudicator": "bisection game",
            "job_id": v.job_id,
            "segment": v.segment,
            "run_id": None,
            "round": None,
            "challenger": v.challenger,
            "defender": v.defender,
            "phase": phase,
            "resolved": v.resolved,
            "winner": v.winner if v.resolved else None,
            "moves": len(self._count(self.client.game.contract, moved, v.dispute_id)),
            "step_dispute_id": v.step_dispute_id or None,
        }

    def _rejecters(self, job_id: int) -> Callable[[int], list[str]]:
        """``sample -> verifiers whose revealed verdict of it is a reject`` (assignment order of
        the last ``VerifiersAssigned``), as ``verdictOf`` reports it."""
        from dashboard.queries import job

        assigned = self._count(self.client.jobs.contract, ["VerifiersAssigned"], job_id)
        order = [str(a) for a in assigned[-1].args["verifiers"]] if assigned else []
        view = job(self.session, job_id)
        seats = {a.verifier: a for a in (view.assignments if view is not None else [])}

        def of(sample: int) -> list[str]:
            out = []
            for verifier in order:
                seat = seats.get(verifier)
                if seat is None or seat.approvals is None or sample in seat.abstained:
                    continue
                if sample < len(seat.approvals) and not seat.approvals[sample]:
                    out.append(verifier)
            return out

        return of

    def _committee_row(self, v: Any, phases: dict[int, str]) -> dict[str, Any]:
        from dashboard.queries import job

        cid = v.dispute_id
        contract = self.client.committee.contract
        committed = len(self._count(contract, ["VoteCommitted"], cid))
        reveals = self._count(contract, ["VoteRevealed"], cid)
        resolution = self._resolution(cid)
        resolved = resolution is not None
        if resolved:
            valid = sum(1 for r in reveals if r.args["segmentValid"])
            verdict = "valid" if resolution.args["segmentValid"] else "invalid"
            phase = f"Resolved: {verdict} ({valid}-{len(reveals) - valid})"
        else:
            phase = phases[cid]
        row: dict[str, Any] = {
            "id": cid,
            "contract": "committee",
            "adjudicator": "arbitration committee",
            "phase": phase,
            "resolved": resolved,
            "moves": committed + len(reveals),
            "step_dispute_id": None,
        }
        if v.kind == "claim":
            return {
                **row,
                "kind": "run round claim",
                "job_id": None,
                "segment": None,
                "run_id": v.run_id,
                "round": v.round,
                "challenger": v.challenger,
                "defender": v.defender,
                "winner": v.winner if resolved else None,
            }
        job_id = int(v.job_id)
        found = job(self.session, job_id)
        solver = found.solver if found is not None else None
        challengers = _job_challengers(
            self.client, job_id, cid, self.read, rejecters=self._rejecters(job_id)
        )
        winner = None
        if resolved:
            valid_segment = bool(resolution.args["segmentValid"])
            winner = solver if valid_segment else (", ".join(challengers) or "challenger")
        return {
            **row,
            "kind": "job segment",
            "job_id": job_id,
            "segment": v.segment,
            "run_id": None,
            "round": None,
            "challenger": ", ".join(challengers) or None,
            "defender": solver,
            "winner": winner,
        }

    def _row(self, v: Any, phases: dict[int, str]) -> dict[str, Any]:
        return self._game_row(v, phases) if self._is_game(v) else self._committee_row(v, phases)

    def rows(self) -> list[dict[str, Any]]:
        """`dispute_rows`, from the index."""
        views = self._views()
        phases = self._phases(views)
        return [self._row(v, phases) for v in views]

    def row(self, dispute_id: int, committee: bool) -> dict[str, Any]:
        """`dispute_row`, from the index.

        Raises:
            CliError: no such dispute.
        """
        from dashboard.queries import dispute

        game = not committee and self.bisection
        if game:
            contract, opened, what = self.client.game.contract, "GameOpened", "bisection games"
        else:
            contract, opened, what = (
                self.client.committee.contract,
                "DisputeOpened",
                "committee disputes",
            )
        count = len(self.read(self.client, contract, [opened]))
        if not 1 <= dispute_id <= count:
            raise CliError(
                f"dispute {dispute_id} does not exist ({count} {what} on this deployment; "
                "see `veritrain dispute list`)"
            )
        keys = [str(dispute_id)] if game else [f"claim-{dispute_id}"]
        if not game and not self.bisection:
            keys.append(str(dispute_id))
        view = next((v for k in keys if (v := dispute(self.session, k)) is not None), None)
        if view is None:  # a game's step dispute: the index folds it into its game
            view = self._step_view(dispute_id)
        return self._row(view, self._phases([view]))

    def _step_view(self, committee_id: int) -> Any:
        """A game's step dispute as a committee job dispute (job and segment of its
        ``DisputeOpened``), for `row` with ``--committee``."""
        from types import SimpleNamespace

        opened = self.read(
            self.client,
            self.client.committee.contract,
            ["DisputeOpened"],
            first_indexed=committee_id,
        )
        args = opened[-1].args
        return SimpleNamespace(
            kind="job",
            adjudicator="committee",
            dispute_id=committee_id,
            job_id=int(args["jobId"]),
            segment=int(args["segment"]),
        )


def _dissected(a: Any) -> str:
    """A ``Bisected`` line: the interval, its interior points and the posted hashes (their
    first 4 bytes; the timeline's ``args`` keep them whole).

    Args:
        a: the event's arguments (``lo``, ``hi``, ``hashes``).
    """
    from veritrain.bisection import posted_points

    lo, hi, hashes = int(a["lo"]), int(a["hi"]), list(a["hashes"])
    points = posted_points(lo, hi, len(hashes))
    at = ", ".join(f"{p} {_h(h)[:10]}" for p, h in zip(points, hashes, strict=True))
    plural = "" if len(points) == 1 else "s"
    return f"defender dissects [{lo}, {hi}] at {len(points)} point{plural}: {at}"


def _describe(ev: Any, client: Any) -> str:
    """One line for a timeline event (amounts via `vtt`)."""
    from veritrain.units import vtt

    a = ev.args
    name = ev.event
    texts: dict[str, Any] = {
        "GameOpened": lambda: (
            f"game opened: job {a['jobId']} segment {a['segment']}, defender {a['defender']}, "
            f"challenger {a['challenger']}, interval [{a['lo']}, {a['hi']}]"
        ),
        "EndpointsPosted": lambda: (
            f"defender posts endpoints {_h(a['startHash'])} -> {_h(a['endHash'])}"
        ),
        "Bisected": lambda: _dissected(a),
        "Responded": lambda: f"challenger picks part {a['index']}: [{a['lo']}, {a['hi']}]",
        "StepDisputeOpened": lambda: (
            f"one-step dispute {a.get('stepDisputeId', a['disputeId'])}: step {a['step']} from "
            f"{_h(a['startHash'])} claimed {_h(a['claimedEndHash'])}"
        ),
        "Escalated": lambda: f"escalated to the committee at [{a['lo']}, {a['hi']}]",
        "TimeoutClaimed": lambda: f"timeout claimed by {a['caller']}: {a['loser']} loses",
        "GameResolved": lambda: (
            f"game resolved: {'defender' if a['defenderWon'] else 'challenger'} {a['winner']} "
            f"wins, bonds {vtt(int(a['bonds']))}"
        ),
        "DisputeOpened": lambda: (
            f"committee dispute {a['disputeId']} opened"
            + (f" (job {a['jobId']} segment {a['segment']})" if a["jobId"] else "")
            + f", randomness block {a['randomnessBlock']}"
        ),
        "ClaimDisputeOpened": lambda: f"round claim dispute opened by {a['parent']}",
        "RandomnessReanchored": lambda: f"randomness re-anchored to block {a['randomnessBlock']}",
        "CommitteeDrawn": lambda: f"committee drawn: {', '.join(map(str, a['members']))}",
        "VoteCommitted": lambda: f"vote committed by {a['member']}",
        "RevealPhaseStarted": lambda: "reveal phase started",
        "VoteRevealed": lambda: (
            f"vote revealed by {a['member']}: {'valid' if a['segmentValid'] else 'invalid'}"
        ),
        "DisputeResolved": lambda: (
            f"committee resolved: {'valid' if a['segmentValid'] else 'invalid'}; majority "
            f"{', '.join(map(str, a['majority'])) or '-'}; non-voters "
            f"{', '.join(map(str, a['nonVoters'])) or '-'}"
        ),
        "JobDisputed": lambda: f"job {a['jobId']} disputed on sample {a['sampleIndex']}",
        "DisputeSettled": lambda: (
            f"settled on job {a['jobId']}: {'valid' if a['segmentValid'] else 'invalid'}, "
            f"pot {vtt(int(a['pot']))}"
        ),
        "RoundChallenged": lambda: (
            f"run {a['runId']} round {a['round']} challenged by {a['challenger']}"
        ),
        "ClaimRuled": lambda: (
            f"claim ruled {'valid' if a['claimValid'] else 'invalid'}: winner {a['winner']}, "
            f"pot {vtt(int(a['pot']))}"
        ),
        "StakeSlashed": lambda: (
            f"slash: {a['account']} loses {vtt(int(a['slashed']))} of its "
            f"{('solver', 'verifier', 'whistleblower')[int(a['role'])]} stake"
        ),
        "Credited": lambda: f"credit: {a['account']} {vtt(int(a['amount']))}",
        "JobFinalized": lambda: f"job {a['jobId']} finalized",
        "JobRejected": lambda: f"job {a['jobId']} rejected, refund {vtt(int(a['refund']))}",
    }
    if name in texts:
        return str(texts[name]())
    amount = next((a[k] for k in ("amount", "slashed") if k in a), None)
    who = next((a[k] for k in ("solver", "verifier", "arbiter", "account", "party") if k in a), "")
    return f"{name} {who} {vtt(int(amount)) if amount is not None else ''}".strip()


def _settlement(client: Any, txs: set[str], lo: int, hi: int, read: EventReader) -> list[Any]:
    """Slashes and credits booked in the transactions ``txs`` (blocks lo..hi)."""
    found = [
        *read(client, client.stakes.contract, ["StakeSlashed"], from_block=lo, to_block=hi),
        *read(client, client.escrow.contract, ["Credited"], from_block=lo, to_block=hi),
    ]
    return [ev for ev in found if ev.tx_hash in txs]


def dispute_timeline(
    client: Any, row: dict[str, Any], *, index: IndexedEvents | None = None
) -> list[dict[str, Any]]:
    """The history of the dispute ``row`` (`dispute_row`) as events in chain order.

    Args:
        client: a `ChainClient` bound to the deployment.
        row: the dispute (`dispute_row`).
        index: read the events and block times from the index (`IndexedEvents`) instead of
            ``eth_getLogs`` and ``eth_getBlockByNumber``; the same result.

    Returns:
        ``[{"block", "timestamp" (s), "contract", "event", "text", "args"}]``.
    """
    from cli.history import BlockTimes

    read: EventReader = index if index is not None else events
    dispute_id = int(row["id"])
    found: list[Any] = []
    committee_ids: list[int] = []
    if row["contract"] == "game":
        found += read(client, client.game.contract, _GAME_EVENTS, first_indexed=dispute_id)
        if row["step_dispute_id"]:
            committee_ids.append(int(row["step_dispute_id"]))
    else:
        committee_ids.append(dispute_id)
    for cid in committee_ids:
        found += [
            ev
            for ev in read(client, client.committee.contract, _COMMITTEE_EVENTS, first_indexed=cid)
            # the game's own StepDisputeOpened already names the one-step dispute
            if not (row["contract"] == "game" and ev.event == "StepDisputeOpened")
        ]
    job_id = row.get("job_id")
    if job_id is not None:
        jm = client.jobs.contract
        top = dispute_id if row["contract"] == "game" or not _is_bisection(client) else None
        for ev in read(client, jm, ["JobDisputed", "DisputeSettled"], first_indexed=job_id):
            if top is not None and int(ev.args["disputeId"]) == top:
                found.append(ev)
    if row.get("run_id") is not None:
        registry = client.runs.contract
        for ev in read(
            client, registry, ["RoundChallenged", "ClaimRuled"], first_indexed=row["run_id"]
        ):
            if int(ev.args["disputeId"]) == dispute_id:
                found.append(ev)
        found += read(client, registry, ["ClaimArbiterSlashed"], first_indexed=dispute_id)
    settle = {"GameResolved", "DisputeResolved", "DisputeSettled", "ClaimRuled"}
    txs = {ev.tx_hash for ev in found if ev.event in settle}
    if txs:
        blocks = [ev.block_number for ev in found if ev.tx_hash in txs]
        lo, hi = min(blocks), max(blocks)
        found += _settlement(client, txs, lo, hi, read)
        if job_id is not None:
            found += [
                ev
                for ev in read(
                    client,
                    client.jobs.contract,
                    _SETTLEMENT_JOB_EVENTS,
                    first_indexed=job_id,
                    from_block=lo,
                    to_block=hi,
                )  # fmt: skip
                if ev.tx_hash in txs
            ]
    unique = {(ev.block_number, ev.log_index): ev for ev in found}
    stamp = index.timestamp if index is not None else BlockTimes(client)
    return [
        {
            "block": ev.block_number,
            "timestamp": stamp(ev.block_number),
            "contract": ev.contract,
            "event": ev.event,
            "text": _describe(ev, client),
            "args": _jsonable(dict(ev.args)),
        }
        for _, ev in sorted(unique.items())
    ]


def _where(row: dict[str, Any]) -> str:
    if row["run_id"] is not None:
        return f"run {row['run_id']} round {row['round']}"
    return f"job {row['job_id']} segment {row['segment']}"


@app.command("list")
def list_disputes(
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    json_out: JsonOpt = False,
    db: ReadDbOpt = None,
) -> None:
    """Every dispute: kind, job or run/round, challenger, defender (or claimant), adjudicator,
    phase, winner once resolved. Full addresses. With --db, read from the index; only the
    phases of unresolved committee disputes are read over RPC (one batched request).

    Errors (one line, exit != 0): an unusable --db URL or an index of another deployment.
    """
    client = connect_reader(rpc_url, deployment)
    if db is not None:
        index = synced_index(client, db)
        try:
            with index.reader() as session:
                rows = _Indexed(client, session).rows()
        finally:
            index.close()
    else:
        rows = dispute_rows(client)
    if json_out:
        emit_json(rows)
        return
    if not rows:
        typer.echo("no disputes")
        return
    from rich.table import Table

    from cli.console import address_column, report_console

    table = Table(title="Disputes")
    for header in ("id", "kind", "where", "adjudicator"):
        table.add_column(header)
    for header in ("challenger", "defender / claimant"):
        table.add_column(**address_column(header))
    table.add_column("phase")
    table.add_column(**address_column("winner"))
    for r in rows:
        ident = str(r["id"])
        if r["contract"] == "committee" and _is_bisection(client):
            ident = f"{r['id']} (--committee)"
        table.add_row(
            ident,
            r["kind"],
            _where(r),
            r["adjudicator"],
            r["challenger"] or "-",
            r["defender"] or "-",
            r["phase"],
            r["winner"] or "-",
        )
    report_console().print(table)


@app.command("show")
def show_dispute(
    dispute_id: Annotated[
        int, typer.Argument(min=1, max=UINT256_MAX, help="Dispute id (see `dispute list`).")
    ],
    committee: Annotated[
        bool,
        typer.Option(
            "--committee",
            help="Committee dispute N in a bisection deployment (a run's round claim).",
        ),
    ] = False,
    rpc_url: RpcUrlOpt = DEFAULT_RPC,
    deployment: DeploymentOpt = None,
    json_out: JsonOpt = False,
    db: ReadDbOpt = None,
) -> None:
    """One dispute and its whole history from events, with block numbers and times. With
    --db, the dispute and its events come from the index; only the phase of an unresolved
    committee dispute is read over RPC (one batched request).

    Errors (one line, exit != 0): no dispute with this id; an unusable --db URL or an index
    of another deployment.
    """
    from cli.history import when

    client = connect_reader(rpc_url, deployment)
    if db is not None:
        index = synced_index(client, db)
        try:
            with index.reader() as session:
                indexed = _Indexed(client, session)
                row = indexed.row(dispute_id, committee)
                timeline = dispute_timeline(client, row, index=indexed.read)
        finally:
            index.close()
    else:
        row = dispute_row(client, dispute_id, committee=committee)
        timeline = dispute_timeline(client, row)
    if json_out:
        emit_json({**row, "timeline": timeline})
        return
    echo = typer.echo
    echo(f"dispute {row['id']} ({row['adjudicator']}): {row['kind']}, {_where(row)}")
    echo(f"challenger {row['challenger'] or '-'}")
    echo(f"{'claimant' if row['run_id'] is not None else 'defender'}   {row['defender'] or '-'}")
    echo(f"phase      {row['phase']}")
    echo(f"winner     {row['winner'] or '-'}")
    for entry in timeline:
        echo(f"  block {entry['block']:>6}  {when(entry['timestamp'])}  {entry['text']}")
