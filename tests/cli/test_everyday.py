"""The everyday commands end to end, in process, on databases of their own: import a
messages file and a LoCoMo file, search, context, stats, export and import the export
into another database."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graphrecall.cli import main

MESSAGES = [
    {
        "role": "user",
        "name": "Bo",
        "content": "I adopted a grey cat named Miso last week.",
        "timestamp": "2024-01-05T10:00:00Z",
        "thread_id": "pets",
    },
    {"role": "assistant", "content": "Congratulations on Miso!", "thread_id": "pets"},
    {
        "role": "user",
        "name": "Bo",
        "content": "I started learning the Rust programming language at Ferrous Academy.",
        "timestamp": "2024-01-06T09:00:00Z",
        "thread_id": "work",
    },
]
LOCOMO = [
    {
        "sample_id": "conv-test",
        "conversation": {
            "speaker_a": "Lena",
            "speaker_b": "Tom",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Lena", "dia_id": "D1:1", "text": "I joined a climbing gym in Berlin."},
                {"speaker": "Tom", "dia_id": "D1:2", "text": "Nice! Which gym?"},
            ],
            "session_2_date_time": "10:00 am on 9 June, 2023",
            "session_2": [
                {"speaker": "Lena", "dia_id": "D2:1", "text": "My brother Jonas visited me."},
            ],
        },
        "qa": [],
    }
]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def imported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    db = tmp_path / "cli.db"
    source = tmp_path / "messages.jsonl"
    source.write_text("\n".join(json.dumps(m) for m in MESSAGES) + "\n")
    code, out, _ = run(capsys, "--db", str(db), "import", str(source), "--user", "bo")
    assert code == 0, out
    assert "added 3 message(s) in 2 thread(s)" in out
    assert "processed: 3 episodes" in out
    return db


def test_import_search_context_stats(imported: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(imported)
    code, out, _ = run(capsys, "--db", db, "search", "cat Miso", "--user", "bo", "--json")
    assert code == 0
    facts = [e["fact"] for e in json.loads(out)]
    assert facts and "Miso" in facts[0]
    code, out, _ = run(
        capsys, "--db", db, "search", "Rust", "--user", "bo", "--scope", "episodes", "--json"
    )
    assert json.loads(out)[0]["content"] == MESSAGES[2]["content"]
    code, out, _ = run(capsys, "--db", db, "search", "Miso", "--user", "bo", "--scope", "nodes")
    assert code == 0 and "Miso" in out  # the table
    code, out, _ = run(capsys, "--db", db, "context", "Bo's pets", "--user", "bo")
    assert code == 0 and "Miso" in out
    code, out, _ = run(
        capsys, "--db", db, "context", "Bo's pets", "--user", "bo", "--max-characters", "80"
    )
    assert len(out.strip()) <= 80
    code, out, _ = run(capsys, "--db", db, "stats", "--user", "bo", "--json")
    found = json.loads(out)
    assert found["counts"]["threads"] == 2 and found["counts"]["episodes"] == 3
    assert found["tasks"]["failed"] == 0 and found["tasks"]["pending"] == 0
    assert found["last_ingestion"]
    code, out, _ = run(capsys, "--db", db, "stats")
    assert code == 0 and "users: 1" in out


def test_export_then_import_elsewhere(
    imported: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dump = tmp_path / "bo.jsonl"
    code, _, err = run(capsys, "--db", str(imported), "export", "--user", "bo", "-o", str(dump))
    assert code == 0 and "exported" in err
    lines = [json.loads(line) for line in dump.read_text().splitlines()]
    assert lines[0]["type"] == "graphrecall-export" and lines[0]["user"]["user_id"] == "bo"
    assert sum(1 for r in lines if r["type"] == "episode") == 3
    other = str(tmp_path / "other.db")
    code, out, _ = run(capsys, "--db", other, "import", str(dump))
    assert code == 0 and "added 3 message(s) in 2 thread(s)" in out
    code, out, _ = run(capsys, "--db", other, "stats", "--user", "bo", "--json")
    moved = json.loads(out)["counts"]
    code, out, _ = run(capsys, "--db", str(imported), "stats", "--user", "bo", "--json")
    assert moved == json.loads(out)["counts"]  # the same input derives the same graph


def test_import_locomo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "locomo.json"
    source.write_text(json.dumps(LOCOMO))
    db = str(tmp_path / "locomo.db")
    code, out, _ = run(capsys, "--db", db, "import", str(source), "--user", "lena")
    assert code == 0, out
    assert "LoCoMo, 1 conversation(s)" in out and "added 3 message(s) in 2 thread(s)" in out
    code, out, _ = run(capsys, "--db", db, "search", "climbing", "--user", "lena", "--json")
    edges: list[dict[str, Any]] = json.loads(out)
    assert any("climbing" in e["fact"] for e in edges)
    assert edges[0]["valid_at"].startswith("2023-05-08")  # the session's time


def test_bad_input_is_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "bad.db")
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    code, _, err = run(capsys, "--db", db, "import", str(empty), "--user", "x")
    assert code == 2 and "holds no records" in err  # the input is at fault: exit 2
    no_content = tmp_path / "nocontent.jsonl"
    no_content.write_text('{"role": "user"}\n')
    code, _, err = run(capsys, "--db", db, "import", str(no_content), "--user", "x")
    assert code == 2 and "record 0" in err and "content" in err
    code, _, err = run(capsys, "--db", db, "search", "x", "--user", "nobody")
    assert code == 1 and "nobody" in err
    with pytest.raises(SystemExit):
        main(["--db", db, "search", "x"])  # --user or --graph is required


def test_search_ranks_around_a_node_or_episodes(
    imported: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(imported)
    code, _, err = run(
        capsys, "--db", db, "search", "Miso", "--user", "bo", "--reranker", "node_distance"
    )
    assert code == 1 and "--center-node" in err
    code, _, err = run(
        capsys, "search", "Miso", "--user", "bo", "--reranker", "episode_mentions", "--db", db
    )
    assert code == 1 and "--episode" in err
    code, out, _ = run(
        capsys, "--db", db, "search", "Miso", "--user", "bo", "--scope", "nodes", "--json"
    )
    miso = next(n for n in json.loads(out) if n["name"] == "Miso")
    code, out, _ = run(
        capsys,
        "--db",
        db,
        "search",
        "cat",
        "--user",
        "bo",
        "--reranker",
        "node_distance",
        "--center-node",
        miso["uuid"],
        "--json",
    )
    assert code == 0 and any("Miso" in e["fact"] for e in json.loads(out))
    code, out, _ = run(
        capsys, "--db", db, "search", "Rust", "--user", "bo", "--scope", "episodes", "--json"
    )
    rust = json.loads(out)[0]
    code, out, _ = run(
        capsys,
        "--db",
        db,
        "search",
        "Rust Ferrous Academy",
        "--user",
        "bo",
        "--reranker",
        "episode_mentions",
        "--episode",
        rust["uuid"],
        "--json",
    )
    facts = [e["fact"] for e in json.loads(out)]
    assert code == 0 and facts and all("Miso" not in f for f in facts)
