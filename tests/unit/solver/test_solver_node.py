"""`SolverNode.step()` against the in-memory fake protocol: lifecycle, the verification round
(secret, claims, sealed server, reveal; docs/FORCED_ERRORS.md), resume, idempotence."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from chain.errors import ContractRevert
from chain.types import ClaimsView
from noderuntime.records import SolverJob
from solver.node import Phase, SolverNode
from solver.server import create_app
from tests.utils.fake_chain import FakeChain
from tests.utils.fake_round import revert
from tests.utils.node_fixtures import (
    SOLVER,
    SUBMITTER,
    http_for,
    past_challenge_deadline,
    run_solver_to_commit,
    tiny_spec,
    verifiers_approve,
)
from veritrain.commitments import round_hash, secret_commitment
from veritrain.enums import JobStatus, Role, RoundOutcome
from veritrain.forced import forced_claim
from veritrain.hexutil import to_hex
from veritrain.merkle import ZERO_LEAF, checkpoint_tree, claim_leaves
from veritrain.state import state_hash


def test_claims_trains_commits_and_serves(tmp_path: Path) -> None:
    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    node = SolverNode(chain.client(SOLVER), tmp_path, "solver.example", 9000, serve=False)
    node.step()  # stake + claim
    assert chain.jobs[job_id].status is JobStatus.Claimed
    node.step()  # train + commit
    job = chain.jobs[job_id]
    assert job.status is JobStatus.Committed
    assert job.checkpoint_url == f"http://solver.example:9000/jobs/{job_id}"
    rec = node.job_record(job_id)
    assert rec is not None and rec.phase == Phase.COMMITTED and len(rec.hashes) == 5
    assert rec.root is not None and job.merkle_root.hex() == rec.root.hex()
    assert rec.secret is not None
    assert chain.secret_commitments[job_id] == round_hash(
        secret_commitment(job_id, SOLVER, rec.secret)
    )
    chain.advance(blocks=2)
    node.step()  # assignVerifiers (anyone may)
    assert chain.jobs[job_id].status is JobStatus.Verifying
    node.step()  # postClaims
    segments = chain.assignments[job_id].segments
    claims = chain.claims[job_id]
    assert claims.start_hashes == tuple(rec.hashes[s] for s in segments)
    assert claims.end_hashes == tuple(rec.hashes[s + 1] for s in segments)
    http = TestClient(create_app(node.catalog))
    # sealed until the secret is revealed: sampled starts only, no proofs, no manifest
    assert http.get(f"/jobs/{job_id}/manifest").status_code == 403
    assert http.get(f"/jobs/{job_id}/proofs/0").status_code == 403
    for s in range(4):
        code = http.get(f"/jobs/{job_id}/checkpoints/{(s + 1) * 10}").status_code
        assert code == (200 if s + 1 in segments else 403)
        assert http.get(f"/jobs/{job_id}/states/{s * 10 + 5}").status_code == 403
    # reveal after the challenge deadline and finalize: the reward is restaked (added to the
    # solver's stake), the wallet unchanged
    verifiers_approve(chain, job_id)
    past_challenge_deadline(chain, job_id)
    before = chain.balances.get(SOLVER, 0)
    staked = chain.staked.get((SOLVER, int(Role.Solver)), 0)
    node.step()
    assert chain.secrets[job_id] == rec.secret
    assert chain.jobs[job_id].status is JobStatus.Finalized
    assert http.get(f"/jobs/{job_id}/manifest").json()["root"] == to_hex(rec.root)
    node.step()
    assert node.job_record(job_id).phase == Phase.DONE  # type: ignore[union-attr]
    reward = chain.jobs[job_id].reward
    assert chain.staked[(SOLVER, int(Role.Solver))] - staked == reward  # nothing to claim
    assert chain.balances.get(SOLVER, 0) == before
    assert chain.count("claimCredit", SOLVER) == 0
    earned = node.metrics.registry.get_sample_value("veritrain_earnings_vtt_total")
    assert earned == reward / 10**18  # counted once, when the node saw the job Finalized


def test_killed_mid_training_resumes_from_last_checkpoint(tmp_path: Path, caplog) -> None:
    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    first = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    first.step()  # claim
    puts = 0
    original = first.store.put

    def put_then_die(blob: bytes | bytearray, *, durable: bool = True) -> bytes:
        nonlocal puts
        puts += 1
        if puts == 3:
            first._stop.set()  # the process "dies" while checkpoint 20 is written
        return original(blob, durable=durable)

    first.store.put = put_then_die  # type: ignore[method-assign]
    first.step()
    rec = first.job_record(job_id)
    # checkpoint 30 may be made (training runs one checkpoint ahead of its writes) before the
    # training thread sees the stop
    assert rec is not None and rec.phase == Phase.TRAINING and len(rec.hashes) in (3, 4)
    assert chain.jobs[job_id].status is JobStatus.Claimed
    made = len(rec.hashes)

    second = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    with caplog.at_level(logging.INFO):
        second.step()
    assert f"resuming from step {(made - 1) * 10}" in caplog.text
    assert chain.jobs[job_id].status is JobStatus.Committed
    assert second.job_record(job_id).hashes[:made] == rec.hashes  # type: ignore[union-attr]
    assert chain.count("claimJob") == 1


def test_a_checkpoint_lost_before_the_commit_is_rebuilt_and_all_synced(tmp_path: Path) -> None:
    """Checkpoints are fsynced on the writer thread, never on the training thread; one lost to
    a power cut (an empty file after the restart) is recomputed by replay before the solver
    commits, and every committed file is made durable before the commit."""
    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    first = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    first.step()  # claim
    original = first.store.put

    def put_then_die(blob: bytes | bytearray, *, durable: bool = True) -> bytes:
        # durable, and off the training thread (the writer's)
        assert durable and threading.current_thread().name.startswith("checkpoint-writer")
        digest = original(blob, durable=durable)
        if step_of(blob) == 20:
            first._stop.set()
        return digest

    first.store.put = put_then_die  # type: ignore[method-assign]
    first.step()
    rec = first.job_record(job_id)
    assert rec is not None and rec.phase == Phase.TRAINING
    first.store.path(rec.hashes[1]).write_bytes(b"")  # checkpoint 10: lost to a power cut

    second = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    synced: list[list[bytes]] = []
    sync = second.store.sync
    second.store.sync = lambda digests: (synced.append(list(digests)), sync(digests))[1]  # type: ignore[method-assign]
    second.step()
    assert chain.jobs[job_id].status is JobStatus.Committed
    final = second.job_record(job_id)
    assert final is not None and synced == [list(final.hashes)]
    assert second.store.get(final.hashes[1])  # rebuilt: re-hashes to its name


def step_of(blob: bytes | bytearray) -> int:
    """The step in a checkpoint's header."""
    from veritrain.state import read_header

    return int(read_header(bytes(blob))["step"])


