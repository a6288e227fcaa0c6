"""Nodes on a real Anvil: the honest lifecycle (the seats' seals and reveals batched by the
solver), and a solver killed mid-job that finishes.

Every node runs as a thread of this process with its own `ChainClient`; the solver serves its
checkpoints over real HTTP on a loopback port.
Run: ``.venv/bin/python -m pytest tests/integration/test_nodes_lifecycle.py -m anvil``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from adversary.verifier import verifier_node
from chain import Anvil, ChainClient
from solver.node import Phase, SolverNode
from tests.utils.node_harness import (
    SOLVER,
    V1,
    V2,
    V3,
    WHISTLEBLOWER,
    Network,
    free_port,
    open_network,
    tiny_spec,
)
from veritrain.enums import JobStatus, Role
from veritrain.lineage import compute_per_step
from whistleblower.node import WhistleblowerNode

pytestmark = [pytest.mark.anvil, pytest.mark.slow, pytest.mark.timeout(400)]


@pytest.fixture
def net(anvil: Anvil, contracts_out: Path, tmp_path: Path) -> Iterator[Network]:
    yield from open_network(anvil, tmp_path)


def _start_checkers(
    net: Network, lazy: tuple[int, ...] = (), hand_off_wait: float | None = None
) -> None:
    for i in (V1, V2, V3):
        node = verifier_node(net.client(i), net.tmp / f"v{i}", lazy=i in lazy, poll_interval=0.5)
        if hand_off_wait is not None:
            node.hand_off_wait = hand_off_wait
        net.start(node)
    net.start(WhistleblowerNode(net.client(WHISTLEBLOWER), net.tmp / "wb", poll_interval=0.5))
    net.wait_active(int(Role.Verifier), V1, V2, V3)


def _assert_batched_by(reader: ChainClient, solver: str) -> None:
    """The seats handed their seals and reveals to the honest solver: every seal and every
    reveal came in one ``revealVerdictsSigned`` (every seat's seal and opening at once,
    docs/SECURITY.md P-40), sent by the solver; the chain stores none of the seals and emits
    none (each is the hash of the opening in the call, docs/SECURITY.md "Gas cuts")."""
    rnd = reader.round.contract
    assert reader.event_logs(rnd, ["VerdictsCommitted"], 0, reader.block_number()) == []
    for event in ("VerdictsRevealed",):
        events = reader.event_logs(rnd, [event], 0, reader.block_number())
        assert len(events) == 3, events
        (tx_hash,) = {e.tx_hash for e in events}
        _, data = reader.transaction_call(tx_hash)
        fn, _ = rnd.decode_function_input(data)
        assert fn.fn_name == "revealVerdictsSigned"
        assert reader.w3.eth.get_transaction(tx_hash)["from"] == solver
        for e in events:
            sealed, revealed = reader.round.verdict_commitment_of(
                e.args["submissionId"].to_bytes(32, "big")
                if isinstance(e.args["submissionId"], int)
                else e.args["submissionId"],
                e.args["verifier"],
            )
            assert sealed == b"\x00" * 32 and revealed


def test_honest_job_is_finalized_paid_and_minted(net: Network) -> None:
    # a seat replaying late on a loaded machine must not make the others fall back: every seat
    # waits for the solver until a third of the window is left (the cap; a seal's default),
    # and the solver waits for every seal and opening until its wait before that
    _start_checkers(net, hand_off_wait=net.params.verdict_window)
    spec = tiny_spec()
    job_id = net.post_job(spec)
    solver_client = net.client(SOLVER)
    solver = SolverNode(
        solver_client, net.tmp / "solver", "127.0.0.1", free_port(), poll_interval=0.5
    )
    net.start(solver)
    assert (
        net.wait_status(job_id, JobStatus.Finalized, JobStatus.Rejected, JobStatus.Disputed)
        is JobStatus.Finalized
    )
    reader = net.client(0)
    _assert_batched_by(reader, solver_client.address)
    model_id = spec.model_id_hash()
    assert reader.shares.is_lineage_job(job_id)  # the first job from the head: the slot's
    # the solver puts its final state on the model's lineage: the head advances and the shares
    # are minted then, one per FLOP of verified compute (docs/SECURITY.md P-18)
    net.wait_for("lineage extended", lambda: len(reader.shares.lineage(model_id)) == 1)
    (entry,) = reader.shares.lineage(model_id)
    assert entry.job_id == job_id and reader.shares.head_of(model_id) == entry.state
    flops = spec.total_steps * compute_per_step(spec)
    assert reader.shares.balance_of(model_id, solver_client.address) == flops
    # the nodes claim their credit by themselves; the reward and the fees are restaked (added
    # to each party's stake at the finalize, not paid to the wallet)
    net.wait_for(
        "solver credit claimed", lambda: reader.escrow.credit_of(solver_client.address) == 0
    )
    for i in (V1, V2, V3):
        stake = reader.stakes.stake_of(net.client(i).address, Role.Verifier)
        assert stake.locked == 0
        assert stake.staked == net.params.min_stake_verifier + net.params.verifier_fee
    assert reader.stakes.stake_of(solver_client.address, Role.Solver).locked == 0


def test_solver_killed_mid_training_restarts_and_finishes(net: Network) -> None:
    _start_checkers(net)
    spec = tiny_spec(seed=11)
    job_id = net.post_job(spec)
    port = free_port()
    data = net.tmp / "solver"
    first = SolverNode(net.client(SOLVER), data, "127.0.0.1", port, poll_interval=0.5)
    puts = {"n": 0}
    original = first.store.put

    def put_then_die(blob: bytes | bytearray, *, durable: bool = True) -> bytes:
        puts["n"] += 1
        if puts["n"] == 3:
            first._stop.set()  # the process "dies" while checkpoint 20 is written
        return original(blob, durable=durable)

    first.store.put = put_then_die  # type: ignore[method-assign]
    net.start(first)
    net.wait_for("first solver to stop", lambda: first.stopping, timeout=120)
    net.stop(first)
    rec = first.job_record(job_id)
    # checkpoint 30 may be made, while checkpoint 20 is written, before training sees the stop
    assert rec is not None and rec.phase == Phase.TRAINING and len(rec.hashes) in (3, 4)
    assert net.client(0).jobs.get_job(job_id).status is JobStatus.Claimed

    second = SolverNode(net.client(SOLVER), data, "127.0.0.1", port, poll_interval=0.5)
    net.start(second)
    assert (
        net.wait_status(job_id, JobStatus.Finalized, JobStatus.Rejected, JobStatus.Disputed)
        is JobStatus.Finalized
    )
    final = second.job_record(job_id)
    assert final is not None and final.hashes[: len(rec.hashes)] == rec.hashes


def test_solver_killed_after_commit_reserves_and_finishes(net: Network) -> None:
    _start_checkers(net)
    job_id = net.post_job(tiny_spec(seed=12))
    port = free_port()
    data = net.tmp / "solver"
    first = SolverNode(net.client(SOLVER), data, "127.0.0.1", port, poll_interval=0.5)
    net.start(first)
    reader = net.client(0)
    net.wait_for("commit", lambda: reader.jobs.get_job(job_id).status >= JobStatus.Committed)
    net.stop(first)  # checkpoint server down too
    record = first.job_record(job_id)  # the secret is drawn and persisted before the commit
    assert record is not None and record.secret is not None
    secret = record.secret
    second = SolverNode(net.client(SOLVER), data, "127.0.0.1", port, poll_interval=0.5)
    net.start(second)
    assert (
        net.wait_status(job_id, JobStatus.Finalized, JobStatus.Rejected, JobStatus.Disputed)
        is JobStatus.Finalized
    )
    # the restarted solver posted its claims and revealed the secret it committed to
    submission = reader.jobs.submission_of(job_id)
    assert reader.round.round_of(submission).revealed
    reveals = reader.round.contract.events.SecretRevealed().get_logs(
        from_block=net.deployment.block, argument_filters={"submissionId": submission}
    )
    assert [bytes(ev.args["secret"]) for ev in reveals] == [secret]
