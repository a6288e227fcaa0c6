"""Does this machine reproduce the repro arithmetic? Golden hashes and conformance, one report.

Two kinds of checks, both on the device a node (or `veritrain selftest`) will use:

- **golden**: every preset of `veritrain.golden` is trained by the real `TrainingEngine` in
  `REPRO_ARITH` from state 0 for `GOLDEN_STEPS[name]` steps, and its state hashes at step 0 and
  at the end are compared with the committed `GOLDEN_HASHES` (the same bytes on every machine
  that follows IEEE 754). A preset whose data is missing (Shakespeare without
  scripts/setup.sh) is reported as skipped, not failed: such a machine cannot train it at all.
- **conformance**: `veritrain.repro.conformance.run_conformance(device, n)`, every torch
  primitive `veritrain.repro` relies on, checked bit for bit against a correctly rounded
  reference (the way x86 `torch.sqrt` was found to differ between CPU vendors).

Two tiers (`Tier`): the **quick** check is the conformance suite at `QUICK_CONFORMANCE_N`
values per primitive plus the cheapest golden preset(s) (`QUICK_PRESETS`, a few seconds on 2
cores); the **full** check is every golden preset plus the conformance suite at
`NODE_CONFORMANCE_N` (nodes) or `FULL_CONFORMANCE_N` (``veritrain selftest``). Nodes run the
quick one before their first round and the full one in the background, and wait for the full
one before they commit to a repro2 job (`noderuntime.specs.SpecsMixin`).

`run_selftest` returns a `SelftestReport` (a pydantic model: `ok`, `failure_line()`, JSON);
`node_selftest` is what nodes run: the checks of one tier, cached under the `MachineKey`
(tier, arithmetic, torch version, device and its name, CPU capability, thread count, golden
table hash) in the process, in the node's data dir (`selftest.json`, `selftest-quick.json`) and
in one directory every node of the machine shares (`shared_cache_dir`), so a restart, or a
second node on the same machine, only checks again when one of those changed; nodes starting
together take a file lock, and one of them runs the checks while the others wait for its
result.

Run: ``veritrain selftest`` (`cli.selftest`), or ``from veritrain.selftest import run_selftest;
print(run_selftest("cpu").failure_line())``.
"""

from __future__ import annotations

import hashlib
import logging
import os
import platform
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from veritrain import golden
from veritrain.errors import DatasetError, VeritrainError
from veritrain.repro.fused import kernels_id
from veritrain.spec import REPRO_ARITH

logger = logging.getLogger(__name__)

__all__ = [
    "CACHE_FILE",
    "QUICK_CACHE_FILE",
    "SHARED_CACHE_ENV",
    "FULL_CONFORMANCE_N",
    "NODE_CONFORMANCE_N",
    "QUICK_CONFORMANCE_N",
    "QUICK_PRESETS",
    "Tier",
    "MachineKey",
    "SelftestCheck",
    "SelftestReport",
    "SelftestStopped",
    "machine_key",
    "node_selftest",
    "run_selftest",
    "tier_presets",
    "shared_cache_dir",
]

FULL_CONFORMANCE_N = 1_000_000
"""Values per conformance check of a full `veritrain selftest` (about half a minute on 2 cores)."""
QUICK_CONFORMANCE_N = 10_000
"""Values per conformance check under ``--quick`` (about a second)."""
NODE_CONFORMANCE_N = QUICK_CONFORMANCE_N
"""Values per conformance check of the selftest nodes run at start."""
QUICK_PRESETS: tuple[str, ...] = ("digits-mlp",)
"""The golden presets of the quick check: the cheapest one (about 1-3 s on 2 cores, data
loading included; measured against the others, `veritrain.golden.GOLDEN_STEPS`)."""
CACHE_FILE = "selftest.json"
"""The node's full selftest, in its data dir."""
QUICK_CACHE_FILE = "selftest-quick.json"
"""The node's quick selftest, in its data dir."""
SHARED_CACHE_ENV = "VERITRAIN_SELFTEST_CACHE"
"""Environment variable naming the machine-wide selftest cache directory (`shared_cache_dir`);
set to an empty string, no shared cache is used."""
SHARED_LOCK_SECONDS = 3600.0
"""How long a node waits for another node's selftest of the same key before it gives up and
runs its own (seconds)."""

