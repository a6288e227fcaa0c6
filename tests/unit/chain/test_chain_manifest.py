"""Deployment manifests and protocol parameters (no node)."""

import json
from fractions import Fraction

import pytest

from chain.errors import ChainValueError
from chain.manifest import (
    ContractAddresses,
    Deployment,
    ProtocolParams,
    load_manifest,
    manifest_path,
    write_manifest,
)

E18 = 10**18


def _deployment(chain_id: int = 31337) -> Deployment:
    return Deployment(
        chain_id=chain_id,
        addresses=ContractAddresses(
            token="0x" + "11" * 20,
            stake_manager="0x" + "22" * 20,
            job_manager="0x" + "33" * 20,
            arbitration="0x" + "44" * 20,
            share_registry="0x" + "55" * 20,
            escrow="0x" + "77" * 20,
            run_registry="0x" + "88" * 20,
        ),
        params=ProtocolParams.demo(),
        block=7,
        deployer="0x" + "66" * 20,
    )


def test_manifest_round_trip(tmp_path):
    dep = _deployment(11155111)
    path = write_manifest(dep, tmp_path)
    assert path == tmp_path / "11155111.json" == manifest_path(11155111, tmp_path)
    assert load_manifest(path) == dep
    assert load_manifest(11155111, tmp_path) == dep
    raw = json.loads(path.read_text())
    assert raw["params"]["solver_stake"] == 100 * E18  # big ints survive JSON


def test_manifest_missing_or_invalid(tmp_path):
    with pytest.raises(ChainValueError, match="no deployment manifest"):
        load_manifest(1, tmp_path)
    bad = tmp_path / "5.json"
    bad.write_text("{}")
    with pytest.raises(ChainValueError, match="invalid"):
        load_manifest(bad)


def test_a_manifest_whose_params_break_a_rule_is_refused_in_one_line(tmp_path):
    """A manifest written before a rule existed (here: a solver stake under which faking one
    segment of the reference job pays) is refused with one line naming the rule, not pydantic's
    multi-line report."""
    path = write_manifest(_deployment(5), tmp_path)
    raw = json.loads(path.read_text())
    raw["params"]["solver_stake"] = 0
    path.write_text(json.dumps(raw))
    with pytest.raises(ChainValueError) as info:
        load_manifest(path)
    text = str(info.value)
    assert "\n" not in text
    assert text.startswith(f"invalid deployment manifest {path}: params: ")
    assert "faking does not lose" in text


def test_demo_params():
    p = ProtocolParams.demo()
    assert (p.verifiers_per_job, p.samples_per_job, p.committee_size) == (5, 12, 3)
    assert (p.commit_window, p.verdict_window, p.challenge_window) == (900, 180, 30)
    assert (p.reveal_window, p.forced_error_rate_bps) == (30, 10_000)
    assert p.jackpot_funding >= 3 * 5 * p.jackpot  # every winner of every demo job is paid
    assert (p.vote_commit_window, p.vote_reveal_window) == (90, 60)
    assert p.min_stakes == [100 * E18, 50 * E18, 50 * E18]
    assert p.job_escrow(10 * E18) == 15 * E18  # the demo pays no jackpot: no premium
    assert ProtocolParams().forced_error_premium == E18  # 20% * 1 seat * 5e18
    assert ProtocolParams().job_escrow(10 * E18) == 11 * E18 + E18
    assert len(p.job_params_tuple()) == 18
    assert p.job_params_tuple()[5] == p.jackpot and p.job_params_tuple()[10] == p.reveal_window
    assert p.job_params_tuple()[12:] == (120, 86_400, 1_000_000, 4096, 10_000, 2)
    assert ProtocolParams.demo(challenge_window=5).challenge_window == 5
    with pytest.raises(ValueError):
        ProtocolParams(verifiers_per_job=0)


def test_params_refuse_profitable_jackpot_farming():
    """docs/FORCED_ERRORS.md section 5: rate * V * jackpot < (10_000 - rate) * solver_stake."""
    # every job forced: any jackpot is farmable; none is fine
    assert ProtocolParams.demo().jackpot == 0
    with pytest.raises(ValueError, match="jackpot farming pays"):
        ProtocolParams.demo(jackpot=1)
    # defaults of the contracts' deploy script: V = 3, jackpot 20e18, solver stake 100e18
    at = {"verifiers_per_job": 3, "jackpot": 20 * E18, "solver_stake": 100 * E18}
    assert ProtocolParams(forced_error_rate_bps=6249, **at).forced_error_rate_bps == 6249
    with pytest.raises(ValueError, match="jackpot farming pays"):
        ProtocolParams(forced_error_rate_bps=6250, **at)


