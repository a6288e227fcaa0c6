"""Deployment manifests: the protocol parameters, the deployed addresses and their JSON files.

Imports no client (so `chain.client` and `chain.deploy` both stand on it)::

    write_manifest(dep, "deployments")                # deployments/<chain_id>.json
    dep = load_manifest(31337)                        # or a path

Units: token amounts in wei of the payment token (18 decimals), windows and delays in
seconds.

Run: not a script; ``from chain.manifest import load_manifest``.
"""

from __future__ import annotations

import json
import logging
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from chain.errors import ChainValueError
from veritrain.economics import (
    Economics,
    coalition_violation,
    fake_violation,
    fee_bound_lazy_gain,
    lazy_holding_worst,
)

logger = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_MANIFEST_DIR",
    "ContractAddresses",
    "Deployment",
    "ProtocolParams",
    "load_manifest",
    "manifest_path",
    "write_manifest",
]

E18 = 10**18
DEFAULT_MANIFEST_DIR = "deployments"


class ProtocolParams(BaseModel):
    """Constructor parameters of the protocol contracts.

    Token amounts are in wei of the payment token; windows and delays in seconds. The defaults
    suit a devnet with a few nodes; `demo` shortens the windows for an interactive run.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    # JobManager.Params
    # 510e18 with one seat drawing one segment (docs/SECURITY.md P-39: 9.85% of the training
    # replayed): faking and collusion lose at least as much on the reference job as at the
    # former V = 3, q = 2 with 100e18 (-46.1e18 vs -43.1e18, -30.6e18 vs -30.4e18 at phi = 1/3)
    solver_stake: int = Field(510 * E18, ge=0, description="locked per claim (wei)")
    # 20e18: laziness loses on a seat's worst draw (h = 1/2 with one seat; h = 1/5 at V = 3,
    # q = 2, E-1)
    verifier_stake: int = Field(
        20 * E18, ge=0, description="locked per verifier assignment and arbiter seat (wei)"
    )
    challenge_bond: int = Field(
        5 * E18, ge=0, description="per reject verdict and per whistleblower challenge (wei)"
    )
    verifier_fee: int = Field(1 * E18, ge=0, description="per assigned verifier (wei)")
    arbiter_fee: int = Field(1 * E18, ge=0, description="per majority arbiter (wei)")
    jackpot: int = Field(
        5 * E18,
        ge=0,
        description="paid from the jackpot pool per rejecter of a forced error and per "
        "whistleblower that flagged an approved one (wei)",
    )
    verifiers_per_job: int = Field(
        1, ge=1, le=32, description="V (contract max 32; 1: the single-seat rule, P-39)"
    )
    samples_per_job: int = Field(1, ge=1, le=64, description="q: segments each seat draws (max 64)")
    commit_window: int = Field(3600, gt=0, description="claim -> commit deadline (s)")
    verdict_window: int = Field(600, gt=0, description="claims deadline -> verdict deadline (s)")
    reveal_window: int = Field(
        300, gt=0, description="verdict reveal window, and the secret reveal window (s)"
    )
    challenge_window: int = Field(300, gt=0, description="verdicts -> challenge deadline (s)")
    claims_window: int = Field(
        120,
        gt=0,
        description="assignment -> claims deadline; verdicts close verdict_window later (s)",
    )
    open_window: int = Field(86_400, gt=0, description="post -> last claim of an Open job (s)")
    max_total_steps: int = Field(1_000_000, gt=0, lt=2**32, description="most steps N per job")
    max_segments: int = Field(
        4096,
        gt=0,
        le=2**16,
        description="most segments N / k per job (a sampled segment's index is 16 bits on chain)",
    )
    max_segment_steps: int = Field(
        10_000,
        gt=0,
        lt=2**32,
        description="most steps k per segment (replayable in a verdict window)",
    )
    max_reassignments: int = Field(
        2,
        ge=0,
        lt=2**32,
        description="fresh verifier draws for samples no revealed verdict covers, then refund",
    )
    # ShareRegistry (docs/SECURITY.md P-19): a segment's replay cost, checkpointInterval *
    # computePerStep (veritrain.lineage.compute_per_step), is bounded by max_segment_compute, and
    # a replayer at reference_replay_flops must replay it within half of the verdict window:
    # 2 * max_segment_compute <= reference_replay_flops * verdict_window (checked below).
    reference_replay_flops: int = Field(
        10**9, gt=0, description="replay speed the deployment assumes of a verifier (FLOP/s)"
    )
    max_segment_compute: int | None = Field(
        None,
        gt=0,
        description="most FLOP one segment may cost to replay (None: reference_replay_flops * "
        "verdict_window / 2, see segment_compute_bound)",
    )
    # VerificationRound (docs/FORCED_ERRORS.md)
    # 20%: one seat replays a fetched last when the forced error lands on it (E-3), so the rate
    # adds to its replay: 9.85% of a 12-segment job at 20%, 10.2% at 30% (docs/SECURITY.md P-39)
    forced_error_rate_bps: int = Field(
        2_000,
        ge=0,
        le=10_000,
        description="share of jobs carrying a forced error (bps); each seat holds the forced "
        "sample with probability >= 1/V (docs/SECURITY.md P-27), so laziness must lose at p/V",
    )
    jackpot_funding: int = Field(
        100 * E18, ge=0, description="tokens the deployer puts in the jackpot pool (wei)"
    )
    # StakeManager
    unbonding_delay: int = Field(600, ge=0, description="requestUnbond -> withdraw (s)")
    min_stake_solver: int = Field(100 * E18, ge=0, description="Role.Solver minimum (wei)")
    min_stake_verifier: int = Field(50 * E18, ge=0, description="Role.Verifier minimum (wei)")
    min_stake_whistleblower: int = Field(
        50 * E18, ge=0, description="Role.Whistleblower minimum (wei)"
    )
    # ArbitrationCommittee
    committee_size: int = Field(3, ge=1, le=64, description="K arbiters per dispute (max 64)")
    vote_commit_window: int = Field(300, gt=0, description="draw -> commit deadline (s)")
    vote_reveal_window: int = Field(300, gt=0, description="commit end -> reveal deadline (s)")
    # Adjudicator (docs/DISPUTES.md): the v0 committee on whole segments, or the bisection game
    # (the committee then judges only the last step).
    adjudicator: Literal["committee", "bisection"] = Field(
        "committee", description="JobManager adjudicator"
    )
    clock_seconds: int = Field(
        3600, gt=0, le=365 * 86400, description="bisection: chess clock per side (s)"
    )
    move_bond: int = Field(1 * E18, ge=0, description="bisection: bond per move (wei)")
    # RunRegistry (docs/RUNS.md): optimistic round claims of DiLoCo training runs. A lost claim
    # bond pays every arbiter of the committee that struck or upheld it (checked below).
    claim_bond: int = Field(
        100 * E18,
        gt=0,
        description="bond of a round claim and of its challenge (wei), >= committee_size * "
        "arbiter_fee",
    )
    claim_challenge_window: int = Field(
        300, gt=0, le=365 * 86400, description="round claim -> last challenge (s)"
    )
    # A round's registration closes by a rule (docs/SECURITY.md P-28): when every seat is
    # registered, or this long after the round opened; no claim can be proposed before.
    registration_window: int = Field(
        3600, gt=0, le=365 * 86400, description="round opens -> last contribution post (s)"
    )
    # The reference job the deployer prices cheating on (docs/SECURITY.md "Cheating is
    # irrational", veritrain.economics): no solver faking any c of its M segments, alone or with
    # a coalition holding reference_coalition_bps of the seats, may expect a gain (checked below).
    # Defaults: the demo's 12-segment digits job, whose reward pays its training at cost.
    reference_segments: int = Field(
        12, ge=1, le=4096, description="M = N/k of the job cheating is priced on"
    )
    reference_segment_cost: int = Field(
        25 * 10**16,
        ge=0,
        description="the solver's training cost of one segment of the reference job (wei); a "
        "seat's replay of it costs the same",
    )
    reference_reward: int = Field(
        3 * E18, ge=0, description="reward of the reference job (wei): M * cost, paid at cost"
    )
    reference_coalition_bps: int = Field(
        3_333,
        ge=0,
        lt=10_000,
        description="share of the verifier draw a cheating solver's coalition may hold (bps)",
    )

    @property
    def forced_error_premium(self) -> int:
        """Premium every job pays into the jackpot pool (wei): ``ceil(rate * V * jackpot /
        10_000)``, as ``JobManager.forcedErrorPremium()`` computes it (docs/FORCED_ERRORS.md
        section 5). A forced error pays at most one jackpot per seat, so at most V per job."""
        return -(-self.forced_error_rate_bps * self.verifiers_per_job * self.jackpot // 10_000)

    @property
    def lazy_holding(self) -> Fraction:
        """h of `lazy_gain_bps`: `veritrain.economics.lazy_holding_worst` on the reference job."""
        econ = self.reference_economics
        return lazy_holding_worst(econ.verifiers, econ.samples, econ.segments)

    @property
    def lazy_gain_bps(self) -> int:
        """Expected gain per job of a seat that approves without replaying, times ``10_000 / h``
        (wei), where h is the least chance that its own samples hold the forced one on a
        reference job, even for a seat that looks at its draw before it decides
        (`veritrain.economics.lazy_holding_worst`, docs/SECURITY.md E-1: ``1 / min(M, (V - 1) q
        + 1)``, 1 when q >= M): `veritrain.economics.fee_bound_lazy_gain`, that is ``10_000 *
        fee / h - rate * (fee + verifier_stake)``, exact. Negative iff laziness loses on every
        draw (docs/ECONOMICS.md "Lazy verifier")."""
        h = self.lazy_holding
        return int(
            fee_bound_lazy_gain(self.reference_economics, h) * 10_000 / h
        )  # 10_000 / h clears denominators

    def farming_gain_bps(self, phi_bps: int) -> int:
        """Expected gain per job, times 10_000 (wei * 10_000), of a coalition that posts its own
        zero-reward jobs, completes them and holds a share ``phi_bps`` (basis points) of the
        verifier seats: ``phi * p * V * J - premium - (1 - phi) * V * fee`` (docs/FORCED_ERRORS.md
        section 5). Linear in phi, so its sign at phi = 0 and phi = 10_000 bounds every phi.

        Raises:
            ValueError: ``phi_bps`` outside [0, 10_000].
        """
        if not 0 <= phi_bps <= 10_000:
            raise ValueError(f"phi_bps {phi_bps} outside [0, 10000]")
        v = self.verifiers_per_job
        jackpots = phi_bps * self.forced_error_rate_bps * v * self.jackpot // 10_000
        fees_lost = (10_000 - phi_bps) * v * self.verifier_fee
        return jackpots - 10_000 * self.forced_error_premium - fees_lost

    @property
    def reference_economics(self) -> Economics:
        """The money and sample of the reference job (`veritrain.economics.Economics`)."""
        return Economics(
            segments=self.reference_segments,
            verifiers=self.verifiers_per_job,
            samples=min(self.samples_per_job, 63),
            reward=self.reference_reward,
            segment_cost=self.reference_segment_cost,
            solver_stake=self.solver_stake,
            verifier_fee=self.verifier_fee,
            verifier_stake=self.verifier_stake,
            jackpot=self.jackpot,
            forced_error_rate_bps=self.forced_error_rate_bps,
        )

    @model_validator(mode="after")
    def _check(self) -> ProtocolParams:
        # docs/SECURITY.md "Cheating is irrational" (a), (c): on the reference job, faking any c
        # of its M segments loses in expectation, alone and with the stated coalition share.
        econ = self.reference_economics
        refused = fake_violation(econ) or coalition_violation(
            econ, Fraction(self.reference_coalition_bps, 10_000)
        )
        if refused is not None:
            raise ValueError(
                f"{refused}; on the reference job (reference_segments, reference_reward, "
                "reference_segment_cost): raise solver_stake, verifiers_per_job or samples_per_job"
            )
        # docs/FORCED_ERRORS.md section 5: no strategy farms the jackpot. Completing jobs: the
        # premium makes the coalition's expected gain <= 0 for every share phi of the seats.
        for phi_bps in (0, 10_000):
            if self.farming_gain_bps(phi_bps) > 0:
                raise ValueError(
                    f"jackpot farming pays: a coalition holding {phi_bps} bps of the seats gains "
                    f"{self.farming_gain_bps(phi_bps) / 10_000} wei per completed job"
                )
        # Abandoning jobs without a forced error: the VerificationRound constructor refuses
        # otherwise.
        gain = self.forced_error_rate_bps * self.verifiers_per_job * self.jackpot
        cost = (10_000 - self.forced_error_rate_bps) * self.solver_stake
        if gain != 0 and gain >= cost:
            raise ValueError(
                f"jackpot farming pays: rate {self.forced_error_rate_bps} bps * V "
                f"{self.verifiers_per_job} * jackpot {self.jackpot} must be below "
                f"(10000 - rate) * solver_stake {self.solver_stake}"
            )
        if self.verifier_fee == 0:
            raise ValueError("verifier_fee must be > 0: a job pays for the verifier stake it locks")
        # docs/ECONOMICS.md "Lazy verifier", docs/SECURITY.md P-27, E-1: a seat that approves
        # without replaying expects fee - h*p*(fee + verifier_stake), where h, the chance its
        # own samples hold the forced one, is at least 1/V for a seat blind to its draw and
        # `lazy_holding_worst` for one that looks at it first; it must lose at the latter.
        if self.forced_error_rate_bps == 0:
            logger.warning(
                "forced_error_rate_bps is 0: no forced error ever catches a verifier that "
                "approves without replaying (only whistleblowers do)"
            )
        elif self.lazy_gain_bps >= 0:
            raise ValueError(
                f"laziness pays: a verifier that approves without replaying gains "
                f"{float(fee_bound_lazy_gain(self.reference_economics, self.lazy_holding)):.0f} "
                f"wei per job when "
                f"it holds the forced sample with probability {self.lazy_holding} (its worst "
                f"draw); need rate * (fee + verifier_stake) > 10000 * fee * "
                f"{1 / self.lazy_holding}"
            )
        # The draw seats a verifier only if its free stake covers a seat's lock (its stake and
        # first reject bond, docs/SECURITY.md P-38): a lower minimum admits verifiers to the
        # active set that no draw ever seats.
        seat_lock = self.verifier_stake + self.challenge_bond
        if self.min_stake_verifier < seat_lock:
            raise ValueError(
                f"min_stake_verifier {self.min_stake_verifier} wei must be at least a seat's "
                f"lock, verifier_stake + challenge_bond = {seat_lock} wei: an active verifier "
                "below it is never drawn"
            )
        if self.verifiers_per_job * self.samples_per_job >= 64:
            # each seat draws its own q samples and every seat holds the last segment; their
            # union must fit the contract's bitmaps (P-27, P-36)
            raise ValueError(
                f"verifiers_per_job * samples_per_job = "
                f"{self.verifiers_per_job * self.samples_per_job} must be at most 63"
            )
        if (
            self.max_segment_compute is not None
            and 2 * self.max_segment_compute > self.reference_replay_flops * self.verdict_window
        ):
            raise ValueError(
                f"max_segment_compute {self.max_segment_compute} FLOP is not replayable in half "
                f"the verdict window ({self.verdict_window} s) at {self.reference_replay_flops} "
                "FLOP/s"
            )
        if self.claim_bond < self.committee_size * self.arbiter_fee:
            raise ValueError(
                f"claim_bond {self.claim_bond} wei must be at least committee_size * arbiter_fee "
                f"= {self.committee_size * self.arbiter_fee} wei (RunRegistry constructor)"
            )
        if self.committee_size % 2 == 0:
            logger.warning(
                "committee_size %d is even: ties keep the commitment valid", self.committee_size
            )
        return self

    @classmethod
    def demo(cls, **overrides: Any) -> ProtocolParams:
        """Short windows for an interactive demo (V=5, q=12, K=3; commit 900 s, verdict 180 s,
        reveal 30 s, challenge 30 s, vote commit 90 s, reveal 60 s, unbonding 60 s; segments of at
        most 9e10 FLOP, replayable at 1e9 FLOP/s in half the verdict window; bisection:
        clock 120 s, move bond 1e18; claims window 120 s, open window 1 day; run round claims:
        bond 100e18, challenge window 60 s). Every job carries a
        forced error (rate 10_000 bps), so every run shows one caught; at that rate every jackpot
        could be farmed (docs/FORCED_ERRORS.md section 5), so the demo pays none (jackpot 0; the
        pool is still funded with 100e18 for runs that override the rate and the jackpot).
        q = 12: each verifier draws its own q segments (docs/SECURITY.md P-27), and on the demo's
        12-segment jobs every seat then holds every segment, so every run shows the lazy verifier
        caught by the forced error and a cheater caught whichever segment it cheats from. Pass
        ``adjudicator="bisection"`` to use the bisection game."""
        values: dict[str, Any] = {
            "solver_stake": 100 * E18,
            "verifier_stake": 10 * E18,
            "challenge_bond": 5 * E18,
            "verifier_fee": 1 * E18,
            "arbiter_fee": 1 * E18,
            "jackpot": 0,
            "verifiers_per_job": 5,
            "samples_per_job": 12,
            "commit_window": 900,
            "verdict_window": 180,
            "reveal_window": 30,
            "challenge_window": 30,
            "claims_window": 120,
            "open_window": 86_400,
            "forced_error_rate_bps": 10_000,
            "jackpot_funding": 100 * E18,
            "unbonding_delay": 60,
            "min_stake_solver": 100 * E18,
            "min_stake_verifier": 50 * E18,
            "min_stake_whistleblower": 50 * E18,
            "committee_size": 3,
            "vote_commit_window": 90,
            "vote_reveal_window": 60,
            "clock_seconds": 120,
            "move_bond": 1 * E18,
            "claim_bond": 100 * E18,
            "claim_challenge_window": 60,
            "registration_window": 120,
        }
        values.update(overrides)
        return cls(**values)

    @property
    def segment_compute_bound(self) -> int:
        """``ShareRegistry.maxSegmentCompute`` (FLOP): ``max_segment_compute`` if set, else what
        a replayer at ``reference_replay_flops`` replays in half the verdict window."""
        if self.max_segment_compute is not None:
            return self.max_segment_compute
        return self.reference_replay_flops * self.verdict_window // 2

    @property
    def min_stakes(self) -> list[int]:
        """``uint256[3] minStake`` indexed by Role (Solver, Verifier, Whistleblower)."""
        return [self.min_stake_solver, self.min_stake_verifier, self.min_stake_whistleblower]

    def job_params_tuple(self) -> tuple[int, ...]:
        """``JobManager.Params`` in struct order (docs/FORCED_ERRORS.md section 4)."""
        return (
            self.solver_stake,
            self.verifier_stake,
            self.challenge_bond,
            self.verifier_fee,
            self.arbiter_fee,
            self.jackpot,
            self.verifiers_per_job,
            self.samples_per_job,
            self.commit_window,
            self.verdict_window,
            self.reveal_window,
            self.challenge_window,
            self.claims_window,
            self.open_window,
            self.max_total_steps,
            self.max_segments,
            self.max_segment_steps,
            self.max_reassignments,
        )

    def job_escrow(self, reward: int) -> int:
        """Tokens `postJob` pulls from the submitter: ``reward + V * verifierFee`` plus the
        forced-error premium (wei), what ``JobManager.postCost(reward)`` returns."""
        return reward + self.verifiers_per_job * self.verifier_fee + self.forced_error_premium


class ContractAddresses(BaseModel):
    """Checksummed addresses of the deployed contracts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    token: str
    stake_manager: str
    job_manager: str
    arbitration: str
    share_registry: str
    escrow: str
    run_registry: str  # every adjudicator variant deploys the RunRegistry
    verification_round: str | None = None
    bisection_game: str | None = None
    lib_settlement: str | None = None
    lib_assignment: str | None = None
    lib_posting: str | None = None


