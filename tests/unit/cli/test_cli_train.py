"""`veritrain train`: trains a preset locally, prints its JSON; bad input is one line, exit 2."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli.app import app
from veritrain.presets import preset
from veritrain.training import TrainingEngine

runner = CliRunner()


def test_train_json_matches_the_engine():
    result = runner.invoke(app, ["train", "--preset", "digits-mlp", "--steps", "40", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert sorted(out) == ["loss", "metric", "seconds", "state_hash", "step", "workers"]
    assert out["step"] == 40 and 0.0 <= out["metric"] <= 1.0 and out["seconds"] > 0
    engine = TrainingEngine(preset("digits-mlp", total_steps=40, checkpoint_interval=40))
    state = engine.run(engine.init_state(), 40)
    assert out["state_hash"] == "0x" + engine.state_hash(state).hex()


def test_train_text_output_and_native_threads():
    result = runner.invoke(
        app, ["train", "--preset", "digits-mlp", "--steps", "5", "--threads", "2", "--batch", "8"]
    )
    assert result.exit_code == 0, result.output
    assert "accuracy" in result.stdout and "state hash  0x" in result.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--preset", "cifar"], "unknown preset 'cifar'"),
        (["--arith", "fast"], "unknown arithmetic 'fast'"),
        (["--arith", "repro"], "arith 'repro' cannot be replayed exactly on other machines"),
        (["--steps", "0"], "--steps must be >= 1"),
        (["--threads", "0"], "--threads must be >= 1"),
        (["--seed", "-1"], "--seed must be in"),
        (["--device", "tpu"], "--device must be"),
        (["--device", "cuda"], "native presets pin device 'cpu'"),
        (["--batch", "5000"], "batch size 5000 > 1348 training examples"),
        (["--workers", "0"], "--workers must be >= 1"),
        (["--micro-batches", "0"], "--micro-batches must be >= 1"),
        (["--micro-batches", "5"], "micro_batches (5) must divide batch_size (64)"),
        (["--micro-batches", "2", "--workers", "3"], "workers must be in [1, micro_batches = 2]"),
    ],
)
def test_train_bad_input_is_one_line_exit_2(args, message):
    result = runner.invoke(app, ["train", "--preset", "digits-mlp", *args])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]
    assert result.stdout == ""


def test_job_submit_refuses_a_bad_preset_before_touching_the_chain():
    # the RPC URL points nowhere: the preset is checked first, so no connection is attempted
    result = runner.invoke(
        app, ["job", "submit", "--preset", "cifar", "--rpc-url", "http://127.0.0.1:9"]
    )
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        "error: unknown preset 'cifar' (choose from digits-mlp, digits-mlp-wide, shakespeare-char, "
        "llama-char, llama-bible)"
    ]


RETIRED = (
    "arith 'repro' cannot be replayed exactly on other machines: its square root (AdamW, "
    "layer_norm, clip_grad_norm_, normal_) was not correctly rounded, so its state hashes "
    "depend on the CPU vendor; post the job again with arith 'repro2'"
)


def test_train_refuses_the_retired_repro_arithmetic_in_one_line():
    result = runner.invoke(app, ["train", "--preset", "digits-mlp", "--arith", "repro"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [f"error: {RETIRED}"]


def test_train_refuses_an_unknown_kernel_mode_in_one_line(monkeypatch: pytest.MonkeyPatch):
    """A mistyped `VERITRAIN_REPRO_KERNELS` stops the run with one line, never a traceback."""
    monkeypatch.setenv("VERITRAIN_REPRO_KERNELS", "numba")
    result = runner.invoke(app, ["train", "--preset", "digits-mlp", "--arith", "repro2"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "error: VERITRAIN_REPRO_KERNELS must be auto, eager or fused, got 'numba'"
    )
    assert "Traceback" not in result.stderr and result.stdout == ""


@pytest.mark.parametrize("preset_args", [[], ["--preset", "shakespeare-char"]])
def test_job_submit_refuses_the_retired_repro_arithmetic_before_touching_the_chain(preset_args):
    result = runner.invoke(
        app,
        ["job", "submit", *preset_args, "--arith", "repro", "--rpc-url", "http://127.0.0.1:9"],
    )
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and RETIRED in lines[0], lines
    assert "--arith" in lines[0]


def test_train_with_workers_gives_the_one_process_bytes():
    """`--workers W` trains through torch.distributed (gloo) and reaches the state hash one
    process reaches with the same micro-batches (docs/REPRO.md, "Data-parallel solvers")."""
    args = ["train", "--preset", "digits-mlp", "--arith", "repro2", "--steps", "3", "--batch"]
    args += ["16", "--micro-batches", "4", "--json"]
    one = runner.invoke(app, args)
    assert one.exit_code == 0, one.output
    two = runner.invoke(app, [*args, "--workers", "2"])
    assert two.exit_code == 0, two.output
    a, b = json.loads(one.stdout), json.loads(two.stdout)
    assert a["state_hash"] == b["state_hash"] and (a["workers"], b["workers"]) == (1, 2)
    assert b["loss"] is None and b["metric"] == a["metric"]
    plain = runner.invoke(app, args[:-3] + ["--json"])  # m = 1: another job, other bytes
    assert json.loads(plain.stdout)["state_hash"] != a["state_hash"]
