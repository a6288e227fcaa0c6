"""One typed facade per protocol contract, attached to every `chain.client.ChainClient`.

``client.token`` (`TokenFacade`), ``client.stakes`` (`StakesFacade`), ``client.jobs``
(`JobsFacade`), ``client.round`` (`RoundFacade`), ``client.committee`` (`CommitteeFacade`),
``client.game`` (`GameFacade`), ``client.shares`` (`SharesFacade`), ``client.escrow``
(`EscrowFacade`: the token vault and every credit), and ``client.adjudicator``
(`AdjudicatorFacade`: whichever adjudicator the deployment runs). Each wraps today's ABI of
its contract (loaded from contracts/out) and exposes the web3 handle as ``.contract``.

Run: not a script; ``client.jobs.get_job(1)``.
"""

from chain.contracts.adjudicator import AdjudicatorFacade
from chain.contracts.committee import CommitteeFacade
from chain.contracts.escrow import EscrowFacade
from chain.contracts.game import GameFacade
from chain.contracts.jobs import JobsFacade
from chain.contracts.round import RoundFacade
from chain.contracts.shares import SharesFacade
from chain.contracts.stakes import StakesFacade
from chain.contracts.token import TokenFacade

__all__ = [
    "AdjudicatorFacade",
    "CommitteeFacade",
    "EscrowFacade",
    "GameFacade",
    "JobsFacade",
    "RoundFacade",
    "SharesFacade",
    "StakesFacade",
    "TokenFacade",
]
