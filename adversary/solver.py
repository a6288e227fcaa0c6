"""ADVERSARY solvers, for testing the protocol only: cheating step rules and the solver node
that trains with them.

Modes (each honest in segments 0 and 1, cheating from `CHEAT_FROM_SEGMENT` on):

- ``"skip-steps"``: skips every other optimizer step (odd steps only advance the step counter:
  it saves compute and claims full work).
- ``"perturb"``: adds seeded gaussian noise (std `PERTURB_STD`) to the weights at the end of
  every cheating segment, before checkpointing (a forged/tampered state).

- ``"other-init"``: trains honestly, but from other initial weights (the spec's seed-initialised
  weights plus seeded noise of std `OTHER_INIT_STD`: standing for pre-trained or backdoored
  weights). Every segment replays correctly; only the leaf-0 check of `commitCheckpoints`
  (leaf 0 must be (0, initHash)) stops it: it can never commit.

- ``"corrupt-serve"``: trains and commits honestly, but its server answers every checkpoint and
  state request from segment `CHEAT_FROM_SEGMENT` on with bytes that do not hash to the
  commitment (one flipped bit, `CorruptBodies`), to everyone: withheld data in disguise.

- ``"smuggle-init"``: trains from other initial weights like ``"other-init"``, and commits a
  tree over its own checkpoints with the leaf (0, initHash) smuggled in after them, proving that
  extra leaf for the commit's leaf-0 check (docs/SECURITY.md P-25). With the positional tree
  (one leaf per index) the proof of index 0 fails: it can never commit.

- ``"copy-seat"``: on a run's contribution (docs/RUNS.md) trains the next seat's data shard
  instead of its own, handing in another seat's pseudo-gradient as its own work (a copied
  Delta: in round 0 every seat starts from the same state, so its tree is exactly that seat's).
  Ordinary jobs it trains honestly. Every segment replays wrong under its own seat's spec.

- ``"withhold-final"``: trains, commits and is verified honestly, but never serves any job's
  final state, its proof or its own mirror (`WithholdFinal`): a Sybil that takes a round's
  seats, is paid and leaves nobody the states (docs/SECURITY.md P-36).

- ``"sit-on-batches"``: trains, commits and serves honestly, takes every seat's seal and reveal
  hand-off (`SittingAggregator`: each checked and answered 202 as the honest solver does) and
  never submits a batch: an aggregator that censors or stalls its seats (docs/SECURITY.md P-37).
  Each seat's own transaction after its hand-off wait must carry the round.

All but ``"smuggle-init"`` build a *consistent* Merkle tree over the states they actually
produced, so only replay (or, for ``"other-init"``, the on-chain initHash check) catches them,
not a proof check.
`CheatingSolverNode` overrides the production `SolverNode.step_function` hook, so it trains,
commits and serves (`/states/{step}`) its own trajectory through the production code;
``"other-init"`` and ``"smuggle-init"`` override `SolverNode.initial_state`, ``"smuggle-init"``
also `SolverNode.commitment`.

Run: not a script; ``CheatingSolverNode(client, data_dir, mode="perturb")`` or
``veritrain adversary solver --mode perturb ...``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adversary.training import perturb_weights, skip_step
from solver.aggregation import SealAggregator
from solver.node import CommitTree, SolverNode
from veritrain.commitments import leaf_hash
from veritrain.merkle import MerkleTree, checkpoint_tree

if TYPE_CHECKING:
    from fastapi import FastAPI

    from veritrain.bisection import StepFn
    from veritrain.spec import JobSpec
    from veritrain.training import TrainingEngine, TrainState

logger = logging.getLogger(__name__)

__all__ = [
    "ADVERSARIES",
    "CHEAT_FROM_SEGMENT",
    "PERTURB_STD",
    "OTHER_INIT_STD",
    "CheatingSolverNode",
    "CorruptBodies",
    "SittingAggregator",
    "WithholdFinal",
    "cheating_step_function",
    "solver_node",
]

ADVERSARIES: tuple[str, ...] = (
    "skip-steps",
    "perturb",
    "other-init",
    "smuggle-init",
    "corrupt-serve",
    "copy-seat",
    "withhold-final",
    "sit-on-batches",
)
CHEAT_FROM_SEGMENT = 2
"""Adversaries behave honestly in segments 0 and 1 and cheat from this segment on."""
PERTURB_STD = 1e-3
"""Standard deviation of the `"perturb"` adversary's noise (parameter units)."""
OTHER_INIT_STD = 5e-2
"""Standard deviation of the noise `"other-init"` adds to state 0 (parameter units)."""


