"""`cli.demo`'s summary without a chain: the nodes' compute read back from their logs, the
mixed-machine and replay-agreement checks, and the metric labels of the printed tables.

Run: ``.venv/bin/python -m pytest tests/unit/cli/test_demo_summary.py -q``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cli import demo, demo_summary
from cli.demo import NODE_COMPUTE, NODE_LAYOUT


def _write_logs(logdir: Path, compute: dict[str, tuple[int, str]]) -> None:
    for _idx, _role, name, _cmd in NODE_LAYOUT:
        threads, level = compute[name]
        (logdir / f"{name}.log").write_text(
            f"00:00:01 INFO    x: node running as 0xabc\n"
            f"00:00:01 INFO    x: compute: {threads} torch threads for repro jobs, "
            f"CPU capability {level.upper()}, device "
            f"{'cuda (NVIDIA H100 80GB HBM3)' if name == 'solver-honest' else 'cpu'}\n"
        )


def test_node_compute_is_read_from_each_nodes_log(tmp_path: Path) -> None:
    _write_logs(tmp_path, NODE_COMPUTE)
    (tmp_path / "whistleblower.log").write_text("no compute line\n")
    nodes = {n["name"]: n for n in demo._node_compute(tmp_path, ("default", "avx2"))}
    assert nodes["solver-honest"] == {
        "name": "solver-honest",
        "role": "solver",
        "threads": 2,
        "cpu_capability": "AVX2",
        "device": "cuda (NVIDIA H100 80GB HBM3)",
        "aten_cpu_capability": "avx2",
    }
    assert nodes["verifier-1"]["device"] == "cpu"
    assert (
        nodes["verifier-1"]["threads"] == 1 and nodes["verifier-1"]["cpu_capability"] == "DEFAULT"
    )
    assert nodes["whistleblower"]["threads"] is None
    # A CPU without AVX2: every node is asked for `default`.
    assert {n["aten_cpu_capability"] for n in demo._node_compute(tmp_path, ("default",))} == {
        "default"
    }


def test_the_layout_mixes_threads_and_capabilities_between_solver_and_verifiers() -> None:
    honest = NODE_COMPUTE["solver-honest"]
    verifiers = [NODE_COMPUTE[f"verifier-{i}"] for i in range(1, 5)]
    assert any(t != honest[0] and c != honest[1] for t, c in verifiers)
    assert "avx512" not in {c for _t, c in NODE_COMPUTE.values()}


@pytest.mark.parametrize(
    ("same", "expected"), [(None, True), ("threads", False), ("capability", False)]
)
def test_mixed_machines_check_fails_on_uniform_nodes(
    tmp_path: Path, same: str | None, expected: bool
) -> None:
    compute = dict(NODE_COMPUTE)
    if same == "threads":
        compute = {n: (1, c) for n, (_t, c) in compute.items()}
    elif same == "capability":
        compute = {n: (t, "avx2") for n, (t, _c) in compute.items()}
    _write_logs(tmp_path, compute)
    nodes = demo._node_compute(tmp_path, ("default", "avx2"))
    assert demo_summary._mixed_machines(nodes) is expected


HONEST = [f"verifier-{i}" for i in range(1, 5)]


def _summary(
    verdicts: dict[str, list[str]], forced_sample: int = 1, matched: list[str] = HONEST
) -> dict[str, Any]:
    job = {"job_id": 4, "model": "shakespeare-char", "verdicts": verdicts}
    paid = [{"name": n} for n in matched]
    forced = {"job_id": 4, "sample": forced_sample, "rejecters_paid": paid}
    return {"jobs": [job], "forced_errors": [forced]}


def test_replays_agree_only_when_every_honest_verifier_matched() -> None:
    # settled: a reject sealed with the solver's true end reads as an approval of that end
    good = {name: ["Approve"] * 4 for name in HONEST}
    summary = _summary(good)
    assert demo_summary._replays_agreed(summary, summary["jobs"][0])
    unsettled = {name: ["Approve", "Reject", "Approve", "Approve"] for name in HONEST}
    summary = _summary(unsettled)
    assert demo_summary._replays_agreed(summary, summary["jobs"][0])
    bad = {**good, "verifier-3": ["Approve", "Approve", "Reject", "Approve"]}
    summary = _summary(bad)
    assert not demo_summary._replays_agreed(summary, summary["jobs"][0])
    missing = {k: v for k, v in good.items() if k != "verifier-2"}
    summary = _summary(missing)
    assert not demo_summary._replays_agreed(summary, summary["jobs"][0])
    # its sealed end for the forced sample was not the solver's true end
    summary = _summary(unsettled, matched=HONEST[1:])
    assert not demo_summary._replays_agreed(summary, summary["jobs"][0])


def test_summary_labels_each_jobs_metric(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")  # one table row per line
    jobs = [
        {
            "job_id": 1,
            "model": "shakespeare-char",
            "solver_name": "solver-honest",
            "status": "Finalized",
            "dispute_id": 0,
            "metric": "val_bpc",
            "metric_value": 4.8125,
        },
        {
            "job_id": 2,
            "model": "digits-mlp",
            "solver_name": "solver-honest",
            "status": "Finalized",
            "dispute_id": 0,
            "metric": "accuracy",
            "metric_value": 0.9577,
        },
    ]
    nodes = [{"name": "verifier-3", "role": "verifier", "threads": 2, "cpu_capability": "DEFAULT"}]
    demo_summary.print_summary(
        {
            "jobs": jobs,
            "nodes": nodes,
            "slashed": [],
            "rewards": [],
            "shares": [],
            "workdir": "run",
        }
    )
    out = " ".join(capsys.readouterr().out.split())
    assert "validation loss (bits/char): 4.812" in out
    assert "test accuracy: 0.958" in out
    assert "accuracy: 4.8" not in out
    assert "verifier-3" in out and "DEFAULT" in out


def _slash(name: str, cause: str, role: str = "verifier") -> dict[str, Any]:
    return {
        "address": "0x" + "ab" * 20,
        "name": name,
        "role": role,
        "cause": cause,
        "amount_wei": 5,
    }


@pytest.mark.parametrize(
    ("cause", "honest"),
    [("abstention bond", True), ("reject bond", False), ("equivocation", False), ("slash", False)],
)
def test_a_forfeited_abstention_bond_is_not_a_slash_of_an_honest_verifier(
    cause: str, honest: bool
) -> None:
    """An honest seat that abstained on a sample another seat replayed forfeits its abstention
    bond (P-33): the price of missing data, which the check does not count against it; a reject
    bond lost, an equivocation or any other slash of a verifier other than the lazy one does."""
    summary: dict[str, Any] = {
        "jobs": [],
        "forced_errors": [],
        "nodes": [],
        "rewards": [],
        "shares": [],
        "disputes": [],
        "slashed": [_slash("verifier-lazy", "slash"), _slash("verifier-2", cause)],
    }
    checks = demo_summary.checks(summary)
    assert checks["honest_verifiers_not_slashed"] is honest
    assert checks["lazy_verifier_slashed"]


def test_the_slashed_table_names_each_slashs_cause(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    demo_summary.print_summary(
        {
            "jobs": [],
            "nodes": [],
            "slashed": [_slash("verifier-2", "abstention bond")],
            "rewards": [],
            "shares": [],
            "workdir": "run",
        }
    )
    out = " ".join(capsys.readouterr().out.split())
    assert "cause" in out and "abstention bond" in out and "verifier-2" in out
