"""DiLoCo runs' pure core (`veritrain.diloco`): shards, contributions as jobs, the outer step."""

from __future__ import annotations

import hashlib
import struct
from collections import OrderedDict

import numpy as np
import pytest
import torch

from veritrain.diloco import (
    OuterState,
    RunSpec,
    advance_round,
    communication_bytes,
    contribution_init,
    contribution_uri,
    decode_delta,
    delta_is_finite,
    encode_delta,
    global_params,
    initial_outer_state,
    outer_step,
    outer_step_slice,
    private_state,
    pseudo_gradient,
    shard_seed,
)
from veritrain.errors import CheckpointFormatError, SpecError
from veritrain.merkle import verify_proof
from veritrain.outer_tree import (
    outer_chunk_leaf,
    outer_state_chunks,
    outer_state_tree,
    recompute_leaf,
)
from veritrain.replay import replay_segment
from veritrain.spec import ExecutionProfile, default_digits_spec
from veritrain.state import decode_state, state_hash
from veritrain.training import TrainingEngine


def _run(**kw) -> RunSpec:
    inner = default_digits_spec(
        seed=11, total_steps=6, checkpoint_interval=3, profile=ExecutionProfile.repro()
    )
    return RunSpec(inner=inner, **kw)


def _tensors(seed: int, shapes: dict[str, tuple[int, ...]]) -> OrderedDict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return OrderedDict(
        (n, torch.randn(s, generator=g, dtype=torch.float32)) for n, s in shapes.items()
    )


SHAPES = {"w": (5, 7), "b": (7,), "e": (3, 3)}


def test_shard_seed_is_sha256_of_run_round_seat_and_distinct() -> None:
    want = hashlib.sha256(b"veritrain/diloco/shard/v1" + struct.pack(">QQQ", 9, 2, 1)).digest()
    assert shard_seed(9, 2, 1) == int.from_bytes(want[:8], "big")
    seeds = {shard_seed(9, t, j) for t in range(20) for j in range(8)}
    assert len(seeds) == 160
    assert shard_seed(9, 1, 2) != shard_seed(9, 2, 1)
    with pytest.raises(SpecError, match="round -1 is not a uint64"):
        shard_seed(9, -1, 0)


def test_contribution_spec_changes_only_the_seed() -> None:
    run = _run(seats=3, rounds=2)
    spec = run.contribution_spec(1, 2)
    assert spec.seed == shard_seed(11, 1, 2)
    assert spec.model_copy(update={"seed": 11}) == run.inner
    with pytest.raises(SpecError, match="seat 3 out of range"):
        run.contribution_spec(0, 3)
    with pytest.raises(SpecError, match="round 2 is past the run's 2 rounds"):
        run.contribution_spec(2, 0)
    assert _run(seats=3).run_hash() != run.run_hash()
    other = run.model_copy(update={"inner": run.inner.model_copy(update={"batch_size": 8})})
    assert other.run_hash() != run.run_hash()


def _np_outer(first, p, buf, deltas, lr, mu):
    """Reference: numpy float32 scalar-by-scalar IEEE operations (no fusion, one rounding each)."""
    f = np.float32
    g = deltas[0].astype(f).copy()
    for d in deltas[1:]:
        g = (g + d).astype(f)
    if len(deltas) > 1:
        g = (g / f(len(deltas))).astype(f)
    nb = g.copy() if first else (buf * f(mu) + g).astype(f)
    direction = (g + (nb * f(mu)).astype(f)).astype(f)
    return (p - (direction * f(lr)).astype(f)).astype(f), nb


def test_outer_step_matches_an_ieee_float32_reference_bit_for_bit() -> None:
    params = _tensors(0, SHAPES)
    state = initial_outer_state(params)
    ref_p = {n: t.numpy().copy() for n, t in params.items()}
    ref_m = {n: np.zeros_like(v) for n, v in ref_p.items()}
    for t in range(3):
        deltas = [_tensors(100 * t + j, SHAPES) for j in range(3)]
        first = state.step == 0
        state = outer_step(state, deltas, lr=0.7, momentum=0.9)
        for n in ref_p:
            ref_p[n], ref_m[n] = _np_outer(
                first, ref_p[n], ref_m[n], [d[n].numpy() for d in deltas], 0.7, 0.9
            )
            assert state.params[n].numpy().tobytes() == ref_p[n].tobytes(), (t, n)
            assert state.momentum[n].numpy().tobytes() == ref_m[n].tobytes(), (t, n)
    assert state.step == 3


