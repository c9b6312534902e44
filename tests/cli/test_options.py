"""The global options: ``--db`` before or after any subcommand, nested ones included,
and a ``--db`` that graphrecall cannot serve refused in one line with nothing created."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from graphrecall.cli import EXIT_CONFIG, build_parser, main
from tests.cli.test_help import parsers


def test_every_command_takes_the_global_options() -> None:
    missing = [
        " ".join(path)
        for path, parser in parsers(build_parser())
        if "--db" not in parser._option_string_actions
    ]
    assert not missing, missing


@pytest.mark.parametrize(
    "command",
    [
        ["keys", "create", "--name", "laptop"],
        ["keys", "list"],
        ["spaces", "list"],
        ["tasks", "retry"],
        ["webhooks", "show"],
        ["stats"],
        ["migrate"],
    ],
)
def test_db_after_any_subcommand(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    after = tmp_path / "after.db"
    assert main([*command, "--db", str(after)]) == 0, capsys.readouterr().err
    assert after.exists()
    before = tmp_path / "before.db"
    assert main(["--db", str(before), *command]) == 0
    assert before.exists()


@pytest.mark.parametrize(
    "url", ["mysql://u:p@host/app", "sqlite://relative.db", "mongodb+srv://h/x", "http://h/x"]
)
def test_a_kind_of_database_not_served_is_refused(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["serve", "--db", url, "--port", "1"]) == EXIT_CONFIG
    err = capsys.readouterr().err.strip()
    scheme = url.split(":", 1)[0]
    assert len(err.splitlines()) == 1 and f"'{scheme}'" in err
    assert "sqlite:///PATH" in err and "postgresql://" in err
    assert os.listdir(tmp_path) == []  # no file named after the URL, no first key


def test_a_missing_folder_is_refused_and_not_made(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wanted = tmp_path / "no" / "such" / "x.db"
    assert main(["keys", "list", "--db", str(wanted)]) == EXIT_CONFIG
    err = capsys.readouterr().err
    assert f"database folder {wanted.parent} does not exist" in err
    assert not (tmp_path / "no").exists()


def test_the_default_data_folder_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GRAPHRECALL_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert main(["keys", "list"]) == 0, capsys.readouterr().err
    assert (tmp_path / "data" / "graphrecall" / "graphrecall.db").exists()


def test_a_refused_postgresql_connection_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["keys", "list", "--db", "postgresql://u@127.0.0.1:9/x"]) == EXIT_CONFIG
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "nothing listens there" in err and "graphrecall postgres start" in err
