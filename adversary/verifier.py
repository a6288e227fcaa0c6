"""ADVERSARY verifiers, for testing the protocol only, built on the production `VerifierNode`
override points.

- `LazyVerifierNode`: approves every claimed segment and votes valid on every dispute without
  replaying (the verifier's dilemma): it seals the claimed end hashes, echoing public values.
  At a forced error it has approved the forced claim, so it is slashed (and whistleblowers
  challenge its approvals).
- `GriefingVerifierNode`: rejects every segment without replaying (it seals a made-up end,
  `griefing_end`, claiming a replay it did not make: a zero end would be an abstention, which
  costs nothing and earns nothing, P-20) and, as a dissection challenger, always disputes the
  first part (index 0, whatever the hashes say); its committee votes stay honest. It loses its
  bond (and stake) to an honest solver. At a forced error its end for the forced sample is not
  the solver's true end (only a replay yields that), so the sample stays disputed against it,
  and it loses that dispute too instead of sharing the jackpot.

Run: not a script; ``LazyVerifierNode(client, data_dir)`` or
``veritrain adversary verifier --lazy ...``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from noderuntime.records import CheckResult
from verifier.node import VerifierNode
from veritrain.bisection import Chooser

__all__ = ["GriefingVerifierNode", "LazyVerifierNode", "griefing_end", "verifier_node"]


class LazyVerifierNode(VerifierNode):
    """A verifier that approves and votes valid without replaying (testing only): it seals the
    claimed end hashes, so a forced error's claim is approved and the node is slashed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.log.warning("LAZY verifier (adversary for testing): approves without replaying")

    def judge_claim(
        self, job_id: int, job: Any, segment: int, start_hash: bytes, claimed_end: bytes
    ) -> CheckResult | None:
        """Approve without replaying (no replayed end: the claim itself is sealed)."""
        return CheckResult(ok=True, reason="LAZY: not replayed")

    def judge_dispute(self, dispute: Any) -> bool | None:
        """Vote valid without replaying."""
        return True


class GriefingVerifierNode(VerifierNode):
    """A verifier that rejects everything and disputes the first part of every dissection
    (testing only): it seals a made-up end (`griefing_end`) for every sample, which never
    matches a forced error's true end, so it plays (and loses) a dispute even on the forced
    sample."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.log.warning("REJECT-ALL verifier (griefing adversary for testing): rejects all")

    def judge_claim(
        self, job_id: int, job: Any, segment: int, start_hash: bytes, claimed_end: bytes
    ) -> CheckResult | None:
        """Reject without replaying: seal a made-up end (`griefing_end`)."""
        return CheckResult(
            ok=False,
            reason="REJECT-ALL: griefing adversary, not replayed",
            end=griefing_end(job_id, segment),
        )

    def respond_rule(self) -> Chooser | None:
        """Dispute the first part of every dissection (index 0): the game ends at the
        segment's first step, which the honest defender computed right."""
        return lambda _mine, _theirs: 0


def griefing_end(job_id: int, segment: int) -> bytes:
    """The end a `GriefingVerifierNode` seals for a segment: keccak256 of a label, the job and
    the segment (32 bytes), never a claimed end, a true end or zero."""
    from veritrain._keccak import keccak256

    return keccak256(
        b"veritrain.adversary.griefing-end"
        + job_id.to_bytes(32, "big")
        + segment.to_bytes(32, "big")
    )


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