def _check_mode(mode: str) -> None:
    if mode not in ADVERSARIES:
        raise ValueError(f"unknown adversary mode {mode!r}; choose from {ADVERSARIES}")


def _perturb_seed(spec: JobSpec, segment: int) -> int:
    # Deterministic per (job seed, segment): a restarted cheater produces the same states.
    return (spec.seed * 1_000_003 + segment) % (2**63)


def cheating_step_function(engine: TrainingEngine, mode: str) -> StepFn:
    """The step rule of a cheating solver: advance a state by one step, tampering included.

    ``"skip-steps"`` skips the update on odd steps of cheating segments; ``"perturb"`` adds its
    seeded noise when the step lands on the end of a cheating segment; ``"other-init"`` and
    ``"corrupt-serve"`` step honestly (they cheat in `CheatingSolverNode.initial_state` and
    `CheatingSolverNode.http_app` instead). Replaying a segment with
    this function reproduces the states the cheater committed (and serves).

    Args:
        engine: the job's engine.
        mode: one of `ADVERSARIES`.

    Returns:
        A function advancing a `TrainState` from step t to t + 1 in place.

    Raises:
        ValueError: unknown mode.
    """
    _check_mode(mode)
    k = engine.spec.checkpoint_interval

    def advance(state: TrainState) -> None:
        segment = state.step // k
        if mode == "skip-steps" and segment >= CHEAT_FROM_SEGMENT and state.step % 2 == 1:
            skip_step(state)  # ADVERSARY: no optimizer update, the counter still advances
            return
        engine.train_step(state)
        if mode == "perturb" and state.step % k == 0:
            ended = state.step // k - 1
            if ended >= CHEAT_FROM_SEGMENT:
                # ADVERSARY: tamper with the weights before committing them
                perturb_weights(state, PERTURB_STD, seed=_perturb_seed(engine.spec, ended))

    return advance


