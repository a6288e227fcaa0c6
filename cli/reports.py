"""Reports over the chain for the CLI and the demo: who owns a model and what it earned, and
what a job's end restaked for its parties.

Run: not a script; ``shares_report(client, "digits-mlp")`` (``veritrain shares digits-mlp``).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "check_model",
    "commitments_json",
    "lineage_report",
    "model_id_of",
    "shares_report",
]

_HEX = frozenset("0123456789abcdefABCDEF")


def model_id_of(model: str) -> bytes:
    """A model's on-chain id: a 0x-hex bytes32 as given, else keccak256 of the name.

    Args:
        model: a model name or a 0x-hex model id (0x + 64 hex digits).

    Returns:
        The 32-byte model id.

    Raises:
        ValueError: an empty name, or a 0x id that is not 64 hex digits.
    """
    from veritrain.spec import model_id_hash

    if model.startswith(("0x", "0X")):
        digits = model[2:]
        if len(digits) != 64 or not set(digits) <= _HEX:
            raise ValueError(f"model id must be 0x + 64 hex digits, got {model!r}")
        return bytes.fromhex(digits)
    if not model.strip():
        raise ValueError("model name must not be empty")
    return model_id_hash(model)


def check_model(model: str) -> str:
    """Typer callback: refuse a MODEL argument `model_id_of` cannot read (before connecting).

    Raises:
        typer.BadParameter: see `model_id_of`.
    """
    import typer

    try:
        model_id_of(model)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    return model


def commitments_json(values: dict[str, Any]) -> dict[str, Any]:
    """Bytes as 0x hex, the rest as is."""
    return {k: "0x" + v.hex() if isinstance(v, bytes) else v for k, v in values.items()}


def lineage_report(client: Any, model_id: bytes) -> dict[str, Any]:
    """``{"commitments", "head", "slot", "lineage"}`` of ``model_id`` (see `model_report`);
    empty values for an unregistered model."""
    shares = client.shares
    registered = shares.registered_model(model_id)
    if registered is None:
        return {
            "commitments": None,
            "head": None,
            "slot": {"job_id": 0, "extend_by": 0},
            "lineage": [],
            "runs": [],
        }
    return {
        "commitments": commitments_json(registered.model_dump()),
        "head": "0x" + shares.head_of(model_id).hex(),
        "slot": shares.slot_of(model_id).model_dump(),
        "lineage": [
            {"index": e.index, "state": "0x" + e.state.hex(), "job_id": e.job_id}
            for e in shares.lineage(model_id)
        ],
        "runs": runs_report(client, model_id, registered.compute_per_step),
    }


def runs_report(client: Any, model_id: bytes, compute_per_step: int) -> list[dict[str, Any]]:
    """The training runs of ``model_id`` (docs/RUNS.md) as their final round claims record them.

    Returns:
        ``[{"run_id", "run_hash", "seats", "rounds", "inner_steps", "round", "history":
        [{"round", "state", "contributions": [{"seat", "job_id", "solver", "shares"}]}]}]``:
        each final round's outer state hash and its counted contributions, each minted
        ``inner_steps * compute_per_step`` shares (FLOP) for its solver.
    """
    out = []
    for run_id in range(1, client.runs.run_count() + 1):
        view = client.runs.get_run(run_id)
        if view.model_id != model_id:
            continue
        history = []
        for t in range(min(view.round, view.rounds)):
            claim = client.runs.get_round(run_id, t)
            counted = []
            for seat in claim.seats(claim.accepted):
                job_id = client.runs.contribution_of(run_id, t, seat)
                counted.append(
                    {
                        "seat": seat,
                        "job_id": job_id,
                        "solver": client.jobs.get_job(job_id).solver,
                        "shares": view.inner_steps * compute_per_step,
                    }
                )
            history.append(
                {"round": t, "state": "0x" + claim.state_hash.hex(), "contributions": counted}
            )
        out.append(
            {
                "run_id": run_id,
                "run_hash": "0x" + view.run_hash.hex(),
                "seats": view.seats,
                "rounds": view.rounds,
                "inner_steps": view.inner_steps,
                "round": view.round,
                "history": history,
            }
        )
    return out


def shares_report(client: Any, model: str, account: str | None = None) -> dict[str, Any]:
    """Who owns ``model``: holders (from Transfer events), their shares and basis points.

    Args:
        client: a `ChainClient`.
        model: model name (hashed with keccak256) or a 0x model id.
        account: only this account, if given.

    Returns:
        ``{"model", "model_id", "token", "total_shares", "holders": [{"address", "shares",
        "bps", "revenue_wei"}], "commitments", "head", "slot", "lineage"}`` (the last four
        as in `lineage_report`; shares count FLOP of verified compute on the lineage).
    """
    model_id = model_id_of(model)
    token = client.shares.shares_of(model_id)
    out: dict[str, Any] = {
        "model": model,
        "model_id": "0x" + model_id.hex(),
        "token": token,
        "total_shares": 0,
        "holders": [],
    }
    out.update(lineage_report(client, model_id))
    if token is None:
        return out
    contract = client.shares.model_shares(model_id)
    out["total_shares"] = client.shares.total_supply(model_id)
    if account is not None:
        holders = [account]
    else:
        seen: dict[str, None] = {}
        logs = contract.events.Transfer().get_logs(from_block=client.deployment.block)
        for log in logs:
            for addr in (log["args"]["from"], log["args"]["to"]):
                if int(addr, 16) != 0:
                    seen[addr] = None
        holders = list(seen)
    for addr in holders:
        bal = client.shares.balance_of(model_id, addr)
        if account is None and bal == 0:
            continue
        out["holders"].append(
            {
                "address": addr,
                "shares": bal,
                "bps": client.shares.ownership_bps(model_id, addr),
                "revenue_wei": client.shares.revenue_of(model_id, addr),
            }
        )
    return out
