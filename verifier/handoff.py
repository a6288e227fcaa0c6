"""A seat's hand-off of its seal and its reveal to the job's solver (`solver.aggregation`).

The seat signs its seal (EIP-712, `chain.seals`) and POSTs it to ``{checkpointURL}/seals``; once
the reveal window is open it POSTs its ends and salt to ``{checkpointURL}/reveals``. The solver
submits every seat's entry in one ``commitVerdictsFor`` / ``revealVerdictsFor``. The seat only
waits: when the chain does not show its seal or reveal within `HANDOFF_WAIT` seconds (capped so
a third of the window is left, `fallback_at`), or the POST fails, it sends its own transaction,
so an aggregator that drops hand-offs costs it gas, never its verdicts.

Run: not a script; ``post_hand_off(http, url, "seals", body)``.
"""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import BaseModel

from veritrain.wire import HANDOFF_WAIT

__all__ = [
    "HANDOFF_TIMEOUT_S",
    "HANDOFF_WAIT",
    "fallback_at",
    "hand_off_cutoff",
    "post_hand_off",
]

HANDOFF_TIMEOUT_S = 10.0
"""Seconds a hand-off POST may take before it counts as failed (the seat then sends itself)."""


def hand_off_cutoff(closes: int, window: int) -> int:
    """Chain time (seconds) from which a seat neither hands off nor waits for a hand-off:
    ``closes - window // 3``, a third of the window kept for its own transaction (the same
    margin an unreachable solver gets, `judge_claim`).

    Args:
        closes: the window's last second (the verdict deadline, or the reveal's close).
        window: the window's length (seconds).
    """
    return int(closes) - int(window) // 3


def fallback_at(handed_at: int, wait: float, closes: int, window: int) -> int:
    """Chain time (seconds) from which a seat sends its own transaction after a hand-off:
    ``handed_at + wait``, but no later than `hand_off_cutoff`.

    Args:
        handed_at: chain time of the hand-off (seconds).
        wait: the hand-off wait (seconds).
        closes: the window's last second (the verdict deadline, or the reveal's close).
        window: the window's length (seconds).
    """
    return min(int(handed_at + wait), hand_off_cutoff(closes, window))


def post_hand_off(http: Any, base_url: str, route: str, body: BaseModel) -> str | None:
    """POST a hand-off to the solver.

    Args:
        http: an ``httpx.Client`` (or a test client); None builds one for this request.
        base_url: the job's ``checkpointURL`` (``.../jobs/{job_id}``).
        route: ``"seals"`` or ``"reveals"``.
        body: the `veritrain.wire` body.

    Returns:
        None when the solver took it, else one line why not (the seat falls back at once).
    """
    url = f"{base_url.rstrip('/')}/{route}"
    payload = body.model_dump(mode="json")
    try:
        if http is None:
            with httpx.Client(timeout=HANDOFF_TIMEOUT_S) as own:
                response = own.post(url, json=payload)
        else:
            response = http.post(url, json=payload)  # the node's client: its own timeout
    except Exception as exc:  # any transport failure means "not handed": send it ourselves
        return f"{type(exc).__name__}: {exc}"
    if response.status_code != 200:
        return f"HTTP {response.status_code}: {response.text[:200]}"
    return None