Status = Literal["ok", "FAIL", "skipped"]
Tier = Literal["quick", "full"]
"""Which checks run: ``"quick"`` (`QUICK_PRESETS` and the conformance suite) or ``"full"``
(every golden preset and the conformance suite)."""


def tier_presets(tier: Tier) -> list[str]:
    """The golden presets `tier` trains, in table order: every preset of
    `veritrain.golden.GOLDEN_HASHES` for ``"full"``; for ``"quick"`` those of `QUICK_PRESETS`
    in the table (the table's first preset when none is)."""
    table = list(golden.GOLDEN_HASHES)
    if tier == "full":
        return table
    quick = [name for name in table if name in QUICK_PRESETS]
    return quick or table[:1]


class MachineKey(BaseModel):
    """What a selftest result depends on; a cached result is reused only for an equal key.

    Attributes:
        tier: the checks run (`Tier`).
        arith: the arithmetic checked (`REPRO_ARITH`).
        torch: `torch.__version__`.
        device: `"cpu"` or `"cuda"`.
        device_name: the CPU model (``/proc/cpuinfo``) or the CUDA device's name.
        cpu_capability: the SIMD level torch's CPU kernels dispatch to (``AVX2``, ...).
        threads: torch's CPU thread count during the checks.
        golden: `veritrain.golden.golden_table_hash()`.
        conformance_n: values per conformance check (None: conformance not run).
        kernels: the CPU path of `veritrain.repro.fused` ("eager" or "numba <version>").
    """

    model_config = ConfigDict(frozen=True)

    tier: Tier = "full"
    arith: str = REPRO_ARITH
    torch: str
    device: str
    device_name: str
    cpu_capability: str
    threads: int
    golden: str
    conformance_n: int | None
    kernels: str = "eager"


class SelftestCheck(BaseModel):
    """One check of the report.

    Attributes:
        kind: `"golden"` (a preset's state hash) or `"conformance"` (one torch primitive).
        name: the preset, or the conformance check's name (``"add"``, ``"repro.sqrt"``, ...).
        detail: ``"step 20"`` (golden) or the dtype (conformance).
        status: `"ok"`, `"FAIL"` or `"skipped"` (the preset's data is missing).
        expected: the golden hash, or the reference bits of the first mismatch.
        actual: this machine's hash, or its bits at the first mismatch.
        checked: values compared (conformance).
        mismatches: values that differ (conformance).
        note: why it was skipped or failed when no hash could be computed, or the first
            mismatching input (conformance).
        seconds: wall time (golden: the preset's engine build and training, on its step 0 row).
    """

    kind: Literal["golden", "conformance"]
    name: str
    detail: str
    status: Status
    expected: str | None = None
    actual: str | None = None
    checked: int = 0
    mismatches: int = 0
    note: str = ""
    seconds: float = 0.0

    def describe(self) -> str:
        """One line saying what failed (or why it was skipped)."""
        if self.kind == "golden":
            if self.actual is None:
                return f"preset {self.name} ({self.detail}): {self.note}"
            return (
                f"preset {self.name} hash at {self.detail} {self.actual} expected {self.expected}"
            )
        first = ""
        if self.note:
            first = f" (first at input {self.note}: got {self.actual}, expected {self.expected})"
        if self.mismatches == 0:
            return f"conformance check {self.name} ({self.detail}): {self.note}"
        return (
            f"conformance check {self.name} ({self.detail}) differs on {self.mismatches} of "
            f"{self.checked} values{first}"
        )


