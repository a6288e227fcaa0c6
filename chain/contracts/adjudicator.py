"""`client.adjudicator`: the JobManager's adjudicator, whichever mechanism the deployment runs.

Nodes ask it the two things they need without knowing the mechanism: its ``name`` (to pick
their adjudication strategy once) and whether a job's dispute is ``resolved`` (so
`JobManager.finalize` may settle it). Which contract answers is decided here, in one table.

Run: not a script; ``client.adjudicator.resolved(job.dispute_id)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from web3.contract import Contract

from chain.errors import ChainValueError
from chain.types import DisputeStatus

if TYPE_CHECKING:
    from chain.client import ChainClient

__all__ = ["AdjudicatorFacade"]


def _game_resolved(client: ChainClient, dispute_id: int) -> bool:
    return client.game.get_game(dispute_id).resolved


def _committee_resolved(client: ChainClient, dispute_id: int) -> bool:
    return client.committee.get_dispute(dispute_id).status is DisputeStatus.Resolved


_RESOLVED: dict[str, Callable[[ChainClient, int], bool]] = {
    "bisection": _game_resolved,
    "committee": _committee_resolved,
}
"""How each adjudicator says a job's dispute (``job.disputeId``) has an outcome."""

_HANDLE = {"bisection": "bisection_game", "committee": "arbitration"}


class AdjudicatorFacade:
    """The deployment's adjudicator (``client.adjudicator``).

    Args:
        client: the owning `ChainClient`.
    """

    def __init__(self, client: ChainClient) -> None:
        self._client = client

    @property
    def name(self) -> str:
        """`ProtocolParams.adjudicator` of the bound deployment (``"committee"``,
        ``"bisection"``).

        Raises:
            ChainValueError: the client has no deployment.
        """
        deployment = self._client.deployment
        if deployment is None:
            raise ChainValueError("ChainClient has no deployment; call use_deployment()")
        return str(deployment.params.adjudicator)

    @property
    def contract(self) -> Contract:
        """The web3 handle of the contract the JobManager calls as its adjudicator."""
        return self._client.handle(_HANDLE[self.name])

    def resolved(self, dispute_id: int) -> bool:
        """Whether a job's dispute has an outcome (the game resolved, or the committee's
        dispute Resolved), so `JobManager.finalize` may settle it.

        Args:
            dispute_id: the JobManager's dispute id of the job (``job.dispute_id``).

        Returns:
            True once the adjudicator has decided.

        Raises:
            ChainValueError: an adjudicator this client does not know.
        """
        try:
            resolved = _RESOLVED[self.name]
        except KeyError:
            raise ChainValueError(f"unknown adjudicator {self.name!r}") from None
        return resolved(self._client, dispute_id)
