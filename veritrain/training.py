"""Deterministic training engine: the MLP, AdamW, one step, evaluation, canonical state bytes.

A replayer that applies the same execution profile and starts from the same checkpoint bytes
reproduces the solver's next checkpoints bit for bit (verification by replay, as in
Proof-of-Learning, Jia et al., IEEE S&P 2021). What makes this hold:

- the initial state comes from `torch.manual_seed(seed)` then model construction (on CPU, in
  float32, then moved to the profile's device and dtype);
- the batch of step t depends only on `(seed, t)` (`veritrain.data.batch_indices`);
- the profile pins device, dtype, thread count and deterministic algorithms (`apply_profile`);
- AdamW runs its single-tensor implementation (`foreach=False`, `fused=False`) on every device.

Run (smoke): `.venv/bin/python -c "from veritrain.spec import default_digits_spec as d;
from veritrain.training import TrainingEngine as E; e=E(d()); s=e.init_state(); e.run(s, 300);
print(e.evaluate(s))"`.
"""

from __future__ import annotations

import logging
import os
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from veritrain.data import Dataset, batch_indices, dataset_root_hex, load_dataset
from veritrain.errors import (
    CheckpointFormatError,
    DatasetError,
    DatasetRootMismatch,
    ProfileUnavailable,
    SpecError,
)
from veritrain.spec import ExecutionProfile, JobSpec, ModelConfig
from veritrain.state import decode_state, encode_state, state_hash

logger = logging.getLogger(__name__)

__all__ = [
    "OnStep",
    "TrainState",
    "TrainingEngine",
    "apply_profile",
    "build_model",
    "torch_dtype",
]

_OPTIM_PREFIX = "optim."
_ADAMW_KEYS = ("exp_avg", "exp_avg_sq", "step")


def torch_dtype(name: str) -> torch.dtype:
    """Map a profile dtype name (`"float32"`, `"float64"`) to the torch dtype."""
    try:
        return {"float32": torch.float32, "float64": torch.float64}[name]
    except KeyError as exc:
        raise SpecError(f"unsupported dtype {name!r}") from exc


def apply_profile(profile: ExecutionProfile) -> torch.device:
    """Configure this process for bit-exact training under `profile`.

    Sets `torch.set_num_threads(profile.threads)`, `torch.use_deterministic_algorithms`, and
    for CUDA also `CUBLAS_WORKSPACE_CONFIG=:4096:8` (if unset), cuDNN deterministic mode and
    TF32 off. Process-global: every engine in a process should share one profile.

    Args:
        profile: the job's execution profile.

    Returns:
        The torch device to train on.

    Raises:
        ProfileUnavailable: the profile asks for CUDA and none is available (there is no
            fallback: another device would give other state hashes).
    """
    if profile.device == "cuda":
        if not torch.cuda.is_available():
            raise ProfileUnavailable("the execution profile needs CUDA but no GPU is available")
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.backends.cudnn.deterministic = profile.deterministic
        torch.backends.cudnn.benchmark = False
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        device = torch.device("cuda")
    else:
        device = torch.device("cpu")
    if torch.get_num_threads() != profile.threads:
        torch.set_num_threads(profile.threads)
    torch.use_deterministic_algorithms(profile.deterministic)
    return device


def build_model(cfg: ModelConfig) -> nn.Sequential:
    """MLP `in -> hidden[0] -> ... -> out` with ReLU between layers, float32 on CPU.

    Parameter names (`named_parameters()`): `"0.weight"`, `"0.bias"`, `"2.weight"`, ...
    Initialisation is torch's default `nn.Linear` init, drawn from the global CPU RNG; call
    `torch.manual_seed(seed)` first for the protocol's initial state.

    Args:
        cfg: the spec's model config.

    Returns:
        The `nn.Sequential`; input (B, in_features) -> logits (B, out_features).
    """
    if cfg.arch != "mlp":
        raise SpecError(f"unsupported architecture {cfg.arch!r}")
    widths = [cfg.in_features, *cfg.hidden, cfg.out_features]
    layers: list[nn.Module] = []
    for i, (w_in, w_out) in enumerate(zip(widths[:-1], widths[1:], strict=True)):
        if i > 0:
            layers.append(nn.ReLU())
        layers.append(nn.Linear(w_in, w_out, dtype=torch.float32, device="cpu"))
    return nn.Sequential(*layers)