class SelftestReport(BaseModel):
    """The outcome of `run_selftest`.

    Attributes:
        arith: the arithmetic checked (`REPRO_ARITH`).
        machine: the `MachineKey` it ran under.
        checks: every check, golden first.
        seconds: total wall time.
        cached: True when `node_selftest` took it from its cache instead of running it.
    """

    arith: str
    machine: MachineKey
    checks: list[SelftestCheck]
    seconds: float
    cached: bool = False

    @property
    def ok(self) -> bool:
        """True when no check failed (skipped checks do not count)."""
        return not self.failures

    @property
    def failures(self) -> list[SelftestCheck]:
        """The failed checks, in order."""
        return [c for c in self.checks if c.status == "FAIL"]

    def failure_line(self) -> str | None:
        """None when every check passed, else ONE line: ``this machine does not reproduce
        repro2 (<device>): <first failure>[ (and N more failed checks)]``."""
        failed = self.failures
        if not failed:
            return None
        more = f" (and {len(failed) - 1} more failed checks)" if len(failed) > 1 else ""
        return (
            f"this machine does not reproduce {self.arith} ({self.machine.device}, "
            f"{self.machine.device_name}): {failed[0].describe()}{more}"
        )


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def machine_key(
    device: str, threads: int | None, conformance_n: int | None, tier: Tier = "full"
) -> MachineKey:
    """The `MachineKey` of this process for the `tier` checks on `device` at `threads` (None:
    torch's count)."""
    import torch

    name = _cpu_name()
    if device == "cuda" and torch.cuda.is_available():
        name = torch.cuda.get_device_name()
    return MachineKey(
        tier=tier,
        arith=REPRO_ARITH,
        torch=str(torch.__version__),
        device=device,
        device_name=name,
        cpu_capability=str(torch.backends.cpu.get_cpu_capability()),
        threads=int(threads if threads is not None else torch.get_num_threads()),
        golden=golden.golden_table_hash(),
        conformance_n=conformance_n,
        kernels=kernels_id(),
    )


class SelftestStopped(Exception):
    """The check was asked to stop (its ``should_stop`` returned True) before it finished:
    nothing is reported, kept or cached."""