def test_forced_error_premium_prices_farming_by_completion():
    """docs/FORCED_ERRORS.md section 5: the premium is ceil(rate * V * jackpot / 10_000), and a
    coalition completing its own jobs with a share phi of the seats gains nothing in expectation
    (the old rule priced only abandonment: at rate 30%, J = 20e18, fee 5e18 the coalition gained
    from phi = 5 / 11 on)."""
    at = {"verifiers_per_job": 3, "jackpot": 20 * E18, "verifier_fee": 5 * E18}
    p = ProtocolParams(
        forced_error_rate_bps=3000,
        solver_stake=100 * E18,
        verifier_stake=100 * E18,
        min_stake_verifier=105 * E18,
        **at,
    )
    assert p.forced_error_premium == 18 * E18
    assert p.farming_gain_bps(10_000) == 0  # phi = 1: premium in = expected jackpots out
    assert all(p.farming_gain_bps(phi) < 0 for phi in range(0, 10_000, 500))
    # rounded up: never below the expectation
    odd = ProtocolParams(forced_error_rate_bps=1, verifiers_per_job=3, jackpot=1, verifier_fee=1)
    assert odd.forced_error_premium == 1
    assert odd.farming_gain_bps(10_000) < 0
    with pytest.raises(ValueError, match="phi_bps"):
        p.farming_gain_bps(10_001)


def test_params_refuse_free_verifier_locks():
    with pytest.raises(ValueError, match="verifier_fee"):
        ProtocolParams(verifier_fee=0)


def test_params_refuse_a_verifier_minimum_below_a_seats_lock():
    """A verifier whose stake meets the minimum joins the active set, but the draw seats only
    one whose free stake covers a seat's lock, verifier_stake + challenge_bond (its first reject
    bond rides with the seat): a minimum below that makes verifiers that are active and never
    drawn, so the deployer refuses it; at exactly the lock it is accepted."""
    lock = ProtocolParams().verifier_stake + ProtocolParams().challenge_bond
    assert ProtocolParams(min_stake_verifier=lock).min_stake_verifier == lock
    with pytest.raises(ValueError, match="min_stake_verifier"):
        ProtocolParams(min_stake_verifier=lock - 1)
    with pytest.raises(ValueError, match="min_stake_verifier"):
        ProtocolParams(min_stake_verifier=0)


def test_params_refuse_more_segments_than_sixteen_bits_index():
    """The JobManager stores a sampled segment's index in 16 bits (its constructor refuses more)."""
    assert ProtocolParams(max_segments=2**16).max_segments == 2**16
    with pytest.raises(ValueError, match="max_segments"):
        ProtocolParams(max_segments=2**16 + 1)


def test_params_refuse_a_segment_bound_not_replayable_in_the_verdict_window():
    """docs/SECURITY.md P-19: 2 * max_segment_compute <= reference_replay_flops * verdict_window."""
    p = ProtocolParams()
    assert p.segment_compute_bound == 10**9 * 600 // 2
    demo = ProtocolParams.demo()
    assert demo.segment_compute_bound == 10**9 * 180 // 2
    # At the bound (half of a 600 s window at 1e9 FLOP/s) it is accepted; one FLOP more is not.
    assert ProtocolParams(max_segment_compute=300 * 10**9).segment_compute_bound == 300 * 10**9
    with pytest.raises(ValueError, match="max_segment_compute"):
        ProtocolParams(max_segment_compute=300 * 10**9 + 1)
    with pytest.raises(ValueError, match="max_segment_compute"):
        ProtocolParams(verdict_window=60, max_segment_compute=300 * 10**9)
    # The presets' segments fit the demo's bound.
    from veritrain.lineage import compute_per_step
    from veritrain.presets import preset

    for name in ("digits-mlp", "digits-mlp-wide"):
        spec = preset(name)
        assert spec.checkpoint_interval * compute_per_step(spec) <= demo.segment_compute_bound


def test_params_refuse_laziness_that_pays_under_own_draws():
    """P-27, E-1: a seat holds the forced sample with probability h >= 1/V when blind to its
    draw, but a seat that looks at its draw first can see h = 1/min(M, (V - 1) q + 1) (1/5 at
    V = 3, q = 2 on the 12-segment reference job), and then expects fee - h p (fee +
    verifier_stake). The old default stake of 10e18 left it +0.34e18 on such draws (and the
    older rate of 10% +0.63e18 even at h = 1/V); both are refused, and the default stake of
    20e18 leaves it at -0.26e18."""
    three = {
        "verifiers_per_job": 3,
        "samples_per_job": 2,
        "solver_stake": 100 * E18,
        "forced_error_rate_bps": 3_000,
    }
    with pytest.raises(ValueError, match="laziness pays"):
        ProtocolParams(**{**three, "forced_error_rate_bps": 1_000})
    with pytest.raises(ValueError, match="probability 1/5 \\(its worst draw\\)"):
        ProtocolParams(verifier_stake=10 * E18, **three)
    p = ProtocolParams(**three)
    assert p.forced_error_rate_bps == 3_000 and p.lazy_holding == Fraction(1, 5)
    # (fee - h p (fee + stake)) * 10_000 / h, in wei: (1e18 - 0.06 * 21e18) * 50_000
    assert p.lazy_gain_bps == 10_000 * 5 * E18 - 3_000 * 21 * E18 < 0
    # the default single seat (P-39): the forced error lands on its replayed draw or on its
    # fetched last (E-3), so a seat lazy on its replay alone is tested half the time at worst
    one = ProtocolParams()
    assert one.verifiers_per_job == 1 and one.lazy_holding == Fraction(1, 2)
    assert one.forced_error_rate_bps == 2_000
    assert one.lazy_gain_bps == 10_000 * 2 * E18 - 2_000 * 21 * E18 < 0
    with pytest.raises(ValueError, match="probability 1/2"):
        ProtocolParams(forced_error_rate_bps=900)  # 1 - 0.5 * 0.09 * 21 > 0
    # a seat drawing every segment (the demo: q = 12 on 12 segments) always holds it: h = 1
    assert ProtocolParams.demo().lazy_holding == 1
    # forced errors off: allowed (devnets, tests) but nothing catches laziness but whistleblowers
    assert ProtocolParams(forced_error_rate_bps=0).lazy_gain_bps > 0