def test_restart_after_commit_reserves_and_does_not_recommit(tmp_path: Path) -> None:
    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    first = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    first.step()
    first.step()
    assert chain.jobs[job_id].status is JobStatus.Committed
    second = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    assert second.catalog.get(job_id) is not None  # re-served right away
    second.step()
    assert chain.count("commitCheckpoints") == 1 and chain.count("claimJob") == 1


def test_crash_between_commit_tx_and_state_write_is_recovered(tmp_path: Path) -> None:
    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    node = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    node.step()
    node.step()
    with node.state.transaction() as records:  # as if the process died before recording it
        records.jobs[job_id].phase = Phase.TRAINED
    again = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    again.step()
    assert again.job_record(job_id).phase == Phase.COMMITTED  # type: ignore[union-attr]
    assert chain.count("commitCheckpoints") == 1


def test_a_spec_that_fails_its_hash_is_never_claimed(tmp_path: Path) -> None:
    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    chain.set_job(job_id, spec_hash=b"\x11" * 32)
    node = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    node.step()
    assert chain.jobs[job_id].status is JobStatus.Open and chain.count("claimJob") == 0


def _forced_job_with_claims(tmp_path: Path) -> tuple[FakeChain, int, SolverNode, SolverJob]:
    """A job that always carries a forced error, claimed, trained, committed and assigned, with
    the solver's claims posted: (chain, job id, solver node, the solver's job record)."""
    chain = FakeChain(forced_error_rate_bps=10_000)
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    node = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    for _ in range(4):
        node.step()
        chain.advance(blocks=2)
    rec = node.job_record(job_id)
    assert rec is not None and rec.claims is not None
    return chain, job_id, node, rec


