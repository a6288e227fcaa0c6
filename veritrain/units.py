"""Token amounts for people: the one way logs, tables and messages show wei.

Every amount on chain is an integer number of wei (1 VTT = 10**18 wei, the ERC-20's 18
decimals). People read VTT; `vtt` prints an amount as VTT with up to 4 decimals, exactly when
it has no more, and never rounds a non-zero amount to zero.

Run: not a script; ``from veritrain.units import vtt``; ``vtt(350 * 10**18) == "350 VTT"``.
"""

from __future__ import annotations

from decimal import Decimal

__all__ = ["WEI_PER_VTT", "vtt", "vtt_number"]

WEI_PER_VTT = 10**18
"""Wei in one VTT (the token's 18 decimals)."""


def vtt_number(wei: int, places: int = 4) -> str:
    """`wei` as a decimal VTT number with thousands separators: ``1,234.5``, ``0.0001``.

    Args:
        wei: the amount (wei, any sign).
        places: decimals kept at most (trailing zeros dropped); an amount smaller than the
            last place shows as ``<0.0001``.

    Returns:
        The number as text, without the unit.
    """
    value = Decimal(int(wei)) / WEI_PER_VTT
    quantum = Decimal(1).scaleb(-places)
    if wei != 0 and abs(value) < quantum:
        return f"{'-' if wei < 0 else ''}<{quantum}"
    text = f"{value.quantize(quantum):,f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def vtt(wei: int, places: int = 4) -> str:
    """`wei` as ``"<number> VTT"`` (`vtt_number`): ``vtt(5 * 10**17) == "0.5 VTT"``."""
    return f"{vtt_number(wei, places)} VTT"
