"""`client.runs`: `RunRegistry`: DiLoCo training runs, their contribution jobs and round claims.

Typed calls of `RunRegistry` (ABI loaded from contracts/out). Transacting methods return the
mined receipt or raise a decoded `chain.errors.ContractRevert`; views return the frozen views of
`chain.types`. Units: wei (bonds), seconds (windows, deadlines). See docs/RUNS.md.

Run: not a script; ``client.runs.open_run(...)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eth_utils.address import to_checksum_address
from web3.types import TxReceipt

from chain.contracts._base import ContractFacade
from chain.types import RunRoundPhase, RunRoundView, RunView
from veritrain.diloco import contribution_uri
from veritrain.errors import SpecError

if TYPE_CHECKING:
    from chain.client import ChainClient

__all__ = ["RunsFacade", "seat_mask"]


def seat_mask(seats: list[int] | set[int]) -> int:
    """The bitmask with bit j set for each seat j (``RunRegistry`` ``accepted``/``registered``)."""
    mask = 0
    for seat in seats:
        mask |= 1 << int(seat)
    return mask


class RunsFacade(ContractFacade):
    """Typed facade of `RunRegistry` for one client (``client.runs``).

    Args:
        client: the owning `ChainClient` (signing, nonces, calls).
    """

    HANDLE = "run_registry"

    def __init__(self, client: ChainClient) -> None:
        super().__init__(client)
        self._run_uris: dict[int, str] = {}
        """Spec URIs read from ``RunOpened`` per run id; they never change."""

    def open_run(
        self,
        model_id: bytes,
        run_hash: bytes,
        start_hash: bytes,
        seats: int,
        rounds: int,
        inner_steps: int,
        spec_uri: str,
    ) -> TxReceipt:
        """Open a run of ``model_id`` (its owner or an authorised poster). ``spec_uri`` is the
        run's spec (`veritrain.diloco.RunSpec.to_data_uri` or a URL), published once in
        ``RunOpened``: its contributions carry none and are resolved from it
        (`contribution_spec_uri`)."""
        return self._client.transact(
            self.contract,
            "openRun",
            model_id,
            run_hash,
            start_hash,
            seats,
            rounds,
            inner_steps,
            spec_uri,
        )

    def run_spec_uri(self, run_id: int) -> str:
        """The run's spec URI, from its ``RunOpened`` event ("" for an unknown run). Cached:
        it never changes."""
        cached = self._run_uris.get(run_id)
        if cached is None:
            events = self._scan_events("RunOpened", {1: run_id})
            if not events:
                return ""
            cached = self._run_uris[run_id] = str(events[-1].args["specURI"])
        return cached

    def contribution_spec_uri(self, job_id: int) -> str:
        """The spec URI of contribution job ``job_id``: its run's (`run_spec_uri`) with the
        fragment of its (round, seat) (`veritrain.diloco.contribution_uri`), from its
        ``ContributionAdded`` event; "" when the job is no contribution or its run's URI names
        no spec (empty, or with a fragment). The spec fetched from
        it is checked against the job's spec hash, ``contributionSpecHash(runHash, round,
        seat)``, as any spec is."""
        events = self._scan_events("ContributionAdded", {3: job_id})
        if not events:
            return ""
        args = events[-1].args
        run_uri = self.run_spec_uri(int(args["runId"]))
        if not run_uri:
            return ""
        try:
            return contribution_uri(run_uri, int(args["round"]), int(args["seat"]))
        except SpecError:
            # a run URI with a fragment (nothing on chain refuses one) names no spec: the job
            # has none, as a job posted with an unusable URI
            return ""

    def run_id_from(self, receipt: TxReceipt) -> int:
        """The run id of the ``RunOpened`` event in an `open_run` receipt.

        Raises:
            ChainValueError: the receipt holds no RunOpened event.
        """
        from chain.errors import ChainValueError

        for ev in self._client.decode_receipt(receipt, "RunOpened"):
            return int(ev.args["runId"])
        raise ChainValueError("receipt holds no RunOpened event")

    def post_contribution(
        self,
        run_id: int,
        seat: int,
        init_hash: bytes,
        checkpoint_interval: int,
        reward: int,
    ) -> TxReceipt:
        """Post the current round's contribution of ``seat`` and register it, in one
        transaction (``RunRegistry.postContribution``; the model's owner or an authorised
        poster): the job has the seat's spec hash and the run's inner steps, the sender is its
        submitter and pays its escrow, `JobsFacade.post_cost` (wei; auto-approves the Escrow).
        The job is a contribution from its post: it never holds a lineage head and its run pays
        it shares once (docs/SECURITY.md P-29). Registering the last seat closes the round's
        registration. The job carries no spec URI: its spec is the run's (`contribution_spec_uri`).

        Args:
            run_id: the run.
            seat: seat j < seats, not taken.
            init_hash: the job's start state (32 bytes).
            checkpoint_interval: k steps (dividing the run's inner steps).
            reward: the solver's reward (wei).

        Returns:
            The receipt; `job_id_from` extracts the new job id.

        Raises:
            ContractRevert: ``NotPoster``, ``UnexpectedRoundPhase``, ``RegistrationClosed``,
                ``SeatOutOfRange``, ``SeatTaken``, ``RunEnded``, ``UnknownRun``, or a
                ``postJob`` revert of the JobManager.
        """
        self._client.token.ensure_allowance(
            self._client.escrow.address, self._client.jobs.post_cost(reward)
        )
        return self._client.transact(
            self.contract,
            "postContribution",
            run_id,
            seat,
            bytes(init_hash),
            checkpoint_interval,
            reward,
        )

    def registration_deadline(self, run_id: int, round_index: int) -> int:
        """Last timestamp (unix s) at which a contribution of round ``round_index`` may be
        posted (0 for a round not opened yet). The round's registration closes then, or earlier
        when every seat is registered; no claim can be proposed before it closes (P-28)."""
        return int(self._client.call(self.contract, "registrationDeadline", run_id, round_index))

    def registration_window(self) -> int:
        """How long after a round opens its contributions may be posted (s)."""
        return int(self._client.call(self.contract, "registrationWindow"))

    def job_id_from(self, receipt: TxReceipt) -> int:
        """The job id of the ``ContributionAdded`` event in a `post_contribution` receipt.

        Raises:
            ChainValueError: the receipt holds no ContributionAdded event.
        """
        from chain.errors import ChainValueError

        for ev in self._client.decode_receipt(receipt, "ContributionAdded"):
            return int(ev.args["jobId"])
        raise ChainValueError("receipt holds no ContributionAdded event")

    def propose_round(self, run_id: int, state_hash: bytes, accepted: int) -> TxReceipt:
        """Propose the current round's result (pulls ``claim_bond`` through the Escrow)."""
        self._client.token.ensure_allowance(self._client.escrow.address, self.claim_bond())
        return self._client.transact(self.contract, "proposeRound", run_id, state_hash, accepted)

    def challenge_round(self, run_id: int) -> TxReceipt:
        """Challenge the standing claim (pulls ``claim_bond``; opens a committee dispute)."""
        self._client.token.ensure_allowance(self._client.escrow.address, self.claim_bond())
        return self._client.transact(self.contract, "challengeRound", run_id)

    def finalize_round(self, run_id: int) -> TxReceipt:
        """Make an unchallenged claim final once its window is over (mints the seats' shares)."""
        return self._client.transact(self.contract, "finalizeRound", run_id)

    def get_run(self, run_id: int) -> RunView:
        """``getRun(runId)`` as a `RunView` (reverts UnknownRun)."""
        raw = self._client.call(self.contract, "getRun", run_id)
        model, run_hash, opener, start, seats, rounds, steps, current = raw
        return RunView(
            run_id=run_id,
            model_id=bytes(model),
            run_hash=bytes(run_hash),
            opener=to_checksum_address(opener),
            start_hash=bytes(start),
            seats=int(seats),
            rounds=int(rounds),
            inner_steps=int(steps),
            round=int(current),
        )

    def get_round(self, run_id: int, round_index: int) -> RunRoundView:
        """``getRound(runId, round)`` as a `RunRoundView`."""
        raw = self._client.call(self.contract, "getRound", run_id, round_index)
        phase, registered, accepted, state, proposer, challenger, deadline, dispute = raw
        return RunRoundView(
            run_id=run_id,
            round=round_index,
            phase=RunRoundPhase(int(phase)),
            registered=int(registered),
            accepted=int(accepted),
            state_hash=bytes(state),
            proposer=to_checksum_address(proposer),
            challenger=to_checksum_address(challenger),
            challenge_deadline=int(deadline),
            dispute_id=int(dispute),
        )

    def contribution_of(self, run_id: int, round_index: int, seat: int) -> int:
        """The job registered as contribution (round, seat); 0 if none."""
        return int(self._client.call(self.contract, "contributionOf", run_id, round_index, seat))

    def contributions(self, run_id: int, round_index: int) -> dict[int, int]:
        """seat -> registered job id of a round (only registered seats)."""
        view = self.get_round(run_id, round_index)
        return {
            seat: self.contribution_of(run_id, round_index, seat)
            for seat in view.seats(view.registered)
        }

    def run_id_of(self, run_hash: bytes) -> int:
        """The run with this runHash; 0 if none."""
        return int(self._client.call(self.contract, "runIdOf", run_hash))

    def run_count(self) -> int:
        """Runs opened so far (ids 1..count)."""
        return int(self._client.call(self.contract, "runCount"))

    def claim_of(self, dispute_id: int) -> tuple[int, int]:
        """(run id, round) a committee dispute judges; run id 0 if not a round claim."""
        run_id, round_index = self._client.call(self.contract, "claimOf", dispute_id)
        return int(run_id), int(round_index)

    def claim_bond(self) -> int:
        """Bond of a proposer and of a challenger (wei)."""
        return int(self._client.call(self.contract, "claimBond"))

    def challenge_window(self) -> int:
        """How long a claim can be challenged (seconds)."""
        return int(self._client.call(self.contract, "challengeWindow"))
