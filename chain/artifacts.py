"""Compiled contract artifacts: build them with Forge, load ABI + bytecode from contracts/out.

ABIs are never hand-copied: they are read from Forge's output
``contracts/out/<File>.sol/<Name>.json``. `build()` runs ``forge build`` (the npm binary in
``node_modules/.bin``) when the output is missing or older than a source file.

Usage::

    from chain.artifacts import build, load_artifact
    build()                                   # no-op when contracts/out is fresh
    art = load_artifact("JobManager")         # {"abi": [...], "bytecode": "0x..."}

Run: ``.venv/bin/python -c "import chain.artifacts as a; a.build(force=True)"``.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any, TypedDict

from chain.errors import ChainError, ChainValueError, add_error_source, register_abi

logger = logging.getLogger(__name__)

__all__ = [
    "Artifact",
    "ArtifactError",
    "repo_root",
    "out_dir",
    "find_binary",
    "needs_build",
    "build",
    "load_artifact",
    "register_all_errors",
    "PROTOCOL_CONTRACTS",
    "LinkReference",
    "link_bytecode",
]

# The contracts whose ABIs the client loads (and whose errors it decodes).
PROTOCOL_CONTRACTS: tuple[str, ...] = (
    "VeriToken",
    "StakeManager",
    "Escrow",
    "JobManager",
    "VerificationRound",
    "ArbitrationCommittee",
    "BisectionGame",
    "ShareRegistry",
    "ModelShares",
)


class ArtifactError(ChainError):
    """An artifact is missing or ``forge build`` failed."""


class LinkReference(TypedDict):
    """Where a library's address goes in unlinked bytecode: ``start`` and ``length`` in bytes."""

    start: int
    length: int


class Artifact(TypedDict):
    """One compiled contract: ``abi`` (list of ABI entries), ``bytecode`` (0x hex; unlinked
    while ``link_references`` is not empty) and ``link_references`` (``{library name: [offsets]}``
    from Forge's ``bytecode.linkReferences``, flattened over source files)."""

    abi: list[dict[str, Any]]
    bytecode: str
    link_references: dict[str, list[LinkReference]]


_build_lock = threading.Lock()
# A contract, interface or library declaration (not the word in a comment).
_DECLARES_ARTIFACT = re.compile(r"^\s*(?:abstract\s+)?(?:contract|interface|library)\s+\w+", re.M)


@functools.cache
def repo_root() -> Path:
    """Return the repository root (the directory holding ``foundry.toml``).

    Searches upward from this file, then from the working directory; ``VERITRAIN_ROOT``
    overrides both.

    Raises:
        ChainValueError: no ``foundry.toml`` was found.
    """
    env = os.environ.get("VERITRAIN_ROOT")
    if env:
        return Path(env).resolve()
    for start in (Path(__file__).resolve().parent, Path.cwd().resolve()):
        for cand in (start, *start.parents):
            if (cand / "foundry.toml").is_file() and (cand / "contracts").is_dir():
                return cand
    raise ChainValueError("repository root not found (no foundry.toml); set VERITRAIN_ROOT")


def out_dir() -> Path:
    """Forge's output directory: ``<repo>/contracts/out``, or ``$VERITRAIN_CONTRACTS_OUT``."""
    env = os.environ.get("VERITRAIN_CONTRACTS_OUT")
    if env:
        return Path(env).resolve()
    return repo_root() / "contracts" / "out"


def find_binary(name: str) -> Path:
    """Find a Foundry binary (``anvil``, ``forge``, ``cast``): PATH, then the npm package's
    platform binary (``node_modules/@foundry-rs/<name>-<platform>/bin``), then
    ``node_modules/.bin``.

    Raises:
        ArtifactError: the binary is nowhere to be found.
    """
    found = shutil.which(name)
    if found:
        return Path(found)
    try:
        local = repo_root() / "node_modules" / ".bin" / name
    except ChainValueError:
        local = None
    if local is not None and local.exists():
        # node_modules/.bin/<name> is a node wrapper that spawns the platform binary; run that
        # binary directly so signals and reaping reach the real process.
        native = sorted(
            p
            for p in (repo_root() / "node_modules" / "@foundry-rs").glob(f"{name}-*/bin/{name}")
            if os.access(p, os.X_OK)
        )
        return native[0] if len(native) == 1 else local
    raise ArtifactError(
        f"`{name}` not found on PATH nor in node_modules/.bin; run `npm ci` at the repo root"
    )


def _sources() -> list[Path]:
    root = repo_root() / "contracts"
    paths: list[Path] = []
    for sub in ("src", "script"):
        if (root / sub).is_dir():
            paths.extend((root / sub).rglob("*.sol"))
    return paths


def needs_build() -> bool:
    """True when an artifact of some ``contracts/{src,script}/**.sol`` is missing or older.

    Each source file ``X.sol`` is compared with its output folder ``contracts/out/X.sol/``.
    A stale answer only costs a ``forge build`` run, which is a fast no-op with Forge's cache.
    """
    out = out_dir()
    if not out.is_dir() or not any(out.glob("*.sol/*.json")):
        return True
    for src in _sources():
        arts = list((out / src.name).glob("*.json"))
        if not arts:
            # Files that only declare free functions/types produce no artifact: ignore them.
            if _DECLARES_ARTIFACT.search(src.read_text()):
                return True
            continue
        if src.stat().st_mtime > min(a.stat().st_mtime for a in arts):
            return True
    return False


