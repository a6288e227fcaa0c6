"""Private keys for node accounts: encrypted keystores (eth-account) or the environment.

Keys never appear in logs or exception messages. Typical use::

    create_keystore("keys/solver.json", private_key, password)     # once
    account = load_account(keystore="keys/solver.json", password_env="SOLVER_KEY_PASSWORD")
    account = load_account(key_env="SOLVER_PRIVATE_KEY")            # devnet shortcut

Run: ``.venv/bin/python -m chain.keys new keys/me.json`` (prompts for a password, prints the
address only).
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any, cast

from eth_account import Account
from eth_account.signers.local import LocalAccount

from chain.errors import ChainValueError

__all__ = [
    "KeyLoadError",
    "create_keystore",
    "load_keystore",
    "load_account",
    "account_from_env",
    "new_account",
]


class KeyLoadError(ChainValueError):
    """A key could not be loaded (missing file or variable, wrong password, bad format)."""


def new_account() -> LocalAccount:
    """A fresh random account (os.urandom entropy)."""
    account: LocalAccount = Account.create()
    return account


def create_keystore(
    path: str | Path,
    private_key: str | bytes,
    password: str,
    *,
    overwrite: bool = False,
    iterations: int | None = None,
) -> Path:
    """Encrypt a private key into a V3 keystore JSON file (scrypt), mode 0600.

    Args:
        path: destination file.
        private_key: 0x-hex string or 32 raw bytes.
        password: encryption password.
        overwrite: replace an existing file.
        iterations: scrypt work factor n (a power of two); None uses eth-account's default
            (2**18, about a second). Lower it only for tests.

    Returns:
        The keystore path.

    Raises:
        KeyLoadError: the file exists (and ``overwrite`` is False) or the key is malformed.
    """
    path = Path(path)
    if path.exists() and not overwrite:
        raise KeyLoadError(f"keystore {path} already exists")
    try:
        encrypted = Account.encrypt(cast(Any, private_key), password, iterations=iterations)
    except (ValueError, TypeError):
        raise KeyLoadError("malformed private key") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, stat.S_IRUSR | stat.S_IWUSR)
    with os.fdopen(fd, "w") as fh:
        json.dump(encrypted, fh)
    tmp.replace(path)
    return path


def load_keystore(
    path: str | Path, password: str | None = None, password_env: str | None = None
) -> LocalAccount:
    """Decrypt a keystore file.

    Args:
        path: keystore JSON file.
        password: the password; when None it is read from ``password_env``, else prompted for
            on the terminal.
        password_env: name of an environment variable holding the password.

    Raises:
        KeyLoadError: missing file, unreadable JSON, no password available, or wrong password.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise KeyLoadError(f"keystore {path} not found") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise KeyLoadError(f"keystore {path} unreadable: {exc}") from None
    if password is None and password_env:
        password = os.environ.get(password_env)
    if password is None and not sys.stdin.isatty():
        # getpass would fall back to an echoing read with several lines of warnings
        raise KeyLoadError(
            f"no password for {path}: set {password_env or 'a password variable'} "
            "(no terminal to prompt on)"
        )
    if password is None:
        try:
            password = getpass.getpass(f"password for {path.name}: ")
        except (EOFError, OSError):
            raise KeyLoadError(
                f"no password for {path} (set {password_env or 'a password env'})"
            ) from None
    try:
        key = Account.decrypt(data, password)
    except ValueError:
        raise KeyLoadError(f"wrong password for keystore {path}") from None
    account: LocalAccount = Account.from_key(key)
    return account


def account_from_env(key_env: str) -> LocalAccount:
    """Load a 0x-hex private key from environment variable ``key_env``.

    Raises:
        KeyLoadError: the variable is unset or not a valid key (its value is never echoed).
    """
    raw = os.environ.get(key_env)
    if not raw:
        raise KeyLoadError(f"environment variable {key_env} is not set")
    try:
        account: LocalAccount = Account.from_key(raw.strip())
        return account
    except (ValueError, TypeError):
        raise KeyLoadError(f"{key_env} does not hold a valid private key") from None


def load_account(
    *,
    keystore: str | Path | None = None,
    password: str | None = None,
    password_env: str | None = None,
    key_env: str | None = None,
) -> LocalAccount:
    """Load an account from a keystore (preferred) or a private key in the environment.

    Args:
        keystore: keystore file; when given, it wins over ``key_env``.
        password: keystore password (else ``password_env``, else a prompt).
        password_env: environment variable holding the keystore password.
        key_env: environment variable holding a 0x-hex private key.

    Raises:
        KeyLoadError: nothing to load from, or loading failed.
    """
    if keystore is not None:
        return load_keystore(keystore, password, password_env)
    if key_env is not None:
        return account_from_env(key_env)
    raise KeyLoadError("no key source: pass a keystore path or a key environment variable")


def _main() -> None:  # pragma: no cover - manual entry point
    parser = argparse.ArgumentParser(description="create or inspect an encrypted keystore")
    sub = parser.add_subparsers(dest="cmd", required=True)
    new = sub.add_parser("new", help="generate a key and write an encrypted keystore")
    new.add_argument("path")
    show = sub.add_parser("address", help="print a keystore's address")
    show.add_argument("path")
    ns = parser.parse_args()
    if ns.cmd == "new":
        pw = getpass.getpass("new password: ")
        if pw != getpass.getpass("repeat: "):
            raise SystemExit("passwords differ")
        acct = new_account()
        create_keystore(ns.path, acct.key, pw)
        print(acct.address)  # noqa: T201
    else:
        data = json.loads(Path(ns.path).read_text())
        print("0x" + data.get("address", "?"))  # noqa: T201


if __name__ == "__main__":  # pragma: no cover
    _main()
