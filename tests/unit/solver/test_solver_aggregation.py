"""The solver's hand-off routes and batches (`solver.aggregation`) against the fake protocol:
the routes refuse a seal not signed by its verifier, a non-seat, a reveal that does not open
the seat's seal, a reveal before the seal, a reveal whose reject bonds the seat's free verifier
stake does not cover (whatever its wallet and Escrow allowance), malformed and oversize bodies
and unknown jobs, each with a 4xx and one line; the pending seals are served to the seats; the
duty sends one ``revealVerdictsSigned`` once every seal and opening is in, batches the seals
alone after half the hand-off wait (or at once when a seat sealed itself), and leaves out seats
the chain shows done or whose free verifier stake no longer covers their bonds.

Run: ``.venv/bin/python -m pytest tests/unit/solver/test_solver_aggregation.py -q``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from eth_account import Account
from fastapi.testclient import TestClient

from chain.seals import sign_seal
from solver.node import SolverNode
from tests.utils.fake_chain import FakeChain
from tests.utils.fake_round import FAKE_CHAIN_ID, FAKE_ROUND
from tests.utils.node_fixtures import (
    SOLVER,
    aggregating_http,
    run_solver_to_commit,
    seat_accounts,
)
from veritrain.commitments import verdict_commitment
from veritrain.enums import Role
from veritrain.hexutil import to_hex
from veritrain.wire import MAX_HANDOFF_BYTES, hand_off_cutoff


class _Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def _setup(tmp: Path) -> tuple[FakeChain, list[Any], SolverNode, TestClient, bytes, _Clock]:
    chain = FakeChain()
    chain.forced_segments = [1, 3]
    seats = seat_accounts(chain)
    for seat in seats:
        chain.staked[(seat.address, 1)] = 10
    solver = run_solver_to_commit(chain, tmp)
    clock = _Clock()
    solver.aggregator.clock = clock
    sid = chain.client(SOLVER).jobs.submission_of(1)
    return chain, seats, solver, aggregating_http(solver), sid, clock


def _seal_body(account: Any, sid: bytes, commitment: bytes, verifier: str | None = None) -> dict:
    seal = sign_seal(account, FAKE_CHAIN_ID, FAKE_ROUND, sid, commitment)
    return {
        "verifier": verifier or account.address,
        "commitment": to_hex(commitment),
        "signature": to_hex(seal.signature),
    }


def _opened(chain: FakeChain, account: Any, sid: bytes) -> dict:
    """Seal a seat's approve-all ends on chain itself; the reveal body that opens it."""
    ends = list(chain.claims[1].end_hashes)
    salt = os.urandom(32)
    commitment = verdict_commitment(1, account.address, ends, salt)
    chain.client(account.address).round.commit_verdicts(sid, commitment)
    return {"verifier": account.address, "ends": [to_hex(e) for e in ends], "salt": to_hex(salt)}


def _to_seal_batch(chain: FakeChain, solver: SolverNode, before: int = 0) -> None:
    """Chain time `before` seconds ahead of the solver's seal batch: `HANDOFF_WAIT` before the
    seats' own fallback at `hand_off_cutoff`."""
    cutoff = hand_off_cutoff(chain.jobs[1].verdict_deadline, chain.params.verdict_window)
    chain.now = cutoff - int(solver.aggregator.wait) - before


def _refused(response: Any, status: int, words: str) -> None:
    assert response.status_code == status, response.text
    detail = response.json()["detail"]
    assert isinstance(detail, str) and "\n" not in detail and words in detail, detail


def _leave_free_stake(chain: FakeChain, seat: str, free: int) -> None:
    """Lock all but `free` wei of a seat's verifier stake, as another job's seat would."""
    key = (seat, int(Role.Verifier))
    chain.locked[key] = chain.staked[key] - free


