"""Conformance suite: every torch primitive that `veritrain.repro` relies on, checked bit for bit.

The package's guarantee (the same bytes on every IEEE-754 machine) holds only if each torch
primitive it calls is either correctly rounded (`+ - * /`, casts, round half to even), exact
(comparisons, `where`, `frexp`, integer arithmetic, float64 sums of integers below 2**53) or
plumbing that moves bits without rounding (reshape, transpose, copies, fills). A library's
claim is not evidence: x86 `torch.sqrt` turned out to be off by one ulp on some inputs, with
other inputs on AMD than on Intel (see `veritrain/repro/sqrt.py`). So every primitive is
checked here against an independent, correctly rounded reference computed on the CPU:

- IEEE `+ - * /` and casts: numpy's binary32/binary64 operations, themselves cross-checked
  on a subset of about 10^4 inputs against exact rational arithmetic (`fractions.Fraction`)
  rounded to nearest even by integer code here (results named `reference.*`);
- square roots: an exact integer reference from `math.isqrt` on every input, never numpy;
- integer operations: numpy's int64 arithmetic, shifts as exact multiplications and floor
  divisions;
- `torch.randint` on a CPU generator: numpy's MT19937 (the same 32-bit word stream) combined
  as torch documents it in its source (`(w1 << 32 | w2) % range`).

Inputs are drawn on the CPU with numpy (random bit patterns over the whole exponent range,
subnormals, signed zeros, infinities, NaN, exact halfway cases for every rounding, short
mantissas whose products and sums land on ties, integer operands at the 2**53 limit), moved
to the device under test, and the results moved back. Floats are compared by bit pattern
(two NaNs count as equal); plumbing is compared by bit pattern including NaN payloads.

`AUDITED` is the one list of everything the modules of `veritrain/repro/` call (torch
functions, Tensor methods, Python operators), each with the checks that cover it;
`tests/unit/veritrain/test_repro_inventory.py` keeps it equal to what the source really
calls.

The operators of the Llama family (silu, rms_norm, rope and the exact RoPE tables) are
checked against high-precision references by `veritrain.repro.conformance_llama`, and the
two exact matrix-product paths (the float64 GEMM of integer-valued operands, and the int8
slices of `veritrain.repro.gemm_int8`) against numpy's int64 product by
`veritrain.repro.conformance_gemm`; the fused CPU kernels (`veritrain.repro.fused`) against
the eager chains they replace by `veritrain.repro.conformance_fused`; `run_conformance` runs
those modules' checks too.

The suite lives in one module per concept: `conformance_base` (the result record, float
formats, inputs, comparison, the exact rational reference), `conformance_audit` (`AUDITED`),
`conformance_float`, `conformance_int` (integers, indexing, `randint`, plumbing),
`conformance_sqrt`, `conformance_gemm`, `conformance_llama` and `conformance_fused`; this
module runs them all.

Run: not a script; `run_conformance("cpu", n=10**6)` returns one `ConformanceResult` per
primitive and dtype (the `veritrain selftest` command runs it on an operator's machine).
"""

from __future__ import annotations

from collections.abc import Callable

from veritrain.repro.conformance_audit import AUDITED, Coverage
from veritrain.repro.conformance_base import ConformanceResult, _Ctx
from veritrain.repro.conformance_float import FLOAT_CHECKS
from veritrain.repro.conformance_fused import FUSED_CHECKS
from veritrain.repro.conformance_gemm import GEMM_CHECKS
from veritrain.repro.conformance_int import INT_CHECKS, PLUMBING_CHECKS
from veritrain.repro.conformance_llama import LLAMA_CHECKS
from veritrain.repro.conformance_sqrt import SQRT_CHECKS, check_sqrt

__all__ = [
    "AUDITED",
    "ConformanceResult",
    "Coverage",
    "check_names",
    "check_sqrt",
    "run_conformance",
]

_CHECKS: list[Callable[[_Ctx], list[ConformanceResult]]] = [
    *FLOAT_CHECKS,
    *INT_CHECKS,
    *SQRT_CHECKS,
    *PLUMBING_CHECKS,
]


def run_conformance(
    device: str = "cpu", n: int = 1_000_000, seed: int = 0
) -> list[ConformanceResult]:
    """Run every check of this module on `device` and return one result per check and dtype.

    Args:
        device: torch device string ("cpu", "cuda", "cuda:1", ...). Inputs are generated on
            the CPU, moved there, and results moved back; references are always CPU.
        n: values per check and dtype (at least 1; the cross-checks of the references use
            min(n, 10**4), plumbing `item` reads min(n, 2*10**4)). 10**6 takes about half a
            minute on two CPU cores.
        seed: seed of the input generators (the same seed gives the same inputs).

    Returns:
        A list of `ConformanceResult`s; `all(r.ok for r in results)` means conformant.
        Names starting with "reference." check the CPU reference itself (numpy against
        exact rational arithmetic).

    Raises:
        ValueError: `n < 1`.
        RuntimeError: from torch, if `device` is not available.
    """
    if n < 1:
        raise ValueError(f"run_conformance: n must be >= 1, got {n}")
    ctx = _Ctx(device, n, seed)
    results: list[ConformanceResult] = []
    for check in [*_CHECKS, *GEMM_CHECKS, *LLAMA_CHECKS, *FUSED_CHECKS]:
        results.extend(check(ctx))
    return results


def check_names() -> frozenset[str]:
    """Names of all checks `run_conformance` reports (for AUDITED's consistency test)."""
    return frozenset(r.name for r in run_conformance("cpu", n=64, seed=0))
