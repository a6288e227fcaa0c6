"""Verification sized by economics: every cheating strategy's expected gain, exactly.

A deployment's money (rewards, stakes, fees, jackpot, forced-error rate) and its sample (V seats,
each its own q of a job's M segments plus the last one, docs/SECURITY.md P-27 and P-36) decide
whether cheating pays. This module gives, for one job, the expected gain in wei of each strategy
of docs/SECURITY.md "Cheating is irrational" (one formula each, written out there) as an exact
`fractions.Fraction` (never a float for money), the replay fraction (the share of the job's
training compute the seats replay) and the least-replay (V, q) at which every gain is negative::

    econ = Economics(segments=12, verifiers=3, samples=2, reward=60 * E18, segment_cost=5 * E18,
                     solver_stake=100 * E18, verifier_fee=E18, verifier_stake=10 * E18,
                     jackpot=5 * E18, forced_error_rate_bps=3000)
    worst = worst_fake(econ)                   # (c, gain) with the largest gain over c = 1..M
    replay_fraction(3, 2, 12)                  # Fraction(17, 24): 70.8% of the training
    least_replay(econ, coalition=Fraction(1, 3))   # the cheapest (V, q) keeping every gain < 0

The draw mirrored: each seat draws ``q`` distinct segments of all ``M`` (the last one included)
with `LibSampling.drawSegments` (uniform ordered draw, so its set is uniform over the C(M, q)
subsets), independently per seat (seeded by the seat's address), and also holds the last segment
(`LibAssignment._drawOwnSegments`), which every seat replays. With one seat per job (V = 1,
docs/SECURITY.md P-39) the seat draws its q among the first M - 1 segments and replays the last
one only when its draw holds segment M - 2; otherwise it fetches the final state, which checks
availability, not validity. For detection the last two segments then act as one unit of the
M - 1 the seat draws from, and a cheating solver fakes them together. `veritrain.sampling` is
the bit-for-bit mirror; the tests check these formulas against enumeration of every draw (the
solver's best choice of faked segments) and against its Monte Carlo.

Pure: no web3, no chain. Amounts in wei of the payment token (18 decimals).

Run: not a script; ``from veritrain.economics import Economics, worst_fake``.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "MAX_SAMPLES",
    "Economics",
    "coalition_detection",
    "coalition_gain",
    "coalition_violation",
    "detection",
    "forced_on_fetched_last",
    "fake_violation",
    "least_replay",
    "lazy_gain",
    "lazy_holding_worst",
    "miss_probability",
    "own_replay_segments",
    "replay_fraction",
    "solver_fake_gain",
    "union_fraction",
    "violations",
    "withhold_gain",
    "worst_coalition",
    "worst_fake",
]

MAX_SAMPLES = 64
"""`MAX_SAMPLES_PER_JOB`: V * q + 1 (the union with the last segment) fits a uint64 mask."""


class Economics(BaseModel):
    """The money and the sample of one job of a deployment.

    Attributes:
        segments: M = N / k, the job's segments (>= 1).
        verifiers: V, seats per job.
        samples: q, each seat's own random draw (the last segment comes on top, P-36).
        reward: the job's reward (wei).
        segment_cost: the solver's training cost of one segment (wei); a seat's replay of one
            segment costs the same (repro replays the same steps).
        solver_stake: locked per claim, slashed when the job is rejected (wei).
        verifier_fee: paid per seat that reveals (wei).
        verifier_stake: locked per seat, slashed when it approves a forced error (wei).
        jackpot: paid per seat that rejects a forced error with the true end (wei).
        forced_error_rate_bps: share of jobs carrying a forced error, p = rate / 10_000.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    segments: int = Field(ge=1)
    verifiers: int = Field(ge=1, le=32)
    samples: int = Field(ge=1, le=63)
    reward: int = Field(ge=0)
    segment_cost: int = Field(ge=0)
    solver_stake: int = Field(ge=0)
    verifier_fee: int = Field(ge=0)
    verifier_stake: int = Field(ge=0)
    jackpot: int = Field(ge=0)
    forced_error_rate_bps: int = Field(ge=0, le=10_000)

    def with_sample(self, verifiers: int, samples: int) -> Economics:
        """The same money with another (V, q)."""
        return self.model_copy(update={"verifiers": verifiers, "samples": samples})


