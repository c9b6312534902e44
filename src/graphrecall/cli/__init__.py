"""The graphrecall command: serve, run workers, manage API keys and spaces, import,
search and export; benchmarks when the bench extension is installed.

Rooms: ``server`` (serve, worker, mcp, migrate), ``admin`` (keys, webhooks, spaces,
tasks), ``projects`` (list, delete one whole, erased), ``everyday`` (import, search,
context, stats, export), ``postgres`` (a local PostgreSQL with pgvector, no Docker),
``options`` (the global options, on every parser), ``extensions`` (commands other
packages add, such as ``bench``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from graphrecall.cli import admin, everyday, postgres, projects, server
from graphrecall.cli.extensions import MissingExtra, add_extensions
from graphrecall.cli.options import add_global_options
from graphrecall.cli.server import cmd_serve, cmd_worker
from graphrecall.config import SettingsError, load_settings

# Start-up problems a user fixes outside graphrecall (a setting, a path, a port, a missing
# extra): one line and this exit code, never a traceback.
EXIT_CONFIG = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="graphrecall", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    server.add_commands(sub)
    admin.add_commands(sub)
    projects.add_commands(sub)
    everyday.add_commands(sub)
    postgres.add_commands(sub)
    add_extensions(sub)
    add_global_options(parser)  # last: it reaches every subcommand declared above
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from graphrecall.runtime import StartupError

    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    lazy = getattr(args, "lazy", False)
    if rest and not lazy:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    try:
        result: int = args.func(args, rest) if lazy else args.func(args)
    except (SettingsError, StartupError, MissingExtra) as exc:
        # the user fixes these outside graphrecall
        print(f"graphrecall: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:  # Ctrl-C while starting (the models can take seconds)
        return 130
    except Exception as exc:  # a CLI user gets a message, not a traceback
        if _debug():
            raise
        print(f"graphrecall: {exc}", file=sys.stderr)
        return 1
    return result


def _debug() -> bool:
    try:
        return load_settings().debug
    except SettingsError:
        return False


__all__ = ["EXIT_CONFIG", "build_parser", "cmd_serve", "cmd_worker", "main"]
