"""`veritrain.units`: wei shown as VTT, exactly, at every size a uint256 can hold."""

from __future__ import annotations

import pytest

from veritrain.units import WEI_PER_VTT, vtt, vtt_number


@pytest.mark.parametrize(
    ("wei", "text"),
    [
        (0, "0"),
        (350 * WEI_PER_VTT, "350"),
        (5 * 10**17, "0.5"),
        (1_234_500 * 10**15, "1,234.5"),
        (10**14, "0.0001"),
        (1, "<0.0001"),
        (-1, "-<0.0001"),
        (-25 * 10**17, "-2.5"),
        # beyond decimal's default 28 digits: still exact, never a float's 1e30
        (10**30 * WEI_PER_VTT, "1,000,000,000,000,000,000,000,000,000,000"),
        (10**30 * WEI_PER_VTT + 10**14, "1,000,000,000,000,000,000,000,000,000,000.0001"),
        (
            2**256 - 1,
            "115,792,089,237,316,195,423,570,985,008,687,907,853,269,984,665,640,564,039,457.584",
        ),
    ],
)
def test_vtt_number_is_exact_at_every_size(wei: int, text: str) -> None:
    assert vtt_number(wei) == text
    assert vtt(wei) == f"{text} VTT"


def test_vtt_number_truncates_toward_zero_and_never_shows_more_than_it_has() -> None:
    # 1.99999 VTT at 4 places: shown as 1.9999 (never rounded up to an amount not held)
    assert vtt_number(199_999 * 10**13) == "1.9999"
    assert vtt_number(-199_999 * 10**13) == "-1.9999"
    assert vtt_number(123_456_789, places=18) == "0.000000000123456789"


# Anvil's dev account 1, checksummed as EIP-55 gives it.
_DEV1 = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"


def test_checksum_address_accepts_the_checksummed_and_the_single_case_forms() -> None:
    from veritrain.hexutil import checksum_address

    assert checksum_address(_DEV1) == _DEV1
    assert checksum_address(_DEV1.lower()) == _DEV1
    assert checksum_address("0x" + _DEV1[2:].upper()) == _DEV1


@pytest.mark.parametrize(
    "bad",
    [
        _DEV1[:-1] + "9",  # one digit mistyped: mixed case, the checksum fails
        _DEV1.replace("C", "c", 1),  # the case of one letter flipped
        _DEV1[:-1],  # 39 digits
        "0x" + "g" * 40,
        _DEV1[2:],  # no 0x
    ],
)
def test_checksum_address_refuses_a_bad_checksum_or_a_non_address(bad: str) -> None:
    from veritrain.hexutil import checksum_address

    with pytest.raises(ValueError, match="address"):
        checksum_address(bad)
