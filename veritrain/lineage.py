"""What binds a job to its model's lineage: the commitments a model is registered with.

A model is registered on chain (``ShareRegistry.registerModel``) with

- an *architecture commitment*: keccak256 of the canonical JSON of the spec's `model` config
  (`architecture_commitment`);
- a *family commitment*: keccak256 of the canonical JSON of what fixes the data, the batch shape
  and the arithmetic every job under the model trains with: the dataset's name, root, test
  fraction and split seed (not its local `path`), the batch size, the optimizer's name and the
  profile's arithmetic and dtype (`family_commitment`);
- the *compute per step* the family implies, in FLOP of one optimizer step
  (`compute_per_step`), the unit of the model's shares (1 share = 1 FLOP of verified training);
- the *seed state*: the state hash of the seed-initialised state the first job starts from.

A job whose spec does not match its model's registered commitments is invalid: the solver
refuses it and replayers treat it as unreplayable (`ModelMismatch`, see
`noderuntime.node.NodeBase.replay_spec`). All functions here are pure (no chain, no torch).

Run: not a script; ``from veritrain.lineage import ModelCommitments``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from veritrain._keccak import keccak256
from veritrain.spec import (
    GPTConfig,
    JobSpec,
    LlamaConfig,
    ModelConfig,
    TextModelConfig,
    canonical_json_bytes,
)

__all__ = [
    "ModelCommitments",
    "architecture_commitment",
    "compute_per_step",
    "family_commitment",
    "mismatches",
    "parameter_count",
]

UINT64_MAX = 2**64 - 1


def architecture_commitment(spec: JobSpec) -> bytes:
    """keccak256 of the canonical JSON of ``spec.model`` (32 bytes).

    Every architecture field is bound (MLP widths; GPT layers, heads, width, context); the GPT's
    vocabulary comes from the data and is bound by the family commitment's dataset root.
    """
    return keccak256(canonical_json_bytes(spec.model.model_dump(mode="json")))


def family_commitment(spec: JobSpec) -> bytes:
    """keccak256 of the canonical JSON of the spec's training family (32 bytes).

    Covers ``{"dataset": {name, root, test_fraction, split_seed}, "batch_size", "optimizer":
    name, "arith", "dtype"}``: the data (by root, so a local file path does not matter), the
    batch shape and the arithmetic. Learning rate, betas, weight decay, seed and the job's N, k
    are left free: they vary between the jobs of one model.
    """
    ds = spec.dataset
    family = {
        "dataset": {
            "name": ds.name,
            "root": ds.root,
            "test_fraction": ds.test_fraction,
            "split_seed": ds.split_seed,
        },
        "batch_size": spec.batch_size,
        "optimizer": spec.optimizer.name,
        "arith": spec.profile.arith,
        "dtype": spec.profile.dtype,
    }
    return keccak256(canonical_json_bytes(family))


def parameter_count(model: ModelConfig | GPTConfig | LlamaConfig) -> int:
    """Parameters the FLOP count is based on.

    MLP: every weight and bias, ``sum(n_in * n_out + n_out)`` over its layers. GPT: the
    non-embedding parameters, ``n_layer * (12 D^2 + 13 D) + 2 D`` (blocks and the final
    LayerNorm); Llama: likewise ``n_layer * (2 D H hd + 2 D Hkv hd + 3 D F + 2 D) + D``
    (H query heads, Hkv key/value heads of width hd, SwiGLU width F). The embeddings and the
    vocabulary-sized head are left out, as in Kaplan et al. 2020, so the count does not
    depend on the data's vocabulary.
    """
    if isinstance(model, GPTConfig):
        d = model.n_embd
        return model.n_layer * (12 * d * d + 13 * d) + 2 * d
    if isinstance(model, LlamaConfig):
        # per block wq and wo (D x H hd each), wk and wv (D x Hkv hd each), w1, w2, w3
        # (D x F each) and two RMSNorm weights; then the final RMSNorm (no biases)
        d, hd, f = model.n_embd, model.head_dim, model.ffn_hidden
        block = 2 * d * model.n_head * hd + 2 * d * model.n_kv_head * hd + 3 * d * f + 2 * d
        return model.n_layer * block + d
    widths = (model.in_features, *model.hidden, model.out_features)
    return sum(a * b + b for a, b in zip(widths[:-1], widths[1:], strict=True))


def compute_per_step(spec: JobSpec) -> int:
    """FLOP of one optimizer step of ``spec`` (forward + backward, 3x the forward pass).

    MLP: ``6 * parameters * batch_size`` (2 FLOP per parameter per example forward).
    GPT and Llama: ``(6 * N + 6 * n_layer * T * D) * batch_size * T`` with N = `parameter_count` and
    T = block_size tokens per window (Kaplan et al. 2020: forward 2N + 2 n_layer n_ctx d per
    token). The optimizer update is not counted. A deterministic estimate, not a measurement:
    what matters is that every job under one model is counted by the same rule.

    Raises:
        ValueError: the result does not fit the registry's uint64.
    """
    n = parameter_count(spec.model)
    if isinstance(spec.model, TextModelConfig):
        t, d = spec.model.block_size, spec.model.n_embd
        flops = (6 * n + 6 * spec.model.n_layer * t * d) * spec.batch_size * t
    else:
        flops = 6 * n * spec.batch_size
    if not 0 < flops <= UINT64_MAX:
        raise ValueError(f"compute per step {flops} does not fit in uint64")
    return flops


class ModelCommitments(BaseModel):
    """What a model is registered with on chain (``ShareRegistry.modelSpecOf``).

    Attributes:
        architecture: 32 bytes, `architecture_commitment`.
        family: 32 bytes, `family_commitment`.
        compute_per_step: FLOP per optimizer step, `compute_per_step` (> 0, uint64).
        seed_state: 32 bytes, state hash of the seed-initialised state (the lineage's root).
    """

    model_config = ConfigDict(frozen=True)

    architecture: bytes = Field(min_length=32, max_length=32)
    family: bytes = Field(min_length=32, max_length=32)
    compute_per_step: int = Field(gt=0, le=UINT64_MAX)
    seed_state: bytes = Field(min_length=32, max_length=32)

    @classmethod
    def of(cls, spec: JobSpec, seed_state: bytes) -> ModelCommitments:
        """The commitments of ``spec``'s model, rooted at ``seed_state`` (the state hash of
        ``spec``'s seed-initialised state, from `veritrain.training.TrainingEngine`)."""
        return cls(
            architecture=architecture_commitment(spec),
            family=family_commitment(spec),
            compute_per_step=compute_per_step(spec),
            seed_state=bytes(seed_state),
        )


def mismatches(spec: JobSpec, registered: ModelCommitments) -> list[str]:
    """Which of ``spec``'s architecture, family and compute per step differ from its model's
    registered commitments (empty: the spec belongs to the model). The seed state is not
    compared: a job's start state is checked against the model's head on chain."""
    out = []
    if architecture_commitment(spec) != registered.architecture:
        out.append("architecture")
    if family_commitment(spec) != registered.family:
        out.append("family")
    if compute_per_step(spec) != registered.compute_per_step:
        out.append("compute per step")
    return out
