"""A verifier hands its seal and its reveal to the job's solver (`verifier.handoff`,
`verifier.sealset`, `solver.aggregation`) against the fake protocol: a seat opens its seal only
once it holds every seat's signed seal, the solver then submits every seat in one
``revealVerdictsSigned`` (or, once a seat sealed itself, one ``commitVerdictsFor`` and one
``revealVerdictsFor``), a seat that signs a second seal is proven by the seat it copied, and
each seat counts its verdicts from the chain; an aggregator that drops hand-offs costs a seat
its own ``commitVerdicts`` after the hand-off wait (sooner near the deadline), never its
verdicts; a reveal is never handed before the reveal window is open or every seal is seen;
``hand_off=False`` seals at once; a rejecting seat tops its free verifier stake up to its reject
bonds before it hands its reveal or opening over, and one that cannot keeps them back without
its round failing.

Run: ``.venv/bin/python -m pytest tests/unit/verifier/test_verifier_handoff.py -q``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from adversary.verifier import GriefingVerifierNode
from solver.node import SolverNode
from tests.utils.fake_chain import FakeChain
from tests.utils.node_fixtures import aggregating_http, run_solver_to_commit, seat_accounts
from verifier.handoff import HANDOFF_WAIT, complete_seal_set, hand_off_cutoff
from verifier.node import VerifierNode
from veritrain.commitments import new_salt, verdict_commitment
from veritrain.enums import Role, Verdict
from veritrain.hexutil import to_hex
from veritrain.wire import RevealHandOff, SealHandOff, SealSet


class _Recording:
    """An HTTP client that records the URLs it POSTs to and forwards everything."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.posts: list[str] = []

    def post(self, url: str, **kwargs: Any) -> Any:
        self.posts.append(url)
        return self.inner.post(url, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _setup(
    tmp: Path, first: type[VerifierNode] = VerifierNode
) -> tuple[FakeChain, list[VerifierNode], SolverNode, _Recording]:
    """Two seats with real keys (the first a `first`), a committed job with its claims posted,
    and each seat's HTTP client routed to the solver's app with its hand-off routes."""
    chain = FakeChain()
    chain.forced_segments = [1, 3]
    seats = [
        (first if i == 0 else VerifierNode)(chain.client(a.address), tmp / f"v{i}")
        for i, a in enumerate(seat_accounts(chain))
    ]
    for seat in seats:
        seat.step()  # stakes before the assignment
    solver = run_solver_to_commit(chain, tmp)
    http = _Recording(aggregating_http(solver))
    for seat in seats:
        seat.http_client = http
    return chain, seats, solver, http


def _verdicts(node: VerifierNode, verdict: str) -> float:
    value = node.metrics.registry.get_sample_value("veritrain_verdicts_total", {"verdict": verdict})
    return float(value or 0.0)


def test_seats_open_their_seals_once_every_seal_is_in_and_the_solver_sends_one_call(
    tmp_path: Path,
) -> None:
    """P-40: a seat opens its seal to the solver only once the solver shows every seat's
    signed seal (it keeps them); the solver then seals and reveals every seat in one
    ``revealVerdictsSigned``, and stores nothing of the seals."""
    chain, seats, solver, _ = _setup(tmp_path)
    for seat in seats:
        seat.step()  # replay, sign, hand the seal to the solver
        assert seat.state.read().jobs[1].seal_handed_at is not None
    # the first seat saw only its own seal; the second saw both and opened its own
    assert seats[0].state.read().jobs[1].reveal_handed_at is None
    assert seats[1].state.read().jobs[1].reveal_handed_at is not None
    assert solver.aggregator.pending(1) == (2, 1)
    solver.step()  # not every opening is in: the solver waits, nothing is sent
    assert chain.count("revealVerdictsSigned") == 0 and chain.count("commitVerdictsFor") == 0
    seats[0].step()  # now it sees both seals
    addresses = {s.client.address.lower() for s in seats}
    for seat in seats:
        rec = seat.state.read().jobs[1]
        assert rec.reveal_handed_at is not None and set(rec.seen_seals) == addresses
    solver.step()  # every seal and opening in: one call for the whole round
    assert chain.count("revealVerdictsSigned") == 1
    for fn in ("commitVerdictsFor", "revealVerdictsFor", "commitVerdicts", "revealVerdicts"):
        assert chain.count(fn) == 0
    assert chain.sealed == {}  # nothing of the seals is stored
    for seat in seats:
        seat.step()  # the chain shows the reveal: recorded and counted once
        seat.step()
        addr = seat.client.address
        assert Verdict.Approve in chain.verdicts[(1, addr)]
        own = bin(chain.sample_masks[(1, addr)]).count("1")
        assert _verdicts(seat, "approve") == own and _verdicts(seat, "reject") == 0
        assert seat.state.read().jobs[1].submitted is True
    assert chain.equivocations == []  # the seals on chain are the ones the seats were shown


def test_a_seat_that_sealed_itself_leaves_the_solver_two_batches(tmp_path: Path) -> None:
    """One seat seals on chain itself: no one-shot call is possible (the other could see its
    ends before sealing), so the solver batches the other seal at once, then the reveals."""
    chain, seats, solver, _ = _setup(tmp_path)
    seats[1].hand_off = False
    seats[1].step()  # commitVerdicts itself
    seats[0].step()  # hands its seal; the solver's set never shows seat 1's: it does not open
    assert chain.count("commitVerdicts", seats[1].client.address) == 1
    assert seats[0].state.read().jobs[1].reveal_handed_at is None
    solver.step()  # every open seat's seal is in and a one-shot is ruled out: batch it now
    assert chain.count("commitVerdictsFor") == 1 and chain.count("revealVerdictsSigned") == 0
    seats[0].step()  # every seat sealed: the reveal window is open, hand the reveal
    assert seats[0].state.read().jobs[1].reveal_handed_at is not None
    seats[1].step()  # reveals itself
    assert chain.count("revealVerdicts", seats[1].client.address) == 1
    solver.step()  # the one open reveal is in
    assert chain.count("revealVerdictsFor") == 1
    assert all((1, s.client.address) in chain.revealed for s in seats)


@pytest.mark.parametrize("late", [False, True])
def test_a_seat_that_signs_a_second_seal_is_proven_by_the_seat_it_copied(
    tmp_path: Path, late: bool
) -> None:
    """A colluding solver shows seat 1 the ends seat 0 opened; seat 1 signs a second seal
    copying them and the solver submits that one. Seat 0 kept seat 1's first seal: once seat 1
    has revealed, it proves both on chain (P-40); after the challenge deadline, when the
    contract takes no proof, it sends none."""
    chain, seats, solver, _ = _setup(tmp_path)
    for seat in seats:
        seat.step()
    seats[0].step()  # both openings are with the solver now
    copier = seats[1]
    first = copier.state.read().jobs[1]
    sid = bytes(first.submission)
    leaked = seats[0].state.read().jobs[1]
    ends, salt = list(leaked.ends), new_salt()  # seat 0's ends, under a salt of its own
    second = copier.client.round.sign_seal(
        sid, verdict_commitment(1, copier.client.address, ends, salt)
    )
    addr = copier.client.address
    solver.aggregator.accept_seal(
        1,
        SealHandOff(
            verifier=addr, commitment=to_hex(second.commitment), signature=to_hex(second.signature)
        ),
    )
    solver.aggregator.accept_reveal(
        1, RevealHandOff(verifier=addr, ends=[to_hex(e) for e in ends], salt=to_hex(salt))
    )
    solver.step()
    assert chain.count("revealVerdictsSigned") == 1
    assert chain.seal_log[(1, addr)][0] == second.commitment
    if late:
        chain.now = chain.jobs[1].challenge_deadline + 1
        seats[0].step()
        assert chain.count("proveEquivocation") == 0
        assert seats[0].state.read().jobs[1].seals_checked is True
        return
    seats[0].step()  # revealed: compares the seals on chain with those it was shown
    assert chain.equivocations == [(1, addr)]
    assert chain.count("proveEquivocation", seats[0].client.address) == 1
    assert seats[0].state.read().jobs[1].seals_checked is True
    seats[0].step()  # proven once, never again
    assert chain.count("proveEquivocation") == 1


def test_a_seal_set_with_a_seat_missing_or_badly_signed_is_not_complete() -> None:
    """`complete_seal_set`: a seat opens only on every seat's seal signed by that seat, and its
    own seal as it signed it."""
    chain = FakeChain()
    accounts = seat_accounts(chain)
    sid, mine, other = b"\x01" * 32, b"\x02" * 32, b"\x03" * 32
    signed = [
        chain.client(a.address).round.sign_seal(sid, c)
        for a, c in zip(accounts, (mine, other), strict=True)
    ]
    seats = [a.address for a in accounts]

    def body(seals: list[Any]) -> SealSet:
        return SealSet(
            job_id=1,
            seals=[
                SealHandOff(verifier=s.verifier, commitment=to_hex(c), signature=to_hex(sig))
                for s, c, sig in seals
            ],
        )

    def signer(c: bytes, sig: bytes) -> str | None:
        return chain.client(seats[0]).round.seal_signer(sid, c, sig)

    full = [(s, s.commitment, s.signature) for s in signed]
    got = complete_seal_set(body(full), seats, signer, seats[0], mine)
    assert got is not None and set(got) == {a.lower() for a in seats}
    assert complete_seal_set(body(full[:1]), seats, signer, seats[0], mine) is None
    forged = [full[0], (signed[1], b"\x04" * 32, signed[1].signature)]  # not what it signed
    assert complete_seal_set(body(forged), seats, signer, seats[0], mine) is None
    assert complete_seal_set(body(full), seats, signer, seats[0], other) is None


def test_a_dropped_seal_falls_back_once_a_third_of_the_window_is_left(tmp_path: Path) -> None:
    """The solver takes the seal and never submits it: the seat waits for the one-shot batch
    until ``deadline - window // 3`` (a seal on chain sooner opens no window sooner) and then
    sends `commitVerdicts` itself, not before; with `seal_wait` set, after that many seconds."""
    chain, seats, _, _ = _setup(tmp_path)
    seat = seats[0]
    seat.step()
    handed = seat.state.read().jobs[1].seal_handed_at
    assert handed is not None and chain.count("commitVerdicts") == 0
    cutoff = hand_off_cutoff(chain.jobs[1].verdict_deadline, chain.params.verdict_window)
    assert cutoff > handed + HANDOFF_WAIT  # the reveal's wait would have ended long before
    chain.now = cutoff - 1
    seat.step()
    assert chain.count("commitVerdicts") == 0  # still waiting for the batch
    chain.now = cutoff
    seat.step()
    assert chain.count("commitVerdicts", seat.client.address) == 1
    assert (1, seat.client.address) in chain.sealed
    other = seats[1]
    other.seal_wait = float(HANDOFF_WAIT)
    chain.now = handed
    other.step()
    chain.now = handed + HANDOFF_WAIT
    other.step()
    assert chain.count("commitVerdicts", other.client.address) == 1


def test_the_fallback_keeps_a_third_of_the_verdict_window(tmp_path: Path) -> None:
    """Handed off late, a seat falls back at ``deadline - window // 3``, before the wait ends;
    past that point it does not hand off at all."""
    chain, seats, _, http = _setup(tmp_path)
    deadline = chain.jobs[1].verdict_deadline
    latest = deadline - chain.params.verdict_window // 3
    chain.now = latest - 5
    seats[0].step()
    assert seats[0].state.read().jobs[1].seal_handed_at == latest - 5
    chain.now = latest
    seats[0].step()
    assert chain.count("commitVerdicts", seats[0].client.address) == 1
    posts = len(http.posts)
    seats[1].step()  # at the latest fallback time: no hand-off, its own seal at once
    assert len(http.posts) == posts
    assert chain.count("commitVerdicts", seats[1].client.address) == 1


def test_a_reveal_is_never_handed_off_before_the_reveal_window_opens(tmp_path: Path) -> None:
    """One seat sealed, the other not: its ends stay with it until the verdict deadline has
    passed (a seat still sealing must not see them), then they are handed off."""
    chain, seats, solver, http = _setup(tmp_path)
    seat = seats[0]
    seat.hand_off = False
    seat.step()  # seals itself
    seat.hand_off = True
    assert chain.count("commitVerdicts") == 1
    deadline = chain.jobs[1].verdict_deadline
    for now in (chain.now, deadline - 1, deadline):
        chain.now = now
        seat.step()
        assert not any(u.endswith("/reveals") for u in http.posts), now
        assert seat.state.read().jobs[1].reveal_handed_at is None
    chain.now = deadline + 2
    seat.step()
    assert any(u.endswith("/reveals") for u in http.posts)
    assert seat.state.read().jobs[1].reveal_handed_at == deadline + 2
    assert solver.aggregator.pending(1) == (0, 1)
    assert chain.count("revealVerdicts") == 0


def test_no_hand_off_seals_and_reveals_itself(tmp_path: Path) -> None:
    chain, seats, _, http = _setup(tmp_path)
    for seat in seats:
        seat.hand_off = False
        seat.step()
    for seat in seats:
        seat.step()
    assert http.posts == []
    assert chain.count("commitVerdicts") == 2 and chain.count("revealVerdicts") == 2
    assert chain.count("commitVerdictsFor") == 0


@pytest.mark.parametrize("faucet", [True, False])
def test_a_rejecting_seat_stakes_its_bonds_before_it_hands_its_reveal_over(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, faucet: bool
) -> None:
    """Reject bonds are locked from a seat's free verifier stake, not pulled from its wallet: a
    seat that rejects both its samples (the first bond in its seat's lock since the draw) with
    its free stake short of the second bond stakes the shortfall (minted with the devnet
    faucet) before it hands its reveal over, with no Escrow allowance, and the solver's batch
    locks the bonds. A seat whose wallet cannot top it up (no
    faucet) is not stuck: its stake transaction reverts, logged, it neither hands its reveal
    over nor sends one that would revert, and its round goes on."""
    chain, seats, solver, _ = _setup(tmp_path, first=GriefingVerifierNode)
    griefer, other = seats
    other.hand_off = False
    other.step()  # seals itself: no one-shot batch
    griefer.step()  # hands its seal over
    solver.step()  # commitVerdictsFor: every seat sealed, the reveal window is open
    me = griefer.client.address
    key, bonds = (me, int(Role.Verifier)), chain.params.challenge_bond  # the second one
    chain.locked[key] = chain.staked[key] - 3  # another job's lock: 3 wei of free stake left
    chain.balances[me] = 0
    chain.faucet_enabled = faucet
    griefer.auto_stake = False  # --no-auto-stake restores no stake, yet reject bonds are staked
    griefer.step()  # must not raise, whatever the wallet holds
    handed = griefer.state.read().jobs[1].reveal_handed_at
    assert chain.allowances.get(me, 0) == 0  # no Escrow allowance, either way
    if not faucet:
        assert handed is None and (1, me) not in chain.revealed
        logged = [r.getMessage() for r in caplog.records]
        assert any(
            "for 2 reject bond(s) of job 1" in m and "ERC20InsufficientBalance" in m for m in logged
        ), logged
        assert not any("revealVerdicts job 1" in m for m in logged), logged
        return
    assert handed is not None and solver.aggregator.pending(1) == (0, 1)
    assert griefer.client.stakes.free_stake(me, Role.Verifier) == bonds  # 3 + the shortfall
    assert chain.balances[me] == 0  # minted, then staked
    other.step()  # reveals itself
    solver.step()  # the one open reveal is in: revealVerdictsFor locks the bonds
    assert (1, me) in chain.revealed
    assert griefer.client.stakes.free_stake(me, Role.Verifier) == 0


def test_a_seat_that_cannot_stake_its_bonds_keeps_its_opening_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """P-40 with a rejecting seat whose free verifier stake is short and whose wallet cannot
    top it up (no faucet): it does not open its seal to the solver (``revealVerdictsSigned``
    would revert for it), and its round goes on; funded, it opens it the next round."""
    chain, seats, _solver, _ = _setup(tmp_path, first=GriefingVerifierNode)
    griefer, other = seats
    me = griefer.client.address
    key = (me, int(Role.Verifier))
    chain.locked[key] = chain.staked[key]  # another job's lock: no free stake left
    chain.balances[me] = 0
    chain.faucet_enabled = False
    griefer.step()  # hands its seal over
    other.step()  # hands its seal, sees both, opens its own
    caplog.set_level(logging.INFO)
    griefer.step()  # sees both seals: must not raise
    assert griefer.state.read().jobs[1].reveal_handed_at is None
    assert any("opening kept back" in r.getMessage() for r in caplog.records)
    chain.faucet_enabled = True
    griefer.step()
    assert griefer.state.read().jobs[1].reveal_handed_at is not None
