"""Gas of every protocol action, read from the receipts of a real run on Anvil.

Run: ``.venv/bin/python -m bench.gas_scenario`` (prints ``action gas new-words note`` lines, the
storage words each transaction created read with Anvil's prestate tracer, then the happy path's
floor, transactions x 21,000 + created words x 22,100, its total, and last the gas per counted
run contribution); used by ``bench.bench_protocol`` for its gas table.

Scenario (automine Anvil, time moved with ``evm_increaseTime``): deploy; stake every role;
register the model; the happy path with a forced error drawn (post, claim, commit with the
leaf-0 proof and the secret commitment, assign, post claims, every seat's seal and opening in
one call, each seat rejecting the forced claim with the true end it replayed, reveal the secret
with the claims' multiproof and finalize, which pays the reward, the fees and the jackpots
straight to the wallets and unlocks the reject bonds in the seats' verifier stake); a lazy
approval of the forced claim challenged by the whistleblower and slashed at finalize; a
cheating job (reject with a bond, finalize opening a dispute, committee draw, commit-reveal
votes, resolve with settlement, a winner's credit claim);
revenue paid into the model and claimed; unbond and withdraw; a one-round training run
(docs/RUNS.md) of 4 seats: openRun, each seat's contribution job from postContribution to its
finalize, proposeRound and finalizeRound, whose sum over the seats is the gas per counted run
contribution; last, on a second deployment that plants no forced error, the happy path without
one (every seat approves). The round is played by ``chain.scripted_round``
(the same calls the chain tests make). Merkle roots and hashes are real (computed with
``veritrain.merkle``) but the training itself is not needed: gas does not depend on it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from eth_utils.crypto import keccak

E18 = 10**18
MODEL_ID = b"\x01" * 32  # registered by the submitter first; the CLI uses keccak256(name)


HAPPY_PATH_TOTAL = "happy-path total (V=3, q=3)"
"""Row name of the happy path's gas: one honest job from post to the finalize that pays it,
the costlier of its two variants (a forced error drawn or not)."""
PER_CONTRIBUTION = "per counted run contribution"
"""Row name of a training run's gas per counted contribution: a one-round run of `RUN_SEATS`
seats (openRun, each seat's contribution job from postContribution to its finalize, proposeRound,
finalizeRound), summed and divided by the seats."""
RUN_SEATS = 4
"""Seats M of the scenario's run (as in the run demo's rounds and docs/RUNS.md's table)."""

FORCED = "forced error"
NO_FORCED = "no forced error"
VARIANTS = (FORCED, NO_FORCED)
"""The happy path's variants: each row of one is named ``"<action> (<variant>)"``. Each is
played on a fresh deployment by fresh accounts (the headline: the first job pays for every
word the protocol and its parties create once), then again by the same parties
(`later`)."""


def later(variant: str) -> str:
    """The variant played a second time by the same parties (a steady state)."""
    return f"{variant}, later job"


HAPPY_PATH_ACTIONS = (
    "postJob",
    "claimJob",
    "commitCheckpoints",
    "assignAndPostClaims",
    "revealSecretAndFinalize",
)
"""Happy-path actions sent once per job; the V sealed verdicts (every seat's seal and opening in
one ``revealVerdictsSigned``, docs/SECURITY.md P-40) are added to them. The solver assigns the
verifiers with its claims in one transaction (``assignAndPostClaims``, on the sample it replays
off chain; the lazy and cheating jobs send ``assignVerifiers`` and ``postClaims`` apart), and it
reveals its secret and finalizes in one transaction. Every party is honest: with a forced error
drawn, each seat rejects the forced sample with its true end (it replayed the segment) and wins the
jackpot; without one, each seat approves every sample. Nobody is slashed and nobody challenges."""


def row(action: str, variant: str) -> str:
    """The row name of a happy-path `action` in `variant` (e.g. ``"finalize (forced error)"``)."""
    return f"{action} ({variant})"


