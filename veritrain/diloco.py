"""Training runs: one model trained by many solvers with DiLoCo, every piece a verifiable job.

DiLoCo (Douillard et al., "DiLoCo: Distributed Low-Communication Training of Language Models",
arXiv 2311.08105): in round t each of M workers takes H inner AdamW steps from the global
weights theta_t, the pseudo-gradients Delta_j = theta_t - theta_j are averaged, and an outer
Nesterov SGD (lr 0.7, momentum 0.9) applies the average. This module is the pure core of a
veritrain run: everything a solver, a verifier or a disputer computes, as functions of bytes
whose hashes go on chain. It imports no web3.

One contribution (round t, seat j) is an ordinary repro job (PROTOCOL.md 2):

- its spec is the run's inner spec with `seed = shard_seed(run seed, t, j)`, so its batches
  (`veritrain.data.batch_indices(seed, step)`) depend on (run seed, round, seat) only, and
  `total_steps = H`;
- its initial state is `contribution_init(global_t, private)`: the global parameters plus the
  solver's **private state**, the AdamW moments and step counts of its last accepted
  contribution's final state (none for a new solver, whose AdamW starts fresh), at header step
  0. AdamW's own step tensor carries on, so the bias correction continues across rounds as in
  the paper, while the job's steps count 0..H like every job's;
- its pseudo-gradient `pseudo_gradient(global_t, final)` is a pure function of two committed
  states, so a verifier that checked the final state has checked Delta.

The outer step is `outer_step(outer_state, deltas, cfg)`: a pure elementwise function of the
previous global state, the outer momentum and the accepted Deltas in seat order, built from
single IEEE-754 operations (one rounding each: add, subtract, multiply, divide), so it is the
same bytes on every machine that rounds float32 correctly (every IEEE CPU and CUDA GPU; no
fused multiply-add, no `pow`, no reciprocal). `advance_round` is the rule every party applies
to a round's verified contributions (which count, and the next global state). Being
elementwise, any slice of the outer step is the outer step of the same slice of the inputs
(`outer_step_slice`): `veritrain.outer_tree` commits a state in chunks, so a dispute over a
claimed result can narrow to one chunk, which a referee recomputes.

Run: not a script; `from veritrain.diloco import RunSpec, contribution_init, outer_step`.
"""

from __future__ import annotations

import hashlib
import struct
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from veritrain._keccak import keccak256
from veritrain.errors import CheckpointFormatError, SpecError
from veritrain.spec import (
    CONTRIBUTION_FRAGMENT,
    UINT64_MAX,
    JobSpec,
    canonical_json_bytes,
    contribution_spec_hash,
)
from veritrain.state import decode_state, encode_state, state_hash

if TYPE_CHECKING:
    import torch

__all__ = [
    "DELTA_FORMATS",
    "OuterOptimizerConfig",
    "OuterState",
    "RoundResult",
    "RunSpec",
    "advance_round",
    "communication_bytes",
    "contribution_init",
    "contribution_uri",
    "load_contribution",
    "decode_delta",
    "delta_is_finite",
    "encode_delta",
    "global_params",
    "initial_outer_state",
    "outer_step",
    "outer_step_slice",
    "parse_contribution_uri",
    "private_state",
    "pseudo_gradient",
    "shard_seed",
]

OPTIM_PREFIX = "optim."
"""Name prefix of the optimizer tensors in a checkpoint (`TrainingEngine.state_tensors`)."""

MOMENTUM_PREFIX = "outer.momentum."
"""Name prefix of the outer momentum buffers in an outer-state checkpoint."""

DELTA_FORMATS = ("float32", "int8")
"""How a pseudo-gradient travels: raw float32, or int8 with one float32 scale per tensor."""