def test_outer_step_is_torch_nesterov_sgd() -> None:
    """Same semantics as torch.optim.SGD(nesterov=True), up to torch's own fused roundings."""
    params = _tensors(1, SHAPES)
    model = [torch.nn.Parameter(t.clone()) for t in params.values()]
    opt = torch.optim.SGD(model, lr=0.7, momentum=0.9, nesterov=True)
    state = initial_outer_state(params)
    for t in range(4):
        deltas = [_tensors(7 * t + j, SHAPES) for j in range(2)]
        state = outer_step(state, deltas, lr=0.7, momentum=0.9)
        for i, n in enumerate(SHAPES):
            model[i].grad = (deltas[0][n] + deltas[1][n]) / 2
        opt.step()
        for i, n in enumerate(SHAPES):
            torch.testing.assert_close(state.params[n], model[i].detach(), rtol=1e-5, atol=1e-5)


def test_no_accepted_contribution_keeps_the_state() -> None:
    state = initial_outer_state(_tensors(2, SHAPES))
    after = outer_step(state, [], lr=0.7, momentum=0.9)
    assert after.step == 1
    assert [t.numpy().tobytes() for t in after.params.values()] == [
        t.numpy().tobytes() for t in state.params.values()
    ]


def test_a_mismatched_delta_is_refused() -> None:
    state = initial_outer_state(_tensors(2, SHAPES))
    bad = _tensors(3, {"w": (5, 7), "b": (8,), "e": (3, 3)})
    with pytest.raises(CheckpointFormatError, match="does not match the parameters"):
        outer_step(state, [bad], lr=0.7, momentum=0.9)
    wide = OrderedDict((n, t.double()) for n, t in _tensors(3, SHAPES).items())
    with pytest.raises(CheckpointFormatError, match="pseudo-gradient 0 does not match"):
        outer_step(state, [wide], lr=0.7, momentum=0.9)


@pytest.mark.parametrize("poison", [float("nan"), float("inf"), float("-inf")])
def test_a_non_finite_delta_never_reaches_the_model(poison: float) -> None:
    """A diverged contribution (or an int8 Delta with a non-finite scale) is refused."""
    state = initial_outer_state(_tensors(2, SHAPES))
    good, bad = _tensors(3, SHAPES), _tensors(4, SHAPES)
    bad["b"][3] = poison
    assert delta_is_finite(good) and not delta_is_finite(bad)
    with pytest.raises(ValueError, match="pseudo-gradient 1 has a NaN or an infinity"):
        outer_step(state, [good, bad], lr=0.7, momentum=0.9)
    for fmt in ("float32", "int8"):
        with pytest.raises(ValueError, match="has no encoding"):
            encode_delta(bad, 0, fmt)
    # bytes that decode to a non-finite Delta (an infinite int8 scale) are caught too
    from veritrain.state import encode_state

    blob = encode_state(
        0,
        OrderedDict([("w.q", torch.ones(3, dtype=torch.int8)), ("w.scale", torch.tensor(poison))]),
    )
    assert not delta_is_finite(decode_delta(blob)[1])


def test_outer_state_roundtrips_and_checks_its_momentum() -> None:
    state = outer_step(initial_outer_state(_tensors(4, SHAPES)), [_tensors(5, SHAPES)], 0.7, 0.9)
    again = OuterState.from_bytes(state.to_bytes())
    assert again.to_bytes() == state.to_bytes() and again.step == 1
    from veritrain.state import encode_state

    lopsided = encode_state(
        1, OrderedDict([*state.params.items(), ("outer.momentum.w", state.momentum["w"])])
    )
    with pytest.raises(CheckpointFormatError, match="one momentum buffer per parameter"):
        OuterState.from_bytes(lopsided)


