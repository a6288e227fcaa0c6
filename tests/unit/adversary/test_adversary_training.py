"""The adversary's tampering primitives (`adversary.training`): a skipped step changes every
later hash and fails replay of its segment; perturbed weights are seeded and reproducible."""

from __future__ import annotations

from adversary.training import perturb_weights, skip_step
from veritrain.replay import replay_segment
from veritrain.state import state_hash


def test_adversary_skip_step_changes_hash(engine, honest_run, train_run):
    run = train_run(engine, cheat=lambda st: st.step == 15 and (skip_step(st) or True))
    assert run.hashes[:2] == honest_run.hashes[:2]
    assert all(a != b for a, b in zip(run.hashes[2:], honest_run.hashes[2:], strict=True))
    # the segment with the skipped step does not replay to the committed hash
    end = replay_segment(engine, run.blobs[1], 20)
    assert state_hash(end) != run.hashes[2]
    # later segments are honest work from a wrong start: they replay fine
    assert state_hash(replay_segment(engine, run.blobs[2], 30)) == run.hashes[3]


def test_adversary_skip_step_at_zero_loads(engine):
    state = engine.init_state()
    skip_step(state)
    loaded = engine.load_state(engine.state_bytes(state))
    assert loaded.step == 1 and not loaded.optimizer.state


def test_adversary_perturb_weights(engine):
    state = engine.init_state()
    before = engine.state_hash(state)
    perturb_weights(state, std=1e-3, seed=1)
    after = engine.state_hash(state)
    assert after != before
    again = engine.init_state()
    perturb_weights(again, std=1e-3, seed=1)
    assert engine.state_hash(again) == after
