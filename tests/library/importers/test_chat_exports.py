"""ChatGPT's and Claude's data exports: read from small exports of our own (tests/library/
importers/data), imported through the CLI into databases of their own; a second run adds
nothing, and a run cut short goes on where it stopped."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from graphrecall import GraphRecall
from graphrecall.cli import main
from graphrecall.library import transfer
from graphrecall.library.importers import ImportProblem, chat_exports
from graphrecall.library.importers.once import instant
from graphrecall.library.importers.records import Conversation

DATA = Path(__file__).parent / "data"
CHATGPT = DATA / "chatgpt_conversations.json"
CLAUDE = DATA / "claude_conversations.json"
DOG = "chatgpt-6f1c2a10-0000-4000-8000-00000000a001"
WORK = "chatgpt-6f1c2a10-0000-4000-8000-00000000a002"
HIKE = "claude-3d9e7b20-0000-4000-8000-00000000c001"
BOOKS = "claude-3d9e7b20-0000-4000-8000-00000000c002"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def read(path: Path, user: str = "ann") -> Conversation:
    kind, records = transfer.read_file(path)
    return chat_exports.conversations(kind, records, user)


def messages_of(db: Path, thread_id: str) -> list[tuple[str | None, str, str | None]]:
    with GraphRecall(db, worker=False) as gr:
        thread = gr.thread.lookup(thread_id=thread_id)
        assert gr.user.get(thread.user_uuid).user_id == "ann"
        found = gr.thread.list_messages(thread.uuid, page_size=100)
        return [(m.role, m.content, instant(m.reference_time)) for m in found]


# -- reading -------------------------------------------------------------------------------


def test_chatgpt_follows_the_branch_the_user_saw() -> None:
    assert transfer.read_file(CHATGPT)[0] == "chatgpt"
    conversation = read(CHATGPT)
    assert conversation.thread_ids and list(conversation.threads) == [DOG, WORK]
    dog = conversation.threads[DOG]
    assert [(m["role"], m["content"]) for m in dog] == [
        ("user", "I adopted a beagle named Biscuit last week."),
        ("assistant", "Congratulations on adopting Biscuit!"),  # not the regenerated one
        ("user", "Here is Biscuit at the park in Lyon."),  # the image part left out
        ("assistant", "What a happy dog."),
    ]
    assert instant(dog[0]["reference_time"]) == "2024-05-01T08:01:00+00:00"
    assert instant(dog[3]["reference_time"]) == "2024-05-01T08:00:00+00:00"  # the chat's
    assert dog[1]["name"] == "ChatGPT" and dog[0]["name"] is None
    # no current_node: the newest child down from the root
    assert [m["content"][:9] for m in conversation.threads[WORK]] == ["I started", "That soun"]
    assert conversation.dropped == 2  # the hidden system message and the tool output


def test_claude_reads_text_blocks_or_text() -> None:
    assert transfer.read_file(CLAUDE)[0] == "claude"
    conversation = read(CLAUDE)
    assert list(conversation.threads) == [HIKE, BOOKS]
    hike = conversation.threads[HIKE]
    assert [(m["role"], m["content"]) for m in hike] == [
        ("user", "I plan to hike the Tour du Mont Blanc in August with my sister Clara."),
        ("assistant", "The Tour du Mont Blanc takes about eleven days."),  # no thinking
    ]
    assert instant(hike[0]["reference_time"]) == "2024-07-01T09:00:05+00:00"
    assert conversation.threads[BOOKS][0]["content"].startswith("My favourite")
    assert conversation.dropped == 1  # the empty message


def test_the_exports_zip_and_long_messages(tmp_path: Path) -> None:
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.write(CLAUDE, "data-2024/conversations.json")
        z.writestr("data-2024/users.json", "[]")
    assert list(read(archive).threads) == [HIKE, BOOKS]
    long = ("word " * 2500).strip() + "\n" + "tail " * 10
    pieces = chat_exports.split(long)
    assert len(pieces) == 2 and all(len(p) <= 10_000 for p in pieces)
    assert " ".join(pieces).split() == long.split()  # nothing lost, nothing doubled


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('[{"title": "x", "mapping": {}}]', "conversation 0 has no id"),
        ('[{"uuid": "u", "chat_messages": 3}]', "no uuid or no chat_messages"),
        ('[{"mapping": {"a": ', "not JSON"),
    ],
)
def test_malformed_exports_name_the_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, problem: str
) -> None:
    bad = tmp_path / "conversations.json"
    bad.write_text(text)
    with pytest.raises(ImportProblem, match=problem):
        read(bad)
    code, _, err = run(capsys, "--db", str(tmp_path / "x.db"), "import", str(bad), "--user", "a")
    assert code == 2 and problem in err and len(err.strip().splitlines()) == 1


def test_a_zip_without_conversations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("users.json", "[]")
    code, _, err = run(
        capsys, "--db", str(tmp_path / "x.db"), "import", str(archive), "--user", "a"
    )
    assert code == 2 and "without a conversations.json" in err


# -- importing -----------------------------------------------------------------------------


def test_import_chatgpt_then_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "chatgpt.db"
    code, out, _ = run(capsys, "--db", str(db), "import", str(CHATGPT), "--user", "ann")
    assert code == 0, out
    assert "added 6 message(s) in 2 thread(s)" in out
    assert "2 message(s) left out" in out and "processed: 6 episodes" in out
    dog = messages_of(db, DOG)
    assert dog[0] == (
        "user",
        "I adopted a beagle named Biscuit last week.",
        "2024-05-01T08:01:00+00:00",
    )
    assert [m[0] for m in dog] == ["user", "assistant", "user", "assistant"]
    code, out, _ = run(capsys, "--db", str(db), "search", "beagle", "--user", "ann", "--json")
    assert any("Biscuit" in e["fact"] for e in json.loads(out))  # extracted as usual
    code, out, _ = run(capsys, "--db", str(db), "stats", "--user", "ann", "--json")
    before = json.loads(out)["counts"]

    code, out, _ = run(capsys, "--db", str(db), "import", str(CHATGPT), "--user", "ann")
    assert code == 0, out
    assert (
        "added 0 message(s) in 0 thread(s)" in out and "6 message(s) or episode(s) already" in out
    )
    code, out, _ = run(capsys, "--db", str(db), "stats", "--user", "ann", "--json")
    assert json.loads(out)["counts"] == before
    assert messages_of(db, DOG) == dog


def test_import_claude(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "claude.db"
    args = ("--db", str(db), "import", str(CLAUDE), "--user", "ann", "--no-wait")
    code, out, _ = run(capsys, *args)
    assert code == 0 and "added 4 message(s) in 2 thread(s)" in out
    assert "1 message(s) left out" in out
    assert messages_of(db, BOOKS) == [
        ("user", "My favourite novel is Dune by Frank Herbert.", "2024-08-02T10:00:30+00:00"),
        ("assistant", "Dune is a classic of science fiction.", "2024-08-02T10:01:00+00:00"),
    ]
    code, out, _ = run(capsys, *args)
    assert code == 0 and "added 0 message(s) in 0 thread(s)" in out
    assert len(messages_of(db, HIKE)) == 2


def test_another_users_thread_is_not_taken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "two.db")
    assert run(capsys, "--db", db, "import", str(CLAUDE), "--user", "ann", "--no-wait")[0] == 0
    code, _, err = run(capsys, "--db", db, "import", str(CLAUDE), "--user", "bo", "--no-wait")
    assert code == 2 and "another user" in err


def long_claude_export(turns: int) -> list[dict[str, Any]]:
    """One conversation of ``turns`` messages, a minute apart (a thread takes more than
    one call: 30 messages a call)."""
    return [
        {
            "uuid": "long-1",
            "name": "Long",
            "created_at": "2024-09-01T08:00:00Z",
            "chat_messages": [
                {
                    "sender": "human" if n % 2 == 0 else "assistant",
                    "text": f"Message number {n} about the garden.",
                    "created_at": f"2024-09-01T{8 + n // 60:02d}:{n % 60:02d}:00Z",
                }
                for n in range(turns)
            ],
        }
    ]


def test_an_interrupted_run_goes_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "conversations.json"
    source.write_text(json.dumps(long_claude_export(70)))
    db = tmp_path / "cut.db"
    with GraphRecall(db, worker=False) as gr:
        steps = transfer.add_conversations(gr, [read(source)])
        first = next(steps)  # one call: the first 30 messages
        steps.close()  # cut here, as a Ctrl-C between two calls would
        assert first.messages == 30
    code, out, _ = run(capsys, "--db", str(db), "import", str(source), "--user", "ann", "--no-wait")
    assert code == 0 and "added 40 message(s) in 0 thread(s)" in out
    assert "30 message(s) or episode(s) already there" in out
    found = messages_of(db, "claude-long-1")
    assert [m[1] for m in found] == [f"Message number {n} about the garden." for n in range(70)]