def _single_seat(verifiers: int, segments: int) -> bool:
    """Whether the sample follows the single-seat rule (V = 1 and M >= 2, P-39)."""
    return verifiers == 1 and segments >= 2


def _units(faked: int) -> int:
    """Draw units a single seat must miss to miss ``faked`` = c segments, at the solver's best
    choice: segments M - 2 and M - 1 are one unit (the seat replays the last exactly when it
    drew M - 2), so faking both costs one unit: ``max(1, c - 1)`` of the M - 1."""
    return max(1, faked - 1)


def miss_probability(segments: int, faked: int, samples: int) -> Fraction:
    """P(one seat's q-draw holds none of ``faked`` given non-last segments):
    ``C(M - c, q) / C(M, q)`` = ``prod_{i<q} (M - c - i) / (M - i)`` (exact).

    Args:
        segments: M.
        faked: c, 0 <= c <= M - 1 (the last segment is held by every seat, see `detection`).
        samples: q (q >= M draws every segment).

    Raises:
        ValueError: c outside [0, M - 1].
    """
    if not 0 <= faked <= segments - 1:
        raise ValueError(f"faked {faked} outside [0, {segments - 1}] (non-last segments)")
    q = min(samples, segments)
    return Fraction(comb(segments - faked, q), comb(segments, q))


def detection(segments: int, faked: int, verifiers: int, samples: int) -> Fraction:
    """P(some seat replays a faked segment) when the solver fakes ``faked`` of M segments and
    keeps the last one honest (faking the last one is always replayed, by every seat, P-36):
    ``1 - (C(M - c, q) / C(M, q))^V`` for c < M, 1 for c = M (exact). With one seat (V = 1,
    M >= 2, P-39) the solver fakes segments M - 2 and M - 1 together, u = max(1, c - 1) of the
    M - 1 units the seat draws from: ``1 - C(M - 1 - u, q) / C(M - 1, q)``.

    Raises:
        ValueError: c outside [1, M].
    """
    if not 1 <= faked <= segments:
        raise ValueError(f"faked {faked} outside [1, {segments}]")
    if _single_seat(verifiers, segments):
        # one seat, its q of the M - 1 units (P-39); the solver fakes the last two together
        units = _units(faked)
        if units >= segments - 1:
            return Fraction(1)
        return 1 - miss_probability(segments - 1, units, samples)
    if faked == segments:
        return Fraction(1)
    return 1 - miss_probability(segments, faked, samples) ** verifiers


def solver_fake_gain(econ: Economics, faked: int) -> Fraction:
    """Expected gain (wei) of a solver faking ``faked`` = c of M segments (docs/SECURITY.md,
    "Cheating is irrational", (a)) against training honestly:

        G_fake(c) = c * C  -  P_detect(c) * (R + S_solver)

    it saves c segments of training whatever happens and, when a seat replays a faked segment
    (the reject is upheld by the adjudicator), forgoes the reward and loses its stake.
    Whistleblowers are left out (they only add detection), so this bounds the gain from above.
    """
    p = detection(econ.segments, faked, econ.verifiers, econ.samples)
    return faked * econ.segment_cost - p * (econ.reward + econ.solver_stake)


def worst_fake(econ: Economics) -> tuple[int, Fraction]:
    """(c, G_fake(c)) with the largest gain over c = 1..M (the smallest c on a tie)."""
    return max(
        ((c, solver_fake_gain(econ, c)) for c in range(1, econ.segments + 1)),
        key=lambda cg: (cg[1], -cg[0]),
    )


def coalition_detection(econ: Economics, faked: int, coalition: Fraction) -> Fraction:
    """P(an honest seat replays a faked segment) when each seat is the coalition's with
    probability ``coalition`` = phi (its share of the verifier draw), independently, and the
    coalition's seats approve the fakes: ``1 - (1 - (1 - phi) * (1 - miss(c)))^V`` for c < M;
    ``1 - phi^V`` for c = M (every seat holds the last segment)."""
    if not 0 <= coalition <= 1:
        raise ValueError(f"coalition share {coalition} outside [0, 1]")
    if _single_seat(econ.verifiers, econ.segments):
        return (1 - coalition) * detection(econ.segments, faked, 1, econ.samples)
    if faked == econ.segments:
        return 1 - coalition**econ.verifiers
    hit = 1 - miss_probability(econ.segments, faked, econ.samples)
    return 1 - (1 - (1 - coalition) * hit) ** econ.verifiers