class SittingAggregator(SealAggregator):
    """ADVERSARY: a `SealAggregator` that takes the seats' hand-offs and never submits them.

    ``taken`` counts the seals and reveals it accepted (each checked as the honest one checks it).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.taken = 0

    def accept_seal(self, job_id: int, body: Any) -> int:
        """`SealAggregator.accept_seal`, counted in ``taken``."""
        pending = super().accept_seal(job_id, body)
        with self._lock:  # hand-offs arrive on the server's threads
            self.taken += 1
        return pending

    def accept_reveal(self, job_id: int, body: Any) -> int:
        """`SealAggregator.accept_reveal`, counted in ``taken``."""
        pending = super().accept_reveal(job_id, body)
        with self._lock:  # hand-offs arrive on the server's threads
            self.taken += 1
        return pending

    def flush(self, node: Any, job_id: int) -> None:
        """ADVERSARY: submits nothing; the hand-offs are kept until the job ends."""


class CheatingSolverNode(SolverNode):
    """A production `SolverNode` that trains with `cheating_step_function(engine, mode)`.

    Args:
        *args: `SolverNode` positional arguments.
        mode: one of `ADVERSARIES`.
        claim_limit: claims in the node's whole life (counted from its persisted job records,
            so a restart does not reset it), or None for no limit. Once reached, the node only
            follows the jobs it holds. A scripted scenario uses it to give each cheater exactly
            its own jobs, whatever the timing.
        **kwargs: `SolverNode` keyword arguments.

    Raises:
        ValueError: unknown mode, or a claim limit below 0.
    """

    def __init__(
        self, *args: Any, mode: str, claim_limit: int | None = None, **kwargs: Any
    ) -> None:
        _check_mode(mode)
        if claim_limit is not None and claim_limit < 0:
            raise ValueError(f"claim limit {claim_limit} is below 0")
        self.mode = mode
        self.claim_limit = claim_limit
        self._copied: dict[bytes, JobSpec] = {}  # "copy-seat": own spec hash -> copied spec
        super().__init__(*args, **kwargs)
        if mode == "sit-on-batches":
            self.aggregator = SittingAggregator(
                self.client, serves=lambda j: self.catalog.get(j) is not None
            )
        self.log.warning("ADVERSARY solver %r (testing only)", mode)

    def _maybe_claim(self) -> None:
        """`SolverNode._maybe_claim`, until the node holds records of `claim_limit` jobs."""
        if self.claim_limit is not None and len(self.state.read().jobs) >= self.claim_limit:
            return
        super()._maybe_claim()

    def step_function(self, engine: TrainingEngine) -> StepFn:
        """The cheating step rule (`cheating_step_function`); in ``"copy-seat"`` mode, on a
        contribution, the honest step of the next seat's spec (its data shard)."""
        copied = self._copied.get(engine.spec.spec_hash())
        if self.mode == "copy-seat" and copied is not None:
            # ADVERSARY: train another seat's shard from this job's state 0
            victim = self.engine_for(copied, engine.initial)

            def advance(state: TrainState) -> None:
                victim.train_step(state)

            return advance
        return cheating_step_function(engine, self.mode)

    def contribution_start(
        self, spec_uri: str, spec_hash: bytes, job_id: int | None = None
    ) -> bytes | None:
        """The honest state 0; in ``"copy-seat"`` mode it also notes which seat's spec to copy."""
        start = super().contribution_start(spec_uri, spec_hash, job_id)
        if self.mode == "copy-seat" and start is not None:
            from veritrain.diloco import load_contribution

            run, round_index, seat = load_contribution(spec_uri, spec_hash)
            own = run.contribution_spec(round_index, seat)
            other = run.contribution_spec(round_index, (seat + 1) % run.seats)
            self._copied[own.spec_hash()] = other
        return start

    def http_app(self) -> FastAPI:
        """The checkpoint server; in ``"corrupt-serve"`` mode wrapped in `CorruptBodies`."""
        app = super().http_app()
        if self.mode == "withhold-final":
            catalog = self.catalog

            def final_of(job_id: int) -> tuple[int, int] | None:
                entry = catalog.get(job_id)
                return None if entry is None else (int(entry.total_steps), int(entry.interval))

            app.add_middleware(WithholdFinal, final_of=final_of)
        if self.mode == "corrupt-serve":
            catalog = self.catalog

            def interval_of(job_id: int) -> int | None:
                entry = catalog.get(job_id)
                return None if entry is None else int(entry.interval)

            app.add_middleware(CorruptBodies, interval_of=interval_of)
        return app

    def initial_state(self, engine: TrainingEngine) -> TrainState:
        """State 0: in ``"other-init"`` and ``"smuggle-init"`` modes the seed-initialised state
        plus seeded noise (std `OTHER_INIT_STD`), else the honest one."""
        state = engine.init_state()
        if self.mode in ("other-init", "smuggle-init"):
            # ADVERSARY: start from other weights than the spec's seed-initialised ones
            perturb_weights(state, OTHER_INIT_STD, seed=_perturb_seed(engine.spec, 0) + 1)
        return state

    def commitment(self, hashes: Sequence[bytes], interval: int, init_hash: bytes) -> CommitTree:
        """In ``"smuggle-init"`` mode: the tree over its own checkpoints plus the leaf
        (0, initHash) after them, and the proof of that extra leaf; else the honest one."""
        if self.mode != "smuggle-init":
            return super().commitment(hashes, interval, init_hash)
        # ADVERSARY: smuggle the leaf (0, initHash) in next to a run from other weights
        leaves = [*checkpoint_tree(hashes, interval).leaves, leaf_hash(0, 0, init_hash)]
        tree = MerkleTree(leaves)
        return CommitTree(tree.root, tree.proof(len(leaves) - 1))


