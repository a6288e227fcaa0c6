"""A GPT spec on a "tokens" dataset: the spec binding leaves old specs' hashes alone, training
through `TrainingEngine` is reproducible under repro2, and a segment's replay fetches only the
chunks its steps read.

Run: ``.venv/bin/python -m pytest tests/unit/veritrain/test_tokens_training.py -q``.
"""

from __future__ import annotations

import json
import math

import pytest
from pydantic import ValidationError

from veritrain.chunkstore import ChunkStore
from veritrain.errors import DatasetRootMismatch
from veritrain.presets import preset
from veritrain.spec import DatasetConfig, ExecutionProfile, GPTConfig, JobSpec, ModelConfig
from veritrain.state import encode_state
from veritrain.tokens import chunks_for_steps, load_tokenizer, prepare
from veritrain.training import TrainingEngine

TEXT = (
    "When forty winters shall besiege thy brow,\nAnd dig deep trenches in thy beauty's field,\n"
    "Thy youth's proud livery so gazed on now,\nWill be a tattered weed of small worth held:\n"
)
# spec_hash of presets before the "tokens" dataset existed: the new optional field must not
# change them (it is left out of the canonical JSON unless set)
PRESET_HASHES = {
    ("digits-mlp", "native"): "cb585e4f7033c623195d2b9a8518f664931fb1e6ce9a0d92a752765db3955c03",
    ("digits-mlp", "repro2"): "2829e4c3030eabb3e20d10959e99f079fa4ed560ccfa2defd804bb33274c0fe4",
    (
        "digits-mlp-wide",
        "repro2",
    ): "7f7918f8e88a03b023961ea5d743dd3cf709a5c9084b638ceed304b917a8bf52",
}


@pytest.mark.parametrize(("name", "arith"), sorted(PRESET_HASHES))
def test_existing_preset_hash_unchanged(name, arith):
    spec = preset(name, arith)
    assert spec.spec_hash().hex() == PRESET_HASHES[(name, arith)]
    assert "uris" not in json.loads(spec.canonical_json())["dataset"]


def _data(tmp_path):
    src = tmp_path / "sonnet.txt"
    src.write_text(TEXT * 12, encoding="utf-8")
    out = tmp_path / "ds"
    m = prepare([src], load_tokenizer("byte"), out, chunk_tokens=64, val_fraction=0.2).manifest
    return out, m


def _spec(root: str, uri: str, steps: int = 4) -> JobSpec:
    return JobSpec(
        model=GPTConfig(n_layer=1, n_head=2, n_embd=16, block_size=16),
        dataset=DatasetConfig(name="tokens", root=root, uris=(uri,)),
        batch_size=3,
        seed=11,
        total_steps=steps,
        checkpoint_interval=2,
        profile=ExecutionProfile.repro(),
        model_id="tokens-gpt",
    )


def test_tokens_spec_validation(tmp_path):
    root = "0x" + "ab" * 32
    spec = _spec(root, "file:///srv/ds")
    obj = json.loads(spec.canonical_json())
    assert obj["dataset"]["uris"] == ["file:///srv/ds"] and spec.metric_name == "val_bpt"
    assert JobSpec.model_validate_json(spec.canonical_json()) == spec
    for bad in ((), ("ftp://x/ds",), tuple(f"http://h{i}/d" for i in range(9))):
        with pytest.raises(ValidationError, match="uris|uri"):
            DatasetConfig(name="tokens", root=root, uris=bad)
    with pytest.raises(ValidationError, match="takes no uris"):
        DatasetConfig(name="sklearn-digits", root=root, uris=("file:///x",))
    with pytest.raises(ValidationError, match="cannot train"):
        JobSpec(model=ModelConfig(), dataset=spec.dataset)


