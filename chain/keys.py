"""Private keys for node accounts: encrypted keystores (eth-account) or the environment.

Keys never appear in logs or exception messages. Typical use::

    create_keystore("keys/solver.json", private_key, password)     # once
    account = load_account(keystore="keys/solver.json", password_env="SOLVER_KEY_PASSWORD")
    account = load_account(key_env="SOLVER_PRIVATE_KEY")            # devnet shortcut

Run: ``.venv/bin/python -m chain.keys new keys/me.json [--password-env VAR]`` (the password
from VAR, else asked twice on a terminal; refuses an existing file; prints the address only),
``.venv/bin/python -m chain.keys address keys/me.json``.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn, cast

from eth_account import Account
from eth_account.signers.local import LocalAccount
from eth_utils.address import to_checksum_address

from chain.errors import ChainValueError
from veritrain.store import atomic_write_bytes

__all__ = [
    "KeyLoadError",
    "create_keystore",
    "load_keystore",
    "load_account",
    "account_from_env",
    "new_account",
    "keystore_address",
    "main",
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
    # a fresh 0600 temp file (never through a link planted at its name), fsynced, renamed
    atomic_write_bytes(path, json.dumps(encrypted).encode())
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


def _new_password(password_env: str | None) -> str:
    """The new keystore's password: from `password_env`, else asked twice on a terminal."""
    if password_env:
        password = os.environ.get(password_env)
        if password is None:
            raise KeyLoadError(f"{password_env} is not set (it should hold the new password)")
    elif not sys.stdin.isatty():
        raise KeyLoadError(
            "no terminal to ask for a password on: put it in a variable and pass --password-env VAR"
        )
    else:
        password = getpass.getpass("new password: ")
        if password != getpass.getpass("repeat: "):
            raise KeyLoadError("the passwords differ")
    if not password:
        raise KeyLoadError("the password is empty: a keystore needs one")
    return password


def keystore_address(path: str | Path) -> str:
    """The checksummed address a V3 keystore file names (no password needed).

    Raises:
        KeyLoadError: the file is missing, unreadable or not a keystore.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text())
        return str(to_checksum_address("0x" + str(data["address"]).removeprefix("0x")))
    except FileNotFoundError:
        raise KeyLoadError(f"no keystore {path}") from None
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        raise KeyLoadError(f"{path} is not a keystore (JSON with an address)") from None


class _OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        """Print ``error: <message> (see '<prog> --help')`` and exit 2 (no usage block)."""
        self.exit(2, f"error: {message} (see '{self.prog} --help')\n")


def main(argv: list[str] | None = None) -> int:
    """`python -m chain.keys new PATH [--password-env VAR]` writes a fresh key's keystore
    (never over an existing file) and prints its address; `address PATH` prints a keystore's.

    Bad input (an existing file, no password, a missing or malformed keystore) is one line on
    stderr and exit status 1; a malformed command line (a missing path, an unknown command) is
    one line and exit status 2. The key itself is never printed.

    Returns:
        The exit status.
    """
    parser = _OneLineParser(
        prog="python -m chain.keys", description="create or inspect an encrypted keystore"
    )
    sub = parser.add_subparsers(dest="cmd", required=True, metavar="{new,address}")
    new = sub.add_parser("new", help="generate a key and write an encrypted keystore")
    new.add_argument("path")
    new.add_argument(
        "--password-env", help="variable holding the password (default: asked on the terminal)"
    )
    show = sub.add_parser("address", help="print a keystore's address")
    show.add_argument("path")
    ns = parser.parse_args(argv)
    try:
        if ns.cmd == "new":
            path = Path(ns.path)
            if path.exists():  # checked before the prompt, and again when writing
                raise KeyLoadError(
                    f"keystore {path} already exists: choose another path (a key is never "
                    "overwritten)"
                )
            password = _new_password(ns.password_env)
            acct = new_account()
            create_keystore(path, acct.key, password)
            print(acct.address)  # noqa: T201
        else:
            print(keystore_address(ns.path))  # noqa: T201
    except (KeyLoadError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)  # noqa: T201
        return 1
    except KeyboardInterrupt:
        print("error: interrupted; nothing written", file=sys.stderr)  # noqa: T201
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
