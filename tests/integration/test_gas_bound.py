"""The gas of taking part, bounded on a real chain: the happy path of one honest job (V = 3,
q = 3, a forced error drawn or not) played by `bench.gas_scenario` on Anvil costs at most
`HAPPY_PATH_MAX_GAS` in total, and a training run's round costs at most `PER_CONTRIBUTION_MAX_GAS`
per counted contribution. Gas is deterministic for a given scenario, so a regression fails
here (the same bound is asserted in Forge by ``Gas_Test.test_happyPathTotal_*``).

Run: ``.venv/bin/python -m pytest tests/integration/test_gas_bound.py -m anvil``.
"""

from __future__ import annotations

from bench.gas_scenario import (
    FORCED,
    HAPPY_PATH_ACTIONS,
    HAPPY_PATH_TOTAL,
    HAPPY_PATH_TRANSACTIONS,
    INTRINSIC_GAS,
    NEW_WORD_GAS,
    NO_FORCED,
    PER_CONTRIBUTION,
    RUN_SEATS,
    VARIANTS,
    happy_path_total,
    later,
    per_contribution,
    row,
    run_gas_scenario,
    variant_total,
)

HAPPY_PATH_MAX_GAS = 992_000
"""Most gas the scenario's happy path may cost (docs/GAS.md: the figure reached,
rounded up; the goal of 1.0 M is met with a forced error since the round keeps one storage word,
1,015,874 before; 1,046,349 before a job's end restaked its earnings in one transfer instead of
paying four wallets, the StakeManager's books became its token balance and the lineage window
was read with ``openWindow``; 1,073,574 before a seat's first reject bond was locked with its seat;
1,088,792 before each fact went once in the log and an approving seat's ends left
the signed reveal's calldata; 1,097,228 before the client sent EIP-2930 access lists (about
8k of the happy path: a client that stops sending them fails here); 1,117,516 before a job's
end stopped writing its seats and its submission's word and the signed reveal its seal events;
1,145,786 before a seal's ECDSA signature was tried before its signer's code;
1,171,273 before the checkpoint root took initHash's word;
1,189,076 before the ShareRegistry's minters became immutables;
1,197,786 before the JobManager's round became an immutable;
1,215,477 before the claims hash took the secret commitment's word;
1,221,124 before one event per batch stake lock and unlock; 1,223,937
before the seats' sample masks rode in `VerifiersAssigned`; 1,229,413
before the JobManager's `VerdictsSubmitted` carried an approve mask;
1,238,263 before the verifier draw returned the seats' ids; 1,905,653 since the
verdict batch checks each rejecting seat's bond cover,
docs/SECURITY.md P-38; 1,793,453 since a submission id is its (job, solver) pair, the seats have
no length word, the spec hash lives in the JobPosted event and a contribution has no flag word;
1,649,034 since every seat's seal and opening go in one ``revealVerdictsSigned``, P-40; 1,556,923
since the finalize pays the reward, the fees, the jackpots and the bonds to the wallets, P-41;
1,546,485 since the secret reveal proves the claims with one multiproof; 1,522,805 since the job
keeps its post kind; 1,493,990 since the solver assigns with its claims in one transaction;
1,474,984 since a catching seat's fee, bond and jackpot share one transfer; 1,427,882 since the
round keeps a 96-bit tag of the forced true end and the seats are verifier ids; 1,354,711 since a
seat's end of its first rejected sample is a 40-bit tag in its seat's word; 1,316,205 since a
seat's reject bonds are locked from its verifier stake; 1,309,588 since the round's reveal event
no longer repeats the verdicts; 1,273,644 since the job counter and a model's free slot keep live
words; 1,238,263 since the sample and the seats' ids share a word and a reveal records every seat
in one call, docs/SECURITY.md "Gas cuts")."""

PER_CONTRIBUTION_MAX_GAS = 1_500_000
"""Most gas a one-round training run of `RUN_SEATS` seats may cost per counted contribution
(its opening, every seat's job from postContribution to its finalize, the round's claim and its
finalization, summed and divided by the seats; docs/RUNS.md). Unlike the happy path's, it moves
with the randomness: which of the six verifiers each seat job draws decides how many first
payments create a word (about 17k gas each, at most six in the run). Measured 2,316,365 to
2,324,267 over eight runs with every seat sealing and revealing itself and the secret revealed
apart from the finalize, 2,063,364 with the verdicts batched (docs/SECURITY.md P-37) and
`revealSecretAndFinalize`, 2,072,667 with the batch's bond check (P-38), 1,933,720 with packed
submission ids, seats without a length word, the spec hash in the event only and no contribution
flag word, 1,789,065 with every seat's seal and opening in one call (P-40), 1,765,591 with the
finalize paying the wallets (P-41), 1,755,011 with the claims' multiproof, 1,732,440 with the
post kind in the job, 1,703,655 with the assignment and the claims in one transaction, 1,686,497
with the run's spec URI published once at openRun, 1,622,530 with the run's bookkeeping packed,
1,603,593 with a catching seat's fee, bond and jackpot in one transfer, 1,548,403 with the
forced true end's tag, the seats as verifier ids and the proposal reading each job's status word,
1,474,855 (1,474,855 to 1,475,076 over four runs) with each seat's end of its first rejected
sample a tag in its seat's word, 1,392,764 with the sample and the seats' ids in one word and
every seat's verdicts recorded in one call, 1,296,581 with the checkpoint root in initHash's word,
1,288,014 with each seal's ECDSA signature recovered first (docs/SECURITY.md "Gas cuts").
The bound is the goal itself, 1.5 M: it leaves about 210k gas of room, more than the first
payments of the six verifiers would cost if none of them had a balance word yet."""

