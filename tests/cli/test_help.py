"""The command's help reads as plain text and explains every option."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphrecall.cli import build_parser, main


def parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ("graphrecall",)
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser, an extension's lazily declared commands with their full parsers."""
    yield path, parser
    runner = parser._defaults.get("func")
    if parser._defaults.get("lazy"):
        yield path, runner.command.parser(" ".join(path))  # type: ignore[union-attr]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from parsers(child, (*path, name))


def test_every_option_has_plain_help() -> None:
    problems = []
    for path, parser in parsers(build_parser()):
        texts = [parser.description or "", parser.format_help()]
        if any("`" in text for text in texts):
            problems.append(f"{' '.join(path)}: reStructuredText backquotes in its help")
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
                continue
            if not action.help or action.help == argparse.SUPPRESS:
                name = "/".join(action.option_strings) or action.dest
                problems.append(f"{' '.join(path)} {name}: no help")
    assert not problems, "\n".join(problems)


def test_keys_list_shows_each_key_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "keys.db")
    assert main(["--db", db, "keys", "create", "--name", "laptop"]) == 0
    secret = capsys.readouterr().out.strip()
    assert main(["--db", db, "keys", "list"]) == 0
    listed = capsys.readouterr().out
    assert "name=laptop" in listed and secret[:8] in listed and secret not in listed