def test_the_routes_refuse_bad_hand_offs_with_a_4xx_and_one_line(tmp_path: Path) -> None:
    chain, (a, b), solver, http, sid, _ = _setup(tmp_path)
    commitment = os.urandom(32)
    outsider = Account.from_key(b"\xee" * 32)
    # signed by another key than the verifier it names
    _refused(
        http.post("/jobs/1/seals", json=_seal_body(b, sid, commitment, a.address)),
        400,
        "not signed by",
    )
    _refused(http.post("/jobs/1/seals", json=_seal_body(outsider, sid, commitment)), 403, "seat")
    _refused(http.post("/jobs/9/seals", json=_seal_body(a, sid, commitment)), 404, "unknown job")
    bad = {**_seal_body(a, sid, commitment), "commitment": "0x12"}
    _refused(http.post("/jobs/1/seals", json=bad), 400, "commitment")
    _refused(http.post("/jobs/1/seals", content=b"{not json"), 400, "SealHandOff")
    big = b'{"verifier": "' + b"0" * MAX_HANDOFF_BYTES + b'"}'
    _refused(http.post("/jobs/1/seals", content=big), 413, "at most")
    # a reveal before the seat's seal is on chain, then one that does not open it
    reveal = {"verifier": a.address, "ends": [to_hex(os.urandom(32))] * 2, "salt": to_hex(sid)}
    _refused(http.post("/jobs/1/reveals", json=reveal), 409, "no seal")
    opened = _opened(chain, a, sid)
    wrong = {**opened, "salt": to_hex(os.urandom(32))}
    _refused(http.post("/jobs/1/reveals", json=wrong), 400, "do not open")
    _refused(
        http.post("/jobs/1/reveals", json={**opened, "ends": opened["ends"][:1]}), 400, "1 ends"
    )
    _refused(http.post("/jobs/1/seals", json=_seal_body(a, sid, commitment)), 409, "already")
    assert solver.aggregator.pending(1) == (0, 0)  # nothing refused was kept
    # and the good ones are taken
    assert http.post("/jobs/1/reveals", json=opened).json()["pending"] == 1
    assert http.post("/jobs/1/seals", json=_seal_body(b, sid, commitment)).json()["pending"] == 1


def _sealed_off_chain(chain: FakeChain, account: Any, sid: bytes) -> tuple[dict, dict]:
    """A seat's approve-all seal (signed, not on chain) and the reveal body that opens it."""
    ends = list(chain.claims[1].end_hashes)
    salt = os.urandom(32)
    commitment = verdict_commitment(1, account.address, ends, salt)
    reveal = {"verifier": account.address, "ends": [to_hex(e) for e in ends], "salt": to_hex(salt)}
    return _seal_body(account, sid, commitment), reveal


def test_every_seal_and_opening_in_goes_in_one_call(tmp_path: Path) -> None:
    """P-40: the seals pending are served to the seats; once every seat's seal and opening
    are in, one ``revealVerdictsSigned`` seals and reveals them all."""
    chain, (a, b), solver, http, sid, _ = _setup(tmp_path)
    (seal_a, open_a), (seal_b, open_b) = (_sealed_off_chain(chain, s, sid) for s in (a, b))
    assert http.post("/jobs/1/seals", json=seal_a).status_code == 200
    assert http.get("/jobs/1/seals").json() == {"job_id": 1, "seals": [seal_a]}
    assert http.post("/jobs/1/seals", json=seal_b).status_code == 200
    assert len(http.get("/jobs/1/seals").json()["seals"]) == 2
    _refused(http.get("/jobs/9/seals"), 404, "unknown job")
    assert http.post("/jobs/1/reveals", json=open_a).status_code == 200  # opens a pending seal
    solver.aggregator.flush(solver, 1)
    assert chain.count("revealVerdictsSigned") == 0  # b's opening is still out
    assert chain.count("commitVerdictsFor") == 0  # and no time passed
    assert http.post("/jobs/1/reveals", json=open_b).status_code == 200
    solver.aggregator.flush(solver, 1)
    assert chain.count("revealVerdictsSigned") == 1
    assert {(1, a.address), (1, b.address)} <= chain.revealed
    assert solver.aggregator.pending(1) == (0, 0)


