"""Commands that other packages add to ``graphrecall``, through one declared extension
point: the ``graphrecall.commands`` entry-point group. Each entry point names a function
``add_commands(subparsers)``. The benchmarks (``graphrecall_bench``) come in this way, so
the product imports none of their code.

An extension declares each command with :class:`LazyCommand`: a name, a line of help and
the module that implements it. Nothing of that module is imported until the command runs,
so ``graphrecall --help`` stays fast and a plain install (no extras) can list the command;
running it without the extra its code needs prints one line naming the extra (exit 2).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

GROUP = "graphrecall.commands"
EXIT_MISSING_EXTRA = 2


@dataclass(frozen=True)
class LazyCommand:
    name: str
    help: str
    module: str  # defines add_arguments(parser) and run(args) -> int
    extra: str  # the optional dependencies its code needs: pip install 'graphrecall[extra]'
    needs: tuple[str, ...]  # the modules of that extra it cannot run without

    def parser(self, prog: str) -> argparse.ArgumentParser:
        """The command's full parser (imports its module)."""
        from graphrecall.cli.options import add_global_options

        full = argparse.ArgumentParser(prog=prog, description=self.help)
        importlib.import_module(self.module).add_arguments(full)
        add_global_options(full, top_default=argparse.SUPPRESS)
        return full


class MissingExtra(RuntimeError):
    pass


def add_extensions(sub: Any) -> None:
    for point in entry_points(group=GROUP):
        point.load()(sub)


def add_lazy(sub: Any, command: LazyCommand) -> None:
    """Declares ``command`` under ``sub``; its own options are read when it runs."""
    declared = sub.add_parser(command.name, help=command.help, add_help=False)
    declared.set_defaults(func=_Runner(command, declared.prog), lazy=True)


class _Runner:
    def __init__(self, command: LazyCommand, prog: str) -> None:
        self.command = command
        self.prog = prog

    def __call__(self, args: argparse.Namespace, rest: list[str]) -> int:
        command = self.command
        missing = [m for m in command.needs if importlib.util.find_spec(m) is None]
        if missing:
            raise MissingExtra(
                f"'{self.prog}' needs the '{command.extra}' extra ({', '.join(missing)} is not"
                f" installed): pip install 'graphrecall[{command.extra}]'"
            )
        full = command.parser(self.prog)
        full.parse_args(rest, namespace=args)
        result: int = importlib.import_module(command.module).run(args)
        return result
