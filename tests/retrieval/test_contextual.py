"""Contextual retrieval of chat messages: a message is indexed (BM25) with the two messages
before it in its thread and the start of its reply, and embedded with its date and the
message it replies to, so that a reply such as "5 years already!" is found by a question
about what it answers."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from graphrecall.domain.models import Episode
from graphrecall.graph_model.embedding import previous_messages, texts_to_embed
from graphrecall.graph_model.graph_writes import delete_episodes, insert_episodes, rewrite_episode
from graphrecall.graph_model.indexed_text import vector_text
from graphrecall.store import Store, open_store
from graphrecall.store.sqlite.migrations import MIGRATIONS, migrate

GRAPH = "g-1"
THREAD = "t-1"


def _message(n: int, who: str, text: str, thread: str | None = THREAD) -> Episode:
    return Episode(
        uuid=f"e-{thread}-{n}",
        graph_uuid=GRAPH,
        content=text,
        source="message",
        role="user",
        role_name=who,
        reference_time="2023-05-08T13:56:00.000000Z",
        created_at=f"2026-01-01T00:00:{n:02d}.000000Z",
        thread_uuid=thread,
    )


CHAT = [
    _message(1, "Caroline", "Wow, what an amazing family pic! How long have you been married?"),
    _message(2, "Melanie", "5 years already! Time flies."),
    _message(3, "Caroline", "That is lovely."),
    _message(4, "Melanie", "Thanks! I went hiking on Sunday."),
]


def _integrity(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO episodes_fts(episodes_fts, rank) VALUES ('integrity-check', 1)")
    conn.close()


def test_a_reply_is_found_through_the_message_it_answers(store: Store) -> None:
    insert_episodes(store, CHAT)
    found = store.text_search(Episode, {"graph_uuid": GRAPH}, ["married"])
    # The question itself first (its own words weigh more), then the reply, then the
    # message after it (whose context is the whole exchange); the context is two messages
    # deep, so the fourth does not match.
    assert [u for u, _ in found] == ["e-t-1-1", "e-t-1-2", "e-t-1-3"]
    assert found[0][1] > found[1][1] > found[2][1] > 0


def test_context_stays_within_a_thread(store: Store) -> None:
    insert_episodes(store, [*CHAT, _message(5, "Melanie", "Sounds great!", thread="t-2")])
    found = store.text_search(Episode, {"graph_uuid": GRAPH}, ["hiking"])
    # The message, then the one it replies to; t-2's first message has no context.
    assert [u for u, _ in found] == ["e-t-1-4", "e-t-1-3"]
    assert found[0][1] > found[1][1] > 0


def _search_columns(path: Path) -> dict[str, tuple[str | None, str | None]]:
    """Each episode's uuid -> its derived (search_context, search_replies)."""
    conn = sqlite3.connect(path / "db.sqlite")
    rows = conn.execute("SELECT uuid, search_context, search_replies FROM episodes")
    out = {u: (c, r) for u, c, r in rows}
    conn.close()
    return out


def test_each_message_is_its_predecessors_reply(store: Store, tmp_path: Path) -> None:
    insert_episodes(store, CHAT[:2])
    insert_episodes(store, CHAT[2:])  # a later batch: the last message of the first gets its reply
    columns = _search_columns(tmp_path)
    said = [f"{e.role_name}: {e.content}" for e in CHAT]
    assert [columns[e.uuid][1] for e in CHAT] == [said[1], said[2], said[3], None]
    assert columns["e-t-1-3"][0] == f"{said[1]}\n{said[0]}"
    _integrity(tmp_path / "db.sqlite")