@pytest.mark.parametrize("chunk", [1, 8, 4096])
def test_a_disputed_leaf_is_recomputed_from_slices_alone(chunk: int) -> None:
    """The outer step of a slice is the slice of the outer step: a referee recomputes one
    leaf of the posted tree from the same ranges of the previous state and the Deltas."""
    prev = outer_step(initial_outer_state(_tensors(6, SHAPES)), [_tensors(7, SHAPES)], 0.7, 0.9)
    deltas = [_tensors(8 + j, SHAPES) for j in range(3)]
    post = outer_step(prev, deltas, 0.7, 0.9)
    tree = outer_state_tree(post, chunk)
    flat = lambda ts: torch.cat([t.reshape(-1) for t in ts.values()])  # noqa: E731
    p, m = flat(prev.params), flat(prev.momentum)
    ds = [flat(d) for d in deltas]
    chunks = outer_state_chunks(post, chunk)
    assert len(tree) == len(chunks) == -(-p.numel() // chunk)
    for i in {0, len(chunks) // 2, len(chunks) - 1}:
        sl = slice(i * chunk, (i + 1) * chunk)
        np_, nm = outer_step_slice(False, p[sl], m[sl], [d[sl] for d in ds], 0.7, 0.9)
        assert (np_.numpy().tobytes(), nm.numpy().tobytes()) == chunks[i]
        leaf = outer_chunk_leaf(i, np_.numpy().tobytes(), nm.numpy().tobytes())
        assert verify_proof(tree.proof(i), tree.root, leaf, i, len(tree))
        assert recompute_leaf(prev, deltas, i, 0.7, 0.9, chunk) == leaf
    wrong = outer_step(prev, deltas[:2], 0.7, 0.9)
    wrong_tree = outer_state_tree(wrong, chunk)
    assert wrong_tree.root != tree.root
    # the referee tells the honest leaf from the wrong one at every leaf where they differ
    differ = [i for i in range(len(tree)) if wrong_tree.leaves[i] != tree.leaves[i]]
    assert differ
    for i in differ[:3]:
        assert recompute_leaf(prev, deltas, i, 0.7, 0.9, chunk) == tree.leaves[i]
        assert recompute_leaf(prev, deltas, i, 0.7, 0.9, chunk) != wrong_tree.leaves[i]
    with pytest.raises(ValueError, match="out of range"):
        recompute_leaf(prev, deltas, len(tree), 0.7, 0.9, chunk)


def test_int8_delta_roundtrip_error_and_format() -> None:
    delta = _tensors(9, SHAPES)
    delta["zero"] = torch.zeros(4)
    blob = encode_delta(delta, 3, "int8")
    assert blob == encode_delta(delta, 3, "int8")
    rnd, back = decode_delta(blob)
    assert rnd == 3 and list(back) == list(delta)
    for n, t in delta.items():
        scale = float(t.abs().max()) / 127
        assert float((back[n] - t).abs().max()) <= scale / 2 * (1 + 1e-6) + 1e-12, n
    assert float(back["zero"].abs().max()) == 0.0
    _, header_tensors = decode_state(blob)
    assert header_tensors["w.q"].dtype == torch.int8
    assert communication_bytes(sum(t.numel() for t in delta.values()), len(delta), "int8") == (
        sum(t.numel() for t in delta.values()) + 4 * len(delta)
    )
    fp = encode_delta(delta, 3, "float32")
    assert decode_delta(fp)[1]["w"].numpy().tobytes() == delta["w"].numpy().tobytes()
    with pytest.raises(SpecError, match="unknown delta format"):
        encode_delta(delta, 3, "int4")


def test_a_malformed_int8_delta_is_refused() -> None:
    from veritrain.state import encode_state

    bad = encode_state(
        0, OrderedDict([("w.q", torch.zeros(3, dtype=torch.int8)), ("w.scale", torch.zeros(2))])
    )
    with pytest.raises(CheckpointFormatError, match="bad pair"):
        decode_delta(bad)


def test_a_contribution_is_an_ordinary_replayable_job_and_carries_adamw() -> None:
    """Round 0 from the seed-initialised weights with fresh AdamW; round 1 from the new global
    state with the seat's own AdamW moments and step count; each replays like any job."""
    run = _run(seats=2, rounds=2)
    h = run.inner_steps
    base = TrainingEngine(run.inner)
    state0 = initial_outer_state(base.state_tensors(base.init_state()))
    finals = []
    for seat in range(2):
        engine = TrainingEngine(run.contribution_spec(0, seat))
        init = contribution_init(state0.to_bytes(), None)
        st = engine.load_state(init)
        assert st.step == 0
        engine.run(st, h)
        finals.append(engine.state_bytes(st))
        # a verifier replays the whole contribution from its committed initial state
        assert replay_segment(engine, init, h, start_step=0) == finals[-1]
    assert finals[0] != finals[1]  # different shards
    deltas = [pseudo_gradient(state0.to_bytes(), f) for f in finals]
    state1 = outer_step(state0, deltas, run.outer.lr, run.outer.momentum)

    engine = TrainingEngine(run.contribution_spec(1, 0))
    init1 = contribution_init(state1.to_bytes(), finals[0])
    _, tensors = decode_state(init1)
    carried = private_state(finals[0])
    assert [n for n in tensors if n.startswith("optim.")] == list(carried)
    step_key = next(n for n in carried if n.endswith(".step"))
    assert float(tensors[step_key]) == h  # AdamW's own step count carries on
    _, params1 = global_params(init1)
    assert all(torch.equal(params1[n], state1.params[n]) for n in params1)
    st = engine.load_state(init1)
    engine.run(st, h)
    assert float(engine.state_tensors(st)[step_key]) == 2 * h
    assert replay_segment(engine, init1, h, start_step=0) == engine.state_bytes(st)
    assert state_hash(init1) != state_hash(contribution_init(state1.to_bytes(), finals[1]))


def test_the_outer_state_of_a_trained_model_holds_its_parameters_only() -> None:
    run = _run()
    engine = TrainingEngine(run.inner)
    st = engine.init_state()
    engine.run(st, 2)
    state = initial_outer_state(engine.state_tensors(st))
    assert list(state.params) == [n for n, _ in st.model.named_parameters()]
    assert OuterState.from_bytes(state.to_bytes()).to_bytes() == state.to_bytes()


def test_mismatched_states_are_refused() -> None:
    run = _run()
    base = TrainingEngine(run.inner)
    state0 = initial_outer_state(base.state_tensors(base.init_state()))
    other = TrainingEngine(
        run.inner.model_copy(update={"model": run.inner.model.model_copy(update={"hidden": (16,)})})
    )
    foreign = other.state_bytes(other.init_state())
    with pytest.raises(CheckpointFormatError, match="private state's parameters"):
        contribution_init(state0.to_bytes(), foreign)
    with pytest.raises(CheckpointFormatError, match="final state's parameters"):
        pseudo_gradient(state0.to_bytes(), foreign)


def _with_edge_values(ts: OrderedDict[str, torch.Tensor]) -> OrderedDict[str, torch.Tensor]:
    """Plant subnormals, signed zeros and large values, where flush-to-zero or fusion shows."""
    out = OrderedDict((n, t.clone()) for n, t in ts.items())
    flat = out["w"].view(-1)
    flat[:6] = torch.tensor([1e-40, -1e-40, 0.0, -0.0, 3e38, -2.5e-39])
    return out


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_outer_step_and_contributions_on_cuda_match_cpu() -> None:
    """The outer step and a two-round contribution (AdamW carried) give the CPU's bytes."""
    cpu = initial_outer_state(_with_edge_values(_tensors(20, SHAPES)))
    gpu = OuterState(
        0,
        OrderedDict((n, t.cuda()) for n, t in cpu.params.items()),
        OrderedDict((n, t.cuda()) for n, t in cpu.momentum.items()),
    )
    for t in range(3):
        deltas = [_with_edge_values(_tensors(30 * t + j, SHAPES)) for j in range(3)]
        cpu = outer_step(cpu, deltas, 0.7, 0.9)
        gpu = outer_step(
            gpu, [OrderedDict((n, x.cuda()) for n, x in d.items()) for d in deltas], 0.7, 0.9
        )
        assert all(p.is_cuda for p in gpu.params.values())
        back = OuterState(
            gpu.step,
            OrderedDict((n, x.cpu()) for n, x in gpu.params.items()),
            OrderedDict((n, x.cpu()) for n, x in gpu.momentum.items()),
        )
        assert back.to_bytes() == cpu.to_bytes(), t

    run = _run(seats=1, rounds=2)
    base = TrainingEngine(run.inner)
    global0 = initial_outer_state(base.state_tensors(base.init_state())).to_bytes()
    finals = {}
    for device in ("cpu", "cuda"):
        private = None
        g = global0
        for r in range(2):
            engine = TrainingEngine(run.contribution_spec(r, 0), device=device)
            st = engine.load_state(contribution_init(g, private))
            engine.run(st, run.inner_steps)
            private = engine.state_bytes(st)
            state = outer_step(OuterState.from_bytes(g), [pseudo_gradient(g, private)], 0.7, 0.9)
            g = state.to_bytes()
        finals[device] = (private, g)
    assert finals["cpu"] == finals["cuda"]


def test_every_node_loads_a_contribution_spec_by_its_on_chain_hash(tmp_path) -> None:
    """`<run URI>#contribution=<t>,<j>` with specHash keccak256(abi.encode(runHash, t, j))."""
    from eth_abi import encode

    from veritrain._keccak import keccak256
    from veritrain.errors import SpecHashMismatch, SpecUnavailable
    from veritrain.spec import load_spec

    run = _run(seats=3, rounds=5)
    expected = keccak256(encode(["bytes32", "uint256", "uint256"], [run.run_hash(), 2, 1]))
    assert run.contribution_spec_hash(2, 1) == expected
    uri = contribution_uri(run.to_data_uri(), 2, 1)
    assert uri.endswith("#contribution=2,1")
    assert load_spec(uri, expected) == run.contribution_spec(2, 1)
    path = tmp_path / "run.json"
    path.write_bytes(run.canonical_json())
    from_file = contribution_uri(path.as_uri(), 4, 0)
    assert load_spec(from_file, run.contribution_spec_hash(4, 0)) == run.contribution_spec(4, 0)
    # another round's or seat's hash, or the plain run hash, is refused before parsing
    for wrong in (
        run.contribution_spec_hash(3, 1),
        run.contribution_spec_hash(2, 0),
        run.run_hash(),
    ):
        with pytest.raises(SpecHashMismatch):
            load_spec(uri, wrong)
    with pytest.raises(SpecUnavailable, match="malformed contribution fragment"):
        load_spec(run.to_data_uri() + "#contribution=2;1", expected)
    # bytes that hash right but are a job spec, not a run
    job_uri = contribution_uri(run.inner.to_data_uri(), 0, 0)
    with pytest.raises(SpecError, match="not a valid RunSpec"):
        load_spec(
            job_uri,
            keccak256(encode(["bytes32", "uint256", "uint256"], [run.inner.spec_hash(), 0, 0])),
        )
    # a seat or round the run does not have
    with pytest.raises(SpecError, match="seat 3 out of range"):
        load_spec(contribution_uri(run.to_data_uri(), 0, 3), run.contribution_spec_hash(0, 3))
    with pytest.raises(SpecError, match="must not have a fragment"):
        contribution_uri(uri, 0, 0)


def test_advance_round_counts_only_contributions_from_the_prescribed_start() -> None:
    """The rule every party applies: a verified contribution counts only if it started from
    the round's global state with its own seat's optimizer state, and its Delta is finite."""
    run = _run(seats=4, rounds=3)
    base = TrainingEngine(run.inner)
    state0 = initial_outer_state(base.state_tensors(base.init_state()))
    g0 = state0.to_bytes()

    def train(t: int, j: int, init: bytes) -> bytes:
        engine = TrainingEngine(run.contribution_spec(t, j), initial=init)
        return engine.state_bytes(engine.run(engine.init_state(), run.inner_steps))

    fresh = contribution_init(g0, None)
    round0 = {j: (state_hash(fresh), train(0, j, fresh)) for j in range(2)}
    r0 = advance_round(run, state0, {}, round0)
    assert r0.accepted == [0, 1] and not r0.excluded and set(r0.seat_finals) == {0, 1}
    g1 = r0.state.to_bytes()

    own = contribution_init(g1, r0.seat_finals[0])  # seat 0, its own AdamW: counts
    swapped = contribution_init(g1, r0.seat_finals[0])  # seat 1 with seat 0's AdamW: does not
    stale = contribution_init(g0, r0.seat_finals[1])  # seat 1 from last round's global state
    diverged = train(1, 3, contribution_init(g1, None))
    _, tensors = decode_state(diverged)
    tensors["0.weight"][0, 0] = float("nan")
    from veritrain.state import encode_state

    nan_final = encode_state(run.inner_steps, tensors)
    contributions = {
        0: (state_hash(own), train(1, 0, own)),
        1: (state_hash(swapped), train(1, 1, swapped)),
        2: (state_hash(stale), train(1, 2, stale)),
        3: (state_hash(contribution_init(g1, None)), nan_final),
    }
    r1 = advance_round(run, r0.state, r0.seat_finals, contributions)
    assert r1.accepted == [0]
    assert set(r1.excluded) == {1, 2, 3}
    assert "initial state" in r1.excluded[1] and "initial state" in r1.excluded[2]
    assert "NaN" in r1.excluded[3]
    # only the counted contribution moves the model and becomes its seat's private state
    alone = advance_round(run, r0.state, r0.seat_finals, {0: contributions[0]})
    assert alone.state.to_bytes() == r1.state.to_bytes()
    assert r1.seat_finals[1] == r0.seat_finals[1] and r1.seat_finals[0] == contributions[0][1]
    assert set(r1.delta_hashes) == {0} and r1.delta_bytes[0] > 0
    with pytest.raises(SpecError, match="seat 4 out of range"):
        advance_round(run, r0.state, {}, {4: contributions[0]})
    foreign = TrainingEngine(
        run.inner.model_copy(update={"model": run.inner.model.model_copy(update={"hidden": (8,)})})
    )
    odd = {0: (state_hash(own), foreign.state_bytes(foreign.init_state()))}
    assert "does not fit" in advance_round(run, r0.state, r0.seat_finals, odd).excluded[0]