_SHARD_DOMAIN = b"veritrain/diloco/shard/v1"
_INT8_MAX = 127


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class OuterOptimizerConfig(_Frozen):
    """The outer optimizer: SGD with Nesterov momentum (`torch.optim.SGD(nesterov=True)`,
    dampening 0, no weight decay), the DiLoCo paper's choice.

    Attributes:
        lr: outer learning rate (0.7 in the paper), > 0.
        momentum: Nesterov momentum mu in [0, 1) (0.9 in the paper).
    """

    name: Literal["nesterov"] = "nesterov"
    lr: float = Field(0.7, gt=0.0, le=10.0)
    momentum: float = Field(0.9, ge=0.0, lt=1.0)


class RunSpec(_Frozen):
    """A training run of one model (DiLoCo rounds). Frozen; `run_hash()` binds every field.

    Attributes:
        inner: the inner job spec: model, data, AdamW, arithmetic, batch size; `total_steps`
            is H, the inner steps per round, `checkpoint_interval` is k inside the round, and
            `seed` is the run seed (it seeds the initial weights and, with the round and the
            seat, every contribution's data shard).
        seats: M, solver seats per round (>= 1).
        rounds: R, the number of rounds, or None for an open-ended run.
        outer: the outer optimizer.
        delta_format: `"float32"` or `"int8"` (`encode_delta`), how pseudo-gradients travel and
            what their commitment covers.

    Raises:
        pydantic.ValidationError: a field out of range (for example `seats = 0`).
    """

    inner: JobSpec
    seats: int = Field(4, ge=1, le=256)
    rounds: int | None = Field(None, ge=1, le=2**24 - 1)
    outer: OuterOptimizerConfig = OuterOptimizerConfig()
    delta_format: Literal["float32", "int8"] = "float32"

    @property
    def inner_steps(self) -> int:
        """H, the inner AdamW steps of every contribution."""
        return self.inner.total_steps

    def canonical_json(self) -> bytes:
        """Canonical JSON bytes (sorted keys, compact, UTF-8); the inner spec appears as its
        own canonical object, so `run_hash` changes with `inner.spec_hash()`."""
        import json

        obj = self.model_dump(mode="json", exclude={"inner"})
        obj["inner"] = json.loads(self.inner.canonical_json())
        return canonical_json_bytes(obj)

    def run_hash(self) -> bytes:
        """keccak256 of `canonical_json()` (32 bytes)."""
        return keccak256(self.canonical_json())

    def to_data_uri(self) -> str:
        """`data:application/json;base64,<canonical JSON>` of the run."""
        import base64

        return "data:application/json;base64," + base64.b64encode(self.canonical_json()).decode()

    def contribution_spec_hash(self, round_index: int, seat: int) -> bytes:
        """The on-chain specHash of contribution (round, seat): `keccak256(abi.encode(
        run_hash(), round, seat))` (`veritrain.spec.contribution_spec_hash`)."""
        return contribution_spec_hash(self.run_hash(), round_index, seat)

    def contribution_spec(self, round_index: int, seat: int) -> JobSpec:
        """The job spec of contribution (round, seat): the inner spec with its shard seed.

        Args:
            round_index: t >= 0.
            seat: j in [0, seats).

        Returns:
            The frozen `JobSpec` (same model, data, optimizer, H and k; `seed` from
            `shard_seed`).

        Raises:
            SpecError: the round is past `rounds` or the seat out of range.
        """
        if self.rounds is not None and round_index >= self.rounds:
            raise SpecError(f"round {round_index} is past the run's {self.rounds} rounds")
        if not 0 <= seat < self.seats:
            raise SpecError(f"seat {seat} out of range [0, {self.seats})")
        return self.inner.model_copy(
            update={"seed": shard_seed(self.inner.seed, round_index, seat)}
        )


