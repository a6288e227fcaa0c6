"""`AUDITED` (veritrain/repro/conformance_audit.py) lists exactly what veritrain/repro calls.

A static scan (ast) of every module of veritrain/repro collects each `torch.X(...)` and
`torch.nn.functional.X(...)` / `F.X(...)` call, each method call whose name is a
`torch.Tensor` attribute, each Python operator (binary, augmented, unary, comparison,
subscript; annotations excluded); every one must be audited, and every audited entry must
still be used. A dynamic trace (a `TorchFunctionMode`) then runs every public operator
forward and backward, AdamW, clip_grad_norm_ and normal_, and checks that each torch function
and Tensor method that actually runs is audited too (this is what catches an operator such
as `**` reaching a tensor, which the static scan cannot tell from Python arithmetic).
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.overrides import TorchFunctionMode

from veritrain import repro as R
from veritrain.repro.conformance import AUDITED
from veritrain.repro.fused import kernels_mode
from veritrain.repro.gemm import GEMM_ENV

REPRO_DIR = Path(R.__file__).parent
_TENSOR_ATTRS = frozenset(a for a in dir(torch.Tensor) if not a.startswith("__"))
_BINOPS = {
    ast.Add: "operator +",
    ast.Sub: "operator -",
    ast.Mult: "operator *",
    ast.Div: "operator /",
    ast.FloorDiv: "operator //",
    ast.Mod: "operator %",
    ast.Pow: "operator **",
    ast.LShift: "operator <<",
    ast.RShift: "operator >>",
    ast.BitAnd: "operator &",
    ast.BitOr: "operator |",
    ast.BitXor: "operator ^",
    ast.MatMult: "operator @",
}
_UNARY = {ast.USub: "unary -", ast.UAdd: "unary +", ast.Invert: "operator ~", ast.Not: "not"}
_CMP = {
    ast.Eq: "operator ==",
    ast.NotEq: "operator !=",
    ast.Lt: "operator <",
    ast.LtE: "operator <=",
    ast.Gt: "operator >",
    ast.GtE: "operator >=",
}
# the conformance suite itself is not part of the operators' arithmetic, nor is the timing of
# the two GEMM paths (gemm_select.py discards its products)
_SKIP_FILES = {
    "conformance.py",
    "conformance_audit.py",
    "conformance_base.py",
    "conformance_float.py",
    "conformance_fused.py",
    "conformance_gemm.py",
    "conformance_int.py",
    "conformance_llama.py",
    "conformance_sqrt.py",
    "gemm_select.py",
}


@dataclasses.dataclass(frozen=True)
class Use:
    key: str
    where: str  # file:line


def _dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def scan_source(source: str, filename: str = "<string>") -> list[Use]:
    """Every audited-kind use in one module's source (see the module docstring)."""
    tree = ast.parse(source, filename)
    modules: dict[str, str] = {}  # local name -> module path
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                modules[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                if full in ("torch.nn.functional",) or a.name in ("functional",):
                    modules[a.asname or a.name] = "torch.nn.functional"
    # names bound to Python containers are never tensors (e.g. `devices = set()`)
    containers: set[str] = set()
    for node in ast.walk(tree):
        pair: tuple[ast.expr | None, ast.expr] | None = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            pair = (node.value, node.targets[0])
        elif isinstance(node, ast.AnnAssign):
            pair = (node.value, node.target)
        if pair is not None and pair[0] is not None:
            v, t = pair[0], pair[1]
            is_container = isinstance(v, (ast.List, ast.Set, ast.Dict, ast.ListComp)) or (
                isinstance(v, ast.Call)
                and isinstance(v.func, ast.Name)
                and v.func.id in ("set", "list", "dict", "tuple")
            )
            if is_container and isinstance(t, ast.Name):
                containers.add(t.id)
    # annotation subtrees are skipped
    skip: set[int] = set()
    for node in ast.walk(tree):
        anns: list[ast.expr | None] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            anns.append(node.returns)
            args = node.args
            for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                if a is not None:
                    anns.append(a.annotation)
        elif isinstance(node, ast.AnnAssign):
            anns.append(node.annotation)
        for ann in anns:
            if ann is not None:
                skip.update(id(n) for n in ast.walk(ann))

    uses: list[Use] = []

    def add(key: str, node: ast.AST) -> None:
        uses.append(Use(key, f"{filename}:{getattr(node, 'lineno', 0)}"))

    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = _dotted(node.func)
            root = name.split(".")[0] if name else None
            if name and root in modules:
                path = modules[root] + name[len(root) :]
                if path.startswith("torch."):
                    add(path, node)
                continue  # math.isqrt, decimal.Decimal, ...
            recv = node.func.value
            if isinstance(recv, ast.Name) and recv.id in containers | {"float", "int", "str"}:
                continue
            if isinstance(recv, ast.Call) and isinstance(recv.func, ast.Name):
                if recv.func.id == "super":
                    continue
            if node.func.attr in _TENSOR_ATTRS:
                add(f"Tensor.{node.func.attr}", node)
        elif isinstance(node, ast.BinOp):
            add(_BINOPS[type(node.op)], node)
        elif isinstance(node, ast.AugAssign):
            add(_BINOPS[type(node.op)], node)
        elif isinstance(node, ast.UnaryOp):
            add(_UNARY[type(node.op)], node)
        elif isinstance(node, ast.Compare):
            for op in node.ops:
                if type(op) in _CMP:
                    add(_CMP[type(op)], node)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            add("operator []", node)
    return uses


def _repro_files() -> Iterator[Path]:
    for path in sorted(REPRO_DIR.glob("*.py")):
        if path.name not in _SKIP_FILES:
            yield path


def scan_package() -> list[Use]:
    uses: list[Use] = []
    for path in _repro_files():
        uses += scan_source(path.read_text(), f"veritrain/repro/{path.name}")
    return uses


def test_every_call_and_operator_in_repro_is_audited() -> None:
    uses = scan_package()
    assert len(uses) > 300  # the scan sees the package
    missing = [u for u in uses if u.key not in AUDITED]
    assert not missing, "not in conformance.AUDITED (add a check, or stop using it):\n" + "\n".join(
        f"  {u.where}: {u.key}" for u in missing
    )


def test_every_audited_entry_is_still_used() -> None:
    used = {u.key for u in scan_package()}
    stale = sorted(set(AUDITED) - used)
    assert not stale, f"conformance.AUDITED lists what veritrain/repro no longer calls: {stale}"


def test_the_scan_catches_planted_calls() -> None:
    src = (
        "import torch\n"
        "import torch.nn.functional as F\n"
        "def f(x: torch.Tensor | None) -> torch.Tensor:\n"
        "    y = torch.exp(x)\n"
        "    z = x.cumsum(0) ** 2\n"
        "    w = F.softplus(z)\n"
        "    return torch.where(y > 0, y, w)\n"
    )
    uses = scan_source(src, "planted.py")
    keys = {u.key: u.where for u in uses}
    assert keys["torch.exp"] == "planted.py:4"
    assert keys["Tensor.cumsum"] == "planted.py:5"
    assert keys["operator **"] == "planted.py:5"
    assert keys["torch.nn.functional.softplus"] == "planted.py:6"
    assert "operator |" not in keys  # the annotation `torch.Tensor | None` is skipped
    unaudited = sorted({u.key for u in uses} - set(AUDITED))
    assert unaudited == ["Tensor.cumsum", "torch.exp", "torch.nn.functional.softplus"]


# --- the dynamic trace ----------------------------------------------------------------------

_DUNDER = {
    "add": "operator +",
    "radd": "operator +",
    "iadd": "operator +",
    "sub": "operator -",
    "rsub": "operator -",
    "isub": "operator -",
    "mul": "operator *",
    "rmul": "operator *",
    "imul": "operator *",
    "truediv": "operator /",
    "rtruediv": "operator /",
    "itruediv": "operator /",
    "div": "operator /",
    "floordiv": "operator //",
    "rfloordiv": "operator //",
    "mod": "operator %",
    "pow": "operator **",
    "rpow": "operator **",
    "and": "operator &",
    "rand": "operator &",
    "or": "operator |",
    "ror": "operator |",
    "xor": "operator ^",
    "lshift": "operator <<",
    "rshift": "operator >>",
    "neg": "unary -",
    "invert": "operator ~",
    "eq": "operator ==",
    "ne": "operator !=",
    "lt": "operator <",
    "le": "operator <=",
    "gt": "operator >",
    "ge": "operator >=",
    "getitem": "operator []",
    # reading one value into Python (float(t), int(t), bool(t)): as Tensor.item
    "float": "Tensor.item",
    "int": "Tensor.item",
    "bool": "Tensor.item",
    "index": "Tensor.item",
}
# attribute reads and autograd bookkeeping that carry no values
_METADATA = {
    "shape",
    "dtype",
    "device",
    "grad",
    "is_sparse",
    "requires_grad",
    "grad_fn",
    "data",
    "_version",
    "is_leaf",
    "ndim",
    "layout",
    "size",
    "stride",
    "storage_offset",
    "is_contiguous",
    "__len__",
    "__hash__",
    "__format__",
    "__setstate__",
    "__reduce_ex__",
    "__deepcopy__",
    "_is_view",
    "dim",
    "numel",
}


# `a + b`, `x > 0`, `-x` reach __torch_function__ as the methods they alias
_OPERATOR_METHODS = {
    **{m: _DUNDER[m] for m in ("add", "sub", "mul", "div", "neg", "pow")},
    **{m: _DUNDER[m] for m in ("eq", "ne", "lt", "le", "gt", "ge")},
    "remainder": "operator %",
    "floor_divide": "operator //",
}
# created by the exercise below, or torch's own bookkeeping (profiler records, grad mode)
_EXERCISE_EXTRAS = {
    "torch.randn",
    "torch.rand",
    "torch.ones",
    "torch.empty",
    "Tensor.sum",
    "Tensor.mean",
    "Tensor.backward",
}


def _key(func: Any) -> str | None:
    name = getattr(func, "__name__", "")
    owner = getattr(func, "__self__", None)
    if name == "__get__" and owner is not None:  # a property or attribute read
        name = getattr(owner, "__name__", "")
        return None if name in _METADATA else f"Tensor.{name}"
    if name in _METADATA:
        return None
    qual = getattr(func, "__qualname__", "")
    mod = getattr(func, "__module__", "") or ""
    if name.startswith("__") and name.endswith("__"):
        return _DUNDER.get(name.strip("_"), f"Tensor.{name}")
    if qual.startswith(("TensorBase.", "Tensor.", "_TensorBase.")):
        return _OPERATOR_METHODS.get(name, f"Tensor.{name}")
    if mod.startswith("torch.nn.functional"):
        return f"torch.nn.functional.{name}"
    return f"torch.{name}"


class _Recorder(TorchFunctionMode):
    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, str] = {}

    def __torch_function__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        key = _key(func)
        if key is not None:
            self.seen.setdefault(key, repr(func))
        return func(*args, **(kwargs or {}))


