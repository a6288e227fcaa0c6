"""Per-step state serving for bisection (`/states/{step}`, `/state-hashes/{step}`) and the
challenger's honest play against it, on a real small run (no chain).

For an honest solver and for both cheaters the served trajectory is consistent with the
committed leaves; an honest challenger's replay pinpoints the first divergent step, and one
replayed step from the served state at that step exposes the cheat (the committee's check).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from adversary.solver import cheating_step_function
from solver.server import (
    DEFAULT_STATE_CACHE_BYTES,
    CheckpointCatalog,
    JobCheckpoints,
    StatesRateLimit,
    create_app,
)
from solver.trainer import step_function, train_job
from tests.utils.node_fixtures import tiny_spec
from veritrain.bisection import StepTrajectory, play_out
from veritrain.hexutil import from_hex
from veritrain.replay import replay_segment
from veritrain.state import state_hash
from veritrain.store import CheckpointStore
from veritrain.training import TrainingEngine
from veritrain.wire import CheckpointClient

K, N, JOB = 10, 40, 7
URL = "http://solver/jobs/7"
ARITY = 8  # BisectionGame.DISSECTION_ARITY


@pytest.fixture(scope="module")
def engine() -> TrainingEngine:
    return TrainingEngine(tiny_spec())


def _serve(
    engine: TrainingEngine,
    root: Path,
    adversary: str | None,
    *,
    disputed: bool = True,
    cache_bytes: int = DEFAULT_STATE_CACHE_BYTES,
    limit: StatesRateLimit | None = None,
):
    store = CheckpointStore(root / "store")
    hashes: list[str] = []
    step = step_function(engine) if adversary is None else cheating_step_function(engine, adversary)
    assert train_job(engine, store, hashes, step_fn=step)
    entry = JobCheckpoints.build(JOB, K, N, [from_hex(h) for h in hashes])
    catalog = CheckpointCatalog(store, cache_dir=root / "cache", state_cache_bytes=cache_bytes)
    catalog.publish(entry, lambda: (engine, step))
    if disputed:
        catalog.open_dispute(JOB)
    app = create_app(catalog, states_rate_limit=limit or StatesRateLimit(rate=1e6, burst=10**6))
    return TestClient(app, base_url="http://solver"), entry, catalog


@pytest.mark.parametrize("adversary", [None, "skip-steps", "perturb"])
def test_served_states_match_hashes_and_committed_leaves(
    engine: TrainingEngine, tmp_path: Path, adversary: str | None
) -> None:
    http, entry, _ = _serve(engine, tmp_path, adversary)
    served = {}
    for step in range(N + 1):
        body = CheckpointClient(URL, http).state_hash(step)
        served[step] = body.state_hash_bytes()
        if step % K == 0:  # the leaves the solver committed to
            assert served[step] == entry.hashes[step // K]
    for step in (0, 13, 21, 29, 30, 37):
        r = http.get(f"/jobs/{JOB}/states/{step}")
        assert r.status_code == 200
        assert from_hex(r.headers["X-State-Hash"]) == state_hash(r.content) == served[step]
    # one replayed step from a served state continues the served trajectory where the solver
    # was honest (segments 0 and 1 for the cheaters)
    for t in (3, 14):
        blob = CheckpointClient(URL, http).state(t, served[t])
        assert state_hash(replay_segment(engine, blob, t + 1, start_step=t)) == served[t + 1]


def test_unknown_step_or_job_is_404(engine: TrainingEngine, tmp_path: Path) -> None:
    http, _, _ = _serve(engine, tmp_path, None)
    assert http.get(f"/jobs/{JOB}/states/{N + 1}").status_code == 404
    assert http.get("/jobs/99/state-hashes/3").status_code == 404
    catalog = CheckpointCatalog(CheckpointStore(tmp_path / "s2"))
    entry = JobCheckpoints.build(1, K, N, [b"\x01" * 32] * 5)
    catalog.publish(entry)  # no replayer: only checkpoint steps are servable
    catalog.open_dispute(1)
    http2 = TestClient(create_app(catalog))
    assert http2.get("/jobs/1/state-hashes/10").json()["state_hash"] == "0x" + "01" * 32
    assert http2.get("/jobs/1/state-hashes/11").status_code == 404


@pytest.mark.parametrize(("adversary", "first_bad_step"), [("skip-steps", 21), ("perturb", 29)])
def test_honest_challenger_pinpoints_first_divergent_step(
    engine: TrainingEngine, tmp_path: Path, adversary: str, first_bad_step: int
) -> None:
    http, entry, _ = _serve(engine, tmp_path, adversary)
    segment = 2
    a, b = segment * K, (segment + 1) * K
    start = CheckpointClient(URL, http).state(a, entry.hashes[segment])
    mine = StepTrajectory(engine, start, b, cache_path=tmp_path / "challenger.json")
    assert mine.hash_at(b) != entry.hashes[segment + 1]  # the segment is wrong

    def defender(step: int) -> bytes:
        return CheckpointClient(URL, http).state_hash(step).state_hash_bytes()

    t, agreed, claimed, _ = play_out(a, b, defender, mine.hash_at, ARITY)
    assert t == first_bad_step
    assert agreed == mine.hash_at(t) == defender(t)
    assert claimed == defender(t + 1) != mine.hash_at(t + 1)
    # the step committee: fetch state t by hash, replay ONE step, compare with the claim
    blob = CheckpointClient(URL, http).state(t, agreed)
    assert state_hash(replay_segment(engine, blob, t + 1, start_step=t)) != claimed


def test_honest_segment_challenger_agrees_everywhere(
    engine: TrainingEngine, tmp_path: Path
) -> None:
    http, entry, catalog = _serve(engine, tmp_path, None)
    start = CheckpointClient(URL, http).state(10, entry.hashes[1])
    mine = StepTrajectory(engine, start, 20)
    assert mine.hashes() == catalog.trajectory(JOB, 1).hashes()
    t, _, claimed, _ = play_out(10, 20, catalog.trajectory(JOB, 1).hash_at, mine.hash_at, ARITY)
    assert t == 19 and claimed == entry.hashes[2] == mine.hash_at(20)  # a griefer loses step 19


def test_step_hash_cache_survives_restart(engine: TrainingEngine, tmp_path: Path) -> None:
    start = engine.state_bytes(engine.init_state())
    cache = tmp_path / "traj.json"
    first = StepTrajectory(engine, start, 10, cache_path=cache)
    hashes = first.hashes()

    def no_replay(_state) -> None:
        raise AssertionError("a restarted node must not replay again")

    again = StepTrajectory(engine, start, 10, step_fn=no_replay, cache_path=cache)
    assert again.complete and again.hashes() == hashes
    # a cache for another start state is ignored
    other = engine.state_bytes(engine.run(engine.init_state(), 1))
    assert not StepTrajectory(engine, other, 10, cache_path=cache).complete


def test_intermediate_states_only_while_a_dispute_needs_them(
    engine: TrainingEngine, tmp_path: Path
) -> None:
    http, entry, catalog = _serve(engine, tmp_path, None, disputed=False)
    for path in (f"/jobs/{JOB}/states/15", f"/jobs/{JOB}/state-hashes/15"):
        r = http.get(path)
        assert r.status_code == 409 and "not disputed" in r.json()["detail"], path
    assert http.get("/jobs/99/states/15").status_code == 404
    assert http.get(f"/jobs/{JOB}/states/20").status_code == 200  # checkpoints: always
    catalog.open_dispute(JOB)
    assert http.get(f"/jobs/{JOB}/states/15").status_code == 200
    catalog.close_dispute(JOB)
    assert http.get(f"/jobs/{JOB}/states/15").status_code == 409
    assert len(catalog.state_cache) == 0  # dropped with the dispute


def test_replayed_states_stay_within_the_cache_bound_and_off_disk(
    engine: TrainingEngine, tmp_path: Path
) -> None:
    size = len(engine.state_bytes(engine.run(engine.init_state(), 1)))  # with optimizer moments
    bound = 2 * size + size // 2  # room for two states
    http, _, catalog = _serve(engine, tmp_path, None, cache_bytes=bound)
    files = sorted(p.name for p in (tmp_path / "store").iterdir())
    steps = (1, 5, 13, 27, 38, 39)
    for step in steps:
        r = http.get(f"/jobs/{JOB}/states/{step}")
        assert r.status_code == 200
        assert catalog.state_cache.size <= bound
    assert len(catalog.state_cache) == 2
    assert catalog.state_cache.get((JOB, 39)) is not None  # the most recent ones are kept
    assert catalog.state_cache.get((JOB, 1)) is None
    assert sorted(p.name for p in (tmp_path / "store").iterdir()) == files  # nothing on disk


def test_a_burst_of_state_requests_is_answered_429(engine: TrainingEngine, tmp_path) -> None:
    clock = [100.0]
    limit = StatesRateLimit(rate=0.5, burst=3, clock=lambda: clock[0])
    http, _, _ = _serve(engine, tmp_path, None, limit=limit)
    codes = [http.get(f"/jobs/{JOB}/state-hashes/{s}").status_code for s in (10, 11, 12)]
    assert codes == [200, 200, 200]
    r = http.get(f"/jobs/{JOB}/states/13")
    assert r.status_code == 429 and int(r.headers["Retry-After"]) == 2
    clock[0] += 2.0  # one token back
    assert http.get(f"/jobs/{JOB}/states/13").status_code == 200
    assert http.get(f"/jobs/{JOB}/states/14").status_code == 429


def test_openapi_documents_every_status_of_the_state_routes(engine, tmp_path) -> None:
    http, _, _ = _serve(engine, tmp_path, None)
    paths = http.get("/openapi.json").json()["paths"]
    for route in ("/jobs/{job_id}/states/{step}", "/jobs/{job_id}/state-hashes/{step}"):
        documented = set(paths[route]["get"]["responses"])
        assert {"200", "403", "404", "409", "429", "500"} <= documented, route