def contribution_uri(run_uri: str, round_index: int, seat: int) -> str:
    """The spec URI of contribution (round, seat): `<run URI>#contribution=<round>,<seat>`,
    which `veritrain.spec.load_spec` checks against `contribution_spec_hash` and resolves to
    `RunSpec.contribution_spec(round, seat)`.

    Raises:
        SpecError: a run URI that already has a fragment, or a negative round or seat.
    """
    if "#" in run_uri:
        raise SpecError("a run URI must not have a fragment")
    if round_index < 0 or seat < 0:
        raise SpecError("round and seat must be >= 0")
    return f"{run_uri}#{CONTRIBUTION_FRAGMENT}{round_index},{seat}"


def parse_contribution_uri(uri: str) -> tuple[str, int, int]:
    """Split `<run URI>#contribution=<round>,<seat>` (nothing is fetched or trusted: the
    round and seat are bound only by the job's specHash).

    Returns:
        `(run URI, round, seat)`.

    Raises:
        SpecUnavailable: no contribution fragment, or a malformed one.
    """
    from veritrain.errors import SpecUnavailable

    base, sep, fragment = uri.partition("#")
    if not sep or not fragment.startswith(CONTRIBUTION_FRAGMENT):
        raise SpecUnavailable(f"not a contribution URI: {uri[:60]!r}")
    parts = fragment.removeprefix(CONTRIBUTION_FRAGMENT).split(",")
    if len(parts) != 2 or not all(p.isdigit() and len(p) <= 20 for p in parts):
        raise SpecUnavailable(f"malformed contribution fragment {fragment[:60]!r}")
    return base, int(parts[0]), int(parts[1])


def load_contribution(
    uri: str, expected_hash: bytes, *, timeout: float = 30.0
) -> tuple[RunSpec, int, int]:
    """Resolve a contribution's spec URI, `<run URI>#contribution=<round>,<seat>`, against its
    on-chain specHash; the hash is checked before a byte is parsed.

    Args:
        uri: the job's spec URI (`contribution_uri`).
        expected_hash: the job's 32-byte specHash, `keccak256(abi.encode(runHash, round,
            seat))`.
        timeout: HTTP timeout in seconds.

    Returns:
        `(run, round, seat)`.

    Raises:
        SpecUnavailable: the URI has no contribution fragment, a malformed one, or cannot be
            read.
        SpecHashMismatch: the run's bytes, round and seat do not hash to `expected_hash`.
        SpecError: the bytes hash correctly but are not a valid RunSpec, or the round or seat
            is outside the run.
    """
    from pydantic import ValidationError

    from veritrain.errors import SpecHashMismatch
    from veritrain.spec import read_uri

    base, round_index, seat = parse_contribution_uri(uri)
    raw = read_uri(base, timeout)
    actual = contribution_spec_hash(keccak256(raw), round_index, seat)
    if actual != bytes(expected_hash):
        raise SpecHashMismatch(bytes(expected_hash), actual)
    try:
        run = RunSpec.model_validate_json(raw)
    except ValidationError as exc:
        raise SpecError(f"run bytes match the hash but are not a valid RunSpec: {exc}") from exc
    run.contribution_spec(round_index, seat)  # raises SpecError outside the run
    return run, round_index, seat


def shard_seed(run_seed: int, round_index: int, seat: int) -> int:
    """The data seed of contribution (round, seat): the first 8 bytes (big-endian) of
    `sha256(domain | run_seed | round | seat)` (uint64 each, big-endian).

    Args:
        run_seed: the run's uint64 seed (`RunSpec.inner.seed`).
        round_index: t, uint64.
        seat: j, uint64.

    Returns:
        A uint64 that no other (run seed, round, seat) shares except by a sha256 collision
        of 64-bit prefixes.

    Raises:
        SpecError: an argument outside uint64.
    """
    for name, v in (("run seed", run_seed), ("round", round_index), ("seat", seat)):
        if not 0 <= v <= UINT64_MAX:
            raise SpecError(f"{name} {v} is not a uint64")
    digest = hashlib.sha256(_SHARD_DOMAIN + struct.pack(">QQQ", run_seed, round_index, seat))
    return int.from_bytes(digest.digest()[:8], "big")