class WithholdFinal:
    """ASGI middleware of the ``"withhold-final"`` adversary (docs/SECURITY.md P-36): a solver
    that trains and is verified honestly but never gives anyone its final states: 404 for
    ``/jobs/{id}/checkpoints/{N}``, ``/jobs/{id}/states/{N}`` and ``/jobs/{id}/proofs/{N/k}``
    of every job, and for every ``/mirror/...`` route.

    Args:
        app: the wrapped ASGI app.
        final_of: a job's (N, k) in steps, or None for an unknown job.
    """

    def __init__(self, app: Any, final_of: Callable[[int], tuple[int, int] | None]) -> None:
        self.app = app
        self.final_of = final_of

    def _withholds(self, path: str) -> bool:
        parts = path.strip("/").split("/")
        if parts and parts[0] == "mirror":
            return True
        if len(parts) != 4 or parts[0] != "jobs":
            return False
        try:
            job_id, index = int(parts[1]), int(parts[3])
        except ValueError:
            return False
        final = self.final_of(job_id)
        if final is None:
            return False
        n, k = final
        return (parts[2] in ("checkpoints", "states") and index == n) or (
            parts[2] == "proofs" and index == n // k
        )

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or not self._withholds(str(scope.get("path", ""))):
            await self.app(scope, receive, send)
            return
        # ADVERSARY: the final state is never served, to anyone
        body = b'{"detail":"not found"}'
        await send(
            {
                "type": "http.response.start",
                "status": 404,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": body})


class CorruptBodies:
    """ASGI middleware of the ``"corrupt-serve"`` adversary: flips the last bit of every
    successful ``/jobs/{id}/checkpoints/{step}`` and ``/jobs/{id}/states/{step}`` body whose step
    lies in segment `CHEAT_FROM_SEGMENT` or later (length unchanged, so only the hash check
    notices).

    Args:
        app: the wrapped ASGI app.
        interval_of: the checkpoint interval k of a job (steps), or None for an unknown job.
    """

    def __init__(self, app: Any, interval_of: Callable[[int], int | None]) -> None:
        self.app = app
        self.interval_of = interval_of

    def _corrupts(self, path: str) -> bool:
        parts = path.strip("/").split("/")
        if len(parts) != 4 or parts[0] != "jobs" or parts[2] not in ("checkpoints", "states"):
            return False
        try:
            job_id, step = int(parts[1]), int(parts[3])
        except ValueError:
            return False
        k = self.interval_of(job_id)
        return k is not None and step // k >= CHEAT_FROM_SEGMENT

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or not self._corrupts(str(scope.get("path", ""))):
            await self.app(scope, receive, send)
            return
        ok = False

        async def corrupting_send(message: Any) -> None:
            nonlocal ok
            if message["type"] == "http.response.start":
                ok = int(message["status"]) == 200
            elif message["type"] == "http.response.body" and ok and message.get("body"):
                body = bytearray(message["body"])
                body[-1] ^= 0x01  # ADVERSARY: the served bytes no longer hash to the leaf
                message = {**message, "body": bytes(body)}
                ok = False  # one flip per response
            await send(message)

        await self.app(scope, receive, corrupting_send)


def solver_node(
    client: Any, data_dir: Path, *args: Any, mode: str | None = None, **kwargs: Any
) -> SolverNode:
    """A solver node: honest when ``mode`` is None, else a `CheatingSolverNode`.

    Args:
        client: the chain client.
        data_dir: the node's directory.
        *args: further `SolverNode` positional arguments (host, port).
        mode: None or one of `ADVERSARIES`.
        **kwargs: `SolverNode` keyword arguments.

    Raises:
        ValueError: unknown mode.
    """
    if mode is None:
        return SolverNode(client, data_dir, *args, **kwargs)
    return CheatingSolverNode(client, data_dir, *args, mode=mode, **kwargs)
