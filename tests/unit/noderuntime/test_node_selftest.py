"""Nodes on a machine that does not reproduce repro2 (a golden table with a wrong hash injected)
refuse repro2 jobs: a solver does not claim them, a verifier neither stakes nor replays them,
each with one log line; native jobs are unaffected. A spec in the retired arithmetic "repro" is
never claimed, and a verifier drawn for one (a colluding solver committed it) rejects it as
withheld data instead of missing its verdict. The selftest result is cached in the data dir
per machine key."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from solver.node import SolverNode
from tests.utils.fake_chain import FakeChain
from tests.utils.node_fixtures import (
    SOLVER,
    SUBMITTER,
    VERIFIERS,
    http_for,
    run_solver_to_commit,
    tiny_spec,
)
from verifier.node import UNAVAILABLE_ATTEMPTS, VerifierNode
from veritrain import golden, selftest
from veritrain.enums import JobStatus, Role, Verdict
from veritrain.forced import UNREPLAYED_END
from veritrain.spec import ExecutionProfile, JobSpec

REAL = golden.GOLDEN_HASHES["digits-mlp"]
WRONG = "0x" + "ab" * 32
FAILURE = (
    f"this machine does not reproduce repro2 (cpu, {selftest._cpu_name()}): preset digits-mlp "
    f"hash at step 20 {REAL[20]} expected {WRONG}"
)


_SUITES: dict[tuple[str, int, int], list] = {}


@pytest.fixture(autouse=True)
def _conformance_suite_once(monkeypatch):
    """The conformance suite is a pure function of (device, n, seed) and takes seconds even at
    the nodes' small n (its references are cross-checked in exact arithmetic): every test of this
    module gets the real results of its first run, so the suite runs once here, not once per
    node. A test that counts or breaks the suite wraps this one."""
    from veritrain.repro import conformance

    real = conformance.run_conformance

    def once(device: str = "cpu", n: int = 1_000_000, seed: int = 0):
        key = (device, n, seed)
        if key not in _SUITES:
            _SUITES[key] = real(device, n=n, seed=seed)
        return list(_SUITES[key])

    monkeypatch.setattr(conformance, "run_conformance", once)


@pytest.fixture
def failing_machine(monkeypatch):
    """A golden table (digits-mlp only, ~1 s to check) whose step-20 hash is wrong."""
    monkeypatch.setattr(golden, "GOLDEN_HASHES", {"digits-mlp": {0: REAL[0], 20: WRONG}})


def repro_spec(seed: int = 3) -> JobSpec:
    return tiny_spec(seed).model_copy(update={"profile": ExecutionProfile.repro()})


def retired_spec() -> JobSpec:
    """A spec as a submitter could post it before repro2: arith "repro" (never validated)."""
    spec = repro_spec()
    profile = ExecutionProfile.model_construct(**{**spec.profile.model_dump(), "arith": "repro"})
    return JobSpec.model_construct(**{**dict(spec), "profile": profile})


def refusals(caplog, job_id: int) -> list[str]:
    """The log lines refusing `job_id`."""
    marks = ("refusing it", "not replaying it", "unusable spec")
    return [
        m
        for m in (r.getMessage() for r in caplog.records)
        if m.startswith(f"job {job_id}: ") and any(k in m for k in marks)
    ]


def test_a_solver_on_a_failing_machine_refuses_repro2_jobs_but_claims_native_ones(
    tmp_path: Path, failing_machine, caplog
) -> None:
    chain = FakeChain()
    repro_job = chain.post_job(SUBMITTER, repro_spec())
    native_job = chain.post_job(SUBMITTER, tiny_spec(seed=4))
    node = SolverNode(chain.client(SOLVER), tmp_path, serve=False)
    with caplog.at_level(logging.INFO):
        node.step()
        node.step()
    assert chain.jobs[repro_job].status is JobStatus.Open
    assert chain.count("claimJob", SOLVER) == 1
    assert chain.jobs[native_job].solver == SOLVER
    assert refusals(caplog, repro_job) == [f"job {repro_job}: refusing it: {FAILURE}"]
    warnings = [r.getMessage() for r in caplog.records if r.getMessage().startswith("selftest")]
    assert warnings == [f"selftest: {FAILURE}: refusing repro2 jobs"]
    report = json.loads((tmp_path / selftest.QUICK_CACHE_FILE).read_text())
    assert report["machine"]["golden"] == golden.golden_table_hash()
    assert report["machine"]["tier"] == "quick" and report["machine"]["arith"] == "repro2"
    assert not (tmp_path / selftest.CACHE_FILE).exists()  # no full check after a failed quick one


def test_a_verifier_on_a_failing_machine_neither_stakes_nor_replays_repro2_jobs(
    tmp_path: Path, monkeypatch, caplog
) -> None:
    chain = FakeChain()
    # staked while its machine still passed (or before the selftest existed)
    verifier = _verifier_drawn_for_a_repro_job(chain, tmp_path)
    job_id = max(chain.jobs)  # the one job it was drawn for

    monkeypatch.setattr(golden, "GOLDEN_HASHES", {"digits-mlp": {0: REAL[0], 20: WRONG}})
    verifier.selftest_enabled = True
    with caplog.at_level(logging.INFO):
        verifier.step()
        verifier.step()
    assert chain.count("commitVerdicts", VERIFIERS[0]) == 0
    assert refusals(caplog, job_id) == [f"job {job_id}: not replaying it: {FAILURE}"]
    assert "not staking as verifier: this machine fails the repro2 selftest" in caplog.text

    other = VerifierNode(chain.client(VERIFIERS[1]), tmp_path / "v2")
    other.step()  # a fresh verifier on this machine does not stake at all
    assert not chain.client(VERIFIERS[1]).stakes.is_active(VERIFIERS[1], int(Role.Verifier))
    assert chain.count("stake", VERIFIERS[1]) == 0


RETIRED = (
    "arith 'repro' cannot be replayed exactly on other machines: its square root (AdamW, "
    "layer_norm, clip_grad_norm_, normal_) was not correctly rounded, so its state hashes "
    "depend on the CPU vendor; post the job again with arith 'repro2'"
)


def test_a_solver_never_claims_a_job_in_the_retired_arithmetic(tmp_path: Path, caplog) -> None:
    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, retired_spec(), init_hash=b"\x01" * 32)
    solver = SolverNode(chain.client(SOLVER), tmp_path / "s", serve=False)
    solver.selftest_enabled = False
    with caplog.at_level(logging.INFO):
        solver.step()
        solver.step()
    assert chain.jobs[job_id].status is JobStatus.Open and chain.count("claimJob") == 0
    assert refusals(caplog, job_id) == [f"job {job_id}: unusable spec, skipping it: {RETIRED}"]


def test_a_verifier_drawn_for_a_retired_job_disputes_it_as_withheld(tmp_path: Path) -> None:
    """Attack: a submitter and a colluding solver get a job in the retired arithmetic committed
    (a solver built on our node class but skipping its checks), hoping the honest verifiers,
    unable to replay it, miss their verdicts and are slashed. Nobody can replay such a job, so
    the verifier treats it like a solver withholding its data: it keeps trying for most of the
    window, then seals zero ends (an abstention, P-20: the samples are disputed, and the
    verifier is neither slashed nor paid), never a missed verdict."""
    chain = FakeChain()
    chain.forced_segments = [1, 3]
    verifier = VerifierNode(chain.client(VERIFIERS[0]), tmp_path / "v")
    verifier.selftest_enabled = False
    verifier.step()  # stakes before the assignment
    solver = run_solver_to_commit(chain, tmp_path)
    verifier.http_client = http_for(solver)
    retired = retired_spec()
    chain.set_job(1, spec_hash=retired.spec_hash(), spec_uri=retired.to_data_uri())
    for _ in range(UNAVAILABLE_ATTEMPTS + 1):
        verifier.step()  # early in the window: the job is treated as unavailable, retried
        assert chain.count("commitVerdicts") == 0
    assert verifier.replay_refusal(chain.jobs[1]) is None  # not a refusal: the solver's fault
    chain.now = chain.jobs[1].verdict_deadline - 10  # the last third of the window
    verifier.step()  # seal
    verifier.step()  # reveal
    assert chain.verdicts[(1, VERIFIERS[0])] == [Verdict.Abstain, Verdict.Abstain]
    assert chain.disputed[1] == {0, 1}
    rec = verifier.state.read().jobs[1]
    assert rec.ends == [UNREPLAYED_END, UNREPLAYED_END]
    assert "cannot be replayed" in rec.results[0].reason


def test_the_selftest_is_cached_per_machine_key(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(golden, "GOLDEN_HASHES", {"digits-mlp": dict(REAL)})
    monkeypatch.setattr(selftest, "_memo", {})
    monkeypatch.setenv(selftest.SHARED_CACHE_ENV, "")  # the data dir's file alone
    first = selftest.node_selftest(tmp_path, "cpu", 1, conformance_n=None)
    assert first.ok and not first.cached and len(first.checks) == 2

    def no_training(*_a, **_kw):
        raise RuntimeError("trained again")

    monkeypatch.setattr(golden, "preset_hashes", no_training)
    monkeypatch.setattr(selftest, "_memo", {})  # a restarted process: only the file is left
    again = selftest.node_selftest(tmp_path, "cpu", 1, conformance_n=None)
    assert again.cached and again.checks == first.checks
    # another thread count is another key: checked again (here: the patched trainer fails)
    other = selftest.node_selftest(tmp_path, "cpu", 2, conformance_n=None)
    assert not other.ok and "cannot train it" in (other.failure_line() or "")
    # so is the other CPU path (the eager chains instead of the fused kernels, or back)
    from veritrain.repro.fused import KERNELS_ENV, fused_available

    if fused_available():
        monkeypatch.setenv(KERNELS_ENV, "eager")
        eager = selftest.node_selftest(tmp_path, "cpu", 1, conformance_n=None)
        assert not eager.ok and "cannot train it" in (eager.failure_line() or "")


def test_nodes_of_one_machine_share_one_selftest_and_wait_for_it(
    tmp_path: Path, monkeypatch
) -> None:
    """A second node (another data dir, another process: only the shared directory is left)
    reuses the first one's result; one that starts while another holds the lock waits for
    that result instead of training the same presets at the same time."""
    import threading

    from filelock import FileLock

    shared = tmp_path / "shared"
    monkeypatch.setenv(selftest.SHARED_CACHE_ENV, str(shared))
    monkeypatch.setattr(golden, "GOLDEN_HASHES", {"digits-mlp": dict(REAL)})
    monkeypatch.setattr(selftest, "_memo", {})
    first = selftest.node_selftest(tmp_path / "a", "cpu", 1, conformance_n=None)
    assert first.ok and not first.cached
    (stored,) = shared.glob("selftest-*.json")
    trained: list[str] = []
    real_hashes = golden.preset_hashes

    def counting(name, *args, **kwargs):
        trained.append(name)
        return real_hashes(name, *args, **kwargs)

    monkeypatch.setattr(golden, "preset_hashes", counting)
    monkeypatch.setattr(selftest, "_memo", {})
    second = selftest.node_selftest(tmp_path / "b", "cpu", 1, conformance_n=None)
    assert second.ok and second.cached and second.checks == first.checks and trained == []
    assert (tmp_path / "b" / selftest.CACHE_FILE).is_file()  # a restart of b needs no lock
    # a third node starts while another holds the lock: it waits and takes that result
    stored.unlink()
    monkeypatch.setattr(selftest, "_memo", {})
    lock = FileLock(str(stored.with_suffix(".lock")))
    lock.acquire()
    out: list[selftest.SelftestReport] = []
    waiter = threading.Thread(
        target=lambda: out.append(
            selftest.node_selftest(tmp_path / "c", "cpu", 1, conformance_n=None)
        )
    )
    waiter.start()
    waiter.join(timeout=1.0)
    assert waiter.is_alive() and not out  # waiting on the lock, not training
    stored.write_text(first.model_dump_json())
    lock.release()
    waiter.join(timeout=30.0)
    assert out and out[0].cached and out[0].checks == first.checks and trained == []
    # a result stored for another key is not taken
    monkeypatch.setattr(selftest, "_memo", {})
    other = selftest.node_selftest(tmp_path / "d", "cpu", 2, conformance_n=None)
    assert not other.cached and trained == ["digits-mlp"]


WIDE = golden.GOLDEN_HASHES["digits-mlp-wide"]


@pytest.fixture
def two_presets(monkeypatch):
    """A golden table of the quick preset and one more (each about a second to check), with
    their real hashes; no shared cache, an empty process cache."""
    table = {"digits-mlp": dict(REAL), "digits-mlp-wide": dict(WIDE)}
    monkeypatch.setattr(golden, "GOLDEN_HASHES", table)
    monkeypatch.setattr(selftest, "_memo", {})
    monkeypatch.setenv(selftest.SHARED_CACHE_ENV, "")
    return table


@pytest.fixture
def trained(monkeypatch) -> list[str]:
    """The presets `golden.preset_hashes` trains from now on, in order (each really trained)."""
    names: list[str] = []
    real_hashes = golden.preset_hashes

    def counting(name, *args, **kwargs):
        names.append(name)
        return real_hashes(name, *args, **kwargs)

    monkeypatch.setattr(golden, "preset_hashes", counting)
    return names


def test_the_quick_tier_trains_the_cheapest_preset_the_full_one_every_preset(
    tmp_path: Path, two_presets, trained: list[str], monkeypatch
) -> None:
    assert selftest.tier_presets("quick") == ["digits-mlp"]
    assert selftest.tier_presets("full") == ["digits-mlp", "digits-mlp-wide"]
    quick = selftest.node_selftest(tmp_path, "cpu", 1, conformance_n=None, tier="quick")
    assert quick.ok and quick.machine.tier == "quick" and trained == ["digits-mlp"]
    assert {c.name for c in quick.checks} == {"digits-mlp"}
    full = selftest.node_selftest(tmp_path, "cpu", 1, conformance_n=None, tier="full")
    assert full.ok and not full.cached and full.machine.tier == "full"
    assert trained == ["digits-mlp", "digits-mlp", "digits-mlp-wide"]  # another key: run
    assert {c.name for c in full.checks} == {"digits-mlp", "digits-mlp-wide"}
    # each tier has its own file in the data dir; a restarted process reuses both
    monkeypatch.setattr(selftest, "_memo", {})
    again = [
        selftest.node_selftest(tmp_path, "cpu", 1, conformance_n=None, tier=tier)
        for tier in ("quick", "full")
    ]
    assert [r.cached for r in again] == [True, True] and len(trained) == 3
    assert [r.checks for r in again] == [quick.checks, full.checks]
    on_disk = json.loads((tmp_path / selftest.QUICK_CACHE_FILE).read_text())
    assert on_disk["machine"]["tier"] == "quick"
    assert json.loads((tmp_path / selftest.CACHE_FILE).read_text())["machine"]["tier"] == "full"


def _verifier_drawn_for_a_repro_job(chain: FakeChain, tmp_path: Path) -> VerifierNode:
    """A staked verifier drawn for a repro2 job whose solver committed and posted claims."""
    chain.forced_segments = [1, 3]
    verifier = VerifierNode(chain.client(VERIFIERS[0]), tmp_path / "v")
    verifier.selftest_enabled = False
    verifier.step()
    job_id = chain.post_job(SUBMITTER, repro_spec())
    solver = SolverNode(chain.client(SOLVER), tmp_path / "solver", serve=False)
    solver.selftest_enabled = False
    for _ in range(4):
        solver.step()
        chain.advance(blocks=2)
    assert chain.jobs[job_id].status is JobStatus.Verifying
    assert VERIFIERS[0] in chain.assignments[job_id].verifiers
    verifier.http_client = http_for(solver)
    return verifier


def test_a_verifier_waits_for_the_full_selftest_before_its_first_verdict(
    tmp_path: Path, two_presets, monkeypatch, caplog
) -> None:
    import threading

    chain = FakeChain()
    verifier = _verifier_drawn_for_a_repro_job(chain, tmp_path)
    release = threading.Event()
    real_hashes = golden.preset_hashes

    def held(name, *args, **kwargs):
        if name == "digits-mlp-wide":  # only the full check trains it: held until released
            assert release.wait(60.0)
        return real_hashes(name, *args, **kwargs)

    monkeypatch.setattr(golden, "preset_hashes", held)
    verifier.selftest_enabled = True
    verifier.full_selftest_wait = 0.2
    with caplog.at_level(logging.INFO):
        verifier.start_full_selftest()  # as `run` does: quick now, full in the background
        assert verifier.machine_selftest() is not None and verifier._full_thread is not None
        verifier.step()
        verifier.step()
    assert chain.count("commitVerdicts", VERIFIERS[0]) == 0  # replayed, not committed
    assert verifier.state.read().jobs[1].results  # the replay did not wait
    assert "selftest: waiting for the full check before committing" in caplog.text
    release.set()
    verifier._full_thread.join(60.0)
    full = verifier.machine_selftest()
    assert full is not None and full.ok and full.machine.tier == "full"
    verifier.step()
    assert chain.count("commitVerdicts", VERIFIERS[0]) == 1


def test_a_verifier_whose_full_selftest_fails_never_commits(
    tmp_path: Path, two_presets, caplog
) -> None:
    chain = FakeChain()
    verifier = _verifier_drawn_for_a_repro_job(chain, tmp_path)
    two_presets["digits-mlp-wide"] = {0: WIDE[0], 20: WRONG}  # the quick check still passes
    verifier.selftest_enabled = True
    with caplog.at_level(logging.INFO):
        verifier.step()  # step driven without run: the full check runs at the commit
        verifier.step()
    assert chain.count("commitVerdicts", VERIFIERS[0]) == 0
    failure = (
        f"this machine does not reproduce repro2 (cpu, {selftest._cpu_name()}): preset "
        f"digits-mlp-wide hash at step 20 {WIDE[20]} expected {WRONG}"
    )
    assert f"job 1: not committing to it: {failure}" in caplog.text
    assert verifier.replay_refusal(chain.jobs[1]) == failure


def test_a_running_node_checks_quick_first_then_full_in_the_background(
    tmp_path: Path, two_presets, caplog
) -> None:
    import threading

    from noderuntime import sleep_until
    from tests.utils.node_fixtures import WHISTLEBLOWER
    from whistleblower.node import WhistleblowerNode

    chain = FakeChain()
    node = WhistleblowerNode(chain.client(WHISTLEBLOWER), tmp_path / "wb", poll_interval=0.05)
    node.selftest_enabled = True
    stop = threading.Event()
    thread = threading.Thread(target=node.run, args=(stop,), daemon=True)
    with caplog.at_level(logging.INFO):
        thread.start()
        try:
            assert sleep_until(lambda: node._full_selftest is not None, timeout=120)
        finally:
            stop.set()
            thread.join(timeout=30)
    lines = [m for m in (r.getMessage() for r in caplog.records) if m.startswith("selftest")]
    assert [m.split(":")[0] for m in lines] == ["selftest", "selftest (full)"], lines
    assert all("this machine reproduces repro2 on cpu" in m for m in lines), lines
    assert node._full_thread is not None and node._full_thread.daemon
    quick, full = node._selftest, node.machine_selftest()
    assert quick is not None and full is not None and full.machine.tier == "full"
    assert {c.name for c in quick.checks if c.kind == "golden"} == {"digits-mlp"}
    assert {c.name for c in full.checks if c.kind == "golden"} == set(two_presets)
    assert any(c.kind == "conformance" for c in quick.checks)


def test_with_the_selftest_disabled_nothing_is_checked_or_awaited(
    tmp_path: Path, monkeypatch
) -> None:
    from noderuntime.core import SELFTEST_ENV

    monkeypatch.setenv(SELFTEST_ENV, "0")

    def no_training(*_a, **_kw):
        raise AssertionError("a disabled selftest trained")

    monkeypatch.setattr(golden, "preset_hashes", no_training)
    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, repro_spec())
    node = VerifierNode(chain.client(VERIFIERS[0]), tmp_path / "v")
    assert node.machine_selftest() is None
    node.start_full_selftest()
    assert node._full_thread is None and node.full_selftest(0.0) is None
    assert node.full_selftest_ready(chain.jobs[job_id]) is True


def test_a_solver_whose_full_selftest_fails_abandons_the_job_before_its_root(
    tmp_path: Path, two_presets, caplog
) -> None:
    from noderuntime.records import Phase

    two_presets["digits-mlp-wide"] = {0: WIDE[0], 20: WRONG}  # the quick check still passes
    chain = FakeChain()
    job_id = chain.post_job(SUBMITTER, repro_spec())
    solver = SolverNode(chain.client(SOLVER), tmp_path / "solver", serve=False)
    with caplog.at_level(logging.INFO):
        for _ in range(3):
            solver.step()
    assert chain.count("claimJob", SOLVER) == 1  # claimed after the quick check
    assert chain.count("commitCheckpoints", SOLVER) == 0
    rec = solver.job_record(job_id)
    assert rec is not None and rec.phase == Phase.ABANDONED
    assert f"job {job_id}: not committing to it: " in caplog.text
    assert "preset digits-mlp-wide hash at step 20" in caplog.text


def test_a_full_selftest_that_cannot_run_is_retried_after_a_pause_not_every_round(
    tmp_path: Path, two_presets, monkeypatch, caplog
) -> None:
    """A full check that raises (here: the disk) is logged once and leaves the node refusing
    to commit; it is not run again in the foreground of every round, only after
    `full_selftest_retry_s`."""
    chain = FakeChain()
    verifier = _verifier_drawn_for_a_repro_job(chain, tmp_path)
    real_hashes = golden.preset_hashes
    tries: list[str] = []

    def broken(name, *args, **kwargs):
        if name == "digits-mlp-wide":  # only the full check trains it
            tries.append(name)
            raise OSError("No space left on device")
        return real_hashes(name, *args, **kwargs)

    monkeypatch.setattr(golden, "preset_hashes", broken)
    verifier.selftest_enabled = True
    with caplog.at_level(logging.INFO):
        for _ in range(3):
            verifier.step()
    assert chain.count("commitVerdicts", VERIFIERS[0]) == 0
    assert tries == ["digits-mlp-wide"]
    assert caplog.text.count("selftest (full) could not run: OSError") == 1
    monkeypatch.setattr(golden, "preset_hashes", real_hashes)  # the disk is freed
    verifier.full_selftest_retry_s = 0.0
    verifier.step()
    assert chain.count("commitVerdicts", VERIFIERS[0]) == 1


def test_the_full_check_takes_over_the_quick_checks_instead_of_running_them_again(
    tmp_path: Path, two_presets, monkeypatch
) -> None:
    """The full tier trains only the presets the quick tier did not and reuses its conformance
    suite; the report still holds every check, and a report of another machine key is not
    taken over."""
    from veritrain.repro import conformance

    trained: list[str] = []
    suites: list[int] = []
    real_hashes, real_suite = golden.preset_hashes, conformance.run_conformance

    def counted_hashes(name, *args, **kwargs):
        trained.append(name)
        return real_hashes(name, *args, **kwargs)

    def counted_suite(device, n):
        suites.append(n)
        return real_suite(device, n=n)

    monkeypatch.setattr(golden, "preset_hashes", counted_hashes)
    monkeypatch.setattr(conformance, "run_conformance", counted_suite)
    monkeypatch.setenv(selftest.SHARED_CACHE_ENV, "")
    quick = selftest.node_selftest(tmp_path / "a", "cpu", 1, tier="quick")
    full = selftest.node_selftest(tmp_path / "a", "cpu", 1, tier="full", reuse=quick)
    assert quick.ok and full.ok and full.machine.tier == "full"
    assert trained == ["digits-mlp", "digits-mlp-wide"] and len(suites) == 1
    assert [c.name for c in full.checks if c.kind == "golden"] == [
        "digits-mlp",
        "digits-mlp",
        "digits-mlp-wide",
        "digits-mlp-wide",
    ]
    assert {c.name for c in full.checks if c.kind == "conformance"} == {
        c.name for c in quick.checks if c.kind == "conformance"
    }
    # another thread count is another machine key: nothing taken over
    other = selftest.node_selftest(tmp_path / "b", "cpu", 2, tier="full", reuse=quick)
    assert other.ok and trained[2:] == ["digits-mlp", "digits-mlp-wide"] and len(suites) == 2


_STOP_SCRIPT = """
import sys, threading
from pathlib import Path
from noderuntime import sleep_until
from tests.utils.fake_chain import FakeChain
from tests.utils.node_fixtures import WHISTLEBLOWER
from whistleblower.node import WhistleblowerNode

