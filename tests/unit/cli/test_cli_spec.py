"""`veritrain spec new` and every command's `--spec FILE`: a GPT or Llama spec on a prepared tokens
dataset that `train --spec` trains to the Python API's state hash; bad input is one line, exit 2,
and nothing written or sent.

Run: ``.venv/bin/python -m pytest tests/unit/cli/test_cli_spec.py -q``.
"""

from __future__ import annotations

import json
import random
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chain.types import JobParamsView
from cli.app import app
from cli.errors import CliError
from cli.spec import check_job_limits, spec_with
from veritrain.diloco import RunSpec
from veritrain.errors import SpecError
from veritrain.lineage import compute_per_step
from veritrain.spec import REPRO_ARITH, JobSpec
from veritrain.tokens import Manifest, load_tokenizer, prepare
from veritrain.training import TrainingEngine

runner = CliRunner()
WORDS = "to be or not that is the question whether tis nobler in mind suffer slings".split()
CHUNK_TOKENS = 256


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


RPC = ["--rpc-url", f"http://127.0.0.1:{_closed_port()}", "--dev-account", "1"]


@pytest.fixture
def dataset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A byte-tokenized dataset of ~5 KB of text: 19 chunks of 256 tokens."""
    monkeypatch.setenv("VERITRAIN_CHUNK_CACHE", str(tmp_path / "chunk-cache"))
    rng = random.Random(3)
    text = tmp_path / "corpus.txt"
    text.write_text(" ".join(rng.choice(WORDS) for _ in range(1000)), encoding="utf-8")
    out = tmp_path / "ds"
    prepare([text], load_tokenizer("byte"), out, chunk_tokens=CHUNK_TOKENS, val_fraction=0.2)
    return out


def _new(dataset: Path, out: Path, *extra: str) -> object:
    return runner.invoke(app, ["spec", "new", "--data", str(dataset), "--out", str(out), *extra])


LLAMA = ["--family", "llama", "--layers", "1", "--heads", "4", "--kv-heads", "2"]
LLAMA += ["--width", "16", "--block", "8", "--batch", "4", "--tie"]


def test_spec_new_writes_a_llama_on_the_datasets_root(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "llama.json"
    result = _new(dataset, out, *LLAMA, "--steps", "20", "--interval", "5", "--seed", "9")
    assert result.exit_code == 0, result.output
    raw = out.read_bytes()
    spec = JobSpec.model_validate_json(raw)
    assert raw == spec.canonical_json()
    assert result.stdout.strip() == f"spec 0x{spec.spec_hash().hex()} written to {out}"
    manifest = Manifest.parse((dataset / "manifest.json").read_bytes())
    assert spec.dataset.name == "tokens" and spec.dataset.root == manifest.header.root_hex()
    assert spec.dataset.uris == (dataset.resolve().as_uri(),)
    assert spec.model.arch == "llama" and spec.model.n_kv_head == 2 and spec.model.tie_embeddings
    assert spec.model.ffn_hidden == 48  # 8 * 16 / 3 = 42.7, rounded up to a multiple of 16
    assert (spec.total_steps, spec.checkpoint_interval, spec.seed) == (20, 5, 9)
    assert spec.profile.arith == REPRO_ARITH and spec.model_id == "llama-ds"
    assert TrainingEngine(spec).vocab_size == manifest.header.vocab_size == 256


def test_spec_new_gpt_native_json_and_uris(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "gpt.json"
    mirrors = ["--uri", "https://a.example/ds", "--uri", "file:///srv/ds"]
    result = _new(
        dataset, out, "--family", "gpt", "--arith", "native", "--model-id", "my-gpt", *mirrors,
        "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    spec = JobSpec.model_validate_json(out.read_bytes())
    payload = json.loads(result.stdout)
    assert payload["spec_hash"] == "0x" + spec.spec_hash().hex() and payload["vocab_size"] == 256
    assert spec.model.arch == "gpt" and spec.model_id == "my-gpt"
    assert spec.profile.arith == "native" and spec.profile.threads == 1
    assert spec.dataset.uris == ("https://a.example/ds", "file:///srv/ds")


def test_train_spec_matches_the_python_api(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "llama.json"
    assert _new(dataset, out, *LLAMA).exit_code == 0
    result = runner.invoke(app, ["train", "--spec", str(out), "--steps", "2", "--json"])
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    spec = JobSpec.model_validate(
        {**json.loads(out.read_bytes()), "total_steps": 2, "checkpoint_interval": 2}
    )
    engine = TrainingEngine(spec)
    state = engine.run(engine.init_state(), 2)
    assert got["step"] == 2 and got["state_hash"] == "0x" + engine.state_hash(state).hex()
    assert 0.0 < got["metric"] < 9.0  # bits per token of a 256-id vocabulary, near log2(256)
    other = runner.invoke(app, ["train", "--spec", str(out), "--steps", "2", "--seed", "1"])
    assert other.exit_code == 0 and got["state_hash"] not in other.stdout  # --seed overrides


BAD_NEW: list[tuple[list[str], str]] = [
    (["--family", "bert"], "--family must be one of gpt, llama"),
    (["--layers", "0"], "--layers must be >= 1"),
    (["--heads", "0"], "--heads must be >= 1"),
    (["--heads", "3"], "must be a multiple of n_head (3)"),
    (["--family", "llama", "--kv-heads", "3"], "n_kv_head (3) must divide n_head (4)"),
    (["--kv-heads", "2"], "--kv-heads: Llama options"),
    (["--width", "0"], "--width must be >= 1"),
    (["--family", "llama", "--width", "12", "--heads", "4"], "must be even"),
    (["--block", "0"], "--block must be >= 1"),
    (["--block", str(CHUNK_TOKENS)], f"chunks of {CHUNK_TOKENS} tokens"),
    (["--family", "llama", "--ffn-hidden", "0"], "--ffn-hidden must be >= 1"),
    (["--tie"], "--tie/--no-tie: Llama options"),
    (["--lr", "0"], "--lr must be a finite number > 0"),
    (["--lr", "inf"], "--lr must be a finite number > 0"),
    (["--lr", "nan"], "--lr must be a finite number > 0"),
    (["--batch", "0"], "--batch must be >= 1"),
    (["--steps", "0"], "--steps must be in"),
    (["--steps", str(2**32)], "--steps must be in"),
    (["--interval", "0"], "--interval must be in"),
    (["--steps", "100", "--interval", "30"], "must be a multiple of checkpoint_interval (30)"),
    (["--seed", "-1"], "--seed"),
    (["--model-id", " "], "--model-id must not be empty"),
    (["--uri", "ftp://host/ds"], "is not file://, http(s):// or corpus:"),
    ([f"--uri=file:///d{i}" for i in range(9)], "at most 8 URIs"),
    (["--arith", "repro"], "cannot be replayed exactly on other machines"),
    (["--arith", "fast"], "unknown arithmetic 'fast'"),
]


@pytest.mark.parametrize(("extra", "message"), BAD_NEW, ids=[" ".join(c[0])[:40] for c in BAD_NEW])
def test_spec_new_bad_value_is_one_line_exit_2_and_writes_nothing(
    dataset: Path, tmp_path: Path, extra: list[str], message: str
) -> None:
    out = tmp_path / "spec.json"
    args = extra if "--family" in extra else ["--family", "gpt", *extra]
    result = _new(dataset, out, *args)
    assert result.exit_code == 2, result.output
    lines = [x for x in result.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], lines
    assert result.stdout == "" and not out.exists()


def test_spec_new_refuses_what_is_not_a_prepared_dataset(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "spec.json"
    (dataset / "chunks" / "000003.bin").unlink()
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "manifest.json").write_text('{"header": {}, "leaves": []}')
    for data, word in (
        (dataset, "chunk file chunks/000003.bin missing"),
        (tmp_path, "no manifest.json"),
        (broken, "not a valid dataset manifest"),
        (tmp_path / "nowhere", "not a directory"),
    ):
        result = _new(data, out, "--family", "gpt")
        assert result.exit_code == 2, result.output
        lines = [x for x in result.stderr.splitlines() if x.strip()]
        assert len(lines) == 1 and "is not a prepared dataset" in lines[0] and word in lines[0]
        assert not out.exists()
    result = _new(dataset.parent / "corpus.txt", tmp_path, "--family", "gpt")  # --out a folder
    assert result.exit_code == 2 and "is a directory" in result.stderr


@pytest.fixture
def spec_files(dataset: Path, tmp_path: Path) -> dict[str, Path]:
    good = tmp_path / "good.json"
    assert _new(dataset, good, *LLAMA, "--steps", "10", "--interval", "2").exit_code == 0
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**json.loads(good.read_bytes()), "batch_size": 0}))
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    return {"good": good, "bad": bad, "junk": junk, "missing": tmp_path / "missing.json"}


@pytest.mark.parametrize(
    ("command", "file", "words"),
    [
        (["train"], "missing", ["cannot read spec file", "missing.json"]),
        (["train"], "junk", ["junk.json is not JSON"]),
        (["train"], "bad", ["bad.json is not a job spec: batch_size"]),
        (["job", "submit", *RPC], "missing", ["cannot read spec file", "missing.json"]),
        (["job", "submit", *RPC], "junk", ["junk.json is not JSON"]),
        (["job", "submit", *RPC], "bad", ["bad.json is not a job spec: batch_size"]),
        (
            ["job", "submit", "--steps", "7", *RPC],
            "good",
            ["total_steps (7)", "checkpoint_interval (2)"],
        ),
        (["job", "submit", "--preset", "digits-mlp", *RPC], "good", ["--preset: the spec"]),
        (["job", "submit", "--seed", str(2**64 - 1), "--count", "2", *RPC], "good", ["2**64"]),
        (["run", "spec", "{out}"], "bad", ["bad.json is not a job spec: batch_size"]),
        (["model", "register", "llama-ds", *RPC], "junk", ["junk.json is not JSON"]),
        (["train", "--preset", "digits-mlp"], "good", ["give --preset or --spec, not both"]),
        (["train", "--arith", "repro"], "good", ["cannot be replayed exactly"]),
    ],
)
def test_a_bad_spec_file_is_one_line_before_any_connection(
    spec_files: dict[str, Path], tmp_path: Path, command: list[str], file: str, words: list[str]
) -> None:
    """The RPC URL is a closed port: each refusal comes before a connection is tried."""
    argv = [a.format(out=tmp_path / "run.json") for a in command]
    result = runner.invoke(app, [*argv, "--spec", str(spec_files[file])])
    assert result.exit_code == 2, result.output
    lines = [x for x in result.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert all(w in lines[0] for w in words), lines[0]
    assert "reach" not in lines[0] and not (tmp_path / "run.json").exists()


def test_run_spec_takes_its_inner_job_from_the_file(spec_files: dict[str, Path], tmp_path):
    out = tmp_path / "run.json"
    args = ["run", "spec", str(out), "--spec", str(spec_files["good"]), "--seats", "3"]
    result = runner.invoke(app, [*args, "--inner-steps", "6", "--interval", "3"])
    assert result.exit_code == 0, result.output
    run = RunSpec.model_validate_json(out.read_bytes())
    file_spec = JobSpec.model_validate_json(spec_files["good"].read_bytes())
    assert run.inner == spec_with(file_spec, total_steps=6, checkpoint_interval=3)
    assert run.inner.model.arch == "llama" and run.seats == 3
    assert "0x" + run.run_hash().hex() in result.stdout


def test_spec_with_overrides_and_refusals(spec_files: dict[str, Path]) -> None:
    spec = JobSpec.model_validate_json(spec_files["good"].read_bytes())
    assert spec_with(spec) is spec
    native = spec_with(spec, arith="native", threads=3, lr=2e-3, seed=5)
    assert (native.profile.arith, native.profile.threads, native.profile.device) == (
        "native",
        3,
        "cpu",
    )
    assert native.optimizer.lr == 2e-3 and native.seed == 5 and native.model == spec.model
    with pytest.raises(SpecError, match="pins no thread count"):
        spec_with(spec, threads=2)
    with pytest.raises(SpecError, match=r"checkpoint_interval \(4\)"):
        spec_with(spec, checkpoint_interval=4)
    with pytest.raises(SpecError, match=r"batch_size: .* \(--batch\)"):
        spec_with(spec, batch_size=0)


def _params(**limits: int) -> JobParamsView:
    base = dict.fromkeys(
        ("solver_stake", "verifier_stake", "challenge_bond", "verifier_fee", "arbiter_fee"), 1
    )
    base |= dict.fromkeys(
        ("verifiers_per_job", "samples_per_job", "commit_window", "verdict_window"), 1
    )
    return JobParamsView(**base, challenge_window=1, **limits)


def test_job_limits_are_checked_before_any_work(spec_files: dict[str, Path]) -> None:
    spec = JobSpec.model_validate_json(spec_files["good"].read_bytes())  # N = 10, k = 2
    per_step = compute_per_step(spec)
    roomy = _params(max_total_steps=10, max_segments=5, max_segment_steps=2)
    check_job_limits([spec], roomy, 2 * per_step)  # exactly at every limit: accepted
    for params, bound, word in (
        (_params(max_total_steps=9, max_segments=5, max_segment_steps=2), 2 * per_step, "--steps"),
        (_params(max_total_steps=10, max_segments=4, max_segment_steps=2), 2 * per_step, "5 seg"),
        (_params(max_total_steps=10, max_segments=5, max_segment_steps=1), 2 * per_step, "--int"),
        (roomy, 2 * per_step - 1, "FLOP"),
    ):
        with pytest.raises(CliError, match=word):
            check_job_limits([spec], params, bound)
