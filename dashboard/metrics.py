"""A run's metric per round, computed lazily and cached in the index (`RunMetric`).

The metric is what ``veritrain run show --metric`` prints: each final round's global state,
rebuilt from the counted contributions' final states (`noderuntime.runs.run_state`: fetched
from the solvers and proved against their commitments), evaluated on held-out data
(`veritrain.runsim.evaluate_global`: validation bits per character for a GPT, test accuracy
for an MLP). It is computed in a background thread the first time a run page asks for it and
stored keyed by the round's final state hash; while a round's final states cannot be fetched
the page shows the round without its point, and the computation is tried again after
``retry_s`` seconds.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from sqlalchemy import select

from indexer.models import RunMetric, RunRound
from indexer.store import Index

logger = logging.getLogger(__name__)

__all__ = ["MetricWorker"]


class MetricWorker:
    """Compute missing run metrics in one background thread, one run at a time.

    Args:
        index: the index (metrics are written to it).
        client: a `ChainClient` bound to the deployment (None: never compute).
        retry_s: seconds before a failed round is tried again.
    """

    def __init__(self, index: Index, client: Any | None, *, retry_s: float = 60.0) -> None:
        self.index = index
        self.client = client
        self.retry_s = retry_s
        self._busy: set[int] = set()
        self._failed_at: dict[int, float] = {}
        self._lock = threading.Lock()

    def missing(self, run_id: int) -> list[tuple[int, str]]:
        """Final rounds of the run with no cached metric: (round, state hash)."""
        with self.index.reader() as s:
            finals = [
                (r.round, r.state_hash or "")
                for r in s.scalars(
                    select(RunRound).where(RunRound.run_id == run_id, RunRound.phase == "Final")
                )
            ]
            cached = {
                (m.round, m.state_hash)
                for m in s.scalars(select(RunMetric).where(RunMetric.run_id == run_id))
            }
        return [f for f in finals if f not in cached]

    def request(self, run_id: int) -> bool:
        """Start computing the run's missing metrics unless running or recently failed.

        Returns:
            True when a computation was started.
        """
        if self.client is None or not self.missing(run_id):
            return False
        with self._lock:
            if run_id in self._busy:
                return False
            if time.monotonic() - self._failed_at.get(run_id, -1e9) < self.retry_s:
                return False
            self._busy.add(run_id)
        threading.Thread(target=self._compute, args=(run_id,), daemon=True).start()
        return True

    def _compute(self, run_id: int) -> None:
        try:
            self.compute(run_id)
        except Exception as exc:  # noqa: BLE001 - a page never fails for a metric
            logger.warning("run %d: metric not computed: %s", run_id, exc)
            with self._lock:
                self._failed_at[run_id] = time.monotonic()
        finally:
            with self._lock:
                self._busy.discard(run_id)

    def compute(self, run_id: int) -> int:
        """Compute and store the metric of every final round of the run (blocking).

        Returns:
            Rounds stored.

        Raises:
            VeritrainError: the run's spec or a final state cannot be fetched and proved.
        """
        from noderuntime.runs import run_spec_of, run_state
        from veritrain.runsim import evaluate_global
        from veritrain.training import TrainingEngine

        missing = self.missing(run_id)
        if not missing:
            return 0
        run = run_spec_of(self.client, run_id)
        last = max(t for t, _ in missing) + 1
        state = run_state(self.client, run, last)
        engine = TrainingEngine(run.inner)
        name = str(engine.metric_name)
        wanted = dict(missing)
        stored = 0
        with self.index.write_lock, self.index.session() as s:
            for t, result in enumerate(state.rounds):
                state_hash = "0x" + result.state.state_hash().hex()
                if wanted.get(t) != state_hash:
                    continue
                value = float(evaluate_global(engine, result.state.to_bytes()))
                s.merge(
                    RunMetric(run_id=run_id, round=t, state_hash=state_hash, name=name, value=value)
                )
                stored += 1
        return stored
