"""Each verifier its own draw on a real Anvil (docs/SECURITY.md P-27): three verifiers each
replay only the segments of their own draw, and the job finalizes and pays every seat.

Run: ``.venv/bin/python -m pytest tests/integration/test_nodes_own_draws.py -m anvil``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from adversary.verifier import verifier_node
from chain import Anvil
from solver.node import SolverNode
from tests.utils.node_harness import (
    SOLVER,
    V1,
    V2,
    V3,
    Network,
    free_port,
    open_network,
    tiny_spec,
)
from veritrain.enums import JobStatus, Role, Verdict
from veritrain.sampling import job_seed, own_draws

pytestmark = [pytest.mark.anvil, pytest.mark.slow, pytest.mark.timeout(400)]


@pytest.fixture
def net(anvil: Anvil, contracts_out: Path, tmp_path: Path) -> Iterator[Network]:
    yield from open_network(anvil, tmp_path)


def test_three_verifiers_replay_their_own_segments_and_the_job_finalizes(net: Network) -> None:
    nodes = {
        i: verifier_node(net.client(i), net.tmp / f"v{i}", poll_interval=0.5) for i in (V1, V2, V3)
    }
    for node in nodes.values():
        net.start(node)
    net.wait_active(int(Role.Verifier), V1, V2, V3)
    job_id = net.post_job(tiny_spec())  # 4 segments; V = 3, q = 2
    net.start(
        SolverNode(
            net.client(SOLVER), net.tmp / "solver", "127.0.0.1", free_port(), poll_interval=0.5
        )
    )
    reader = net.client(0)
    net.wait_for("verifiers assigned", lambda: bool(reader.jobs.get_assignment(job_id).verifiers))
    job = reader.jobs.get_job(job_id)
    block_hash = bytes(reader.w3.eth.get_block(job.randomness_block)["hash"])
    assignment = reader.jobs.get_assignment(job_id)
    masks = {v.lower(): reader.jobs.sample_mask_of(job_id, v) for v in assignment.verifiers}

    # the contract's draw is the Python mirror's, bit for bit
    expected = own_draws(
        job_seed(block_hash, job_id, job.merkle_root),
        assignment.verifiers,
        job.total_steps // job.checkpoint_interval,
        net.params.samples_per_job,
    )
    assert assignment.segments == expected.segments
    assert tuple(masks[v.lower()] for v in assignment.verifiers) == expected.masks
    union = (1 << len(assignment.segments)) - 1
    covered = 0
    for mask in masks.values():
        covered |= mask
    assert covered == union  # every sample has a seat

    assert (
        net.wait_status(job_id, JobStatus.Finalized, JobStatus.Rejected, JobStatus.Disputed)
        is JobStatus.Finalized
    )
    for node in nodes.values():
        me = node.client.address.lower()
        own = masks[me]
        rec = node.state.read().jobs[job_id]
        # it replayed exactly its own samples
        assert set(rec.results) == {j for j in range(len(assignment.segments)) if own >> j & 1}
        verdicts = reader.jobs.verdicts_of(job_id, node.client.address)
        assert [v is Verdict.Approve for v in verdicts] == [
            bool(own >> j & 1) for j in range(len(verdicts))
        ]
        assert all(v is Verdict.None_ for j, v in enumerate(verdicts) if not own >> j & 1)
        stake = reader.stakes.stake_of(node.client.address, Role.Verifier)
        assert stake.locked == 0 and stake.staked == net.params.min_stake_verifier  # not slashed
