"""Whatever the API accepts, extraction processes (issue 47, item 5): a long speaker name, a
long capitalised token and a long JSON key once failed the extraction task, and every
message of that call stayed ``processed: false`` for good. On both backends."""

from __future__ import annotations

import json

from zep_cloud import AddMessage, Zep

from graphrecall.domain.limits import MAX_NAME_CHARS
from tests.conftest import wait_for_task


def test_long_names_in_messages_are_processed_with_the_rest_of_the_call(zep: Zep) -> None:
    user = zep.user.create(first_name="Nadia")
    thread = zep.thread.create(user_uuid=user.uuid_)
    long_speaker = "Bartholomew " + "Q" * 300
    long_token = "Z" + "x" * 600  # a "name" longer than a node's name may be
    added = zep.thread.add_messages(
        thread.uuid_,
        messages=[
            AddMessage(role="user", name="Nadia", content="I work at Acme."),
            AddMessage(role="user", name=long_speaker, content="I live in Porto."),
            AddMessage(role="user", content=f"My cat is called {long_token} and I love her."),
            AddMessage(role="user", name="Nadia", content="I moved to Lisbon."),
        ],
    )
    assert added.task is not None and added.task.uuid_ is not None
    assert wait_for_task(zep, added.task.uuid_) == "succeeded"
    messages = list(zep.thread.list_messages(thread.uuid_))
    assert len(messages) == 4 and all(m.processed for m in messages)
    facts = {(e.name, e.target_node_name) for e in zep.graph.edge.list(user.graph_uuid)}
    # The messages beside the long names were read as ever, and the long speaker's too.
    assert ("WORKS_AT", "Acme") in facts and ("MOVES_TO", "Lisbon") in facts
    assert ("LIVES_IN", "Porto") in facts
    names = [n.name for n in zep.graph.node.list(user.graph_uuid)]
    assert long_speaker in names
    # The over-long token was left out, not cut into a node nobody named.
    assert all(len(n) <= MAX_NAME_CHARS for n in names)
    assert not any(n.startswith("Zxxx") for n in names)


def test_a_json_episode_with_a_long_key_is_processed(zep: Zep) -> None:
    graph = zep.graph.create(name="long keys")
    document = {"name": "Ravi", "k" * 150: "Some value", "employer": "Initech"}
    added = zep.graph.episode.add(graph.uuid_, type="json", data=json.dumps(document))
    assert added.task is not None and added.task.uuid_ is not None
    assert wait_for_task(zep, added.task.uuid_) == "succeeded"
    assert all(e.processed for e in zep.graph.episode.list(graph.uuid_))
    edges = list(zep.graph.edge.list(graph.uuid_))
    relations = {e.name for e in edges}
    assert all(len(r) <= 100 for r in relations)
    assert any(e.target_node_name == "Initech" for e in edges), relations
