"""The graphrecall command's start-up errors: one line naming the path, variable or port
and the fix, exit code 2, and nothing printed as serving."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphrecall import cli


def serve(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["serve", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_port_in_use_is_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        code, out, err = serve(capsys, "--db", str(tmp_path / "x.db"), "--port", str(port))
    assert code == 2
    assert f"port {port} on 127.0.0.1 is in use" in err and "GRAPHRECALL_PORT" in err
    assert "serving" not in out and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("variable", "value", "named"),
    [
        ("GRAPHRECALL_PORT", "abc", "GRAPHRECALL_PORT"),
        ("GRAPHRECALL_API_KEY", "x", "GRAPHRECALL_API_KEY"),
        ("GRAPHRECALL_WORKER_THREADS", "-3", "GRAPHRECALL_WORKER_THREADS"),
        ("GRAPHRECALL_EXTRACTOR", "llm", "GRAPHRECALL_LLM_BASE_URL"),
    ],
)
def test_a_bad_setting_stops_serve_before_anything_starts(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    variable: str,
    value: str,
    named: str,
) -> None:
    monkeypatch.setenv(variable, value)
    code, out, err = serve(capsys, "--db", str(tmp_path / "x.db"))
    assert code == 2
    assert named in err and len(err.strip().splitlines()) == 1
    assert "serving" not in out and not (tmp_path / "x.db").exists()


def test_serve_refuses_a_revoked_environment_key_in_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A GRAPHRECALL_API_KEY revoked with `keys revoke` is not let in again by a restart."""
    from graphrecall.services.accounts import projects
    from graphrecall.store import open_store

    chosen = "a key that was revoked"
    db = tmp_path / "x.db"
    store = open_store(db)
    try:
        projects.ensure_key(store, chosen)
    finally:
        store.close()
    (uuid_line,) = [line for line in _cli(capsys, "--db", str(db), "keys", "list") if line]
    key_uuid = uuid_line.split()[0]
    assert cli.main(["--db", str(db), "keys", "revoke", key_uuid]) == 0
    capsys.readouterr()
    monkeypatch.setenv("GRAPHRECALL_API_KEY", chosen)
    monkeypatch.setenv("GRAPHRECALL_EMBEDDER", "none")
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    code, out, err = serve(capsys, "--db", str(db), "--port", str(port))
    assert code != 0 and "serving" not in out
    assert len(err.strip().splitlines()) == 1
    assert "GRAPHRECALL_API_KEY was revoked" in err and key_uuid in err
    store = open_store(db)
    try:
        assert [k.revoked_at is not None for k, _ in projects.list_keys(store)] == [True]
    finally:
        store.close()


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> list[str]:
    assert cli.main(list(args)) == 0
    return capsys.readouterr().out.splitlines()


def test_other_commands_name_the_variable_too(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRAPHRECALL_EMBED_THREADS", "lots")
    assert cli.main(["keys", "list"]) == 2
    assert "GRAPHRECALL_EMBED_THREADS: Input should be a valid integer" in capsys.readouterr().err


def test_a_bad_option_is_named_as_typed(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["worker", "--threads", "0"]) == 2
    assert "--threads: Input should be greater than or equal to 1" in capsys.readouterr().err


def test_a_database_under_a_file_is_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "file").write_text("")
    code, out, err = serve(capsys, "--db", str(tmp_path / "file" / "x.db"), "--port", "8999")
    assert code == 2 and f"{tmp_path / 'file'} is not a folder" in err and "serving" not in out


def _deny_writes(path: Path) -> None:
    """Make ``path`` unwritable to this process as it would be to a user: permissions do
    not bind root, so as root the file gets the immutable attribute, which binds it too."""
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(path)], check=True)
    else:
        path.chmod(0o555 if path.is_dir() else 0o444)


def _allow_writes(path: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(path)], check=True)
    path.chmod(0o755)


@pytest.mark.parametrize("case", ["read-only database", "read-only folder"])
def test_an_unwritable_database_is_named_with_the_fix(tmp_path: Path, case: str) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    db = folder / "x.db"
    if case == "read-only database":
        from graphrecall.store import open_store

        open_store(db).close()
        denied = [p for p in folder.iterdir()]
    else:
        denied = [folder]
    for path in denied:
        _deny_writes(path)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "graphrecall", "serve", "--db", str(db), "--port", "8999"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        for path in denied:
            _allow_writes(path)
    assert done.returncode == 2, done.stderr
    assert str(db.name) in done.stderr and "GRAPHRECALL_DB" in done.stderr
    assert "read-only" in done.stderr or "not writable" in done.stderr
    assert "Traceback" not in done.stderr and "serving" not in done.stdout
    assert len(done.stderr.strip().splitlines()) == 1