def test_params_refuse_faking_that_pays_on_the_reference_job():
    """docs/SECURITY.md "Cheating is irrational" (a): on the reference job (M = 12 segments of
    0.25e18 each, reward 3e18) with V = 1 seat drawing q = 1 of the first 11 (P-39), a solver
    faking the last two segments together is caught only when the seat drew segment 10, with
    probability 1/11: 0.5 - (3 + S) / 11 e18 loses only above S = 2.5e18; S = 3e18 passes,
    S = 2e18 is refused (faking 2 of 12), and S = 0 too."""
    thin = {
        "verifiers_per_job": 1,
        "samples_per_job": 1,
        "reference_coalition_bps": 0,
        "jackpot": 0,
    }
    ProtocolParams(solver_stake=3 * E18, **thin)
    with pytest.raises(ValueError, match=r"faking does not lose: a solver faking 2 of 12") as exc:
        ProtocolParams(solver_stake=2 * E18, **thin)
    assert "VTT" in str(exc.value) and "reference job" in str(exc.value)
    with pytest.raises(ValueError, match=r"faking does not lose: a solver faking \d+ of 12"):
        ProtocolParams(solver_stake=0, **thin)
    # a costlier reference job (reward below its training cost) is refused at the defaults
    with pytest.raises(ValueError, match="faking does not lose: a solver faking 12 of 12"):
        ProtocolParams(reference_segment_cost=50 * E18, reference_reward=0)


def test_params_refuse_collusion_that_pays_at_the_stated_coalition_share():
    """(c): with one seat and the coalition holding half the draw, faking the last two segments
    is caught with probability (1/2) * (1/11); 0.5e18 saved against (3 + S) / 22 loses only
    above S = 8e18."""
    one = {
        "verifiers_per_job": 1,
        "samples_per_job": 1,
        "reference_coalition_bps": 5_000,
        "jackpot": 0,
    }
    ProtocolParams(solver_stake=9 * E18, **one)
    with pytest.raises(ValueError, match="collusion does not lose"):
        ProtocolParams(solver_stake=7 * E18, **one)


def test_default_and_demo_params_make_every_faking_lose():
    """The defaults (one seat drawing one segment, P-39) and the demo (V = 5, q = 12) pass; the
    defaults' worst strategy on the reference job is faking the last two segments together,
    caught only when the seat drew segment 10: 0.5e18 - (1/11) * 513e18, a deterrence at least
    as strong as the former defaults' (V = 3, q = 2, a 100e18 stake: 0.25e18 - P(1) * 103e18),
    alone and with a coalition holding a third of the seats."""
    from fractions import Fraction

    from veritrain.economics import worst_coalition, worst_fake

    for params in (ProtocolParams(), ProtocolParams.demo()):
        econ = params.reference_economics
        assert worst_fake(econ)[1] < 0
        assert worst_coalition(econ, Fraction(params.reference_coalition_bps, 10_000))[1] < 0
    now = ProtocolParams()
    c, gain = worst_fake(now.reference_economics)
    assert c == 2
    assert gain == Fraction(E18, 2) - Fraction(1, 11) * 513 * E18
    before = ProtocolParams(
        verifiers_per_job=3, samples_per_job=2, solver_stake=100 * E18, forced_error_rate_bps=3_000
    )
    c_before, gain_before = worst_fake(before.reference_economics)
    assert c_before == 1
    assert gain_before == Fraction(E18, 4) - (1 - Fraction(10 * 10 * 10, 12 * 12 * 12)) * 103 * E18
    assert gain <= gain_before
    phi = Fraction(now.reference_coalition_bps, 10_000)
    assert (
        worst_coalition(now.reference_economics, phi)[1]
        <= worst_coalition(before.reference_economics, phi)[1]
    )
