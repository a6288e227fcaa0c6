"""`veritrain.runsim`: a run simulated on one machine is the protocol's own computation."""

from __future__ import annotations

import pytest
import torch

from veritrain.diloco import (
    OuterState,
    RunSpec,
    contribution_init,
    decode_delta,
    encode_delta,
    initial_outer_state,
    outer_step,
    pseudo_gradient,
)
from veritrain.presets import preset
from veritrain.runsim import pretrained_start, simulate_run, train_alone
from veritrain.state import state_hash
from veritrain.training import TrainingEngine


def _run(fmt: str = "float32", seats: int = 3) -> RunSpec:
    inner = preset("digits-mlp", "native", total_steps=4, checkpoint_interval=2, batch_size=16)
    return RunSpec(inner=inner, seats=seats, rounds=4, delta_format=fmt)


def _manual(run: RunSpec, start: bytes, rounds: int, absent) -> list[bytes]:
    """The same run written out with `veritrain.diloco` alone: global hash per round."""
    state = OuterState.from_bytes(start)
    private: dict[int, bytes] = {}
    hashes = []
    for t in range(rounds):
        g = state.to_bytes()
        deltas = []
        for j in range(run.seats):
            if absent(t, j):
                continue
            engine = TrainingEngine(run.contribution_spec(t, j))
            st = engine.load_state(contribution_init(g, private.get(j)))
            engine.run(st, run.inner_steps)
            private[j] = engine.state_bytes(st)
            blob = encode_delta(pseudo_gradient(g, private[j]), t, run.delta_format)
            deltas.append(decode_delta(blob)[1])
        state = outer_step(state, deltas, run.outer.lr, run.outer.momentum)
        hashes.append(state.state_hash())
    return hashes


@pytest.mark.parametrize("fmt", ["float32", "int8"])
def test_the_simulation_is_the_protocol_and_a_returning_seat_keeps_its_adamw(fmt: str) -> None:
    run = _run(fmt)
    start = pretrained_start(run, 3)

    def absent(t: int, j: int) -> bool:
        return (t, j) in {(1, 1), (2, 0), (2, 1), (2, 2)}

    reports = simulate_run(run, start, 4, absent=absent)
    assert [r.global_hash for r in reports] == _manual(run, start, 4, absent)
    assert [r.accepted for r in reports] == [[0, 1, 2], [0, 2], [], [0, 1, 2]]
    assert reports[1].excluded == [1] and reports[2].excluded == [0, 1, 2]
    assert reports[2].bytes_uploaded == 0 and not reports[2].delta_hashes
    assert sorted(reports[3].delta_hashes) == [0, 1, 2]
    again = simulate_run(run, start, 4, absent=absent)
    assert [r.global_hash for r in again] == [r.global_hash for r in reports]


def test_a_round_without_contributions_keeps_the_parameters() -> None:
    run = _run()
    start = pretrained_start(run, 0)
    reports = simulate_run(run, start, 1, absent=lambda t, j: True)
    assert reports[0].accepted == [] and reports[0].excluded == [0, 1, 2]
    before = OuterState.from_bytes(start)
    after = outer_step(before, [], 0.7, 0.9)
    assert reports[0].global_hash == after.state_hash()
    assert all(torch.equal(after.params[n], before.params[n]) for n in before.params)


def test_uploaded_bytes_are_the_encoded_pseudo_gradients() -> None:
    f32 = simulate_run(_run("float32"), pretrained_start(_run(), 0), 1)[0]
    i8 = simulate_run(_run("int8"), pretrained_start(_run(), 0), 1)[0]
    assert 3.5 < f32.bytes_uploaded / i8.bytes_uploaded < 4.0
    assert f32.bytes_uploaded > 3 * 4 * 26_000  # 3 seats, float32, the MLP's parameters


def test_bad_arguments_are_refused() -> None:
    run = _run()
    start = pretrained_start(run, 0)
    with pytest.raises(ValueError, match="rounds must be in"):
        simulate_run(run, start, 5)
    with pytest.raises(ValueError, match="pretraining steps"):
        pretrained_start(run, -1)


def test_the_start_and_the_baselines() -> None:
    run = _run()
    engine = TrainingEngine(run.inner)
    seeded = initial_outer_state(engine.state_tensors(engine.init_state())).to_bytes()
    assert pretrained_start(run, 0) == seeded
    assert state_hash(pretrained_start(run, 2)) != state_hash(seeded)
    seen = []
    curve = train_alone(run, seeded, 3, 2, on_round=lambda t, m: seen.append(t))
    assert len(curve) == 3 and seen == [0, 1, 2] and all(0 <= m <= 1 for m in curve)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_a_repro2_gpt_run_is_the_same_on_cuda_and_cpu() -> None:
    """Every global state and pseudo-gradient hash of a GPT run (pretraining, AdamW carried,
    int8 pseudo-gradients, an absent seat), CUDA against CPU."""
    inner = preset("shakespeare-char", "repro2", total_steps=4, checkpoint_interval=2)
    run = RunSpec(inner=inner, seats=3, rounds=3, delta_format="int8")
    out = {}
    for device in ("cpu", "cuda"):
        start = pretrained_start(run, 2, device)
        reports = simulate_run(run, start, 3, absent=lambda t, j: (t, j) == (1, 2), device=device)
        out[device] = (start, [(r.global_hash, r.delta_hashes, r.accepted) for r in reports])
    assert out["cpu"] == out["cuda"]