# --- states -------------------------------------------------------------------------------


def _params_of(tensors: Mapping[str, torch.Tensor]) -> OrderedDict[str, torch.Tensor]:
    return OrderedDict(
        (n, t)
        for n, t in tensors.items()
        if not n.startswith(OPTIM_PREFIX) and not n.startswith(MOMENTUM_PREFIX)
    )


def global_params(blob: bytes) -> tuple[int, OrderedDict[str, torch.Tensor]]:
    """The parameters of a global (outer) state or of a training checkpoint.

    Args:
        blob: checkpoint bytes (`veritrain.state`), an outer state or a job's checkpoint.

    Returns:
        `(header step, OrderedDict name -> float tensor)` without optimizer or momentum
        tensors, in the checkpoint's order.

    Raises:
        CheckpointFormatError: malformed bytes.
    """
    step, tensors = decode_state(blob)
    return step, _params_of(tensors)


def private_state(final_blob: bytes) -> OrderedDict[str, torch.Tensor]:
    """A solver's private state: the `optim.*` tensors (AdamW `exp_avg`, `exp_avg_sq`,
    `step` per parameter) of its contribution's final checkpoint.

    Raises:
        CheckpointFormatError: malformed bytes.
    """
    _, tensors = decode_state(final_blob)
    return OrderedDict((n, t) for n, t in tensors.items() if n.startswith(OPTIM_PREFIX))


def contribution_init(global_blob: bytes, private_blob: bytes | None) -> bytes:
    """The initial state of a contribution: global parameters + the solver's private state.

    Args:
        global_blob: the round's global state (`OuterState.to_bytes()`; its momentum is not
            part of a contribution).
        private_blob: the final checkpoint of the solver's last accepted contribution, whose
            `optim.*` tensors carry on (DiLoCo keeps each worker's AdamW state), or None for a
            solver's first contribution (AdamW starts fresh).

    Returns:
        Checkpoint bytes at header step 0: the parameters in the global state's order, then
        the private optimizer tensors; its state hash is the job's `initHash`.

    Raises:
        CheckpointFormatError: malformed bytes, or a private state whose parameters do not
            match the global state's names, shapes and dtypes.
    """
    _, params = global_params(global_blob)
    tensors: OrderedDict[str, torch.Tensor] = OrderedDict(params)
    if private_blob is not None:
        _, theirs = decode_state(private_blob)
        mine = _params_of(theirs)
        if [(n, t.shape, t.dtype) for n, t in mine.items()] != [
            (n, t.shape, t.dtype) for n, t in params.items()
        ]:
            raise CheckpointFormatError(
                "the private state's parameters do not match the global state's"
            )
        tensors.update((n, t) for n, t in theirs.items() if n.startswith(OPTIM_PREFIX))
    return encode_state(0, tensors)


def pseudo_gradient(global_blob: bytes, final_blob: bytes) -> OrderedDict[str, torch.Tensor]:
    """Delta = theta_global - theta_final, per parameter (one IEEE subtraction per element).

    Args:
        global_blob: the round's global state.
        final_blob: the contribution's final checkpoint (step H).

    Returns:
        OrderedDict name -> float32 CPU tensor of the parameter's shape.

    Raises:
        CheckpointFormatError: malformed bytes or mismatched parameter sets.
    """
    import torch

    _, g = global_params(global_blob)
    _, f = global_params(final_blob)
    if [(n, t.shape, t.dtype) for n, t in g.items()] != [
        (n, t.shape, t.dtype) for n, t in f.items()
    ]:
        raise CheckpointFormatError("the final state's parameters do not match the global state's")
    return OrderedDict((n, torch.sub(g[n], f[n])) for n in g)


# --- pseudo-gradient encoding ---------------------------------------------------------------