def test_forced_error_is_planted_and_proven(tmp_path: Path) -> None:
    chain, job_id, node, rec = _forced_job_with_claims(tmp_path)
    forced = rec.claims.forced_sample
    assert forced is not None
    segment = chain.assignments[job_id].segments[forced]
    true_end = rec.hashes[segment + 1]
    assert chain.claims[job_id].end_hashes[forced] == forced_claim(true_end)
    assert rec.claims.forced_true_end == true_end
    verifiers_approve(chain, job_id)
    past_challenge_deadline(chain, job_id)
    node.step()  # the fake checks every proof and the forced claim, as the contract does
    assert chain.outcome(job_id) == (RoundOutcome.Forced, forced)
    assert chain.forced_settled == {job_id: forced}
    assert chain.jobs[job_id].status is JobStatus.Finalized


def test_the_reveal_proves_every_claim_with_one_multiproof(tmp_path: Path) -> None:
    """The fake checks the reveal as the contract does: the forced claim first, then one
    multiproof of every claimed checkpoint (segments 2 and 3 share checkpoint 3, where the
    forced sample's true end stands); each end's single proof is kept for the mirrors."""
    chain, job_id, node, rec = _forced_job_with_claims(tmp_path)
    assert rec.secret is not None
    segments = list(chain.assignments[job_id].segments)
    assert segments == [2, 3]  # adjacent: one shared checkpoint
    tree = checkpoint_tree(rec.hashes, rec.interval)
    indices, _ = claim_leaves(
        segments, [rec.hashes[s] for s in segments], [rec.hashes[s + 1] for s in segments]
    )
    assert indices == [2, 3, 4]
    proof = tree.multiproof(indices)
    # leaf 5 (padding), then the nodes over leaves 0-1 and 6-7: three hashes, not 3 x 3
    assert proof == [ZERO_LEAF, tree.proof(2)[1], tree.proof(4)[1]]
    verifiers_approve(chain, job_id)
    past_challenge_deadline(chain, job_id)
    solver = chain.client(SOLVER)
    sid = solver.jobs.submission_of(job_id)
    true_end = rec.claims.forced_true_end

    def refused(forced_true_end: bytes, sent: list[bytes]) -> str:
        with pytest.raises(ContractRevert) as revert_:
            solver.round.reveal_secret(sid, rec.secret, forced_true_end, sent)
        return revert_.value.name

    assert refused(os.urandom(32), []) == "ForcedClaimMismatch"  # before the proof
    flipped = bytes([proof[0][0] ^ 1]) + proof[0][1:]
    for bad in ([], proof[:1], [*proof, proof[0]], [flipped, *proof[1:]], proof[::-1]):
        assert refused(true_end, bad) == "InvalidClaimsProof"
    posted = chain.claims[job_id]
    chain.claims[job_id] = ClaimsView(
        (posted.start_hashes[0], os.urandom(32)), posted.end_hashes, posted.secret_commitment
    )  # segment 3 starts where segment 2 did not end
    assert refused(true_end, proof) == "InvalidClaimsProof"
    chain.claims[job_id] = posted
    assert job_id not in chain.secrets
    node.step()
    assert chain.secrets[job_id] == rec.secret
    assert chain.proven_ends[job_id] == [(rec.hashes[s + 1], tree.proof(s + 1)) for s in segments]