class Deployment(BaseModel):
    """One protocol deployment: what a node needs to talk to it (the manifest's content).

    Attributes:
        chain_id: EIP-155 chain id.
        addresses: contract addresses.
        params: constructor parameters used.
        block: block number of the first deployment transaction (event scans start here).
        deployer: address that deployed and holds the admin roles.
        token_deployed: True when VeriToken was deployed here (devnet), False for an existing
            ERC-20.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    chain_id: int
    addresses: ContractAddresses
    params: ProtocolParams
    block: int = Field(ge=0)
    deployer: str
    token_deployed: bool = True


def manifest_path(chain_id: int, directory: str | Path = DEFAULT_MANIFEST_DIR) -> Path:
    """``<directory>/<chain_id>.json``."""
    return Path(directory) / f"{chain_id}.json"


def write_manifest(deployment: Deployment, directory: str | Path = DEFAULT_MANIFEST_DIR) -> Path:
    """Write ``<directory>/<chain_id>.json`` atomically (temp file + rename).

    Args:
        deployment: the deployment to save.
        directory: folder of manifests (created if missing).

    Returns:
        The manifest path.
    """
    path = manifest_path(deployment.chain_id, directory)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(deployment.model_dump(mode="json"), indent=2, sort_keys=True) + "\n")
    tmp.replace(path)
    return path


def load_manifest(
    path_or_chain_id: str | Path | int, directory: str | Path = DEFAULT_MANIFEST_DIR
) -> Deployment:
    """Load a manifest from a path, or ``<directory>/<chain_id>.json`` from a chain id.

    Raises:
        ChainValueError: the file is missing or not a valid manifest.
    """
    if isinstance(path_or_chain_id, int):
        path = manifest_path(path_or_chain_id, directory)
    else:
        path = Path(path_or_chain_id)
    try:
        return Deployment.model_validate_json(path.read_text())
    except FileNotFoundError as exc:
        raise ChainValueError(f"no deployment manifest at {path}") from exc
    except ValidationError as exc:
        # one line: the first error, where it is and what it says (a manifest written before a
        # rule of ProtocolParams existed fails here, e.g. "params: faking does not lose: ...")
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        message = str(first["msg"]).removeprefix("Value error, ")
        detail = f"{where}: {message}" if where else message
        raise ChainValueError(f"invalid deployment manifest {path}: {detail}") from None
    except ValueError as exc:
        raise ChainValueError(f"invalid deployment manifest {path}: {exc}") from exc
