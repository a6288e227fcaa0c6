"""`client.game`: `BisectionGame`: the n-way dissection game with chess clocks and move bonds
(docs/DISPUTES.md).

Typed calls of `BisectionGame` (ABI loaded from contracts/out). Transacting methods return the
mined receipt or raise a decoded `chain.errors.ContractRevert`; views return plain values or
the frozen views of `chain.types`. Units: wei, seconds, blocks.

Run: not a script; ``client.game.post_endpoints(...)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from web3.types import TxReceipt

from chain.contracts._base import ContractFacade
from chain.errors import EventLogMissing
from chain.types import (
    GameStatus,
    GameView,
    Side,
    from_struct,
)
from veritrain.bisection import hashes_digest

if TYPE_CHECKING:
    from chain.client import ChainClient

__all__ = ["GameFacade"]


class GameFacade(ContractFacade):
    """Typed facade of `BisectionGame` for one client (``client.game``).

    Args:
        client: the owning `ChainClient` (signing, nonces, calls).
    """

    HANDLE = "bisection_game"

    def __init__(self, client: ChainClient) -> None:
        super().__init__(client)
        self._arity: int | None = None

    def post_endpoints(
        self,
        dispute_id: int,
        start_hash: bytes,
        end_hash: bytes,
        start_proof: Sequence[bytes],
        end_proof: Sequence[bytes],
    ) -> TxReceipt:
        """Defender's first move: the segment's committed endpoint hashes with their Merkle
        proofs (leaves s and s + 1). Auto-approves the Escrow for the bonds it prepays
        (`move_bond_due`: the endpoints and every bisection the game can take).

        Raises:
            ContractRevert: e.g. ``InvalidEndpointProof``, ``OutOfTurn``, ``ClockExpired``.
        """
        game = self.contract
        self._approve_bond_due(dispute_id)
        return self._client.transact(
            game,
            "postEndpoints",
            dispute_id,
            start_hash,
            end_hash,
            list(start_proof),
            list(end_proof),
        )

    def arity(self) -> int:
        """``DISSECTION_ARITY``: most parts an interval is cut into per move (read once per
        client, then cached: a constant of the deployed code)."""
        if self._arity is None:
            self._arity = int(self._client.call(self.contract, "DISSECTION_ARITY"))
        return self._arity

    def bisect(
        self, dispute_id: int, expected_lo: int, expected_hi: int, hashes: Sequence[bytes]
    ) -> TxReceipt:
        """Defender: post the state hashes at the interior dissection points of the current
        interval ``[expected_lo, expected_hi]`` (``veritrain.bisection.dissection_points``,
        ``point(1..parts-1)``, 32 bytes each, in point order; prepaid with the endpoints).

        Raises:
            ContractRevert: e.g. ``WrongHashCount`` (not ``parts - 1`` hashes),
                ``WrongInterval`` (stale view), ``OutOfTurn``, ``ClockExpired``.
        """
        game = self.contract
        self._approve_bond_due(dispute_id)
        return self._client.transact(
            game, "bisect", dispute_id, expected_lo, expected_hi, [bytes(h) for h in hashes]
        )

    def respond(
        self,
        dispute_id: int,
        expected_lo: int,
        expected_hi: int,
        index: int,
        hashes: Sequence[bytes],
    ) -> TxReceipt:
        """Challenger: keep part ``index`` of the dissection, ``[point(index),
        point(index + 1)]``, passing back the defender's posted ``hashes`` (`pending_hashes`;
        checked against ``pendingHash``). The first response prepays (and auto-approves) the
        bonds of every response the game can take (`move_bond_due`). The response that leaves
        a single step opens the step dispute.

        Raises:
            ContractRevert: e.g. ``HashesMismatch``, ``InvalidIndex`` (``index >= parts``),
                ``WrongInterval``, ``OutOfTurn``, ``ClockExpired``.
        """
        game = self.contract
        self._approve_bond_due(dispute_id)
        return self._client.transact(
            game,
            "respond",
            dispute_id,
            expected_lo,
            expected_hi,
            int(index),
            [bytes(h) for h in hashes],
        )

    def pending_hashes(self, game: GameView) -> list[bytes]:
        """The hashes the defender posted in the game's latest dissection, from its
        ``Bisected`` log at block ``game.pending_block`` (the game stores only their keccak).

        Args:
            game: the game, read while AwaitingResponse (``pending_block > 0``).

        Returns:
            The ``parts - 1`` hashes (32 bytes each) at the interior points, in point order.

        Raises:
            EventLogMissing: no ``Bisected`` log of this game at that block hashes to
                ``game.pending_hash`` (no dissection yet, or the RPC lacks the logs).
            RpcUnavailable: the endpoint is down.
        """
        block = int(game.pending_block)
        if block <= 0:
            raise EventLogMissing(f"game {game.dispute_id} has no dissection posted yet")
        logs = self._client.event_logs(
            self.contract, ["Bisected"], block, block, int(game.dispute_id)
        )
        for log in reversed(logs):
            hashes = [bytes(h) for h in log.args["hashes"]]
            if hashes_digest(hashes) == bytes(game.pending_hash):
                return hashes
        raise EventLogMissing(
            f"game {game.dispute_id}: none of the {len(logs)} Bisected log(s) at block {block} "
            f"hashes to pendingHash 0x{bytes(game.pending_hash).hex()}"
        )

    def escalate(self, dispute_id: int, expected_lo: int, expected_hi: int) -> TxReceipt:
        """Challenger, on its turn: hand the whole interval [lo, hi] to the step adjudicator
        instead of responding (as a first move it prepays `move_bond_due`): the judges replay
        hi - lo steps from the agreed state themselves. For a challenger that cannot get the
        defender's states (docs/SECURITY.md P-6).

        Raises:
            ContractRevert: e.g. ``WrongInterval``, ``OutOfTurn``, ``ClockExpired``.
        """
        game = self.contract
        self._approve_bond_due(dispute_id)
        return self._client.transact(game, "escalate", dispute_id, expected_lo, expected_hi)

    def claim_timeout(self, dispute_id: int) -> TxReceipt:
        """Anyone: the side to move ran out of clock and loses.

        Raises:
            ContractRevert: ``ClockNotExpired`` or ``GameAlreadyResolved``.
        """
        return self._client.transact(self.contract, "claimTimeout", dispute_id)

    def get_game(self, dispute_id: int) -> GameView:
        """``getGame(disputeId)`` as a `GameView`."""
        data = self._call_struct("getGame", dispute_id)
        for key in ("agreed_hash", "claimed_hash", "pending_hash"):
            data[key] = bytes(data[key])
        data["turn"] = Side(int(data["turn"]))
        data["status"] = GameStatus(int(data["status"]))
        return from_struct(GameView, data, dispute_id=dispute_id)

    def _approve_bond_due(self, dispute_id: int) -> None:
        """Approve the Escrow for what the next move pulls (nothing once prepaid)."""
        self._client.token.ensure_allowance(
            self._client.escrow.address, self.move_bond_due(dispute_id)
        )

    def move_bond_due(self, dispute_id: int) -> int:
        """Wei the next move of the side to move pulls (``moveBondDue``): ``(1 + depth) *
        moveBond`` for the endpoints, ``depth * moveBond`` for the challenger's first response
        or escalation, 0 for later moves (prepaid; unplayed bonds are refunded at resolution)."""
        return int(self._client.call(self.contract, "moveBondDue", dispute_id))

    def moves(self, dispute_id: int) -> int:
        """Moves made in a game (``moveCount``; each costs one move bond)."""
        return int(self._client.call(self.contract, "moveCount", dispute_id))

    def clocks(self, dispute_id: int) -> tuple[int, int]:
        """(defender, challenger) seconds left now, counting the running turn (``clocksOf``)."""
        defender, challenger = self._client.call(self.contract, "clocksOf", dispute_id)
        return int(defender), int(challenger)

    def game_of_step(self, step_dispute_id: int) -> int:
        """The game waiting for a committee step dispute (0 if none)."""
        return int(self._client.call(self.contract, "gameOfStep", step_dispute_id))

    def move_bond(self) -> int:
        """Bond each game move posts (wei)."""
        return int(self._client.call(self.contract, "moveBond"))
