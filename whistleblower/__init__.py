"""Whistleblower node: re-checks approvals by replay and challenges the wrong ones.

`WhistleblowerNode` is imported lazily (PEP 562), so `veritrain --help` does not load
torch/web3.

Run: ``veritrain whistleblower run --help``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["WhistleblowerNode"]


def __getattr__(name: str) -> Any:
    if name == "WhistleblowerNode":
        from whistleblower.node import WhistleblowerNode

        return WhistleblowerNode
    raise AttributeError(f"module 'whistleblower' has no attribute {name!r}")
