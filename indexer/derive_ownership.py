"""Derive the ownership and training-run tables: the handlers of ShareRegistry, ModelShares and
RunRegistry events (models, owners, lineage, share balances and transfers, revenue, runs and
their rounds and contributions).

The handlers register with `indexer.derive` (whose `apply` and `rederive` run them), which
imports this module; like every handler they read only the event's ``args`` and ``extra``.

Amounts are wei (ints), addresses checksummed strings, hashes ``0x`` hex.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from indexer.derive import (
    KNOWN_MODEL_NAMES,
    ZERO,
    _account,
    _earning,
    _get,
    _move,
    _on,
    model_name_of_spec,
)
from indexer.models import (
    Contribution,
    Dispute,
    Event,
    Job,
    LineageEntry,
    Model,
    Revenue,
    Run,
    RunRound,
    ShareBalance,
    ShareTransfer,
)
from veritrain.diloco import contribution_uri
from veritrain.enums import RunRoundPhase
from veritrain.errors import SpecError
from veritrain.spec import model_id_hash

# -------------------------------------------------------------------------- ShareRegistry


@_on("ShareRegistry", "ModelRegistered")
def _model_registered(session: Session, ev: Event) -> None:
    a = ev.args
    name = next(
        (n for n in KNOWN_MODEL_NAMES if "0x" + model_id_hash(n).hex() == a["modelId"]), None
    )
    session.merge(
        Model(
            model_id=a["modelId"],
            name=name,
            owner=a["owner"],
            architecture=a["architecture"],
            family=a["family"],
            compute_per_step=int(a["computePerStep"]),
            seed_state=a["seedState"],
            head=a["seedState"],
            posters=[],
            total_shares=0,
            registered_block=ev.block,
        )
    )
    _account(session, a["owner"], "model owner")


@_on("ShareRegistry", "ModelCreated")
def _model_created(session: Session, ev: Event) -> None:
    model = session.get(Model, ev.args["modelId"])
    if model is not None:
        model.token = ev.args["token"]


@_on(
    "ShareRegistry",
    "ModelOwnershipTransferStarted",
    "ModelOwnershipTransferred",
    "PosterAuthorized",
    "PosterRevoked",
)
def _model_owner(session: Session, ev: Event) -> None:
    a = ev.args
    model = session.get(Model, a["modelId"])
    if model is None:
        return
    if ev.name == "ModelOwnershipTransferStarted":
        model.pending_owner = a["pendingOwner"]
    elif ev.name == "ModelOwnershipTransferred":
        model.owner, model.pending_owner, model.posters = a["newOwner"], None, []
        _account(session, a["newOwner"], "model owner")
    elif ev.name == "PosterAuthorized":
        model.posters = sorted({*model.posters, a["poster"]})
    else:
        model.posters = [p for p in model.posters if p != a["poster"]]


@_on("ShareRegistry", "LineageExtended")
def _lineage(session: Session, ev: Event) -> None:
    a = ev.args
    session.merge(
        LineageEntry(
            model_id=a["modelId"],
            index=int(a["index"]),
            job_id=int(a["jobId"]),
            final_state=a["finalState"],
            block=ev.block,
        )
    )
    model = session.get(Model, a["modelId"])
    if model is not None:
        model.head = a["finalState"]


@_on("ModelShares", "Transfer")
def _share_transfer(session: Session, ev: Event) -> None:
    a = ev.args
    model_id = ev.extra.get("model_id")
    if model_id is None:
        model = session.scalar(select(Model).where(Model.token == ev.address))
        if model is None:
            return
        model_id = model.model_id
    amount = int(a["value"])
    session.add(
        ShareTransfer(
            block=ev.block,
            log_index=ev.log_index,
            model_id=model_id,
            sender=a["from"],
            recipient=a["to"],
            amount=amount,
        )
    )
    model = session.get(Model, model_id)
    if a["from"] != ZERO:
        sender = _get(session, ShareBalance, model_id, a["from"], balance=0)
        sender.balance -= amount
    elif model is not None:
        model.total_shares += amount
    if a["to"] != ZERO:
        recipient = _get(session, ShareBalance, model_id, a["to"], balance=0)
        recipient.balance += amount
        _account(session, a["to"], "shareholder")
    elif model is not None:
        model.total_shares -= amount


@_on("ModelShares", "RevenuePaid", "RevenueClaimed")
def _revenue(session: Session, ev: Event) -> None:
    a = ev.args
    model = session.scalar(select(Model).where(Model.token == ev.address))
    if model is None:
        return
    account = a["payer"] if ev.name == "RevenuePaid" else a["account"]
    kind = "paid" if ev.name == "RevenuePaid" else "claimed"
    session.add(
        Revenue(
            block=ev.block,
            log_index=ev.log_index,
            model_id=model.model_id,
            kind=kind,
            account=account,
            amount=int(a["amount"]),
        )
    )
    if kind == "claimed":
        _earning(session, ev, account, "revenue", int(a["amount"]), model_id=model.model_id)


# ---------------------------------------------------------------------------- RunRegistry


@_on("RunRegistry", "RunOpened")
def _run_opened(session: Session, ev: Event) -> None:
    a = ev.args
    session.merge(
        Run(
            run_id=int(a["runId"]),
            model_id=a["modelId"],
            run_hash=a["runHash"],
            opener=a["opener"],
            start_hash=a["startHash"],
            seats=int(a["seats"]),
            rounds=int(a["rounds"]),
            inner_steps=int(a["innerSteps"]),
            round=0,
            opened_block=ev.block,
            # events stored before runs published their URI have none
            spec_uri=str(a.get("specURI") or "") or None,
        )
    )
    model = session.get(Model, a["modelId"])
    if model is not None and model.name is None:
        model.name = model_name_of_spec(str(a.get("specURI") or ""), a["modelId"])
    _get(session, RunRound, int(a["runId"]), 0, phase=RunRoundPhase.Open.name, registered=0)


def _round(session: Session, run_id: int, t: int) -> RunRound:
    return _get(
        session,
        RunRound,
        run_id,
        t,
        phase=RunRoundPhase.Open.name,
        registered=0,
        accepted=0,
        shares_per_seat=0,
        proposals=0,
        challenges=0,
    )


@_on("RunRegistry", "ContributionAdded")
def _contribution(session: Session, ev: Event) -> None:
    a = ev.args
    run_id, t, seat = int(a["runId"]), int(a["round"]), int(a["seat"])
    rnd = _round(session, run_id, t)
    rnd.registered = (rnd.registered or 0) | (1 << seat)
    job = session.get(Job, int(a["jobId"]))
    run = session.get(Run, run_id)
    if job is not None and not job.spec_uri and run is not None and run.spec_uri:
        # posted without a URI: its spec is the run's at (round, seat); a run URI with a
        # fragment (nothing on chain refuses one) names no spec, so the job keeps none
        try:
            job.spec_uri = contribution_uri(run.spec_uri, t, seat)
        except SpecError:
            pass
    session.merge(
        Contribution(
            run_id=run_id,
            round=t,
            seat=seat,
            job_id=int(a["jobId"]),
            solver=job.solver if job is not None else None,
            shares=0,
        )
    )


@_on("RunRegistry", "RoundProposed", "RoundChallenged", "ClaimRuled", "RoundFinalized")
def _run_round(session: Session, ev: Event) -> None:
    a = ev.args
    run_id, t = int(a["runId"]), int(a["round"])
    rnd = _round(session, run_id, t)
    if ev.name == "RoundProposed":
        rnd.phase = RunRoundPhase.Proposed.name
        rnd.state_hash, rnd.accepted = a["stateHash"], int(a["accepted"])
        rnd.proposer, rnd.challenge_deadline = a["proposer"], int(a["challengeDeadline"])
        rnd.proposals = (rnd.proposals or 0) + 1
    elif ev.name == "RoundChallenged":
        rnd.phase = RunRoundPhase.Disputed.name
        rnd.challenger, rnd.dispute_id = a["challenger"], int(a["disputeId"])
        rnd.challenges = (rnd.challenges or 0) + 1
        session.merge(
            Dispute(
                kind="claim",
                dispute_id=int(a["disputeId"]),
                run_id=run_id,
                round=t,
                adjudicator="committee",
                defender=rnd.proposer,
                challenger=a["challenger"],
                status="Voting",
                committee=[],
                moves=0,
                opened_block=ev.block,
            )
        )
        _move(session, ev, "claim", int(a["disputeId"]), a["challenger"], "claim challenged")
    elif ev.name == "ClaimRuled":
        valid = bool(a["claimValid"])
        rnd.phase = RunRoundPhase.Proposed.name if valid else RunRoundPhase.Open.name
        dispute = session.get(Dispute, ("claim", int(a["disputeId"])))
        if dispute is not None:
            dispute.resolved, dispute.segment_valid = True, valid
            dispute.status = "Resolved"
            dispute.winner = a["winner"]
            dispute.winner_side = "defender" if valid else "challenger"
        _move(
            session,
            ev,
            "claim",
            int(a["disputeId"]),
            a["winner"],
            f"claim ruled {'valid' if valid else 'invalid'}; pot {int(a['pot'])} wei",
        )
    else:
        rnd.phase = RunRoundPhase.Final.name
        rnd.state_hash, rnd.accepted = a["stateHash"], int(a["accepted"])
        rnd.shares_per_seat = int(a["sharesPerSeat"])
        run = session.get(Run, run_id)
        if run is not None:
            run.round = t + 1
            if t + 1 < run.rounds:
                _round(session, run_id, t + 1)


@_on("RunRegistry", "ContributionRewarded")
def _contribution_rewarded(session: Session, ev: Event) -> None:
    a = ev.args
    row = _get(
        session,
        Contribution,
        int(a["runId"]),
        int(a["round"]),
        int(a["seat"]),
        job_id=int(a["jobId"]),
    )
    row.solver, row.shares = a["solver"], int(a["shares"])
