"""ADVERSARY verifiers, for testing the protocol only, built on the production `VerifierNode`
override points.

- `LazyVerifierNode`: approves every claimed segment and votes valid on every dispute without
  replaying (the verifier's dilemma; caught by forced errors and whistleblowers).
- `GriefingVerifierNode`: rejects every segment without replaying and, as a bisection
  challenger, disagrees with every midpoint; its committee votes stay honest. It loses its
  bond (and stake) to an honest solver.

Run: not a script; ``LazyVerifierNode(client, data_dir)`` or
``veritrain adversary verifier --lazy ...``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from noderuntime.records import CheckResult
from verifier.node import VerifierNode

__all__ = ["GriefingVerifierNode", "LazyVerifierNode", "verifier_node"]


class LazyVerifierNode(VerifierNode):
    """A verifier that approves and votes valid without replaying (testing only)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.log.warning("LAZY verifier (adversary for testing): approves without replaying")

    def judge_claim(
        self, job_id: int, job: Any, segment: int, start_hash: bytes, claimed_end: bytes
    ) -> CheckResult | None:
        """Approve without replaying."""
        return CheckResult(ok=True, reason="LAZY: not replayed")

    def judge_dispute(self, dispute: Any) -> bool | None:
        """Vote valid without replaying."""
        return True


class GriefingVerifierNode(VerifierNode):
    """A verifier that rejects everything and disagrees with every bisection (testing only)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.log.warning("REJECT-ALL verifier (griefing adversary for testing): rejects all")

    def judge_claim(
        self, job_id: int, job: Any, segment: int, start_hash: bytes, claimed_end: bytes
    ) -> CheckResult | None:
        """Reject without replaying."""
        return CheckResult(ok=False, reason="REJECT-ALL: griefing adversary, not replayed")

    def respond_rule(self) -> Callable[[bytes, bytes], bool] | None:
        """Disagree with every midpoint."""
        return lambda _mine, _theirs: False


def verifier_node(
    client: Any, data_dir: Path, *, lazy: bool = False, reject_all: bool = False, **kwargs: Any
) -> VerifierNode:
    """A verifier node: honest, lazy or griefing.

    Args:
        client: the chain client.
        data_dir: the node's directory.
        lazy: a `LazyVerifierNode`.
        reject_all: a `GriefingVerifierNode`.
        **kwargs: `VerifierNode` keyword arguments.

    Raises:
        ValueError: both ``lazy`` and ``reject_all``.
    """
    if lazy and reject_all:
        raise ValueError("a verifier is lazy or griefing, not both")
    if lazy:
        return LazyVerifierNode(client, data_dir, **kwargs)
    if reject_all:
        return GriefingVerifierNode(client, data_dir, **kwargs)
    return VerifierNode(client, data_dir, **kwargs)
