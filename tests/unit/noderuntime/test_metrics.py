"""Node metrics scraped over HTTP (``GET /metrics``) while nodes work against the in-memory fake
protocol: a solver run in its polling loop (`NodeBase.run`) counts its claim and commit and sets
its stake gauge, a verifier counts its replays, their seconds and its verdicts; each node keeps
its own registry; the server goes away with the node.

Run: ``.venv/bin/python -m pytest tests/unit/noderuntime/test_metrics.py -q``.
"""

from __future__ import annotations

import errno
import socket
import threading
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from adversary.verifier import LazyVerifierNode, verifier_node
from noderuntime import sleep_until
from noderuntime.core import SELFTEST_ENV
from noderuntime.metrics import NodeMetrics, action_method
from solver.node import SolverNode
from tests.utils.fake_chain import FakeChain
from tests.utils.node_fixtures import (
    SOLVER,
    SUBMITTER,
    VERIFIERS,
    WHISTLEBLOWER,
    http_for,
    past_challenge_deadline,
    run_solver_to_commit,
    tiny_spec,
)
from veritrain.enums import JobStatus, Role
from whistleblower.node import WhistleblowerNode

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def scrape(port: int) -> Samples:
    """Every sample of ``http://127.0.0.1:port/metrics``, keyed by (name, labels)."""
    response = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5.0)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    """One sample's value; 0.0 when the series was never touched (as Prometheus reads it)."""
    return samples.get((name, frozenset(labels.items())), 0.0)


def test_solver_loop_serves_its_claim_commit_and_stake(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SELFTEST_ENV, "0")
    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, tiny_spec())
    node = SolverNode(chain.client(SOLVER), tmp_path, serve=False, poll_interval=0.05)
    port = _free_port()
    node.metrics_port = port
    node.stake_gauge_interval = 0.0  # read the stake every round
    stop = threading.Event()
    thread = threading.Thread(target=node.run, args=(stop,), daemon=True)
    thread.start()
    try:
        assert sleep_until(lambda: node.metrics.serving, timeout=10)
        assert sleep_until(lambda: chain.jobs[job_id].status is JobStatus.Committed, timeout=60)
        after = scrape(port)
    finally:
        stop.set()
        thread.join(timeout=30)
    assert not thread.is_alive()
    assert value(after, "veritrain_jobs_claimed_total") == 1.0
    ok = {"method": "commitCheckpoints", "outcome": "ok"}
    assert value(after, "veritrain_transactions_total", **ok) == 1.0
    assert value(after, "veritrain_transactions_total", method="claimJob", outcome="ok") == 1.0
    key = (SOLVER, int(Role.Solver))
    assert chain.staked[key] > 0
    assert value(after, "veritrain_stake_vtt", role="Solver") == chain.staked[key] / 10**18
    assert chain.locked.get(key, 0) > 0  # the claimed job locks part of the stake
    locked = value(after, "veritrain_locked_stake_vtt", role="Solver")
    assert locked == chain.locked.get(key, 0) / 10**18
    assert not node.metrics.serving  # the server stops with the node
    with pytest.raises(httpx.TransportError):
        httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=2.0)


def test_verifier_counts_replays_their_seconds_and_verdicts(tmp_path: Path) -> None:
    chain = FakeChain()
    chain.forced_segments = [1, 3]
    verifier = verifier_node(chain.client(VERIFIERS[0]), tmp_path / "v")
    verifier.step()  # stakes before the assignment
    solver = run_solver_to_commit(chain, tmp_path)
    verifier.http_client = http_for(solver)
    port = _free_port()
    verifier.metrics.serve(port)
    verdict_match = {"purpose": "verdict", "result": "match"}
    try:
        assert value(scrape(port), "veritrain_replays_total", **verdict_match) == 0.0
        verifier.step()  # replay its samples, seal
        verifier.step()  # reveal
        samples = scrape(port)
    finally:
        verifier.metrics.stop()
    replayed = len(verifier.state.read().jobs[1].results)
    assert replayed >= 1
    assert value(samples, "veritrain_replays_total", **verdict_match) == replayed
    mismatch = {"purpose": "verdict", "result": "mismatch"}
    assert value(samples, "veritrain_replays_total", **mismatch) == 0.0
    assert value(samples, "veritrain_replay_seconds_count", purpose="verdict") == replayed
    assert value(samples, "veritrain_replay_seconds_sum", purpose="verdict") > 0.0
    assert value(samples, "veritrain_verdicts_total", verdict="approve") == replayed
    assert value(samples, "veritrain_verdicts_total", verdict="reject") == 0.0
    ok = {"method": "revealVerdicts", "outcome": "ok"}
    assert value(samples, "veritrain_transactions_total", **ok) == 1.0


