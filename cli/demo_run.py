"""`veritrain demo --run`: one model trained by many solvers over rounds (DiLoCo), on Anvil.

Run: ``veritrain demo --run --json run.json`` (``--preset llama-char`` for the Llama).

A DiLoCo run (docs/RUNS.md) of a language model (preset ``shakespeare-char``, the character-level
GPT, unless ``RunDemoConfig.preset`` names another; repro arithmetic, so every replay is
bit-identical on any machine): M = 3 seats, R = 4 rounds of H inner steps, each node in its own OS
process talking only through the chain and HTTP:

- the model's owner (dev account 0, the demo's own process): registers the model, opens the
  run, posts and registers each round's contribution jobs once the previous round is final,
  pays revenue into the model at the end;
- ``solver-a`` (account 1, honest, up to 2 seats at once) trains in every round;
- ``solver-b`` (account 2, honest) trains in round 0, then drops out: it is restarted with
  ``--max-jobs 0``, claiming nothing and serving its counted work, which later rounds start from;
- ``solver-cheat`` (account 3, adversary ``perturb``) trains one seat of round 0 and tampers with
  its weights (one claim in its life, ``--claims 1``): its contribution is rejected by
  verification, its solver slashed, its seat left out of the outer step, and it stops;
- ``solver-late`` (account 8, honest) joins before round 2 and catches up from the chain and the
  others' servers;
- 3 verifiers (accounts 4-6) and a whistleblower (account 9), which also checks every round
  claim.

The solvers' nodes propose each round's result once its jobs settle and finalize it after the
challenge window; each counted contribution mints H x computePerStep shares to its solver. The
demo measures the global model's validation bits per character after each final round (the
live view shows it as it comes), pays revenue into the model, has every holder claim its part,
and reports rounds, shares, revenue and slashes, all read back from the chain.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cli.demo import (
    E18,
    POLL_S,
    ROLE_IDS,
    ROLE_NAMES,
    STAKES,
    _cli,
    _free_port,
    _spawn,
    _stop_all,
    start_dashboard,
)
from cli.progress import LogTail, StallWatch
from veritrain.spec import REPRO_ARITH
from veritrain.store import CheckpointStore
from veritrain.units import vtt

logger = logging.getLogger(__name__)

__all__ = ["RUN_LAYOUT", "RunDemoConfig", "print_run_summary", "run_run_demo"]

MODEL = "shakespeare-char"
"""The run's default model (preset ``shakespeare-char``, repro arithmetic)."""
MODEL_SLOT = "<model>"
"""Stands for the run's model (`RunDemoConfig.preset`) in a `RUN_LAYOUT` command."""

#: (dev account index, role, process name, CLI command).
RUN_LAYOUT: tuple[tuple[int, str, str, tuple[str, ...]], ...] = (
    (1, "solver", "solver-a", ("solver", "run", "--max-jobs", "2")),
    (2, "solver", "solver-b", ("solver", "run")),
    (
        3,
        "solver",
        "solver-cheat",
        ("adversary", "solver", "--mode", "perturb", "--model", MODEL_SLOT, "--claims", "1"),
    ),
    (4, "verifier", "verifier-1", ("verifier", "run")),
    (5, "verifier", "verifier-2", ("verifier", "run")),
    (6, "verifier", "verifier-3", ("verifier", "run")),
    (8, "solver", "solver-late", ("solver", "run")),
    (9, "whistleblower", "whistleblower", ("whistleblower", "run")),
)
THREADS = {"solver-a": 2, "verifier-1": 2}
"""Torch threads per node (1 when not listed): mixed thread counts, and solver-a, started last,
finds its machine checks in the machine-wide cache verifier-1 filled at the start."""


@dataclass
class RunDemoConfig:
    """Settings of one run demo.

    Attributes:
        workdir: folder for logs, node data and the manifest (default ``runs/run-demo-<time>``).
        preset: the `veritrain.presets` preset the run trains (a language model: the demo
            measures validation bits per character, or per token, round by round).
        rounds: R.
        seats: M (at least 3: the cheater, the leaver and solver-a share round 0).
        inner_steps: H, inner steps per contribution.
        interval: k, the contributions' checkpoint interval (divides H).
        reward_tokens: reward per contribution (tokens).
        revenue_tokens: revenue paid into the model at the end (tokens).
        timeout_s: give up after this many seconds without progress (no change on chain and
            no new node log line, `cli.progress`): a slow but healthy run never fails.
        adjudicator: ``"committee"`` (a committee replays a disputed segment) or
            ``"bisection"``.
        extra_env: environment variables added to every node's.
        dashboard: serve the dashboard on a free port while the demo runs.
        hold: at the end, keep the chain, the nodes and the dashboard up until Enter.
    """

    workdir: Path | None = None
    preset: str = MODEL
    rounds: int = 4
    seats: int = 3
    inner_steps: int = 8
    interval: int = 2
    reward_tokens: int = 20
    revenue_tokens: int = 100
    timeout_s: float = 300.0
    adjudicator: str = "committee"
    extra_env: dict[str, str] = field(default_factory=dict)
    dashboard: bool = True
    hold: bool = False


