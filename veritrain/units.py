"""Token amounts and times for people: the one way logs, tables, pages and messages show wei
and Unix seconds.

Every amount on chain is an integer number of wei (1 VTT = 10**18 wei, the ERC-20's 18
decimals). People read VTT; `vtt` prints an amount as VTT with up to 4 decimals, exactly when
it has no more, cut toward zero (never more than the amount) and never a non-zero amount
shown as zero.

Times on chain are Unix seconds (block timestamps, deadlines); people read them as UTC
date and time (`utc_time`).

Run: not a script; ``from veritrain.units import vtt``; ``vtt(350 * 10**18) == "350 VTT"``.
"""

from __future__ import annotations

import datetime as _dt

__all__ = ["WEI_PER_VTT", "utc_time", "vtt", "vtt_number"]

WEI_PER_VTT = 10**18
"""Wei in one VTT (the token's 18 decimals)."""


def vtt_number(wei: int, places: int = 4) -> str:
    """`wei` as a decimal VTT number with thousands separators: ``1,234.5``, ``0.0001``.

    Integer arithmetic, so exact at every size up to 2**256 - 1 wei (no float, no decimal
    context to overflow). The amount is cut toward zero at `places` decimals, never rounded
    up: a message never shows more than is held.

    Args:
        wei: the amount (wei, any sign).
        places: decimals kept at most, 0 to 18 (trailing zeros dropped); a non-zero amount
            smaller than the last place shows as ``<0.0001``.

    Returns:
        The number as text, without the unit.

    Raises:
        ValueError: `places` outside 0..18.
    """
    if not 0 <= places <= 18:
        raise ValueError(f"places must be 0..18, got {places}")
    wei = int(wei)
    sign = "-" if wei < 0 else ""
    kept = abs(wei) // 10 ** (18 - places)  # the amount in units of the last place shown
    if wei != 0 and kept == 0:
        return f"{sign}<{'0.' + '0' * (places - 1) if places else ''}1"
    whole, fraction = divmod(kept, 10**places)
    text = f"{whole:,}"
    if fraction:
        text += "." + f"{fraction:0{places}d}".rstrip("0")
    return sign + text


def vtt(wei: int, places: int = 4) -> str:
    """`wei` as ``"<number> VTT"`` (`vtt_number`): ``vtt(5 * 10**17) == "0.5 VTT"``."""
    return f"{vtt_number(wei, places)} VTT"


def utc_time(timestamp: int) -> str:
    """A Unix time (seconds) as ``YYYY-MM-DD HH:MM:SS`` in UTC (without the zone's name).

    Raises:
        ValueError: the time is outside what a calendar date can hold (years 1 to 9999).
    """
    try:
        return _dt.datetime.fromtimestamp(int(timestamp), _dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
    except (OverflowError, OSError) as exc:
        raise ValueError(f"time {timestamp} is outside the calendar") from exc