def test_assigns_with_its_claims_in_one_transaction_when_it_can_replay_the_draw(
    tmp_path: Path,
) -> None:
    """Where the solver replays the assignment's draw (`predict_sample`), it assigns and posts
    its claims in one `assignAndPostClaims`; where it cannot, or another account assigned first,
    it posts them alone after the assignment."""
    chain = FakeChain(forced_error_rate_bps=10_000)
    chain.predictable = True
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    node = SolverNode(chain.client(SOLVER), tmp_path / "one", serve=False)
    node.step()  # stake + claim
    node.step()  # train + commit
    chain.advance(blocks=2)
    node.step()  # assign + claims
    assert chain.jobs[job_id].status is JobStatus.Verifying
    assert chain.count("assignAndPostClaims") == 1
    assert chain.count("assignVerifiers") == 0 and chain.count("postClaims") == 0
    rec = node.job_record(job_id)
    assert rec is not None and rec.claims is not None
    segments = chain.assignments[job_id].segments
    assert tuple(rec.claims.segments) == segments
    claims = chain.claims[job_id]
    assert claims.start_hashes == tuple(rec.hashes[s] for s in segments)
    assert rec.claims.forced_sample is not None  # the forced claim is in them (rate 100%)
    assert claims.end_hashes[rec.claims.forced_sample] == forced_claim(
        rec.hashes[segments[rec.claims.forced_sample] + 1]
    )
    assert node.catalog.is_sealed(job_id)  # sealed to the sampled starts, as after postClaims
    # another account assigned first: the claims follow alone, in the next step
    other = FakeChain()
    other.predictable = True
    second = other.post_job(SUBMITTER, tiny_spec())
    node = SolverNode(other.client(SOLVER), tmp_path / "two", serve=False)
    node.step()
    node.step()
    other.advance(blocks=2)
    other.client(SUBMITTER).jobs.assign_verifiers(second)
    node.step()
    node.step()
    assert other.count("assignAndPostClaims") == 0 and other.count("postClaims") == 1
    assert second in other.claims


def test_restart_between_commit_and_reveal_reveals_the_same_secret(tmp_path: Path) -> None:
    chain = FakeChain(forced_error_rate_bps=10_000)
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    first = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    for _ in range(4):
        first.step()
        chain.advance(blocks=2)
    assert job_id in chain.claims
    secret = first.job_record(job_id).secret  # type: ignore[union-attr]
    second = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    assert second.catalog.is_sealed(job_id)  # re-served sealed after the restart
    verifiers_approve(chain, job_id)
    past_challenge_deadline(chain, job_id)
    second.step()
    assert chain.secrets[job_id] == secret
    assert chain.count("postClaims") == 1 and chain.count("revealSecretAndFinalize") == 1
    assert not second.catalog.is_sealed(job_id)


def test_no_reveal_inside_the_window_rejects_the_job(tmp_path: Path) -> None:
    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    node = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    for _ in range(4):
        node.step()
        chain.advance(blocks=2)
    chain.now = chain.windows(job_id).secret_reveal_closes + 1  # the solver slept through it
    assert chain.outcome(job_id)[0] is RoundOutcome.NoReveal
    node.step()
    assert chain.count("revealSecret") == chain.count("revealSecretAndFinalize") == 0
    assert chain.jobs[job_id].status is JobStatus.Rejected


def test_skips_a_job_whose_init_hash_is_not_its_specs_initial_state(tmp_path: Path, caplog) -> None:
    """A job whose initHash is not the spec's seed-initialised state can never be committed:
    the solver skips it (and says why) instead of claiming it and losing its stake."""
    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, tiny_spec(), init_hash=b"\x01" * 32)
    node = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    with caplog.at_level(logging.WARNING):
        node.step()
    assert chain.count("claimJob") == 0
    assert chain.jobs[job_id].status is JobStatus.Open
    assert job_id in node.state.read().skip
    assert f"job {job_id}" in caplog.text and "initHash" in caplog.text


def _register(chain: FakeChain, spec: object, **changes: object) -> None:
    """Record ``spec``'s model as registered on the fake chain with ``spec``'s commitments,
    ``changes`` applied (docs/SECURITY.md P-18)."""
    from chain.contracts.shares import RegisteredModel
    from veritrain.lineage import ModelCommitments

    commitments = ModelCommitments.of(spec, b"\x07" * 32)  # type: ignore[arg-type]
    record = RegisteredModel(**{**commitments.model_dump(), **changes})
    chain.models = {spec.model_id_hash(): record}  # type: ignore[attr-defined]