def build(force: bool = False, timeout: float = 900.0) -> Path:
    """Run ``forge build`` when the artifacts are missing or stale.

    Args:
        force: build even when the artifacts look fresh.
        timeout: seconds allowed for the compiler (solcjs is slow).

    Returns:
        The output directory (``contracts/out``).

    Raises:
        ArtifactError: forge is missing or the build failed (its output is in the message).
    """
    with _build_lock:
        if not force and not needs_build():
            return out_dir()
        forge = find_binary("forge")
        logger.info("running forge build in %s", repo_root())
        argv = [str(forge), "build"]
        if os.environ.get("VERITRAIN_CONTRACTS_OUT"):
            argv += ["--out", str(out_dir())]
        try:
            proc = subprocess.run(
                argv,
                cwd=repo_root(),
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise ArtifactError(f"forge build timed out after {timeout:.0f} s") from exc
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr)[-4000:]
            raise ArtifactError(f"forge build failed (exit {proc.returncode}):\n{tail}")
        _load_cached.cache_clear()
        return out_dir()


def _artifact_path(name: str) -> Path:
    out = out_dir()
    direct = out / f"{name}.sol" / f"{name}.json"
    if direct.is_file():
        return direct
    # A contract declared in a file of another name: any <File>.sol/<name>.json.
    matches = sorted(out.glob(f"*.sol/{name}.json")) if out.is_dir() else []
    if matches:
        return matches[0]
    raise ArtifactError(
        f"artifact {name} not found under {out}; run `./node_modules/.bin/forge build`"
    )


@functools.cache
def _load_cached(name: str, mtime: float) -> Artifact:
    path = _artifact_path(name)
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ArtifactError(f"cannot read artifact {path}: {exc}") from exc
    abi = data.get("abi")
    bytecode = data.get("bytecode", {})
    code = bytecode.get("object", "") if isinstance(bytecode, dict) else str(bytecode)
    if not isinstance(abi, list):
        raise ArtifactError(f"artifact {path} has no ABI")
    if code and not code.startswith("0x"):
        code = "0x" + code
    refs: dict[str, list[LinkReference]] = {}
    raw_refs = bytecode.get("linkReferences", {}) if isinstance(bytecode, dict) else {}
    for libraries in raw_refs.values():
        for library, offsets in libraries.items():
            refs.setdefault(library, []).extend(
                LinkReference(start=int(o["start"]), length=int(o["length"])) for o in offsets
            )
    register_abi(name, abi)
    return Artifact(abi=abi, bytecode=code, link_references=refs)


def link_bytecode(
    bytecode: str, link_references: dict[str, list[LinkReference]], libraries: dict[str, str]
) -> str:
    """Write each library's address into unlinked creation bytecode at its link references.

    The offsets come from the artifact (``bytecode.linkReferences``), never from searching the
    ``__$<hash>$__`` placeholders, so a placeholder-like byte string elsewhere is left alone.

    Args:
        bytecode: 0x-hex creation bytecode with placeholders.
        link_references: ``{library name: [{"start", "length"}]}`` (`Artifact`).
        libraries: ``{library name: deployed 0x address}``; one per referenced library.

    Returns:
        The linked 0x-hex bytecode (no placeholder left).

    Raises:
        ChainValueError: a referenced library has no address, an address is not 20 bytes,
            a reference is not 20 bytes long or lies outside the bytecode, or a reference does
            not point at a ``__$...$__`` placeholder.
    """
    code = bytecode[2:] if bytecode.startswith("0x") else bytecode
    for library, offsets in link_references.items():
        if library not in libraries:
            raise ChainValueError(f"link: no address given for library {library}")
        address = libraries[library].lower().removeprefix("0x")
        if len(address) != 40:
            raise ChainValueError(f"link: {library} address {libraries[library]!r} is not 20 bytes")
        for ref in offsets:
            lo, hi = 2 * ref["start"], 2 * (ref["start"] + ref["length"])
            placeholder = code[lo:hi]
            if ref["length"] != 20 or hi > len(code):
                raise ChainValueError(f"link: bad reference {ref} for {library}")
            if not (placeholder.startswith("__$") and placeholder.endswith("$__")):
                raise ChainValueError(
                    f"link: {library} reference at byte {ref['start']} is not a placeholder"
                )
            code = code[:lo] + address + code[hi:]
    return "0x" + code


def load_artifact(name: str) -> Artifact:
    """Load one contract's ABI and creation bytecode, registering its custom errors.

    Args:
        name: contract name, e.g. ``"JobManager"``.

    Returns:
        ``{"abi": [...], "bytecode": "0x..."}`` (bytecode is ``"0x"`` for interfaces).

    Raises:
        ArtifactError: the artifact does not exist (run `build()`) or cannot be parsed.
    """
    path = _artifact_path(name)
    return _load_cached(name, path.stat().st_mtime)


def register_all_errors() -> int:
    """Register the custom errors of every artifact in contracts/out (for revert decoding).

    Returns:
        The number of artifacts read.

    Raises:
        ArtifactError: contracts/out does not exist.
    """
    out = out_dir()
    if not out.is_dir():
        raise ArtifactError(f"{out} does not exist; run `./node_modules/.bin/forge build`")
    count = 0
    for path in sorted(out.glob("*.sol/*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        abi = data.get("abi")
        if isinstance(abi, list):
            register_abi(path.stem, abi)
            count += 1
    return count


add_error_source(register_all_errors)  # `chain.errors.<Name>` may look names up here