def _exercise() -> None:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(6, 8, generator=g, requires_grad=True)
    w = torch.randn(5, 8, generator=g, requires_grad=True)
    b = torch.randn(5, generator=g, requires_grad=True)
    y = R.linear(x, w, b)
    y = R.gelu(y) + R.relu(y) + R.tanh(y) + R.exp(y * 0.1) + R.log(y.abs() + 1.0)
    y = R.softmax(R.matmul(y, torch.randn(5, 5, generator=g)), dim=-1)
    y = R.layer_norm(y, torch.ones(5), torch.zeros(5))
    y = R.rms_norm(R.silu(y), torch.ones(5, requires_grad=True))
    cos, sin = R.rope_tables(3, 4)
    rot = R.rope(torch.randn(2, 3, 4, generator=g, requires_grad=True), cos, sin)
    y = y + R.sum_fixed(rot, 0).reshape(-1)[:5] * 0
    loss = R.cross_entropy(y, torch.tensor([0, 1, -100, 3, 4, 2]))
    emb = R.embedding(torch.tensor([[0, 1, 1], [2, 0, 0]]), torch.randn(3, 4, requires_grad=True))
    loss = loss + R.sum_fixed(emb, 1).sum() * 0 + R.mean_fixed(emb, -1).mean() * 0
    loss = loss + R.sum_fixed(R.matmul(emb, torch.randn(4, 2)), 0).sum() * 0
    loss.backward()
    R.clip_grad_norm_([x, w, b], 0.01)
    opt = R.AdamW([x, w, b], lr=1e-2)
    opt.step()
    opt.step()
    R.normal_(torch.empty(7, 3), std=0.02, generator=g)
    R.sqrt(torch.rand(9, dtype=torch.float64))
    R.sqrt_scalar(2.0)