@dataclass
class TrainState:
    """Mutable training state: state t is the weights after t optimizer steps.

    Attributes:
        model: the MLP on the profile's device and dtype.
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
        dataset: pre-loaded data (e.g. in tests); loaded from `spec.dataset` when None.
        data_path: local path overriding `spec.dataset.path` for tensor-file datasets.
        check_root: verify the data's root against `spec.dataset.root` (default True).

    Raises:
        DatasetRootMismatch: the data does not hash to the spec's root.
        DatasetError: the data does not fit the model or the batch size.
        ProfileUnavailable: see `apply_profile`.
    """

    def __init__(
        self,
        spec: JobSpec,
        *,
        dataset: Dataset | None = None,
        data_path: str | Path | None = None,
        check_root: bool = True,
    ) -> None:
        self.spec = spec
        self.device = apply_profile(spec.profile)
        self.dtype = torch_dtype(spec.profile.dtype)
        self.dataset = dataset if dataset is not None else load_dataset(spec.dataset, data_path)
        if check_root:
            actual = dataset_root_hex(self.dataset)
            if actual != spec.dataset.root:
                raise DatasetRootMismatch(spec.dataset.root, actual)
        ds = self.dataset
        if ds.num_features != spec.model.in_features:
            raise DatasetError(
                f"data has {ds.num_features} features, model expects {spec.model.in_features}"
            )
        for name, y in (("y_train", ds.y_train), ("y_test", ds.y_test)):
            if y.size and int(y.max()) >= spec.model.out_features:
                raise DatasetError(f"{name} has label {int(y.max())} >= {spec.model.out_features}")
        if spec.batch_size > ds.n_train:
            raise DatasetError(f"batch size {spec.batch_size} > {ds.n_train} training examples")
        self._x_train = torch.from_numpy(ds.x_train).to(self.device, self.dtype)  # (n, d)
        self._y_train = torch.from_numpy(ds.y_train).to(self.device)  # (n,) int64
        self._x_test = torch.from_numpy(ds.x_test).to(self.device, self.dtype)
        self._y_test = torch.from_numpy(ds.y_test).to(self.device)

    # --- construction ----------------------------------------------------------------------
    def _new_optimizer(self, model: nn.Module) -> torch.optim.Optimizer:
        o = self.spec.optimizer
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
        return build_model(self.spec.model).to(device=self.device, dtype=self.dtype)

    def init_state(self) -> TrainState:
        """State 0: `torch.manual_seed(spec.seed)`, then build the model.

        The global CPU RNG is restored afterwards, so callers' randomness is unaffected.
        """
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.spec.seed)
            model = self._new_model()
        return TrainState(model=model, optimizer=self._new_optimizer(model), step=0)

    # --- training --------------------------------------------------------------------------
    def train_step(self, state: TrainState) -> float:
        """One AdamW step on batch `batch_indices(seed, state.step, ...)`, in place.

        Args:
            state: state t; becomes state t + 1.

        Returns:
            The batch's mean cross-entropy loss before the update (nats).
        """
        idx = batch_indices(self.spec.seed, state.step, self.dataset.n_train, self.spec.batch_size)
        idx_t = torch.from_numpy(idx).to(self.device)
        x = self._x_train.index_select(0, idx_t)  # (B, d)
        y = self._y_train.index_select(0, idx_t)  # (B,)
        state.model.train()
        logits = state.model(x)  # (B, C)
        loss = F.cross_entropy(logits, y)
        state.optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        state.optimizer.step()
        state.step += 1
        return float(loss.detach())

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
        """Test-set accuracy of `state.model`, in [0, 1]."""
        state.model.eval()
        pred = state.model(self._x_test).argmax(dim=1)  # (n_test,)
        return float((pred == self._y_test).to(torch.float64).mean())

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

    def state_hash(self, state: TrainState) -> bytes:
        """sha256 of `state_bytes(state)` (32 bytes)."""
        return state_hash(self.state_bytes(state))

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
