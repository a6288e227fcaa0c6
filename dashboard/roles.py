"""Who is who on a dashboard page: every address's roles, read from the index rows (never
guessed from the address alone).

    facts = job_roles(session, 4)          # [Role(address, "solver", "job 4", "/jobs/4"), ...]
    labels = by_address(facts, "job 4")    # {address: ["solver", "verifier"], ...}
    account_roles(session, address)        # every role of one address, across the index

A role belongs to a scope (the job, run round, dispute or model it is held in); a page shows the
bare role for its own scope and ``role (scope)`` for another one, an account page
``role of scope`` with a link. The role names are those of the protocol: job poster, solver,
verifier, whistleblower (paid a forced-error jackpot), defender, challenger, committee member,
model owner, pending owner, authorised poster, shareholder, run owner, proposer, solver seat S
(of a run round), verifier seat S (of a job's current verifier draw).

Run: imported by ``dashboard.app``; ``python -m dashboard.server`` serves the pages.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session

from indexer.models import (
    Assignment,
    Contribution,
    Dispute,
    Earning,
    Event,
    Job,
    Model,
    Run,
    RunRound,
    ShareBalance,
)

__all__ = [
    "Role",
    "account_roles",
    "by_address",
    "dispute_roles",
    "job_roles",
    "model_roles",
    "run_roles",
    "verifier_seats",
]


class Role(BaseModel):
    """One role of one address: ``role`` (a protocol term) held in ``scope`` (``"job 4"``,
    ``"run 1 round 0"``, ``"dispute claim-2"``, ``"model digits-mlp"``), whose page is ``href``."""

    address: str
    role: str
    scope: str
    href: str

    def label(self, page_scope: str | None = None) -> str:
        """The role as a page shows it: bare in its own scope, else ``"role (scope)"``."""
        return self.role if self.scope == page_scope else f"{self.role} ({self.scope})"


def by_address(facts: Iterable[Role], page_scope: str | None = None) -> dict[str, list[str]]:
    """Address -> its role labels on the page of ``page_scope``, each once, in first-seen order
    (what the templates' ``addr`` macro prints next to an address)."""
    out: dict[str, list[str]] = {}
    for f in facts:
        labels = out.setdefault(f.address, [])
        text = f.label(page_scope)
        if text not in labels:
            labels.append(text)
    return out


# ------------------------------------------------------------------------------- per row


def _of_job(j: Job) -> Iterator[Role]:
    scope, href = f"job {j.job_id}", f"/jobs/{j.job_id}"
    yield Role(address=j.poster, role="job poster", scope=scope, href=href)
    if j.solver:
        yield Role(address=j.solver, role="solver", scope=scope, href=href)


def verifier_seats(session: Session, job_id: int) -> dict[str, int]:
    """Verifier -> its seat (0-based) in job ``job_id``'s current draw: its place in the
    ``verifiers`` of the job's latest ``VerifiersAssigned`` event (IJobManager: on a
    reassignment the seats kept first, then the new ones); empty before any draw."""
    ev = session.scalar(
        select(Event)
        .where(Event.name == "VerifiersAssigned", Event.args["jobId"].as_integer() == job_id)
        .order_by(Event.block.desc(), Event.log_index.desc())
        .limit(1)
    )
    return {} if ev is None else {v: i for i, v in enumerate(ev.args["verifiers"])}


def _of_assignment(a: Assignment, seats: dict[str, int]) -> Iterator[Role]:
    seat = seats.get(a.verifier)
    yield Role(
        address=a.verifier,
        role="verifier" if seat is None else f"verifier seat {seat}",
        scope=f"job {a.job_id}",
        href=f"/jobs/{a.job_id}",
    )


def _of_jackpot(e: Earning) -> Iterator[Role]:
    if e.kind == "jackpot" and e.job_id is not None:
        yield Role(
            address=e.account,
            role="whistleblower",
            scope=f"job {e.job_id}",
            href=f"/jobs/{e.job_id}",
        )


def _dispute_key(d: Dispute) -> str:
    return str(d.dispute_id) if d.kind == "job" else f"{d.kind}-{d.dispute_id}"


def _of_dispute(d: Dispute) -> Iterator[Role]:
    key = _dispute_key(d)
    scope, href = f"dispute {key}", f"/disputes/{key}"
    if d.defender:
        yield Role(address=d.defender, role="defender", scope=scope, href=href)
    if d.challenger:
        yield Role(address=d.challenger, role="challenger", scope=scope, href=href)
    for member in d.committee or []:
        yield Role(address=member, role="committee member", scope=scope, href=href)


def _of_contribution(c: Contribution) -> Iterator[Role]:
    if c.solver:
        yield Role(
            address=c.solver,
            role=f"solver seat {c.seat}",
            scope=f"run {c.run_id} round {c.round}",
            href=f"/runs/{c.run_id}",
        )


def _of_round(r: RunRound) -> Iterator[Role]:
    scope, href = f"run {r.run_id} round {r.round}", f"/runs/{r.run_id}"
    if r.proposer:
        yield Role(address=r.proposer, role="proposer", scope=scope, href=href)
    if r.challenger:
        yield Role(address=r.challenger, role="challenger", scope=scope, href=href)


def _of_run(r: Run) -> Iterator[Role]:
    yield Role(
        address=r.opener, role="run owner", scope=f"run {r.run_id}", href=f"/runs/{r.run_id}"
    )


def _model_scope(m: Model) -> tuple[str, str]:
    ref = m.name or m.model_id
    return f"model {ref}", f"/models/{ref}"


def _of_model(m: Model) -> Iterator[Role]:
    scope, href = _model_scope(m)
    yield Role(address=m.owner, role="model owner", scope=scope, href=href)
    if m.pending_owner:
        yield Role(address=m.pending_owner, role="pending owner", scope=scope, href=href)
    for p in m.posters or []:
        yield Role(address=p, role="authorised poster", scope=scope, href=href)


def _of_holding(m: Model, b: ShareBalance) -> Iterator[Role]:
    if b.balance > 0:
        scope, href = _model_scope(m)
        yield Role(address=b.account, role="shareholder", scope=scope, href=href)


# ------------------------------------------------------------------------------- per page


def job_roles(session: Session, job_id: int) -> list[Role]:
    """The roles held in job ``job_id``: its poster, solver (and the run seat the job fills),
    verifiers, whistleblowers, the parties and committee of its dispute, its model's owner."""
    j = session.get(Job, job_id)
    if j is None:
        return []
    out = list(_of_job(j))
    for c in session.scalars(select(Contribution).where(Contribution.job_id == job_id)):
        out += _of_contribution(c)
    seats = verifier_seats(session, job_id)
    for a in session.scalars(
        select(Assignment).where(Assignment.job_id == job_id).order_by(Assignment.verifier)
    ):
        out += _of_assignment(a, seats)
    for e in session.scalars(
        select(Earning).where(Earning.job_id == job_id, Earning.kind == "jackpot")
    ):
        out += _of_jackpot(e)
    for d in session.scalars(
        select(Dispute).where(Dispute.kind == "job", Dispute.job_id == job_id)
    ):
        out += _of_dispute(d)
    m = session.get(Model, j.model_id)
    if m is not None:
        scope, href = _model_scope(m)
        out.append(Role(address=m.owner, role="model owner", scope=scope, href=href))
    return out


def run_roles(session: Session, run_id: int) -> list[Role]:
    """The roles held in run ``run_id``: its owner (opener), each round's seats, proposer and
    challenger, and the committees of its claim disputes."""
    r = session.get(Run, run_id)
    if r is None:
        return []
    out = list(_of_run(r))
    for c in session.scalars(
        select(Contribution)
        .where(Contribution.run_id == run_id)
        .order_by(Contribution.round, Contribution.seat)
    ):
        out += _of_contribution(c)
    for rr in session.scalars(
        select(RunRound).where(RunRound.run_id == run_id).order_by(RunRound.round)
    ):
        out += _of_round(rr)
    for d in session.scalars(
        select(Dispute).where(Dispute.kind == "claim", Dispute.run_id == run_id)
    ):
        out += _of_dispute(d)
    return out


def dispute_roles(session: Session, kind: str, dispute_id: int) -> list[Role]:
    """The roles held in a dispute (``kind`` ``"job"`` or ``"claim"``): defender, challenger,
    committee members."""
    d = session.get(Dispute, (kind, dispute_id))
    return [] if d is None else list(_of_dispute(d))


def model_roles(session: Session, model_id: str) -> list[Role]:
    """The roles held in a model: owner, pending owner, authorised posters, shareholders."""
    m = session.get(Model, model_id)
    if m is None:
        return []
    out = list(_of_model(m))
    for b in session.scalars(
        select(ShareBalance)
        .where(ShareBalance.model_id == model_id)
        .order_by(ShareBalance.balance.desc())
    ):
        out += _of_holding(m, b)
    return out


def account_roles(session: Session, address: str) -> list[Role]:
    """Every role ``address`` (as the index stores it: checksummed) holds, across jobs, runs,
    disputes and models, in that order."""
    out: list[Role] = []
    for j in session.scalars(
        select(Job).where((Job.poster == address) | (Job.solver == address)).order_by(Job.job_id)
    ):
        out += _of_job(j)
    for a in session.scalars(
        select(Assignment).where(Assignment.verifier == address).order_by(Assignment.job_id)
    ):
        out += _of_assignment(a, verifier_seats(session, a.job_id))
    for e in session.scalars(
        select(Earning)
        .where(Earning.account == address, Earning.kind == "jackpot")
        .order_by(Earning.block, Earning.log_index)
    ):
        out += _of_jackpot(e)
    for r in session.scalars(select(Run).where(Run.opener == address).order_by(Run.run_id)):
        out += _of_run(r)
    for c in session.scalars(
        select(Contribution)
        .where(Contribution.solver == address)
        .order_by(Contribution.run_id, Contribution.round, Contribution.seat)
    ):
        out += _of_contribution(c)
    for rr in session.scalars(
        select(RunRound)
        .where((RunRound.proposer == address) | (RunRound.challenger == address))
        .order_by(RunRound.run_id, RunRound.round)
    ):
        out += _of_round(rr)
    for d in session.scalars(select(Dispute).order_by(Dispute.kind, Dispute.dispute_id)):
        out += _of_dispute(d)  # committee is a JSON list: filtered below
    for m in session.scalars(select(Model).order_by(Model.registered_block)):
        out += _of_model(m)
        b = session.get(ShareBalance, (m.model_id, address))
        if b is not None:
            out += _of_holding(m, b)
    seen: set[tuple[str, str]] = set()
    mine: list[Role] = []
    for f in out:
        if f.address == address and (f.role, f.scope) not in seen:
            seen.add((f.role, f.scope))
            mine.append(f)
    return mine
