"""The header's search box: a job id, an address, a model (name or ``0x`` id), a run or a
dispute, to the page that shows it.

    find(session, "4")            # "/jobs/4"
    find(session, "run 2")        # "/runs/2"
    find(session, "0xAbC...")     # "/accounts/0xAbC..." (EIP-55 checked)
    find(session, "digits-mlp")   # "/models/digits-mlp"
    find(session, "nothing")      # raises NotFound("nothing in the index matches 'nothing'")

What is typed is read as: digits -> a job id; ``run N`` / ``run-N`` -> a run; ``dispute N`` /
``claim-N`` -> a dispute; ``0x`` + 40 hex -> an account; ``0x`` + 64 hex -> a model id, else a
run hash; anything else -> a model name. Text longer than `MAX_QUERY` characters is refused.

Run: imported by ``dashboard.app`` (``GET /search?q=...``).
"""

from __future__ import annotations

import re
from urllib.parse import quote

from sqlalchemy import select
from sqlalchemy.orm import Session

from dashboard import queries
from indexer.models import Account, Job, Run
from veritrain.hexutil import checksum_address

__all__ = ["MAX_QUERY", "NotFound", "find"]

MAX_QUERY = 200
"""The longest search text read (characters): a model name is at most 200 (the index column)."""

_RUN = re.compile(r"run[\s#-]*(\d+)", re.IGNORECASE)
_DISPUTE = re.compile(r"(?:dispute[\s#-]*|(claim)-)(\d+)", re.IGNORECASE)
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")
_HASH = re.compile(r"0x[0-9a-fA-F]{64}")


class NotFound(Exception):  # noqa: N818 - reads as what happened, like HTTP's 404
    """The search text names nothing in the index; ``str()`` is one sentence for the page."""


def _row_id(digits: str, what: str) -> int:
    """``digits`` as an id an index row can have (SQLite integers are 64-bit), else NotFound."""
    n = int(digits)
    if n > queries.MAX_ROW_ID:
        raise NotFound(f"no {what} {n} in the index")
    return n


def find(session: Session, text: str) -> str:
    """The page (a path) of what ``text`` names.

    Args:
        session: a reader of the index.
        text: what was typed (surrounding spaces ignored).

    Returns:
        A path of the dashboard: ``/jobs/N``, ``/runs/N``, ``/disputes/KEY``, ``/accounts/ADDR``
        or ``/models/REF`` (the name percent-encoded).

    Raises:
        NotFound: empty, longer than `MAX_QUERY`, a bad address checksum, or nothing of that
            kind in the index.
    """
    q = text.strip()
    if not q:
        raise NotFound("type a job id, an address, a model name or id, or a run (run N)")
    if len(q) > MAX_QUERY:
        raise NotFound(f"the search text is longer than {MAX_QUERY} characters")
    if q.isdigit():
        n = _row_id(q, "job")
        if session.get(Job, n) is None:
            raise NotFound(f"no job {n} in the index")
        return f"/jobs/{n}"
    if m := _RUN.fullmatch(q):
        n = _row_id(m.group(1), "run")
        if session.get(Run, n) is None:
            raise NotFound(f"no run {n} in the index")
        return f"/runs/{n}"
    if m := _DISPUTE.fullmatch(q):
        key = f"claim-{m.group(2)}" if m.group(1) else m.group(2)
        if queries.dispute(session, key) is None:
            raise NotFound(f"no dispute {key} in the index")
        return f"/disputes/{key}"
    if _ADDRESS.fullmatch(q):
        try:
            address = checksum_address(q)
        except ValueError as e:
            raise NotFound(f"{q!r} is not a valid address: {e}") from None
        if session.get(Account, address) is None:
            raise NotFound(f"the index has seen no account {address}")
        return f"/accounts/{address}"
    if _HASH.fullmatch(q):
        model = queries.resolve_model(session, q)
        if model is not None:
            return f"/models/{model.model_id}"
        run_id = session.scalar(select(Run.run_id).where(Run.run_hash == q.lower()))
        if run_id is not None:
            return f"/runs/{run_id}"
        raise NotFound(f"no model id or run hash {q.lower()} in the index")
    model = queries.resolve_model(session, q)
    if model is None:
        raise NotFound(f"nothing in the index matches {q!r}")
    return "/models/" + quote(model.name or model.model_id, safe="")
