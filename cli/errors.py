"""One line per failure: the `veritrain` command group that turns every error into it.

Every command runs inside `OneLineErrorGroup.main`, which catches what a command or the
argument parser raises and prints ONE line on stderr, ``error: <what went wrong>``, then exits
non-zero (2 for a usage error, 130 for Ctrl-C, 1 otherwise). Our error classes, click's usage
errors, pydantic validation errors, web3/requests/httpx errors and OS errors (a taken port, a
missing file) each get a plain message; anything else gets its type name and message. Set
``VERITRAIN_DEBUG=1`` (or pass ``veritrain --debug ...``) to see the traceback instead.

Commands raise `CliError` for a refusal of their own (``raise CliError("job 7 does not exist")``).

Run: not a script; ``typer.Typer(cls=OneLineErrorGroup)`` in `cli.app`.
"""

from __future__ import annotations

import errno
import os
import re
import sys
from collections.abc import Sequence
from typing import Any

import typer
from typer._click import exceptions as click_exc
from typer.core import TyperGroup
from typer.exceptions import Abort

__all__ = [
    "CliError",
    "OneLineErrorGroup",
    "debug_enabled",
    "describe",
    "enable_debug",
    "require_balance",
]

DEBUG_ENV = "VERITRAIN_DEBUG"
_NEGATIVE = re.compile(r"^-(\d|\.\d|inf|nan)", re.IGNORECASE)
_debug = False


class CliError(click_exc.ClickException):
    """A command refused to go on; ``str(exc)`` is the one line shown (exit code 1)."""


def enable_debug() -> None:
    """Show tracebacks instead of one-line errors for the rest of this invocation."""
    global _debug
    _debug = True


def debug_enabled() -> bool:
    """True with ``--debug`` or a non-empty ``VERITRAIN_DEBUG`` other than ``0``."""
    return _debug or os.environ.get(DEBUG_ENV, "") not in ("", "0")


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0].replace("Value error, ", "") if lines else ""


def _usage_line(exc: click_exc.UsageError, argv: Sequence[str] = ()) -> str:
    message = _first_line(exc.format_message())
    name = getattr(exc, "option_name", "") or ""
    if isinstance(exc, click_exc.NoSuchOption):
        # click reads "-5" or "-inf" as options: name the negative value given instead
        negative = [a for a in argv if _NEGATIVE.match(a) and a.startswith(name)]
        if negative:
            message = f"negative value {negative[0]} refused: amounts, ids and counts are >= 0"
    cmd = exc.ctx.command_path if exc.ctx is not None else ""
    return f"{message} (see '{cmd} --help')" if cmd else message


def _pydantic_line(exc: Any) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ()))
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        parts.append(f"{loc}: {msg}" if loc else msg)
    return "; ".join(parts) or str(exc)


def describe(exc: BaseException, argv: Sequence[str] = ()) -> str:
    """The one line shown for an error (no trailing newline, no traceback).

    Args:
        exc: what a command raised.
        argv: the command line, to name a negative number click took for an option.

    Returns:
        A plain, single-line description.
    """
    from pydantic import ValidationError

    from chain.errors import ChainError
    from veritrain.errors import VeritrainError

    if isinstance(exc, click_exc.UsageError):
        return _usage_line(exc, argv)
    if isinstance(exc, click_exc.ClickException):
        return _first_line(exc.format_message())
    if isinstance(exc, ValidationError):
        return _pydantic_line(exc)
    if isinstance(exc, ChainError | VeritrainError):
        return _first_line(str(exc)) or type(exc).__name__
    if isinstance(exc, OSError) and exc.errno == errno.EADDRINUSE:
        return f"address already in use: {_first_line(str(exc))}"
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.strerror or type(exc).__name__}: {exc.filename}"
    text = _first_line(str(exc))
    name = type(exc).__name__
    hint = f" ({DEBUG_ENV}=1 shows the traceback)"
    return f"{name}: {text}{hint}" if text else f"{name}{hint}"


def _show(message: str) -> None:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)


class OneLineErrorGroup(TyperGroup):
    """The root command group: runs the command, turns any error into one stderr line.

    Used as ``typer.Typer(cls=OneLineErrorGroup)``; Typer's CliRunner and the console entry
    point both go through `main`, so tests see exactly what users see.
    """

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        """Run the command line; in standalone mode exit with its code after one error line.

        Raises:
            SystemExit: always in standalone mode (the exit code).
        """
        global _debug
        _debug = False
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        argv = list(args) if args is not None else sys.argv[1:]
        try:
            rv = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except click_exc.NoArgsIsHelpError as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except Abort:
            _show("aborted")
            sys.exit(130)
        except click_exc.ClickException as exc:
            _show(describe(exc, argv))
            sys.exit(exc.exit_code)
        except Exception as exc:
            if debug_enabled():
                raise
            _show(describe(exc))
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


def require_balance(client: Any, needed: int, what: str) -> None:
    """Refuse before any transaction when the wallet holds less than ``needed`` wei (naming
    `veritrain faucet` where the deployment's token is a VeriToken, whose faucet mints).

    Args:
        client: a signing `chain.ChainClient`.
        needed: the amount the command is about to spend (wei).
        what: what it is for, e.g. ``"to stake as solver"``.

    Raises:
        CliError: the balance is short, with the amounts in VTT.
    """
    from veritrain.units import vtt_number

    balance = client.token.balance_of()
    if balance < needed:
        hint = ""
        if client.deployment is not None and client.deployment.token_deployed:
            shortfall = vtt_number(needed - balance, 18).replace(",", "")  # as AMOUNT parses
            hint = f" (test tokens: `veritrain faucet {shortfall}`)"
        raise CliError(
            f"token balance {vtt_number(balance)} VTT of {client.address} is below the "
            f"{vtt_number(needed)} VTT {what}{hint}"
        )