class _Nodes:
    """The demo's node processes: started, restarted, stopped by name."""

    def __init__(
        self, rpc_url: str, manifest: Path, workdir: Path, env: dict[str, str], model: str
    ) -> None:
        self.model = model
        self.common = ["--rpc-url", rpc_url, "--deployment", str(manifest)]
        self.workdir = workdir
        self.env = env
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.ports: dict[str, int] = {}
        self.gone: set[str] = set()  # stopped on purpose

    def start(self, name: str, *extra: str) -> None:
        idx, role, _, layout = next(n for n in RUN_LAYOUT if n[2] == name)
        command = tuple(self.model if a == MODEL_SLOT else a for a in layout)
        argv = _cli(
            *command,
            *self.common,
            "--dev-account",
            str(idx),
            "--data-dir",
            str(self.workdir / "nodes" / name),
            "--threads",
            str(THREADS.get(name, 1)),
            *extra,
        )
        if role == "solver":
            port = self.ports.setdefault(name, _free_port())  # a restart keeps its URL
            argv += ["--port", str(port), "--host", "127.0.0.1"]
        env = dict(self.env)
        if command[0] == "adversary":
            env["VERITRAIN_NODE_SELFTEST"] = "0"
        logs = self.workdir / "logs"
        suffix = "-serving" if "--max-jobs" in extra else ""
        self.procs[name + suffix] = _spawn(name + suffix, argv, logs, env)

    def stop(self, name: str) -> None:
        proc = self.procs.pop(name)
        self.gone.add(name)
        _stop_all({name: proc})

    def checked(self, name: str) -> bool:
        """Whether node `name` is past its machine selftest (`NodeCore.machine_selftest`: it
        logged the outcome, or it runs none) and so can claim or replay at once."""
        command = next(n for n in RUN_LAYOUT if n[2] == name)[3]
        if command[0] == "adversary":
            return True  # runs no selftest
        try:
            text = (self.workdir / "logs" / f"{name}.log").read_text(errors="replace")
        except OSError:
            return False
        return "selftest: " in text or "selftest could not run" in text

    def serving(self, name: str) -> bool:
        """Whether solver `name`'s checkpoint server answers."""
        import httpx

        try:
            return httpx.get(f"http://127.0.0.1:{self.ports[name]}/health", timeout=2).is_success
        except httpx.HTTPError:
            return False

    def dead(self) -> list[str]:
        return [n for n, p in self.procs.items() if p.poll() is not None]


