"""veritrain.lineage: the commitments a model is registered with (docs/SECURITY.md P-18)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from veritrain.lineage import (
    ModelCommitments,
    architecture_commitment,
    compute_per_step,
    family_commitment,
    mismatches,
    parameter_count,
)
from veritrain.models import GPT, MLP
from veritrain.spec import (
    DatasetConfig,
    ExecutionProfile,
    GPTConfig,
    JobSpec,
    ModelConfig,
    OptimizerConfig,
    default_digits_spec,
)

SEED_STATE = b"\x11" * 32


def _gpt_spec(**overrides: object) -> JobSpec:
    values: dict[str, object] = {
        "model": GPTConfig(n_layer=2, n_head=4, n_embd=64, block_size=64),
        "dataset": DatasetConfig(name="shakespeare", root="0x" + "ab" * 32, test_fraction=0.1),
        "batch_size": 32,
        "total_steps": 100,
        "checkpoint_interval": 50,
        "model_id": "shakespeare-char",
    }
    values.update(overrides)
    return JobSpec.model_validate(values)


def test_architecture_commitment_binds_the_model_config_only() -> None:
    base = default_digits_spec(seed=1)
    assert len(architecture_commitment(base)) == 32
    # Jobs of one model differ in seed, N, k and learning rate: same architecture.
    other_job = default_digits_spec(seed=7, total_steps=40, checkpoint_interval=10, lr=1e-2)
    assert architecture_commitment(other_job) == architecture_commitment(base)
    # The dilution attack's one-parameter-ish model is another architecture.
    tiny = default_digits_spec(seed=1, hidden=(1,))
    assert architecture_commitment(tiny) != architecture_commitment(base)
    assert architecture_commitment(_gpt_spec()) != architecture_commitment(base)


def test_family_commitment_binds_data_batch_and_arithmetic_not_the_path() -> None:
    base = default_digits_spec(seed=1)
    assert family_commitment(default_digits_spec(seed=9, lr=1e-2)) == family_commitment(base)
    assert family_commitment(default_digits_spec(seed=1, batch_size=8)) != family_commitment(base)
    repro = default_digits_spec(seed=1, profile=ExecutionProfile.repro())
    assert family_commitment(repro) != family_commitment(base)
    root = "0x" + "cd" * 32
    here = default_digits_spec(seed=1).model_copy(
        update={"dataset": DatasetConfig(name="tensor-file", root=root, path="/a/x.pt")}
    )
    there = here.model_copy(
        update={"dataset": DatasetConfig(name="tensor-file", root=root, path="/b/x.pt")}
    )
    assert family_commitment(here) == family_commitment(there)
    other_data = here.model_copy(
        update={"dataset": DatasetConfig(name="tensor-file", root="0x" + "ce" * 32, path="/a")}
    )
    assert family_commitment(other_data) != family_commitment(here)


def test_parameter_count_matches_the_models() -> None:
    mlp_cfg = ModelConfig(hidden=(128, 128))
    mlp = MLP(mlp_cfg)
    assert parameter_count(mlp_cfg) == sum(p.numel() for p in mlp.parameters()) == 26_122
    gpt_cfg = GPTConfig(n_layer=2, n_head=4, n_embd=64, block_size=64)
    gpt = GPT(gpt_cfg, vocab_size=65)
    non_embedding = sum(
        p.numel()
        for name, p in gpt.named_parameters()
        if not name.startswith(("wte.", "wpe.", "lm_head."))
    )
    assert parameter_count(gpt_cfg) == non_embedding


def test_compute_per_step_counts_flops_of_the_batch() -> None:
    spec = default_digits_spec(seed=1, batch_size=64)
    assert compute_per_step(spec) == 6 * 26_122 * 64
    assert compute_per_step(default_digits_spec(seed=1, batch_size=32)) * 2 == compute_per_step(
        spec
    )
    gpt = _gpt_spec()
    n = parameter_count(gpt.model)
    assert compute_per_step(gpt) == (6 * n + 6 * 2 * 64 * 64) * 32 * 64
    # A wider model costs more per step; the seed and N do not change it.
    wide = default_digits_spec(seed=1, hidden=(1024, 1024))
    assert compute_per_step(wide) > compute_per_step(spec)
    assert compute_per_step(default_digits_spec(seed=2, total_steps=50)) == compute_per_step(spec)


def test_compute_per_step_beyond_uint64_raises() -> None:
    huge = _gpt_spec(
        model=GPTConfig(n_layer=64, n_head=64, n_embd=8192, block_size=8192), batch_size=65536
    )
    with pytest.raises(ValueError, match="uint64"):
        compute_per_step(huge)


def test_commitments_of_a_spec_and_mismatches() -> None:
    spec = default_digits_spec(seed=1)
    c = ModelCommitments.of(spec, SEED_STATE)
    assert c.seed_state == SEED_STATE
    assert c.compute_per_step == compute_per_step(spec)
    assert mismatches(default_digits_spec(seed=5, lr=1e-2), c) == []
    assert mismatches(default_digits_spec(seed=1, hidden=(1,)), c) == [
        "architecture",
        "compute per step",
    ]
    assert mismatches(default_digits_spec(seed=1, batch_size=8), c) == [
        "family",
        "compute per step",
    ]
    forged = c.model_copy(update={"compute_per_step": c.compute_per_step * 1000})
    assert mismatches(spec, forged) == ["compute per step"]
    optimizer = spec.model_copy(update={"optimizer": OptimizerConfig(lr=0.5)})
    assert mismatches(optimizer, c) == []


def test_commitments_validate_their_fields() -> None:
    with pytest.raises(ValidationError):
        ModelCommitments(
            architecture=b"\x01" * 31,
            family=b"\x02" * 32,
            compute_per_step=1,
            seed_state=SEED_STATE,
        )
    with pytest.raises(ValidationError):
        ModelCommitments(
            architecture=b"\x01" * 32,
            family=b"\x02" * 32,
            compute_per_step=0,
            seed_state=SEED_STATE,
        )