def coalition_gain(econ: Economics, faked: int, coalition: Fraction) -> Fraction:
    """Expected gain (wei) of a cheating solver colluding with a share phi of the verifier set
    (docs/SECURITY.md, "Cheating is irrational", (c)):

        G_coal(c, phi) = c * C  -  [1 - (1 - (1 - phi) * h_c)^V] * (R + S_solver),
        h_c = 1 - C(M - c, q) / C(M, q)

    The coalition's seats tell each other the forced sample's true end (the solver knows it), so
    the forced error costs them nothing; their stakes slashed when an honest seat catches the fake
    are left out (an upper bound). At phi = 1 nothing is detected: a coalition holding every seat
    always gains, so a deployment states the share it guards against.
    """
    p = coalition_detection(econ, faked, coalition)
    return faked * econ.segment_cost - p * (econ.reward + econ.solver_stake)


def worst_coalition(econ: Economics, coalition: Fraction) -> tuple[int, Fraction]:
    """(c, G_coal(c, phi)) with the largest gain over c = 1..M."""
    return max(
        ((c, coalition_gain(econ, c, coalition)) for c in range(1, econ.segments + 1)),
        key=lambda cg: (cg[1], -cg[0]),
    )


def forced_on_fetched_last(samples: int, segments: int) -> Fraction:
    """P(a single seat fetches the last sample and the forced sample is that last one | the job
    is forced), exact (P-39, E-3). The seat draws q of the n = M - 1 first segments; it fetches
    the last unless it drew M - 2; the forced sample is uniform among the eligible samples, the
    ends of the draw's k runs of consecutive segments plus the last. A q-subset of n with k runs
    that leaves M - 2 out is counted by ``C(q - 1, k - 1) * C(n - q, k)`` (k + 1 eligible), so

        sum_k C(q - 1, k - 1) C(n - q, k) / (k + 1)  /  C(n, q)   ((M - 2) / (2 (M - 1)) at q = 1)
    """
    n = segments - 1
    if n < 1 or samples >= n:
        return Fraction(0)
    total = sum(
        (
            Fraction(comb(samples - 1, k - 1) * comb(n - samples, k), k + 1)
            for k in range(1, samples + 1)
        ),
        start=Fraction(0),
    )
    return total / comb(n, samples)


def own_replay_segments(
    verifiers: int, samples: int, segments: int, forced_error_rate_bps: int = 0
) -> Fraction:
    """Expected segments ONE seat replays: its q draw plus the last segment unless drawn,
    ``q + 1 - q / M`` (M when q >= M). With one seat (V = 1, M >= 2, P-39) its q of the first
    M - 1, plus the last when it drew M - 2 or when the forced error lands on the fetched last
    (the fetch then disagrees with the claim and the seat replays, E-3):
    ``q + q / (M - 1) + p * forced_on_fetched_last(q, M)`` (M when q >= M - 1); the fetched final
    state itself costs bandwidth, not compute. The verifier node replays its own mask only,
    less its fetch-only sample unless the fetch disagrees (`verifier.node`, P-27).

    Args:
        forced_error_rate_bps: p in basis points (only the single seat's replay depends on it).
    """
    if _single_seat(verifiers, segments):
        if samples >= segments - 1:
            return Fraction(segments)
        p = Fraction(forced_error_rate_bps, 10_000)
        return (
            samples
            + Fraction(samples, segments - 1)
            + p * forced_on_fetched_last(samples, segments)
        )
    if samples >= segments:
        return Fraction(segments)
    return samples + 1 - Fraction(samples, segments)


def replay_fraction(
    verifiers: int, samples: int, segments: int, forced_error_rate_bps: int = 0
) -> Fraction:
    """Expected share of a job's training compute all seats together replay:
    ``V * (q + 1 - q / M) / M`` (each seat replays its own draw and the last segment separately;
    a segment two seats drew is replayed twice); with one seat (P-39) `own_replay_segments` / M:
    ``(1 + 1/(M - 1) + p (M - 2) / (2 (M - 1))) / M`` at q = 1, 9.85% at M = 12 and p = 20%."""
    return (
        verifiers
        * own_replay_segments(verifiers, samples, segments, forced_error_rate_bps)
        / segments
    )