def test_skips_a_job_whose_spec_is_not_of_its_model(tmp_path: Path, caplog) -> None:
    """P-18: a job whose spec trains another architecture than its model was registered with
    mints shares the model's trainers did not earn: the solver skips it (and says why); a job of
    the registered architecture is claimed."""
    chain = FakeChain()
    _register(chain, tiny_spec(), architecture=b"\x01" * 32)
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    node = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    with caplog.at_level(logging.WARNING):
        node.step()
    assert chain.count("claimJob") == 0
    assert chain.jobs[job_id].status is JobStatus.Open
    assert job_id in node.state.read().skip
    assert f"job {job_id}" in caplog.text and "architecture" in caplog.text

    matching = FakeChain()
    _register(matching, tiny_spec())
    matching.post_job(SUBMITTER, tiny_spec())
    SolverNode(matching.client(SOLVER), tmp_path / "ok", serve=False).step()
    assert matching.count("claimJob") == 1


def test_replaying_a_job_not_of_its_model_is_unavailable(tmp_path: Path) -> None:
    """P-18: replayers treat a spec whose compute per step is not its model's as unreplayable,
    like a retired arithmetic (verifiers reject, judges vote the claim wrong)."""
    import pytest

    from veritrain.errors import CheckpointUnavailable

    chain = FakeChain()
    spec = tiny_spec()
    _register(chain, spec, compute_per_step=1)
    job_id = chain.post_job(SUBMITTER, spec)
    node = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    with pytest.raises(CheckpointUnavailable, match="compute per step"):
        node.replay_spec(chain.jobs[job_id])


def test_commit_proves_leaf_zero_is_the_init_hash(tmp_path: Path) -> None:
    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    node = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    node.step()  # claim
    node.step()  # train + commit
    rec = node.job_record(job_id)
    assert rec is not None and rec.hashes[0] == chain.jobs[job_id].init_hash
    assert chain.jobs[job_id].status is JobStatus.Committed