def test_seals_without_their_openings_go_before_the_seats_fall_back(tmp_path: Path) -> None:
    chain, (a, b), solver, http, sid, clock = _setup(tmp_path)
    for seat in (a, b):
        http.post("/jobs/1/seals", json=_seal_body(seat, sid, os.urandom(32)))
    _to_seal_batch(chain, solver, before=1)
    solver.aggregator.flush(solver, 1)
    assert chain.count("commitVerdictsFor") == 0  # waiting for the openings
    _to_seal_batch(chain, solver)
    solver.aggregator.flush(solver, 1)
    assert chain.count("commitVerdictsFor") == 1
    assert {(1, a.address), (1, b.address)} <= set(chain.sealed)
    assert solver.aggregator.pending(1) == (0, 0)


def test_a_one_shot_call_that_reverts_keeps_the_seals_for_a_seal_batch(tmp_path: Path) -> None:
    """b rejects a sample and its free verifier stake falls below the bond after it handed its
    opening over (another job locked it): the one-shot call reverts (no seat may be skipped
    there); the openings are dropped, the seals kept, and they go in a ``commitVerdictsFor``
    after half the wait."""
    chain, (a, b), solver, http, sid, clock = _setup(tmp_path)
    seal_a, open_a = _sealed_off_chain(chain, a, sid)
    ends = list(chain.claims[1].end_hashes)
    own = chain.sample_masks[(1, b.address)]
    for j in _two_own_samples(own):
        ends[j] = os.urandom(32)  # b rejects two own samples: one bond beyond its seat's lock
    salt = os.urandom(32)
    seal_b = _seal_body(b, sid, verdict_commitment(1, b.address, ends, salt))
    open_b = {"verifier": b.address, "ends": [to_hex(e) for e in ends], "salt": to_hex(salt)}
    for body in (seal_a, seal_b):
        assert http.post("/jobs/1/seals", json=body).status_code == 200
    for body in (open_a, open_b):
        assert http.post("/jobs/1/reveals", json=body).status_code == 200, body
    _leave_free_stake(chain, b.address, chain.params.challenge_bond - 1)  # after the hand-off
    solver.aggregator.flush(solver, 1)
    assert chain.count("revealVerdictsSigned") == 0 and chain.revealed == set()
    assert solver.aggregator.pending(1) == (2, 0)
    _to_seal_batch(chain, solver)
    solver.aggregator.flush(solver, 1)
    assert chain.count("commitVerdictsFor") == 1


def test_a_partial_batch_goes_before_the_seats_fall_back(tmp_path: Path) -> None:
    """b never hands its seal over: a's goes alone, `HANDOFF_WAIT` before a would send it
    itself (however long a waited: the seats wait until a third of the window is left)."""
    chain, (a, _b), solver, http, sid, clock = _setup(tmp_path)
    http.post("/jobs/1/seals", json=_seal_body(a, sid, os.urandom(32)))
    clock.t += 10 * solver.aggregator.wait  # long past half the wait: no longer the rule
    _to_seal_batch(chain, solver, before=1)
    solver.aggregator.flush(solver, 1)
    assert chain.count("commitVerdictsFor") == 0
    _to_seal_batch(chain, solver)
    solver.aggregator.flush(solver, 1)
    (tx,) = [args for _, fn, args in chain.txs if fn == "commitVerdictsFor"]
    assert tx == (1, (a.address,))


