"""Speaker-prefixed text: "Bob: I moved to Berlin", "[Bob] ...", chat logs. Read as the
speakers' own messages: no entity of the prefix, the statement attached to its speaker
(the user's own node in a user's graph), an assistant's lines make no fact about it."""

from __future__ import annotations

from zep_cloud import AddMessage, Zep

from graphrecall.ingest.speakers import strip_own_prefix, turns
from tests.conftest import wait_for_task

AT = "2024-06-10T10:00:00Z"


def test_what_is_a_speaker_prefix() -> None:
    assert [(t.speaker, t.text, t.role) for t in turns("Bob: I moved to Berlin.") or []] == [
        ("Bob", "I moved to Berlin.", "user")
    ]
    assert [t.speaker for t in turns("[Mary Ann] We got a puppy.") or []] == ["Mary Ann"]
    log = turns(
        "Dave: I live in Rome.\nAssistant: Rome is lovely!\nErin: I started at Globex\n"
        "on Monday, finally."
    )
    assert [(t.speaker, t.role) for t in log or []] == [
        ("Dave", "user"),
        ("Assistant", "assistant"),
        ("Erin", "user"),
    ]
    assert log is not None and log[2].text == "I started at Globex on Monday, finally."
    # Not a speaker: headings, times, URLs, a place described, plain prose.
    for text in (
        "Note: I moved the meeting to Friday.",
        "Update: we shipped it.",
        "10:30: stand-up",
        "Berlin: a city of 3.7 million people.",
        "See https://example.org for details.",
        "I moved to Berlin last month.",
        "",
    ):
        assert turns(text) is None, text
    assert strip_own_prefix("Bob: I moved to Berlin.", "Bob") == "I moved to Berlin."
    assert strip_own_prefix("Alice: hi", "Bob") == "Alice: hi"


def _facts(zep: Zep, graph: str) -> set[tuple[str, str, str]]:
    return {
        (str(e.source_node_name), str(e.name), str(e.target_node_name))
        for e in zep.graph.edge.list(graph)
    }


def _names(zep: Zep, graph: str) -> set[str]:
    return {str(n.name) for n in zep.graph.node.list(graph)}


def _add(zep: Zep, graph: str, data: str) -> None:
    added = zep.graph.episode.add(graph, type="text", data=data, reference_time=AT)
    assert wait_for_task(zep, added.task.uuid_) == "succeeded"


def test_a_prefixed_text_is_its_speakers_message(zep: Zep) -> None:
    graph = zep.graph.create(name="speakers").uuid_
    _add(zep, graph, "Bob: I moved to Berlin last month.")
    _add(zep, graph, "[Carol] I work at Initech.")
    facts = _facts(zep, graph)
    assert ("Bob", "MOVES_TO", "Berlin") in facts and ("Carol", "WORKS_AT", "Initech") in facts
    names = _names(zep, graph)
    assert not names & {"Speaker", "Bob:", "[Carol]", "User"}


def test_a_chat_log_gives_each_speaker_their_own_facts(zep: Zep) -> None:
    graph = zep.graph.create(name="chat-log").uuid_
    _add(
        zep,
        graph,
        "Dave: I live in Rome.\n"
        "Erin: I started at Globex on Monday.\n"
        "Assistant: I can help you plan the move to Lisbon.\n"
        "Dave: I also love painting.",
    )
    facts = _facts(zep, graph)
    assert {
        ("Dave", "LIVES_IN", "Rome"),
        ("Erin", "STARTS_AT", "Globex"),
        ("Dave", "LOVES", "painting"),
    } <= facts
    assert not any(source == "Assistant" for source, _, _ in facts)
    assert "Assistant" not in _names(zep, graph)


def test_in_a_users_graph_the_users_name_is_the_user(zep: Zep) -> None:
    user = zep.user.create(user_id="priya-speakers", first_name="Priya")
    graph = str(user.graph_uuid)
    _add(zep, graph, "Priya: I moved to Lisbon in March.\nTom: I live in Porto.")
    me = zep.user.get_node(user.uuid_)
    lisbon = next(e for e in zep.graph.edge.list(user.graph_uuid) if e.target_node_name == "Lisbon")
    assert lisbon.source_node_uuid == me.uuid_ and lisbon.name == "MOVES_TO"
    assert ("Tom", "LIVES_IN", "Porto") in _facts(zep, str(user.graph_uuid))
    assert "Priya:" not in _names(zep, str(user.graph_uuid))


def test_a_message_repeating_its_speakers_name_is_read_without_it(zep: Zep) -> None:
    user = zep.user.create(first_name="Ravi")
    thread = zep.thread.create(user_uuid=user.uuid_)
    added = zep.thread.add_messages(
        thread.uuid_,
        messages=[AddMessage(role="user", name="Ravi", content="Ravi: I moved to Pune.")],
    )
    assert wait_for_task(zep, added.task.uuid_) == "succeeded"
    me = zep.user.get_node(user.uuid_)
    [pune] = [e for e in zep.graph.edge.list(user.graph_uuid) if e.target_node_name == "Pune"]
    assert pune.source_node_uuid == me.uuid_ and pune.fact == "Ravi moved to Pune"
