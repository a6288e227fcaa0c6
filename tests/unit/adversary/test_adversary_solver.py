"""The cheating solvers of `adversary.solver`: they train through `solver.trainer` with their
own step rule, diverge from segment 2 and still commit consistently."""

from __future__ import annotations

from pathlib import Path

import pytest

from adversary.solver import cheating_step_function, solver_node
from solver.trainer import train_job
from tests.utils.node_fixtures import tiny_spec
from veritrain.hexutil import from_hex
from veritrain.merkle import checkpoint_tree
from veritrain.replay import replay_segment
from veritrain.state import state_hash
from veritrain.store import CheckpointStore
from veritrain.training import TrainingEngine


@pytest.fixture(scope="module")
def engine() -> TrainingEngine:
    return TrainingEngine(tiny_spec())


@pytest.fixture(scope="module")
def honest(engine: TrainingEngine, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    hashes: list[str] = []
    assert train_job(engine, CheckpointStore(tmp_path_factory.mktemp("h")), hashes)
    return hashes


@pytest.mark.parametrize("mode", ["skip-steps", "perturb"])
def test_adversary_diverges_from_segment_2_and_commits_consistently(
    engine: TrainingEngine, honest: list[str], mode: str, tmp_path: Path
) -> None:
    store = CheckpointStore(tmp_path)
    cheat: list[str] = []
    assert train_job(engine, store, cheat, step_fn=cheating_step_function(engine, mode))
    assert cheat[:3] == honest[:3]  # segments 0 and 1 are honest
    assert cheat[3] != honest[3] and cheat[4] != honest[4]
    # the tree is over what it produced: every stored checkpoint hashes to its leaf
    for h in cheat:
        assert state_hash(store.get(h)) == from_hex(h)
    checkpoint_tree([from_hex(h) for h in cheat], 10)
    # replaying the cheating segment from the committed start does not reproduce its end
    end = replay_segment(engine, store.get(cheat[2]), 30, start_step=20)
    assert state_hash(end) != from_hex(cheat[3])
    ok = replay_segment(engine, store.get(cheat[1]), 20, start_step=10)
    assert state_hash(ok) == from_hex(cheat[2])


def test_unknown_adversary_is_refused(engine, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown adversary"):
        cheating_step_function(engine, "nap")


def test_other_init_solver_cannot_commit(tmp_path: Path) -> None:
    """The ``"other-init"`` adversary trains honestly from other initial weights: its tree's
    leaf 0 is not (0, initHash), so the commitment reverts and the job never gets past Claimed."""
    from tests.utils.fake_chain import FakeChain
    from tests.utils.node_fixtures import SOLVER, SUBMITTER
    from veritrain.enums import JobStatus

    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    node = solver_node(chain.client(SOLVER), tmp_path, mode="other-init", serve=False)
    for _ in range(3):
        node.step()
        chain.advance(blocks=2)
    rec = node.job_record(job_id)
    assert rec is not None and len(rec.hashes) == 5  # it trained all 40 steps
    assert rec.hashes[0] != chain.jobs[job_id].init_hash
    assert chain.jobs[job_id].status is JobStatus.Claimed
    assert chain.count("claimJob") == 1 and chain.count("commitCheckpoints") == 0


@pytest.mark.parametrize("limit", [None, 1])
def test_claim_limit_counts_the_jobs_of_the_nodes_whole_life(
    tmp_path: Path, limit: int | None
) -> None:
    """A cheater whose first job ended claims the next Open one, unless its claim limit is
    reached; the limit is read from its persisted records, so a restarted node keeps it."""
    from tests.utils.fake_chain import FakeChain
    from tests.utils.node_fixtures import SOLVER, SUBMITTER
    from veritrain.enums import JobStatus

    chain = FakeChain()
    first = chain.post_job(SUBMITTER, tiny_spec())
    second = chain.post_job(SUBMITTER, tiny_spec(seed=2))
    node = solver_node(
        chain.client(SOLVER), tmp_path, mode="other-init", serve=False, claim_limit=limit
    )
    node.step()
    assert chain.jobs[first].status is JobStatus.Claimed and chain.count("claimJob") == 1
    chain.set_job(first, status=JobStatus.Rejected)  # its job ended: it holds nothing now
    restarted = solver_node(
        chain.client(SOLVER), tmp_path, mode="other-init", serve=False, claim_limit=limit
    )
    for _ in range(2):
        restarted.step()
        chain.advance(blocks=2)
    taken = chain.jobs[second].status is JobStatus.Claimed
    assert taken is (limit is None)
    assert chain.count("claimJob") == (2 if limit is None else 1)


def test_a_negative_claim_limit_is_refused(tmp_path: Path) -> None:
    from tests.utils.fake_chain import FakeChain
    from tests.utils.node_fixtures import SOLVER

    with pytest.raises(ValueError, match="below 0"):
        solver_node(
            FakeChain().client(SOLVER), tmp_path, mode="perturb", serve=False, claim_limit=-1
        )