@pytest.mark.parametrize("kind", ["seals", "reveals"])
def test_the_batch_leaves_out_seats_the_chain_shows_done(tmp_path: Path, kind: str) -> None:
    """Both seats hand off, then b sends its own transaction first: the batch holds a only,
    and b's entry is dropped."""
    chain, (a, b), solver, http, sid, _ = _setup(tmp_path)
    if kind == "seals":
        for seat in (a, b):
            http.post("/jobs/1/seals", json=_seal_body(seat, sid, os.urandom(32)))
        chain.client(b.address).round.commit_verdicts(sid, os.urandom(32))
        fn = "commitVerdictsFor"
    else:
        bodies = [_opened(chain, seat, sid) for seat in (a, b)]
        for body in bodies:
            assert http.post("/jobs/1/reveals", json=body).status_code == 200
        ends = [bytes.fromhex(e[2:]) for e in bodies[1]["ends"]]
        chain.client(b.address).round.reveal_verdicts(
            sid, ends, bytes.fromhex(bodies[1]["salt"][2:])
        )
        fn = "revealVerdictsFor"
    solver.aggregator.flush(solver, 1)
    (tx,) = [args for _, f, args in chain.txs if f == fn]
    assert tx == (1, (a.address,))
    assert solver.aggregator.pending(1) == (0, 0)
    key = (1, a.address)
    assert key in (chain.sealed if kind == "seals" else chain.revealed)


def test_a_hand_off_that_comes_in_while_the_duty_reads_the_chain_is_kept(
    tmp_path: Path,
) -> None:
    """b's seal arrives while the duty reads the chain for a's: it is not dropped as done (it
    was: on Anvil the late seat's hand-off vanished and the seat fell back after its wait), and
    the next round batches both."""
    chain, (a, b), solver, http, sid, clock = _setup(tmp_path)
    http.post("/jobs/1/seals", json=_seal_body(a, sid, os.urandom(32)))
    jobs = solver.aggregator.client.jobs
    read = jobs.get_assignment
    late = _seal_body(b, sid, os.urandom(32))

    def assignment_while_b_hands_off(job_id: int) -> Any:
        jobs.get_assignment = read  # type: ignore[method-assign]
        assert http.post("/jobs/1/seals", json=late).status_code == 200
        return read(job_id)

    jobs.get_assignment = assignment_while_b_hands_off  # type: ignore[method-assign]
    solver.aggregator.flush(solver, 1)
    assert solver.aggregator.pending(1) == (2, 0)
    _to_seal_batch(chain, solver)  # no openings came: the seals go on their own
    solver.aggregator.flush(solver, 1)
    (tx,) = [args for _, fn, args in chain.txs if fn == "commitVerdictsFor"]
    assert sorted(tx[1]) == sorted((a.address, b.address))


def _two_own_samples(own: int) -> list[int]:
    """The first two samples of a seat's own draw (bit j of ``own``): rejecting both locks one
    bond at the reveal, the first being in the seat's lock since its draw."""
    picked = [j for j in range(own.bit_length()) if (own >> j) & 1][:2]
    assert len(picked) == 2, "a seat of two samples"
    return picked


def _rejecting_reveal(chain: FakeChain, seat: Any, sid: bytes) -> tuple[dict, list[bytes]]:
    """Seal on chain, as `seat`, ends that reject two samples of its own draw (one bond locked
    at the reveal); the reveal body that opens the seal, and the ends."""
    own = chain.sample_masks[(1, seat.address)]
    ends = list(chain.claims[1].end_hashes)
    for j in _two_own_samples(own):
        ends[j] = os.urandom(32)  # a reject on its own sample
    salt = os.urandom(32)
    client = chain.client(seat.address)
    client.round.commit_verdicts(sid, verdict_commitment(1, seat.address, ends, salt))
    body = {"verifier": seat.address, "ends": [to_hex(e) for e in ends], "salt": to_hex(salt)}
    return body, ends


