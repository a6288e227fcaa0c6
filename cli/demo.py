"""`veritrain demo`: the whole protocol, end to end, on a local Anvil chain.

Run: ``veritrain demo --json demo.json`` (or ``bash scripts/demo.sh``).

What runs, each node in its own OS process talking only through the chain and HTTP:
- a submitter (dev account 0, also the deployer) registering models ``digits-mlp`` and
  ``shakespeare-char`` (it becomes their owner), posting one character-level GPT job
  (preset ``shakespeare-char``) and, once the honest solver has claimed it, 3 digits-MLP jobs
  (preset ``digits-mlp``); every job is a repro job (`veritrain.repro`), so its replay is
  bit-identical on any machine;
- 3 solvers: honest (account 1; holds 2 jobs at once), ``skip-steps`` (2: skips optimizer
  steps in segments >= 2), ``perturb`` (3: adds noise to the weights at the end of segments
  >= 2); the cheaters claim only ``digits-mlp`` jobs and one job each (``--claims 1``), so the
  GPT job is always the honest solver's and each solver trains one digits job, however long the
  honest solver trains the GPT job before it claims its digits job;
- 5 verifiers (accounts 4-8), account 8 lazy (approves without replaying);
- 1 whistleblower (account 9).

Mixed machines: each node runs with its own torch thread count (``--threads``) and SIMD
level (``ATEN_CPU_CAPABILITY``, set in its environment before torch is imported; `NODE_COMPUTE`),
so the honest solver trains on another "machine" than the verifiers that replay it, and the
jobs still finalize. Each node logs what it computes with; the summary's ``nodes`` reads it back.

With the demo parameters every staked verifier verifies every job (V = 5) and draws its own
q = 12 segments (docs/SECURITY.md P-27: all 12 of a digits job), so both cheaters (wrong in 10 of
12 segments) are always caught, even when the forced error lands on one of their cheating
samples, and the lazy verifier always approves a wrong segment. The forced-error rate is 10_000 bps
(docs/FORCED_ERRORS.md): every job carries a forced error, so every run shows one caught in each
honest job: the honest verifiers reject the forced claim with the end they replayed, the solver's
true end, and earn the jackpot (their verdict then reads as an approval of that end), the lazy
verifier approves it and is slashed into the pool, the whistleblower flags that approval and is
paid from the pool. The demo waits until every job is Finalized or Rejected, showing what the
chain says meanwhile (`cli.live`: a live view on a terminal, one plain line per change otherwise),
evaluates each job's committed final checkpoint on held-out data (its preset's metric: test
accuracy for the MLP, validation loss in bits per character for the GPT), pays some revenue into
each model, and reports the nodes' compute, slashes, rewards, ownership shares, disputes and
forced errors, all read back from the chain's events.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cli.progress import LogTail, StallWatch
from veritrain.spec import REPRO_ARITH

logger = logging.getLogger(__name__)

__all__ = ["DemoConfig", "run_demo", "NODE_LAYOUT"]

E18 = 10**18
MODEL_NAME = "digits-mlp"
"""The model of the digits jobs (preset ``digits-mlp``), one per solver."""
TEXT_MODEL = "shakespeare-char"
"""The model of the GPT job (preset ``shakespeare-char``), the honest solver's."""
ARITH = REPRO_ARITH
"""Every demo job's arithmetic: replays match across thread counts and SIMD levels."""

DIGITS_LR = 1e-3
"""Learning rate of the first digits job (the preset's own); job i uses (1 + i/10) times it."""

