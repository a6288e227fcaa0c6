"""The inspection commands against the session Anvil, each on a job driven by
`chain.scripted_round` (no nodes): `account show` after a forced error caught a lazy verifier,
`dispute show` / `dispute list` of a bisection game, `job watch` of a job finalized in a
background thread, and `job watch` of a Committed job that cannot get verifiers.

Run: ``.venv/bin/python -m pytest tests/integration/test_cli_inspect.py``.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from eth_utils import keccak
from typer.testing import CliRunner

from chain import DEV_PRIVATE_KEYS, Anvil, ChainClient, Deployment, ProtocolParams, deploy_protocol
from chain import write_manifest as _write_manifest
from chain.scripted_round import commit, post_claims, reveal_secret, seal_and_reveal
from cli.app import app
from tests.utils.models import register_model
from veritrain.commitments import new_salt
from veritrain.enums import GameStatus, JobStatus, Role
from veritrain.merkle import checkpoint_tree

E18 = 10**18
N, K = 40, 10  # 4 segments


def _cli(anvil: Anvil, manifest: Path, *args: str) -> Any:
    return CliRunner().invoke(
        app,
        [*args, "--rpc-url", anvil.rpc_url, "--deployment", str(manifest)],
        env={"VERITRAIN_DEBUG": ""},
    )


def _json(anvil: Anvil, manifest: Path, *args: str) -> Any:
    result = _cli(anvil, manifest, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _agree(anvil: Anvil, manifest: Path, db: str, *args: str) -> Any:
    """``veritrain ARGS`` over RPC and with ``--db DB`` (through the index): the JSON and the
    text output are the same; returns the JSON."""
    rpc = _json(anvil, manifest, *args)
    assert _json(anvil, manifest, *args, "--db", db) == rpc, args
    text = _cli(anvil, manifest, *args)
    indexed = _cli(anvil, manifest, *args, "--db", db)
    assert text.exit_code == indexed.exit_code == 0, indexed.output
    assert indexed.stdout == text.stdout, (text.stdout, indexed.stdout)
    return rpc


def _rpc_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the view calls a command makes and fail any ``eth_getLogs`` of the inspection
    commands (`cli.history.events`); the indexer's own reads are not recorded."""
    from chain.transport import Transport

    calls: list[str] = []
    plain, batched = Transport.call, Transport.call_many

    def call(self: Any, contract: Any, fn_name: str, *args: Any, **kw: Any) -> Any:
        calls.append(fn_name)
        return plain(self, contract, fn_name, *args, **kw)

    def call_many(self: Any, many: Any) -> Any:
        calls.append(f"batch of {len(many)}")
        return batched(self, many)

    def no_logs(*args: Any, **kw: Any) -> Any:
        raise AssertionError("an inspection command read logs over RPC with --db")

    monkeypatch.setattr(Transport, "call", call)
    monkeypatch.setattr(Transport, "call_many", call_many)
    monkeypatch.setattr(Transport, "event_logs", no_logs)
    return calls


