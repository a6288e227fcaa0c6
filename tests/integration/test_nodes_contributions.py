"""A run's contributions are ordinary jobs: the nodes train and verify them on a real Anvil,
and the verified contributions give exactly the run's simulated global states (docs/RUNS.md).

The model's owner posts each round's contribution jobs (`noderuntime.runs.post_round`: spec URI
`<run URI>#contribution=<round>,<seat>`, specHash `keccak256(abi.encode(runHash, round, seat))`,
initHash the start it computes from the chain); the solver computes the same start itself.
Run: ``.venv/bin/python -m pytest tests/integration/test_nodes_contributions.py -m anvil``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from adversary.solver import solver_node
from adversary.verifier import verifier_node
from chain import Anvil, write_manifest
from cli.app import app
from noderuntime.runs import post_round, run_state
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
from veritrain.diloco import RunSpec, contribution_init
from veritrain.enums import JobStatus, Role
from veritrain.runsim import pretrained_start, simulate_run
from veritrain.training import TrainingEngine

LATE = 7
"""Dev key of the solver that joins the run late."""

pytestmark = [pytest.mark.anvil, pytest.mark.slow, pytest.mark.timeout(400)]
runner = CliRunner()


@pytest.fixture
def net(anvil: Anvil, contracts_out: Path, tmp_path: Path) -> Iterator[Network]:
    yield from open_network(anvil, tmp_path)


def _open_run(net: Network, run: RunSpec) -> tuple[Any, bytes]:
    """Register the run's model as the owner (funded) and start the verifiers; returns the
    owner's client and the run's outer state 0."""
    owner = net.client(SUBMITTER)
    owner.token.faucet(1000 * E18)
    seeded = TrainingEngine(run.inner)
    register_model(
        owner, run.inner.model_id_hash(), seeded.state_hash(seeded.init_state()), run.inner
    )
    for i in (V1, V2, V3):
        net.start(verifier_node(net.client(i), net.tmp / f"v{i}", poll_interval=0.5))
    net.wait_active(int(Role.Verifier), V1, V2, V3)
    return owner, pretrained_start(run, 0)


def test_a_run_over_two_rounds_makes_the_simulated_global_states(net: Network) -> None:
    """Round 0: two seats; round 1: seat 1 has left, and a solver that joined late trains seat 0.
    The owner posts each round's jobs with the starts it computes from the chain (`post_round`);
    the solvers rebuild the same starts themselves; the verified contributions give the
    simulated run's global states bit for bit."""
    run = RunSpec(inner=tiny_spec(seed=21), seats=2, rounds=3)
    owner, start = _open_run(net, run)
    round0 = post_round(owner, run, run.to_data_uri(), 0, start, reward=20 * E18)
    solver = SolverNode(
        net.client(SOLVER), net.tmp / "solver", "127.0.0.1", free_port(), poll_interval=0.5
    )
    net.start(solver)
    for job_id in round0:
        assert net.wait_status(job_id, JobStatus.Finalized, JobStatus.Rejected) is (
            JobStatus.Finalized
        )
    reader = net.client(0)
    simulated = simulate_run(run, start, 2, absent=lambda t, j: (t, j) == (1, 1))
    state1 = run_state(reader, run, 1, start)
    assert state1.state.state_hash() == simulated[0].global_hash
    assert state1.rounds[0].accepted == [0, 1] and state1.jobs == {0: {0: round0[0], 1: round0[1]}}

    # a solver joins late and takes round 1: it rebuilds the run from the chain, fetching the
    # round-0 final states from the first solver's server (which keeps serving, claims no more)
    solver.max_active_jobs = 0
    late = SolverNode(
        net.client(LATE), net.tmp / "late", "127.0.0.1", free_port(), poll_interval=0.5
    )
    net.start(late)
    # round 1 through the command line, as an owner posts it
    run_file = net.tmp / "run.json"
    run_file.write_bytes(run.canonical_json())
    chain_args = [
        "--rpc-url",
        net.anvil.rpc_url,
        "--deployment",
        str(write_manifest(net.deployment, net.tmp)),
    ]
    posted = runner.invoke(
        app,
        [
            "run",
            "post",
            str(run_file),
            "--round",
            "1",
            "--seat",
            "0",
            "--dev-account",
            str(SUBMITTER),
            *chain_args,
            "--json",
        ],
    )
    assert posted.exit_code == 0, posted.output
    (round1,) = json.loads(posted.stdout)["jobs"]
    assert net.wait_status(round1, JobStatus.Finalized, JobStatus.Rejected) is JobStatus.Finalized
    assert reader.jobs.get_job(round1).solver.lower() == late.client.address.lower()
    state2 = run_state(reader, run, 2, start)
    assert state2.state.state_hash() == simulated[1].global_hash
    assert state2.rounds[1].accepted == [0]
    shown = runner.invoke(app, ["run", "show", str(run_file), "--metric", *chain_args, "--json"])
    assert shown.exit_code == 0, shown.output
    report = json.loads(shown.stdout)
    assert report["global_hash"] == "0x" + simulated[1].global_hash.hex()
    assert [r["accepted"] for r in report["rounds"]] == [[0, 1], [0]]
    assert report["rounds"][1]["jobs"] == {"0": round1}
    assert [r["metric"] for r in report["rounds"]] == [r.metric for r in simulated]
    # seat 0 carried its AdamW into round 1; seat 1 keeps its round-0 state for a return
    assert state2.seat_finals[1] == state1.seat_finals[1]
    assert state2.seat_finals[0] != state1.seat_finals[0]


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
    owner, start = _open_run(net, run)
    (job_id,) = post_round(owner, run, run.to_data_uri(), 0, start, reward=20 * E18, seats=[1])
    init = contribution_init(start, None)
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