#: (dev account index, role, process name, CLI command); the adversaries run from the
#: testing-only `veritrain adversary` group.
NODE_LAYOUT: tuple[tuple[int, str, str, tuple[str, ...]], ...] = (
    (1, "solver", "solver-honest", ("solver", "run", "--max-jobs", "2")),
    (
        2,
        "solver",
        "solver-skip-steps",
        ("adversary", "solver", "--mode", "skip-steps", "--model", MODEL_NAME, "--claims", "1"),
    ),
    (
        3,
        "solver",
        "solver-perturb",
        ("adversary", "solver", "--mode", "perturb", "--model", MODEL_NAME, "--claims", "1"),
    ),
    (4, "verifier", "verifier-1", ("verifier", "run")),
    (5, "verifier", "verifier-2", ("verifier", "run")),
    (6, "verifier", "verifier-3", ("verifier", "run")),
    (7, "verifier", "verifier-4", ("verifier", "run")),
    (8, "verifier", "verifier-lazy", ("adversary", "verifier", "--lazy")),
    (9, "whistleblower", "whistleblower", ("whistleblower", "run")),
)
NODE_COMPUTE: dict[str, tuple[int, str]] = {
    "solver-honest": (2, "avx2"),
    "solver-skip-steps": (1, "avx2"),
    "solver-perturb": (1, "default"),
    "verifier-1": (1, "default"),
    "verifier-2": (1, "avx2"),
    "verifier-3": (2, "default"),
    "verifier-4": (2, "avx2"),
    "verifier-lazy": (1, "avx2"),
    "whistleblower": (1, "default"),
}
"""Each node's (torch thread count, ``ATEN_CPU_CAPABILITY``): mixed machines. A level this CPU
lacks is lowered to ``default`` (`cpu_capabilities`); ``avx512`` is never asked for."""
STAKES = {"solver": 100 * E18, "verifier": 200 * E18, "whistleblower": 100 * E18}
ROLE_IDS = {"solver": 0, "verifier": 1, "whistleblower": 2}
ROLE_NAMES = {0: "solver", 1: "verifier", 2: "whistleblower"}
HONEST_SOLVER = "solver-honest"
"""The node that trains the GPT job and may run on a GPU (`DemoConfig.solver_device`)."""
POLL_S = 1.5  # seconds between two reads of the chain while the jobs run


@dataclass
class DemoConfig:
    """Settings of one demo run.

    Attributes:
        workdir: folder for logs, node data and the manifest (default ``runs/demo-<time>``).
        total_steps: N per digits job.
        checkpoint_interval: k per digits job.
        jobs: number of digits jobs posted (one per solver).
        text_steps: N of the GPT job (a repro GPT step costs ~0.3-2 s on a 2-core CPU, and
            each of 5 replaying nodes replays its own q = 12 segments, here all 8).
        text_interval: k of the GPT job (divides ``text_steps``; ``text_steps / text_interval``
            segments).
        reward_tokens: solver reward per job (tokens).
        revenue_tokens: revenue paid into the model after settlement (tokens).
        timeout_s: give up after this many seconds without progress (no change of the jobs,
            rounds, disputes or slashes on chain and no new node log line, `cli.progress`): a
            slow but healthy demo never fails.
        block_time: Anvil's seconds per block.
        adjudicator: who settles a disputed segment: ``"bisection"`` (a bisection game over
            training steps, then a committee on one step; docs/DISPUTES.md) or ``"committee"``
            (v0: a committee replays the whole segment).
        extra_env: environment variables added to every node's.
        solver_device: where the honest solver trains (`--device` of `solver run`: ``"auto"``
            puts it on the GPU when torch sees one); every other node runs on the CPU, so a
            GPU solver is verified from CPUs.
        dashboard: serve the dashboard (`cli.dashboard.DemoDashboard`) on a free port while
            the demo runs; its address is printed first.
        hold: once the jobs settle and the summary is read, keep Anvil, the nodes and the
            dashboard up until Enter (or stdin closes).
    """

    workdir: Path | None = None
    total_steps: int = 300
    checkpoint_interval: int = 25
    jobs: int = 3
    text_steps: int = 16
    text_interval: int = 2
    reward_tokens: int = 50
    revenue_tokens: int = 100
    timeout_s: float = 300.0
    block_time: float = 1.0
    adjudicator: str = "bisection"
    extra_env: dict[str, str] = field(default_factory=dict)
    solver_device: str = "auto"
    dashboard: bool = True
    hold: bool = False


def start_dashboard(cfg: Any, rpc_url: str, deployment: Any, workdir: Path) -> Any:
    """The demo's in-process dashboard (`cli.dashboard.DemoDashboard`; it prints its address),
    or None when ``cfg.dashboard`` is off."""
    if not cfg.dashboard:
        return None
    from cli.dashboard import DemoDashboard

    return DemoDashboard(rpc_url, deployment, workdir)


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "cli.app", *args]


def _spawn(
    name: str, argv: list[str], logdir: Path, env: dict[str, str]
) -> subprocess.Popen[bytes]:
    with open(logdir / f"{name}.log", "wb") as log:  # the child keeps its own descriptor
        return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env)


