"""A training run simulated on one machine: every contribution computed as the protocol defines
it (`veritrain.diloco`), with no chain and no network.

A model owner previews a run's configuration with it (`veritrain run simulate`): how the global
model's metric moves round by round, what each solver would upload, and the global state hash
and pseudo-gradient hashes each round would commit. The bench (`bench/bench_diloco.py`) measures
runs and their baselines with the same functions.

Run: not a script; `from veritrain.runsim import simulate_run, pretrained_start`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from veritrain.diloco import (
    OuterState,
    RunSpec,
    advance_round,
    contribution_init,
    initial_outer_state,
)
from veritrain.state import state_hash
from veritrain.training import TrainingEngine

__all__ = [
    "RoundReport",
    "evaluate_global",
    "pretrained_start",
    "simulate_run",
    "train_alone",
    "train_contribution",
]

Absent = Callable[[int, int], bool]
"""`absent(round, seat)`: True when that contribution never enters the outer step."""


@dataclass
class RoundReport:
    """One simulated round.

    Attributes:
        round: t.
        accepted: seats whose pseudo-gradient entered the outer step, in seat order.
        excluded: seats that sat the round out (absent) or whose contribution did not count
            (`advance_round`).
        metric: the engine's metric of the global state after the round's outer step
            (`val_bpc` for GPT models, test accuracy for MLPs).
        bytes_uploaded: bytes the accepted solvers sent in all (`encode_delta` output, headers
            included).
        global_hash: state hash (BLAKE3) of the outer state after the round (32 bytes).
        delta_hashes: state hash (BLAKE3) of each accepted seat's encoded pseudo-gradient, by seat.
        seconds: wall time of the round (training, encoding, outer step, evaluation).
    """

    round: int
    accepted: list[int]
    excluded: list[int]
    metric: float
    bytes_uploaded: int
    global_hash: bytes
    delta_hashes: dict[int, bytes] = field(default_factory=dict)
    seconds: float = 0.0


def evaluate_global(engine: TrainingEngine, global_blob: bytes) -> float:
    """The engine's metric (`TrainingEngine.evaluate`) of an outer state's parameters."""
    return engine.evaluate(engine.load_state(contribution_init(global_blob, None)))


def pretrained_start(run: RunSpec, steps: int, device: str | None = None) -> bytes:
    """Outer state 0 of a run: the run seed's initial weights after `steps` single-solver steps
    of the inner spec (batch B; 0 keeps the seed-initialised weights), zero momentum.

    Args:
        run: the run.
        steps: pretraining steps (>= 0).
        device: `"cpu"` or `"cuda"` for a repro2 run (None: the profile's; native pins CPU).

    Returns:
        `OuterState.to_bytes()` of the start (the same bytes on every device under repro2).

    Raises:
        ValueError: steps < 0.
        SpecError, ProfileUnavailable: a device the profile cannot use.
    """
    if steps < 0:
        raise ValueError(f"pretraining steps must be >= 0, got {steps}")
    engine = TrainingEngine(
        run.inner.model_copy(update={"total_steps": max(steps, 1)}), device=device
    )
    state = engine.init_state()
    engine.run(state, steps)
    return initial_outer_state(engine.state_tensors(state)).to_bytes()


def train_alone(
    run: RunSpec,
    start: bytes,
    rounds: int,
    batch_factor: int = 1,
    on_round: Callable[[int, float], None] | None = None,
) -> list[float]:
    """The baselines: one worker for H x rounds steps from `start` with a fresh AdamW and batch
    `batch_factor` x B (1: one solver alone; M: synchronous data-parallel training of M
    workers, which all-reduce every step).

    Returns:
        The metric after every H steps (`rounds` values).

    Raises:
        ValueError: rounds or batch_factor < 1.
    """
    if rounds < 1 or batch_factor < 1:
        raise ValueError("rounds and batch_factor must be >= 1")
    h = run.inner_steps
    spec = run.inner.model_copy(
        update={
            "total_steps": h * rounds,
            "checkpoint_interval": h,
            "batch_size": run.inner.batch_size * batch_factor,
        }
    )
    engine = TrainingEngine(spec)
    state = engine.load_state(contribution_init(start, None))
    curve = []
    for t in range(rounds):
        engine.run(state, (t + 1) * h)
        curve.append(engine.evaluate(state))
        if on_round is not None:
            on_round(t, curve[-1])
    return curve


def train_contribution(
    run: RunSpec,
    round_index: int,
    seat: int,
    global_blob: bytes,
    private_blob: bytes | None,
    device: str | None = None,
) -> tuple[bytes, bytes]:
    """Train contribution (round, seat) as an honest solver does: H steps of
    `run.contribution_spec(round, seat)` from `contribution_init(global_blob, private_blob)`.

    Returns:
        `(initHash, final checkpoint bytes)`, what `advance_round` takes per seat.

    Raises:
        SpecError: the round or seat is outside the run.
        CheckpointFormatError: the states do not fit the run's model.
    """
    init = contribution_init(global_blob, private_blob)
    engine = TrainingEngine(run.contribution_spec(round_index, seat), device=device, initial=init)
    final = engine.run(engine.init_state(), run.inner_steps)
    return state_hash(init), engine.state_bytes(final)


def simulate_run(
    run: RunSpec,
    start: bytes,
    rounds: int,
    *,
    absent: Absent | None = None,
    on_round: Callable[[RoundReport], None] | None = None,
    device: str | None = None,
) -> list[RoundReport]:
    """Simulate `rounds` rounds of `run` from outer state `start`.

    Round t: every seat not `absent(t, j)` trains its contribution (`contribution_spec(t, j)`
    from `contribution_init(global_t, its private state)`, H steps), and `advance_round`
    applies the protocol's rule: the contributions that count enter the outer step, their
    pseudo-gradients encoded in the run's `delta_format` and decoded (so int8 costs what it
    costs). A seat keeps the final state of its last accepted contribution as its private
    state.

    Args:
        run: the run.
        start: `OuterState.to_bytes()` of the start (`pretrained_start`).
        rounds: how many rounds (>= 1; at most `run.rounds` when that is set).
        absent: which contributions sit out (none by default).
        on_round: called with each round's report as it finishes.
        device: where contributions train, `"cpu"` or `"cuda"` for a repro2 run (None: the
            profile's); the outer step runs on the CPU. Under repro2 every hash is the same
            on either.

    Returns:
        The round reports in order.

    Raises:
        ValueError: bad rounds.
        CheckpointFormatError: `start` is not an outer state of the run's model.
        SpecError, ProfileUnavailable: a device the profile cannot use.
    """
    import time

    if rounds < 1 or (run.rounds is not None and rounds > run.rounds):
        raise ValueError(f"rounds must be in [1, {run.rounds or 'unbounded'}], got {rounds}")
    base = TrainingEngine(run.inner, device=device)
    state = OuterState.from_bytes(start)
    finals: dict[int, bytes] = {}
    reports: list[RoundReport] = []
    for t in range(rounds):
        tick = time.monotonic()
        g = state.to_bytes()
        contributions: dict[int, tuple[bytes, bytes]] = {}
        absent_seats = []
        for j in range(run.seats):
            if absent is not None and absent(t, j):
                absent_seats.append(j)
                continue
            contributions[j] = train_contribution(run, t, j, g, finals.get(j), device)
        result = advance_round(run, state, finals, contributions)
        state, finals = result.state, result.seat_finals
        blob = state.to_bytes()
        report = RoundReport(
            round=t,
            accepted=result.accepted,
            excluded=sorted([*absent_seats, *result.excluded]),
            metric=evaluate_global(base, blob),
            bytes_uploaded=sum(result.delta_bytes.values()),
            global_hash=state_hash(blob),
            delta_hashes=result.delta_hashes,
            seconds=time.monotonic() - tick,
        )
        reports.append(report)
        if on_round is not None:
            on_round(report)
    return reports