HAPPY_PATH_MAX_NEW_WORDS = 11
"""Most storage words the happy path may create (docs/GAS.md: each costs at least
22,100 gas, so a layout change that adds one fails here even when the gas bound has room): the
11 it creates since the round keeps one word (12 since a job's end stopped writing, 13 since the
checkpoint root takes initHash's word, 14 since the claims hash takes
the secret commitment's word, 15 since the sample and
the seats' ids share a word, 16 since the job counter and a model's free slot keep live
words)."""


def test_happy_path_total_within_bound() -> None:
    """Every happy-path action ran in both variants, each variant's sum stays within the bound
    (gas), and the storage words they create (traced on Anvil) stay within theirs."""
    words: dict[str, int] = {}
    rows, _commit_seconds = run_gas_scenario(happy_only=True, new_words=words)
    gas = {action: used for action, used, _note in rows}
    for variant in VARIANTS:
        actions = [row(a, variant) for a in HAPPY_PATH_ACTIONS]
        assert set(actions) <= set(gas), variant
        total = gas[variant_total(variant)]
        assert total > sum(gas[a] for a in actions)  # the sealed verdicts are counted on top
        assert total <= HAPPY_PATH_MAX_GAS, f"{variant}: {total:,} gas > {HAPPY_PATH_MAX_GAS:,}"
        created = words[variant_total(variant)]
        assert created >= sum(words[a] for a in actions)  # every seat's verdicts counted
        # every seat's seal and opening in one transaction: no seal is stored, and a seat's end of
        # its one reject (its true end of the forced sample) is a tag in its seat's word
        assert words[row("revealVerdictsSigned", variant)] == 0
        assert created <= HAPPY_PATH_MAX_NEW_WORDS, f"{variant}: creates {created} words"
        # the floor of this path (transactions and created words alone) is below its cost
        assert HAPPY_PATH_TRANSACTIONS * INTRINSIC_GAS + created * NEW_WORD_GAS < total
    # the solver sends every seat's seal and opening (one transaction, P-37, P-40), never a seat
    for variant in VARIANTS:
        assert row("revealVerdictsSigned", variant) in gas
        for single in ("commitVerdicts", "commitVerdictsFor", "revealVerdicts (reject)"):
            assert row(single, variant) not in gas
    # a reveal of three rejects locks three bonds from stake: it costs more than three approvals
    assert gas[row("revealVerdictsSigned", FORCED)] > gas[row("revealVerdictsSigned", NO_FORCED)]
    assert "challengeApproval" not in gas  # nobody challenges on the happy path
    # finalize restakes the reward, the fees and the jackpots (the scenario checks the solver's
    # stake, every seat's stake and every seat's zero credit after it): nobody claims
    assert not any(action.startswith("claimCredit (") for action in gas)
    assert happy_path_total(rows) == max(gas[variant_total(v)] for v in VARIANTS)
    # the same parties' next job creates no more words (the job counter and the model's slot are
    # live words, docs/SECURITY.md "Gas cuts": the first job creates no extra) and costs less
    for variant in VARIANTS:
        assert words[variant_total(later(variant))] <= words[variant_total(variant)]
        assert gas[variant_total(later(variant))] < gas[variant_total(variant)]
    assert rows[-1][0] == HAPPY_PATH_TOTAL
    # a run's round: every seat's contribution job, then the claim and its finalization
    for seat in range(RUN_SEATS):
        assert row("postContribution", f"{FORCED}, run seat {seat}") in gas
    assert {"openRun", "proposeRound", "finalizeRound"} <= set(gas)
    seat_job = gas[variant_total(f"{FORCED}, run seat 0")]
    run_total = gas["openRun"] + gas["proposeRound"] + gas["finalizeRound"]
    run_total += sum(gas[variant_total(f"{FORCED}, run seat {j}")] for j in range(RUN_SEATS))
    assert per_contribution(rows) == gas[PER_CONTRIBUTION] == run_total // RUN_SEATS
    assert per_contribution(rows) > seat_job  # the round's own calls come on top of its job
    assert per_contribution(rows) <= PER_CONTRIBUTION_MAX_GAS, f"{per_contribution(rows):,} gas"