def test_whistleblower_counts_its_replays_and_challenges_filed_and_won(tmp_path: Path) -> None:
    """Lazy verifiers approve every claim, the forced error among them: the whistleblower
    replays each sampled claim (purpose ``whistleblower``), challenges each lazy approval of the
    forced error (filed), and once the job finalizes with that forced error settled, counts
    each challenge won."""
    chain = FakeChain(forced_error_rate_bps=10_000)
    chain.forced_segments = [1, 3]
    lazy = [LazyVerifierNode(chain.client(v), tmp_path / v) for v in VERIFIERS]
    for v in lazy:
        v.step()
    solver = run_solver_to_commit(chain, tmp_path)
    for _ in range(2):
        for v in lazy:
            v.step()  # seal, then reveal: approve everything without replaying
    wb = WhistleblowerNode(chain.client(WHISTLEBLOWER), tmp_path / "wb")
    wb.http_client = http_for(solver)
    port = _free_port()
    wb.metrics.serve(port)
    try:
        wb.step()  # replay every sample, challenge the approvals of the forced error
        filed = scrape(port)
        past_challenge_deadline(chain)
        solver.step()  # reveal the secret: the round is Forced, the job finalizes
        assert chain.jobs[1].status is JobStatus.Finalized
        wb.step()  # the job settled: its challenges' outcomes are counted
        settled = scrape(port)
    finally:
        wb.metrics.stop()
    samples = len(chain.assignments[1].segments)
    replays = [
        value(filed, "veritrain_replays_total", purpose="whistleblower", result=r)
        for r in ("match", "mismatch")
    ]
    assert sum(replays) == samples and replays[1] >= 1  # the forced error does not match
    assert value(filed, "veritrain_replay_seconds_count", purpose="whistleblower") == samples
    assert value(filed, "veritrain_replays_total", purpose="verdict", result="match") == 0.0
    assert value(filed, "veritrain_challenges_total", outcome="filed") == len(VERIFIERS)
    assert value(filed, "veritrain_challenges_total", outcome="won") == 0.0
    assert value(settled, "veritrain_challenges_total", outcome="won") == len(VERIFIERS)
    assert value(settled, "veritrain_challenges_total", outcome="lost") == 0.0
    assert wb.state.read().filed == []
    wb.step()  # counted once
    assert wb.metrics.registry.get_sample_value(
        "veritrain_challenges_total", {"outcome": "won"}
    ) == len(VERIFIERS)


def test_committee_and_step_replays_and_votes_are_served() -> None:
    """The series of an arbiter: its replays by purpose, the seconds of each, its votes."""
    metrics = NodeMetrics()
    port = _free_port()
    metrics.serve(port)
    try:
        metrics.replay(2.0, ok=False, purpose="committee")
        metrics.replay(0.5, ok=True, purpose="step")
        metrics.trajectory(3.0)
        metrics.unavailable(purpose="step")
        metrics.committee_votes.labels(vote="invalid").inc()
        samples = scrape(port)
    finally:
        metrics.stop()
    replays = "veritrain_replays_total"
    assert value(samples, replays, purpose="committee", result="mismatch") == 1.0
    assert value(samples, replays, purpose="step", result="match") == 1.0
    assert value(samples, replays, purpose="step", result="unavailable") == 1.0
    assert value(samples, replays, purpose="bisection", result="computed") == 1.0
    assert value(samples, "veritrain_replay_seconds_sum", purpose="bisection") == 3.0
    assert value(samples, "veritrain_replay_seconds_count", purpose="step") == 1.0
    assert value(samples, "veritrain_committee_votes_total", vote="invalid") == 1.0


def test_each_node_has_its_own_registry() -> None:
    first, second = NodeMetrics(), NodeMetrics()
    first.jobs_claimed.inc()
    first.earned(3 * 10**18)
    first.error(ValueError("x"))
    assert first.registry.get_sample_value("veritrain_jobs_claimed_total") == 1.0
    assert second.registry.get_sample_value("veritrain_jobs_claimed_total") == 0.0
    assert first.registry.get_sample_value("veritrain_earnings_vtt_total") == 3.0
    errors = {"kind": "ValueError"}
    assert first.registry.get_sample_value("veritrain_errors_total", errors) == 1.0
    assert action_method("claimJob 3") == "claimJob" and action_method("") == "unknown"


def test_metrics_port_zero_serves_nothing() -> None:
    metrics = NodeMetrics()
    metrics.serve(0)
    assert not metrics.serving
    metrics.stop()  # no-op


def test_a_taken_metrics_port_is_refused_naming_the_flag() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = int(sock.getsockname()[1])
        metrics = NodeMetrics()
        with pytest.raises(OSError, match="pick another --metrics-port") as caught:
            metrics.serve(port)
        assert caught.value.errno == errno.EADDRINUSE
        assert not metrics.serving
