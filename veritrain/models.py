"""The models a job can train, written once for both arithmetics (operators passed in).

- `MLP`: `in -> hidden... -> out`, ReLU between layers (an `nn.Sequential` of `nn.Linear` and
  `nn.ReLU`, so parameters are named `"0.weight"`, `"0.bias"`, `"2.weight"`, ...).
- `GPT`: a character-level transformer in nanoGPT's style (Karpathy, github karpathy/nanoGPT,
  model.py): token + position embeddings, `n_layer` pre-norm blocks (LayerNorm -> causal
  multi-head self-attention -> residual; LayerNorm -> MLP 4x with GELU(tanh) -> residual), a
  final LayerNorm and a linear head (not tied to the token embedding). No dropout.
- `Llama` (in `veritrain.llama`): RMSNorm, RoPE, grouped-query attention, SwiGLU.

`Ops` holds the operators: `NATIVE_OPS` are torch's (`F.linear`, `F.cross_entropy`, ...);
`repro_ops()` are `veritrain.repro`'s, whose results are the same on every machine.

Initial weights: `portable_init_` draws them from numpy's PCG64 as 53-bit integers turned into
uniform doubles by exact arithmetic, so state 0 is bit-exact on every machine (torch's CPU
`normal_`/`uniform_` kernels are compiled per SIMD level). The native MLP keeps torch's own
`nn.Linear` init under `torch.manual_seed(seed)` so native state hashes stay as they were.

Run: not a script; `from veritrain.models import GPT, NATIVE_OPS`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from veritrain.errors import SpecError
from veritrain.repro.sqrt import sqrt_scalar
from veritrain.spec import NATIVE_ARITH, REPRO_ARITH, GPTConfig, ModelConfig, check_arith

__all__ = [
    "GPT",
    "MLP",
    "NATIVE_OPS",
    "Ops",
    "ops_for",
    "portable_init_",
    "repro_ops",
    "uniform_bound",
]

_INIT_STD = 0.02
"""nanoGPT's init standard deviation for linear and embedding weights."""
_INIT_TAG = 0x696E6974  # "init": separates the init stream from batch streams of the same seed


@dataclass(frozen=True)
class Ops:
    """The operators a model's forward pass and loss use (all float32 tensors).

    Attributes:
        name: `"native"` or `veritrain.spec.REPRO_ARITH` (`"repro2"`).
        linear: `(x (..., in), weight (out, in), bias (out,) | None) -> (..., out)`.
        matmul: `(a (..., m, k), b (..., k, n)) -> (..., m, n)`.
        relu: elementwise.
        gelu: elementwise, the tanh approximation.
        softmax: `(x, dim) -> x`'s shape`; entries of -inf get probability 0.
        layer_norm: `(x (..., D), weight (D,), bias (D,), eps) -> (..., D)` over the last dim.
        embedding: `(ids (...) int64, table (V, D)) -> (..., D)`.
        cross_entropy: `(logits (B, C), target (B,) int64) -> ()` mean, nats.
        rms_norm: `(x (..., D), weight (D,), eps) -> (..., D)` over the last dim.
        silu: elementwise `x * sigmoid(x)`.
        rope: `(x (B, H, T, hd), cos (T, hd/2), sin (T, hd/2)) -> x's shape`, rotating
            interleaved pairs (`veritrain.repro.rotary`; the tables from `rope_tables`).
    """

    name: str
    linear: Callable[[Tensor, Tensor, Tensor | None], Tensor]
    matmul: Callable[[Tensor, Tensor], Tensor]
    relu: Callable[[Tensor], Tensor]
    gelu: Callable[[Tensor], Tensor]
    softmax: Callable[[Tensor, int], Tensor]
    layer_norm: Callable[[Tensor, Tensor, Tensor, float], Tensor]
    embedding: Callable[[Tensor, Tensor], Tensor]
    cross_entropy: Callable[[Tensor, Tensor], Tensor]
    rms_norm: Callable[[Tensor, Tensor, float], Tensor]
    silu: Callable[[Tensor], Tensor]
    rope: Callable[[Tensor, Tensor, Tensor], Tensor]


