"""`GameFacade` without a chain: ``DISSECTION_ARITY`` read once per client, the defender's posted
hashes read back from the ``Bisected`` log at ``pendingBlock`` (the one that hashes to
``pendingHash``, never another game's or a forged one), and the ``bytes32[]`` arguments of
``bisect`` / ``respond``.

Run: .venv/bin/python -m pytest tests/unit/chain/test_game_facade.py -q
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from chain.contracts.game import GameFacade
from chain.errors import ChainError, EventLogMissing
from veritrain._keccak import keccak256
from veritrain.bisection import GameView, hashes_digest
from veritrain.enums import GameStatus, Side

BLOCK = 77
POSTED = [keccak256(bytes([j])) for j in range(7)]


class _Client:
    """The `ChainClient` surface `GameFacade` uses: calls, logs and transactions, recorded."""

    def __init__(self, logs: list[list[bytes]]) -> None:
        self.logs = logs
        self.calls: list[str] = []
        self.log_queries: list[tuple[Any, ...]] = []
        self.sent: list[tuple[str, tuple[Any, ...]]] = []
        self.token = SimpleNamespace(ensure_allowance=lambda _spender, _amount: None)
        self.escrow = SimpleNamespace(address="0xE5C0")

    def handle(self, name: str) -> str:
        return name

    def call(self, contract: str, fn: str, *args: Any) -> Any:
        self.calls.append(fn)
        return {"DISSECTION_ARITY": 8, "moveBondDue": 0}[fn]

    def event_logs(
        self, contract: str, names: list[str], lo: int, hi: int, first: int
    ) -> list[SimpleNamespace]:
        self.log_queries.append((contract, tuple(names), lo, hi, first))
        return [SimpleNamespace(args={"hashes": list(h)}) for h in self.logs]

    def transact(self, contract: str, fn: str, *args: Any) -> dict[str, int]:
        self.sent.append((fn, args))
        return {"status": 1}


def _game(pending: bytes, block: int = BLOCK) -> GameView:
    return GameView(
        dispute_id=5, job_id=1, segment=0, defender="0xd", challenger="0xc", lo=0, hi=10,
        agreed_hash=b"\x01" * 32, claimed_hash=b"\x02" * 32, pending_hash=pending,
        turn=Side.Challenger, status=GameStatus.AwaitingResponse, defender_clock=9,
        challenger_clock=9, turn_started_at=0, pending_block=block,
    )  # fmt: skip


def test_arity_is_read_once() -> None:
    client = _Client([])
    facade = GameFacade(client)  # type: ignore[arg-type]
    assert facade.arity() == 8 and facade.arity() == 8
    assert client.calls == ["DISSECTION_ARITY"]


def test_pending_hashes_come_from_the_log_that_matches_the_pending_hash() -> None:
    other = [keccak256(b"another game")] * 7
    client = _Client([POSTED, other])  # both logs at the block; only one hashes right
    hashes = GameFacade(client).pending_hashes(_game(hashes_digest(POSTED)))  # type: ignore[arg-type]
    assert hashes == POSTED
    assert client.log_queries == [("bisection_game", ("Bisected",), BLOCK, BLOCK, 5)]
    assert GameFacade(client).pending_hashes(_game(hashes_digest(other))) == other  # type: ignore[arg-type]


def test_pending_hashes_refuse_a_log_that_does_not_match() -> None:
    forged = [*POSTED[:-1], keccak256(b"forged")]
    facade = GameFacade(_Client([forged]))  # type: ignore[arg-type]
    with pytest.raises(EventLogMissing, match="pendingHash") as err:
        facade.pending_hashes(_game(hashes_digest(POSTED)))
    assert isinstance(err.value, ChainError) and isinstance(err.value, LookupError)
    with pytest.raises(EventLogMissing, match="no dissection"):
        facade.pending_hashes(_game(hashes_digest(POSTED), block=0))
    with pytest.raises(EventLogMissing):
        GameFacade(_Client([])).pending_hashes(_game(hashes_digest(POSTED)))  # type: ignore[arg-type]


def test_moves_send_the_hash_lists() -> None:
    client = _Client([])
    facade = GameFacade(client)  # type: ignore[arg-type]
    facade.bisect(5, 0, 10, tuple(POSTED))
    facade.respond(5, 0, 10, 3, POSTED)
    assert client.sent == [("bisect", (5, 0, 10, POSTED)), ("respond", (5, 0, 10, 3, POSTED))]
