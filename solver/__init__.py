"""Solver node: claims jobs, trains them deterministically, serves checkpoints, commits roots.

Public names are imported lazily (PEP 562), so `veritrain --help` does not load torch/web3.

Run: ``veritrain solver run --help``.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "CheckpointCatalog",
    "JobCheckpoints",
    "Phase",
    "ServerThread",
    "SolverNode",
    "create_app",
    "train_job",
]

_WHERE = {
    "train_job": "solver.trainer",
    "CheckpointCatalog": "solver.server",
    "JobCheckpoints": "solver.server",
    "ServerThread": "solver.server",
    "create_app": "solver.server",
    "Phase": "solver.node",
    "SolverNode": "solver.node",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'solver' has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)