def _native_rms_norm(x: Tensor, weight: Tensor, eps: float) -> Tensor:
    """Llama's reference RMSNorm in float32: `x * rsqrt(mean(x^2) + eps) * weight`."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def _native_rope(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """RoPE on interleaved pairs in float32 (as `veritrain.repro.rope`, torch's kernels)."""
    pairs = x.reshape(*x.shape[:-1], x.shape[-1] // 2, 2)
    x0, x1 = pairs[..., 0], pairs[..., 1]
    return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).reshape(x.shape)


def _native_layer_norm(x: Tensor, weight: Tensor, bias: Tensor, eps: float) -> Tensor:
    return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)


NATIVE_OPS = Ops(
    name="native",
    linear=F.linear,
    matmul=torch.matmul,
    relu=F.relu,
    gelu=lambda x: F.gelu(x, approximate="tanh"),
    softmax=lambda x, dim: F.softmax(x, dim=dim),
    layer_norm=_native_layer_norm,
    embedding=lambda ids, table: F.embedding(ids, table),
    cross_entropy=lambda logits, target: F.cross_entropy(logits, target),
    rms_norm=_native_rms_norm,
    silu=F.silu,
    rope=_native_rope,
)
"""torch's own kernels (results depend on threads, SIMD level and device)."""


@lru_cache(maxsize=1)
def repro_ops() -> Ops:
    """`veritrain.repro`'s operators (bit-identical results on every machine)."""
    from veritrain import repro

    return Ops(
        name=REPRO_ARITH,
        linear=repro.linear,
        matmul=repro.matmul,
        relu=repro.relu,
        gelu=repro.gelu,
        softmax=lambda x, dim: repro.softmax(x, dim=dim),
        layer_norm=repro.layer_norm,
        embedding=repro.embedding,
        cross_entropy=repro.cross_entropy,
        rms_norm=repro.rms_norm,
        silu=repro.silu,
        rope=repro.rope,
    )


def ops_for(arith: str) -> Ops:
    """The operators of an arithmetic name (`"native"` or `REPRO_ARITH`).

    Raises:
        RetiredArithmetic: a retired name (`veritrain.spec.RETIRED_ARITHS`).
        SpecError: an unknown name.
    """
    if check_arith(arith) == NATIVE_ARITH:
        return NATIVE_OPS
    return repro_ops()


# --- initialisation --------------------------------------------------------------------------
def portable_init_(seed: int, tensors: Iterable[tuple[Tensor, float]]) -> None:
    """Fill CPU float32 tensors, in order, with uniforms in [-bound, bound], bit-exact anywhere.

    One stream `Generator(PCG64(SeedSequence([seed, 0x696E6974])))` serves all tensors in
    order. Each value is `u = (r >> 11) * 2^-53` from a 64-bit draw r (exact in float64),
    then `(2u - 1) * bound` in float64 (two correctly rounded IEEE operations), then rounded to
    float32. A uniform with this bound has standard deviation `bound / sqrt(3)`.

    Args:
        seed: the job's uint64 seed.
        tensors: (tensor, bound) pairs; a bound of 0 leaves the tensor untouched (the stream
            does not advance for it).
    """
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, _INIT_TAG])))
    with torch.no_grad():
        for tensor, bound in tensors:
            if bound == 0.0:
                continue
            raw = rng.integers(0, 2**64, size=tensor.numel(), dtype=np.uint64, endpoint=False)
            u = (raw >> np.uint64(11)).astype(np.float64) * (2.0**-53)
            values = ((u * 2.0 - 1.0) * bound).astype(np.float32).reshape(tuple(tensor.shape))
            tensor.copy_(torch.from_numpy(values))


def uniform_bound(std: float) -> float:
    """The bound of the uniform distribution with standard deviation `std`: `std * sqrt(3)`."""
    return std * sqrt_scalar(3.0)


