"""State 0 is checked on chain (issue 8, item 7): a job records the initHash of its spec's
seed-initialised state, and `commitCheckpoints` reverts unless leaf 0 of the committed tree is
(0, initHash). Real solver nodes (honest and the ``"other-init"`` adversary) against Anvil.

Run: ``.venv/bin/python -m pytest tests/integration/test_chain_init_state.py``.
"""

from __future__ import annotations

from pathlib import Path

from adversary.solver import solver_node
from chain import ChainClient
from solver.node import Phase
from tests.utils.models import register_model
from tests.utils.node_fixtures import tiny_spec
from veritrain.enums import JobStatus
from veritrain.training import TrainingEngine

E18 = 10**18


def _post(submitter: ChainClient) -> int:
    """Register the tiny spec's model and post one job with the honest initHash."""
    spec = tiny_spec()
    submitter.token.faucet(1_000 * E18)
    engine = TrainingEngine(spec)
    init_hash = engine.state_hash(engine.init_state())
    register_model(submitter, spec.model_id_hash(), init_hash, spec)
    receipt = submitter.jobs.post_job(
        spec.model_id_hash(),
        spec.spec_hash(),
        init_hash,
        spec.total_steps,
        spec.checkpoint_interval,
        10 * E18,
        spec.to_data_uri(),
    )
    job_id = submitter.job_id_from(receipt)
    posted = submitter.jobs.get_job(job_id)
    # Before the commit the root's word holds initHash: no root yet.
    assert (posted.init_hash, posted.merkle_root) == (init_hash, bytes(32))
    assert submitter.jobs.checkpoint_commitment(job_id)[0] == bytes(32)
    return job_id


def test_honest_solver_commits_with_the_leaf_zero_proof(client_factory, tmp_path: Path) -> None:
    submitter, solver = client_factory(1), client_factory(2)
    job_id = _post(submitter)
    node = solver_node(solver, tmp_path, serve=False)
    node.step()  # stake + claim
    node.step()  # train + commit
    job = solver.jobs.get_job(job_id)
    assert job.status is JobStatus.Committed
    rec = node.job_record(job_id)
    assert rec is not None and rec.phase == Phase.COMMITTED and rec.hashes[0] == job.init_hash
    # The root took initHash's word at the commit: the view gives both, initHash from the
    # job's JobPosted event, and the round's view the same root.
    root, _, _ = solver.jobs.checkpoint_commitment(job_id)
    assert job.merkle_root == root != bytes(32)
    assert job.init_hash == submitter.jobs.get_job(job_id).init_hash != job.merkle_root
    assert job.init_hash == rec.hashes[0]


def test_solver_trained_from_other_weights_cannot_commit(client_factory, tmp_path: Path) -> None:
    """The adversary claims, trains every step honestly but from other initial weights, and its
    commitment reverts (InitialStateNotCommitted): it is never paid, whatever its replays say."""
    submitter, cheater = client_factory(1), client_factory(3)
    job_id = _post(submitter)
    node = solver_node(cheater, tmp_path, mode="other-init", serve=False)
    node.step()  # stake + claim
    assert cheater.jobs.get_job(job_id).status is JobStatus.Claimed
    for _ in range(3):
        node.step()  # train, then try (and retry) to commit
    job = cheater.jobs.get_job(job_id)
    rec = node.job_record(job_id)
    assert rec is not None and rec.phase == Phase.TRAINED and len(rec.hashes) == 5
    assert rec.hashes[0] != job.init_hash
    assert job.status is JobStatus.Claimed and job.merkle_root == b"\x00" * 32


def test_solver_smuggling_the_init_leaf_cannot_commit(client_factory, tmp_path: Path) -> None:
    """P-25: the adversary trains from other weights and commits a tree over its own
    checkpoints with the leaf (0, initHash) smuggled in after them, proving that extra leaf for
    the leaf-0 check (the sorted-pair tree accepted it). With the positional tree its commitment
    reverts (InitialStateNotCommitted): the job stays Claimed and nobody's tokens move."""
    submitter, cheater = client_factory(1), client_factory(3)
    job_id = _post(submitter)
    node = solver_node(cheater, tmp_path, mode="smuggle-init", serve=False)
    node.step()  # stake + claim
    assert cheater.jobs.get_job(job_id).status is JobStatus.Claimed
    submitter_before = submitter.token.balance_of(submitter.address)
    stake_before = cheater.stakes.stake_of(cheater.address)
    for _ in range(3):
        node.step()  # train, then try (and retry) to commit
    job = cheater.jobs.get_job(job_id)
    rec = node.job_record(job_id)
    assert rec is not None and rec.phase == Phase.TRAINED and len(rec.hashes) == 5
    assert rec.hashes[0] != job.init_hash
    committed = node.commitment(rec.hashes, rec.interval, job.init_hash)
    assert len(committed.init_proof) == 3  # the extra leaf sits in the padding: same depth
    assert job.status is JobStatus.Claimed and job.merkle_root == b"\x00" * 32
    assert submitter.token.balance_of(submitter.address) == submitter_before
    assert cheater.stakes.stake_of(cheater.address) == stake_before
