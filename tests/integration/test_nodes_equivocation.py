"""Nodes on a real Anvil against a seat that signs two seals (docs/SECURITY.md P-40): an honest
solver, two honest verifier nodes and one `EquivocatingVerifierNode` on one job. The equivocator
hands the solver a signed seal, waits until the solver's ``GET /seals`` shows every seat's (the
honest seats then keep them and open theirs), and stores a second seal with its own
``commitVerdicts``, as a copier front-running the one-shot call would. An honest seat's node
proves both seals by itself: the equivocator loses exactly one verifierStake, its verdicts are
voided, the job is still finalized, and the solver and the honest seats end with their reward
and fees (wallet + Escrow credit + stake), losing nothing.

One segment, sampled by every seat (q = 1 of M = 1), so the voided seat leaves no sample
uncovered and no seat is drawn again.
Run: ``.venv/bin/python -m pytest tests/integration/test_nodes_equivocation.py -m anvil``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from adversary.verifier import EquivocatingVerifierNode, verifier_node
from chain import Anvil
from solver.node import SolverNode
from tests.utils.node_harness import (
    FAST_PARAMS,
    SOLVER,
    V1,
    V2,
    V3,
    Network,
    free_port,
    open_network,
)
from veritrain.enums import JobStatus, Role, Verdict
from veritrain.hexutil import to_hex
from veritrain.spec import default_digits_spec

pytestmark = [pytest.mark.anvil, pytest.mark.slow, pytest.mark.timeout(300)]


@pytest.fixture
def net(anvil: Anvil, contracts_out: Path, tmp_path: Path) -> Iterator[Network]:
    yield from open_network(anvil, tmp_path, FAST_PARAMS.model_copy(update={"samples_per_job": 1}))


def _stake_at(net: Network, account: str, block: int) -> int:
    """``account``'s verifier stake (wei, staked) as ``stakeOf`` read at ``block``."""
    reader = net.client(0)
    staked, _locked, _unbonding, _release = reader.call(
        reader.stakes.contract, "stakeOf", account, int(Role.Verifier), block=block
    )
    return int(staked)


def test_an_equivocating_seat_is_proven_by_an_honest_node_and_slashed(net: Network) -> None:
    reader = net.client(0)
    p = net.params
    honest_nodes = {
        i: verifier_node(net.client(i), net.tmp / f"v{i}", poll_interval=0.5) for i in (V1, V3)
    }
    for node in honest_nodes.values():
        # a seat replaying late on a loaded machine must not fall back early (as in the
        # lifecycle test): the solver's batches come within the window
        node.hand_off_wait = p.verdict_window
        net.start(node)
    equivocator = EquivocatingVerifierNode(
        net.client(V2), net.tmp / "v2", poll_interval=0.5, equivocate_after=3.0
    )
    net.start(equivocator)
    solver_client = net.client(SOLVER)
    net.start(
        SolverNode(solver_client, net.tmp / "solver", "127.0.0.1", free_port(), poll_interval=0.5)
    )
    net.wait_active(int(Role.Verifier), V1, V2, V3)
    net.wait_active(int(Role.Solver), SOLVER)
    eq = equivocator.client.address
    honest = {net.client(i).address for i in (V1, V3)}
    solver = solver_client.address
    before = {a: net.holdings(a) for a in (*honest, solver)}  # staked; no job yet

    # 10 steps, one checkpoint interval: one segment, every seat's sample
    spec = default_digits_spec(
        seed=41, total_steps=10, checkpoint_interval=10, hidden=(16,), batch_size=16
    )
    job_id = net.post_job(spec)
    assert (
        net.wait_status(job_id, JobStatus.Finalized, JobStatus.Rejected, JobStatus.Disputed)
        is JobStatus.Finalized
    )

    # the attack happened as described: the seal it handed over is not the one on chain, which
    # it stored itself (no one-shot call carried it)
    first, _signature = equivocator.first_seals[job_id]
    second = equivocator.second_seals[job_id]
    assert first != second
    rnd = reader.round.contract
    (stored,) = [
        e
        for e in reader.event_logs(rnd, ["VerdictsCommitted"], 0, reader.block_number())
        if e.args["verifier"] == eq
    ]
    assert bytes(stored.args["commitment"]) == second
    _, data = reader.transaction_call(stored.tx_hash)
    assert rnd.decode_function_input(data)[0].fn_name == "commitVerdicts"
    assert reader.w3.eth.get_transaction(stored.tx_hash)["from"] == eq
    for node in honest_nodes.values():  # each honest seat opened against the first seal
        seen = node._job_rec(job_id).seen_seals
        assert seen[eq.lower()][0] == to_hex(first)

    # an honest seat's node proved it by itself, once, with the two seals
    proofs = reader.event_logs(rnd, ["EquivocationProven"], 0, reader.block_number())
    assert len(proofs) == 1, f"proveEquivocation sent {len(proofs)} times: {proofs}"
    proof = proofs[0]
    assert proof.args["verifier"] == eq
    assert proof.args["prover"] in honest
    for node in honest_nodes.values():  # the seat that lost the race saw the proof and sent none
        reverted = node.metrics.registry.get_sample_value(
            "veritrain_transactions_total",
            {"method": "proveEquivocation", "outcome": "reverted"},
        )
        assert not reverted, f"{node.client.address}: {reverted} reverted proofs"
    assert bytes(proof.args["commitment"]) == first
    assert bytes(proof.args["otherCommitment"]) == second
    (voided,) = reader.event_logs(
        reader.jobs.contract, ["VerifierEquivocated"], 0, reader.block_number()
    )
    assert voided.tx_hash == proof.tx_hash
    assert (int(voided.args["jobId"]), voided.args["verifier"]) == (job_id, eq)
    assert (int(voided.args["slashed"]), int(voided.args["bonds"])) == (p.verifier_stake, 0)

    # exactly one verifierStake, at the proof (the node tops its stake up afterwards)
    block = proof.block_number
    assert _stake_at(net, eq, block - 1) - _stake_at(net, eq, block) == p.verifier_stake
    assert net.slashed(eq, Role.Verifier) == p.verifier_stake
    assert set(reader.jobs.verdicts_of(job_id, eq)) == {Verdict.None_}  # voided
    for a in honest:
        assert reader.jobs.verdicts_of(job_id, a) == [Verdict.Approve]
        assert net.slashed(a, Role.Verifier) == 0
    assert net.slashed(solver, Role.Solver) == 0

    # the honest parties: the reward and the fees, nothing lost (whatever pays them: wallet,
    # Escrow credit or stake, all summed)
    (finalized,) = reader.event_logs(
        reader.jobs.contract, ["JobFinalized"], 0, reader.block_number()
    )
    reward = int(finalized.args["reward"])
    assert reward > 0
    expected = {solver: before[solver] + reward} | {a: before[a] + p.verifier_fee for a in honest}
    net.wait_for(
        "the solver and the honest seats paid",
        lambda: all(net.holdings(a) >= total for a, total in expected.items()),
        timeout=60,
    )
    assert {a: net.holdings(a) for a in expected} == expected
    for a in (*honest, solver):
        assert reader.stakes.stake_of(a, Role.Verifier if a in honest else Role.Solver).locked == 0