def test_a_rewritten_or_deleted_message_leaves_its_neighbours(store: Store, tmp_path: Path) -> None:
    insert_episodes(store, CHAT)
    rewrite_episode(store, CHAT[1].model_copy(update={"content": "Five years!", "processed": True}))
    _integrity(tmp_path / "db.sqlite")
    # The rewrite is found through the message it replies to and the two after it; the
    # old words are found nowhere.
    found = [u for u, _ in store.text_search(Episode, {}, ["five"])]
    assert found[0] == "e-t-1-2"
    assert sorted(found[1:]) == ["e-t-1-1", "e-t-1-3", "e-t-1-4"]
    assert store.text_search(Episode, {}, ["flies"]) == []
    delete_episodes(store, GRAPH, ["e-t-1-1"])
    _integrity(tmp_path / "db.sqlite")
    # Nothing still holds the deleted message's words.
    assert store.text_search(Episode, {}, ["married"]) == []
    said = [f"{e.role_name}: {e.content}" for e in CHAT]
    columns = _search_columns(tmp_path)
    assert columns["e-t-1-2"] == (None, said[2])
    assert columns["e-t-1-3"] == ("Melanie: Five years!", said[3])
    delete_episodes(store, GRAPH, ["e-t-1-4"])
    assert _search_columns(tmp_path)["e-t-1-3"] == ("Melanie: Five years!", None)
    _integrity(tmp_path / "db.sqlite")


def test_marking_a_message_processed_leaves_its_neighbours_alone(
    store: Store, tmp_path: Path
) -> None:
    insert_episodes(store, [*CHAT, _message(5, "Melanie", "Time flies.", thread="t-2")])
    conn = sqlite3.connect(tmp_path / "db.sqlite")

    def changes(uuid: str) -> int:
        before = conn.total_changes
        conn.execute("UPDATE episodes SET processed = 1, content = content WHERE uuid = ?", [uuid])
        return conn.total_changes - before

    # A message with three neighbours costs what a lone one does: an unchanged text does
    # not re-index the messages around it.
    assert changes("e-t-1-2") == changes("e-t-2-5")
    conn.close()


def test_upgrading_an_existing_database_backfills_the_context(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    assert migrate(conn, 6) == conn.execute("PRAGMA user_version").fetchone()[0] == 6
    for e in CHAT:
        conn.execute(
            "INSERT INTO episodes (uuid, graph_uuid, content, source, role, role_name,"
            " reference_time, created_at, thread_uuid) VALUES (?,?,?,?,?,?,?,?,?)",
            [
                e.uuid,
                e.graph_uuid,
                e.content,
                e.source,
                e.role,
                e.role_name,
                e.reference_time,
                e.created_at,
                e.thread_uuid,
            ],
        )
    assert migrate(conn) == len(MIGRATIONS)
    rows = conn.execute("SELECT search_context, search_replies FROM episodes ORDER BY uuid")
    contexts, replies = zip(*rows, strict=True)
    said = [f"{e.role_name}: {e.content}" for e in CHAT]
    assert contexts == (None, said[0], f"{said[1]}\n{said[0]}", f"{said[2]}\n{said[1]}")
    assert replies == (said[1], said[2], said[3], None)
    conn.close()
    _integrity(path)
    s = open_store(path)
    try:
        found = [u for u, _ in s.text_search(Episode, {}, ["married"])]
        assert found == ["e-t-1-1", "e-t-1-2", "e-t-1-3"]
    finally:
        s.close()


def test_vector_text_has_the_date_and_the_message_replied_to(store: Store) -> None:
    insert_episodes(store, CHAT)
    previous = previous_messages(store, CHAT)
    assert set(previous) == {"e-t-1-2", "e-t-1-3", "e-t-1-4"}
    assert previous["e-t-1-2"].uuid == "e-t-1-1"
    assert vector_text(CHAT[1], previous["e-t-1-2"]) == (
        "On 8 May 2023, Melanie: 5 years already! Time flies.\n"
        f"(replying to Caroline: {CHAT[0].content})"
    )
    assert texts_to_embed(store, CHAT)[0] == f"On 8 May 2023, Caroline: {CHAT[0].content}"
    # A long previous message is cut; the message itself never is.
    long = _message(9, "Bob", "x" * 1000)
    assert len(vector_text(CHAT[1], long)) < 400
