"""`VerifierNode.step()` against the fake protocol, replaying a real small run over HTTP
(FastAPI TestClient): honest approve, cheater reject, lazy approve, forced errors, sealed
verdicts as end state hashes (the claim to approve, the replayed end to reject, the zero end
when nothing was replayed; commit, then reveal the same after a restart), no double
submission, a state file from before end hashes."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi.testclient import TestClient

from adversary.verifier import (
    GriefingVerifierNode,
    LazyVerifierNode,
    griefing_end,
    verifier_node,
)
from noderuntime.mirror import create_mirror_app
from tests.utils.fake_chain import FakeChain
from tests.utils.node_fixtures import (
    VERIFIERS,
    http_for,
    past_challenge_deadline,
    run_solver_to_commit,
    tiny_spec,
)
from verifier.node import UNAVAILABLE_ATTEMPTS, VerifierNode
from veritrain.commitments import verdict_commitment
from veritrain.enums import JobStatus, Verdict
from veritrain.errors import CheckpointHashMismatch, CheckpointUnavailable
from veritrain.forced import UNREPLAYED_END
from veritrain.merkle import verify_checkpoint
from veritrain.state import state_hash
from veritrain.wire import ProofResponse


def _setup(
    tmp: Path, adversary=None, lazy=False, rate_bps: int = 0
) -> tuple[FakeChain, VerifierNode]:
    chain = FakeChain(forced_error_rate_bps=rate_bps)
    chain.forced_segments = [1, 3]  # sample an honest and (for cheaters) a cheating segment
    verifier = verifier_node(chain.client(VERIFIERS[0]), tmp / "v", lazy=lazy)
    verifier.step()  # stakes before the assignment
    solver = run_solver_to_commit(chain, tmp, adversary)
    verifier.http_client = http_for(solver)
    return chain, verifier


def _seal_and_reveal(verifier: VerifierNode) -> None:
    verifier.step()  # check the claims, seal (commitVerdicts)
    verifier.step()  # every assigned verifier sealed: reveal


def test_honest_solver_is_approved(tmp_path: Path) -> None:
    chain, verifier = _setup(tmp_path)
    verifier.step()
    assert chain.verdicts[(1, VERIFIERS[0])] == [Verdict.None_, Verdict.None_]  # still sealed
    rec = verifier.state.read().jobs[1]
    assert rec.ends is not None and rec.salt is not None
    claimed = list(chain.claims[1].end_hashes)
    assert rec.ends == claimed  # a matching replay seals the claim itself
    assert [r.end for r in rec.results.values()] == claimed  # the replayed ends are kept
    assert chain.sealed[(1, VERIFIERS[0])] == verdict_commitment(1, VERIFIERS[0], claimed, rec.salt)
    verifier.step()
    assert chain.verdicts[(1, VERIFIERS[0])] == [Verdict.Approve, Verdict.Approve]
    assert chain.ends[(1, VERIFIERS[0])] == claimed


@pytest.mark.parametrize("mode", ["skip-steps", "perturb"])
def test_cheating_segment_is_rejected_with_a_reason(tmp_path: Path, mode: str) -> None:
    chain, verifier = _setup(tmp_path, adversary=mode)
    _seal_and_reveal(verifier)
    assert chain.verdicts[(1, VERIFIERS[0])] == [Verdict.Approve, Verdict.Reject]
    results = verifier.state.read().jobs[1].results
    assert results[1].ok is False and "replay of steps 30..40" in results[1].reason


def test_a_mismatch_seals_the_replayed_end(tmp_path: Path) -> None:
    chain, verifier = _setup(tmp_path, adversary="perturb")  # segment 3 is perturbed
    _seal_and_reveal(verifier)
    rec = verifier.state.read().jobs[1]
    claimed = chain.claims[1].end_hashes
    replayed = rec.results[1].end
    assert replayed is not None and replayed not in (claimed[1], UNREPLAYED_END)
    assert rec.ends == [claimed[0], replayed]
    assert chain.ends[(1, VERIFIERS[0])] == [claimed[0], replayed]
    rnd, sid = chain.client(VERIFIERS[0]).round, chain.client(VERIFIERS[0]).jobs.submission_of(1)
    assert rnd.replayed_end_of(sid, VERIFIERS[0], 1) == replayed
    assert rnd.replayed_end_of(sid, VERIFIERS[0], 0) == bytes(32)  # approved: no replayed end


def test_lazy_verifier_approves_a_cheater(tmp_path: Path) -> None:
    chain, verifier = _setup(tmp_path, adversary="perturb", lazy=True)
    _seal_and_reveal(verifier)
    assert chain.verdicts[(1, VERIFIERS[0])] == [Verdict.Approve, Verdict.Approve]


def _forced_job(tmp: Path, node_class: type[VerifierNode]) -> tuple[FakeChain, Any, Any]:
    """A forced job (samples [1, 3], both eligible) verified by one `node_class` verifier;
    returns (chain, verifier, solver) once the verdicts are revealed."""
    chain = FakeChain(forced_error_rate_bps=10_000)
    chain.forced_segments = [1, 3]
    verifier = node_class(chain.client(VERIFIERS[0]), tmp / "v")
    verifier.step()  # stakes before the assignment
    solver = run_solver_to_commit(chain, tmp)
    verifier.http_client = http_for(solver)
    _seal_and_reveal(verifier)
    return chain, verifier, solver


def test_forced_error_is_rejected_with_the_replayed_true_end(tmp_path: Path) -> None:
    chain, verifier, solver = _forced_job(tmp_path, VerifierNode)
    claims = solver.job_record(1).claims
    assert claims is not None and claims.forced_sample is not None
    forced = claims.forced_sample
    verdicts = chain.verdicts[(1, VERIFIERS[0])]
    assert [j for j, v in enumerate(verdicts) if v is Verdict.Reject] == [forced]
    rec = verifier.state.read().jobs[1]
    assert "solver claimed" in rec.results[forced].reason
    # only a replay yields the true end hidden behind forcedClaim = keccak(tag, trueEnd)
    assert rec.ends is not None and rec.ends[forced] == claims.forced_true_end
    past_challenge_deadline(chain)
    solver.step()  # reveals the secret and the true end, then finalizes
    rnd, sid = chain.client(VERIFIERS[0]).round, chain.client(VERIFIERS[0]).jobs.submission_of(1)
    assert rnd.forced_end_matches(sid, VERIFIERS[0]) is True
    assert chain.jobs[1].status is JobStatus.Finalized  # the forced sample is not disputed
    assert chain.verdicts[(1, VERIFIERS[0])][forced] is Verdict.Approve  # of the true end


def test_a_lazy_verifier_seals_the_claims_and_a_griefer_a_made_up_end(tmp_path: Path) -> None:
    """The lazy verifier echoes the claims; the griefer seals a made-up end, a rejection that
    claims a replay (a zero end would be an abstention, P-20, which nobody is slashed for)."""
    chain, lazy, _solver = _forced_job(tmp_path / "lazy", LazyVerifierNode)
    assert lazy.state.read().jobs[1].ends == list(chain.claims[1].end_hashes)
    assert chain.verdicts[(1, VERIFIERS[0])] == [Verdict.Approve, Verdict.Approve]
    chain, griefer, solver = _forced_job(tmp_path / "griefer", GriefingVerifierNode)
    segments = chain.assignments[1].segments
    assert griefer.state.read().jobs[1].ends == [griefing_end(1, int(s)) for s in segments]
    assert UNREPLAYED_END not in griefer.state.read().jobs[1].ends
    assert chain.verdicts[(1, VERIFIERS[0])] == [Verdict.Reject, Verdict.Reject]
    past_challenge_deadline(chain)
    solver.step()  # reveals the secret and the true end, then finalizes
    sid = chain.client(VERIFIERS[0]).jobs.submission_of(1)
    assert chain.client(VERIFIERS[0]).round.forced_end_matches(sid, VERIFIERS[0]) is False
    # its made-up end is not the true end: the forced sample stays disputed against it
    forced = solver.job_record(1).claims.forced_sample
    assert chain.jobs[1].status is JobStatus.Disputed and forced in chain.disputed[1]


def test_restart_between_commit_and_reveal_reveals_the_same_verdicts(tmp_path: Path) -> None:
    chain, verifier = _setup(tmp_path, adversary="perturb")
    verifier.step()  # sealed
    sealed = chain.sealed[(1, VERIFIERS[0])]
    ends = verifier.state.read().jobs[1].ends
    again = VerifierNode(chain.client(VERIFIERS[0]), tmp_path / "v")  # no HTTP: no replay
    again.step()
    assert chain.verdicts[(1, VERIFIERS[0])] == [Verdict.Approve, Verdict.Reject]
    assert chain.sealed[(1, VERIFIERS[0])] == sealed
    assert chain.ends[(1, VERIFIERS[0])] == ends  # the persisted ends, not recomputed ones
    assert chain.count("commitVerdicts") == 1 and chain.count("revealVerdicts") == 1


def test_a_state_file_sealed_with_approvals_loads_and_takes_the_lost_path(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A state file from before end hashes (``approvals``, no ``ends``) loads; a job it sealed
    cannot be revealed, which is logged once."""
    chain, verifier = _setup(tmp_path)
    verifier.step()  # sealed with ends
    path = tmp_path / "v" / "verifier_state.json"
    state = json.loads(path.read_text())
    job = state["jobs"]["1"]
    job["approvals"] = [True, True]
    del job["ends"]
    for result in job["results"].values():
        del result["end"]
    path.write_text(json.dumps(state))
    again = VerifierNode(chain.client(VERIFIERS[0]), tmp_path / "v")
    assert again.state.read().jobs[1].ends is None
    with caplog.at_level(logging.ERROR):
        again.step()
        again.step()
    assert sum("verdicts are lost" in r.getMessage() for r in caplog.records) == 1
    assert again.state.read().jobs[1].lost is True
    assert chain.count("revealVerdicts") == 0 and chain.count("commitVerdicts") == 1


