"""`veritrain run simulate`: the protocol's run on this machine; bad input is one line, exit 2."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli.app import app
from veritrain.diloco import RunSpec
from veritrain.presets import preset
from veritrain.runsim import pretrained_start, simulate_run

runner = CliRunner()
ARGS = ["run", "simulate", "--preset", "digits-mlp", "--inner-steps", "3", "--rounds", "2"]


def test_simulate_json_is_the_simulation() -> None:
    result = runner.invoke(app, [*ARGS, "--seats", "2", "--delta-format", "int8", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    run = RunSpec(
        inner=preset("digits-mlp", "native", total_steps=3, checkpoint_interval=3),
        seats=2,
        rounds=2,
        delta_format="int8",
    )
    assert out["run_hash"] == "0x" + run.run_hash().hex()
    reports = simulate_run(run, pretrained_start(run, 0), 2)
    assert [r["global_hash"] for r in out["rounds"]] == [
        "0x" + r.global_hash.hex() for r in reports
    ]
    assert out["rounds"][1]["accepted"] == [0, 1] and out["metric_name"] == "accuracy"
    assert set(out["rounds"][0]["delta_hashes"]) == {"0", "1"}
    assert out["device"] == "cpu"  # a native preset runs where its profile pins it


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--preset", "cifar"], "unknown preset 'cifar'"),
        (["--arith", "repro"], "cannot be replayed exactly"),
        (["--seats", "0"], "--seats must be in [1, 256], got 0"),
        (["--rounds", "0"], "--rounds must be in"),
        (["--rounds", str(2**24)], "--rounds must be in [1, 16777215], got 16777216"),
        (["--pretrain", "-1"], "--pretrain must be in"),
        (["--outer-lr", "0"], "--outer-lr must be in (0, 10]"),
        (["--momentum", "1"], "--momentum must be in [0, 1)"),
        (["--delta-format", "int4"], "--delta-format must be one of float32, int8"),
        (["--batch", "0"], "--batch must be >= 1"),
        (["--device", "tpu"], "unknown device 'tpu'"),
        (["--device", "cuda"], "native presets pin device 'cpu'"),
        (["--batch", "100000"], "batch size 100000 > 1348 training examples"),
    ],
)
def test_bad_input_is_one_line(extra: list[str], message: str) -> None:
    result = runner.invoke(app, [*ARGS, *extra])
    assert result.exit_code == 2, result.output
    lines = [x for x in result.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], lines


def test_spec_writes_a_run_the_nodes_load(tmp_path) -> None:
    out = tmp_path / "run.json"
    args = ["run", "spec", str(out), "--preset", "digits-mlp", "--arith", "native"]
    result = runner.invoke(app, [*args, "--seats", "3", "--inner-steps", "20", "--interval", "5"])
    assert result.exit_code == 0, result.output
    run = RunSpec.model_validate_json(out.read_bytes())
    assert out.read_bytes() == run.canonical_json()
    assert run.seats == 3 and run.inner_steps == 20 and run.inner.checkpoint_interval == 5
    assert "0x" + run.run_hash().hex() in result.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["spec", "{out}", "--inner-steps", "20", "--interval", "3"],
            "--inner-steps 20 must be a multiple of --interval 3",
        ),
        # the default k = 5: named as the flag the user can change
        (
            ["spec", "{out}", "--inner-steps", "7"],
            "--inner-steps 7 must be a multiple of --interval 5",
        ),
        (["spec", "{out}", "--delta-format", "int4"], "delta_format"),
        # R is stored in 24 bits on chain: one more is refused here, not at openRun
        (["spec", "{out}", "--rounds", str(2**24)], "invalid run: rounds"),
        (["spec", "{out}", "--preset", "cifar"], "unknown preset 'cifar'"),
        (["post", "{missing}", "--round", "0"], "cannot read run file"),
        (["post", "{junk}", "--round", "0"], "is not a run spec"),
        (["post", "{run}", "--round", "9"], "round 9 is past the run's 2 rounds"),
        (["post", "{run}", "--round", "0", "--seat", "5"], "seat 5 out of range"),
        (["open", "{run}", "--run-uri", "file:///x#y"], "must not have a fragment"),
        (["show", "{junk}"], "is not a run spec"),
        (["open", "{missing}"], "cannot read run file"),
        (["propose", "{junk}"], "is not a run spec"),
        (["challenge", "{missing}"], "cannot read run file"),
        (["finalize", "{junk}"], "is not a run spec"),
    ],
)
def test_run_commands_refuse_bad_input_in_one_line(tmp_path, args, message) -> None:
    run = RunSpec(inner=preset("digits-mlp", "native"), seats=2, rounds=2)
    (tmp_path / "run.json").write_bytes(run.canonical_json())
    (tmp_path / "junk.json").write_text('{"seats": 2}')
    paths = {
        "out": str(tmp_path / "new.json"),
        "missing": str(tmp_path / "nope.json"),
        "junk": str(tmp_path / "junk.json"),
        "run": str(tmp_path / "run.json"),
    }
    argv = ["run", *[a.format(**paths) for a in args], "--rpc-url", "http://127.0.0.1:9"]
    if args[0] == "spec":
        argv = argv[:-2]
    result = runner.invoke(app, argv)
    assert result.exit_code != 0, result.output
    lines = [x for x in result.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and message in lines[0], lines