def variant_total(variant: str) -> str:
    """The row name of one variant's happy-path total."""
    return f"{HAPPY_PATH_TOTAL}, {variant}"


VERIFIERS_PER_JOB = 3
"""V of the scenario's deployment (`ProtocolParams.demo(verifiers_per_job=...)`)."""

HAPPY_PATH_TRANSACTIONS = len(HAPPY_PATH_ACTIONS) + 1
"""Transactions of the happy path: the single actions, then every seat's seal and its opening in
one ``revealVerdictsSigned`` sent by the solver that aggregates them (the nodes' default;
docs/SECURITY.md P-37, P-40). When a seat sealed itself the aggregator sends
``commitVerdictsFor`` and ``revealVerdictsFor`` instead, and a seat it leaves out sends its own
``commitVerdicts`` and ``revealVerdicts``: those rows come from the lazy and cheating jobs,
which seal seat by seat."""

INTRINSIC_GAS = 21_000
"""Gas every transaction pays before it runs (EIP-2028 calldata comes on top)."""

NEW_WORD_GAS = 22_100
"""Least gas of creating a storage word: SSTORE of a zero slot (20,000) plus its cold access
(2,100; EIP-2929)."""


def created_words(w3: Any, tx_hash: Any) -> int:
    """Storage words a mined transaction created (zero before, non-zero after), any contract.

    Read with the ``prestateTracer`` in diff mode (``debug_traceTransaction``, which Anvil
    serves as geth does): a slot in the post-state whose pre-state value is absent or zero.

    Args:
        w3: a Web3 connected to the node that mined the transaction.
        tx_hash: the transaction hash (bytes or 0x-hex).

    Returns:
        The number of words created.

    Raises:
        RuntimeError: the node does not serve the tracer.
    """
    tx = tx_hash if isinstance(tx_hash, str) else "0x" + bytes(tx_hash).hex()
    response = w3.provider.make_request(
        "debug_traceTransaction",
        [tx, {"tracer": "prestateTracer", "tracerConfig": {"diffMode": True}}],
    )
    if "result" not in response:
        raise RuntimeError(f"debug_traceTransaction({tx}): {response.get('error')}")
    pre, post = response["result"]["pre"], response["result"]["post"]
    created = 0
    for account, state in post.items():
        before = pre.get(account, {}).get("storage", {})
        for slot, value in state.get("storage", {}).items():
            if int(value, 16) != 0 and int(before.get(slot, "0x0"), 16) == 0:
                created += 1
    return created


def happy_path_total(rows: list[tuple[str, int, str]]) -> int:
    """The happy-path total (gas) of `run_gas_scenario`'s rows."""
    return next(gas for action, gas, _ in rows if action == HAPPY_PATH_TOTAL)


def per_contribution(rows: list[tuple[str, int, str]]) -> int:
    """A training run's gas per counted contribution (gas) of `run_gas_scenario`'s rows."""
    return next(gas for action, gas, _ in rows if action == PER_CONTRIBUTION)