def test_a_flipped_bit_in_a_served_checkpoint_is_repaired_by_replay(tmp_path: Path) -> None:
    chain = FakeChain()
    node = run_solver_to_commit(chain, tmp_path)
    rec = node.job_record(1)
    assert rec is not None and rec.claims is not None
    step = rec.claims.segments[0] * rec.interval  # a sampled start: served while sealed
    digest = rec.hashes[rec.claims.segments[0]]
    path = node.store.path(digest)
    blob = bytearray(path.read_bytes())
    blob[len(blob) // 2] ^= 0x10
    path.write_bytes(bytes(blob))
    r = http_for(node).get(f"/jobs/1/checkpoints/{step}")
    assert r.status_code == 200
    assert state_hash(r.content) == digest
    assert node.store.get(digest) == r.content  # the file itself is repaired


def test_a_solver_with_models_claims_only_their_jobs(tmp_path: Path, caplog) -> None:
    chain = FakeChain()
    other = chain.post_job(SUBMITTER, tiny_spec().model_copy(update={"model_id": "other-mlp"}))
    mine = chain.post_job(SUBMITTER, tiny_spec())
    node = SolverNode(chain.client(SOLVER), tmp_path, serve=False, models=["digits-mlp"])
    with caplog.at_level(logging.INFO, logger="solver"):
        node.step()
    assert chain.jobs[other].status is JobStatus.Open
    assert chain.jobs[mine].status is JobStatus.Claimed
    assert f"job {other}: model 0x" in caplog.text and "not one this solver trains" in caplog.text


def test_repro_jobs_run_with_the_nodes_threads_native_ones_with_their_pins(
    tmp_path: Path,
) -> None:
    import torch

    from veritrain.spec import ExecutionProfile

    before = torch.get_num_threads()
    try:
        node = SolverNode(FakeChain().client(SOLVER), tmp_path, serve=False, threads=2)
        repro = tiny_spec().model_copy(update={"profile": ExecutionProfile.repro()})
        native = tiny_spec().model_copy(update={"profile": ExecutionProfile(threads=1)})
        node.engine_for(repro)
        assert torch.get_num_threads() == 2
        node.engine_for(native)
        assert torch.get_num_threads() == 1
        node.engine_for(repro)  # cached engine: the process is configured again
        assert torch.get_num_threads() == 2
        assert node.compute()["threads"] == 2
    finally:
        torch.set_num_threads(before)


def _unavailable_once(node: SolverNode) -> None:
    """Make the node's first `contribution_start` fail as an unreachable solver's server does
    (a run's earlier final state cannot be fetched), and later ones work."""
    from veritrain.errors import CheckpointUnavailable

    honest = node.contribution_start
    calls = {"n": 0}

    def flaky(spec_uri: str, spec_hash: bytes, job_id: int | None = None) -> bytes | None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise CheckpointUnavailable("http://solver.example/jobs/1: connection refused")
        return honest(spec_uri, spec_hash, job_id)

    node.contribution_start = flaky  # type: ignore[method-assign]


def test_a_start_that_cannot_be_built_yet_is_tried_again(tmp_path: Path, caplog) -> None:
    """A run's contribution whose start needs an earlier final state that its solver's server
    does not serve right now is not skipped for good: the solver looks at it again next round."""
    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    node = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    _unavailable_once(node)
    with caplog.at_level(logging.WARNING):
        node.step()
    assert chain.jobs[job_id].status is JobStatus.Open
    assert job_id not in node.state.read().skip and "trying later" in caplog.text
    node.step()
    assert chain.jobs[job_id].status is JobStatus.Claimed


def test_a_held_job_whose_start_cannot_be_built_yet_is_not_abandoned(tmp_path: Path) -> None:
    """After a restart a held contribution rebuilds its start; if an earlier final state is
    unavailable just then, the job waits for the next round instead of being abandoned."""
    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    SolverNode(chain.client(SOLVER), tmp_path, serve=False).step()  # stake + claim
    assert chain.jobs[job_id].status is JobStatus.Claimed
    restarted = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    _unavailable_once(restarted)
    restarted.step()
    assert restarted.job_record(job_id).phase == Phase.TRAINING  # type: ignore[union-attr]
    restarted.step()
    assert chain.jobs[job_id].status is JobStatus.Committed


def test_a_solver_with_a_price_skips_jobs_that_pay_less(tmp_path: Path, caplog) -> None:
    """`--min-reward`: a spammer's unpaid or underpaid jobs come first in id order; a solver
    that set a price skips them for good (and says so once) and claims the first that pays."""
    chain = FakeChain()
    _register(chain, tiny_spec())
    unpaid = chain.post_job(SUBMITTER, tiny_spec(), reward=0)
    underpaid = chain.post_job(SUBMITTER, tiny_spec(), reward=999)
    paid = chain.post_job(SUBMITTER, tiny_spec(), reward=1000)
    node = SolverNode(chain.client(SOLVER), tmp_path, serve=False, min_reward=1000)
    with caplog.at_level(logging.INFO):
        node.step()
    assert chain.jobs[paid].status is not JobStatus.Open
    assert chain.jobs[unpaid].status is JobStatus.Open
    assert chain.jobs[underpaid].status is JobStatus.Open
    assert {unpaid, underpaid} <= set(node.state.read().skip)
    assert f"job {underpaid} pays" in caplog.text and "--min-reward" in caplog.text

    anyone = FakeChain()
    _register(anyone, tiny_spec())
    first = anyone.post_job(SUBMITTER, tiny_spec(), reward=0)
    SolverNode(anyone.client(SOLVER), tmp_path / "any", serve=False).step()
    assert anyone.jobs[first].status is not JobStatus.Open  # no price: any job is claimed


def test_a_reveal_whose_finalize_reverts_is_sent_alone(tmp_path: Path) -> None:
    """The solver reveals its secret and finalizes in one transaction; when that finalize
    reverts (the combined call undoes the reveal too), it sends the reveal alone in the same
    round, so the secret never misses its window because of the finalize."""
    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    node = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    for _ in range(4):
        node.step()
        chain.advance(blocks=2)
    verifiers_approve(chain, job_id)
    past_challenge_deadline(chain, job_id)
    jobs = node.client.jobs

    def finalize_refused(job: int) -> object:
        raise revert("RoundPending", jobId=job)

    jobs.finalize = finalize_refused  # type: ignore[method-assign]
    node.step()
    assert chain.count("revealSecretAndFinalize") == 0
    assert chain.count("revealSecret") == 1 and job_id in chain.secrets
    assert chain.jobs[job_id].status is JobStatus.Verifying
