"""A verifier replaying a job on a tokens dataset fetches only the chunks its own segments read.

The dataset is served over real HTTP by `noderuntime.serving.mount_datasets`, behind a counter
of chunk requests; the solver trains the whole job from its own cache, the verifier replays its
drawn segments from an empty one, and the chunks it asked for are exactly the union of
`veritrain.tokens.chunks_for_steps` over those segments, each fetched once.

Run: ``.venv/bin/python -m pytest tests/unit/verifier/test_verifier_tokens.py -q``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from fastapi import FastAPI, Request, Response

from adversary.solver import solver_node
from adversary.verifier import verifier_node
from noderuntime.core import SELFTEST_ENV
from noderuntime.serving import ServerThread, mount_datasets
from tests.utils.fake_chain import FakeChain
from tests.utils.node_fixtures import SOLVER, SUBMITTER, VERIFIERS, http_for
from tests.utils.node_harness import free_port
from veritrain.chunkstore import CACHE_ENV
from veritrain.enums import JobStatus, Verdict
from veritrain.spec import (
    DatasetConfig,
    ExecutionProfile,
    JobSpec,
    LlamaConfig,
    OptimizerConfig,
)
from veritrain.tokens import chunks_for_steps, load_tokenizer, prepare

VERSE = (
    "In the beginning was the Word, and the Word was with God, and the Word was God. "
    "The same was in the beginning with God. All things were made by him.\n"
)


def _counting_server(out: Path) -> tuple[ServerThread, str, Counter[str]]:
    """Serve the prepared dataset `out`; the Counter counts requests per chunk file name."""
    app = FastAPI()
    (root,) = mount_datasets(app, [out])
    asked: Counter[str] = Counter()

    @app.middleware("http")
    async def count(request: Request, call: Callable[[Request], Awaitable[Response]]) -> Response:
        if "/chunks/" in request.url.path:
            asked[request.url.path.rsplit("/", 1)[1]] += 1
        return await call(request)

    port = free_port()
    server = ServerThread(app, "127.0.0.1", port, what="dataset server")
    server.start()
    return server, f"http://127.0.0.1:{port}/data/{root}", asked


def test_a_verifier_fetches_exactly_the_chunks_of_its_segments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "corpus.txt"
    src.write_text(VERSE * 60, encoding="utf-8")  # ~9 KB: 36 chunks of 256 bytes
    out = tmp_path / "ds"
    manifest = prepare([src], load_tokenizer("byte"), out, chunk_tokens=256).manifest
    header = manifest.header
    server, uri, asked = _counting_server(out)
    try:
        spec = JobSpec(
            model=LlamaConfig(
                n_layer=1, n_head=2, n_kv_head=1, n_embd=16, block_size=16, ffn_hidden=32
            ),
            dataset=DatasetConfig(name="tokens", root=header.root_hex(), uris=(uri,)),
            optimizer=OptimizerConfig(lr=1e-3),
            batch_size=2,
            seed=7,
            total_steps=20,
            checkpoint_interval=5,
            profile=ExecutionProfile.repro(),
            model_id="bible-test",
        )
        monkeypatch.setenv(SELFTEST_ENV, "0")  # the machine check is not what is tested here
        chain = FakeChain()
        chain.forced_segments = [1]  # the verifier's sample: steps [5, 10)
        verifier = verifier_node(chain.client(VERIFIERS[0]), tmp_path / "v")
        verifier.step()  # stakes before the assignment
        monkeypatch.setenv(CACHE_ENV, str(tmp_path / "solver-chunks"))
        job_id = chain.post_job(SUBMITTER, spec)
        solver = solver_node(chain.client(SOLVER), tmp_path / "solver", serve=False)
        for _ in range(4):
            solver.step()
            chain.advance(blocks=2)
        assert chain.jobs[job_id].status is JobStatus.Verifying
        read = chunks_for_steps(7, 0, 20, 2, 16, header.train_chunks, header.chunk_tokens)
        val = range(header.train_chunks, header.num_chunks)  # the final evaluation's
        assert asked == Counter(f"{i:06d}.bin" for i in [*read, *val])  # each once
        asked.clear()
        monkeypatch.setenv(CACHE_ENV, str(tmp_path / "verifier-chunks"))
        verifier.http_client = http_for(solver)
        verifier.step()  # replays its sample, seals
        verifier.step()  # reveals
        replayed = verifier.state.read().jobs[job_id].results
        segments = [chain.assignments[job_id].segments[i] for i in replayed]
        assert segments and all(r.ok for r in replayed.values())
        need: set[int] = set()
        for s in segments:
            need.update(
                chunks_for_steps(
                    7, s * 5, (s + 1) * 5, 2, 16, header.train_chunks, header.chunk_tokens
                )
            )
        expected = {f"{i:06d}.bin" for i in need}
        assert set(asked) == expected and set(asked.values()) == {1}  # each needed chunk once
        assert len(expected) < len(read)  # a segment reads fewer chunks than the job
        assert chain.verdicts[(job_id, VERIFIERS[0])].count(Verdict.Approve) == len(segments)
    finally:
        server.stop()