def encode_delta(
    delta: Mapping[str, torch.Tensor], round_index: int, fmt: str = "float32"
) -> bytes:
    """Canonical bytes of a pseudo-gradient; their state hash is the Delta hash a commitment binds.

    `"float32"`: the tensors as they are. `"int8"`: per tensor, `scale = max|Delta| / 127`
    (one float32 division) and `q = round_half_even(Delta / scale)` clamped to [-127, 127]
    (tensor-by-tensor division, correctly rounded on CPU and CUDA), stored as `<name>.q`
    (int8) and `<name>.scale` (float32 scalar); an all-zero tensor has scale 0 and q 0. The
    same Delta gives the same bytes on every IEEE machine.

    Args:
        delta: name -> float32 tensor (`pseudo_gradient`).
        round_index: t, stored as the header step.
        fmt: one of `DELTA_FORMATS`.

    Returns:
        Checkpoint-format bytes ("VTCK\\x01").

    Raises:
        SpecError: unknown format.
        ValueError: a NaN or an infinity in `delta` (casting NaN to int8 is not defined the
            same way everywhere, and no run accepts such a Delta, `delta_is_finite`).
    """
    import torch

    if fmt not in DELTA_FORMATS:
        raise SpecError(f"unknown delta format {fmt!r} (one of {', '.join(DELTA_FORMATS)})")
    if not delta_is_finite(delta):
        raise ValueError("a pseudo-gradient with a NaN or an infinity has no encoding")
    if fmt == "float32":
        return encode_state(round_index, OrderedDict((n, t.float()) for n, t in delta.items()))
    out: OrderedDict[str, torch.Tensor] = OrderedDict()
    for name, t in delta.items():
        t = t.detach().to("cpu", torch.float32)
        amax = t.abs().max() if t.numel() else torch.zeros((), dtype=torch.float32)
        scale = torch.div(amax, torch.tensor(float(_INT8_MAX), dtype=torch.float32))
        if float(scale) == 0.0:
            q = torch.zeros_like(t, dtype=torch.int8)
        else:
            q = torch.round(torch.div(t, scale.expand_as(t))).clamp_(-_INT8_MAX, _INT8_MAX)
            q = q.to(torch.int8)
        out[f"{name}.q"] = q
        out[f"{name}.scale"] = scale.reshape(())
    return encode_state(round_index, out)


def decode_delta(blob: bytes) -> tuple[int, OrderedDict[str, torch.Tensor]]:
    """Decode `encode_delta` bytes (either format) to float32 tensors.

    int8 tensors decode as `q * scale` (int8 -> float32 is exact, then one multiply).

    Returns:
        `(round, OrderedDict name -> float32 CPU tensor)`.

    Raises:
        CheckpointFormatError: malformed bytes, or an int8 tensor without its scale.
    """
    import torch

    step, tensors = decode_state(blob)
    if not any(n.endswith(".q") for n in tensors):
        return step, OrderedDict((n, t.float()) for n, t in tensors.items())
    out: OrderedDict[str, torch.Tensor] = OrderedDict()
    names = list(tensors)
    if len(names) % 2:
        raise CheckpointFormatError("int8 delta: every tensor needs a .q and a .scale")
    for qn, sn in zip(names[::2], names[1::2], strict=True):
        base = qn.removesuffix(".q")
        q, s = tensors[qn], tensors[sn]
        if (
            not qn.endswith(".q")
            or sn != base + ".scale"
            or q.dtype != torch.int8
            or s.dtype != torch.float32
            or s.shape != torch.Size([])
        ):
            raise CheckpointFormatError(f"int8 delta: bad pair {qn!r}, {sn!r}")
        out[base] = torch.mul(q.to(torch.float32), s.expand(q.shape))
    return step, out


# --- the outer step ---------------------------------------------------------------------------