def run_gas_scenario(
    *, happy_only: bool = False, new_words: dict[str, int] | None = None
) -> tuple[list[tuple[str, int, str]], float]:
    """Run the scenario.

    Args:
        happy_only: play only the two happy paths and the run's round (the Anvil regression
            test runs this part).
        new_words: when given, filled with the storage words each row's transaction created
            (`created_words`; the commit and reveal rows: one seat's), and under each variant's
            total row (`variant_total`) and `HAPPY_PATH_TOTAL` the happy path's sum (every
            seat's).

    Returns:
        ``(rows, commit_seconds)``: ``(action, gas used, note)`` rows in protocol order, and the
        wall time (s) of the honest job's `commitCheckpoints` transaction (sign, send, mined
        receipt) on automining Anvil. The row `variant_total(v)` sums variant v's happy path
        (`HAPPY_PATH_ACTIONS` and every seat's sealed verdicts), `HAPPY_PATH_TOTAL` is the
        costlier of the two, and `PER_CONTRIBUTION` a training run's gas per counted
        contribution.

    Raises:
        chain.errors.ChainError: a transaction failed (the scenario is out of sync with the
            contracts).
    """
    from chain.anvil import Anvil, dev_accounts
    from chain.client import ChainClient
    from chain.deploy import deploy_protocol
    from chain.manifest import ProtocolParams
    from chain.scripted_round import (
        assign_and_post_claims,
        commit,
        post_claims,
        reveal_secret,
        seal_and_reveal,
    )
    from veritrain.commitments import new_salt, vote_commitment
    from veritrain.enums import Role
    from veritrain.merkle import checkpoint_tree

    rows: list[tuple[str, int, str]] = []
    commit_seconds: list[float] = []
    sealed: dict[int, int] = {}  # job id -> gas of every seat's commitVerdicts + revealVerdicts
    sealed_words: dict[int, int] = {}  # job id -> words created by every seat's seal + reveal

    # N/k = q segments: every seat draws all of them, so the union of the seats' own draws
    # (P-27) is exactly q = 3 samples and the gas does not depend on the randomness block. A
    # job with more segments posts claims on up to V * q samples (Forge: Gas_Test).
    n, k = 75, 25
    hashes = [os.urandom(32) for _ in range(n // k + 1)]

    def params(forced_error_rate_bps: int) -> Any:
        return ProtocolParams.demo(
            verifiers_per_job=VERIFIERS_PER_JOB,
            samples_per_job=3,
            committee_size=3,
            forced_error_rate_bps=forced_error_rate_bps,
        )

    with Anvil(block_time=None) as anvil:
        accts = dev_accounts(10)
        node = ChainClient(anvil.rpc_url, accts[0])  # reads the traces

        def rec(action: str, receipt: Any, note: str = "") -> Any:
            rows.append((action, int(receipt["gasUsed"]), note))
            if new_words is not None:
                new_words[action] = created_words(node.w3, receipt["transactionHash"])
            return receipt

        def deployment(
            forced_error_rate_bps: int, record: bool
        ) -> tuple[dict[int, ChainClient], Any]:
            """A deployment with every role staked and the model registered (its rows recorded
            when `record`): the clients by dev account index, and its params."""
            p = params(forced_error_rate_bps)
            dep = deploy_protocol(ChainClient(anvil.rpc_url, accts[0]), p)
            c = {i: ChainClient(anvil.rpc_url, accts[i], dep) for i in range(10)}
            for cl in c.values():
                cl.token.faucet(10_000 * E18)
                cl.token.approve(dep.addresses.stake_manager, 2**256 - 1)
                cl.token.approve(dep.addresses.job_manager, 2**256 - 1)
            keep = rec if record else (lambda action, receipt, note="": receipt)
            keep(
                "stake (solver)", c[1].stakes.stake(Role.Solver, 300 * E18), "first stake of a role"
            )
            for i in range(2, 8):
                r = c[i].stakes.stake(Role.Verifier, 200 * E18)
            keep("stake (verifier)", r, "joins the active verifier set")
            keep("stake (whistleblower)", c[9].stakes.stake(Role.Whistleblower, 100 * E18))
            # the jobs start from the model's seed state, so that the honest ones mint
            registered = c[0].shares.register_model(
                MODEL_ID,
                architecture=keccak(text="bench architecture"),
                family=keccak(text="bench family"),
                compute_per_step=1,
                seed_state=hashes[0],
            )
            keep("registerModel", registered, "once per model, with its commitments")
            return c, p

        def run_to_verdicts(
            c: dict[int, ChainClient],
            p: Any,
            approve_forced: bool,
            cheat: bool,
            suffix: str,
            post: Callable[[], tuple[str, Any, int]] | None = None,
            batched: bool = False,
        ) -> tuple[int, list[Any], Any]:
            """Post, claim, commit, assign, post claims, seal and reveal the verdicts. A seat
            rejects the forced sample with its true end unless `approve_forced` (then the first
            seat that drew it approves it: lazy); with `cheat`, the next seat also rejects a
            sample of its own draw (a cheat). Rows are named ``"<action><suffix>"``. `post`,
            when given, posts the job instead of ``postJob`` and returns (action, receipt, job
            id). With `batched`, the solver submits every seat's signed seal and its opening in
            one ``revealVerdictsSigned`` (P-40)."""
            submitter, solver = c[0], c[1]
            by_addr = {cl.address: cl for cl in c.values()}
            if post is None:
                receipt = submitter.jobs.post_job(
                    MODEL_ID,
                    os.urandom(32),
                    hashes[0],
                    n,
                    k,
                    50 * E18,
                    "data:application/json;base64,e30=",
                )
                action, job_id = "postJob", submitter.job_id_from(receipt)
            else:
                action, receipt, job_id = post()
            rec(f"{action}{suffix}", receipt, "escrows reward + V * fee")
            rec(f"claimJob{suffix}", solver.jobs.claim_job(job_id), "locks solver stake")
            receipts: dict[str, Any] = {}
            t0 = time.perf_counter()
            url = "http://127.0.0.1:8701/jobs/1"
            secret = commit(solver, job_id, hashes, k, url, receipts=receipts)
            commit_seconds.append(time.perf_counter() - t0)
            rec(
                f"commitCheckpoints{suffix}",
                receipts["commitCheckpoints"],
                "root + leaf-0 proof + URL + secret commitment",
            )
            anvil.mine(2)
            if batched:
                # the nodes' default: the assignment and the claims in one transaction
                claims = assign_and_post_claims(solver, job_id, hashes, secret, receipts=receipts)
                rec(
                    f"assignAndPostClaims{suffix}",
                    receipts["assignAndPostClaims"],
                    f"V={p.verifiers_per_job}, q={p.samples_per_job}; the claims' start/end hashes",
                )
            else:
                rec(
                    f"assignVerifiers{suffix}",
                    solver.jobs.assign_verifiers(job_id),
                    f"V={p.verifiers_per_job}, q={p.samples_per_job}",
                )
                claims = post_claims(solver, job_id, hashes, secret, receipts=receipts)
                rec(
                    f"postClaims{suffix}",
                    receipts["postClaims"],
                    f"q={p.samples_per_job} start/end hashes",
                )
            f = claims.forced_sample
            # Each seat only rules on its own draw (P-27): seats that drew the forced sample
            # first; the cheat is a sample of the next seat's own draw.
            masks = {
                a: solver.jobs.sample_mask_of(job_id, a)
                for a in solver.jobs.get_assignment(job_id).verifiers
            }
            order = sorted(masks, key=lambda a: f is None or (masks[a] >> f) & 1 == 0)
            assigned = [by_addr[a] for a in order]
            lazy = assigned[0].address if approve_forced else None
            if approve_forced and (f is None or (masks[assigned[0].address] >> f) & 1 == 0):
                raise RuntimeError("no seat drew the forced sample")
            own = masks[assigned[1].address]
            bad = (
                next(j for j in range(own.bit_length()) if (own >> j) & 1 and j != f)
                if cheat
                else -1
            )

            def approve(v: str, j: int) -> bool:
                if cheat and v == assigned[1].address and j == bad:
                    return False
                return v == lazy or j != f

            seal_and_reveal(
                job_id,
                by_addr,
                approve,
                claims=claims,
                receipts=receipts,
                aggregator=solver if batched else None,
                one_shot=batched,
            )
            if batched:
                rec(
                    f"revealVerdictsSigned{suffix}",
                    receipts["revealVerdictsSigned"],
                    f"{p.verifiers_per_job} seats' EIP-712 seals and openings, sent by the solver",
                )
            else:
                rec(f"commitVerdicts{suffix}", receipts["commitVerdicts"], "sealed verdicts")
            every_seat = [
                r
                for key in ("commitVerdicts (every seat)", "revealVerdicts (every seat)")
                for r in receipts[key]
            ]
            sealed[job_id] = sum(int(r["gasUsed"]) for r in every_seat)
            if new_words is not None:
                sealed_words[job_id] = sum(
                    created_words(node.w3, r["transactionHash"]) for r in every_seat
                )
            if "revealVerdicts" in receipts:
                rec(f"revealVerdicts (all approve){suffix}", receipts["revealVerdicts"])
            if "revealVerdicts (reject)" in receipts:
                rec(
                    f"revealVerdicts (reject){suffix}",
                    receipts["revealVerdicts (reject)"],
                    "records verdicts, locks the reject bonds from stake",
                )
            return job_id, assigned, (secret, claims)

        def reveal(c: dict[int, ChainClient], job_id: int, secret_claims: Any, suffix: str) -> None:
            secret, claims = secret_claims
            rec(
                f"revealSecret{suffix}",
                reveal_secret(c[1], job_id, hashes, k, secret, claims),
                "secret + one multiproof of the 2q claims",
            )

        def happy_path(
            c: dict[int, ChainClient],
            p: Any,
            variant: str,
            post: Callable[[], tuple[str, Any, int]] | None = None,
        ) -> int:
            """One honest job, postJob (or `post`) to the finalize that pays the solver, and its
            total row; returns the total (gas)."""
            suffix = f" ({variant})"
            first = len(rows)
            job_id, assigned, sc = run_to_verdicts(c, p, False, False, suffix, post, batched=True)
            drawn = sc[1].forced_sample is not None
            if variant.startswith(FORCED) != drawn:
                raise RuntimeError(f"the {variant} job drew a forced error: {drawn}")
            secret, claims = sc
            note = "secret + claims multiproof; restakes the reward, fees" + (
                ", jackpots" if drawn else ""
            )
            reward = int(c[1].jobs.get_job(job_id).reward)
            before = c[1].stakes.stake_of(c[1].address, Role.Solver).staked
            staked = {
                s.address: s.stakes.stake_of(s.address, Role.Verifier).staked for s in assigned
            }
            credits = {seat.address: seat.escrow.credit_of(seat.address) for seat in assigned}
            rec(
                row("revealSecretAndFinalize", variant),
                reveal_secret(c[1], job_id, hashes, k, secret, claims, and_finalize=True),
                note,
            )
            paid = c[1].stakes.stake_of(c[1].address, Role.Solver).staked - before
            if paid != reward or c[1].escrow.credit_of(c[1].address) != 0:
                raise RuntimeError(f"finalize restaked {paid} wei of the solver's {reward} reward")
            for seat in assigned:  # fees and jackpots are restaked too, no credit left
                if seat.escrow.credit_of(seat.address) != credits[seat.address]:
                    raise RuntimeError(f"finalize left seat {seat.address} a credit")
                if seat.stakes.stake_of(seat.address, Role.Verifier).staked <= staked[seat.address]:
                    raise RuntimeError(f"finalize restaked nothing for seat {seat.address}")
            if c[1].shares.slot_of(MODEL_ID).job_id == job_id:
                # the first job from the model's head holds its slot: its shares are minted when
                # its final state extends the lineage (docs/SECURITY.md P-18; not in the total)
                proof = checkpoint_tree(hashes, k).proof(len(hashes) - 1)
                rec(
                    row("extendLineage", variant),
                    c[1].shares.extend_lineage(MODEL_ID, hashes[-1], proof),
                    "the slot job's final state: the new head; mints its shares",
                )
            by_action = {action: gas for action, gas, _ in rows[first:]}
            posted = rows[first][0]  # the job's post, whichever action `run_to_verdicts` took
            actions = [posted if a == "postJob" else row(a, variant) for a in HAPPY_PATH_ACTIONS]
            total = sum(by_action[a] for a in actions) + sealed[job_id]
            rows.append((variant_total(variant), total, "sum of the actions above, every seat's"))
            if new_words is not None:
                new_words[variant_total(variant)] = (
                    sum(new_words[a] for a in actions) + sealed_words[job_id]
                )
            return total

        def run_round(c: dict[int, ChainClient], p: Any) -> None:
            """One round of a training run (docs/RUNS.md) with `RUN_SEATS` seats, each a
            contribution job played like the happy path (the run's spec a `data:` URI
            published once at openRun, as `veritrain run open` sends it; a contribution carries
            none), then the round's claim,
            unchallenged, made final; rows for each action and `PER_CONTRIBUTION`: the run's
            every transaction (its opening included: a one-round run) over its counted
            contributions."""
            from veritrain.diloco import RunSpec
            from veritrain.presets import preset
            from veritrain.spec import REPRO_ARITH

            owner = c[0]
            inner = preset("shakespeare-char", REPRO_ARITH, total_steps=n, checkpoint_interval=k)
            run = RunSpec(inner=inner, seats=RUN_SEATS, rounds=1)
            opened = rec(
                "openRun",
                owner.runs.open_run(
                    MODEL_ID, run.run_hash(), hashes[0], RUN_SEATS, 1, n, run.to_data_uri()
                ),
                f"M={RUN_SEATS} seats, once per run",
            )
            run_id = owner.runs.run_id_from(opened)
            total = int(opened["gasUsed"])
            # every seat is posted first, as `veritrain run post` does: the round's registration
            # closes when the last seat registers (or `registration_window` after it opened,
            # which the seats' verification rounds, played one after the other, would pass)
            posted = []
            for seat in range(RUN_SEATS):
                receipt = owner.runs.post_contribution(run_id, seat, hashes[0], k, 50 * E18)
                posted.append((receipt, owner.runs.job_id_from(receipt)))
            for seat, (receipt, job_id) in enumerate(posted):

                def post(receipt: Any = receipt, job_id: int = job_id) -> tuple[str, Any, int]:
                    return "postContribution", receipt, job_id

                total += happy_path(c, p, f"{FORCED}, run seat {seat}", post)
            proposed = rec(
                "proposeRound",
                owner.runs.propose_round(run_id, os.urandom(32), (1 << RUN_SEATS) - 1),
                f"M={RUN_SEATS} accepted; its bond into the Escrow",
            )
            anvil.increase_time(p.claim_challenge_window + 1)
            anvil.mine()
            finalized = rec(
                "finalizeRound",
                owner.runs.finalize_round(run_id),
                f"M={RUN_SEATS} counted: mints their shares",
            )
            total += int(proposed["gasUsed"]) + int(finalized["gasUsed"])
            rows.append(
                (PER_CONTRIBUTION, total // RUN_SEATS, f"everything the run cost / {RUN_SEATS}")
            )

        c, p = deployment(10_000, record=True)  # demo: every job carries a forced error
        happy_path(c, p, FORCED)
        happy_path(c, p, later(FORCED))
        if not happy_only:
            submitter, solver, whistle = c[0], c[1], c[9]
            by_addr = {cl.address: cl for cl in c.values()}
            # A lazy verifier approves the forced claim; the whistleblower challenges it.
            suffix = " (lazy approver)"
            job1, assigned, sc1 = run_to_verdicts(c, p, True, False, suffix)
            rec(
                "challengeApproval",
                whistle.jobs.challenge_approval(job1, sc1[1].forced_sample, assigned[0].address),
                "posts a challenge bond",
            )
            reveal(c, job1, sc1, suffix)
            rec(
                f"finalize{suffix}",
                solver.jobs.finalize(job1),
                "slashes the approver, pays the challenger and the jackpots, mints shares",
            )
            rec("fundJackpot", submitter.escrow.fund_jackpot(10 * E18))

            # Cheating job: a verifier rejects a cheating sample as well as the forced claim.
            suffix = " (cheat)"
            job2, _assigned, sc2 = run_to_verdicts(c, p, False, True, suffix)
            reveal(c, job2, sc2, suffix)
            receipt = rec(
                "finalize (opens dispute)", solver.jobs.finalize(job2), "calls the adjudicator"
            )
            dispute = solver.dispute_id_from(receipt)
            if dispute is None:
                raise RuntimeError("finalize did not open a dispute")
            anvil.mine(2)
            rec(
                "drawCommittee",
                solver.committee.draw_committee(dispute),
                f"K={p.committee_size}",
            )
            committee = [by_addr[a] for a in solver.committee.committee_of(dispute)]
            salts = {}
            for m in committee:
                salts[m.address] = new_salt()
                r = m.committee.commit_vote(
                    dispute, vote_commitment(dispute, m.address, False, salts[m.address])
                )
            rec("commitVote", r, "commit-reveal")
            for m in committee:
                r = m.committee.reveal_vote(dispute, False, salts[m.address])
            rec("revealVote", r, "last reveal")
            rec(
                "resolve (segment invalid)",
                solver.committee.resolve(dispute),
                "settles: slashes solver + approver, credits winners",
            )
            winner = next(cl for cl in c.values() if cl.escrow.credit_of(cl.address) > 0)
            rec("claimCredit", winner.escrow.claim_credit(), "pull payment: a dispute's winnings")
            rec(
                "payRevenue",
                submitter.shares.pay_revenue(MODEL_ID, 100 * E18),
                "pro-rata accumulator",
            )
            rec("claimRevenue", solver.shares.claim_revenue(MODEL_ID))
            rec("requestUnbond", whistle.stakes.request_unbond(Role.Whistleblower, 50 * E18))
            anvil.increase_time(p.unbonding_delay + 1)
            anvil.mine()
            rec("withdraw", whistle.stakes.withdraw(Role.Whistleblower))
        run_round(c, p)  # in the happy-only part too: test_gas_bound bounds it

        # The same honest job on a deployment that never plants a forced error.
        c0, p0 = deployment(0, record=False)
        happy_path(c0, p0, NO_FORCED)
        happy_path(c0, p0, later(NO_FORCED))
        totals = {v: next(g for a, g, _ in rows if a == variant_total(v)) for v in VARIANTS}
        worst = max(VARIANTS, key=lambda v: totals[v])
        rows.append((HAPPY_PATH_TOTAL, totals[worst], f"the costlier variant: {worst}"))
        if new_words is not None:
            new_words[HAPPY_PATH_TOTAL] = new_words[variant_total(worst)]
    return rows, commit_seconds[0]


if __name__ == "__main__":
    words: dict[str, int] = {}
    scenario_rows = run_gas_scenario(new_words=words)[0]
    print(f"{'action':<58}{'gas':>10}{'new words':>11}  note")
    for action, gas, note in scenario_rows:
        if ", run seat " in action and ", run seat 0)" not in action:
            continue  # the other seats' jobs cost what seat 0's does; they are in the total
        if action not in (HAPPY_PATH_TOTAL, PER_CONTRIBUTION):
            print(f"{action:<58}{gas:>10,}{words[action]:>11}  {note}")
    created = words[HAPPY_PATH_TOTAL]
    floor = HAPPY_PATH_TRANSACTIONS * INTRINSIC_GAS + created * NEW_WORD_GAS
    print(
        f"happy-path floor (V=3, q=3): {HAPPY_PATH_TRANSACTIONS} transactions x {INTRINSIC_GAS:,}"
        f" + {created} new storage words x {NEW_WORD_GAS:,} = {floor:,} gas"
    )
    print(f"{HAPPY_PATH_TOTAL}: {happy_path_total(scenario_rows)} gas")
    print(f"{PER_CONTRIBUTION}: {per_contribution(scenario_rows)} gas")
