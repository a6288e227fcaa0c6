"""Chain errors: one base class, decoded contract reverts, RPC failures.

Every revert raised by a veritrain contract is a custom error with context. This module turns
raw revert data into readable exceptions by matching its 4-byte selector against every
custom error of every loaded ABI, and also decodes Solidity's built-in ``Error(string)`` and
``Panic(uint256)``::

    try:
        client.jobs.challenge_approval(job_id, 0, verifier)
    except ContractRevert as err:
        err.name        # "ChallengeWindowClosed"
        err.named_args  # {"jobId": 3, "deadline": ..., "nowTs": ...}
        str(err)        # "JobManager reverted: ChallengeWindowClosed(jobId=3, deadline=..., ...)"

Each custom error name also exists as a subclass of `ContractRevert`, created on first use, so
callers can catch one error precisely::

    from chain import errors
    try: ...
    except errors.ChallengeWindowClosed: ...

Run the unit tests: ``.venv/bin/python -m pytest tests/unit/chain -q``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from eth_abi.abi import decode as abi_decode
from eth_utils.abi import collapse_if_tuple
from eth_utils.address import to_checksum_address
from eth_utils.crypto import keccak

logger = logging.getLogger(__name__)

__all__ = [
    "ChainError",
    "ChainValueError",
    "ContractRevert",
    "EventLogMissing",
    "RpcUnavailable",
    "TransactionFailed",
    "ErrorDecoder",
    "PANIC_CODES",
    "error_class",
    "register_abi",
    "decode_revert",
]

ERROR_STRING_SELECTOR = bytes.fromhex("08c379a0")  # Error(string)
PANIC_SELECTOR = bytes.fromhex("4e487b71")  # Panic(uint256)

PANIC_CODES: dict[int, str] = {
    0x00: "generic compiler panic",
    0x01: "assert(false)",
    0x11: "arithmetic overflow or underflow",
    0x12: "division or modulo by zero",
    0x21: "invalid enum value",
    0x22: "invalid storage byte array encoding",
    0x31: "pop() on an empty array",
    0x32: "array index out of bounds",
    0x41: "out of memory",
    0x51: "call to an uninitialized internal function",
}


class ChainError(Exception):
    """Base class of every error raised by the ``chain`` package."""


class ChainValueError(ChainError, ValueError):
    """An argument or a loaded file (manifest, keystore, artifact) is invalid."""


class EventLogMissing(ChainError, LookupError):
    """A log that a view points to (e.g. a game's ``Bisected`` at ``pendingBlock``) is not
    there, or none of those there matches the commitment stored on chain (the RPC pruned its
    logs, or answered from another chain)."""


class RpcUnavailable(ChainError, ConnectionError):
    """The JSON-RPC endpoint cannot be reached (connection refused, timeout, HTTP 5xx)."""


class TransactionFailed(ChainError):
    """A transaction was mined with status 0 and no revert reason could be recovered.

    Attributes:
        tx_hash: hex hash of the failed transaction.
    """

    def __init__(self, message: str, tx_hash: str | None = None) -> None:
        super().__init__(message)
        self.tx_hash = tx_hash


class ContractRevert(ChainError):
    """A contract call or transaction reverted; the revert data is decoded when possible.

    Attributes:
        name: error name (``"ChallengeWindowClosed"``, ``"Error"`` for ``Error(string)``,
            ``"Panic"`` for ``Panic(uint256)``, ``"Unknown"`` when no ABI matches).
        args: the decoded error arguments as a tuple, in declaration order.
        named_args: the decoded arguments by parameter name.
        contract: name of the contract that reverted, when known (e.g. ``"JobManager"``).
        data: raw revert data (selector + ABI-encoded arguments).
        message: readable one-line description (also ``str(err)``).
    """

    def __init__(
        self,
        name: str,
        named_args: Mapping[str, Any] | None = None,
        *,
        contract: str | None = None,
        data: bytes = b"",
        message: str | None = None,
    ) -> None:
        self.name = name
        self.named_args: dict[str, Any] = dict(named_args or {})
        self.contract = contract
        self.data = data
        self.message = message or _format_message(contract, name, self.named_args)
        super().__init__(self.message)
        # Exception.args holds the decoded values, so `err.args` reads like the Solidity error.
        self.args = tuple(self.named_args.values())

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild_revert,
            (self.name, self.named_args, self.contract, self.data, self.message),
        )


def _rebuild_revert(
    name: str, named: dict[str, Any], contract: str | None, data: bytes, message: str
) -> ContractRevert:
    return error_class(name)(name, named, contract=contract, data=data, message=message)


def _fmt_value(value: Any) -> str:
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_fmt_value(v) for v in value) + "]"
    return str(value)


def _format_message(contract: str | None, name: str, named: Mapping[str, Any]) -> str:
    who = contract or "contract"
    inner = ", ".join(f"{k}={_fmt_value(v)}" for k, v in named.items())
    return f"{who} reverted: {name}({inner})"


_ERROR_CLASSES: dict[str, type[ContractRevert]] = {}

_ERROR_SOURCES: list[Callable[[], object]] = []
"""Callables that register every known custom error (`chain.artifacts` adds its reader), so
this module needs no import of the artifact loader."""


def add_error_source(register: Callable[[], object]) -> None:
    """Add a callable that registers custom errors on demand (``chain.errors.<Name>``).

    Args:
        register: called (once per unknown name looked up) to register more errors.
    """
    if register not in _ERROR_SOURCES:
        _ERROR_SOURCES.append(register)


def error_class(name: str) -> type[ContractRevert]:
    """Return the `ContractRevert` subclass for one custom error name (created once).

    Args:
        name: the Solidity error name, e.g. ``"ChallengeWindowClosed"``.

    Returns:
        A subclass of `ContractRevert` named ``name``; the same class on every call.
    """
    if name in ("ContractRevert", ""):
        return ContractRevert
    cls = _ERROR_CLASSES.get(name)
    if cls is None:
        cls = type(name, (ContractRevert,), {"__module__": __name__})
        _ERROR_CLASSES[name] = cls
    return cls


@dataclass(frozen=True)
class _ErrorAbi:
    name: str
    contract: str
    types: tuple[str, ...]
    names: tuple[str, ...]


def _signature(entry: Mapping[str, Any]) -> str:
    types = ",".join(collapse_if_tuple(dict(i)) for i in entry.get("inputs", []))
    return f"{entry['name']}({types})"


class ErrorDecoder:
    """Maps 4-byte selectors to custom error ABIs and decodes revert data.

    Args:
        abis: optional mapping of contract name to ABI (list of entries) to register at once.
    """

    def __init__(self, abis: Mapping[str, Sequence[Mapping[str, Any]]] | None = None) -> None:
        self._by_selector: dict[bytes, _ErrorAbi] = {}
        self._contracts_by_selector: dict[bytes, set[str]] = {}
        for contract, abi in (abis or {}).items():
            self.register(contract, abi)

    def register(self, contract: str, abi: Iterable[Mapping[str, Any]]) -> None:
        """Register the custom errors of one contract's ABI.

        Args:
            contract: contract name used in messages (``"JobManager"``).
            abi: the ABI entries (only ``type == "error"`` entries are used).
        """
        for entry in abi:
            if entry.get("type") != "error":
                continue
            sig = _signature(entry)
            selector = keccak(text=sig)[:4]
            inputs = entry.get("inputs", [])
            err = _ErrorAbi(
                name=entry["name"],
                contract=contract,
                types=tuple(collapse_if_tuple(dict(i)) for i in inputs),
                names=tuple(i.get("name") or f"arg{n}" for n, i in enumerate(inputs)),
            )
            self._by_selector.setdefault(selector, err)
            self._contracts_by_selector.setdefault(selector, set()).add(contract)

    @property
    def error_names(self) -> set[str]:
        """Names of every registered custom error."""
        return {e.name for e in self._by_selector.values()}

    def decode(self, data: bytes | str | None, contract: str | None = None) -> ContractRevert:
        """Decode raw revert data into a `ContractRevert` (or its per-name subclass).

        Args:
            data: revert data as bytes or a ``0x`` hex string; empty for a bare ``revert()``.
            contract: name of the contract that was called, used in the message. When it is
                None, the name of the contract that declares the error is used.

        Returns:
            The exception to raise (never raises itself; undecodable data gives ``"Unknown"``).
        """
        raw = _to_bytes(data)
        if len(raw) < 4:
            return ContractRevert(
                "Unknown",
                contract=contract,
                data=raw,
                message=f"{contract or 'contract'} reverted without data",
            )
        selector, body = raw[:4], raw[4:]
        try:
            if selector == ERROR_STRING_SELECTOR:
                (reason,) = abi_decode(["string"], body)
                return error_class("Error")(
                    "Error",
                    {"reason": reason},
                    contract=contract,
                    data=raw,
                    message=f"{contract or 'contract'} reverted: Error({reason!r})",
                )
            if selector == PANIC_SELECTOR:
                (code,) = abi_decode(["uint256"], body)
                what = PANIC_CODES.get(code, "unknown panic")
                return error_class("Panic")(
                    "Panic",
                    {"code": code},
                    contract=contract,
                    data=raw,
                    message=f"{contract or 'contract'} reverted: Panic(0x{code:02x}: {what})",
                )
            err = self._by_selector.get(selector)
            if err is not None:
                values = abi_decode(list(err.types), body) if err.types else ()
                values = tuple(
                    to_checksum_address(v) if t == "address" else v
                    for t, v in zip(err.types, values, strict=True)
                )
                named = dict(zip(err.names, values, strict=True))
                owners = self._contracts_by_selector.get(selector, set())
                who = contract if contract is not None else err.contract
                if contract is None and len(owners) > 1:
                    who = err.contract
                return error_class(err.name)(err.name, named, contract=who, data=raw)
        except Exception as exc:  # malformed data must never mask the original revert
            logger.debug("could not decode revert data %s: %s", raw.hex(), exc)
        return ContractRevert(
            "Unknown",
            {"selector": "0x" + selector.hex()},
            contract=contract,
            data=raw,
            message=f"{contract or 'contract'} reverted with unknown error 0x{raw.hex()}",
        )


def _to_bytes(data: bytes | str | None) -> bytes:
    if data is None:
        return b""
    if isinstance(data, (bytes, bytearray)):
        return bytes(data)
    text = data[2:] if data.startswith(("0x", "0X")) else data
    try:
        return bytes.fromhex(text)
    except ValueError:
        return b""


# The process-wide decoder: chain.artifacts registers every loaded ABI here.
DEFAULT_DECODER = ErrorDecoder()


def register_abi(contract: str, abi: Iterable[Mapping[str, Any]]) -> None:
    """Register one ABI's custom errors with the process-wide decoder."""
    DEFAULT_DECODER.register(contract, abi)


def decode_revert(data: bytes | str | None, contract: str | None = None) -> ContractRevert:
    """Decode revert data with the process-wide decoder (see `ErrorDecoder.decode`)."""
    return DEFAULT_DECODER.decode(data, contract)


def __getattr__(name: str) -> type[ContractRevert]:
    """``chain.errors.<CustomErrorName>`` resolves to that error's `ContractRevert` subclass.

    Only names declared by a compiled contract (or already created) resolve, so a typo raises
    AttributeError instead of giving a class that never matches.
    """
    if name.startswith("_") or not name[:1].isupper():
        raise AttributeError(name)
    if name in _ERROR_CLASSES or name in ("Error", "Panic"):
        return error_class(name)
    if name not in DEFAULT_DECODER.error_names:
        try:
            for register in _ERROR_SOURCES:
                register()
        except Exception as exc:  # no compiled contracts yet
            raise AttributeError(f"{name} (no compiled artifacts: {exc})") from None
    if name in DEFAULT_DECODER.error_names:
        return error_class(name)
    raise AttributeError(f"module 'chain.errors' has no attribute {name!r}")
