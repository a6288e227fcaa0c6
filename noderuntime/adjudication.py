"""Adjudication strategies: how a node takes part in a disputed job, per adjudicator.

The deployment's adjudicator (`ProtocolParams.adjudicator`, read once through
``client.adjudicator.name``) picks one strategy object per node; nodes call it instead of comparing
adjudicator names. Each strategy answers the same questions:

- `defend`: the solver's duties on its disputed job (committee: draw the committee and resolve
  when due; bisection: play the defender's moves).
- `challenge`: a challenger's duties (committee: none, the dispute runs by itself; bisection:
  play the challenger's moves when this node opened the dispute).
- `step_claim`: the one-step claim a committee member judges instead of a whole segment
  (committee: none; bisection: the game's step dispute).

Credits are no adjudicator's business: JobManager payouts, committee rewards and the game's won
move bonds all land in the Escrow, which a node claims once (`NodeBase.claim_credit`).

A new mechanism subclasses `Adjudication`, sets `name` and registers itself with
`register_adjudication`; `adjudication_for(name)` returns an instance.

Run: not a script; ``adjudication_for(client.adjudicator.name).defend(node, job, play)``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

if TYPE_CHECKING:
    from chain.types import JobView, StepClaimView
    from noderuntime.node import NodeBase
    from veritrain.bisection import Chooser

__all__ = [
    "Adjudication",
    "BisectionAdjudication",
    "CommitteeAdjudication",
    "UnknownAdjudicator",
    "adjudication_for",
    "register_adjudication",
    "registered_adjudications",
]


class UnknownAdjudicator(ValueError):
    """No strategy is registered under the deployment's adjudicator name."""


class Adjudication(ABC):
    """How a node plays a disputed job under one adjudicator (one instance per node)."""

    name: ClassVar[str]
    """The `ProtocolParams.adjudicator` value this strategy serves."""

    @abstractmethod
    def defend(self, node: NodeBase, job: JobView, play: Callable[[], None]) -> None:
        """The solver's duties on its disputed job, once per round.

        Args:
            node: the solver node (its duties anyone may perform are used).
            job: the job view (Disputed; ``job.dispute_id`` > 0).
            play: the solver's own game moves (called by strategies that have a game).
        """

    @abstractmethod
    def challenge(
        self,
        node: NodeBase,
        job: JobView,
        records: Any,
        *,
        choose: Chooser | None = None,
    ) -> None:
        """A verifier's or whistleblower's duties on a disputed job it may have opened.

        Args:
            node: the checking node.
            job: the job view (Disputed).
            records: the node's persisted state, where moves are recorded.
            choose: override of the honest response rule ``(mine, theirs) -> index`` (test
                adversaries only; `veritrain.bisection.Chooser`).
        """

    @abstractmethod
    def step_claim(self, node: NodeBase, dispute_id: int) -> StepClaimView | None:
        """The one-step claim of a committee dispute, or None for a whole-segment dispute.

        Args:
            node: the committee member.
            dispute_id: the committee's dispute.
        """


_REGISTRY: dict[str, type[Adjudication]] = {}

A = TypeVar("A", bound=type[Adjudication])


def register_adjudication(cls: A) -> A:
    """Class decorator: make ``cls`` the strategy of adjudicator ``cls.name``.

    Args:
        cls: an `Adjudication` subclass with a ``name``.

    Returns:
        ``cls`` itself.
    """
    _REGISTRY[cls.name] = cls
    return cls


def registered_adjudications() -> list[str]:
    """The adjudicator names with a registered strategy, sorted."""
    return sorted(_REGISTRY)


def adjudication_for(name: str) -> Adjudication:
    """A fresh strategy for adjudicator ``name``.

    Raises:
        UnknownAdjudicator: nothing registered under ``name``.
    """
    try:
        return _REGISTRY[name]()
    except KeyError:
        raise UnknownAdjudicator(
            f"no adjudication strategy {name!r}; registered: {registered_adjudications()}"
        ) from None


@register_adjudication
class CommitteeAdjudication(Adjudication):
    """The v0 segment committee (`ArbitrationCommittee` adjudicates whole segments)."""

    name = "committee"

    def defend(self, node: NodeBase, job: JobView, play: Callable[[], None]) -> None:
        """Draw the committee and resolve the dispute when due (anyone may)."""
        dispute_id = int(job.dispute_id)
        node.draw_committee_if_ready(dispute_id)
        node.resolve_if_due(dispute_id)

    def challenge(
        self,
        node: NodeBase,
        job: JobView,
        records: Any,
        *,
        choose: Chooser | None = None,
    ) -> None:
        """Nothing: the committee settles the dispute without the challenger."""

    def step_claim(self, node: NodeBase, dispute_id: int) -> StepClaimView | None:
        """None: every committee dispute is about a whole segment."""
        return None


@register_adjudication
class BisectionAdjudication(Adjudication):
    """The bisection game with chess clocks, ending in a one-step committee (DISPUTES.md)."""

    name = "bisection"

    def defend(self, node: NodeBase, job: JobView, play: Callable[[], None]) -> None:
        """Play the defender's moves (the solver's `play`)."""
        play()

    def challenge(
        self,
        node: NodeBase,
        job: JobView,
        records: Any,
        *,
        choose: Chooser | None = None,
    ) -> None:
        """Play the challenger's side when this node opened the dispute."""
        node.play_challenger(job, records, choose=choose)

    def step_claim(self, node: NodeBase, dispute_id: int) -> StepClaimView | None:
        """The game's step claim when ``dispute_id`` is a step dispute."""
        claim = node.client.committee.step_claim_of(dispute_id)
        return claim if claim.is_step else None
