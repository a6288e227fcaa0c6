"""EIP-712 seals: a verifier's signed verdict commitment that anyone may submit for it.

A seat seals its verdicts with `VerificationRound.commitVerdicts` (one transaction per seat), or
signs `Seal(bytes32 submissionId,bytes32 commitment)` in the round's EIP-712 domain and hands the
signature to an aggregator (the job's solver, `solver.aggregation`), which submits every seat's
seal in one `commitVerdictsFor` transaction; the reveals follow the same way
(`revealVerdictsFor`, no signature: the seal binds the seat, its ends and its secret salt). The
contract skips a seat that sealed or revealed itself, so a seat never depends on the aggregator
(docs/SECURITY.md P-37). When every seat's seal and opening are in hand before any seal is on
chain, one `revealVerdictsSigned` carries them all (`SignedReveal`, P-40): a seat opens its seal
to the aggregator only once it holds every other seat's signed seal, and a seat that signs two
seals for one submission is slashed on the proof of both (`proveEquivocation`).

Typed data (EIP-712, https://eips.ethereum.org/EIPS/eip-712):

- domain: name ``"veritrain VerificationRound"``, version ``"1"``, the chain id and the round's
  address (OpenZeppelin's `EIP712`);
- message: ``Seal(bytes32 submissionId, bytes32 commitment)``, `commitment` =
  ``veritrain.commitments.verdict_commitment(job_id, verifier, ends, salt)``.

Run: not a script; ``sign_seal(account, chain_id, round_address, sid, commitment)``.
"""

from __future__ import annotations

from dataclasses import dataclass

from eth_account import Account
from eth_account.messages import SignableMessage, encode_typed_data
from eth_account.signers.local import LocalAccount
from eth_utils.address import to_checksum_address

__all__ = [
    "SEAL_DOMAIN_NAME",
    "SEAL_DOMAIN_VERSION",
    "SignedReveal",
    "SignedSeal",
    "seal_message",
    "seal_signer",
    "sign_seal",
]

SEAL_DOMAIN_NAME = "veritrain VerificationRound"
SEAL_DOMAIN_VERSION = "1"
_SEAL_TYPES = {
    "Seal": [{"name": "submissionId", "type": "bytes32"}, {"name": "commitment", "type": "bytes32"}]
}


@dataclass(frozen=True)
class SignedSeal:
    """One seat's seal for `commitVerdictsFor`.

    Attributes:
        verifier: the seat's checksummed address.
        commitment: its verdict commitment (32 bytes).
        signature: its 65-byte ECDSA signature (r, s, v) of the seal's EIP-712 digest.
    """

    verifier: str
    commitment: bytes
    signature: bytes


@dataclass(frozen=True)
class SignedReveal:
    """One seat's entry of ``revealVerdictsSigned``: its seal, opened, with the seal's signature
    (the contract recomputes the commitment from the ends and salt and checks the signature over
    it, so nothing of the seal is stored on chain).

    Attributes:
        verifier: the seat's checksummed address.
        ends: its sealed end state hashes, one per sample (32 bytes each).
        salt: its sealed salt (32 bytes).
        signature: its 65-byte ECDSA signature of the seal's EIP-712 digest.
    """

    verifier: str
    ends: tuple[bytes, ...]
    salt: bytes
    signature: bytes


def seal_message(
    chain_id: int, round_address: str, submission_id: bytes, commitment: bytes
) -> SignableMessage:
    """The EIP-712 message of a seal (what `sign_seal` signs and `sealDigest` hashes).

    Args:
        chain_id: the chain's id.
        round_address: the `VerificationRound` contract.
        submission_id: the submission (32 bytes).
        commitment: the verdict commitment (32 bytes).

    Raises:
        ValueError: `submission_id` or `commitment` is not 32 bytes.
    """
    for name, value in (("submission id", submission_id), ("commitment", commitment)):
        if len(bytes(value)) != 32:
            raise ValueError(f"{name} must be 32 bytes, got {len(bytes(value))}")
    return encode_typed_data(
        domain_data={
            "name": SEAL_DOMAIN_NAME,
            "version": SEAL_DOMAIN_VERSION,
            "chainId": int(chain_id),
            "verifyingContract": to_checksum_address(round_address),
        },
        message_types=_SEAL_TYPES,
        message_data={"submissionId": bytes(submission_id), "commitment": bytes(commitment)},
    )


def sign_seal(
    account: LocalAccount,
    chain_id: int,
    round_address: str,
    submission_id: bytes,
    commitment: bytes,
) -> SignedSeal:
    """Sign a seal with a local account (the key never leaves the process).

    Args:
        account: the seat's signing account.
        chain_id: the chain's id.
        round_address: the `VerificationRound` contract.
        submission_id: the submission (32 bytes).
        commitment: the verdict commitment (32 bytes).

    Returns:
        The `SignedSeal` (65-byte signature).

    Raises:
        ValueError: `submission_id` or `commitment` is not 32 bytes.
    """
    signed = account.sign_message(seal_message(chain_id, round_address, submission_id, commitment))
    return SignedSeal(
        to_checksum_address(account.address), bytes(commitment), bytes(signed.signature)
    )


def seal_signer(
    chain_id: int, round_address: str, submission_id: bytes, commitment: bytes, signature: bytes
) -> str | None:
    """The address that signed a seal (EOA signatures), or None for a malformed signature.

    An aggregator checks each seal with this before it puts it in a batch, so one seat's bad
    signature cannot make the whole `commitVerdictsFor` revert.

    Args:
        chain_id: the chain's id.
        round_address: the `VerificationRound` contract.
        submission_id: the submission (32 bytes).
        commitment: the verdict commitment (32 bytes).
        signature: 65 bytes (r, s, v).

    Raises:
        ValueError: `submission_id` or `commitment` is not 32 bytes.
    """
    message = seal_message(chain_id, round_address, submission_id, commitment)
    if len(bytes(signature)) != 65:
        return None
    try:
        return to_checksum_address(Account.recover_message(message, signature=bytes(signature)))
    except Exception:  # eth_keys raises several types for a malformed (r, s, v): all mean "invalid"
        return None
