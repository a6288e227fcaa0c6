"""A node's flags from a TOML file: ``veritrain solver run --config node.toml``.

The file holds top-level keys named like the command's long flags, with dashes or underscores
(``rpc-url``, ``data_dir``, ``auto-stake``; ``json`` for ``--json``). Its values become the
command's defaults (click's ``default_map``), so precedence is: a flag on the command line,
then an option's environment variable, then the file, then the built-in default. A flag given
several times (``--mirror``) takes a list of strings; a token amount (``stake``,
``min-reward``) a string such as ``"1000"`` or ``"5wei"`` or a number of VTT.

Refused in one line, before anything connects: an unreadable file, a file that is not TOML, a
key that names no flag of the command, a value of the wrong type (``port = "x"``, a table), and
any secret: private keys and passwords never go in this file (they come from ``--keystore``
with ``--password-env``, or ``--key-env``). A sample is docs/node.toml.example; TOML is
https://toml.io/en/v1.0.0 (read with the standard library's `tomllib`).

Run: not a script; ``config: ConfigOpt = None`` as a node command's parameter.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperOption

__all__ = ["SECRET_KEYS", "ConfigOpt", "apply_node_config", "read_node_config"]

SECRET_KEYS = frozenset({"key", "private-key", "privkey", "password", "mnemonic", "secret"})
"""Keys refused in a config file: a secret never sits in plain text next to the flags."""

_SKIPPED = frozenset({"config", "help"})


def _long_names(param: TyperOption) -> list[str]:
    """The file keys of an option: its ``--long`` names without the dashes (not ``--no-x``)."""
    return [opt[2:] for opt in param.opts if opt.startswith("--")]


def _what(param: TyperOption) -> str:
    """What the file must give for the option, in words (the checks of `_checked`)."""
    descriptor = getattr(param, "type_descriptor", None)
    annotation = getattr(descriptor, "annotation", None)
    parser = getattr(getattr(descriptor, "parameter_info", None), "parser", None)
    if param.multiple:
        return "a list of strings"
    if param.count:
        return "an integer"
    if param.is_flag or annotation is bool:
        return "true or false"
    if parser is not None:
        return "a string or a number"
    if annotation is int:
        return "an integer"
    if annotation is float:
        return "a number"
    return "a string"


def _checked(param: TyperOption, value: Any) -> Any:
    """`value` as the option takes it, or None when its TOML type is wrong for the option."""
    what = _what(param)
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    if what == "a list of strings":
        items = [value] if isinstance(value, str) else value
        ok = isinstance(items, list) and all(isinstance(v, str) for v in items)
        return items if ok else None
    if what == "true or false":
        return value if isinstance(value, bool) else None
    if what == "an integer":
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if what == "a number":
        return value if is_number else None
    if what == "a string or a number":  # token amounts: the parser reads text as VTT
        return str(value) if is_number else value if isinstance(value, str) else None
    return value if isinstance(value, str) else None


def _toml_type(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a float", str: "a string"}
    names |= {list: "an array", dict: "a table"}
    return names.get(type(value), type(value).__name__)


def read_node_config(path: Path, command: Any) -> dict[str, Any]:
    """Read a node config file and check it against the command's options.

    Args:
        path: the TOML file.
        command: the (Typer) click command whose long flags name the keys.

    Returns:
        ``{parameter name: value}`` for click's ``default_map`` (token amounts as text).

    Raises:
        typer.BadParameter: the file cannot be read or is not TOML, a key names no flag of the
            command or a secret, or a value has the wrong type (one line each).
    """
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except OSError as exc:
        raise typer.BadParameter(f"cannot read {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise typer.BadParameter(f"{path} is not valid TOML: {exc}") from None
    options: dict[str, TyperOption] = {}
    for param in command.params:
        if isinstance(param, TyperOption) and param.name not in _SKIPPED:
            for name in _long_names(param):
                options[name] = param
    values: dict[str, Any] = {}
    for key, value in data.items():
        name = key.replace("_", "-")
        if name in SECRET_KEYS:
            raise typer.BadParameter(
                f"{path}: '{key}' refused: private keys and passwords never go in a config "
                "file (use --keystore with --password-env, or --key-env)"
            )
        param = options.get(name)
        if param is None or param.name is None:
            raise typer.BadParameter(
                f"{path}: unknown key '{key}' (keys are this command's long flags: "
                f"{', '.join(sorted(options))})"
            )
        checked = _checked(param, value)
        if checked is None:
            raise typer.BadParameter(
                f"{path}: '{key}' must be {_what(param)}, got {_toml_type(value)}"
            )
        values[param.name] = checked
    return values


def apply_node_config(ctx: typer.Context, param: typer.CallbackParam, value: Path | None) -> Any:
    """``--config`` callback (eager): put the file's values in ``ctx.default_map``, under the
    flags given on the command line.

    Raises:
        typer.BadParameter: as `read_node_config`.
    """
    if value is None or ctx.resilient_parsing:
        return value
    ctx.default_map = {**(ctx.default_map or {}), **read_node_config(value, ctx.command)}
    return value


ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config",
        is_eager=True,
        callback=apply_node_config,
        metavar="FILE",
        help="TOML file of this command's flags (keys named like the long flags; a flag on the "
        "command line overrides it; never a private key). Sample: docs/node.toml.example.",
    ),
]