@dataclass
class OuterState:
    """The global state of a run after t outer steps: parameters and Nesterov momentum.

    Attributes:
        step: t, the number of outer steps applied (the round the state starts).
        params: OrderedDict name -> float32 tensor, the model's parameters in
            `named_parameters()` order.
        momentum: OrderedDict name -> float32 tensor of the same shapes (zeros while t == 0).
    """

    step: int
    params: OrderedDict[str, torch.Tensor]
    momentum: OrderedDict[str, torch.Tensor]

    def to_bytes(self) -> bytes:
        """Checkpoint bytes at header step t: the parameters, then `outer.momentum.<name>`."""
        tensors: OrderedDict[str, torch.Tensor] = OrderedDict(self.params)
        tensors.update((MOMENTUM_PREFIX + n, m) for n, m in self.momentum.items())
        return encode_state(self.step, tensors)

    def state_hash(self) -> bytes:
        """State hash of `to_bytes()` (32 bytes): the run's global state hash of round t."""
        return state_hash(self.to_bytes())

    @classmethod
    def from_bytes(cls, blob: bytes) -> OuterState:
        """Decode `to_bytes()` output.

        Raises:
            CheckpointFormatError: malformed bytes, or momentum buffers that do not mirror
                the parameters (names, order, shapes, float32).
        """
        import torch

        step, tensors = decode_state(blob)
        params = _params_of(tensors)
        momentum = OrderedDict(
            (n.removeprefix(MOMENTUM_PREFIX), t)
            for n, t in tensors.items()
            if n.startswith(MOMENTUM_PREFIX)
        )
        if [(n, t.shape) for n, t in params.items()] != [
            (n, t.shape) for n, t in momentum.items()
        ] or any(t.dtype != torch.float32 for t in tensors.values()):
            raise CheckpointFormatError(
                "an outer state holds float32 parameters and one momentum buffer per parameter"
            )
        return cls(step=step, params=params, momentum=momentum)


def initial_outer_state(params: Mapping[str, torch.Tensor]) -> OuterState:
    """Outer state 0: the model's initial parameters (for a new model the inner spec's
    seed-initialised weights, else the model's head) and zero momentum.

    Args:
        params: name -> tensor, e.g. `TrainingEngine.state_tensors(state)`; optimizer tensors
            (`optim.*`) are dropped, since a run's global state holds parameters only.

    Raises:
        CheckpointFormatError: a parameter that is not float32.
    """
    import torch

    ps = OrderedDict((n, t.detach().to("cpu").clone()) for n, t in _params_of(params).items())
    if any(t.dtype != torch.float32 for t in ps.values()):
        raise CheckpointFormatError("outer states hold float32 parameters")
    return OuterState(0, ps, OrderedDict((n, torch.zeros_like(t)) for n, t in ps.items()))