def test_crash_after_seal_before_record_is_not_resealed(tmp_path: Path) -> None:
    chain, verifier = _setup(tmp_path)
    _seal_and_reveal(verifier)
    (tmp_path / "v" / "verifier_state.json").unlink()  # state lost entirely
    again = VerifierNode(chain.client(VERIFIERS[0]), tmp_path / "v")
    again.http_client = verifier.http_client
    again.step()
    assert chain.count("commitVerdicts") == 1 and chain.count("revealVerdicts") == 1


def test_unreachable_solver_is_disputed_by_an_abstention_after_retries(tmp_path: Path) -> None:
    """Data the solver does not serve: after retries the verifier seals zero ends, which the
    contract records as abstentions (P-20): the samples are disputed, and the verifier is neither
    slashed if the solver later proves them valid nor paid for a check it could not make."""
    chain, verifier = _setup(tmp_path)
    verifier.http_client = None
    chain.set_job(1, checkpoint_url="http://127.0.0.1:9/jobs/1")  # nothing listens there
    for _ in range(UNAVAILABLE_ATTEMPTS + 1):
        verifier.step()  # early in the window: keep retrying
        assert chain.count("commitVerdicts") == 0
    chain.now = chain.jobs[1].verdict_deadline - 10  # last third of the window
    _seal_and_reveal(verifier)
    assert chain.verdicts[(1, VERIFIERS[0])] == [Verdict.Abstain, Verdict.Abstain]
    assert chain.disputed[1] == {0, 1}
    rec = verifier.state.read().jobs[1]
    assert "unavailable" in rec.results[0].reason
    assert rec.ends == [UNREPLAYED_END, UNREPLAYED_END]  # nothing replayed: the zero end


