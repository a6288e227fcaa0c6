"""Verifier node: replays sampled segments, submits verdicts, votes on arbitration committees.

`VerifierNode` is imported lazily (PEP 562), so `veritrain --help` does not load torch/web3.

Run: ``veritrain verifier run --help``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["VerifierNode"]


def __getattr__(name: str) -> Any:
    if name == "VerifierNode":
        from verifier.node import VerifierNode

        return VerifierNode
    raise AttributeError(f"module 'verifier' has no attribute {name!r}")