def golden_checks(
    device: str,
    threads: int | None,
    presets: list[str] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[SelftestCheck]:
    """Train `presets` (None: every preset of the golden table) on `device` and compare their
    hashes with the table's.

    Raises:
        SelftestStopped: `should_stop` returned True before a preset (read before each).
    """
    checks: list[SelftestCheck] = []
    table = dict(golden.GOLDEN_HASHES)  # read once: the run may outlast a change of the table
    for name in table if presets is None else presets:
        if should_stop is not None and should_stop():
            raise SelftestStopped(f"stopped before preset {name}")
        expected = table[name]
        steps = golden.GOLDEN_STEPS[name]
        try:
            got = golden.preset_hashes(name, steps, device=device, threads=threads)
        except DatasetError as exc:
            note = f"skipped: {str(exc).splitlines()[0]}"
            checks.append(
                SelftestCheck(kind="golden", name=name, detail="data", status="skipped", note=note)
            )
            continue
        except (VeritrainError, RuntimeError) as exc:
            note = f"cannot train it: {type(exc).__name__}: {str(exc).splitlines()[0]}"
            checks.append(
                SelftestCheck(kind="golden", name=name, detail="train", status="FAIL", note=note)
            )
            continue
        for i, (step, want) in enumerate(sorted(expected.items())):
            have = got.hashes.get(step)
            checks.append(
                SelftestCheck(
                    kind="golden",
                    name=name,
                    detail=f"step {step}",
                    status="ok" if have == want else "FAIL",
                    expected=want,
                    actual=have,
                    seconds=round(got.seconds, 3) if i == 0 else 0.0,
                )
            )
    return checks


def conformance_checks(device: str, n: int) -> list[SelftestCheck]:
    """`veritrain.repro.conformance.run_conformance(device, n)` as checks."""
    from veritrain.repro.conformance import run_conformance

    try:
        results = run_conformance(device, n=n)
    except (RuntimeError, ValueError) as exc:
        note = f"cannot run: {type(exc).__name__}: {str(exc).splitlines()[0]}"
        return [
            SelftestCheck(kind="conformance", name="suite", detail="-", status="FAIL", note=note)
        ]
    return [
        SelftestCheck(
            kind="conformance",
            name=r.name,
            detail=r.dtype,
            status="ok" if r.mismatches == 0 else "FAIL",
            expected=getattr(r, "first_expected", None),
            actual=getattr(r, "first_got", None),
            checked=int(getattr(r, "checked", 0)),
            mismatches=int(r.mismatches),
            note=getattr(r, "first_input", None) or "",
        )
        for r in results
    ]


def run_selftest(
    device: str = "cpu",
    threads: int | None = None,
    *,
    conformance_n: int | None = FULL_CONFORMANCE_N,
    tier: Tier = "full",
    reuse: SelftestReport | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> SelftestReport:
    """Run the golden checks of `tier` (and, unless `conformance_n` is None, the conformance
    suite) on `device` at `threads` and report.

    Args:
        device: `"auto"`, `"cpu"` or `"cuda"` (`veritrain.training.resolve_device`).
        threads: torch's CPU thread count for the run (None: as the process has it; it is a
            process-global setting and stays set afterwards).
        conformance_n: values per conformance check; None skips the suite.
        tier: ``"full"`` trains every golden preset, ``"quick"`` only `tier_presets("quick")`.
        reuse: a passed report of another tier on this same machine (its `MachineKey` equal
            but for the tier, e.g. the node's quick check): its golden presets and its
            conformance suite are taken over, not run again. Ignored when it failed or was
            made on another machine key.
        should_stop: read before each golden preset; True ends the run (`SelftestStopped`).

    Returns:
        The report (`ok`, `failure_line()`); a device that cannot run a check fails it.

    Raises:
        SpecError: an unknown device name.
        ProfileUnavailable: `"cuda"` and torch sees no GPU.
        SelftestStopped: `should_stop` returned True.
    """
    from veritrain.training import resolve_device

    device = resolve_device(device)
    started = time.perf_counter()
    key = machine_key(device, threads, conformance_n, tier)
    taken: list[SelftestCheck] = []
    if (
        reuse is not None
        and reuse.ok
        and reuse.machine == key.model_copy(update={"tier": reuse.machine.tier})
    ):
        taken = list(reuse.checks)
    presets = tier_presets(tier)
    done = {c.name for c in taken if c.kind == "golden"}
    fresh = golden_checks(device, threads, [p for p in presets if p not in done], should_stop)
    order = {name: i for i, name in enumerate(presets)}
    checks = sorted(
        [c for c in taken if c.kind == "golden" and c.name in order] + fresh,
        key=lambda c: order[c.name],  # stable: a preset's steps keep their order
    )
    if conformance_n is not None:
        conformance = [c for c in taken if c.kind == "conformance"]
        checks.extend(conformance or conformance_checks(device, conformance_n))
    return SelftestReport(
        arith=REPRO_ARITH,
        machine=key,
        checks=checks,
        seconds=round(time.perf_counter() - started, 3),
    )


_memo: dict[MachineKey, SelftestReport] = {}
_memo_lock = threading.Lock()  # guards _key_locks
_key_locks: dict[MachineKey, threading.Lock] = {}


def _lock_for(key: MachineKey) -> threading.Lock:
    """The process's lock of `key`: threads checking the same key wait for one another, a quick
    check never waits for a full one running in another thread."""
    with _memo_lock:
        return _key_locks.setdefault(key, threading.Lock())


def shared_cache_dir() -> Path | None:
    """The directory every node of this machine shares selftest results in:
    `$VERITRAIN_SELFTEST_CACHE`, else `<data dir>/selftest` (`veritrain.text.data_dir`); None
    when the variable is set to an empty string."""
    env = os.environ.get(SHARED_CACHE_ENV)
    if env is not None:
        return Path(env) if env else None
    from veritrain.text import data_dir

    return data_dir() / "selftest"


def _shared_path(directory: Path, key: MachineKey) -> Path:
    """`<directory>/selftest-<first 16 hex digits of sha256(key JSON)>.json`."""
    digest = hashlib.sha256(key.model_dump_json().encode()).hexdigest()[:16]
    return directory / f"selftest-{digest}.json"


def _read_report(path: Path, key: MachineKey) -> SelftestReport | None:
    """The report stored at `path` when it is readable, valid and for `key`; else None."""
    try:
        stored = SelftestReport.model_validate_json(path.read_bytes())
    except (OSError, ValidationError, ValueError):
        return None
    if stored.machine != key or stored.arith != REPRO_ARITH:
        return None
    return stored


def _write_report(path: Path, report: SelftestReport) -> None:
    """Write `report` to `path` atomically (a temporary file renamed); a failure is logged."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(report.model_dump_json(indent=1))
        tmp.replace(path)
    except OSError as exc:
        logger.warning("cannot cache the selftest in %s: %s", path, exc)


def _shared_selftest(
    device: str,
    threads: int | None,
    conformance_n: int | None,
    key: MachineKey,
    reuse: SelftestReport | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> SelftestReport:
    """The machine-wide cached report for `key`, else `run_selftest` under the shared file lock
    (a node that finds the lock held waits for the holder's result instead of running the
    same checks at the same time); without a shared directory, `run_selftest`."""

    def check() -> SelftestReport:
        return run_selftest(
            device,
            threads,
            conformance_n=conformance_n,
            tier=key.tier,
            reuse=reuse,
            should_stop=should_stop,
        )

    directory = shared_cache_dir()
    if directory is None:
        return check()
    path = _shared_path(directory, key)
    found = _read_report(path, key)
    if found is not None:
        return found.model_copy(update={"cached": True})
    from filelock import FileLock, Timeout

    try:
        directory.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(path.with_suffix(".lock")), timeout=SHARED_LOCK_SECONDS)
        with lock:
            found = _read_report(path, key)  # written while this node waited
            if found is not None:
                return found.model_copy(update={"cached": True})
            report = check()
            _write_report(path, report)
            return report
    except (OSError, Timeout) as exc:
        logger.warning("selftest: no shared cache in %s (%s); checking alone", directory, exc)
        return check()


def node_selftest(
    data_dir: Path,
    device: str = "cpu",
    threads: int | None = None,
    *,
    conformance_n: int | None = NODE_CONFORMANCE_N,
    tier: Tier = "full",
    reuse: SelftestReport | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> SelftestReport:
    """`run_selftest` of `tier` for a node, at most once per `MachineKey` on this machine: the
    result is kept in this process (nodes running as threads of one process share it), in
    ``<data_dir>/selftest.json`` (full) or ``selftest-quick.json`` (quick; a restarted node
    reuses it unless the key changed) and in `shared_cache_dir` (another node of this machine
    with the same key reuses it; one that starts while the checks run waits for them under a
    file lock).

    Args:
        data_dir: the node's data dir (created if missing).
        device: the device the node trains and replays on.
        threads: the node's torch thread count.
        conformance_n: values per conformance check (None: golden checks only).
        tier: ``"quick"`` or ``"full"`` (`Tier`).
        reuse: the node's passed report of the other tier, whose checks are not run again
            (`run_selftest`).
        should_stop: read before each golden preset (a node passes its `stopping`).

    Returns:
        The report; `cached` is True when it was not run now.

    Raises:
        SelftestStopped: `should_stop` returned True; nothing was kept or cached.
    """
    from veritrain.training import resolve_device

    device = resolve_device(device)
    key = machine_key(device, threads, conformance_n, tier)
    path = Path(data_dir) / (CACHE_FILE if tier == "full" else QUICK_CACHE_FILE)
    stored: SelftestReport | None = None
    with _lock_for(key):
        report = _memo.get(key)
        if report is None and path.is_file():
            stored = _read_report(path, key)
            report = stored
        if report is not None:
            report = report.model_copy(update={"cached": True})
        else:
            report = _shared_selftest(device, threads, conformance_n, key, reuse, should_stop)
        _memo[key] = report
    if stored is not None:
        return report  # read from this very file
    _write_report(path, report)
    return report