def union_fraction(verifiers: int, samples: int, segments: int) -> Fraction:
    """Expected share of the job's segments in the union of the draws (the job's sample; what
    one shared replay per segment would cost): ``(1 + (M - 1) * (1 - (1 - q/M)^V)) / M``."""
    if _single_seat(verifiers, segments):
        return Fraction(min(samples, segments - 1) + 1, segments)
    q = min(samples, segments)
    non_last = (segments - 1) * (1 - Fraction(segments - q, segments) ** verifiers)
    return (1 + non_last) / segments


def lazy_holding_worst(verifiers: int, samples: int, segments: int) -> Fraction:
    """Lower bound of h, the chance that a seat's own mask holds the forced sample, given a draw
    the seat can see before it decides: the forced sample is drawn uniformly among the eligible
    samples (those whose next segment is not sampled, `VerificationRound._draw`); the seat always
    holds the last one (eligible), and its q others may all be ineligible, so
    ``h >= 1 / min(M, (V - 1) * q + 1)`` (at most that many eligible samples are left). Averaged
    over draws a seat that cannot see them holds it with probability >= 1 / V (every sample is in
    some seat's mask, and seats are symmetric; docs/SECURITY.md P-27). A seat drawing q >= M
    holds every sample: h = 1. A single seat (P-39) replays every eligible sample but a fetched
    last, which is eligible too: h >= k / (k + 1) >= 1/2 for its k runs, 1 when it replays the
    last (q >= M - 1 draws every segment before it)."""
    if samples >= segments:
        return Fraction(1)
    if verifiers == 1:
        return Fraction(1) if segments <= 2 or samples >= segments - 1 else Fraction(1, 2)
    return Fraction(1, min(segments, (verifiers - 1) * samples + 1))


def lazy_gain(econ: Economics, holding: Fraction) -> Fraction:
    """Expected gain (wei) of a seat that approves every sample without replaying, against
    replaying them (docs/SECURITY.md, "Cheating is irrational", (b)):

        G_lazy(h) = (q + 1 - q/M) * C  -  h * p * (fee + S_verifier + J)

    it saves its replay; when the job carries a forced error on a sample it holds (probability
    h * p) it loses its fee and stake where an honest seat would have earned the jackpot. The
    deployer's rule is `fee_bound_lazy_gain`.
    """
    p = Fraction(econ.forced_error_rate_bps, 10_000)
    saved = (
        own_replay_segments(econ.verifiers, econ.samples, econ.segments, econ.forced_error_rate_bps)
        * econ.segment_cost
    )
    return saved - holding * p * (econ.verifier_fee + econ.verifier_stake + econ.jackpot)


def fee_bound_lazy_gain(econ: Economics, holding: Fraction) -> Fraction:
    """`lazy_gain` as the deployer prices it when it knows no replay cost (wei): the saved
    replay bounded by the seat's fee (a seat whose replay costs more than its fee does not sit)
    and the jackpot left out,

        G_lazy_fee(h) = fee  -  h * p * (fee + S_verifier)  >=  G_lazy(h)

    so a deployment where it is negative at h = 1/V makes laziness lose for a seat blind to its
    draw whatever the replay costs (`chain.manifest.ProtocolParams.lazy_gain_bps`)."""
    p = Fraction(econ.forced_error_rate_bps, 10_000)
    return econ.verifier_fee - holding * p * (econ.verifier_fee + econ.verifier_stake)


def withhold_gain(econ: Economics, faked: int) -> Fraction:
    """Expected gain (wei) of a solver that withholds the data of ``faked`` segments it did not
    train (docs/SECURITY.md, "Cheating is irrational", (d)). A sampled segment whose start the
    solver does not serve is an abstention of its seats and goes to the adjudicator, where the
    withholder loses (P-6, P-20); the last segment is in every draw (P-36), so withholding the
    final state is always sampled. The gain is therefore the faking gain, ``G_fake(c)``, and
    ``-(R + S_solver)`` for the final state alone (nothing saved, always judged)."""
    if faked == 0:
        return -Fraction(econ.reward + econ.solver_stake)
    return solver_fake_gain(econ, faked)


