"""A node serves the tokens datasets it holds at `/data/<root>/`; a `ChunkStore` fetches them
over HTTP, checks each chunk against the root and falls back to the next server when one sends
bytes that are not the chunk.

Run: ``.venv/bin/python -m pytest tests/unit/noderuntime/test_serving_datasets.py -q``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from noderuntime.serving import ServerThread, mount_datasets
from tests.utils.node_harness import free_port
from veritrain.chunkstore import ChunkStore
from veritrain.errors import DatasetError
from veritrain.tokens import chunk_name, load_tokenizer, prepare

TEXT = "Not marble, nor the gilded monuments of princes, shall outlive this powerful rhyme;\n"


def _dataset(tmp_path: Path) -> tuple[Path, str]:
    src = tmp_path / "text.txt"
    src.write_text(TEXT * 30, encoding="utf-8")
    out = tmp_path / "ds"
    m = prepare([src], load_tokenizer("byte"), out, chunk_tokens=128).manifest
    return out, m.header.root_hex()


def test_routes_serve_manifest_and_chunks_only(tmp_path: Path) -> None:
    out, root = _dataset(tmp_path)
    app = FastAPI()
    assert mount_datasets(app, [out]) == {root: out}
    client = TestClient(app)
    assert client.get(f"/data/{root}/manifest.json").content == (out / "manifest.json").read_bytes()
    got = client.get(f"/data/{root}/chunks/{chunk_name(2)}")
    assert got.status_code == 200 and got.content == (out / "chunks" / chunk_name(2)).read_bytes()
    assert client.get(f"/data/{root}/chunks/999999.bin").status_code == 404
    assert client.get(f"/data/{root}/chunks/..%2Fmanifest.json").status_code == 404
    assert client.get(f"/data/0x{'00' * 32}/manifest.json").status_code == 404
    with pytest.raises(DatasetError, match="same dataset"):
        mount_datasets(FastAPI(), [out, out])
    with pytest.raises(DatasetError, match="manifest"):
        mount_datasets(FastAPI(), [tmp_path])


def test_chunk_store_over_http_skips_a_lying_server(tmp_path: Path) -> None:
    out, root = _dataset(tmp_path)
    evil = tmp_path / "evil"
    shutil.copytree(out, evil)
    for name in (chunk_name(0), chunk_name(1)):
        data = bytearray((evil / "chunks" / name).read_bytes())
        data[7] ^= 0x10
        (evil / "chunks" / name).write_bytes(bytes(data))
    servers = []
    try:
        uris = []
        for d in (evil, out):
            app = FastAPI()
            mount_datasets(app, [d])
            port = free_port()
            server = ServerThread(app, "127.0.0.1", port, what="dataset server")
            server.start()
            servers.append(server)
            uris.append(f"http://127.0.0.1:{port}/data/{root}")
        store = ChunkStore(root, uris, tmp_path / "cache", timeout=5.0)
        for i in (0, 1, 2):
            assert store.chunk_bytes(i) == (out / "chunks" / chunk_name(i)).read_bytes()
        assert store.fetched == 3 and store.rejected == 2
        with pytest.raises(DatasetError, match="no source gave chunk 0"):
            ChunkStore(root, uris[:1], tmp_path / "cache2", timeout=5.0).chunk_bytes(0)
    finally:
        for server in servers:
            server.stop()


def test_a_node_serves_the_chunks_its_cache_holds(tmp_path: Path) -> None:
    out, root = _dataset(tmp_path)
    cache = tmp_path / "cache"
    trainer = ChunkStore(root, [out.as_uri()], cache)
    trainer.gather([1, 3])  # what this node's training fetched
    app = FastAPI()
    mount_datasets(app, cache_dir=cache)
    client = TestClient(app)
    assert client.get(f"/data/{root}/manifest.json").content == (out / "manifest.json").read_bytes()
    got = client.get(f"/data/{root}/chunks/{chunk_name(3)}")
    assert got.status_code == 200 and got.content == (out / "chunks" / chunk_name(3)).read_bytes()
    assert client.get(f"/data/{root}/chunks/{chunk_name(0)}").status_code == 404  # not held
    assert client.get(f"/data/{root}/chunks/0000003.bin").status_code == 404  # not canonical
    assert client.get(f"/data/0x{'00' * 32}/chunks/{chunk_name(3)}").status_code == 404
    port = free_port()
    server = ServerThread(app, "127.0.0.1", port, what="dataset server")
    server.start()
    try:
        uris = [f"http://127.0.0.1:{port}/data/{root}", out.as_uri()]
        peer = ChunkStore(root, uris, tmp_path / "peer", timeout=5.0)
        assert peer.chunk_bytes(1) == (out / "chunks" / chunk_name(1)).read_bytes()
        assert peer.chunk_bytes(0) == (out / "chunks" / chunk_name(0)).read_bytes()  # 404: next
        shutil.rmtree(out)
        assert peer.chunk_bytes(3) == trainer.chunk_bytes(3)  # from the node alone
    finally:
        server.stop()