def run_run_demo(cfg: RunDemoConfig) -> dict[str, Any]:
    """Run the run demo and return its summary (see the module docstring).

    Returns:
        ``{"ok", "elapsed_s", "run_id", "run_hash", "model", "metric", "rounds": [{"round",
        "jobs", "accepted", "rejected", "excluded", "val_bpc", "bytes_uploaded", "global_hash"}],
        "start_val_bpc", "shares": [{"name", "address", "shares", "bps", "contributions"}],
        "revenue": {"paid_wei", "claimed_wei": {name: wei}}, "slashed": [{"name", "role",
        "amount_wei"}],
        "checks": {...}, "workdir"}``; ``ok`` is True when every expected outcome held.
        ``metric`` names what ``val_bpc`` holds (`JobSpec.metric_name`: bits per character, or
        ``"val_bpt"``, per token, for a tokens dataset).

    Raises:
        TimeoutError: nothing progressed (chain state, node logs) for ``cfg.timeout_s``
            seconds.
        RuntimeError: a node process exited early.
        chain.errors.ChainError: deployment or a transaction failed.
    """
    from chain.anvil import Anvil, dev_accounts
    from chain.client import ChainClient
    from chain.deploy import deploy_protocol
    from chain.manifest import ProtocolParams, write_manifest
    from cli.live import ChainPoller, LiveView
    from noderuntime.runs import open_run
    from veritrain.diloco import RunSpec
    from veritrain.lineage import ModelCommitments
    from veritrain.presets import preset
    from veritrain.runsim import evaluate_global, pretrained_start
    from veritrain.training import TrainingEngine

    t0 = time.monotonic()
    workdir = (cfg.workdir or Path("runs") / time.strftime("run-demo-%Y%m%d-%H%M%S")).resolve()
    (workdir / "logs").mkdir(parents=True, exist_ok=True)
    accounts = dev_accounts(10)
    names: dict[str, str] = {str(accounts[idx].address): name for idx, _, name, _ in RUN_LAYOUT}
    names[str(accounts[0].address)] = "owner"
    run = RunSpec(
        inner=preset(
            cfg.preset, REPRO_ARITH, total_steps=cfg.inner_steps, checkpoint_interval=cfg.interval
        ),
        seats=cfg.seats,
        rounds=cfg.rounds,
    )
    engine = TrainingEngine(run.inner)
    start = pretrained_start(run, 0)
    with Anvil(block_time=1.0, log_path=workdir / "logs" / "anvil.log") as anvil:
        owner = ChainClient(anvil.rpc_url, accounts[0])
        params = ProtocolParams.demo(
            adjudicator=cfg.adjudicator,
            verifiers_per_job=3,
            forced_error_rate_bps=0,
            challenge_window=12,
            claim_challenge_window=15,
            # every round's seats are posted within seconds of its opening (the run opens once
            # the nodes are up, the late joiner starts a round early; round 1 waits for the
            # leaver's restart, 10-30 s); round 1 leaves a seat unposted and waits out this
            # window before its claim
            registration_window=90,
        )
        # The set-up's transactions wait for no block (about 40 s less at 1 s blocks).
        with anvil.instant_blocks():
            dep = deploy_protocol(owner, params)
            for idx, role, name, _ in RUN_LAYOUT:
                c = ChainClient(anvil.rpc_url, accounts[idx], dep)
                c.token.faucet(1_000 * E18)
                # solver-a holds two seats at once: a solverStake locked per claim
                c.stakes.stake(ROLE_IDS[role], STAKES[role] * (2 if name == "solver-a" else 1))
            owner.token.faucet(10_000 * E18)
            model_id = run.inner.model_id_hash()
            seed_state = engine.state_hash(engine.init_state())
            owner.shares.register_model(
                model_id, **ModelCommitments.of(run.inner, seed_state).model_dump()
            )
        manifest = write_manifest(dep, workdir / "deployments")
        dash = start_dashboard(cfg, anvil.rpc_url, dep, workdir)
        uri = run.to_data_uri()
        reward = cfg.reward_tokens * E18

        env = {"OMP_WAIT_POLICY": "PASSIVE", **os.environ, **cfg.extra_env, "PYTHONUNBUFFERED": "1"}
        nodes = _Nodes(anvil.rpc_url, manifest, workdir, env, cfg.preset)
        poller = ChainPoller(owner, names, dep.block, models={model_id: cfg.preset})
        store = CheckpointStore(workdir / "owner-store")  # the final states the owner proved
        start_bpc = evaluate_global(engine, start)
        watch = StallWatch(cfg.timeout_s)  # fails only when nothing progresses
        tail = LogTail(workdir / "logs")
        try:
            with LiveView() as view:

                def wait(what: str, done: Any) -> None:
                    """Poll (and show) until `done()`; stop the cheater once it was caught.
                    A change of the chain's snapshot or a new node log line is progress;
                    TimeoutError after ``cfg.timeout_s`` seconds without any."""
                    while True:
                        elapsed = time.monotonic() - t0
                        snapshot = poller.poll(elapsed, nodes.dead())
                        view.update(snapshot)
                        if snapshot.dead:
                            raise RuntimeError(
                                f"node process(es) exited early: {', '.join(snapshot.dead)}"
                            )
                        if "solver-cheat" in nodes.procs and any(
                            j.solver == "solver-cheat" and j.status == "Rejected"
                            for j in snapshot.jobs
                        ):
                            nodes.stop("solver-cheat")  # slashed: it leaves
                        if done():
                            view.update(poller.poll(time.monotonic() - t0, nodes.dead()))
                            return
                        watch.observe("chain", dataclasses.replace(snapshot, elapsed_s=0.0))
                        watch.observe_lines(tail.read())
                        watch.check(what)
                        time.sleep(POLL_S)

                def final(t: int) -> bool:
                    if owner.runs.get_run(run_id).round <= t:
                        return False
                    poller.metrics[(run_id, t)] = _metric(owner, run, t + 1, engine, store)
                    return True

                def claimed(jobs: list[int]) -> bool:
                    return all(
                        owner.jobs.get_job(j, with_uris=False).status.name != "Open" for j in jobs
                    )

                for name in ("verifier-1", "verifier-2", "verifier-3", "whistleblower"):
                    nodes.start(name)
                nodes.start("solver-b")
                nodes.start("solver-cheat")
                # Round 0's registration closes registration_window after it opens; its last
                # seat is posted once the first two are claimed. Nodes first check their
                # machine (the quick selftest, seconds; the full one follows in the
                # background): post once they are past it.
                started = ("verifier-1", "verifier-2", "verifier-3", "whistleblower", "solver-b")
                wait("the nodes' machine checks", lambda: all(map(nodes.checked, started)))
                # round 0's registration window opens with the run
                opened_at = int(owner.block_number())
                run_id = open_run(owner, run, start, uri)
                first = _post(owner, run, 0, reward=reward, seats=[0, 1], store=store)
                wait("round 0's first seats claimed", lambda: claimed(first))
                nodes.start("solver-a")
                _post(owner, run, 0, reward=reward, seats=range(2, run.seats), store=store)
                wait("round 0 final", lambda: final(0))
                nodes.stop("solver-b")  # drops out: serves its counted work, claims nothing
                nodes.start("solver-b", "--max-jobs", "0")
                wait("solver-b serving again", lambda: nodes.serving("solver-b"))
                for t in range(1, cfg.rounds):
                    seats = [0, 1] if t == 1 else list(range(run.seats))
                    posted = _post(owner, run, t, reward=reward, seats=seats, store=store)
                    if t == 1 and cfg.rounds > 2:
                        # The late joiner starts once round 1's seats are taken (it finds no
                        # seat to claim before round 2) and is up before round 2 is posted:
                        # else solver-a, which may hold two seats at once, could train all
                        # three of them while the late node starts.
                        wait("round 1's seats claimed", lambda jobs=posted: claimed(jobs))
                        nodes.start("solver-late")
                        wait("solver-late serving", lambda: nodes.serving("solver-late"))
                    wait(f"round {t} final", lambda t=t: final(t))
            summary = _summarize(owner, run, run_id, names, poller.metrics, start_bpc, store)
            summary["gas"] = _gas(
                owner, opened_at, sum(len(r["accepted"]) for r in summary["rounds"])
            )
            if cfg.revenue_tokens:
                summary["revenue"] = _revenue(
                    owner, anvil.rpc_url, dep, model_id, cfg.revenue_tokens * E18, summary
                )
            if dash is not None and cfg.hold:
                dash.hold()
        finally:
            if dash is not None:
                dash.stop()
            _stop_all(nodes.procs)
    summary["elapsed_s"] = round(time.monotonic() - t0, 1)
    summary["workdir"] = str(workdir)
    summary["checks"] = _checks(summary, run, cfg)
    summary["ok"] = all(summary["checks"].values())
    return summary


