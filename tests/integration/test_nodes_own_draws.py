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
    FAST_PARAMS,
    FORCED_UPDATES,
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
from veritrain.spec import default_digits_spec

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
        # not slashed, and its fee restaked (docs/SECURITY.md P-41)
        assert stake.locked == 0
        assert stake.staked == net.params.min_stake_verifier + net.params.verifier_fee


SINGLE_SEAT_UPDATES: dict[str, object] = {
    **FORCED_UPDATES,  # every job forced: the solver's mirror of the draw must match the chain's
    "verifiers_per_job": 1,
    "samples_per_job": 1,
}


@pytest.fixture
def single(anvil: Anvil, contracts_out: Path, tmp_path: Path) -> Iterator[Network]:
    yield from open_network(anvil, tmp_path, FAST_PARAMS.model_copy(update=SINGLE_SEAT_UPDATES))


def test_a_single_seat_replays_its_draw_and_fetches_the_final_state(single: Network) -> None:
    """One seat per job (docs/SECURITY.md P-39) on a real Anvil with real nodes: the seat replays
    its one segment of the first M - 1 and, unless that is segment M - 2, only fetches the final
    state, which the sealed solver serves for it and the seat keeps. Every job carries a forced
    error, on the seat's own segment or on the fetched last (E-3): the seat rejects it with the
    true end, replaying the last after all when its fetch disagrees with the forced claim, and
    approves the other sample. Three jobs of 16 segments all finalize, the seat never slashed."""
    net = single
    node = verifier_node(net.client(V1), net.tmp / "v1", poll_interval=0.5)
    net.start(node)
    net.wait_active(int(Role.Verifier), V1)
    specs = [
        default_digits_spec(
            seed=s, total_steps=160, checkpoint_interval=10, hidden=(16,), batch_size=16
        )
        for s in (21, 22, 23)
    ]
    jobs = [net.post_job(spec) for spec in specs]
    net.start(
        SolverNode(
            net.client(SOLVER), net.tmp / "solver", "127.0.0.1", free_port(), poll_interval=0.5
        )
    )
    reader = net.client(0)
    me = node.client.address
    fetched: dict[int, int] = {}
    for job_id in jobs:
        net.wait_for(
            "seat assigned", lambda j=job_id: bool(reader.jobs.get_assignment(j).verifiers)
        )
        job = reader.jobs.get_job(job_id)
        block_hash = bytes(reader.w3.eth.get_block(job.randomness_block)["hash"])
        assignment = reader.jobs.get_assignment(job_id)
        expected = own_draws(
            job_seed(block_hash, job_id, job.merkle_root), assignment.verifiers, 16, 1, True
        )
        assert assignment.segments == expected.segments and assignment.segments[-1] == 15
        assert reader.jobs.sample_mask_of(job_id, me) == expected.masks[0] == 0b11
        fetched[job_id] = reader.round.fetch_only_mask_of(reader.jobs.submission_of(job_id), me)
        assert fetched[job_id] == expected.fetch_only[0]
    # each job fetches with probability 14/15: all three replaying the last is 1 in 3,375
    assert any(fetched.values())
    for job_id in jobs:
        status = net.wait_status(
            job_id, JobStatus.Finalized, JobStatus.Rejected, JobStatus.Disputed, timeout=300
        )
        assert status is JobStatus.Finalized
        _, forced = reader.round.outcome(reader.jobs.submission_of(job_id))
        rec = node.state.read().jobs[job_id]
        assert set(rec.results) == {0, 1}
        # the forced sample: rejected with the true end its replay computed
        assert not rec.results[forced].ok and rec.results[forced].end is not None
        other = rec.results[1 - forced]
        assert other.ok
        # the fetched last, when not forced, is approved without a replay
        assert (other.end is None) == (forced == 0 and bool(fetched[job_id]))
        job = reader.jobs.get_job(job_id)
        assert node.mirror is not None
        assert node.mirror.replayed(bytes(job.merkle_root), 16) is not None  # kept (P-36)
    stake = reader.stakes.stake_of(me, Role.Verifier)
    # never slashed; each job's fee restaked, a catch's jackpot with it (at most one per job)
    assert stake.locked == 0
    earned = stake.staked - net.params.min_stake_verifier
    fees = len(jobs) * net.params.verifier_fee
    assert fees <= earned <= fees + len(jobs) * net.params.jackpot
