"""`NodeMetrics`: what a node has done, as Prometheus metrics an operator scrapes.

Every node keeps its metrics in its own `prometheus_client.CollectorRegistry` (never the
process-wide default one: several nodes run in one test process) and serves them at
``GET /metrics`` on ``--metrics-port`` (off by default) of ``--metrics-bind`` (127.0.0.1 by
default), in the Prometheus text exposition format. Names follow the Prometheus conventions
(https://prometheus.io/docs/practices/naming/): the ``veritrain_`` prefix, ``_total`` for
counters, ``_seconds`` for durations. Token amounts are in VTT (1 VTT = 10**18 wei) as floats:
a float counts wei exactly only up to 2**53, which a stake passes; VTT keeps 15-16 significant
digits, well beyond what a dashboard shows. The table of every metric is docs/OPERATIONS.md.

The runtime records events where it already logs them: `NodeCore.send` (transactions),
`NodeBase` (round failures), `ReplayMixin` and `GamesMixin` (replays, by purpose),
`StakesMixin` (stake, earnings), and each role its own (jobs claimed and settled, verdicts,
disputes, committee votes, whistleblower challenges).

Run: not a script; ``metrics = NodeMetrics(); metrics.serve(9101, "127.0.0.1")``.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

logger = logging.getLogger(__name__)

__all__ = ["REPLAY_BUCKETS", "REPLAY_PURPOSES", "WEI_PER_VTT", "NodeMetrics", "action_method"]

WEI_PER_VTT = 10**18
"""Wei in one VTT (the token has 18 decimals)."""

REPLAY_BUCKETS = (0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)
"""Upper bounds (seconds) of the replay-duration histogram: a tiny test segment to a long one."""


REPLAY_PURPOSES = ("verdict", "whistleblower", "committee", "step", "bisection")
"""Why a node replays (the ``purpose`` label): a verifier's verdict on a claimed segment, a
whistleblower's check of the same claims, a committee member's replay of a disputed segment, a
step committee member's replay of one step (or an escalated interval), a bisection player's
trajectory of its segment."""


def action_method(action: str) -> str:
    """The contract method of a `NodeCore.send` action text: its first word
    (``"claimJob 3"`` -> ``"claimJob"``); ``"unknown"`` for an empty text."""
    words = action.split(maxsplit=1)
    return words[0] if words else "unknown"


class NodeMetrics:
    """One node's Prometheus metrics, in a registry of its own.

    Attributes:
        registry: the node's `CollectorRegistry` (what ``/metrics`` serves).
        jobs_claimed: Counter ``veritrain_jobs_claimed_total``: jobs this solver claimed
            (``claimJob`` mined).
        jobs_settled: Counter ``veritrain_jobs_settled_total{status}``: this solver's jobs that
            reached a terminal status (``Finalized``: paid; ``Rejected``: stake slashed;
            ``Cancelled``, ``Expired``).
        replays: Counter ``veritrain_replays_total{purpose,result}``: replays by purpose
            (`REPLAY_PURPOSES`) and result (``match``, ``mismatch``, ``unavailable``;
            ``computed`` for a bisection trajectory, which has nothing to compare with).
        replay_seconds: Histogram ``veritrain_replay_seconds{purpose}``: wall-clock seconds
            per replay.
        verdicts: Counter ``veritrain_verdicts_total{verdict}``: this verifier's revealed
            per-sample verdicts (``approve``, ``reject``).
        disputes: Counter ``veritrain_disputes_total{outcome}``: disputes this node saw
            resolved (``segment_valid``: the solver's segment was upheld;
            ``segment_invalid``: it was found wrong).
        committee_votes: Counter ``veritrain_committee_votes_total{vote}``: this member's
            committee votes committed (``valid``, ``invalid``).
        challenges: Counter ``veritrain_challenges_total{outcome}``: this whistleblower's
            challenges of approvals: ``filed`` (``challengeApproval`` mined), then ``won`` (the
            approved claim was wrong: the round's forced error, or a segment found invalid)
            or ``lost`` (the segment was upheld).
        transactions: Counter ``veritrain_transactions_total{method,outcome}``: transactions
            by contract method and outcome (``ok``, ``reverted``).
        errors: Counter ``veritrain_errors_total{kind}``: failed rounds by error kind (the
            exception's type, or the decoded revert's name).
        stake: Gauge ``veritrain_stake_vtt{role}``: this account's stake for the role (VTT).
        locked_stake: Gauge ``veritrain_locked_stake_vtt{role}``: the part of it locked by
            held jobs (VTT).
        earnings: Counter ``veritrain_earnings_vtt_total``: what this node was paid (VTT): a
            solver's reward and a verifier's fee, which a job's finalize restakes (adds to the
            node's stake, `StakeManager.unlockAndRestake`; not paid to the wallet), counted
            when the node sees the job Finalized, and Escrow credit claimed (bonds, jackpots,
            dispute payouts).
    """

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.jobs_claimed = Counter(
            "veritrain_jobs_claimed", "Jobs this solver claimed.", registry=r
        )
        self.jobs_settled = Counter(
            "veritrain_jobs_settled",
            "This solver's jobs that reached a terminal status (Finalized: paid).",
            ["status"],
            registry=r,
        )
        self.replays = Counter(
            "veritrain_replays",
            "Replays by purpose (verdict, whistleblower, committee, step, bisection) and result.",
            ["purpose", "result"],
            registry=r,
        )
        self.replay_seconds = Histogram(
            "veritrain_replay_seconds",
            "Wall-clock seconds of one replay, by purpose.",
            ["purpose"],
            buckets=REPLAY_BUCKETS,
            registry=r,
        )
        self.committee_votes = Counter(
            "veritrain_committee_votes",
            "Committee votes this member committed (valid, invalid).",
            ["vote"],
            registry=r,
        )
        self.challenges = Counter(
            "veritrain_challenges",
            "This whistleblower's challenges of approvals (filed, won, lost).",
            ["outcome"],
            registry=r,
        )
        self.verdicts = Counter(
            "veritrain_verdicts",
            "Per-sample verdicts this verifier revealed.",
            ["verdict"],
            registry=r,
        )
        self.disputes = Counter(
            "veritrain_disputes",
            "Disputes this node saw resolved, by outcome.",
            ["outcome"],
            registry=r,
        )
        self.transactions = Counter(
            "veritrain_transactions",
            "Transactions sent, by contract method and outcome (ok, lost, reverted).",
            ["method", "outcome"],
            registry=r,
        )
        self.errors = Counter(
            "veritrain_errors", "Failed rounds by error kind.", ["kind"], registry=r
        )
        self.stake = Gauge(
            "veritrain_stake_vtt",
            "This account's stake for the role (VTT).",
            ["role"],
            registry=r,
        )
        self.locked_stake = Gauge(
            "veritrain_locked_stake_vtt",
            "The part of the stake locked by held jobs (VTT).",
            ["role"],
            registry=r,
        )
        self.earnings = Counter(
            "veritrain_earnings_vtt",
            "Rewards and fees restaked at finalize, and Escrow credit claimed (VTT).",
            registry=r,
        )
        self._server: Any = None
        self._thread: threading.Thread | None = None

    # ---------------------------------------------------------------------------- events
    def transaction(self, action: str, *, ok: bool, lost: bool = False) -> None:
        """Count one transaction of `NodeCore.send` (``action``: its log text, method first):
        outcome ``ok``, ``lost`` (it reverted because another account did the duty first, a
        race and not a failure) or ``reverted``."""
        outcome = "ok" if ok else "lost" if lost else "reverted"
        self.transactions.labels(method=action_method(action), outcome=outcome).inc()

    def error(self, exc: BaseException) -> None:
        """Count one failed round, by the decoded revert's name or the exception's type."""
        self.errors.labels(kind=str(getattr(exc, "name", None) or type(exc).__name__)).inc()

    def replay(self, seconds: float, *, ok: bool, purpose: str, unavailable: bool = False) -> None:
        """Count one replay for `purpose` (`REPLAY_PURPOSES`) that took ``seconds`` (wall
        clock) and its result (``match`` when ok, else ``unavailable`` or ``mismatch``)."""
        result = "match" if ok else "unavailable" if unavailable else "mismatch"
        self.replays.labels(purpose=purpose, result=result).inc()
        self.replay_seconds.labels(purpose=purpose).observe(seconds)

    def trajectory(self, seconds: float, *, purpose: str = "bisection") -> None:
        """Count one replay that computed a trajectory (``result="computed"``)."""
        self.replays.labels(purpose=purpose, result="computed").inc()
        self.replay_seconds.labels(purpose=purpose).observe(seconds)

    def unavailable(self, *, purpose: str) -> None:
        """Count one replay that could not start: the job cannot be replayed (no seconds)."""
        self.replays.labels(purpose=purpose, result="unavailable").inc()

    def stake_of(self, role: str, staked_wei: int, locked_wei: int) -> None:
        """Set the stake gauges of ``role`` (e.g. ``"Solver"``) from amounts in wei."""
        self.stake.labels(role=role).set(staked_wei / WEI_PER_VTT)
        self.locked_stake.labels(role=role).set(locked_wei / WEI_PER_VTT)

    def earned(self, wei: int) -> None:
        """Add a payment (wei) to the earnings: claimed Escrow credit, or a reward or fee a
        finalize restaked."""
        self.earnings.inc(wei / WEI_PER_VTT)

    # ---------------------------------------------------------------------------- server
    @property
    def serving(self) -> bool:
        """Whether ``/metrics`` is served now."""
        return self._server is not None

    def serve(self, port: int | None, host: str = "127.0.0.1") -> None:
        """Serve the registry at ``http://host:port/metrics`` in a daemon thread.

        Args:
            port: TCP port; None or 0: not served (nothing happens).
            host: the interface to bind.

        Raises:
            OSError: the port cannot be bound (taken, or a host not of this machine); its
                message names ``--metrics-port``.
        """
        if not port or self._server is not None:
            return
        try:
            self._server, self._thread = start_http_server(port, addr=host, registry=self.registry)
        except OSError as exc:
            raise OSError(
                exc.errno,
                f"cannot serve metrics on {host}:{port} ({exc.strerror or exc}): "
                "pick another --metrics-port",
            ) from None
        logger.info("metrics served on http://%s:%d/metrics", host, port)

    def stop(self) -> None:
        """Stop serving (no-op when not served)."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        self._server, self._thread = None, None