def fake_violation(econ: Economics) -> str | None:
    """One line naming the c with the largest non-negative G_fake(c), or None when every c in
    1..M loses. Amounts in VTT (1e18 wei)."""
    c, gain = worst_fake(econ)
    if gain < 0:
        return None
    p = detection(econ.segments, c, econ.verifiers, econ.samples)
    return (
        f"faking does not lose: a solver faking {c} of {econ.segments} segments expects "
        f"{_vtt(gain)} VTT "
        f"per job (saves {_vtt(c * econ.segment_cost)} VTT of training, detected with "
        f"probability {float(p):.4f} at V={econ.verifiers}, q={econ.samples}, then loses reward "
        f"+ stake {_vtt(econ.reward + econ.solver_stake)} VTT)"
    )


def coalition_violation(econ: Economics, coalition: Fraction) -> str | None:
    """One line naming the c with the largest non-negative G_coal(c, phi), or None."""
    c, gain = worst_coalition(econ, coalition)
    if gain < 0:
        return None
    p = coalition_detection(econ, c, coalition)
    return (
        f"collusion does not lose: a solver faking {c} of {econ.segments} segments with a "
        f"coalition holding {float(coalition):.2%} of the seats expects {_vtt(gain)} VTT per "
        f"job (saves {_vtt(c * econ.segment_cost)} VTT, an honest seat replays a fake with "
        f"probability {float(p):.4f}, then loses reward + stake "
        f"{_vtt(econ.reward + econ.solver_stake)} VTT)"
    )


def violations(
    econ: Economics, coalition: Fraction | None = None, max_fake_gain: Fraction | None = None
) -> list[str]:
    """Every strategy with a non-negative expected gain, one line each (empty: all lose).

    Checks G_fake(c) and, if ``coalition`` is given, G_coal(c, phi) for c = 1..M; that a seat's
    fee pays its replay, ``fee >= (q + 1 - q/M) * C`` (else no honest seat sits); G_lazy at
    h = 1/V (a seat blind to the draw); and, if ``max_fake_gain`` is given, that the worst
    G_fake is at most it (deterrence at least as strong as a reference's). Amounts in VTT.
    """
    out: list[str] = []
    fake = fake_violation(econ)
    if fake is not None:
        out.append(fake)
    if coalition is not None:
        coal = coalition_violation(econ, coalition)
        if coal is not None:
            out.append(coal)
    replay = (
        own_replay_segments(econ.verifiers, econ.samples, econ.segments, econ.forced_error_rate_bps)
        * econ.segment_cost
    )
    if replay > econ.verifier_fee:
        out.append(
            f"replaying does not pay: a seat's replay costs {_vtt(replay)} VTT, its fee is "
            f"{_vtt(econ.verifier_fee)} VTT"
        )
    blind = lazy_gain(econ, Fraction(1, econ.verifiers))
    if blind >= 0:
        out.append(
            f"laziness pays: a seat approving without replaying gains {_vtt(blind)} VTT per job "
            f"at h = 1/{econ.verifiers}"
        )
    if max_fake_gain is not None:
        c, gain = worst_fake(econ)
        if gain > max_fake_gain:
            out.append(
                f"weaker deterrence: faking {c} segments gains {_vtt(gain)} VTT, above "
                f"{_vtt(max_fake_gain)} VTT"
            )
    return out


def least_replay(
    econ: Economics,
    coalition: Fraction | None = None,
    max_verifiers: int = 32,
    max_fake_gain: Fraction | None = None,
) -> tuple[int, int, Fraction] | None:
    """The (V, q, replay fraction) with the least replay at which `violations` is empty, for the
    money and M of ``econ`` (its V and q are ignored); ties go to the larger detection of one
    faked segment. None when no (V, q) with V * q + 1 <= 64 qualifies.

    Candidates are tried in increasing replay fraction, so only those cheaper than the answer
    are evaluated."""
    m = econ.segments
    candidates = [
        (
            replay_fraction(v, q, m, econ.forced_error_rate_bps),
            -detection(m, 1, v, q) if m > 1 else Fraction(0),
            v,
            q,
        )
        for v in range(1, max_verifiers + 1)
        for q in range(1, min(m, (MAX_SAMPLES - 1) // v) + 1)
    ]
    for fraction, _neg, v, q in sorted(candidates):
        if not violations(econ.with_sample(v, q), coalition, max_fake_gain):
            return v, q, fraction
    return None


def _vtt(wei: Fraction | int) -> str:
    """wei as VTT with two decimals (display only)."""
    return f"{float(Fraction(wei) / 10**18):.2f}"
