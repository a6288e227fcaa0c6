"""The gas of taking part, bounded on a real chain: the happy path of one job (V = 3, q = 3, a
forced error settled from the jackpot pool) played by `bench.gas_scenario` on Anvil costs at most
`HAPPY_PATH_MAX_GAS` in total. Gas is deterministic for a given scenario, so a regression fails
here (the same bound is asserted in Forge by ``Gas_Test.test_happyPathTotal_withinBound_gas``).

Run: ``.venv/bin/python -m pytest tests/integration/test_gas_bound.py -m anvil``.
"""

from __future__ import annotations

from bench.gas_scenario import (
    HAPPY_PATH_SINGLE,
    HAPPY_PATH_TOTAL,
    HAPPY_PATH_TRANSACTIONS,
    INTRINSIC_GAS,
    NEW_WORD_GAS,
    happy_path_total,
    run_gas_scenario,
)

HAPPY_PATH_MAX_GAS = 2_270_000
"""Most gas the scenario's happy path may cost (README "Gas": the figure reached, rounded up)."""

HAPPY_PATH_MAX_NEW_WORDS = 42
"""Most storage words the happy path may create (README "Gas": each costs at least 22,100 gas,
so a layout change that adds one fails here even when the gas bound has room)."""


def test_happy_path_total_within_bound() -> None:
    """Every happy-path action ran, their sum stays within the bound (gas), and the storage words
    they create (traced on Anvil) stay within theirs."""
    words: dict[str, int] = {}
    rows, _commit_seconds = run_gas_scenario(happy_only=True, new_words=words)
    actions = {action for action, _gas, _note in rows}
    assert set(HAPPY_PATH_SINGLE) <= actions
    assert {"commitVerdicts", "revealVerdicts (reject)"} <= actions
    total = happy_path_total(rows)
    parts = sum(gas for action, gas, _note in rows if action in HAPPY_PATH_SINGLE)
    assert total > parts  # the sealed verdicts are counted on top
    assert total <= HAPPY_PATH_MAX_GAS, f"happy path costs {total:,} gas > {HAPPY_PATH_MAX_GAS:,}"
    created = words[HAPPY_PATH_TOTAL]
    assert created > sum(words[a] for a in HAPPY_PATH_SINGLE)  # every seat's seal is counted
    assert words["commitVerdicts"] == 1  # a seal is one word
    assert words["claimCredit"] == 0  # a pull payment clears a word, creates none
    assert created <= HAPPY_PATH_MAX_NEW_WORDS, f"happy path creates {created} words"
    # the floor of this path (transactions and created words alone) is below what it costs
    assert HAPPY_PATH_TRANSACTIONS * INTRINSIC_GAS + created * NEW_WORD_GAS < total
