"""Nodes on a real Anvil against cheaters: a cheating solver is caught by replay and slashed
through arbitration; a lazy verifier that approves it is challenged by the whistleblower and
slashed too; and with every solver honest, a lazy verifier is caught by a forced error
(docs/FORCED_ERRORS.md).

Every segment is sampled (q = N/k = 4), so the cheat (segments 2 and 3) is always audited.
Run: ``.venv/bin/python -m pytest tests/integration/test_nodes_adversarial.py -m anvil``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from adversary.solver import solver_node
from adversary.verifier import verifier_node
from chain import Anvil
from tests.utils.node_harness import (
    FAST_PARAMS,
    FORCED_UPDATES,
    SOLVER,
    V1,
    V2,
    V3,
    WHISTLEBLOWER,
    Network,
    free_port,
    require_protocol_artifacts,
    tiny_spec,
)
from veritrain.enums import JobStatus, Role, RoundOutcome, Verdict
from whistleblower.node import WhistleblowerNode

pytestmark = [pytest.mark.anvil, pytest.mark.slow, pytest.mark.timeout(400)]


@pytest.fixture
def net(anvil: Anvil, contracts_out: Path, tmp_path: Path) -> Iterator[Network]:
    require_protocol_artifacts()
    network = Network(anvil, tmp_path, FAST_PARAMS.model_copy(update={"samples_per_job": 4}))
    yield network
    network.close()


@pytest.fixture
def forced_net(anvil: Anvil, contracts_out: Path, tmp_path: Path) -> Iterator[Network]:
    require_protocol_artifacts()
    network = Network(anvil, tmp_path, FAST_PARAMS.model_copy(update=FORCED_UPDATES))
    yield network
    network.close()


def _run(net: Network, adversary: str | None, lazy: tuple[int, ...]) -> tuple[int, str]:
    for i in (V1, V2, V3):
        net.start(
            verifier_node(net.client(i), net.tmp / f"v{i}", lazy=i in lazy, poll_interval=0.5)
        )
    net.start(WhistleblowerNode(net.client(WHISTLEBLOWER), net.tmp / "wb", poll_interval=0.5))
    net.wait_active(int(Role.Verifier), V1, V2, V3)
    job_id = net.post_job(tiny_spec(seed=21))
    solver = net.client(SOLVER)
    net.start(
        solver_node(
            solver, net.tmp / "solver", "127.0.0.1", free_port(), mode=adversary, poll_interval=0.5
        )
    )
    return job_id, solver.address


@pytest.mark.parametrize("adversary", ["perturb", "skip-steps"])
def test_cheating_solver_is_rejected_and_slashed(net: Network, adversary: str) -> None:
    job_id, solver = _run(net, adversary, lazy=())
    reader = net.client(0)
    assert (
        net.wait_status(job_id, JobStatus.Finalized, JobStatus.Rejected, timeout=300)
        is JobStatus.Rejected
    )
    stake = reader.stakes.stake_of(solver, Role.Solver)
    assert stake.staked == 4 * net.params.solver_stake - net.params.solver_stake
    assert stake.locked == 0
    segments = reader.jobs.get_assignment(job_id).segments
    for i in (V1, V2, V3):
        verdicts = reader.jobs.verdicts_of(job_id, net.client(i).address)
        for seg, verdict in zip(segments, verdicts, strict=True):
            assert verdict is (Verdict.Reject if seg >= 2 else Verdict.Approve)


def test_lazy_verifier_is_challenged_and_slashed(net: Network) -> None:
    job_id, solver = _run(net, "skip-steps", lazy=(V1,))
    reader = net.client(0)
    lazy = net.client(V1).address
    wb = net.client(WHISTLEBLOWER).address
    segments = reader.jobs.get_assignment(job_id).segments
    net.wait_for(
        "whistleblower challenges of the lazy approvals",
        lambda: all(
            reader.jobs.challenger_of(job_id, i, lazy) == wb
            for i, seg in enumerate(segments)
            if seg >= 2
        ),
        timeout=240,
    )
    assert (
        net.wait_status(job_id, JobStatus.Finalized, JobStatus.Rejected, timeout=300)
        is JobStatus.Rejected
    )
    # the node tops its stake back up after the slash, so the loss is read from the events
    assert net.slashed(lazy, Role.Verifier) == net.params.verifier_stake
    assert reader.stakes.stake_of(solver, Role.Solver).staked == 3 * net.params.solver_stake
    # the whistleblower won: its bond back plus a share of the pot, claimed by the node
    net.wait_for("whistleblower paid", lambda: reader.escrow.credit_of(wb) == 0)
    assert reader.token.balance_of(wb) > 0


def test_lazy_verifier_is_caught_by_a_forced_error(forced_net: Network) -> None:
    net = forced_net
    job_id, solver = _run(net, None, lazy=(V1,))  # an honest solver: only the forced error
    reader = net.client(0)
    pool = reader.escrow.jackpot_pool()
    assert (
        net.wait_status(job_id, JobStatus.Finalized, JobStatus.Rejected, timeout=300)
        is JobStatus.Finalized
    )
    outcome, f = reader.round.outcome(reader.jobs.submission_of(job_id))
    assert outcome is RoundOutcome.Forced
    lazy, wb = net.client(V1).address, net.client(WHISTLEBLOWER).address
    honest = [net.client(i).address for i in (V2, V3)]
    assert reader.jobs.verdicts_of(job_id, lazy)[f] is Verdict.Approve
    for a in honest:
        assert reader.jobs.verdicts_of(job_id, a)[f] is Verdict.Reject
    assert reader.jobs.challenger_of(job_id, f, lazy) == wb
    p = net.params
    # the lazy approver is slashed into the pool; two rejecters and the whistleblower are paid
    assert net.slashed(lazy, Role.Verifier) == p.verifier_stake
    for a in honest:
        assert net.slashed(a, Role.Verifier) == 0
        assert reader.stakes.stake_of(a, Role.Verifier).staked == p.min_stake_verifier
    paid = [
        e
        for e in reader.contract_by_name("JobManager")
        .events.JackpotPaid()
        .get_logs(from_block=net.deployment.block)
        if int(e["args"]["jobId"]) == job_id
    ]
    assert sorted(e["args"]["account"] for e in paid) == sorted([*honest, wb])
    assert reader.escrow.jackpot_pool() == pool + p.verifier_stake - 3 * p.jackpot
    # the solver is not penalised: stake intact, shares minted
    assert reader.stakes.stake_of(solver, Role.Solver).staked == 4 * p.solver_stake
    assert reader.shares.balance_of(tiny_spec(seed=21).model_id_hash(), solver) > 0
