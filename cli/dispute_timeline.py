"""The history of one dispute for `veritrain dispute show`: opening, each bisection move,
escalation, the committee draw, every vote commit and reveal, resolution, and the settlement's
slashes and credits, from event logs (or the chain's index), with block and time.

Run: not a script; ``dispute_timeline(client, 1)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cli.dispute_rows import is_bisection, job_challengers
from cli.errors import CliError
from cli.history import EventReader, events
from veritrain.hexutil import to_hex

if TYPE_CHECKING:
    from cli.history import IndexedEvents

__all__ = ["IndexedDisputes", "dispute_timeline"]


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


class IndexedDisputes:
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
        self.bisection = is_bisection(client)

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
        challengers = job_challengers(
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
    at = ", ".join(f"{p} {to_hex(h)[:10]}" for p, h in zip(points, hashes, strict=True))
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
            f"defender posts endpoints {to_hex(a['startHash'])} -> {to_hex(a['endHash'])}"
        ),
        "Bisected": lambda: _dissected(a),
        "Responded": lambda: f"challenger picks part {a['index']}: [{a['lo']}, {a['hi']}]",
        "StepDisputeOpened": lambda: (
            f"one-step dispute {a.get('stepDisputeId', a['disputeId'])}: step {a['step']} from "
            f"{to_hex(a['startHash'])} claimed {to_hex(a['claimedEndHash'])}"
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
        top = dispute_id if row["contract"] == "game" or not is_bisection(client) else None
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
    from indexer.follow import jsonable  # web3 stack: loaded on use, never at CLI start

    unique = {(ev.block_number, ev.log_index): ev for ev in found}
    stamp = index.timestamp if index is not None else BlockTimes(client)
    return [
        {
            "block": ev.block_number,
            "timestamp": stamp(ev.block_number),
            "contract": ev.contract,
            "event": ev.event,
            "text": _describe(ev, client),
            "args": jsonable(dict(ev.args)),
        }
        for _, ev in sorted(unique.items())
    ]