def _posted_job(clients: dict[int, ChainClient], p: ProtocolParams, *, verifiers: bool = True):
    """Account 1 posts a job of N steps, 2 stakes as solver, 3..8 as verifiers (when
    `verifiers`), 9 as whistleblower. Returns (job id, hashes)."""
    submitter, solver = clients[1], clients[2]
    for c in clients.values():
        c.token.faucet(1_000 * E18)
    solver.stakes.stake(Role.Solver, p.min_stake_solver)
    if verifiers:
        for i in range(3, 9):
            clients[i].stakes.stake(Role.Verifier, p.min_stake_verifier)
    clients[9].stakes.stake(Role.Whistleblower, p.min_stake_whistleblower)
    hashes = [os.urandom(32) for _ in range(N // K + 1)]
    register_model(submitter, keccak(text="m"), hashes[0])
    job_id = submitter.job_id_from(
        submitter.jobs.post_job(
            keccak(text="m"), keccak(text="s"), hashes[0], N, K, 10 * E18, "data:,"
        )
    )
    return job_id, hashes


def _committed(clients: dict[int, ChainClient], job_id: int, hashes: list[bytes]) -> bytes:
    clients[2].jobs.claim_job(job_id)
    secret = commit(clients[2], job_id, hashes, K)
    clients[1].mine(2)
    return secret


@pytest.fixture
def manifest(tmp_path: Path, protocol: Deployment) -> Path:
    return _write_manifest(protocol, tmp_path / "deployments")


def test_account_show_matches_views_and_events_after_a_forced_error(
    anvil: Anvil, protocol_artifacts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lazy verifier approves the forced error and is slashed; an honest rejecter wins the
    jackpot: `account show --json` equals the contract views and the chain's events, and
    `account show --db` prints the same for each of them (and for an unknown account)."""
    # a paying jackpot (the demo's is 0): the highest rate at which 0.001 VTT cannot be farmed
    p = ProtocolParams.demo(forced_error_rate_bps=9_999, jackpot=10**15)
    dep = deploy_protocol(ChainClient(anvil.rpc_url, DEV_PRIVATE_KEYS[0]), p, build=False)
    manifest = _write_manifest(dep, tmp_path / "jackpot")
    clients = {i: ChainClient(anvil.rpc_url, DEV_PRIVATE_KEYS[i], dep) for i in range(1, 10)}
    job_id, hashes = _posted_job(clients, p)
    secret = _committed(clients, job_id, hashes)
    clients[1].jobs.assign_verifiers(job_id)
    claims = post_claims(clients[2], job_id, hashes, secret)
    f = claims.forced_sample
    assert f is not None, "no forced error drawn (probability 1 in 10,000)"
    assigned = clients[1].jobs.get_assignment(job_id).verifiers
    lazy, honest = assigned[0], assigned[1]
    by_addr = {c.address: c for c in clients.values()}
    seal_and_reveal(job_id, by_addr, lambda v, j: v == lazy or j != f, claims=claims)
    clients[9].jobs.challenge_approval(job_id, f, lazy)
    reveal_secret(clients[2], job_id, hashes, K, secret, claims)
    receipt = clients[1].jobs.finalize(job_id)
    reader = clients[1]
    assert reader.jobs.get_job(job_id).status is JobStatus.Finalized
    # the solver appends its final state: its shares are minted then (docs/SECURITY.md P-18)
    appended = clients[2].shares.extend_lineage(
        keccak(text="m"), hashes[-1], checkpoint_tree(hashes, K).proof(len(hashes) - 1)
    )

    shown = _json(anvil, manifest, "account", "show", lazy)
    view = reader.stakes.stake_of(lazy, Role.Verifier)
    assert shown["address"] == lazy
    assert shown["roles"]["verifier"] == {
        "staked_wei": view.staked,
        "locked_wei": view.locked,
        "free_wei": view.free,
        "unbonding_wei": view.unbonding,
        "release_at": view.release_at,
        "min_stake_wei": reader.stakes.min_stake(Role.Verifier),
        "active": reader.stakes.is_active(lazy, Role.Verifier),
    }
    slashed = [
        int(e.args["slashed"])
        for e in reader.decode_receipt(receipt, "StakeSlashed")
        if e.args["account"] == lazy
    ]
    assert slashed and shown["slashed_wei"]["verifier"] == sum(slashed) == p.verifier_stake
    assert [s["job_id"] for s in shown["slashes"]] == [job_id] * len(slashed)
    assert view.staked == p.min_stake_verifier - p.verifier_stake
    assert shown["jackpots"] == [] and shown["credit_wei"] == reader.escrow.credit_of(lazy)

    index = next(i for i, c in clients.items() if c.address == honest)
    mine = _json(anvil, manifest, "account", "show", "--dev-account", str(index))
    assert mine["address"] == honest
    paid = [
        int(e.args["amount"])
        for e in reader.decode_receipt(receipt, "JackpotPaid")
        if e.args["account"] == honest
    ]
    assert paid and mine["jackpots_wei"] == sum(paid) == p.jackpot > 0
    assert mine["jackpots"][0]["job_id"] == job_id
    assert mine["credit_wei"] == reader.escrow.credit_of(honest)
    assert mine["credits_received_wei"] == mine["credit_wei"]  # nothing claimed yet
    assert mine["slashed_wei"] == {"solver": 0, "verifier": 0, "whistleblower": 0}
    assert mine["token_wei"] == reader.token.balance_of(honest)
    solver = _json(anvil, manifest, "account", "show", clients[2].address)
    minted = [
        int(e.args["shares"])
        for e in reader.decode_receipt(appended, "SharesMinted")
        if e.args["to"] == clients[2].address
    ]
    (held,) = solver["shares"]
    assert minted and held["minted"] == held["shares"] == sum(minted)
    assert held["model_id"] == "0x" + keccak(text="m").hex()
    text = _cli(anvil, manifest, "account", "show", honest)
    assert text.exit_code == 0 and honest in text.stdout and "jackpot" in text.stdout

    db = f"sqlite:///{tmp_path / 'index.sqlite'}"
    for who in (lazy, honest, clients[2].address, clients[9].address, clients[1].address):
        _agree(anvil, manifest, db, "account", "show", who)
    assert _agree(anvil, manifest, db, "account", "show", lazy)["slashes"] == shown["slashes"]
    stranger = "0x" + "ab" * 20
    assert _agree(anvil, manifest, db, "account", "show", stranger)["shares"] == []
    # a later block: the index catches up before it answers
    clients[2].stakes.request_unbond(Role.Solver, p.min_stake_solver // 2)
    later = _agree(anvil, manifest, db, "account", "show", clients[2].address)
    assert later["roles"]["solver"]["unbonding_wei"] == p.min_stake_solver // 2
    # with --db, no logs over RPC and a fixed set of views: balance, credit, 3 minimum stakes,
    # the claimable revenue of every model in one batch
    calls = _rpc_reads(monkeypatch)
    for who in (clients[2].address, stranger):
        calls.clear()
        _json(anvil, manifest, "account", "show", who, "--db", db)
        assert sorted(calls) == ["balanceOf", "batch of 1", "creditOf", *["minStake"] * 3], calls


def _hash(step: int) -> bytes:
    return keccak(text=f"state {step}")


def test_dispute_show_lists_the_game_moves_in_order_and_the_winner(
    anvil: Anvil, protocol_artifacts, tmp_path: Path
) -> None:
    params = ProtocolParams.demo(
        adjudicator="bisection", verifiers_per_job=3, samples_per_job=4, forced_error_rate_bps=0
    )
    dep = deploy_protocol(ChainClient(anvil.rpc_url, DEV_PRIVATE_KEYS[0]), params, build=False)
    manifest = _write_manifest(dep, tmp_path / "bisection")
    clients = {i: ChainClient(anvil.rpc_url, DEV_PRIVATE_KEYS[i], dep) for i in range(1, 10)}
    n, k = 32, 16  # two dissection rounds at arity 8: [0, 16] -> [0, 2] -> [0, 1]
    submitter, solver = clients[1], clients[2]
    for c in clients.values():
        c.token.faucet(1_000 * E18)
    solver.stakes.stake(Role.Solver, params.min_stake_solver)
    for i in range(3, 10):
        clients[i].stakes.stake(Role.Verifier, params.min_stake_verifier)
    hashes = [_hash(i * k) for i in range(n // k + 1)]
    register_model(submitter, keccak(text="m"), hashes[0])
    job_id = submitter.job_id_from(
        submitter.jobs.post_job(keccak(text="m"), keccak(text="s"), hashes[0], n, k, E18, "x")
    )
    solver.jobs.claim_job(job_id)
    secret = commit(solver, job_id, hashes, k)
    submitter.mine(2)
    submitter.jobs.assign_verifiers(job_id)
    claims = post_claims(solver, job_id, hashes, secret)
    assignment = submitter.jobs.get_assignment(job_id)
    first = assignment.segments.index(0)
    by_addr = {c.address: c for c in clients.values()}
    rejecter = assignment.verifiers[0]
    seal_and_reveal(job_id, by_addr, lambda v, j: not (v == rejecter and j == first))
    reveal_secret(solver, job_id, hashes, k, secret, claims)
    dispute_id = submitter.dispute_id_from(submitter.jobs.finalize(job_id))
    assert dispute_id is not None
    challenger = by_addr[rejecter]
    tree = checkpoint_tree(hashes, k)
    solver.game.post_endpoints(dispute_id, _hash(0), _hash(k), tree.proof(0), tree.proof(1))
    db = f"sqlite:///{tmp_path / 'index.sqlite'}"
    (bisecting,) = _agree(anvil, manifest, db, "dispute", "list")
    assert bisecting["phase"] == "AwaitingBisection [0, 16]", bisecting
    arity = solver.game.arity()
    while (game := submitter.game.get_game(dispute_id)).status is not GameStatus.AwaitingStep:
        posted = [_hash(p) for p in game.points(arity)[1:-1]]
        solver.game.bisect(dispute_id, game.lo, game.hi, posted)
        challenger.game.respond(dispute_id, game.lo, game.hi, 0, posted)
    running = _agree(anvil, manifest, db, "dispute", "show", str(dispute_id))
    assert running["resolved"] is False and running["winner"] is None
    assert running["phase"] == "AwaitingStep (step committee AwaitingCommittee)", running
    step_id = game.step_dispute_id
    submitter.mine(2)
    submitter.committee.draw_committee(step_id)
    members = submitter.committee.committee_of(step_id)
    salts = {m: new_salt() for m in members}
    for m in members:
        c = by_addr[m]
        c.committee.commit_vote(step_id, c.committee.vote_commitment(step_id, True, salts[m]))
    voting = _agree(anvil, manifest, db, "dispute", "show", str(dispute_id))
    assert voting["phase"] == "AwaitingStep (step committee Reveal)", voting
    step = _agree(anvil, manifest, db, "dispute", "show", str(step_id), "--committee")
    assert (step["kind"], step["job_id"], step["phase"]) == ("job segment", job_id, "Reveal")
    for m in members:
        by_addr[m].committee.reveal_vote(step_id, True, salts[m])
    submitter.committee.resolve(step_id)
    game = submitter.game.get_game(dispute_id)
    assert game.status is GameStatus.DefenderWon

    shown = _json(anvil, manifest, "dispute", "show", str(dispute_id))
    assert shown["winner"] == game.defender == solver.address
    assert (shown["challenger"], shown["job_id"], shown["kind"]) == (rejecter, job_id, "job step")
    names = [e["event"] for e in shown["timeline"]]
    moves = [n for n in names if n in ("GameOpened", "EndpointsPosted", "Bisected", "Responded")]
    assert moves == ["GameOpened", "EndpointsPosted", *["Bisected", "Responded"] * 2], names
    later = ["CommitteeDrawn", *["VoteCommitted"] * len(members)]
    later += [*["VoteRevealed"] * len(members), "DisputeResolved", "GameResolved"]
    assert [n for n in names if n in set(later)] == later, names
    assert names.index("Responded") < names.index("CommitteeDrawn")
    blocks = [e["block"] for e in shown["timeline"]]
    assert blocks == sorted(blocks)
    assert any(e["event"] == "Credited" for e in shown["timeline"])  # the won move bonds
    drawn = next(e for e in shown["timeline"] if e["event"] == "CommitteeDrawn")
    assert drawn["args"]["members"] == members
    rows = _json(anvil, manifest, "dispute", "list")
    assert [(r["id"], r["contract"], r["winner"]) for r in rows] == [
        (dispute_id, "game", solver.address)
    ]
    text = _cli(anvil, manifest, "dispute", "show", str(dispute_id))
    assert text.exit_code == 0, text.stdout
    first = f"defender dissects [0, 16] at 7 points: 2 0x{_hash(2).hex()[:8]}, 4 "
    assert first in text.stdout, text.stdout
    assert "challenger picks part 0: [0, 2]" in text.stdout, text.stdout
    assert f"defender dissects [0, 2] at 1 point: 1 0x{_hash(1).hex()[:8]}" in text.stdout
    assert _agree(anvil, manifest, db, "dispute", "show", str(dispute_id)) == shown
    assert _agree(anvil, manifest, db, "dispute", "list") == rows
    missing = _cli(anvil, manifest, "dispute", "show", str(dispute_id + 1), "--db", db)
    assert missing.exit_code == 1 and "does not exist (1 bisection games" in missing.stderr


def test_job_watch_follows_a_job_to_finalized(
    anvil: Anvil, protocol: Deployment, client_factory, manifest: Path
) -> None:
    p = protocol.params
    clients = {i: client_factory(i) for i in range(1, 10)}
    job_id, hashes = _posted_job(clients, p)
    failures: list[BaseException] = []

    def drive() -> None:
        try:
            secret = _committed(clients, job_id, hashes)
            clients[1].jobs.assign_verifiers(job_id)
            claims = post_claims(clients[2], job_id, hashes, secret)
            by_addr = {c.address: c for c in clients.values()}
            f = claims.forced_sample  # honest verifiers reject exactly the forced sample
            seal_and_reveal(job_id, by_addr, lambda v, j: j != f, claims=claims)
            reveal_secret(clients[2], job_id, hashes, K, secret, claims)
            clients[1].jobs.finalize(job_id)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            failures.append(exc)

    thread = threading.Thread(target=drive, daemon=True)
    thread.start()
    result = _cli(anvil, manifest, "job", "watch", str(job_id), "--interval", "0.2",
                  "--timeout", "60")  # fmt: skip
    thread.join(30)
    assert not failures, failures
    assert result.exit_code == 0, result.output
    out = result.stdout
    phases = [
        "claimed by solver " + clients[2].address,
        "checkpoints committed",
        "verifiers assigned",
        "claims posted",
        "verdict sealed by",
        "verdict revealed by",
        "secret revealed: forced error",
        "finalized: reward",
    ]
    at = [out.find(p) for p in phases]
    assert -1 not in at and at == sorted(at), out
    assert out.rstrip().endswith("Finalized"), out
    statuses = [line.split("  status ")[1] for line in out.splitlines() if "  status " in line]
    assert statuses and statuses[-1].endswith("Finalized"), statuses
    assert ": reject" in out  # the forced sample, as revealed


def test_job_watch_explains_why_a_committed_job_waits(
    anvil: Anvil, protocol: Deployment, client_factory, manifest: Path
) -> None:
    clients = {i: client_factory(i) for i in range(1, 10)}
    job_id, hashes = _posted_job(clients, protocol.params, verifiers=False)
    secret = _committed(clients, job_id, hashes)
    block = clients[1].block_number()
    result = _cli(anvil, manifest, "job", "watch", str(job_id), "--timeout", "2",
                  "--interval", "0.5")  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "waiting: not enough active verifiers" in result.stdout, result.stdout
    assert result.stdout.count("waiting:") == 1  # once per reason
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "still Committed" in lines[0], result.stderr
    assert clients[1].block_number() == block  # the simulation mined nothing
    # Verifying: the verifiers that have not sealed, by name
    for i in range(3, 9):
        clients[i].stakes.stake(Role.Verifier, protocol.params.min_stake_verifier)
    clients[1].jobs.assign_verifiers(job_id)
    post_claims(clients[2], job_id, hashes, secret)
    result = _cli(anvil, manifest, "job", "watch", str(job_id), "--timeout", "0.3")
    assert result.exit_code == 1, result.output
    assigned = clients[1].jobs.get_assignment(job_id).verifiers
    assert f"waiting: verdicts not sealed by {', '.join(assigned)} (deadline" in result.stdout


def test_dispute_show_of_a_committee_dispute(
    anvil: Anvil,
    protocol: Deployment,
    client_factory,
    manifest: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A verifier rejects the forced sample with a made-up end: the sample stays disputed
    before the committee (docs/FORCED_ERRORS.md, P-9), which finds the segment valid. `dispute
    show` names that verifier as the challenger, the solver as the winner, and lists the draw,
    each vote and the rejecter's slash in chain order."""
    p = protocol.params
    clients = {i: client_factory(i) for i in range(1, 10)}
    job_id, hashes = _posted_job(clients, p)
    secret = _committed(clients, job_id, hashes)
    clients[1].jobs.assign_verifiers(job_id)
    claims = post_claims(clients[2], job_id, hashes, secret)
    f = claims.forced_sample
    assert f is not None
    guesser = clients[1].jobs.get_assignment(job_id).verifiers[0]
    by_addr = {c.address: c for c in clients.values()}
    made_up = keccak(b"a replay that never ran")
    seal_and_reveal(
        job_id,
        by_addr,
        lambda v, j: j != f,
        claims=claims,
        ends_of=lambda v, j: made_up if v == guesser else claims.forced_true_end,
    )
    reveal_secret(clients[2], job_id, hashes, K, secret, claims)
    anyone = clients[1]
    dispute_id = anyone.dispute_id_from(anyone.jobs.finalize(job_id))
    assert dispute_id is not None
    db = f"sqlite:///{tmp_path / 'index.sqlite'}"
    open_row = _agree(anvil, manifest, db, "dispute", "show", str(dispute_id))
    assert (open_row["phase"], open_row["winner"]) == ("AwaitingCommittee", None)
    waits = _cli(anvil, manifest, "job", "watch", str(job_id), "--timeout", "0.3")
    assert waits.exit_code == 1, waits.output
    assert f"waiting: dispute {dispute_id} (arbitration committee): AwaitingCommittee" in (
        waits.stdout
    ), waits.stdout
    anyone.mine(2)
    anyone.committee.draw_committee(dispute_id)
    members = anyone.committee.committee_of(dispute_id)
    salts = {m: new_salt() for m in members}
    committing = _agree(anvil, manifest, db, "dispute", "show", str(dispute_id))
    assert committing["phase"] == "Commit" and committing["challenger"] == guesser, committing
    calls = _rpc_reads(monkeypatch)  # with --db: no logs, the voting phases in one batch
    for args in (("dispute", "list"), ("dispute", "show", str(dispute_id))):
        calls.clear()
        _json(anvil, manifest, *args, "--db", db)
        assert len(calls) == 1 and calls[0].startswith("batch of"), (args, calls)
    monkeypatch.undo()
    for m in members:
        c = by_addr[m]
        c.committee.commit_vote(dispute_id, c.committee.vote_commitment(dispute_id, True, salts[m]))
    for m in members:
        by_addr[m].committee.reveal_vote(dispute_id, True, salts[m])
    anyone.committee.resolve(dispute_id)
    assert anyone.committee.get_dispute(dispute_id).segment_valid is True

    shown = _json(anvil, manifest, "dispute", "show", str(dispute_id))
    assert (shown["kind"], shown["job_id"], shown["contract"]) == (
        "job segment",
        job_id,
        "committee",
    )
    assert shown["challenger"] == guesser
    assert shown["winner"] == shown["defender"] == clients[2].address
    names = [e["event"] for e in shown["timeline"]]
    votes = [*["VoteCommitted"] * len(members), *["VoteRevealed"] * len(members)]
    expected = ["JobDisputed", "CommitteeDrawn", *votes, "DisputeResolved"]
    assert [n for n in names if n in set(expected)] == expected, names
    assert names[0] in ("DisputeOpened", "JobDisputed"), names
    slashes = [e["args"] for e in shown["timeline"] if e["event"] == "StakeSlashed"]
    # its reject bond (locked from its verifier stake) and then its seat's stake
    assert [(s["account"], s["slashed"]) for s in slashes] == [
        (guesser, p.challenge_bond),
        (guesser, p.verifier_stake),
    ]
    (row,) = _json(anvil, manifest, "dispute", "list")
    assert {k: row[k] for k in ("id", "winner", "challenger")} == {
        "id": dispute_id,
        "winner": clients[2].address,
        "challenger": guesser,
    }
    assert _agree(anvil, manifest, db, "dispute", "show", str(dispute_id)) == shown
    assert _agree(anvil, manifest, db, "dispute", "list") == [row]
    assert row["phase"].startswith("Resolved: valid (")


def test_dispute_list_and_show_of_a_round_claim(
    anvil: Anvil, protocol: Deployment, client_factory, manifest: Path, tmp_path: Path
) -> None:
    """A run's round claim (docs/RUNS.md) is challenged: `dispute list` shows it as a run
    round claim with its claimant and challenger; once the committee rules the claim wrong,
    `dispute show` names the challenger as the winner, as the chain's `ClaimRuled` does."""
    from veritrain.spec import contribution_spec_hash

    p = protocol.params
    clients = {i: client_factory(i) for i in range(1, 10)}
    owner, challenger = clients[1], clients[9]
    for c in clients.values():
        c.token.faucet(1_000 * E18)
    for i in range(3, 9):
        clients[i].stakes.stake(Role.Verifier, p.min_stake_verifier)
    start = os.urandom(32)
    model = keccak(text="run model")
    register_model(owner, model, start)
    run_hash = keccak(text="a run")
    run_id = owner.runs.run_id_from(owner.runs.open_run(model, run_hash, start, 1, 1, N, "x"))
    job_id = owner.runs.job_id_from(owner.runs.post_contribution(run_id, 0, start, K, E18))
    assert owner.jobs.get_job(job_id).spec_hash == contribution_spec_hash(run_hash, 0, 0)
    # posted without a URI: the run's, published at openRun, with the seat's fragment
    assert owner.jobs.spec_uri(job_id) == "x#contribution=0,0"
    owner.jobs.cancel_job(job_id)  # settled: the round may be proposed
    owner.runs.propose_round(run_id, keccak(text="a wrong state"), 0)
    challenger.runs.challenge_round(run_id)
    dispute_id = owner.runs.get_round(run_id, 0).dispute_id
    assert dispute_id != 0
    db = f"sqlite:///{tmp_path / 'index.sqlite'}"
    (row,) = _agree(anvil, manifest, db, "dispute", "list")
    assert {k: row[k] for k in ("id", "kind", "run_id", "round", "challenger", "defender")} == {
        "id": dispute_id,
        "kind": "run round claim",
        "run_id": run_id,
        "round": 0,
        "challenger": challenger.address,
        "defender": owner.address,
    }
    assert (row["phase"], row["winner"]) == ("AwaitingCommittee", None)
    owner.mine(2)
    owner.committee.draw_committee(dispute_id)
    members = owner.committee.committee_of(dispute_id)
    by_addr = {c.address: c for c in clients.values()}
    salts = {m: new_salt() for m in members}
    for m in members:
        c = by_addr[m]
        c.committee.commit_vote(
            dispute_id, c.committee.vote_commitment(dispute_id, False, salts[m])
        )
    for m in members:
        by_addr[m].committee.reveal_vote(dispute_id, False, salts[m])
    receipt = owner.committee.resolve(dispute_id)
    (ruled,) = owner.decode_receipt(receipt, "ClaimRuled")

    shown = _json(anvil, manifest, "dispute", "show", str(dispute_id))
    assert shown["winner"] == ruled.args["winner"] == challenger.address
    names = [e["event"] for e in shown["timeline"]]
    expected = ["RoundChallenged", "CommitteeDrawn", "DisputeResolved", "ClaimRuled"]
    assert [n for n in names if n in set(expected)] == expected, names
    text = _cli(anvil, manifest, "dispute", "show", str(dispute_id))
    assert f"run {run_id} round 0" in text.stdout and "claim ruled invalid" in text.stdout
    assert _agree(anvil, manifest, db, "dispute", "show", str(dispute_id)) == shown
    (ruled_row,) = _agree(anvil, manifest, db, "dispute", "list")
    assert ruled_row["winner"] == challenger.address
    _agree(anvil, manifest, db, "account", "show", challenger.address)


@pytest.mark.parametrize(
    "args",
    [("account", "show", "0x" + "ab" * 20), ("dispute", "list"), ("dispute", "show", "1")],
)
def test_a_bad_db_url_is_one_line_on_stderr(
    anvil: Anvil, manifest: Path, args: tuple[str, ...]
) -> None:
    bad = _cli(anvil, manifest, *args, "--db", "nosuchdb://x")
    lines = [line for line in bad.stderr.splitlines() if line.strip()]
    assert bad.exit_code != 0 and bad.stdout == "", bad.output
    assert len(lines) == 1 and "cannot use the database URL" in lines[0], bad.stderr
    assert "Traceback" not in bad.output


def test_job_list_through_the_index_is_the_chain_s_job_list(
    anvil: Anvil, protocol: Deployment, client_factory, manifest: Path, tmp_path: Path
) -> None:
    """`job list --db URL` (index brought up to date, then one query) prints what the per-job
    view calls print, for jobs Open, Cancelled and Committed; a second call reads only the
    blocks since, and a job posted in between shows up. A bad URL is one line."""
    clients = {i: client_factory(i) for i in range(1, 10)}
    _, hashes = _posted_job(clients, protocol.params)
    submitter = clients[1]

    def post() -> int:  # another spec each time: one live job per (model, training)
        spec = keccak(text=f"spec {submitter.jobs.job_count()}")
        receipt = submitter.jobs.post_job(keccak(text="m"), spec, hashes[0], N, K, 10 * E18, "x")
        return int(submitter.job_id_from(receipt))

    submitter.jobs.cancel_job(post())
    _committed(clients, post(), hashes)
    db = f"sqlite:///{tmp_path / 'index.sqlite'}"
    from_chain = _json(anvil, manifest, "job", "list")["jobs"]
    assert [j["status"] for j in from_chain] == ["Open", "Cancelled", "Committed"]
    assert _json(anvil, manifest, "job", "list", "--db", db)["jobs"] == from_chain
    post()
    again = _json(anvil, manifest, "job", "list", "--db", db)["jobs"]
    assert again == _json(anvil, manifest, "job", "list")["jobs"] and len(again) == 4
    bad = _cli(anvil, manifest, "job", "list", "--db", "nosuchdb://x")
    assert bad.exit_code != 0 and bad.output.count("\n") == 1 and "Traceback" not in bad.output
