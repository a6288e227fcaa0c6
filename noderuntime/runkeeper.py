"""The run keeper: moves every open run of the chain along, as any staked party may
(docs/RUNS.md, section 3): proposes a round's claim once its jobs are settled, challenges a
claim that differs from its own computation (`noderuntime.runs.round_claim`), finalizes an
unchallenged claim after its window.

Run: not a script; a solver or whistleblower node holds one (`RunKeeper(node, propose=True,
challenge=False)`) and calls `tick()` every poll.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chain.contracts.runs import seat_mask
from noderuntime.runs import (
    UNAVAILABLE,
    UNAVAILABLE_WHY,
    RoundNotReady,
    RunState,
    round_claim,
    run_spec_of,
)
from veritrain.diloco import RoundResult, RunSpec
from veritrain.enums import RunRoundPhase
from veritrain.errors import VeritrainError

__all__ = ["PROPOSE_WAITS", "RunKeeper"]

PROPOSE_WAITS = 10
"""Polls a proposer waits for the holders of a withheld final before leaving its seat out."""


class RunKeeper:
    """Moves every open run of the chain along, as any staked party may (docs/RUNS.md):
    proposes the current round's claim once its registered jobs are settled, challenges a
    standing claim that differs from its own computation, and finalizes an unchallenged claim
    once its window is over. Each claim is computed once per (run, round, claim).

    Args:
        node: the `NodeBase` that sends the transactions (``node.send``) and logs.
        propose: propose claims (a solver, so that its counted work is minted).
        challenge: challenge wrong claims (a whistleblower; posts `claimBond`).
        store: a `CheckpointStore` for the final states (optional; a `StateMirror` keeps the
            finals and outer states it proved, for the node to serve).
        mirrors: base URLs of the holders tried after each job's solver (kept as given: a node
            passes its own ``mirrors`` list, which its options fill).
    """

    def __init__(
        self,
        node: Any,
        *,
        propose: bool,
        challenge: bool,
        store: Any = None,
        mirrors: Sequence[str] = (),
    ) -> None:
        self.node = node
        self.propose = propose
        self.challenge = challenge
        self.store = store
        self.mirrors = mirrors
        self._ended: set[int] = set()
        self._checked: set[tuple[int, int, bytes, int]] = set()
        self._specs: dict[int, RunSpec] = {}
        self._states: dict[int, RunState] = {}  # run -> its state at its current round
        self._waits: dict[tuple[int, int], int] = {}  # (run, round) -> polls waited on holders

    def tick(self) -> None:
        """One pass over the chain's runs (errors of one run are logged, never raised)."""
        client = self.node.client
        try:
            count = client.runs.run_count()
        except Exception as exc:  # noqa: BLE001 - a deployment without runs, or an RPC hiccup
            self.node.log.debug("runs: cannot read the run count: %s", exc)
            return
        for run_id in range(1, count + 1):
            if run_id in self._ended or self.node.stopping:
                continue
            try:
                self._keep(run_id)
            except (RoundNotReady, *UNAVAILABLE) as exc:
                self.node.log.debug("run %d: not ready: %s", run_id, exc)
            except VeritrainError as exc:
                self.node.log.warning("run %d: %s", run_id, exc)

    def _keep(self, run_id: int) -> None:
        client = self.node.client
        view = client.runs.get_run(run_id)
        if view.ended:
            self._ended.add(run_id)
            return
        claim = client.runs.get_round(run_id, view.round)
        if (
            claim.phase is RunRoundPhase.Proposed
            and self.node.chain_time() > claim.challenge_deadline
        ):
            self.node.send(
                f"finalizeRound run {run_id} round {view.round}",
                client.runs.finalize_round,
                run_id,
                quiet=True,
            )
            return
        if claim.phase is RunRoundPhase.Open and self.propose:
            result = self._claim(run_id, view.round, settled=True)
            if any(why.startswith(UNAVAILABLE_WHY) for why in result.excluded.values()):
                # a final its solver withholds may be held by the job's seats (their mirrors
                # keep it from the reveal on, docs/SECURITY.md P-36): give them PROPOSE_WAITS
                # polls before a claim leaves the seat out
                waited = self._waits.get((run_id, view.round), 0)
                if waited < PROPOSE_WAITS:
                    self._waits[(run_id, view.round)] = waited + 1
                    return
            # the claim bond comes from the wallet: a job's earnings are restaked, not paid
            # there (docs/SECURITY.md P-41), so a devnet node mints what it lacks first
            self.node.ensure_funds(client.runs.claim_bond())
            proposed = self.node.send(
                f"proposeRound run {run_id} round {view.round}",
                client.runs.propose_round,
                run_id,
                result.state.state_hash(),
                seat_mask(result.accepted),
                quiet=True,  # a revert (e.g. no bond money) is said once, not every poll
            )
            if proposed is not None:
                self.node.log.info(
                    "run %d round %d: proposed seats %s (left out: %s)",
                    run_id,
                    view.round,
                    result.accepted,
                    {seat: why[:60] for seat, why in result.excluded.items()} or "none",
                )
            return
        key = (run_id, view.round, claim.state_hash, claim.accepted)
        if claim.phase is not RunRoundPhase.Proposed or not self.challenge or key in self._checked:
            return
        if claim.proposer.lower() == client.address.lower():
            self._checked.add(key)
            return
        result = self._claim(run_id, view.round, settled=False)
        self._checked.add(key)
        if (
            claim.accepted == seat_mask(result.accepted)
            and claim.state_hash == result.state.state_hash()
        ):
            return
        self.node.log.warning(
            "run %d round %d: the claim of %s (seats %s) is WRONG (this node computes seats %s): "
            "challenging it",
            run_id,
            view.round,
            claim.proposer,
            claim.seats(claim.accepted),
            result.accepted,
        )
        self.node.send(
            f"challengeRound run {run_id} round {view.round}", client.runs.challenge_round, run_id
        )

    def _claim(self, run_id: int, round_index: int, *, settled: bool) -> RoundResult:
        """This node's claim of a round (the run's state at the round is kept: it is final)."""
        state, result = round_claim(
            self.node.client,
            self._spec(run_id),
            round_index,
            store=self.store,
            http=self.node.http_client,
            settled=settled,
            state=self._states.get(run_id),
            mirrors=self.mirrors,
        )
        if not state.withheld:  # a withheld seat may be served again: rebuild next time
            self._states[run_id] = state
        return result

    def _spec(self, run_id: int) -> RunSpec:
        if run_id not in self._specs:
            self._specs[run_id] = run_spec_of(self.node.client, run_id)
        return self._specs[run_id]