def _stop_all(procs: dict[str, subprocess.Popen[bytes]]) -> None:
    for p in procs.values():
        if p.poll() is None:
            p.terminate()
    deadline = time.monotonic() + 10
    for p in procs.values():
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()


def run_demo(cfg: DemoConfig) -> dict[str, Any]:
    """Run the demo and return its summary (see `cli.demo_summary` and the module docstring).

    Returns:
        ``{"ok", "elapsed_s", "jobs": [...], "slashed": [...], "rewards": [...],
        "shares": [...], "disputes": [...], "forced_errors": [...], "checks": {...},
        "workdir"}``; ``ok`` is True when every expected outcome held.

    Raises:
        TimeoutError: nothing progressed (chain state, node logs) for ``cfg.timeout_s``
            seconds.
        chain.errors.ChainError: deployment failed.
    """
    from chain.anvil import Anvil, dev_accounts
    from chain.client import ChainClient
    from chain.deploy import deploy_protocol
    from chain.manifest import ProtocolParams, write_manifest
    from cli.demo_summary import checks, summarize  # it imports this module

    t0 = time.monotonic()
    workdir = cfg.workdir or Path("runs") / time.strftime("demo-%Y%m%d-%H%M%S")
    workdir = workdir.resolve()
    logdir = workdir / "logs"
    logdir.mkdir(parents=True, exist_ok=True)
    accounts = dev_accounts(10)
    roles_by_addr: dict[str, str] = {accounts[0].address: "submitter"}
    names_by_addr: dict[str, str] = {accounts[0].address: "submitter"}
    for idx, role, name, _ in NODE_LAYOUT:
        roles_by_addr[accounts[idx].address] = role
        names_by_addr[accounts[idx].address] = name

    procs: dict[str, subprocess.Popen[bytes]] = {}
    with Anvil(block_time=cfg.block_time, log_path=logdir / "anvil.log") as anvil:
        logger.info("anvil at %s; deploying", anvil.rpc_url)
        deployer = ChainClient(anvil.rpc_url, accounts[0])
        params = ProtocolParams.demo(adjudicator=cfg.adjudicator)
        # Idle OpenMP threads sleep instead of spinning: a 2-thread node spinning on a loaded
        # 2-core machine starves the others (and itself) many times over.
        env = {"OMP_WAIT_POLICY": "PASSIVE", **os.environ, **cfg.extra_env, "PYTHONUNBUFFERED": "1"}
        # The set-up's transactions wait for no block (about 40 s less at 1 s blocks).
        with anvil.instant_blocks():
            dep = deploy_protocol(deployer, params)
            manifest = write_manifest(dep, workdir / "deployments")
            common = ["--rpc-url", anvil.rpc_url, "--deployment", str(manifest)]
            # Fund every account and stake the node roles (what `veritrain stake` does).
            for idx, role, _name, _ in NODE_LAYOUT:
                c = ChainClient(anvil.rpc_url, accounts[idx], dep)
                c.token.faucet(1_000 * E18)
                c.stakes.stake(ROLE_IDS[role], STAKES[role])
            deployer.token.faucet(10_000 * E18)
            submit = [*common, "--dev-account", "0", "--reward", str(cfg.reward_tokens), "--json"]
            _post_models_and_text_job(cfg, submit, common, env, logdir)
        dash = start_dashboard(cfg, anvil.rpc_url, dep, workdir)

        levels = cpu_capabilities()
        try:
            for idx, role, name, command in NODE_LAYOUT:
                threads, level = NODE_COMPUTE[name]
                argv = _cli(
                    *command,
                    *common,
                    "--dev-account",
                    str(idx),
                    "--data-dir",
                    str(workdir / "nodes" / name),
                    "--threads",
                    str(threads),
                )
                if role == "solver":
                    argv += ["--port", str(_free_port()), "--host", "127.0.0.1"]
                if name == HONEST_SOLVER:
                    argv += ["--device", cfg.solver_device]
                # read by torch when it is imported: the child's SIMD level
                node_env = {**env, "ATEN_CPU_CAPABILITY": level if level in levels else "default"}
                if command[0] == "adversary":
                    # the cheaters do not care whether their machine reproduces repro2; the
                    # honest nodes check theirs at start (`NodeBase.machine_selftest`)
                    node_env["VERITRAIN_NODE_SELFTEST"] = "0"
                procs[name] = _spawn(name, argv, logdir, node_env)
            watch = StallWatch(cfg.timeout_s)  # fails only when nothing progresses
            tail = LogTail(logdir)
            _wait_claimed(deployer, 1, watch, tail, procs)
            # The digits jobs all start from the model's head (seed 1, its seed state) and differ
            # in their learning rate: distinct trainings (one training is posted once, P-26). The
            # first posted holds the head's extension slot (P-30): its trainer mints the shares
            # when its final state is appended; the others are paid only. Which solver claims it
            # is a race, so the digits model mints only when the honest solver won it.
            for i in range(cfg.jobs):
                digits_job = _cli(
                    "job",
                    "submit",
                    *submit,
                    "--preset",
                    MODEL_NAME,
                    "--arith",
                    ARITH,
                    "--seed",
                    "1",
                    "--lr",
                    repr(DIGITS_LR * (1 + i / 10)),
                    "--steps",
                    str(cfg.total_steps),
                    "--interval",
                    str(cfg.checkpoint_interval),
                )
                _submitter(digits_job, env, logdir / f"submitter-{i}.log", "job submission")

            _wait_settled(
                deployer,
                cfg,
                t0,
                procs,
                watch,
                tail,
                names=names_by_addr,
                from_block=dep.block,
            )
            summary = summarize(deployer, dep, cfg, roles_by_addr, names_by_addr)
            summary["nodes"] = _node_compute(logdir, levels)
            # Revenue flows to the owners: pay some into each model, read it back per holder.
            if cfg.revenue_tokens:
                from veritrain.spec import model_id_hash

                for model in sorted({h["model"] for h in summary["shares"]}):
                    mid = model_id_hash(model)
                    deployer.shares.pay_revenue(mid, cfg.revenue_tokens * E18)
                    for holder in summary["shares"]:
                        if holder["model"] == model:
                            holder["revenue_wei"] = deployer.shares.revenue_of(
                                mid, holder["address"]
                            )
                summary["revenue_paid_wei"] = cfg.revenue_tokens * E18
            if dash is not None and cfg.hold:
                dash.hold()
        finally:
            if dash is not None:
                dash.stop()
            _stop_all(procs)
    summary["elapsed_s"] = round(time.monotonic() - t0, 1)
    summary["workdir"] = str(workdir)
    summary["checks"] = checks(summary)
    summary["ok"] = all(summary["checks"].values())
    return summary