node = WhistleblowerNode(FakeChain().client(WHISTLEBLOWER), Path(sys.argv[1]), poll_interval=0.05)
node.selftest_enabled = True
stop = threading.Event()
thread = threading.Thread(target=node.run, args=(stop,), daemon=True)
thread.start()
assert sleep_until(lambda: node._full_thread is not None, timeout=300)
stop.set()  # what a SIGTERM does to `veritrain ... run`
thread.join(timeout=300)
print("node stopped:", not thread.is_alive())
print("full check running:", node._full_thread.is_alive())
print("full report:", node._full_selftest is not None)
"""


def test_a_node_stopped_during_its_full_check_ends_the_check_and_exits_cleanly(
    tmp_path: Path,
) -> None:
    """A node stopped while its full selftest runs in the background (a SIGTERM in its first
    minute) ends that check at its next preset and waits for it: a thread left inside torch at
    interpreter exit aborted the process ("terminate called without an active exception",
    exit 134) instead of a clean exit. The stopped check reports and caches nothing."""
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[3]
    env = {
        **os.environ,
        "PYTHONPATH": str(repo),
        selftest.SHARED_CACHE_ENV: str(tmp_path / "shared"),  # nothing cached: it runs
    }
    proc = subprocess.run(
        [sys.executable, "-c", _STOP_SCRIPT, str(tmp_path / "wb")],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "terminate called" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "node stopped: True" in proc.stdout
    assert "full check running: False" in proc.stdout
    assert "full report: False" in proc.stdout
    assert not (tmp_path / "wb" / selftest.CACHE_FILE).exists()
    assert not list((tmp_path / "shared").glob("*.json")) or all(
        json.loads(p.read_text())["machine"]["tier"] == "quick"
        for p in (tmp_path / "shared").glob("*.json")
    )


def test_a_stopped_full_check_ends_before_its_next_preset_and_keeps_nothing(
    tmp_path: Path, two_presets, trained: list[str]
) -> None:
    with pytest.raises(selftest.SelftestStopped, match="before preset digits-mlp-wide"):
        selftest.node_selftest(
            tmp_path, "cpu", 1, conformance_n=None, tier="full", should_stop=lambda: bool(trained)
        )
    assert trained == ["digits-mlp"]  # the preset under way finished; the next never started
    assert not (tmp_path / selftest.CACHE_FILE).exists() and not selftest._memo
    full = selftest.node_selftest(tmp_path, "cpu", 1, conformance_n=None, tier="full")
    assert (
        full.ok and not full.cached and trained == ["digits-mlp", "digits-mlp", "digits-mlp-wide"]
    )
