"""The options every ``graphrecall`` command takes, and the one rule that puts them on
every parser: before the subcommand or after it, nested subcommands included
(``graphrecall --db x.db keys list`` and ``graphrecall keys list --db x.db`` mean the same).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from graphrecall.config import DB_HELP, Settings, load_settings

if TYPE_CHECKING:
    from graphrecall.store import Store

DB_DEFAULT = " (default: $GRAPHRECALL_DB or the user data folder)"
# The command-specific settings a subcommand may take as options (serve's --host, ...).
_SETTINGS = ("db", "host", "port", "worker_threads")


def add_global_options(parser: argparse.ArgumentParser, top_default: Any = None) -> None:
    """Adds the global options to ``parser`` and to every subcommand below it. On a
    subcommand they default to 'not given', so a value given before the subcommand
    stands unless the subcommand's own position gives another."""
    below = ((child, argparse.SUPPRESS) for child in subcommands(parser))
    for where, default in ((parser, top_default), *below):
        if "--db" not in where._option_string_actions:  # a command may declare its own
            where.add_argument("--db", help=DB_HELP + DB_DEFAULT, default=default)


def subcommands(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """Every parser below ``parser``, depth first, each once (aliases share a parser)."""
    seen: set[int] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                if id(child) not in seen:
                    seen.add(id(child))
                    yield child
                    yield from subcommands(child)


def settings(args: argparse.Namespace) -> Settings:
    overrides = {k: v for k, v in vars(args).items() if k in _SETTINGS and v is not None}
    return load_settings(**overrides)


def open_store(args: argparse.Namespace) -> Store:
    from graphrecall.runtime import open_database

    return open_database(settings(args))
