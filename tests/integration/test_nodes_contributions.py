"""A run's contributions are ordinary jobs: the nodes train and verify them on a real Anvil,
and the verified contributions give exactly the run's simulated global state (docs/RUNS.md).

The contribution jobs are posted here by the model's owner with the run's spec URI and hash
(`<run URI>#contribution=<round>,<seat>`, `keccak256(abi.encode(runHash, round, seat))`), as the
run contract will post them.
Run: ``.venv/bin/python -m pytest tests/integration/test_nodes_contributions.py -m anvil``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from adversary.solver import solver_node
from adversary.verifier import verifier_node
from chain import Anvil
from solver.node import SolverNode
from tests.utils.models import register_model
from tests.utils.node_harness import (
    E18,
    FAST_PARAMS,
    SOLVER,
    SUBMITTER,
    V1,
    V2,
    V3,
    Network,
    free_port,
    open_network,
    tiny_spec,
)
from veritrain.diloco import (
    OuterState,
    RunSpec,
    advance_round,
    contribution_init,
    contribution_uri,
)
from veritrain.enums import JobStatus, Role
from veritrain.runsim import pretrained_start, simulate_run
from veritrain.state import state_hash
from veritrain.training import TrainingEngine
from veritrain.wire import CheckpointClient

pytestmark = [pytest.mark.anvil, pytest.mark.slow, pytest.mark.timeout(400)]


@pytest.fixture
def net(anvil: Anvil, contracts_out: Path, tmp_path: Path) -> Iterator[Network]:
    yield from open_network(anvil, tmp_path)


def _post(net: Network, run: RunSpec, round_index: int, seat: int, init_hash: bytes) -> int:
    owner = net.client(SUBMITTER)
    receipt = owner.jobs.post_job(
        run.inner.model_id_hash(),
        run.contribution_spec_hash(round_index, seat),
        init_hash,
        run.inner_steps,
        run.inner.checkpoint_interval,
        20 * E18,
        contribution_uri(run.to_data_uri(), round_index, seat),
    )
    return owner.job_id_from(receipt)


def test_round_zero_contributions_are_verified_and_make_the_simulated_global_state(
    net: Network,
) -> None:
    run = RunSpec(inner=tiny_spec(seed=21), seats=2, rounds=3)
    owner = net.client(SUBMITTER)
    owner.token.faucet(1000 * E18)
    seeded = TrainingEngine(run.inner)
    register_model(
        owner, run.inner.model_id_hash(), seeded.state_hash(seeded.init_state()), run.inner
    )
    start = pretrained_start(run, 0)
    init = contribution_init(start, None)
    # a round-1 contribution first: its global state comes from an outer step this solver
    # cannot fetch yet, so it refuses the job (it stays Open) and trains the others
    later = _post(net, run, 1, 0, state_hash(init))
    jobs = [_post(net, run, 0, seat, state_hash(init)) for seat in range(run.seats)]

    for i in (V1, V2, V3):
        net.start(verifier_node(net.client(i), net.tmp / f"v{i}", poll_interval=0.5))
    net.wait_active(int(Role.Verifier), V1, V2, V3)
    solver = SolverNode(
        net.client(SOLVER), net.tmp / "solver", "127.0.0.1", free_port(), poll_interval=0.5
    )
    net.start(solver)
    for job_id in jobs:
        assert net.wait_status(job_id, JobStatus.Finalized, JobStatus.Rejected) is (
            JobStatus.Finalized
        )
    reader = net.client(0)
    assert reader.jobs.get_job(later).status is JobStatus.Open

    # the verified final states, fetched by hash from the solver's server, enter the round's
    # outer step by the rule every party applies; it is the simulated run's global state
    # after round 0, bit for bit
    contributions = {}
    for seat, job_id in enumerate(jobs):
        record = solver.job_record(job_id)
        assert record is not None
        final = CheckpointClient(reader.jobs.checkpoint_url(job_id)).checkpoint(
            run.inner_steps, record.hashes[-1]
        )
        contributions[seat] = (bytes(reader.jobs.get_job(job_id).init_hash), final)
    result = advance_round(run, OuterState.from_bytes(start), {}, contributions)
    assert result.accepted == [0, 1] and not result.excluded
    global_1 = result.state
    (simulated,) = simulate_run(run, start, 1)
    assert global_1.state_hash() == simulated.global_hash
    # the two seats trained different shards from the same start
    assert solver.job_record(jobs[0]).hashes[-1] != solver.job_record(jobs[1]).hashes[-1]


@pytest.fixture
def audited_net(anvil: Anvil, contracts_out: Path, tmp_path: Path) -> Iterator[Network]:
    """Every seat draws all 4 segments, so a cheat in any segment is always replayed."""
    yield from open_network(anvil, tmp_path, FAST_PARAMS.model_copy(update={"samples_per_job": 4}))


@pytest.mark.parametrize("adversary", ["perturb", "copy-seat"])
def test_a_wrong_or_copied_pseudo_gradient_is_rejected_and_slashed(
    audited_net: Network, adversary: str
) -> None:
    """A contribution whose states are tampered with (a wrong Delta), or which trained another
    seat's shard (a copied Delta), is rejected and its solver slashed: it never reaches the
    outer step."""
    net = audited_net
    run = RunSpec(inner=tiny_spec(seed=22), seats=2, rounds=1)
    owner = net.client(SUBMITTER)
    owner.token.faucet(1000 * E18)
    seeded = TrainingEngine(run.inner)
    register_model(
        owner, run.inner.model_id_hash(), seeded.state_hash(seeded.init_state()), run.inner
    )
    init = contribution_init(pretrained_start(run, 0), None)
    job_id = _post(net, run, 0, 1, state_hash(init))
    for i in (V1, V2, V3):
        net.start(verifier_node(net.client(i), net.tmp / f"v{i}", poll_interval=0.5))
    net.wait_active(int(Role.Verifier), V1, V2, V3)
    cheater = solver_node(
        net.client(SOLVER),
        net.tmp / "solver",
        "127.0.0.1",
        free_port(),
        mode=adversary,
        poll_interval=0.5,
    )
    net.start(cheater)
    assert (
        net.wait_status(job_id, JobStatus.Finalized, JobStatus.Rejected, timeout=300)
        is JobStatus.Rejected
    )
    assert net.slashed(cheater.client.address, int(Role.Solver)) == net.params.solver_stake
    record = cheater.job_record(job_id)
    assert record is not None
    if adversary == "copy-seat":
        # what it handed in is exactly seat 0's honest work
        honest = TrainingEngine(run.contribution_spec(0, 0), initial=init)
        state = honest.run(honest.init_state(), run.inner_steps)
        assert record.hashes[-1] == honest.state_hash(state)
