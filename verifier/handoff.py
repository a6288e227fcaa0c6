"""A seat's hand-off of its seal and its reveal to the job's solver (`solver.aggregation`).

The seat signs its seal (EIP-712, `chain.seals`) and POSTs it to ``{checkpointURL}/seals``. It
opens the seal to the solver (POSTs its ends and salt to ``{checkpointURL}/reveals``) once the
solver's ``GET {checkpointURL}/seals`` shows every seat's seal, each signed by its seat
(`complete_seal_set`; the seat keeps them as evidence against a seat that signs a second seal,
docs/SECURITY.md P-40), or else once the reveal window is open on chain. The solver submits every
seat's entry in one ``revealVerdictsSigned``, or in one ``commitVerdictsFor`` and one
``revealVerdictsFor``. The seat only waits: when the chain does not show its reveal within
`HANDOFF_WAIT` seconds, or its seal by the time a third of the verdict window is left (both
capped so that third is kept, `fallback_at`), or the POST fails, it sends its own transaction,
so an aggregator that drops hand-offs costs it gas, never its verdicts.

Run: not a script; ``post_hand_off(http, url, "seals", body)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import httpx
from pydantic import BaseModel, ValidationError

from veritrain.hexutil import as_bytes32, from_hex
from veritrain.wire import HANDOFF_WAIT, MAX_HANDOFF_BYTES, SealSet, hand_off_cutoff

__all__ = [
    "HANDOFF_TIMEOUT_S",
    "HANDOFF_WAIT",
    "complete_seal_set",
    "fallback_at",
    "fetch_seal_set",
    "hand_off_cutoff",
    "post_hand_off",
]

HANDOFF_TIMEOUT_S = 10.0
"""Seconds a hand-off POST may take before it counts as failed (the seat then sends itself)."""


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
    response = _request(
        http, "post", f"{base_url.rstrip('/')}/{route}", body.model_dump(mode="json")
    )
    return response if isinstance(response, str) else None


def _request(http: Any, method: str, url: str, payload: Any = None) -> httpx.Response | str:
    """One hand-off request to the solver: the answer when it is 200, else one line why not
    (a transport failure or another status); the seat then does without the solver.

    Args:
        http: an ``httpx.Client`` (or a test client); None builds one for this request.
        method: ``"post"`` (with ``payload`` as JSON) or ``"get"``.
        url: the route's URL.
        payload: the JSON body of a POST.
    """
    kwargs = {"json": payload} if method == "post" else {}
    try:
        if http is None:
            with httpx.Client(timeout=HANDOFF_TIMEOUT_S) as own:
                response = getattr(own, method)(url, **kwargs)
        else:  # the node's client: its own timeout
            response = getattr(http, method)(url, **kwargs)
    except Exception as exc:  # any transport failure means "not handed": do without
        return f"{type(exc).__name__}: {exc}"
    if response.status_code != 200:
        return f"HTTP {response.status_code}: {response.text[:200]}"
    return response


def fetch_seal_set(http: Any, base_url: str) -> SealSet | str:
    """GET the seals the solver holds for the job's next batch (`veritrain.wire.SealSet`).

    Args:
        http: an ``httpx.Client`` (or a test client); None builds one for this request.
        base_url: the job's ``checkpointURL`` (``.../jobs/{job_id}``).

    Returns:
        The seal set, or one line why there is none (the seat then waits for the chain).
    """
    response = _request(http, "get", f"{base_url.rstrip('/')}/seals")
    if isinstance(response, str):
        return response
    if len(response.content) > MAX_HANDOFF_BYTES:
        return f"a seal set over {MAX_HANDOFF_BYTES} bytes"
    try:
        return SealSet.model_validate_json(response.content)
    except ValidationError as exc:
        return f"invalid seal set: {exc.errors()[0]['msg']}"


def complete_seal_set(
    seal_set: SealSet,
    seats: Sequence[str],
    signer: Callable[[bytes, bytes], str | None],
    own: str,
    own_commitment: bytes,
) -> dict[str, tuple[bytes, bytes]] | None:
    """Every seat's seal from the solver's set, each signed by its seat, or None while one is
    missing: only then may a seat open its own seal to the solver (docs/SECURITY.md P-40).

    Args:
        seal_set: the solver's set (`fetch_seal_set`).
        seats: the job's seats (addresses).
        signer: ``(commitment, signature) -> address`` (``client.round.seal_signer`` bound to the
            submission), None for a malformed signature.
        own: this seat's address.
        own_commitment: the commitment this seat sealed (32 bytes): a set that shows another
            seal for it is not this seat's round (None).

    Returns:
        Lower-case seat address -> ``(commitment, signature)`` for every seat, to keep as
        evidence; None when a seat's seal is missing, unsigned by it, or this seat's differs.
    """
    found: dict[str, tuple[bytes, bytes]] = {}
    wanted = {str(v).lower() for v in seats}
    for seal in seal_set.seals:
        verifier = seal.verifier.lower()
        if verifier not in wanted or verifier in found:
            continue
        commitment, signature = as_bytes32(seal.commitment), from_hex(seal.signature)
        recovered = signer(commitment, signature)
        if recovered is None or recovered.lower() != verifier:
            continue
        found[verifier] = (commitment, signature)
    if set(found) != wanted:
        return None
    if found[own.lower()][0] != bytes(own_commitment):
        return None
    return found