@pytest.mark.parametrize("backend", ["float64", "int8"])
def test_every_torch_primitive_that_runs_is_audited(
    backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(GEMM_ENV, backend)  # both paths of the exact matrix product
    rec = _Recorder()
    # the autograd engine does not carry the mode into backward passes: enter it there too
    for module in (R.elementwise, R.gemm, R.gemm_int8, R.nn, R.reduce, R.rotary):
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, torch.autograd.Function):
                bw = obj.backward

                def traced(ctx: Any, *grads: Any, _bw: Any = bw) -> Any:
                    with rec:
                        return _bw(ctx, *grads)

                monkeypatch.setattr(obj, "backward", staticmethod(traced))
    with rec:
        with kernels_mode("eager"):  # the eager chains (the fused kernels' reference) ...
            _exercise()
        _exercise()  # ... and what runs around the fused kernels where they are taken
    seen = rec.seen
    # forward and backward passes both traced
    assert {"torch.where", "Tensor.index_put_", "Tensor.scatter_", "torch.cat"} <= set(seen)
    assert ("torch._int_mm" in seen) == (backend == "int8")
    missing = {
        k: v
        for k, v in seen.items()
        if k not in AUDITED and k not in _EXERCISE_EXTRAS and not k.startswith("torch._")
    }
    assert not missing, "ran but not in conformance.AUDITED:\n" + "\n".join(
        f"  {k}  ({v})" for k, v in sorted(missing.items())
    )
    python_only = {k for k, c in AUDITED.items() if c.kind == "python"}
    assert not python_only & set(seen), python_only & set(seen)


@pytest.mark.parametrize("key", sorted(AUDITED))
def test_audited_entries_are_well_formed(key: str) -> None:
    cov = AUDITED[key]
    assert cov.kind in ("value", "plumbing", "python")
    assert cov.note
    assert key.startswith(("torch.", "Tensor.", "operator ", "unary ", "not"))
