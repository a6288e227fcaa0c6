"""A throwaway PostgreSQL server for tests: Debian's server binaries (`initdb`, `pg_ctl` under
``/usr/lib/postgresql/<version>/bin``) run a cluster in a temporary directory, listening on a
Unix socket inside that directory only (no TCP port), with trust authentication, fsync off.

As root the binaries run as the ``postgres`` system user (initdb refuses root): the directory
is handed to that user. The index reaches a database through SQLAlchemy's
``postgresql+psycopg://`` dialect, so psycopg 3 is needed too (`pip install veritrain[postgres]`).

Run: not a script; `from tests.utils.postgres import throwaway_postgres` (the session fixture
`postgres_server` in tests/conftest.py wraps it).
"""

from __future__ import annotations

import contextlib
import glob
import importlib.util
import itertools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["PostgresServer", "missing_postgres", "server_bin_dir", "throwaway_postgres"]

SUPERUSER = "postgres"
"""The cluster's superuser (``initdb -U``); any OS user may connect as it (trust auth)."""


def server_bin_dir() -> Path | None:
    """The newest ``/usr/lib/postgresql/<major>/bin`` holding `initdb` and `pg_ctl` (Debian's
    layout; they are not on PATH there), else the directory of an `initdb` on PATH, else None."""
    found = [
        Path(d)
        for d in glob.glob("/usr/lib/postgresql/*/bin")
        if (Path(d) / "initdb").is_file() and (Path(d) / "pg_ctl").is_file()
    ]
    if found:
        return max(found, key=lambda d: int(d.parent.name) if d.parent.name.isdigit() else 0)
    on_path = shutil.which("initdb")
    if on_path and shutil.which("pg_ctl"):
        return Path(on_path).parent
    return None


def missing_postgres() -> str | None:
    """Why no throwaway server can run here (one line), or None when it can."""
    if importlib.util.find_spec("psycopg") is None:
        return "psycopg is not installed (pip install 'veritrain[postgres]')"
    if server_bin_dir() is None:
        return "no PostgreSQL server binaries (apt-get install postgresql)"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser to start PostgreSQL as the postgres user"
    return None


@dataclass
class PostgresServer:
    """A running throwaway cluster. ``socket_dir`` is its data directory (the socket lives
    there); `new_database` creates an empty database and returns its SQLAlchemy URL."""

    socket_dir: Path
    _names: Iterator[int] = field(default_factory=itertools.count)

    def url(self, database: str) -> str:
        """The ``postgresql+psycopg://`` URL of ``database`` over the Unix socket."""
        return f"postgresql+psycopg://{SUPERUSER}@/{database}?host={self.socket_dir}"

    def new_database(self, prefix: str = "t") -> str:
        """Create a fresh empty database (``<prefix><n>``) and return its URL."""
        import psycopg

        name = f"{prefix}{next(self._names)}"
        with psycopg.connect(
            host=str(self.socket_dir), user=SUPERUSER, dbname="postgres", autocommit=True
        ) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def _as_server_user(cmd: list[str]) -> list[str]:
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *cmd]
    return cmd


def _run(cmd: list[str]) -> None:
    done = subprocess.run(_as_server_user(cmd), capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:2])} failed ({done.returncode}): {done.stderr.strip()}")


@contextlib.contextmanager
def throwaway_postgres() -> Iterator[PostgresServer]:
    """Start a cluster in a new temporary directory, yield it, stop it (``pg_ctl stop -m fast``)
    and delete the directory.

    Raises:
        RuntimeError: no server binaries, or `initdb`/`pg_ctl start` failed (its stderr, and
            the server log's tail, in the message).
    """
    bin_dir = server_bin_dir()
    if bin_dir is None:
        raise RuntimeError("no PostgreSQL server binaries (apt-get install postgresql)")
    # Under the system temp dir, not pytest's (root's pytest dirs are 0700: the postgres user
    # could not reach a cluster there). mkdtemp makes it 0700, which PostgreSQL requires.
    data = Path(tempfile.mkdtemp(prefix="veritrain-pg-"))
    if os.geteuid() == 0:
        shutil.chown(data, "postgres", "postgres")
    started = False
    try:
        _run([str(bin_dir / "initdb"), "-D", str(data), "-U", SUPERUSER, "--auth=trust",
              "--no-sync", "-E", "UTF8", "--locale=C"])  # fmt: skip
        options = f"-k {data} -c listen_addresses='' -F"
        try:
            _run([str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l",
                  str(data / "server.log"), "-w", "-t", "60", "start"])  # fmt: skip
        except RuntimeError as exc:
            log = data / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{exc}\n{tail}") from exc
        started = True
        yield PostgresServer(data)
    finally:
        if started:
            subprocess.run(
                _as_server_user(
                    [str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]
                ),  # fmt: skip
                capture_output=True,
                timeout=120,
            )
        shutil.rmtree(data, ignore_errors=True)
