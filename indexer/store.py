"""`Index`: the index database, opened, migrated and bound to one deployment.

    index = Index.open("sqlite:///index.sqlite", binding)   # runs the Alembic migrations
    with index.session() as s: ...

The database URL is any SQLAlchemy URL (``sqlite:///FILE``, ``sqlite://`` in memory,
``postgresql+psycopg://...`` with the extra ``veritrain[postgres]``); the schema comes from the
migrations shipped in `indexer/migrations` (no alembic.ini at run time). An index is bound to a
`Binding` (chain id, deployment addresses, the deployment block's hash): opening it for another
chain or deployment raises `IndexMismatch` unless ``reset=True``, which empties it first.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, delete, event, inspect, select
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from chain.types import ChainIdentity
from indexer.errors import IndexError_, IndexMismatch
from indexer.models import Base, Meta

__all__ = ["Binding", "Index", "MIGRATIONS_DIR"]

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
"""The Alembic script directory shipped in the package."""


@dataclass(frozen=True)
class Binding:
    """What an index belongs to: a chain, a deployment and its first block.

    Attributes:
        chain_id: EIP-155 chain id.
        addresses: deployment key -> checksummed address (`ContractAddresses`, Nones left out).
        deploy_block: the deployment's first block (scans start there).
        deploy_block_hash: that block's hash (``0x`` hex): another chain with the same id and
            addresses (a restarted devnet) has another.
    """

    chain_id: int
    addresses: dict[str, str]
    deploy_block: int
    deploy_block_hash: str

    @classmethod
    def of(cls, identity: ChainIdentity, addresses: dict[str, str]) -> Binding:
        """The binding of a live `chain.types.ChainIdentity` and the deployment's addresses."""
        return cls(identity.chain_id, addresses, identity.block, identity.block_hash)

    def describe(self) -> str:
        """One line naming the chain and deployment (`chain.types.ChainIdentity.describe`)."""
        return ChainIdentity(
            chain_id=self.chain_id,
            deployment=self.addresses.get("job_manager", "?"),
            block=self.deploy_block,
            block_hash=self.deploy_block_hash,
        ).describe()


def _engine(url: str) -> Engine:
    try:
        if url in ("sqlite://", "sqlite:///:memory:"):
            engine = create_engine(
                url, connect_args={"check_same_thread": False}, poolclass=StaticPool
            )
        elif url.startswith("sqlite"):
            engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        else:
            engine = create_engine(url, pool_pre_ping=True)
    except ImportError as exc:  # the URL's driver is not installed
        hint = " (pip install 'veritrain[postgres]')" if url.startswith("postgresql") else ""
        raise IndexError_(
            f"cannot use the database URL {url!r}: its driver is missing: "
            f"{(str(exc).splitlines() or [''])[0]}{hint}"
        ) from exc
    except (ArgumentError, NoSuchModuleError, ValueError) as exc:
        raise IndexError_(f"cannot use the database URL {url!r}: {exc}") from exc
    if engine.dialect.name == "sqlite":

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")  # readers (the dashboard) never block
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

    return engine


def upgrade(engine: Engine) -> None:
    """Run the shipped Alembic migrations up to head on ``engine`` (programmatically)."""
    logging.getLogger("alembic").setLevel(logging.WARNING)  # no plugin/context lines per open
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")


class Index:
    """An open index database (thread-safe: one session per unit of work).

    Use `Index.open`. Attributes: ``engine`` (SQLAlchemy), ``url``, ``binding``.
    """

    def __init__(self, engine: Engine, url: str, binding: Binding | None) -> None:
        self.engine = engine
        self.url = url
        self.binding = binding
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        self.write_lock = threading.Lock()
        """Held by the indexer while it writes (SQLite has one writer)."""

    @classmethod
    def open(cls, url: str, binding: Binding | None = None, *, reset: bool = False) -> Index:
        """Open (creating and migrating) the index at ``url``.

        Args:
            url: SQLAlchemy database URL.
            binding: the deployment this index must belong to; None opens a bound index read-
                only as it is (the dashboard without a chain).
            reset: empty an index bound to another deployment instead of refusing it.

        Raises:
            IndexError_: the URL is unusable or the database cannot be reached or migrated.
            IndexMismatch: the index belongs to another chain or deployment (and not reset).
        """
        engine = _engine(url)
        try:
            upgrade(engine)
        except OperationalError as exc:
            raise IndexError_(
                f"cannot open the index database {url!r}: {str(exc.orig).splitlines()[0]}"
            ) from exc
        except SQLAlchemyError as exc:
            raise IndexError_(f"cannot migrate the index database {url!r}: {exc}") from exc
        index = cls(engine, url, binding)
        stored = index.stored_binding()
        if binding is None:
            index.binding = stored
            return index
        if stored is not None and stored != binding:
            if not reset:
                raise IndexMismatch(
                    f"the index {url} was built for {stored.describe()}, not for "
                    f"{binding.describe()}: use another --db or --reset"
                )
            index.clear()
        if stored is None or stored != binding:
            index._bind(binding)
        return index

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session committed on success, rolled back on error."""
        with self._sessions() as s, s.begin():
            yield s

    def reader(self) -> Session:
        """A session for reads (close it; the dashboard uses one per request)."""
        return self._sessions()

    # ---------------------------------------------------------------------- meta

    def get_meta(self, key: str, session: Session | None = None) -> str | None:
        """A meta value (None when unset)."""
        if session is not None:
            row = session.get(Meta, key)
            return None if row is None else row.value
        with self.reader() as s:
            row = s.get(Meta, key)
            return None if row is None else row.value

    @staticmethod
    def set_meta(session: Session, key: str, value: str) -> None:
        """Set a meta value in ``session``."""
        session.merge(Meta(key=key, value=value))

    def stored_binding(self) -> Binding | None:
        """The binding recorded in the database (None for a fresh index)."""
        with self.reader() as s:
            rows = {m.key: m.value for m in s.scalars(select(Meta))}
        if "chain_id" not in rows:
            return None
        return Binding(
            chain_id=int(rows["chain_id"]),
            addresses=json.loads(rows["addresses"]),
            deploy_block=int(rows["deploy_block"]),
            deploy_block_hash=rows["deploy_block_hash"],
        )

    def cursor(self) -> int | None:
        """The next block to scan (None before the first scan)."""
        value = self.get_meta("cursor")
        return None if value is None else int(value)

    def _bind(self, binding: Binding) -> None:
        with self.session() as s:
            self.set_meta(s, "chain_id", str(binding.chain_id))
            self.set_meta(s, "addresses", json.dumps(binding.addresses, sort_keys=True))
            self.set_meta(s, "deploy_block", str(binding.deploy_block))
            self.set_meta(s, "deploy_block_hash", binding.deploy_block_hash)
            self.set_meta(s, "cursor", str(binding.deploy_block))
        self.binding = binding

    def clear(self) -> None:
        """Delete every row (the schema stays)."""
        with self.session() as s:
            for table in reversed(Base.metadata.sorted_tables):
                s.execute(delete(table))

    def table_names(self) -> list[str]:
        """The database's tables (for checks)."""
        return sorted(inspect(self.engine).get_table_names())

    def close(self) -> None:
        """Release the connections."""
        self.engine.dispose()
