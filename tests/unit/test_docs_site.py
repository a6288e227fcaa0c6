"""The README stays a newcomer's page and the documentation site stays whole.

README.md is at most 250 lines (the rest lives in docs/, built by MkDocs from mkdocs.yml);
every docs/*.md page is in mkdocs.yml's nav and every nav entry is a page; every relative link
of README.md reaches a file; and every `veritrain` command of the README's shell blocks is a
real command, called only with flags it has. The site's own build (`mkdocs build --strict`,
broken links between pages included) runs in scripts/test.sh, not here.

Run: ``.venv/bin/python -m pytest tests/unit/test_docs_site.py -q``.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import typer
import yaml

from cli.app import app

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DOCS = REPO / "docs"
README_MAX_LINES = 250

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
"""A Markdown link or image: the target is group 1."""

SHELL_SEPARATORS = {"&&", "||", ";", "&", "|", "do", "done", "then", "fi"}


def _nav_pages(node: Any) -> list[str]:
    """Every page path (str ending in .md) named anywhere in a MkDocs nav tree."""
    if isinstance(node, str):
        return [node] if node.endswith(".md") else []
    if isinstance(node, list):
        return [page for item in node for page in _nav_pages(item)]
    if isinstance(node, dict):
        return [page for value in node.values() for page in _nav_pages(value)]
    return []


def _shell_blocks(markdown: str) -> list[str]:
    """The lines of every ```bash fenced block, in order."""
    lines, inside = [], False
    for line in markdown.splitlines():
        if line.startswith("```"):
            inside = not inside and line.strip() in ("```bash", "```sh")
            continue
        if inside:
            lines.append(line)
    return lines


def _veritrain_calls(lines: list[str]) -> list[list[str]]:
    """Each `veritrain ...` call of shell lines, as its words up to a separator or redirect."""
    calls: list[list[str]] = []
    for line in lines:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True  # words split at blanks and at ; & | < >
        words = list(lexer)
        current: list[str] | None = None
        for word in words:
            if word in SHELL_SEPARATORS or word.startswith(">"):
                current = None
            elif word == "veritrain" and current is None:
                current = []
                calls.append(current)
            elif current is not None:
                current.append(word)
    return calls


def test_readme_is_at_most_250_lines() -> None:
    count = len(README.read_text().splitlines())
    assert count <= README_MAX_LINES, f"README.md has {count} lines; move text to docs/"


def test_readme_keeps_the_test_command_ci_runs() -> None:
    assert "bash scripts/test.sh" in README.read_text()


def test_every_docs_page_is_in_the_nav_and_every_nav_entry_exists() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    assert config["docs_dir"] == "docs"
    nav = _nav_pages(config["nav"])
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(set(nav)) == pages, {
        "not in nav": sorted(set(pages) - set(nav)),
        "not a page": sorted(set(nav) - set(pages)),
    }
    assert len(nav) == len(set(nav)), "a page is listed twice in the nav"


def test_every_relative_link_of_the_readme_reaches_a_file() -> None:
    targets = LINK.findall(README.read_text())
    relative = [t for t in targets if not re.match(r"^[a-z]+:", t) and not t.startswith("#")]
    assert relative, "the README links no page"
    missing = [t for t in relative if not (REPO / t.split("#", 1)[0]).is_file()]
    assert not missing, missing


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {t.split("#", 1)[0] for t in LINK.findall(README.read_text())}
    pages = {f"docs/{p.relative_to(DOCS).as_posix()}" for p in DOCS.rglob("*.md")}
    assert not pages - linked, sorted(pages - linked)


def test_the_readme_tour_uses_real_commands_and_flags() -> None:
    root = typer.main.get_command(app)
    calls = _veritrain_calls(_shell_blocks(README.read_text()))
    assert len(calls) >= 8, calls  # the tour: devnet, stake, solver, verifier, post, shares, ...
    for call in calls:
        command: Any = root  # Typer's own Click classes: a group is what has `commands`
        words = list(call)
        while hasattr(command, "commands") and words and words[0] in command.commands:
            command = command.commands[words.pop(0)]
        assert not hasattr(command, "commands"), f"veritrain {' '.join(call)}: not a command"
        flags = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
        unknown = [w.split("=", 1)[0] for w in words if w.startswith("--")]
        unknown = [w for w in unknown if w not in flags]
        assert not unknown, f"veritrain {' '.join(call)}: no such flag {unknown}"