def test_job_index_follows_events_from_a_persisted_cursor(tmp_path: Path) -> None:
    chain, verifier = _setup(tmp_path)
    verifier.step()  # discovers its assignment (and seals)
    index = verifier.state.read().index
    assert index.watch == [1] and index.to_assign == []
    assert index.cursor >= chain.block  # read up to the head (its own seal mined one more)
    for _ in range(5):  # open jobs nobody assigns: nothing for this verifier to watch
        chain.post_job("0x00000000000000000000000000000000000000a9", tiny_spec(seed=11))
    chain.advance(blocks=3)
    restarted = VerifierNode(chain.client(VERIFIERS[0]), tmp_path / "v")
    assert restarted.state.read().index.cursor == index.cursor  # resumes, no rescan
    restarted.step()
    again = restarted.state.read().index
    assert again.watch == [1] and again.cursor >= chain.block > index.cursor


@pytest.mark.parametrize(
    "served",
    [
        CheckpointUnavailable("http://127.0.0.1:9/jobs/1/states/7: connection refused"),
        CheckpointHashMismatch(
            b"\x01" * 32, b"\x03" * 32, "http://127.0.0.1:9/jobs/1/checkpoints/0"
        ),
    ],
    ids=["unreachable", "corrupt-bytes"],
)
def test_a_step_judge_votes_against_a_defender_that_withholds_its_data(
    tmp_path: Path, served: Exception
) -> None:
    """P-6: the step's start state comes from the defender; when it stays unreachable into the
    last third of the vote window the member votes the claim wrong (before: it abstained
    forever and the committee kept the claim). N-24: bytes that do not hash to the agreed
    state, from `/states` and then from the segment's committed start checkpoint, are withheld
    data too (before: the mismatch escaped every round, the member never voted and the silent
    committee kept the defender's claim)."""
    chain = FakeChain()
    verifier = VerifierNode(chain.client(VERIFIERS[0]), tmp_path / "v")

    def withheld(*_args: object, **_kwargs: object) -> bool:
        raise served

    verifier.judge_step = withheld  # type: ignore[method-assign]
    job = SimpleNamespace(job_id=1)
    dispute = SimpleNamespace(dispute_id=4, commit_deadline=chain.now + 300)
    claim = SimpleNamespace(step=7, start_hash=b"\x01" * 32, claimed_end_hash=b"\x02" * 32, steps=1)
    for _ in range(UNAVAILABLE_ATTEMPTS + 1):
        assert verifier._judge_step(job, dispute, claim) is None  # early: keep retrying
    chain.now = dispute.commit_deadline - 10  # last third of the vote window
    assert verifier._judge_step(job, dispute, claim) is False


