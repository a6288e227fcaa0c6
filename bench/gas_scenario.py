"""Gas of every protocol action, read from the receipts of a real run on Anvil.

Run: ``.venv/bin/python -m bench.gas_scenario`` (prints ``action gas`` lines); used by
``bench.bench_protocol`` for its gas table.

Scenario (automine Anvil, time moved with ``evm_increaseTime``): deploy; stake every role; an
honest job (post, claim, commit, assign, verdicts, finalize, claim credit); a cheating job
(reject with a bond, whistleblower challenge, finalize opening a dispute, committee draw,
commit-reveal votes, resolve with settlement); revenue paid into the model and claimed; unbond
and withdraw. Merkle roots and hashes are real (computed with ``veritrain.merkle``) but the
training itself is not needed: gas does not depend on it.
"""

from __future__ import annotations

import os
import time
from typing import Any

E18 = 10**18
MODEL_ID = b"\x01" * 32  # any bytes32 names a model; the CLI uses keccak256(name)


def run_gas_scenario() -> tuple[list[tuple[str, int, str]], float]:
    """Run the scenario.

    Returns:
        ``(rows, commit_seconds)``: ``(action, gas used, note)`` rows in protocol order, and the
        wall time (s) of the honest job's `commitCheckpoints` transaction (sign, send, mined
        receipt) on automining Anvil.

    Raises:
        chain.errors.ChainError: a transaction failed (the scenario is out of sync with the
            contracts).
    """
    from chain.anvil import Anvil, dev_accounts
    from chain.client import ChainClient, new_salt, vote_hash
    from chain.deploy import ProtocolParams, deploy_protocol
    from chain.types import Role
    from veritrain.merkle import checkpoint_tree

    rows: list[tuple[str, int, str]] = []
    commit_seconds: list[float] = []

    def rec(action: str, receipt: Any, note: str = "") -> Any:
        rows.append((action, int(receipt["gasUsed"]), note))
        return receipt

    params = ProtocolParams.demo(verifiers_per_job=3, samples_per_job=3, committee_size=3)
    with Anvil(block_time=None) as anvil:
        accts = dev_accounts(10)
        admin = ChainClient(anvil.rpc_url, accts[0])
        dep = deploy_protocol(admin, params)
        c = {i: ChainClient(anvil.rpc_url, accts[i], dep) for i in range(10)}
        submitter, solver, whistle = c[0], c[1], c[9]
        verifiers = [c[i] for i in range(2, 8)]
        by_addr = {cl.address: cl for cl in c.values()}

        for cl in c.values():
            cl.faucet(10_000 * E18)
            cl.approve(dep.addresses.stake_manager, 2**256 - 1)
            cl.approve(dep.addresses.job_manager, 2**256 - 1)
        rec("stake (solver)", solver.stake(Role.Solver, 300 * E18), "first stake of a role")
        for v in verifiers:
            r = v.stake(Role.Verifier, 200 * E18)
        rec("stake (verifier)", r, "joins the active verifier set")
        rec("stake (whistleblower)", whistle.stake(Role.Whistleblower, 100 * E18))

        n, k = 300, 25
        hashes = [os.urandom(32) for _ in range(n // k + 1)]
        root = checkpoint_tree(hashes, k).root

        def post() -> tuple[int, Any]:
            receipt = submitter.post_job(
                MODEL_ID, os.urandom(32), n, k, 50 * E18, "data:application/json;base64,e30="
            )
            return submitter.job_id_from(receipt), receipt

        def run_to_verdicts(reject_first: bool, note_prefix: str) -> tuple[int, list[Any]]:
            job_id, receipt = post()
            rec(f"postJob{note_prefix}", receipt, "escrows reward + V * fee")
            rec(f"claimJob{note_prefix}", solver.claim_job(job_id), "locks solver stake")
            t0 = time.perf_counter()
            receipt = solver.commit_checkpoints(job_id, root, "http://127.0.0.1:8701/jobs/1")
            commit_seconds.append(time.perf_counter() - t0)
            rec(f"commitCheckpoints{note_prefix}", receipt, "Merkle root + URL")
            anvil.mine(2)
            rec(
                f"assignVerifiers{note_prefix}",
                solver.assign_verifiers(job_id),
                f"V={params.verifiers_per_job}, q={params.samples_per_job}",
            )
            assigned = [by_addr[a] for a in solver.get_assignment(job_id).verifiers]
            q = params.samples_per_job
            for i, v in enumerate(assigned):
                approvals = [True] * q
                if reject_first and i == 0:
                    approvals[0] = False
                    rec(
                        "submitVerdicts (1 reject)",
                        v.submit_verdicts(job_id, approvals),
                        "posts a challenge bond",
                    )
                else:
                    r = v.submit_verdicts(job_id, approvals)
            rec(f"submitVerdicts (all approve){note_prefix}", r, f"q={q} verdicts in one tx")
            return job_id, assigned

        # Honest job.
        job1, _ = run_to_verdicts(False, "")
        anvil.increase_time(params.challenge_window + 1)
        anvil.mine()
        rec("finalize (Finalized)", solver.finalize(job1), "pays credits, mints shares")
        rec("claimCredit", solver.claim_credit(), "pull payment")

        # Cheating job: a verifier rejects sample 0, the whistleblower challenges an approval.
        job2, assigned = run_to_verdicts(True, " (job 2)")
        approver = assigned[1]
        rec(
            "challengeApproval",
            whistle.challenge_approval(job2, 0, approver.address),
            "posts a challenge bond",
        )
        anvil.increase_time(params.challenge_window + 1)
        anvil.mine()
        receipt = rec("finalize (opens dispute)", solver.finalize(job2), "calls the adjudicator")
        dispute = solver.dispute_id_from(receipt)
        if dispute is None:
            raise RuntimeError("finalize did not open a dispute")
        anvil.mine(2)
        rec("drawCommittee", solver.draw_committee(dispute), f"K={params.committee_size}")
        committee = [by_addr[a] for a in solver.committee_of(dispute)]
        salts = {}
        for m in committee:
            salts[m.address] = new_salt()
            r = m.commit_vote(dispute, vote_hash(dispute, m.address, False, salts[m.address]))
        rec("commitVote", r, "commit-reveal")
        for m in committee:
            r = m.reveal_vote(dispute, False, salts[m.address])
        rec("revealVote", r, "last reveal")
        rec(
            "resolve (segment invalid)",
            solver.resolve(dispute),
            "settles: slashes solver + approver, credits winners",
        )

        rec("payRevenue", submitter.pay_revenue(MODEL_ID, 100 * E18), "pro-rata accumulator")
        rec("claimRevenue", solver.claim_revenue(MODEL_ID))
        rec("requestUnbond", whistle.request_unbond(Role.Whistleblower, 50 * E18))
        anvil.increase_time(params.unbonding_delay + 1)
        anvil.mine()
        rec("withdraw", whistle.withdraw(Role.Whistleblower))
    return rows, commit_seconds[0]


if __name__ == "__main__":
    for action, gas, note in run_gas_scenario()[0]:
        print(f"{action:<40}{gas:>10,}  {note}")
