"""`AUDITED`: every torch function, Tensor method and Python operator that `veritrain/repro`
calls, with the conformance checks that cover it (`tests/unit/veritrain/test_repro_inventory.py`
keeps it equal to what the source really calls).

Run: not a script; ``from veritrain.repro.conformance_audit import AUDITED``.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

__all__ = ["AUDITED", "Coverage"]


@dataclasses.dataclass(frozen=True)
class Coverage:
    """How one audited primitive is covered.

    Attributes:
        kind: "value" (a rounding or exact-arithmetic check compares results with a
            reference), "plumbing" (moves bits, never rounds; a bit-preservation check), or
            "python" (an operator that `veritrain/repro` applies to Python ints/floats
            only, never to a tensor: Python's own integer or IEEE binary64 arithmetic).
        checks: names of the `ConformanceResult`s that cover it (empty for "python").
        note: what exactly is relied on.
    """

    kind: Literal["value", "plumbing", "python"]
    checks: tuple[str, ...]
    note: str


def _v(note: str, *checks: str) -> Coverage:
    return Coverage("value", checks, note)


def _p(note: str, *checks: str) -> Coverage:
    return Coverage("plumbing", checks, note)


def _py(note: str) -> Coverage:
    return Coverage("python", (), note)


_ARITH_NOTE = "IEEE binary32/binary64, round to nearest even, subnormals kept"

# Every torch function ("torch.X", "torch.nn.functional.X"), Tensor method ("Tensor.X") and
# Python operator ("operator +", "unary -", "operator []" for indexing) that a module of
# veritrain/repro calls, with the checks that cover it.
AUDITED: dict[str, Coverage] = {
    # torch functions
    "torch.abs": _v("clears the sign bit", "abs"),
    "torch.cat": _p("concatenation of 1-d float32 tensors", "plumbing:cat"),
    "torch.clamp": _v("min/max bounds, NaN propagates", "clamp"),
    "torch.div": _v("tensor / tensor, correctly rounded (" + _ARITH_NOTE + ")", "div"),
    "torch.empty": _p(
        "allocation for a fused kernel's output, every entry written",
        "fused.products",
        "fused.rows",
        "fused.activations",
    ),
    "torch.empty_like": _p(
        "allocation for a fused kernel's output, every entry written", "fused.exp64"
    ),
    "torch.enable_grad": _p("autograd mode only, no values", "plumbing:grad_mode"),
    "torch.frexp": _v("exact mantissa in [0.5, 1) and int32 exponent", "frexp"),
    "torch.full_like": _p("fill with a Python float rounded to the dtype", "plumbing:fill"),
    "torch.index_select": _v("gathers rows (float64 table, out=)", "index_select"),
    "torch.isinf": _v("classification", "isinf"),
    "torch.isnan": _v("classification", "isnan"),
    "torch.isneginf": _v("classification", "isneginf"),
    "torch.matmul": _v(
        "float64 GEMM of integer-valued operands, exact below 2**53 (then + 0.0: the sign of a "
        "zero result is not relied on)",
        "matmul",
    ),
    "torch._int_mm": _v(
        "int8 x int8 GEMM with int32 accumulation, exact while every sum stays below 2**31",
        "matmul:int8",
    ),
    "torch.maximum": _v("NaN propagates (sign of a zero result not relied on)", "maximum"),
    "torch.mul": _v(
        "tensor * tensor or Python scalar (out=), correctly rounded", "mul", "mul_scalar"
    ),
    "torch.nn.functional.pad": _p(
        "zero padding of the last dim (floats) and of the last two dims (int64)", "plumbing:pad"
    ),
    "torch.no_grad": _p("autograd mode only, no values", "plumbing:grad_mode"),
    "torch.ones_like": _p("fill with 1", "plumbing:fill"),
    "torch.randint": _v("CPU MT19937 stream, 64-bit draws mod range", "randint"),
    "torch.round": _v("round half to even, exact", "round"),
    "torch.sqrt": _v(
        "a candidate only: repro.sqrt64 corrects any candidate by an exact residual test",
        "repro.sqrt",
    ),
    "torch.tensor": _p("Python floats to float32/float64 (correctly rounded)", "plumbing:tensor"),
    "torch.where": _v("selects bits, NaN payloads kept", "where"),
    "torch.zeros": _p("fill with +0", "plumbing:fill"),
    "torch.zeros_like": _p("fill with +0", "plumbing:fill"),
    # Tensor methods
    "Tensor.abs": _v("clears the sign bit", "abs"),
    "Tensor.add_": _v(
        "in-place +, tensor or Python scalar (rounded to the dtype first), float and int",
        "add",
        "add_scalar",
        "int_add",
    ),
    "Tensor.amax": _v("exact max along a dim or overall, NaN propagates", "amax"),
    "Tensor.amin": _v("exact min along a dim or overall, NaN propagates", "amin"),
    "Tensor.any": _v("bool reduction", "bool_any"),
    "Tensor.bitwise_and": _v("int32/int64 & scalar", "int_bitwise_and"),
    "Tensor.bitwise_left_shift_": _v("int64 << n, no overflow", "int_shift_left"),
    "Tensor.bitwise_right_shift": _v("arithmetic (floor) shift of int32/int64", "int_shift_right"),
    "Tensor.bitwise_right_shift_": _v("arithmetic (floor) shift", "int_shift_right"),
    "Tensor.bool": _v("int32 to bool", "cast"),
    "Tensor.clamp_": _v("int32 clamp(min=0) of bit patterns; float clamp", "clamp"),
    "Tensor.clone": _p("copies bits", "plumbing:clone"),
    "Tensor.contiguous": _p("copies bits into row-major order", "plumbing:contiguous"),
    "Tensor.copy_": _p("copies bits (same dtype)", "plumbing:copy_"),
    "Tensor.detach": _p("the same memory without autograd, for a fused kernel", "fused.adamw"),
    "Tensor.dim": _p("metadata", "plumbing:shape"),
    "Tensor.div_": _v("tensor / tensor, correctly rounded", "div"),
    "Tensor.expand": _p("broadcast view", "plumbing:expand"),
    "Tensor.gather": _v("gathers float64 values along a dim", "gather"),
    "Tensor.index_put_": _v(
        "accumulate=True of float64 integers whose sums stay below 2**53: exact in any order",
        "index_put_accumulate",
    ),
    "Tensor.index_select": _v("gathers rows (float64 table, float32 table)", "index_select"),
    "Tensor.is_contiguous": _p("metadata", "plumbing:shape"),
    "Tensor.item": _p("one value as a Python number, exact", "plumbing:item"),
    "Tensor.masked_fill_": _v("writes the fill value's bits where the mask is set", "masked_fill"),
    "Tensor.mul_": _v("in-place *, tensor or Python scalar", "mul", "mul_scalar"),
    "Tensor.nan_to_num_": _v("NaN to 0, +-inf to +-max", "nan_to_num"),
    "Tensor.neg_": _v("flips the sign bit", "neg"),
    "Tensor.numel": _p("metadata", "plumbing:shape"),
    "Tensor.stride": _p("metadata", "plumbing:shape"),
    "Tensor.numpy": _p(
        "a contiguous CPU tensor's memory as a NumPy array (shared, not copied)",
        "fused.exp64",
        "fused.adamw",
    ),
    "Tensor.reshape": _p("view or copy in row-major order", "plumbing:reshape"),
    "Tensor.round_": _v("round half to even, exact", "round"),
    "Tensor.squeeze": _p("view", "plumbing:squeeze"),
    "Tensor.scatter_": _v("writes a Python float into a float64 tensor", "scatter_"),
    "Tensor.sub_": _v("in-place -, tensor or Python scalar", "sub", "sub_scalar"),
    "Tensor.sum": _v("count of a bool tensor (int64)", "bool_sum"),
    "Tensor.t": _p("transposed view", "plumbing:transpose"),
    "Tensor.to": _v(
        "casts float64<->float32, int32/int64/bool->float64, float64->int64 (integer "
        "values), int32->int64, int64->int8 (values in [-128, 127]), same-dtype identity; "
        "device moves",
        "cast",
        "plumbing:to",
    ),
    "Tensor.transpose": _p("transposed view", "plumbing:transpose"),
    "Tensor.unsqueeze": _p("view", "plumbing:unsqueeze"),
    "Tensor.view": _p(
        "shape views, and dtype views float64<->int64, float32<->int32 (bit reinterpretation)",
        "view_bits",
        "plumbing:view",
    ),
    # Python operators (on tensors, Python ints or Python floats)
    "operator +": _v(
        "tensor + tensor/scalar (float, int); Python floats are binary64",
        "add",
        "add_scalar",
        "int_add",
    ),
    "operator -": _v(
        "tensor - tensor/scalar, scalar - tensor (float, int)",
        "sub",
        "sub_scalar",
        "rsub_scalar",
        "int_sub",
    ),
    "operator *": _v("tensor * tensor/scalar", "mul", "mul_scalar"),
    "operator /": _v("tensor / tensor only (scalars only multiply)", "div"),
    "operator &": _v("int & int scalar, bool & bool", "int_bitwise_and", "bool_and"),
    "operator |": _v("bool | bool", "bool_or"),
    "unary -": _v("flips the sign bit", "neg"),
    "operator ==": _v("IEEE equality (-0 == +0, NaN unequal), int", "eq"),
    "operator !=": _v("IEEE inequality", "ne"),
    "operator <": _v("IEEE order", "lt"),
    "operator <=": _v("IEEE order", "le"),
    "operator >": _v("IEEE order", "gt"),
    "operator >=": _v("IEEE order", "ge"),
    "operator []": _p("basic indexing and slicing", "plumbing:getitem"),
    "operator //": _py("Python ints only (shapes, exponents)"),
    "operator %": _py("Python ints only (dim normalisation)"),
    "operator **": _py("Python floats/ints/Decimals only (constants)"),
    "operator <<": _py("Python ints only"),
    "operator >>": _py("Python ints only"),
    "not": _py("truth values of Python objects (a 0-d bool tensor reads one exact value)"),
}