def test_a_reveal_whose_reject_bonds_the_seat_does_not_cover_is_refused(tmp_path: Path) -> None:
    """A seat that rejects two of its own samples must hold the second bond in free verifier stake
    (the JobManager locks it from there) before the aggregator takes its reveal: refused with
    409 and one line while it is one wei short, taken after `cover_reveal_bonds` staked the
    shortfall from its wallet. (The contract skips such a seat in a batch anyway,
    docs/SECURITY.md P-38; this tells the seat at once.)"""
    chain, (a, _), solver, http, sid, _ = _setup(tmp_path)
    body, ends = _rejecting_reveal(chain, a, sid)
    bond = chain.params.challenge_bond
    _leave_free_stake(chain, a.address, bond - 1)
    chain.balances[a.address] = 10 * bond
    _refused(http.post("/jobs/1/reveals", json=body), 409, "not covered by its free verifier stake")
    assert solver.aggregator.pending(1) == (0, 0)
    assert chain.client(a.address).round.cover_reveal_bonds(sid, ends) == 2  # two rejects
    assert chain.balances[a.address] == 10 * bond - 1  # the shortfall, staked
    assert chain.client(a.address).stakes.free_stake(a.address, Role.Verifier) == bond
    assert http.post("/jobs/1/reveals", json=body).json()["pending"] == 1


def test_the_bonds_gate_is_the_free_verifier_stake_not_the_wallet(tmp_path: Path) -> None:
    """Reject bonds are locked from stake, not pulled from the wallet: a seat whose balance and
    Escrow allowance are ample but whose free verifier stake is short of its bond is refused
    (409), and one whose free verifier stake covers it is taken with no balance and no Escrow
    allowance at all."""
    chain, (a, b), solver, http, sid, _ = _setup(tmp_path)
    bond = chain.params.challenge_bond
    body_a, _ = _rejecting_reveal(chain, a, sid)
    body_b, _ = _rejecting_reveal(chain, b, sid)
    _leave_free_stake(chain, a.address, bond - 1)
    chain.balances[a.address] = chain.allowances[a.address] = 100 * bond
    _leave_free_stake(chain, b.address, bond)
    chain.balances[b.address] = chain.allowances[b.address] = 0
    _refused(http.post("/jobs/1/reveals", json=body_a), 409, "free verifier stake")
    assert http.post("/jobs/1/reveals", json=body_b).json()["pending"] == 1
    assert solver.aggregator.pending(1) == (0, 1)


def test_the_fake_batch_skips_a_seat_whose_free_stake_fell_short_after_the_hand_off(
    tmp_path: Path,
) -> None:
    """As the contract (P-38): the batch records the other seats, locking each one's bond
    from its stake, and skips the one whose free verifier stake no longer covers its bond;
    that seat can still reveal itself once it tops its stake up."""
    chain, (a, b), solver, http, sid, _ = _setup(tmp_path)
    bond = chain.params.challenge_bond
    bodies = []
    for seat in (a, b):
        body, ends = _rejecting_reveal(chain, seat, sid)
        assert chain.client(seat.address).round.cover_reveal_bonds(sid, ends) == 2  # two rejects
        assert http.post("/jobs/1/reveals", json=body).status_code == 200
        bodies.append((ends, bytes.fromhex(body["salt"][2:])))
    _leave_free_stake(chain, a.address, bond - 1)  # another job locks a's stake after the hand-off
    locked_a = chain.locked[(a.address, int(Role.Verifier))]
    solver.aggregator.flush(solver, 1)
    assert (1, b.address) in chain.revealed and (1, a.address) not in chain.revealed
    assert chain.locked[(b.address, int(Role.Verifier))] == bond  # b's bond, locked
    assert chain.locked[(a.address, int(Role.Verifier))] == locked_a  # nothing of a's
    ends, salt = bodies[0]
    chain.balances[a.address] = bond
    chain.client(a.address).round.reveal_verdicts(sid, ends, salt)  # tops its stake up first
    assert (1, a.address) in chain.revealed
    assert chain.client(a.address).stakes.free_stake(a.address, Role.Verifier) == 0