def cpu_capabilities() -> tuple[str, ...]:
    """The ``ATEN_CPU_CAPABILITY`` levels the demo may give its nodes on this CPU:
    ``("default", "avx2")`` on an x86-64 CPU with AVX2 (Linux ``/proc/cpuinfo`` flags), else
    ``("default",)``. Asking torch for a level the CPU lacks kills the process (SIGILL)."""
    try:
        flags = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return ("default",)
    return ("default", "avx2") if re.search(r"^flags\s*:.*\bavx2\b", flags, re.M) else ("default",)


_COMPUTE_LINE = re.compile(
    r"compute: (\d+) torch threads for repro jobs, CPU capability (\w+), device ([^\n]+)"
)


def _node_compute(logdir: Path, levels: tuple[str, ...]) -> list[dict[str, Any]]:
    """What each node process computed with, as it logged it at start (`NodeBase.run`).

    Returns:
        One ``{"name", "role", "threads", "cpu_capability", "device", "aten_cpu_capability"}``
        per node of `NODE_LAYOUT`: ``threads`` (int), ``cpu_capability`` (torch's level, e.g.
        ``"AVX2"``) and ``device`` (``"cpu"`` or ``"cuda (GPU name)"``) as the node reported
        them (None when its log has no such line),
        ``aten_cpu_capability`` the value its environment was given.
    """
    out = []
    for _idx, role, name, _command in NODE_LAYOUT:
        try:
            text = (logdir / f"{name}.log").read_text(errors="replace")
        except OSError:
            text = ""
        found = _COMPUTE_LINE.search(text)
        asked = NODE_COMPUTE[name][1]
        out.append(
            {
                "name": name,
                "role": role,
                "threads": int(found.group(1)) if found else None,
                "cpu_capability": found.group(2) if found else None,
                "device": found.group(3).strip() if found else None,
                "aten_cpu_capability": asked if asked in levels else "default",
            }
        )
    return out