def _post(owner: Any, run: Any, t: int, *, reward: int, seats: Any, store: Any) -> list[int]:
    """Post `seats` of round t as the owner, as `veritrain run drive` posts a round
    (`noderuntime.rundriver.drive_step`); returns their job ids.

    Raises:
        RuntimeError: round t is not the run's open round with those seats to post.
    """
    from noderuntime.rundriver import drive_step

    step = drive_step(owner, run, reward=reward, seats=list(seats), store=store)
    if step.action != "posted" or step.round != t:
        raise RuntimeError(
            f"round {t}'s seats {list(seats)} were not posted: run at round {step.round}, "
            f"{step.action} {step.reason} {step.detail}".rstrip()
        )
    return step.jobs


def _metric(client: Any, run: Any, rounds: int, engine: Any, store: Any) -> float:
    """Validation metric of the run's global state after `rounds` final rounds."""
    from noderuntime.runs import run_state
    from veritrain.runsim import evaluate_global

    state = run_state(client, run, rounds, store=store)
    return float(evaluate_global(engine, state.state.to_bytes()))


def _summarize(
    client: Any,
    run: Any,
    run_id: int,
    names: dict[str, str],
    metrics: dict[tuple[int, int], float],
    start_bpc: float,
    store: Any,
) -> dict[str, Any]:
    """The run as the chain records it: rounds, shares, slashes."""
    from noderuntime.runs import run_state

    view = client.runs.get_run(run_id)
    state = run_state(client, run, view.round, store=store)
    rounds = []
    contributions: dict[str, int] = {}
    for t, result in enumerate(state.rounds):
        jobs = state.jobs.get(t, {})
        rejected, solvers = [], {}
        for seat, job_id in sorted(jobs.items()):
            job = client.jobs.get_job(job_id, with_uris=False)
            solvers[str(seat)] = names.get(job.solver, job.solver)
            if job.status.name == "Rejected":
                rejected.append(seat)
        for seat in result.accepted:
            who = solvers[str(seat)]
            contributions[who] = contributions.get(who, 0) + 1
        rounds.append(
            {
                "round": t,
                "jobs": {str(s): j for s, j in sorted(jobs.items())},
                "solvers": solvers,
                "accepted": result.accepted,
                "rejected": rejected,
                "excluded": sorted(set(jobs) - set(result.accepted) - set(rejected)),
                "val_bpc": metrics.get((run_id, t)),
                "bytes_uploaded": sum(result.delta_bytes.values()),
                "global_hash": "0x" + result.state.state_hash().hex(),
            }
        )
    model_id = run.inner.model_id_hash()
    shares = []
    for address, name in names.items():
        held = client.shares.balance_of(model_id, address)
        if held:
            shares.append(
                {
                    "name": name,
                    "address": address,
                    "shares": held,
                    "bps": client.shares.ownership_bps(model_id, address),
                    "contributions": contributions.get(name, 0),
                }
            )
    stakes = client.stakes.contract
    slashed = []
    for ev in client.event_logs(stakes, ["StakeSlashed"], 0, client.block_number()):
        role = int(ev.args["role"])
        slashed.append(
            {
                "name": names.get(ev.args["account"], ev.args["account"]),
                "role": ROLE_NAMES.get(role, str(role)),
                "amount_wei": int(ev.args["slashed"]),
            }
        )
    return {
        "run_id": run_id,
        "run_hash": "0x" + run.run_hash().hex(),
        "model": run.inner.model_id,
        "metric": run.inner.metric_name,
        "seats": run.seats,
        "inner_steps": run.inner_steps,
        "start_val_bpc": start_bpc,
        "rounds": rounds,
        "shares": shares,
        "slashed": slashed,
    }


