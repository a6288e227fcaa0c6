"""`BindingMixin`: a node's persisted state is bound to one chain (chain id, JobManager address,
deployment block hash); a node refuses, or with `--reset-state` archives, another chain's state
and stops when the chain changes under it.

Run: not a script; `from noderuntime import NodeBase`.
"""

from __future__ import annotations

import time
from typing import Any

from noderuntime.core import NodeCore
from noderuntime.records import ChainBinding, RecordStore
from veritrain.errors import ChainMismatch

__all__ = ["BindingMixin"]


class BindingMixin(NodeCore):
    """Binds the node's record stores to the chain it runs on (`bind_chain`, `check_chain`)."""

    chain_check_interval = 15.0
    """Seconds between two checks (two RPC calls) that the chain is still the one the node's
    state is bound to (`check_chain`)."""

    def state_stores(self) -> list[RecordStore[Any]]:
        """The record stores bound to the chain: each role's ``self.state`` (a `NodeRecords`)."""
        state = getattr(self, "state", None)
        return [state] if isinstance(state, RecordStore) else []

    def bind_chain(self, *, reset: bool = False) -> None:
        """Bind this node's persisted state to the chain it runs on, or refuse another chain's.

        The binding is the chain id, the deployment's JobManager address and the hash of the
        deployment block (`ChainPort.chain_identity`): a devnet restarted from genesis has the
        same chain id and addresses but another block hash. A data dir without a binding (new)
        is bound now. On a mismatch the node refuses to start, unless `reset`: then the state
        files and the job-keyed replay caches move to ``<data_dir>/stale/<block hash>/`` and
        the node starts afresh (its content-addressed checkpoint store is kept).

        Args:
            reset: discard a mismatched state instead of refusing.

        Raises:
            ChainMismatch: the state was made on another chain and `reset` is False.
            RpcUnavailable: the RPC cannot be reached.
        """
        stores = self.state_stores()
        if not stores:
            return
        current = ChainBinding.of(self.client.chain_identity())
        bound = stores[0].read().chain
        if bound is not None and bound != current:
            if not reset:
                raise ChainMismatch(
                    f"{self.data_dir} holds {self.name} state of {bound.describe()}, but the RPC "
                    f"serves {current.describe()}: start with --reset-state to discard it, or "
                    "use another --data-dir"
                )
            archive = self.data_dir / "stale" / (bound.block_hash[2:14] or "unknown")
            for store in stores:
                store.reset(archive)
            replay_cache = self.data_dir / "step_hashes"
            if replay_cache.exists():
                archive.mkdir(parents=True, exist_ok=True)
                replay_cache.replace(archive / "step_hashes")
            self.log.warning(
                "state of %s moved to %s: starting afresh on %s",
                bound.describe(),
                archive,
                current.describe(),
            )
            bound = None
        if bound is None:
            for store in stores:
                with store.transaction() as records:
                    records.chain = current
                    if records.index.cursor == 0:
                        records.index.cursor = current.block
        self._chain_checked = time.monotonic()

    def check_chain(self) -> bool:
        """Every `chain_check_interval` seconds, check that the chain still is the one the
        state is bound to; if not (the devnet was restarted under a running node), stop the
        node with a `ChainMismatch` that `run` raises, instead of acting on stale job ids and
        nonces. An unreachable RPC is left to the round's own back-off.

        Returns:
            False when the node must stop (the chain changed).
        """
        stores = self.state_stores()
        if not stores or time.monotonic() - self._chain_checked < self.chain_check_interval:
            return True
        bound = stores[0].read().chain
        current = ChainBinding.of(self.client.chain_identity())
        self._chain_checked = time.monotonic()
        if bound is None or bound == current:
            return True
        self._fatal = ChainMismatch(
            f"the chain changed under the running {self.name} node: its state belongs to "
            f"{bound.describe()}, the RPC now serves {current.describe()}: stopped; restart "
            "it with --reset-state"
        )
        self.log.error("%s", self._fatal)
        self._stop.set()
        return False
