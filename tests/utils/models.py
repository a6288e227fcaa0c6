"""Registering a model in the chain tests: with a spec's commitments, or placeholder ones.

Run: not a script; ``from tests.utils.models import register_model``.
"""

from __future__ import annotations

from typing import Any

from eth_utils.crypto import keccak

from veritrain.lineage import ModelCommitments
from veritrain.spec import JobSpec

__all__ = ["register_model"]


def register_model(
    client: Any, model_id: bytes, seed_state: bytes, spec: JobSpec | None = None
) -> Any:
    """Register ``model_id`` from ``client`` rooted at ``seed_state`` (the initHash its first job
    starts from): bound to ``spec``'s architecture, family and compute per step, or, for jobs
    whose spec nobody reads, to placeholder commitments of 1 FLOP per step (shares = steps).

    Returns:
        The transaction receipt.
    """
    if spec is not None:
        commitments = ModelCommitments.of(spec, seed_state)
    else:
        commitments = ModelCommitments(
            architecture=keccak(text="test architecture"),
            family=keccak(text="test family"),
            compute_per_step=1,
            seed_state=seed_state,
        )
    return client.shares.register_model(model_id, **commitments.model_dump())