def _gas(client: Any, from_block: int, contributions: int) -> dict[str, Any]:
    """Gas of every transaction from `from_block` (the run's opening) to now, by contract and
    function, and per counted contribution (each round's jobs, their verification, the round
    claims: everything the run cost on chain, divided by the work it paid for).

    Returns:
        ``{"total", "per_contribution", "by_call": {"Contract.function": gas}}``.
    """
    from web3.exceptions import Web3Exception

    by_call: dict[str, int] = {}
    total = 0
    w3 = client.w3
    for number in range(from_block, int(client.block_number()) + 1):
        block = w3.eth.get_block(number, full_transactions=True)
        for tx in block["transactions"]:
            receipt = w3.eth.get_transaction_receipt(tx["hash"])
            used = int(receipt["gasUsed"])
            total += used
            name = client.contract_name(tx["to"]) if tx["to"] else None
            call = "other"
            if name is not None:
                try:
                    fn, _ = client.contract_by_name(name).decode_function_input(tx["input"])
                    call = f"{name}.{fn.fn_name}"
                except (ValueError, Web3Exception):
                    call = name
            by_call[call] = by_call.get(call, 0) + used
    return {
        "total": total,
        "per_contribution": total // max(1, contributions),
        "by_call": dict(sorted(by_call.items(), key=lambda kv: -kv[1])),
    }


def _revenue(
    owner: Any, rpc_url: str, dep: Any, model_id: bytes, amount: int, summary: dict[str, Any]
) -> dict[str, Any]:
    """Pay `amount` into the model, then have every holder claim its part."""
    from chain.anvil import dev_accounts
    from chain.client import ChainClient

    owner.shares.pay_revenue(model_id, amount)
    keys = {a.address: a for a in dev_accounts(10)}
    claimed = {}
    for holder in summary["shares"]:
        client = ChainClient(rpc_url, keys[holder["address"]], dep)
        due = client.shares.revenue_of(model_id)
        before = client.token.balance_of()
        client.shares.claim_revenue(model_id)
        got = client.token.balance_of() - before
        holder["revenue_claimed_wei"] = got
        claimed[holder["name"]] = got
        if got != due:
            raise RuntimeError(f"{holder['name']} claimed {got} wei of {due} due")
    return {"paid_wei": amount, "claimed_wei": claimed}


