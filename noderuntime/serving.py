"""`ServerThread`: a FastAPI app served by uvicorn in a daemon thread of the node's process
(the solver's checkpoint server, a node's mirror); `mount_datasets`: the tokens datasets a node
holds, served to whoever replays a job on them.

A prepared dataset directory (`veritrain data prepare`) is served at `/data/<root>/`, so
`http://HOST:PORT/data/<root>` is a base URI a spec's `dataset.uris` can name
(`veritrain.chunkstore.ChunkStore` fetches `<uri>/manifest.json` and `<uri>/chunks/<name>`).

Run: not a script; ``ServerThread(app, "127.0.0.1", 8700).start()``;
``mount_datasets(app, [Path("data/corpus")])``.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

__all__ = ["ServerThread", "dataset_routes", "mount_datasets"]

_CHUNK_NAME = re.compile(r"^[0-9]{6,10}\.bin$")
_ROOT = re.compile(r"^0x[0-9a-f]{64}$")


class ServerThread:
    """Runs a FastAPI app with uvicorn in a daemon thread of the current process.

    Args:
        app: the ASGI app.
        host: interface to bind (e.g. `"127.0.0.1"` or `"0.0.0.0"`).
        port: TCP port.
        what: what is served, for the log and the error (`"checkpoint server"`).
    """

    def __init__(self, app: Any, host: str, port: int, *, what: str = "checkpoint server") -> None:
        import uvicorn

        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
        self._server = uvicorn.Server(config)
        name = what.replace(" ", "-")
        self._thread = threading.Thread(target=self._server.run, name=name, daemon=True)
        self.host = host
        self.port = port
        self.what = what

    def start(self, timeout: float = 10.0) -> None:
        """Start serving and wait until the socket is bound.

        Raises:
            RuntimeError: if the server did not start within `timeout` seconds (e.g. the port
                is taken).
        """
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"{self.what} did not start on {self.host}:{self.port}")
            time.sleep(0.05)
        logger.info("%s listening on %s:%d", self.what, self.host, self.port)

    def stop(self, timeout: float = 5.0) -> None:
        """Ask uvicorn to exit and join the thread."""
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout)


def dataset_routes(dirs: Iterable[str | Path]) -> dict[str, Path]:
    """`{root: directory}` of prepared dataset directories, each root read from (and checked
    against) the directory's `manifest.json`.

    Raises:
        DatasetError: a directory without a valid manifest, or two with the same root.
    """
    from veritrain.errors import DatasetError
    from veritrain.tokens import MANIFEST_NAME, Manifest

    out: dict[str, Path] = {}
    for d in dirs:
        path = Path(d)
        try:
            raw = (path / MANIFEST_NAME).read_bytes()
        except OSError as exc:
            raise DatasetError(f"{path} holds no readable {MANIFEST_NAME}: {exc}") from exc
        root = Manifest.parse(raw).header.root_hex()
        if root in out:
            raise DatasetError(f"{path} and {out[root]} hold the same dataset {root}")
        out[root] = path
    return out


def mount_datasets(
    app: Any, dirs: Iterable[str | Path] = (), *, cache_dir: str | Path | None = None
) -> dict[str, Path]:
    """Serve tokens datasets on `app` (a FastAPI app): prepared directories, and the verified
    chunks a node's `veritrain.chunkstore.ChunkStore` cache holds (a node that trained or
    replayed a job on a dataset serves the chunks it fetched).

    Routes: `GET /data/{root}/manifest.json` and `GET /data/{root}/chunks/{name}` (`name` as
    `veritrain.tokens.chunk_name`), bytes as stored (clients check them against the root);
    404 for a root not held, a chunk not held or a name that is not a chunk file's.

    Args:
        app: the FastAPI app (e.g. the solver's `solver.server.create_app`).
        dirs: directories `veritrain data prepare` wrote (served whole).
        cache_dir: a chunk cache directory (`veritrain.chunkstore.chunk_cache_dir`), or None.

    Returns:
        The `{root: directory}` of the prepared directories served.

    Raises:
        DatasetError: see `dataset_routes`.
    """
    from fastapi import APIRouter, HTTPException
    from fastapi.responses import FileResponse

    from veritrain.chunkstore import cached_chunk_path, cached_manifest_path
    from veritrain.errors import DatasetError
    from veritrain.tokens import CHUNKS_DIR, MANIFEST_NAME, Manifest, chunk_name

    routes = dataset_routes(dirs)
    parsed: dict[str, Manifest] = {}
    router = APIRouter()

    def _cached(root: str) -> Manifest | None:
        if cache_dir is None or not _ROOT.match(root):
            return None
        if root not in parsed:
            try:
                m = Manifest.parse(cached_manifest_path(cache_dir, root).read_bytes())
            except (OSError, DatasetError):
                return None
            if m.header.root_hex() != root:
                return None
            parsed[root] = m
        return parsed[root]

    def _missing(what: str) -> HTTPException:
        return HTTPException(status_code=404, detail=f"no {what[:120]} here")

    @router.get("/data/{root}/" + MANIFEST_NAME)
    def dataset_manifest(root: str) -> FileResponse:
        if root in routes:
            return FileResponse(routes[root] / MANIFEST_NAME, media_type="application/json")
        if _cached(root) is not None and cache_dir is not None:
            path = cached_manifest_path(cache_dir, root)
            return FileResponse(path, media_type="application/json")
        raise _missing(f"dataset {root}")

    @router.get("/data/{root}/" + CHUNKS_DIR + "/{name}")
    def dataset_chunk(root: str, name: str) -> FileResponse:
        if not _CHUNK_NAME.match(name):
            raise _missing(f"chunk {name}")
        path: Path | None = None
        if root in routes:
            path = routes[root] / CHUNKS_DIR / name
        else:
            m = _cached(root)
            index = int(name.removesuffix(".bin"))
            if m is not None and chunk_name(index) == name and index < len(m.leaves):
                path = cached_chunk_path(cache_dir or ".", m.leaves[index])
        if path is None or not path.is_file():
            raise _missing(f"chunk {name} of {root}")
        return FileResponse(path, media_type="application/octet-stream")

    app.include_router(router)
    logger.info("serving datasets %s (chunk cache: %s)", ", ".join(routes), cache_dir)
    return routes