def _outer_elementwise(
    first: bool,
    param: torch.Tensor,
    buf: torch.Tensor,
    deltas: Sequence[torch.Tensor],
    lr: float,
    momentum: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One Nesterov step on matching tensors; every line is one IEEE operation per element."""
    import torch

    g = deltas[0].to(torch.float32).clone()
    for d in deltas[1:]:
        g = torch.add(g, d)  # seat order
    if len(deltas) > 1:
        g = torch.div(g, torch.full_like(g, float(len(deltas))))  # tensor / tensor: no reciprocal
    mu = torch.full_like(g, momentum)
    if first:
        new_buf = g.clone()  # torch.optim.SGD: the first step's buffer is the gradient itself
    else:
        new_buf = torch.add(torch.mul(buf, mu), g)
    step_dir = torch.add(g, torch.mul(new_buf, mu))
    new_param = torch.sub(param, torch.mul(step_dir, torch.full_like(g, lr)))
    return new_param, new_buf


def outer_step(
    state: OuterState, deltas: Sequence[Mapping[str, torch.Tensor]], lr: float, momentum: float
) -> OuterState:
    """Apply the accepted pseudo-gradients of one round: `torch.optim.SGD(lr, momentum,
    nesterov=True)` on the gradient g = mean(Delta), in repro arithmetic.

        g      = (Delta_1 + ... + Delta_n) / n        (float32 adds in seat order, one divide)
        buf    = g                    if t == 0       (torch's first step)
               = buf * mu + g         otherwise
        theta  = theta - (g + buf * mu) * lr

    Each operation is a single correctly rounded float32 operation (no fused multiply-add;
    torch's own SGD may fuse `add(..., alpha=)`, so its results can differ from these in the
    last bit). A round with no accepted contribution leaves the state as it is, with step t+1.

    Args:
        state: outer state t.
        deltas: accepted Deltas in seat order, each name -> float32 tensor shaped like the
            parameter (`pseudo_gradient` or `decode_delta`).
        lr: outer learning rate.
        momentum: mu in [0, 1).

    Returns:
        Outer state t + 1 (new tensors; `state` is not modified), on `state`'s device.

    Raises:
        CheckpointFormatError: a Delta whose names, shapes or dtype (float32) differ from the
            parameters'.
        ValueError: a Delta with a NaN or an infinity (`delta_is_finite`): a run accepts only
            finite pseudo-gradients, so a contribution whose training diverged is excluded
            like a late one rather than poisoning the model.
    """
    import torch

    if not deltas:
        return OuterState(state.step + 1, OrderedDict(state.params), OrderedDict(state.momentum))
    for i, d in enumerate(deltas):
        if [(n, tuple(t.shape), t.dtype) for n, t in d.items()] != [
            (n, tuple(t.shape), torch.float32) for n, t in state.params.items()
        ]:
            raise CheckpointFormatError(
                f"pseudo-gradient {i} does not match the parameters (names, shapes, float32)"
            )
        if not delta_is_finite(d):
            raise ValueError(f"pseudo-gradient {i} has a NaN or an infinity")
    params: OrderedDict[str, torch.Tensor] = OrderedDict()
    bufs: OrderedDict[str, torch.Tensor] = OrderedDict()
    for name, p in state.params.items():
        new_p, new_b = _outer_elementwise(
            state.step == 0,
            p,
            state.momentum[name],
            [d[name].to(p.device) for d in deltas],
            lr,
            momentum,
        )
        params[name], bufs[name] = new_p, new_b
    return OuterState(state.step + 1, params, bufs)


def delta_is_finite(delta: Mapping[str, torch.Tensor]) -> bool:
    """Whether every element of a pseudo-gradient is finite (no NaN, no infinity).

    A run accepts a contribution only if its Delta is finite: honest training can diverge,
    and one non-finite element would make the mean, and so the model, non-finite.
    """
    import torch

    return all(bool(torch.isfinite(t).all()) for t in delta.values())


@dataclass
class RoundResult:
    """What `advance_round` decided about one round.

    Attributes:
        state: the outer state after the round (t + 1).
        seat_finals: each seat's latest accepted final checkpoint (its private state for the
            next round), the round's accepted ones replacing the older ones.
        accepted: seats whose pseudo-gradient entered the outer step, in seat order.
        excluded: seat -> why its finalized contribution was left out.
        delta_hashes: accepted seat -> state hash of its encoded pseudo-gradient.
        delta_bytes: accepted seat -> length of its encoded pseudo-gradient (bytes).
    """

    state: OuterState
    seat_finals: dict[int, bytes]
    accepted: list[int]
    excluded: dict[int, str]
    delta_hashes: dict[int, bytes]
    delta_bytes: dict[int, int]


def advance_round(
    run: RunSpec,
    state: OuterState,
    seat_finals: Mapping[int, bytes],
    contributions: Mapping[int, tuple[bytes, bytes]],
) -> RoundResult:
    """The outer loop of a run: which contributions of a round count, and the new global state.

    The rule every party applies to the same public facts, so each computes the same global
    state: a contribution counts when its job was accepted by verification (the caller passes
    only those) AND its initial state is the one the protocol prescribes,
    `contribution_init(global_t, the seat's latest accepted final)` (a job started from other
    weights or another seat's optimizer state is excluded, however well it trained) AND its
    pseudo-gradient is finite. The counted pseudo-gradients travel in `run.delta_format` and
    enter `outer_step` as decoded, in seat order.

    Args:
        run: the run.
        state: the outer state t.
        seat_finals: seat -> final checkpoint of its latest accepted contribution (absent for a
            seat with none: its AdamW starts fresh).
        contributions: seat -> (the job's 32-byte initHash, its final checkpoint bytes, already
            checked against the job's committed final state hash) for the round's
            verified contributions.

    Returns:
        The `RoundResult`.

    Raises:
        SpecError: a seat outside the run.
    """
    g = state.to_bytes()
    finals = dict(seat_finals)
    accepted: list[int] = []
    excluded: dict[int, str] = {}
    deltas: list[OrderedDict[str, torch.Tensor]] = []
    hashes: dict[int, bytes] = {}
    sizes: dict[int, int] = {}
    for seat in sorted(contributions):
        if not 0 <= seat < run.seats:
            raise SpecError(f"seat {seat} out of range [0, {run.seats})")
        init_hash, final = contributions[seat]
        try:
            expected = state_hash(contribution_init(g, seat_finals.get(seat)))
            if bytes(init_hash) != expected:
                excluded[seat] = (
                    "its initial state is not the round's global state with the seat's own"
                )
                continue
            delta = pseudo_gradient(g, final)
        except CheckpointFormatError as exc:
            excluded[seat] = f"its final state does not fit the model: {exc}"
            continue
        if not delta_is_finite(delta):
            excluded[seat] = "its pseudo-gradient has a NaN or an infinity"
            continue
        blob = encode_delta(delta, state.step, run.delta_format)
        deltas.append(decode_delta(blob)[1])
        accepted.append(seat)
        hashes[seat] = state_hash(blob)
        sizes[seat] = len(blob)
        finals[seat] = final
    new_state = outer_step(state, deltas, run.outer.lr, run.outer.momentum)
    return RoundResult(new_state, finals, accepted, excluded, hashes, sizes)


def outer_step_slice(
    first: bool,
    params: torch.Tensor,
    momentum: torch.Tensor,
    deltas: Sequence[torch.Tensor],
    lr: float,
    momentum_coef: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The outer step on flat slices (what a referee recomputes for one disputed chunk).

    Because every operation is elementwise, the outer step of a slice is the slice of the
    outer step, bit for bit.

    Args:
        first: whether the previous state's step t is 0.
        params: (n,) float32 slice of the previous state's flat parameters.
        momentum: (n,) float32 slice of its flat momentum.
        deltas: the accepted Deltas' (n,) float32 slices, in seat order (at least one).
        lr: outer learning rate.
        momentum_coef: mu.

    Returns:
        `(params', momentum')`, each (n,) float32.

    Raises:
        ValueError: no Delta, or slices of different lengths.
    """
    if not deltas:
        raise ValueError("outer_step_slice needs at least one pseudo-gradient")
    if any(d.shape != params.shape for d in deltas) or momentum.shape != params.shape:
        raise ValueError("outer_step_slice: slices differ in length")
    return _outer_elementwise(first, params, momentum, deltas, lr, momentum_coef)


def communication_bytes(num_params: int, num_tensors: int, fmt: str) -> int:
    """Bytes one solver uploads per round: its encoded Delta's tensor data (float32: 4 per
    parameter; int8: 1 per parameter + a 4-byte scale per tensor), headers excluded.

    Raises:
        SpecError: unknown format.
    """
    if fmt == "float32":
        return 4 * num_params
    if fmt == "int8":
        return num_params + 4 * num_tensors
    raise SpecError(f"unknown delta format {fmt!r}")