# --- MLP -------------------------------------------------------------------------------------
class MLP(nn.Sequential):
    """`in -> hidden[0] -> ... -> out` with ReLU between layers, on the given operators.

    Parameter names: `"0.weight"` (hidden[0], in), `"0.bias"`, `"2.weight"`, ... as an
    `nn.Sequential` of `nn.Linear`/`nn.ReLU` (the checkpoint format). Construction draws
    torch's default `nn.Linear` init from the global CPU RNG; `init_portable` redraws it.

    Args:
        cfg: the spec's MLP config.
        ops: the operators (`NATIVE_OPS` computes exactly what `nn.Sequential.forward` does).

    Shapes: input (B, in_features) float32 -> logits (B, out_features).
    """

    def __init__(self, cfg: ModelConfig, ops: Ops = NATIVE_OPS) -> None:
        if cfg.arch != "mlp":
            raise SpecError(f"unsupported architecture {cfg.arch!r}")
        widths = [cfg.in_features, *cfg.hidden, cfg.out_features]
        layers: list[nn.Module] = []
        for i, (w_in, w_out) in enumerate(zip(widths[:-1], widths[1:], strict=True)):
            if i > 0:
                layers.append(nn.ReLU())
            layers.append(nn.Linear(w_in, w_out, dtype=torch.float32, device="cpu"))
        super().__init__(*layers)
        self.ops = ops

    def forward(self, x: Tensor) -> Tensor:
        """(B, in) -> (B, out) logits."""
        for layer in self:
            if isinstance(layer, nn.Linear):
                x = self.ops.linear(x, layer.weight, layer.bias)
            else:
                x = self.ops.relu(x)
        return x

    def init_portable(self, seed: int) -> None:
        """Redraw the weights as `nn.Linear` bounds them (U(+-1/sqrt(fan_in)), weights and
        biases alike), from `portable_init_` (bit-exact on every machine)."""
        pairs: list[tuple[Tensor, float]] = []
        for layer in self:
            if isinstance(layer, nn.Linear):
                bound = 1.0 / sqrt_scalar(layer.in_features)
                pairs += [(layer.weight, bound), (layer.bias, bound)]
        portable_init_(seed, pairs)


# --- GPT -------------------------------------------------------------------------------------
class _Linear(nn.Module):
    """Weight (out, in) and bias (out,) parameters; the operator comes from the caller."""

    def __init__(self, n_in: int, n_out: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(n_out, n_in, dtype=torch.float32))
        self.bias = nn.Parameter(torch.zeros(n_out, dtype=torch.float32))


class _Embedding(nn.Module):
    """A (V, D) table parameter named `weight` (no random draw at construction)."""

    def __init__(self, n: int, d: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(n, d, dtype=torch.float32))