def _checks(summary: dict[str, Any], run: Any, cfg: RunDemoConfig) -> dict[str, bool]:
    """What the run demo promises, each a named check."""
    rounds = summary["rounds"]
    bpc = [summary["start_val_bpc"]] + [r["val_bpc"] for r in rounds]
    shares = {h["name"]: h for h in summary["shares"]}
    per = (
        summary["shares"][0]["shares"] // max(1, summary["shares"][0]["contributions"])
        if (summary["shares"])
        else 0
    )
    solvers_by_round = [set(r["solvers"].values()) for r in rounds]
    revenue = summary.get("revenue", {"paid_wei": 0, "claimed_wei": {}})
    return {
        "every_round_final": len(rounds) == cfg.rounds,
        "loss_falls_every_round": all(b is not None for b in bpc)
        and all(b < a for a, b in zip(bpc, bpc[1:], strict=False)),
        "cheater_rejected_and_slashed": bool(rounds)
        and any(rounds[0]["solvers"][str(s)] == "solver-cheat" for s in rounds[0]["rejected"])
        and any(s["name"] == "solver-cheat" and s["role"] == "solver" for s in summary["slashed"]),
        "cheater_never_counted": "solver-cheat" not in shares,
        "leaver_only_in_round_0": len(rounds) > 1
        and "solver-b" in solvers_by_round[0]
        and all("solver-b" not in s for s in solvers_by_round[1:]),
        "late_joiner_from_round_2": len(rounds) > 2
        and "solver-late" not in solvers_by_round[0] | solvers_by_round[1]
        and all("solver-late" in s for s in solvers_by_round[2:]),
        "shares_match_counted_work": bool(shares)
        and all(h["shares"] == h["contributions"] * per for h in shares.values())
        and sum(len(r["accepted"]) for r in rounds)
        == sum(h["contributions"] for h in shares.values()),
        "no_honest_slash": all(s["name"] == "solver-cheat" for s in summary["slashed"]),
        "revenue_claimed_in_full": sum(revenue["claimed_wei"].values()) <= revenue["paid_wei"]
        and revenue["paid_wei"] - sum(revenue["claimed_wei"].values()) < len(shares) + 1,
    }


def print_run_summary(summary: dict[str, Any]) -> None:
    """Print the run demo's summary as tables (Rich)."""
    from rich.table import Table

    from cli.console import address_column, report_console

    console = report_console()
    table = Table(title=f"run {summary['run_id']} ({summary['run_hash'][:18]}...)")
    unit = "val bits/token" if summary.get("metric") == "val_bpt" else "val bits/char"
    for col in ("round", "solvers", "counted", "rejected", unit, "bytes uploaded"):
        table.add_column(col)
    table.add_row("start", "-", "-", "-", f"{summary['start_val_bpc']:.4f}", "-")
    for r in summary["rounds"]:
        table.add_row(
            str(r["round"]),
            ", ".join(f"{s}:{n}" for s, n in r["solvers"].items()),
            ", ".join(map(str, r["accepted"])) or "-",
            ", ".join(map(str, r["rejected"])) or "-",
            "-" if r["val_bpc"] is None else f"{r['val_bpc']:.4f}",
            f"{r['bytes_uploaded']:,}",
        )
    console.print(table)
    owners = Table(title="who owns the model")
    owners.add_column("holder")
    owners.add_column(**address_column("address"))
    for col in ("contributions", "shares", "ownership", "revenue claimed"):
        owners.add_column(col)
    for h in summary["shares"]:
        owners.add_row(
            h["name"],
            h["address"],
            str(h["contributions"]),
            f"{h['shares']:,}",
            f"{h['bps'] / 100:.2f}%",
            vtt(h.get("revenue_claimed_wei", 0)),
        )
    console.print(owners)
    for s in summary["slashed"]:
        console.print(f"slashed {s['name']} ({s['role']}): {vtt(s['amount_wei'])}")
    if "gas" in summary:
        console.print(
            f"gas: {summary['gas']['total']:,} in all, {summary['gas']['per_contribution']:,} "
            "per counted contribution (its job, verification and round claim)"
        )
    failed = [name for name, ok in summary["checks"].items() if not ok]
    console.print(
        f"[bold]{'all checks passed' if not failed else 'FAILED: ' + ', '.join(failed)}[/bold] "
        f"in {summary['elapsed_s']} s"
    )