def test_each_verifier_replays_only_its_own_draw(tmp_path: Path) -> None:
    """P-27: each seat draws its own segments. Verifier 0 drew segment 1 and verifier 1 the
    (perturbed) segment 3: each replays only its own sample, seals the zero end on the other
    seat's (ignored by the contract: Verdict.None, no bond), and the cheat is caught by the seat
    that drew it."""
    chain = FakeChain()
    chain.own_draws = {VERIFIERS[0]: [1], VERIFIERS[1]: [3]}
    nodes = [
        verifier_node(chain.client(v), tmp_path / f"v{i}") for i, v in enumerate(VERIFIERS[:2])
    ]
    for node in nodes:
        node.step()  # stakes before the assignment
    solver = run_solver_to_commit(chain, tmp_path, "perturb")  # segment 3 is perturbed
    for node in nodes:
        node.http_client = http_for(solver)
    for _ in range(2):  # check the own claims and seal, then reveal
        for node in nodes:
            node.step()
    assert chain.assignments[1].segments == (1, 3)  # the union, in segment order
    first, second = (node.state.read().jobs[1] for node in nodes)
    assert set(first.results) == {0} and first.results[0].ok  # replayed segment 1 only
    assert set(second.results) == {1} and not second.results[1].ok  # replayed segment 3 only
    assert first.ends is not None and first.ends[1] == UNREPLAYED_END  # not its sample
    assert second.ends is not None and second.ends[0] == UNREPLAYED_END
    assert chain.verdicts[(1, VERIFIERS[0])] == [Verdict.Approve, Verdict.None_]
    assert chain.verdicts[(1, VERIFIERS[1])] == [Verdict.None_, Verdict.Reject]
    assert chain.disputed[1] == {1}  # only the cheat is disputed


@pytest.mark.parametrize("rate_bps", [0, 10_000])
def test_a_seat_serves_the_final_state_it_replayed_when_the_solver_withholds_it(
    tmp_path: Path, rate_bps: int
) -> None:
    """P-36: a solver paid for a job that never serves its final state, to anyone. Every seat
    replays the last segment, keeps the state it reached, and once the solver proved its
    claims on chain (the forced sample's true end too) keeps that proof: the seat's mirror
    serves the final state and its proof, so the job's work is not lost with its solver."""
    chain = FakeChain(forced_error_rate_bps=rate_bps)
    chain.forced_segments = [1, 3]  # 3 is the last of the 4 segments
    verifier = VerifierNode(chain.client(VERIFIERS[0]), tmp_path / "v")
    verifier.step()  # stakes before the assignment
    solver = run_solver_to_commit(chain, tmp_path, "withhold-final")
    served = TestClient(solver.http_app())
    verifier.http_client = served
    _seal_and_reveal(verifier)  # the seal is its own (no key here: refused), the reveal handed
    solver.step()  # submits the handed reveal (revealVerdictsFor)
    assert chain.count("revealVerdictsFor") == 1
    past_challenge_deadline(chain)
    solver.step()  # reveals the secret (proving every claim), then finalizes
    assert chain.jobs[1].status is JobStatus.Finalized
    final = solver.job_record(1).hashes[-1]
    assert served.get("/jobs/1/checkpoints/40").status_code == 404  # withheld from everyone
    assert served.get("/jobs/1/proofs/4").status_code == 404
    assert verifier.mirror is not None
    verifier.step()  # the job is final: its final state is kept with its proof
    kept = verifier.mirror.proof_of(chain.jobs[1].merkle_root, 4)
    assert kept is not None and kept.state_hash_bytes() == final
    mirror = TestClient(create_mirror_app(verifier.mirror))
    body = mirror.get(f"/mirror/states/0x{final.hex()}")
    assert body.status_code == 200 and state_hash(body.content) == final
    proof = ProofResponse.model_validate(mirror.get(f"/mirror/proofs/{kept.root}/4").json())
    job = chain.jobs[1]
    assert verify_checkpoint(
        proof.proof_bytes(), job.merkle_root, job.total_steps, job.checkpoint_interval, 4, final
    )