class _LayerNorm(nn.Module):
    """Weight (D,) = 1 and bias (D,) = 0 parameters."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n, dtype=torch.float32))
        self.bias = nn.Parameter(torch.zeros(n, dtype=torch.float32))


class _Attention(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.c_attn = _Linear(cfg.n_embd, 3 * cfg.n_embd)
        self.c_proj = _Linear(cfg.n_embd, cfg.n_embd)


class _MLPBlock(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.c_fc = _Linear(cfg.n_embd, 4 * cfg.n_embd)
        self.c_proj = _Linear(4 * cfg.n_embd, cfg.n_embd)


class _Block(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.ln_1 = _LayerNorm(cfg.n_embd)
        self.attn = _Attention(cfg)
        self.ln_2 = _LayerNorm(cfg.n_embd)
        self.mlp = _MLPBlock(cfg)


class GPT(nn.Module):
    """Character-level transformer (nanoGPT's layout, no dropout, untied head).

    Parameter names (canonical checkpoint order): `wte.weight` (V, D), `wpe.weight` (T, D),
    then per block i `h.{i}.ln_1.{weight,bias}` (D,), `h.{i}.attn.c_attn.{weight (3D, D),
    bias (3D,)}`, `h.{i}.attn.c_proj.{weight (D, D), bias}`, `h.{i}.ln_2.*`,
    `h.{i}.mlp.c_fc.{weight (4D, D), bias}`, `h.{i}.mlp.c_proj.{weight (D, 4D), bias}`, then
    `ln_f.{weight,bias}` and `lm_head.{weight (V, D), bias (V,)}`.

    Args:
        cfg: sizes (layers, heads, width D, context T).
        vocab_size: V, from the data.
        ops: the operators.

    Shapes: ids (B, T') int64 with T' <= T -> logits (B, T', V) float32.
    """

    def __init__(self, cfg: GPTConfig, vocab_size: int, ops: Ops = NATIVE_OPS) -> None:
        super().__init__()
        if vocab_size < 2:
            raise SpecError(f"vocabulary of {vocab_size} tokens is too small")
        self.cfg = cfg
        self.ops = ops
        self.wte = _Embedding(vocab_size, cfg.n_embd)
        self.wpe = _Embedding(cfg.block_size, cfg.n_embd)
        self.h = nn.ModuleList(_Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = _LayerNorm(cfg.n_embd)
        self.lm_head = _Linear(cfg.n_embd, vocab_size)
        causal = torch.ones(cfg.block_size, cfg.block_size, dtype=torch.bool).tril()
        self.register_buffer("_causal", causal, persistent=False)

    def init_portable(self, seed: int) -> None:
        """nanoGPT's init with uniforms of the same standard deviation (`portable_init_`).

        Linear and embedding weights std 0.02 (the residual projections `c_proj` 0.02 /
        sqrt(2 * n_layer)), biases 0, LayerNorm weight 1 and bias 0.
        """
        proj_std = _INIT_STD / sqrt_scalar(2 * self.cfg.n_layer)
        pairs: list[tuple[Tensor, float]] = []
        for name, p in self.named_parameters():
            if p.dim() == 1:
                bound = 0.0  # biases and LayerNorm parameters keep their constant init
            elif name.endswith("c_proj.weight"):
                bound = uniform_bound(proj_std)
            else:
                bound = uniform_bound(_INIT_STD)
            pairs.append((p, bound))
        portable_init_(seed, pairs)

    def _attention(self, attn: _Attention, x: Tensor) -> Tensor:
        ops, n_head = self.ops, self.cfg.n_head
        b, t, d = x.shape
        hd = d // n_head
        qkv = ops.linear(x, attn.c_attn.weight, attn.c_attn.bias)  # (B, T, 3D)
        q, k, v = qkv[..., :d], qkv[..., d : 2 * d], qkv[..., 2 * d :]
        q = q.view(b, t, n_head, hd).transpose(1, 2)  # (B, H, T, hd)
        k = k.view(b, t, n_head, hd).transpose(1, 2)
        v = v.view(b, t, n_head, hd).transpose(1, 2)
        att = ops.matmul(q, k.transpose(-2, -1)) * (1.0 / sqrt_scalar(hd))  # (B, H, T, T)
        mask = self.get_buffer("_causal")[:t, :t]
        # where(mask, att, -inf): the values of masked_fill(~mask, -inf) (and of its backward,
        # the gradient or +0) without building ~mask, in one pass (about 2.5x faster on CPU)
        att = torch.where(mask, att, float("-inf"))
        att = ops.softmax(att, -1)
        y = ops.matmul(att, v)  # (B, H, T, hd)
        y = y.transpose(1, 2).contiguous().view(b, t, d)
        return ops.linear(y, attn.c_proj.weight, attn.c_proj.bias)

    def forward(self, ids: Tensor) -> Tensor:
        """(B, T') int64 token ids -> (B, T', V) float32 logits."""
        ops = self.ops
        b, t = ids.shape
        if t > self.cfg.block_size:
            raise ValueError(f"sequence of {t} tokens exceeds block_size {self.cfg.block_size}")
        # (B, T) positions, not (T,) broadcast over the batch: a broadcast add makes autograd
        # reduce wpe's gradient over B with a native float32 sum, whose order (and so bits)
        # differs between CPU and CUDA; as ids, the embedding's exact backward sums them.
        pos = torch.arange(t, dtype=torch.int64, device=ids.device).expand(b, t)
        x = ops.embedding(ids, self.wte.weight) + ops.embedding(pos, self.wpe.weight)  # (B, T, D)
        eps = 1e-5
        for block in self.h:
            assert isinstance(block, _Block)
            h = ops.layer_norm(x, block.ln_1.weight, block.ln_1.bias, eps)
            x = x + self._attention(block.attn, h)
            h = ops.layer_norm(x, block.ln_2.weight, block.ln_2.bias, eps)
            h = ops.gelu(ops.linear(h, block.mlp.c_fc.weight, block.mlp.c_fc.bias))
            x = x + ops.linear(h, block.mlp.c_proj.weight, block.mlp.c_proj.bias)
        x = ops.layer_norm(x, self.ln_f.weight, self.ln_f.bias, eps)
        return ops.linear(x, self.lm_head.weight, self.lm_head.bias)
