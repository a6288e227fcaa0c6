"""``veritrain --help`` loads neither torch nor web3: the command tree imports only the CLI's
option declarations, and each command imports what it needs when it runs (a `--help` took
4 s when torch or web3 came with it, about 0.5 s without)."""

from __future__ import annotations

import json
import subprocess
import sys


def _modules_after(code: str) -> set[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True
    ).stdout
    return set(json.loads(out.strip().splitlines()[-1]))


def test_the_command_tree_imports_neither_torch_nor_web3() -> None:
    loaded = _modules_after("import cli.app")
    assert "torch" not in loaded
    assert "web3" not in loaded
    assert "cli.app" in loaded


def test_help_of_every_group_imports_neither_torch_nor_web3() -> None:
    code = (
        "from typer.main import get_command\n"
        "import cli.app\n"
        "command = get_command(cli.app.app)\n"
        "for name in ('solver', 'verifier', 'whistleblower', 'job', 'run', 'model'):\n"
        "    try:\n"
        "        command.main([name, '--help'], standalone_mode=False)\n"
        "    except SystemExit:\n"
        "        pass\n"
    )
    loaded = _modules_after(code)
    assert "torch" not in loaded and "web3" not in loaded
