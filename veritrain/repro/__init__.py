"""Reproducible ("repro") arithmetic: float32 operators whose results are the same bytes on
every IEEE-754 machine, whatever the thread count, SIMD width, BLAS or device.

Matrix products round their operands to block floating point and accumulate integers exactly
in float64; reductions run in one fixed pairwise order; exp/log/tanh are range reduction plus
polynomials from correctly rounded operations; the optimizer avoids fused and libm operations;
`normal_` initialises weights from integer draws instead of torch's SIMD-dependent `randn`.
Every operator is differentiable through a `torch.autograd.Function` whose backward uses the
same operators. docs/REPRO.md states the guarantee, its limits and the measured cost.

Run: not a script; `from veritrain import repro; y = repro.linear(x, w, b)`.
"""

from __future__ import annotations

from veritrain.repro._common import ReproError
from veritrain.repro.elementwise import exp, gelu, log, relu, silu, tanh
from veritrain.repro.gemm import linear, matmul
from veritrain.repro.init import normal_
from veritrain.repro.nn import cross_entropy, embedding, layer_norm, rms_norm, softmax
from veritrain.repro.optim import AdamW, clip_grad_norm_
from veritrain.repro.reduce import mean_fixed, sum_fixed
from veritrain.repro.rotary import rope, rope_tables
from veritrain.repro.sqrt import sqrt, sqrt_scalar

__all__ = [
    "AdamW",
    "ReproError",
    "clip_grad_norm_",
    "cross_entropy",
    "embedding",
    "exp",
    "gelu",
    "layer_norm",
    "linear",
    "log",
    "matmul",
    "mean_fixed",
    "normal_",
    "relu",
    "rms_norm",
    "rope",
    "rope_tables",
    "silu",
    "softmax",
    "sqrt",
    "sqrt_scalar",
    "sum_fixed",
    "tanh",
]
