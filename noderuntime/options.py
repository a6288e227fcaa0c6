"""Options and connection helpers shared by every `veritrain` sub-command.

Every command that talks to the chain takes the same options, declared once here:
``--rpc-url``, ``--deployment`` (a manifest written by ``veritrain devnet`` / ``deploy``), and
one key source: ``--keystore FILE`` (encrypted; password from ``--password-env`` or a prompt),
``--key-env NAME`` (a private key in the environment) or, on a devnet only, ``--dev-account N``
(Anvil's public dev accounts). Keys are never printed or logged.

Used as: ``client = connect(rpc_url, deployment, keys)`` inside a command.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from chain.client import ChainClient

__all__ = [
    "DEVNET_CHAIN_IDS",
    "UINT32_MAX",
    "UINT64_MAX",
    "KeySource",
    "RpcUrlOpt",
    "DeploymentOpt",
    "KeystoreOpt",
    "PasswordEnvOpt",
    "KeyEnvOpt",
    "DevAccountOpt",
    "JsonOpt",
    "VerboseOpt",
    "ThreadsOpt",
    "DeviceOpt",
    "ModelsOpt",
    "MaxJobsOpt",
    "WorkersOpt",
    "AutoStakeOpt",
    "StakeOpt",
    "ResetStateOpt",
    "MetricsPortOpt",
    "MetricsBindOpt",
    "configure_node",
    "connect",
    "connect_reader",
    "connect_signer",
    "emit_json",
    "setup_logging",
    "to_wei",
    "token_amount",
    "check_address",
    "check_rpc_url",
    "check_models",
    "UINT256_MAX",
]

DEVNET_CHAIN_IDS = frozenset({31337})


def check_rpc_url(url: str) -> str:
    """Refuse an RPC URL that is not ``http(s)://host[:port]`` (before any connection).

    Args:
        url: the ``--rpc-url`` value.

    Returns:
        ``url`` unchanged.

    Raises:
        typer.BadParameter: another scheme, no host, or a port outside 1..65535.
    """
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise typer.BadParameter(f"not a URL: {url!r} ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise typer.BadParameter(f"expected http(s)://host[:port], got {url!r}")
    if port == 0:
        raise typer.BadParameter(f"port 0 in {url!r}")
    return url


RpcUrlOpt = Annotated[
    str,
    typer.Option(
        "--rpc-url",
        envvar="VERITRAIN_RPC_URL",
        callback=check_rpc_url,
        help="JSON-RPC endpoint of the chain (http or https).",
    ),
]
DeploymentOpt = Annotated[
    Path | None,
    typer.Option(
        "--deployment",
        envvar="VERITRAIN_DEPLOYMENT",
        help="Deployment manifest (default: deployments/<chain id>.json).",
    ),
]
KeystoreOpt = Annotated[
    Path | None,
    typer.Option("--keystore", envvar="VERITRAIN_KEYSTORE", help="Encrypted keystore file."),
]
PasswordEnvOpt = Annotated[
    str,
    typer.Option(
        "--password-env", help="Environment variable holding the keystore password (else prompt)."
    ),
]
KeyEnvOpt = Annotated[
    str | None,
    typer.Option("--key-env", help="Environment variable holding a 0x private key."),
]
DevAccountOpt = Annotated[
    int | None,
    typer.Option(
        "--dev-account",
        min=0,
        max=2**31 - 1,
        help="Index of an Anvil dev account (devnet chain id 31337 only).",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
VerboseOpt = Annotated[int, typer.Option("-v", "--verbose", count=True, help="More logging.")]
ThreadsOpt = Annotated[
    int | None,
    typer.Option(
        "--threads",
        envvar="VERITRAIN_THREADS",
        min=1,
        help="CPU threads for repro jobs (default: torch's count; their results do not depend "
        "on it). A native job runs with the count its spec pins.",
    ),
]
DeviceOpt = Annotated[
    str,
    typer.Option(
        "--device",
        envvar="VERITRAIN_DEVICE",
        help="Where repro jobs run: auto (CUDA when there is a GPU), cpu or cuda. Their results "
        "do not depend on it; a native job runs on the device its spec pins.",
    ),
]
ModelsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--model",
        help="Claim only jobs of this model id (repeat for several; default: any model).",
    ),
]
MaxJobsOpt = Annotated[
    int,
    typer.Option(
        "--max-jobs",
        min=0,
        help="Jobs held at once (claimed and not yet settled); 0 claims none and keeps serving "
        "the checkpoints of past jobs (a solver leaving a run: its counted work stays available).",
    ),
]
WorkersOpt = Annotated[
    int,
    typer.Option(
        "--workers",
        envvar="VERITRAIN_WORKERS",
        min=1,
        help="Train each job with W data-parallel processes (each takes whole micro-batches of "
        "the job's spec; the checkpoints are the bytes of one process). Clamped to the job's "
        "micro-batches: a job with one trains on one process. --threads is shared among them.",
    ),
]


HandOffOpt = Annotated[
    bool,
    typer.Option(
        "--hand-off/--no-hand-off",
        help="Hand this verifier's seals and reveals to the job's solver, which submits every "
        "seat's in one transaction (no gas for this account); when one is not on chain 20 s "
        "later (sooner near the deadline) the verifier sends its own. --no-hand-off: always "
        "send its own commitVerdicts and revealVerdicts.",
    ),
]
AutoStakeOpt = Annotated[
    bool,
    typer.Option(
        "--auto-stake/--no-auto-stake",
        help="When this account's stake for the node's role is below the minimum (never "
        "staked, or slashed), stake --stake VTT from its balance (on a devnet, minted with the "
        "faucet first). Never while an unbond of the role is pending. --no-auto-stake: the node "
        "restores no stake and waits for `veritrain stake`; a verifier still stakes, from its "
        "balance, what its free stake lacks of the reject bonds a rejecting reveal locks "
        "(without them the reveal reverts and the seat is slashed for a missed verdict).",
    ),
]
StakeOpt = Annotated[
    int | None,
    typer.Option(
        "--stake",
        metavar="AMOUNT",
        parser=lambda value: token_amount(positive=True)(value),
        help="Stake (VTT, or e.g. 1000wei) that auto-staking restores (default: 4 times the "
        "role's per-job lock, at least the minimum stake).",
    ),
]
ResetStateOpt = Annotated[
    bool,
    typer.Option(
        "--reset-state",
        help="If --data-dir holds state of another chain or deployment (e.g. a restarted "
        "devnet), move it to <data-dir>/stale/ and start afresh instead of refusing to start.",
    ),
]
MirrorOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--mirror",
        metavar="URL",
        help="Another node's mirror (http://host:port; repeat): a state a job's solver does not "
        "serve (a run's counted final, a segment start) is asked of each in turn, and only bytes "
        "of the right hash are taken (docs/RUNS.md).",
    ),
]
ServePortOpt = Annotated[
    int | None,
    typer.Option(
        "--serve-port",
        min=1,
        max=65535,
        help="Serve the states this node proved, by hash, on this port (GET /mirror/states/HASH; "
        "default: not served).",
    ),
]
ServeBindOpt = Annotated[
    str, typer.Option("--serve-bind", help="Interface the mirror binds (with --serve-port).")
]
MetricsPortOpt = Annotated[
    int,
    typer.Option(
        "--metrics-port",
        min=0,
        max=65535,
        help="Serve Prometheus metrics at http://BIND:PORT/metrics (docs/OPERATIONS.md; "
        "default 0: not served).",
    ),
]
MetricsBindOpt = Annotated[
    str,
    typer.Option("--metrics-bind", help="Interface the metrics bind (with --metrics-port)."),
]


@dataclass(frozen=True)
class KeySource:
    """Where a command's signing key comes from (exactly one source is used).

    Attributes:
        keystore: encrypted keystore path (preferred).
        password_env: variable holding the keystore password; unset -> prompt.
        key_env: variable holding a 0x-hex private key.
        dev_account: Anvil dev account index; refused on chains other than a devnet.
    """

    keystore: Path | None = None
    password_env: str = "VERITRAIN_KEYSTORE_PASSWORD"
    key_env: str | None = None
    dev_account: int | None = None


def setup_logging(verbose: int = 0, *, json_output: bool = False) -> None:
    """Configure logging (to stderr) for a command from its ``-v`` count: INFO by default,
    WARNING for a command printing ``--json`` results, DEBUG with ``-vv``."""
    from noderuntime import setup_logging as configure

    level = logging.WARNING if verbose == 0 and json_output else logging.INFO
    configure(level=logging.DEBUG if verbose >= 2 else level)


def _load_account(keys: KeySource, chain_id: int) -> Any:
    from chain.anvil import derive_dev_key
    from chain.keys import KeyLoadError, load_account

    if keys.dev_account is not None:
        if chain_id not in DEVNET_CHAIN_IDS:
            raise typer.BadParameter(
                f"--dev-account is for a devnet (chain id 31337), this chain is {chain_id}: "
                "use --keystore or --key-env",
                param_hint="--dev-account",
            )
        from eth_account import Account

        return Account.from_key(derive_dev_key(keys.dev_account))
    try:
        return load_account(
            keystore=keys.keystore,
            password_env=keys.password_env,
            key_env=keys.key_env or ("VERITRAIN_PRIVATE_KEY" if keys.keystore is None else None),
        )
    except KeyLoadError as exc:
        raise typer.BadParameter(str(exc), param_hint="--keystore/--key-env") from exc


def connect(
    rpc_url: str, deployment: Path | None, keys: KeySource, *, need_deployment: bool = True
) -> ChainClient:
    """Build a `ChainClient` from the shared options.

    Args:
        rpc_url: JSON-RPC endpoint.
        deployment: manifest path; None loads ``deployments/<chain id>.json``.
        keys: the key source.
        need_deployment: False for commands that deploy (no manifest yet).

    Returns:
        A client signing with the chosen key, bound to the deployment.

    Raises:
        typer.BadParameter: a missing manifest, a missing key, or a dev key on a non-devnet.
        chain.errors.RpcUnavailable: the endpoint cannot be reached.
    """
    from chain.client import ChainClient
    from chain.errors import ChainValueError
    from chain.manifest import load_manifest

    probe = ChainClient(rpc_url, "0x" + "11" * 32)  # read-only probe for the chain id
    account = _load_account(keys, probe.chain_id)
    dep = None
    if need_deployment:
        try:
            dep = load_manifest(deployment if deployment is not None else probe.chain_id)
        except ChainValueError as exc:
            raise typer.BadParameter(
                f"{exc} (run `veritrain devnet` or `veritrain deploy` first)",
                param_hint="--deployment",
            ) from exc
        if dep.chain_id != probe.chain_id:
            raise typer.BadParameter(
                f"manifest is for chain {dep.chain_id}, the RPC serves chain {probe.chain_id}",
                param_hint="--deployment",
            )
    return ChainClient(rpc_url, account, dep, w3=probe.w3)


def connect_signer(
    rpc_url: str,
    deployment: Path | None,
    keystore: Path | None,
    password_env: str,
    key_env: str | None,
    dev_account: int | None,
) -> ChainClient:
    """`connect` from the shared key options of a transacting command (`KeystoreOpt`,
    `PasswordEnvOpt`, `KeyEnvOpt`, `DevAccountOpt`).

    Raises:
        typer.BadParameter, chain.errors.RpcUnavailable: as `connect`.
    """
    keys = KeySource(
        keystore=keystore, password_env=password_env, key_env=key_env, dev_account=dev_account
    )
    return connect(rpc_url, deployment, keys)


def connect_reader(rpc_url: str, deployment: Path | None) -> ChainClient:
    """A client for read-only commands, bound to the deployment: its throwaway key never signs.

    Args:
        rpc_url: JSON-RPC endpoint.
        deployment: manifest path; None loads ``deployments/<chain id>.json``.

    Raises:
        typer.BadParameter: a missing or unreadable manifest.
        chain.errors.RpcUnavailable: the endpoint cannot be reached.
    """
    from eth_account import Account

    from chain.client import ChainClient
    from chain.errors import ChainValueError
    from chain.manifest import load_manifest

    probe = ChainClient(rpc_url, Account.create())
    try:
        source = deployment if deployment is not None else probe.chain_id
        probe.use_deployment(load_manifest(source))
    except ChainValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="'--deployment'") from exc
    return probe


def configure_node(
    node: Any,
    *,
    auto_stake: bool,
    stake: int | None,
    reset_state: bool,
    mirrors: list[str] | None = None,
    serve_port: int | None = None,
    serve_bind: str = "127.0.0.1",
    metrics_port: int = 0,
    metrics_bind: str = "127.0.0.1",
) -> Any:
    """Apply the shared node options (`AutoStakeOpt`, `StakeOpt` in wei, `ResetStateOpt`,
    `MirrorOpt`, `ServePortOpt`, `ServeBindOpt`, `MetricsPortOpt`, `MetricsBindOpt`) to a built
    node (a `noderuntime.NodeBase`) and return it.

    Raises:
        typer.BadParameter: a --mirror that is not an http(s) URL.
    """
    if stake is not None:
        node.stake_amount = stake
    node.auto_stake = auto_stake
    node.reset_state = reset_state
    node.mirrors.extend(check_mirrors(mirrors))
    node.serve_port = serve_port
    node.serve_host = serve_bind
    node.metrics_port = metrics_port or None
    node.metrics_host = metrics_bind
    return node


def check_mirrors(mirrors: list[str] | None) -> list[str]:
    """The --mirror URLs, without a trailing slash.

    Raises:
        typer.BadParameter: one is not an http(s) URL.
    """
    out = []
    for url in mirrors or []:
        if not url.startswith(("http://", "https://")):
            raise typer.BadParameter(f"{url!r} is not an http(s) URL", param_hint="'--mirror'")
        out.append(url.rstrip("/"))
    return out


def emit_json(payload: Any) -> None:
    """Write one JSON document to stdout (for `--json`)."""
    typer.echo(json.dumps(payload, indent=2, sort_keys=True, default=str))


UINT32_MAX = 2**32 - 1
"""The largest uint32 (a job's steps and checkpoint interval on chain)."""
UINT64_MAX = 2**64 - 1
"""The largest uint64 (a job's seed)."""
UINT256_MAX = 2**256 - 1
DEFAULT_RPC = "http://127.0.0.1:8545"
"""The devnet's JSON-RPC endpoint, every command's default `--rpc-url`."""
TOKEN_DECIMALS = 18


def to_wei(amount: str, *, positive: bool = False) -> int:
    """Parse a token amount: ``"12.5"`` (tokens, 18 decimals) or ``"1000wei"``.

    Args:
        amount: the text given on the command line.
        positive: refuse zero too.

    Returns:
        The amount in wei (0 <= wei <= 2**256 - 1).

    Raises:
        typer.BadParameter: not a finite number, negative (or zero with ``positive``), finer
            than 1 wei (more than 18 decimals), or above uint256.
    """
    from decimal import Decimal, InvalidOperation

    text = amount.strip().lower()
    try:
        if text.endswith("wei"):
            value = int(text[:-3], 10)
        else:
            tokens = Decimal(text)
            if not tokens.is_finite():
                raise ValueError("not finite")
            if tokens.adjusted() > 80:  # far above uint256: refuse before scaling
                raise typer.BadParameter(f"token amount above 2**256 - 1 wei: {amount!r}")
            scaled = tokens.scaleb(TOKEN_DECIMALS)
            if scaled != scaled.to_integral_value():
                raise typer.BadParameter(
                    f"token amount finer than 1 wei (at most 18 decimals): {amount!r}"
                )
            value = int(scaled)
    except (InvalidOperation, ValueError):
        raise typer.BadParameter(
            f"not a token amount: {amount!r} (use e.g. 100, 5.5 or 1000wei)"
        ) from None
    if value < 0 or (positive and value == 0):
        raise typer.BadParameter(
            f"token amount must be {'> 0' if positive else '>= 0'}: {amount!r}"
        )
    if value > UINT256_MAX:
        raise typer.BadParameter(f"token amount above 2**256 - 1 wei: {amount!r}")
    return value


def token_amount(*, positive: bool = True) -> Callable[[Any], int]:
    """A Typer ``parser=`` for token amounts: the parameter's value is an int in wei.

    Args:
        positive: refuse zero.

    Returns:
        ``parse(value) -> wei`` accepting the command-line text (see `to_wei`) or an int default
        already in wei; it raises ValueError, which click reports against the parameter.
    """

    def parse(value: Any) -> int:
        if isinstance(value, int):
            return value
        try:
            return to_wei(str(value), positive=positive)
        except typer.BadParameter as exc:
            raise ValueError(exc.message) from None

    return parse


def check_models(models: list[str] | None) -> list[str]:
    """Refuse an empty or blank ``--model`` name (before any connection).

    Returns:
        The names, stripped; empty when none was given.

    Raises:
        typer.BadParameter: a blank name.
    """
    names = [m.strip() for m in models or []]
    if any(not m for m in names):
        raise typer.BadParameter("a model id must not be empty", param_hint="'--model'")
    return names


def check_address(value: str | None) -> str | None:
    """Refuse a value that is not a 20-byte 0x-hex address, or a mixed-case one whose EIP-55
    checksum fails (`veritrain.hexutil.checksum_address`); return it checksummed.

    Raises:
        typer.BadParameter: not an address, or a bad checksum (one line).
    """
    if value is None:
        return None
    from veritrain.hexutil import checksum_address

    try:
        return checksum_address(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