def _post_models_and_text_job(
    cfg: DemoConfig, submit: list[str], common: list[str], env: dict[str, str], logdir: Path
) -> None:
    """The submitter, its own process as a user's would be, before any node starts: it registers
    the models (first come, first served; only the owner and its authorised posters may post
    jobs under them), then posts the GPT job, which only the honest solver takes (the cheaters
    train digits only). The digits jobs follow once the honest solver holds it. Each model is
    bound to its preset in the demo's arithmetic; its lineage starts at the seed state of the
    first job `job submit` posts (seed 1).

    Raises:
        RuntimeError: a command failed (`_submitter`).
    """
    for model in (MODEL_NAME, TEXT_MODEL):
        register = _cli("model", "register", model, "--arith", ARITH, *common, "--dev-account", "0")
        _submitter(register, env, logdir / f"model-{model}.log", "model registration")
    text_job = _cli(
        "job",
        "submit",
        *submit,
        "--preset",
        TEXT_MODEL,
        "--arith",
        ARITH,
        "--steps",
        str(cfg.text_steps),
        "--interval",
        str(cfg.text_interval),
    )
    _submitter(text_job, env, logdir / "submitter-text.log", "job submission")


def _submitter(argv: list[str], env: dict[str, str], log: Path, what: str) -> None:
    """Run one submitter command to completion, its output kept in `log`.

    Raises:
        RuntimeError: it exited non-zero (the message ends with its stderr).
    """
    out = subprocess.run(argv, env=env, capture_output=True, timeout=180)
    log.write_bytes(out.stdout + out.stderr)
    if out.returncode != 0:
        raise RuntimeError(f"{what} failed: {out.stderr.decode(errors='replace')[-2000:]}")


def _wait_claimed(
    client: Any,
    job_id: int,
    watch: StallWatch,
    tail: LogTail,
    procs: dict[str, subprocess.Popen[bytes]],
) -> None:
    """Poll until `job_id` is no longer Open (a solver claimed it); new node log lines are
    progress (the nodes start: selftest, stake, the spec's data).

    Raises:
        TimeoutError: still Open, and nothing progressed for ``watch.stall_s`` seconds.
        RuntimeError: a node process exited early.
    """
    logger.info("waiting for a solver to claim job %d", job_id)
    while client.jobs.get_job(job_id, with_uris=False).status.name == "Open":
        dead = [n for n, p in procs.items() if p.poll() is not None]
        if dead:
            raise RuntimeError(f"node process(es) exited early: {', '.join(dead)}; see logs")
        watch.observe_lines(tail.read())
        watch.check(f"job {job_id} not claimed")
        time.sleep(POLL_S)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_settled(
    client: Any,
    cfg: DemoConfig,
    t0: float,
    procs: dict[str, subprocess.Popen[bytes]],
    watch: StallWatch,
    tail: LogTail,
    *,
    names: dict[str, str],
    from_block: int,
) -> None:
    """Poll until every job is Finalized/Rejected, showing the chain's state as it goes.

    Each poll (every `POLL_S` seconds) reads a `cli.live.Snapshot` from the chain (jobs and
    their round phase, disputes, slashes, settled forced errors) and shows it: a live view
    redrawn in place on a terminal, one plain line per change otherwise. A change of the
    snapshot, or a new node log line, is progress (`watch`).

    Raises:
        TimeoutError: nothing progressed for ``cfg.timeout_s`` seconds.
        RuntimeError: a node process exited early.
    """
    from cli.live import ChainPoller, LiveView

    terminal = {"Finalized", "Rejected", "Cancelled"}
    from veritrain.spec import model_id_hash

    models = {model_id_hash(m): m for m in (MODEL_NAME, TEXT_MODEL)}
    poller = ChainPoller(client, names, from_block, models=models)
    with LiveView() as view:
        while True:
            elapsed = time.monotonic() - t0
            dead = [n for n, p in procs.items() if p.poll() is not None]
            snapshot = poller.poll(elapsed, dead)
            view.update(snapshot)
            if dead:
                raise RuntimeError(f"node process(es) exited early: {', '.join(dead)}; see logs")
            watch.observe("chain", dataclasses.replace(snapshot, elapsed_s=0.0))
            watch.observe_lines(tail.read())
            watch.check("jobs not settled")
            statuses = [j.status for j in snapshot.jobs]
            if len(statuses) >= cfg.jobs + 1 and all(s in terminal for s in statuses):
                return
            time.sleep(POLL_S)