def test_serve_warms_the_models_before_it_says_it_serves(tmp_path: Path) -> None:
    """A first start on an empty model cache: the integer-kernel model is built and spaCy
    loaded before "serving" is printed, so the first request waits for nothing; the log
    is one line per start-up phase, without the libraries' own INFO chatter."""
    import httpx
    from zep_cloud import Zep

    from tests.conftest import API_KEY, _free_port

    cache = tmp_path / "models"
    port = _free_port()
    env = {
        **os.environ,
        "GRAPHRECALL_MODEL_CACHE": str(cache),
        "GRAPHRECALL_API_KEY": API_KEY,
        "GRAPHRECALL_LOG_LEVEL": "info",
        # the stock model: the one built on first start (ours ships on integer kernels)
        "GRAPHRECALL_EMBEDDER": "minilm",
    }
    args = ["serve", "--db", str(tmp_path / "first.db"), "--port", str(port)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphrecall", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith(f"graphrecall serving http://127.0.0.1:{port}/api/v4"), line
        assert len(list(cache.glob("minilm-*.onnx"))) == 1  # built before serving
        health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5)
        assert health.status_code == 200 and health.json()["ready"] is True
        zep = Zep(api_key=API_KEY, base_url=f"http://127.0.0.1:{port}/api/v4", max_retries=0)
        graph = zep.graph.create(name="first")
        started = time.monotonic()
        zep.graph.search_edges(graph.uuid_, query="where does Ada live")
        # The SDK's default timeout is 5 s (a first search that built the model took 6.6).
        assert time.monotonic() - started < 5
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=30)
    # SIGTERM is a clean stop: the store is closed, so its WAL is checkpointed away.
    assert proc.returncode == 0 and "graphrecall stopped" in out, err
    assert not (tmp_path / "first.db-wal").exists()
    phases = [ln.split("graphrecall.startup ", 1)[1] for ln in err.splitlines() if "startup" in ln]
    assert [p.split(":")[0] for p in phases] == [
        "database open",
        "embedder ready",
        "extractor ready",
        "date parser ready",
    ]
    assert all(re.fullmatch(r"[a-z -]+: \d+\.\d\d s", p) for p in phases), phases
    noise = [ln for ln in err.splitlines() if "faiss" in ln or "onnxruntime" in ln.lower()]
    assert not noise, noise


def test_every_database_command_takes_a_postgres_url(capsys: pytest.CaptureFixture[str]) -> None:
    """keys, spaces, tasks, migrate and the library on a PostgreSQL URL (serve, worker and
    mcp open it the same way, runtime.build; tests/ingest/test_worker_processes.py runs
    serve and worker on one); the help says --db takes one."""
    import uuid

    from graphrecall.library import GraphRecall
    from tests import pg_server

    url = pg_server.with_schema(pg_server.server_url(), f"t{uuid.uuid4().hex}")
    assert cli.main(["migrate", "--db", url]) == 0
    assert cli.main(["--db", url, "keys", "create", "--name", "pg"]) == 0
    secret = capsys.readouterr().out.splitlines()[-1].strip()
    assert cli.main(["--db", url, "keys", "list"]) == 0
    assert "name=pg" in capsys.readouterr().out
    assert cli.main(["--db", url, "spaces", "create", "Notes"]) == 0
    slug = capsys.readouterr().out.strip()
    assert cli.main(["--db", url, "spaces", "list"]) == 0
    assert f"{slug}  Notes" in capsys.readouterr().out
    assert cli.main(["--db", url, "tasks", "retry"]) == 0
    assert cli.main(["--db", url, "keys", "revoke", secret[:8]]) == 0
    with GraphRecall(url, worker=False) as gr:
        made = gr.user.create(user_id="pg-lib", first_name="Ada")
        assert gr.user.lookup(user_id="pg-lib").uuid_ == made.uuid_
    for command in ("serve", "worker", "mcp", "keys", "spaces", "migrate", "search"):
        with pytest.raises(SystemExit):
            cli.main([command, "--help"])
        assert "postgresql://user@host:port/dbname" in capsys.readouterr().out


def test_an_unreachable_postgres_server_is_named_without_its_password(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    url = f"postgresql://ann:s3cret@127.0.0.1:{port}/gr?connect_timeout=1"
    assert cli.main(["migrate", "--db", url]) == 2
    err = capsys.readouterr().err
    assert "127.0.0.1" in err and "s3cret" not in err


@pytest.mark.parametrize(
    "command", [["keys", "list"], ["spaces", "list"], ["tasks", "retry"], ["stats"]]
)
def test_commands_that_never_embed_load_no_model(command: list[str], tmp_path: Path) -> None:
    probe = (
        "import json, sys\n"
        "from graphrecall.cli import main\n"
        f"code = main({[*command, '--db', str(tmp_path / 'm.db')]!r})\n"
        "print(json.dumps([code, sorted(sys.modules)]))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    code, loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert code == 0, done.stderr
    assert not {"spacy", "onnxruntime", "tokenizers"} & {m.split(".")[0] for m in loaded}


def test_the_serve_banner_names_each_face(tmp_path: Path) -> None:
    from graphrecall.cli.server import banner
    from graphrecall.config import Settings

    text = banner(Settings(db=str(tmp_path / "b.db"), port=8123), "with its ingestion worker")
    root = "http://127.0.0.1:8123"
    for url in (f"{root}/api/v4", f"{root}/api/v2", f"{root}/ui/", f"{root}/mcp"):
        assert url in text, url
    assert "Zep v3 API     http://127.0.0.1:8123/api/v2" in text