def test_engine_trains_reproducibly_and_replay_fetches_its_chunks(tmp_path):
    out, m = _data(tmp_path)
    spec = _spec(m.header.root_hex(), out.resolve().as_uri())
    h = m.header

    def engine(cache: str) -> TrainingEngine:
        store = ChunkStore(spec.dataset.root, spec.dataset.uris or (), tmp_path / cache)
        return TrainingEngine(spec, chunk_store=store)

    first = engine("a")
    assert first.vocab_size == 256 and first.metric_name == "val_bpt"
    state = first.init_state()
    first.run(state, 2)
    mid = first.state_bytes(state)
    first.run(state, 4)
    end_hash = first.state_hash(state)
    bpt = first.evaluate(state)
    assert math.isfinite(bpt) and 0.0 < bpt < 9.0  # below 8 bits/byte + slack for a fresh model

    second = engine("b")
    state2 = second.init_state()
    second.run(state2, 4)
    assert second.state_hash(state2) == end_hash
    assert second.evaluate(state2) == bpt

    replayer = engine("c")  # a verifier replaying segment [2, 4) only
    cap = replayer.max_state_bytes()  # what it accepts from a server: sized without any chunk
    assert replayer.tokens is not None and replayer.tokens.fetched == 0
    assert len(mid) <= cap == len(encode_state(2**64 - 1, first.state_tensors(state)))
    s = replayer.load_state(mid)
    replayer.run(s, 4)
    assert replayer.state_hash(s) == end_hash
    need = chunks_for_steps(spec.seed, 2, 4, spec.batch_size, 16, h.train_chunks, h.chunk_tokens)
    assert replayer.tokens is not None and replayer.tokens.fetched == len(need)
    assert len(need) < h.train_chunks


def test_engine_refuses_data_of_another_root(tmp_path):
    out, m = _data(tmp_path)
    spec = _spec("0x" + "cd" * 32, out.resolve().as_uri())
    with pytest.raises(DatasetRootMismatch):
        TrainingEngine(
            spec, chunk_store=ChunkStore(spec.dataset.root, spec.dataset.uris or (), tmp_path / "c")
        )


def test_engine_caches_chunks_where_the_environment_says(tmp_path, monkeypatch):
    out, m = _data(tmp_path)
    spec = _spec(m.header.root_hex(), out.resolve().as_uri())
    monkeypatch.setenv("VERITRAIN_CHUNK_CACHE", str(tmp_path / "env-cache"))
    engine = TrainingEngine(spec)
    engine.batch(0)
    assert engine.tokens is not None and engine.tokens.fetched >= 1
    cached = {p.stem for p in (tmp_path / "env-cache").glob("*.bin")}
    assert len(cached) == engine.tokens.fetched and cached <= {x[2:] for x in m.leaves}


def test_corpus_uris_in_a_spec(tmp_path):
    root = "0x" + "ab" * 32
    cfg = DatasetConfig(name="tokens", root=root, uris=("corpus:bible", "http://peer/data/x"))
    assert cfg.uris == ("corpus:bible", "http://peer/data/x")
    for bad in ("corpus:koran", "corpus:", "corpus:bible/../x"):
        with pytest.raises(ValidationError, match="names no pinned corpus"):
            DatasetConfig(name="tokens", root=root, uris=(bad,))


def test_a_node_replays_a_corpus_job_from_its_own_build(tmp_path, monkeypatch):
    """What a verifier's `engine_for(spec)` does: `TrainingEngine(spec)` on a spec naming
    `corpus:tiny` (no path), on a second machine (another data directory holding only the
    archive): it prepares the corpus itself, replays segment [2, 4) from the solver's
    checkpoint 2 to the same state hash and reads only the chunks that segment needs."""
    from tests.utils.tiny_corpus import ARCHIVE, register_tiny_corpus
    from veritrain.corpora import corpus_root

    register_tiny_corpus(monkeypatch, tmp_path / "solver")
    root = corpus_root("tiny")
    spec = _spec(root, "corpus:tiny")
    assert "/" not in "".join(spec.dataset.uris or ())
    monkeypatch.setenv("VERITRAIN_CHUNK_CACHE", str(tmp_path / "solver-cache"))
    solver = TrainingEngine(spec)
    state = solver.init_state()
    solver.run(state, 2)
    mid = solver.state_bytes(state)
    solver.run(state, 4)
    end_hash = solver.state_hash(state)

    verifier_dir = tmp_path / "verifier"
    verifier_dir.mkdir()
    (verifier_dir / ARCHIVE).write_bytes((tmp_path / "solver" / ARCHIVE).read_bytes())
    monkeypatch.setenv("VERITRAIN_DATA_DIR", str(verifier_dir))
    monkeypatch.setenv("VERITRAIN_CHUNK_CACHE", str(tmp_path / "verifier-cache"))
    verifier = TrainingEngine(spec)
    s = verifier.load_state(mid)
    verifier.run(s, 4)
    assert verifier.state_hash(s) == end_hash
    assert (verifier_dir / "corpora").is_dir()
    h = verifier.tokens.manifest().header if verifier.tokens is not None else None
    assert h is not None and h.root_hex() == root
    need = chunks_for_steps(spec.seed, 2, 4, spec.batch_size, 16, h.train_chunks, h.chunk_tokens)
    assert verifier.tokens is not None and verifier.tokens.fetched == len(need)
