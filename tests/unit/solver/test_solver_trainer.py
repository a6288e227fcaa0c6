"""Resumable training of `solver.trainer` (the cheating modes: tests/unit/adversary)."""

from __future__ import annotations

from pathlib import Path

import pytest

from solver.trainer import restore_checkpoint, train_job
from tests.utils.node_fixtures import tiny_spec
from veritrain.errors import CheckpointHashMismatch
from veritrain.hexutil import from_hex
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


def test_honest_run_has_a_checkpoint_every_k_steps(honest: list[str]) -> None:
    assert len(honest) == 5 and len(set(honest)) == 5


def test_honest_run_is_reproducible(engine: TrainingEngine, honest: list[str], tmp_path) -> None:
    again: list[str] = []
    train_job(engine, CheckpointStore(tmp_path), again)
    assert again == honest


def test_resume_after_stop_gives_the_same_checkpoints(
    engine: TrainingEngine, honest: list[str], tmp_path: Path
) -> None:
    store = CheckpointStore(tmp_path)
    hashes: list[str] = []
    persisted: list[list[str]] = []
    steps: list[int] = []
    original = engine.train_step
    engine.train_step = lambda state: (steps.append(state.step), original(state))[1]  # type: ignore[method-assign]
    try:
        done = train_job(
            engine,
            store,
            hashes,
            on_checkpoint=lambda h: persisted.append(list(h)),
            # stopped at step 25: the step-20 checkpoint is the last one (its write, off the
            # training thread, is finished before train_job returns)
            should_stop=lambda: len(steps) >= 25,
        )
        assert not done and persisted[-1] == honest[:3]
        resumed = list(persisted[-1])
        steps.clear()
        assert train_job(engine, store, resumed)
    finally:
        del engine.train_step
    assert resumed == honest
    assert steps[0] == 20 and len(steps) == 20  # resumed from step 20, not from scratch


def flip_bit(store: CheckpointStore, digest: str | bytes) -> None:
    """Flip the last bit of a stored checkpoint file (a disk error the hash check catches)."""
    path = store.path(digest)
    blob = bytearray(path.read_bytes())
    blob[-1] ^= 1
    path.write_bytes(bytes(blob))


def test_resume_repairs_a_corrupt_last_checkpoint(engine, honest, tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    hashes: list[str] = []
    train_job(engine, store, hashes, should_stop=lambda: len(hashes) >= 3)
    flip_bit(store, hashes[-1])
    flip_bit(store, hashes[-2])  # the one before is bad too: replay from step 0
    assert train_job(engine, store, hashes)
    assert hashes == honest
    for digest in hashes:
        assert store.get(digest)  # every file re-hashes to its name again


def test_restore_checkpoint_replays_from_the_last_good_one(engine, honest, tmp_path) -> None:
    store = CheckpointStore(tmp_path)
    hashes: list[str] = []
    assert train_job(engine, store, hashes)
    flip_bit(store, hashes[3])
    good = [from_hex(h) for h in honest]
    blob = restore_checkpoint(engine, store, good, 3)
    assert state_hash(blob) == good[3] and store.get(good[3]) == blob


def test_restore_checkpoint_refuses_a_history_it_cannot_reproduce(engine, tmp_path) -> None:
    store = CheckpointStore(tmp_path)
    hashes: list[str] = []
    assert train_job(engine, store, hashes)
    store.delete(hashes[2])
    wrong = [from_hex(h) for h in hashes]
    wrong[2] = b"\x01" * 32
    with pytest.raises(CheckpointHashMismatch):
        restore_checkpoint(engine, store, wrong, 2)


class _FailingStore(CheckpointStore):
    """A store whose disk fills up at the `fail_at`-th put, recording each put's thread;
    each put first sleeps `delay` seconds (a slow disk, slower than a training segment)."""

    def __init__(self, root: Path, fail_at: int, delay: float = 0.0) -> None:
        super().__init__(root)
        self.fail_at = fail_at
        self.delay = delay
        self.threads: list[str] = []

    def put(self, blob: bytes | bytearray, *, durable: bool = True) -> bytes:
        import threading
        import time

        self.threads.append(threading.current_thread().name)
        time.sleep(self.delay)
        if len(self.threads) == self.fail_at:
            raise OSError(28, "No space left on device")
        return super().put(blob, durable=durable)


def test_checkpoints_are_written_off_the_training_thread_in_order(
    engine: TrainingEngine, honest: list[str], tmp_path: Path
) -> None:
    store = _FailingStore(tmp_path, fail_at=0)
    seen: list[list[str]] = []
    hashes: list[str] = []
    assert train_job(engine, store, hashes, on_checkpoint=lambda h: seen.append(list(h)))
    assert hashes == honest
    assert seen == [honest[: i + 1] for i in range(len(honest))]  # recorded in order
    assert set(store.threads) == {t for t in store.threads if t.startswith("checkpoint-writer")}


def test_a_failed_checkpoint_write_stops_training_with_its_error(
    engine: TrainingEngine, honest: list[str], tmp_path: Path
) -> None:
    store = _FailingStore(tmp_path, fail_at=3)
    hashes: list[str] = []
    with pytest.raises(OSError, match="No space left"):
        train_job(engine, store, hashes)
    assert hashes == honest[:2]  # what was stored before is recorded; nothing after
    resumed = list(hashes)
    assert train_job(engine, CheckpointStore(tmp_path), resumed)  # and resumes from there
    assert resumed == honest


def test_a_slow_disk_holds_training_back_one_checkpoint_at_most(
    engine: TrainingEngine, honest: list[str], tmp_path: Path
) -> None:
    """Training never runs more than one checkpoint ahead of its writes: at most two
    checkpoints' bytes are in memory, and a failed write is raised before a later checkpoint
    can be recorded in its place (its hash at the failed one's index)."""
    store = _FailingStore(tmp_path, fail_at=2, delay=0.3)
    hashes: list[str] = []
    with pytest.raises(OSError, match="No space left"):
        train_job(engine, store, hashes)
    assert hashes == honest[:1]
    assert len(store.threads) == 2  # checkpoint 2 was never handed to the writer


@pytest.mark.parametrize("name", ["digits-mlp", "shakespeare-char"])
@pytest.mark.parametrize("arith", ["native", "repro2"])
def test_training_on_from_memory_is_training_on_from_the_checkpoint(
    name: str, arith: str, tmp_path: Path
) -> None:
    """`train_job` does not decode its checkpoints to go on (a second copy of every tensor):
    that is sound only while the canonical bytes hold the whole training state. Two segments
    trained through checkpoints equal the same steps trained in one go, and a segment replayed
    from the decoded middle checkpoint (what a verifier does) ends on the same bytes."""
    from veritrain.presets import preset
    from veritrain.replay import replay_segment

    k = 5
    spec = preset(name, arith, total_steps=2 * k, checkpoint_interval=k)
    engine = TrainingEngine(spec)
    store = CheckpointStore(tmp_path)
    hashes: list[str] = []
    assert train_job(engine, store, hashes)
    state = engine.init_state()
    engine.run(state, 2 * k)
    assert "0x" + engine.state_hash(state).hex() == hashes[-1]
    replayed = replay_segment(engine, store.get(from_hex(hashes[1])), 2 * k)
    assert state_hash(replayed) == from_hex(hashes[-1])
