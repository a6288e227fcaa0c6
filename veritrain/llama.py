"""A Llama-style transformer, written once for both arithmetics (operators passed in as `Ops`).

The architecture of Meta's Llama (Touvron et al. 2023, "LLaMA: Open and Efficient Foundation
Language Models"; the reference model.py of github meta-llama/llama), sized by a
`veritrain.spec.LlamaConfig`:

- a token embedding (no position embedding: positions enter through RoPE);
- `n_layer` pre-norm blocks: RMSNorm -> causal self-attention with rotary position
  embeddings on queries and keys (Su et al. 2021, interleaved pairs, `veritrain.repro.rotary`)
  and grouped-query attention (Ainslie et al. 2023: `n_kv_head` key/value heads, each shared
  by `n_head / n_kv_head` consecutive query heads, as the reference's `repeat_kv`) ->
  residual; RMSNorm -> SwiGLU MLP `w2(silu(w1 x) * w3 x)` (Shazeer 2020) -> residual;
- a final RMSNorm and a linear head, tied to the token embedding when `tie_embeddings`.

No biases anywhere, no dropout. The cos/sin tables of RoPE are `rope_tables` (every entry the
correctly rounded float32), the same for both arithmetics.

Run: not a script; `from veritrain.llama import Llama`.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from veritrain.errors import SpecError
from veritrain.models import NATIVE_OPS, Ops, portable_init_, uniform_bound
from veritrain.repro.rotary import rope_tables
from veritrain.repro.sqrt import sqrt_scalar
from veritrain.spec import LlamaConfig

__all__ = ["Llama"]

_INIT_STD = 0.02
"""Standard deviation of the linear and embedding weights at init (as GPT's)."""


class _Weight(nn.Module):
    """One bias-free weight parameter named `weight`, zeros until `init_portable`."""

    def __init__(self, *shape: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(*shape, dtype=torch.float32))


class _Norm(nn.Module):
    """RMSNorm's scale, weight (D,) = 1."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n, dtype=torch.float32))


class _Attention(nn.Module):
    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        hd = cfg.head_dim
        self.wq = _Weight(cfg.n_head * hd, cfg.n_embd)
        self.wk = _Weight(cfg.n_kv_head * hd, cfg.n_embd)
        self.wv = _Weight(cfg.n_kv_head * hd, cfg.n_embd)
        self.wo = _Weight(cfg.n_embd, cfg.n_head * hd)


class _FeedForward(nn.Module):
    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.w1 = _Weight(cfg.ffn_hidden, cfg.n_embd)
        self.w2 = _Weight(cfg.n_embd, cfg.ffn_hidden)
        self.w3 = _Weight(cfg.ffn_hidden, cfg.n_embd)


class _Block(nn.Module):
    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.attention_norm = _Norm(cfg.n_embd)
        self.attention = _Attention(cfg)
        self.ffn_norm = _Norm(cfg.n_embd)
        self.feed_forward = _FeedForward(cfg)


class Llama(nn.Module):
    """Llama-style decoder (see the module docstring) on the given operators.

    Parameter names (canonical checkpoint order, Meta's reference names): `tok_embeddings.weight`
    (V, D), then per block i `layers.{i}.attention_norm.weight` (D,),
    `layers.{i}.attention.{wq (H hd, D), wk (Hkv hd, D), wv (Hkv hd, D), wo (D, H hd)}.weight`,
    `layers.{i}.ffn_norm.weight` (D,), `layers.{i}.feed_forward.{w1 (F, D), w2 (D, F),
    w3 (F, D)}.weight`, then `norm.weight` (D,) and, unless the embeddings are tied,
    `output.weight` (V, D).

    Args:
        cfg: sizes (layers, heads, key/value heads, width D, context T, SwiGLU width F, RoPE
            theta, norm epsilon, tying).
        vocab_size: V, from the data.
        ops: the operators.

    Shapes: ids (B, T') int64 with T' <= T -> logits (B, T', V) float32.

    Raises:
        SpecError: a vocabulary of fewer than 2 tokens.
    """

    def __init__(self, cfg: LlamaConfig, vocab_size: int, ops: Ops = NATIVE_OPS) -> None:
        super().__init__()
        if vocab_size < 2:
            raise SpecError(f"vocabulary of {vocab_size} tokens is too small")
        self.cfg = cfg
        self.ops = ops
        self.tok_embeddings = _Weight(vocab_size, cfg.n_embd)
        self.layers = nn.ModuleList(_Block(cfg) for _ in range(cfg.n_layer))
        self.norm = _Norm(cfg.n_embd)
        self.output = None if cfg.tie_embeddings else _Weight(vocab_size, cfg.n_embd)
        causal = torch.ones(cfg.block_size, cfg.block_size, dtype=torch.bool).tril()
        self.register_buffer("_causal", causal, persistent=False)
        cos, sin = rope_tables(cfg.block_size, cfg.head_dim, cfg.rope_theta)  # (T, hd/2) each
        self.register_buffer("_rope_cos", cos, persistent=False)
        self.register_buffer("_rope_sin", sin, persistent=False)

    def init_portable(self, seed: int) -> None:
        """GPT's init (`portable_init_`, uniforms of the same standard deviation).

        Linear and embedding weights std 0.02, the residual projections `wo` and `w2`
        0.02 / sqrt(2 * n_layer); RMSNorm weights stay 1.
        """
        proj_std = _INIT_STD / sqrt_scalar(2 * self.cfg.n_layer)
        pairs: list[tuple[Tensor, float]] = []
        for name, p in self.named_parameters():
            if p.dim() == 1:
                bound = 0.0  # RMSNorm weights keep their constant init
            elif name.endswith(("wo.weight", "w2.weight")):
                bound = uniform_bound(proj_std)
            else:
                bound = uniform_bound(_INIT_STD)
            pairs.append((p, bound))
        portable_init_(seed, pairs)

    def _attention(self, attn: _Attention, x: Tensor) -> Tensor:
        ops, cfg = self.ops, self.cfg
        b, t, _ = x.shape
        h, kv, hd = cfg.n_head, cfg.n_kv_head, cfg.head_dim
        rep = h // kv
        cos = self.get_buffer("_rope_cos")[:t]
        sin = self.get_buffer("_rope_sin")[:t]
        q = ops.linear(x, attn.wq.weight, None).view(b, t, h, hd).transpose(1, 2)  # (B, H, T, hd)
        k = ops.linear(x, attn.wk.weight, None).view(b, t, kv, hd).transpose(1, 2)  # (B, Hkv, ..)
        v = ops.linear(x, attn.wv.weight, None).view(b, t, kv, hd).transpose(1, 2)
        q = ops.rope(q, cos, sin)
        k = ops.rope(k, cos, sin)
        # Grouped-query attention: query head j * rep + r uses key/value head j (the reference's
        # repeat_kv). Folding each group's query heads into the rows, (B, Hkv, rep T, hd), lets
        # one product per kv head serve them all, so the gradient of a shared key/value head is
        # summed inside the matmul's backward (repro: its exact GEMM), never by a broadcast.
        qg = q.reshape(b, kv, rep * t, hd)
        att = ops.matmul(qg, k.transpose(-2, -1)).reshape(b, h, t, t)
        att = att * (1.0 / sqrt_scalar(hd))
        mask = self.get_buffer("_causal")[:t, :t]
        # where(mask, att, -inf): the values of masked_fill(~mask, -inf) (and of its backward,
        # the gradient or +0) without building ~mask, in one pass (about 2.5x faster on CPU)
        att = torch.where(mask, att, float("-inf"))
        att = ops.softmax(att, -1)
        y = ops.matmul(att.reshape(b, kv, rep * t, t), v).reshape(b, h, t, hd)
        y = y.transpose(1, 2).contiguous().view(b, t, h * hd)
        return ops.linear(y, attn.wo.weight, None)

    def forward(self, ids: Tensor) -> Tensor:
        """(B, T') int64 token ids -> (B, T', V) float32 logits."""
        ops, eps = self.ops, self.cfg.norm_eps
        if ids.shape[1] > self.cfg.block_size:
            raise ValueError(
                f"sequence of {ids.shape[1]} tokens exceeds block_size {self.cfg.block_size}"
            )
        x = ops.embedding(ids, self.tok_embeddings.weight)  # (B, T, D)
        for block in self.layers:
            assert isinstance(block, _Block)
            h = ops.rms_norm(x, block.attention_norm.weight, eps)
            x = x + self._attention(block.attention, h)
            h = ops.rms_norm(x, block.ffn_norm.weight, eps)
            ff = block.feed_forward
            gate = ops.silu(ops.linear(h, ff.w1.weight, None))
            x = x + ops.linear(gate * ops.linear(h, ff.w3.weight, None), ff.w2.weight, None)
        x = ops.rms_norm(x, self.norm.weight, eps)
        head = self.tok_embeddings if self.output is None else self.output
        return ops.linear(x, head.weight, None)
