"""get_context takes the facts of the best-matching messages into account: a fact whose
words share nothing with the question is still selected when the message it came from
answers the question."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graphrecall.domain.models import Edge, Episode, Graph, Node, Project
from graphrecall.retrieval.filters import Filters
from graphrecall.services.container import Services
from graphrecall.services.get_context import assembly as ca
from graphrecall.services.get_context import plan as context_plan
from graphrecall.services.get_context.templates import Slot
from graphrecall.store import Store, open_store

STAMP = "2026-01-01T00:00:00.000000Z"
GRAPH = "0193a5f0-0000-7000-8000-000000000001"
QUESTION = "What did Caroline bring home from the rescue shelter trip?"


def _edge(uuid: str, fact: str, name: str = "RELATES_TO") -> Edge:
    return Edge(
        uuid=uuid,
        graph_uuid=GRAPH,
        name=name,
        fact=fact,
        source_node_uuid="caroline",
        target_node_uuid=f"n-{uuid}",
        created_at=STAMP,
        updated_at=STAMP,
    )


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[Store]:
    s = open_store(tmp_path / "db.sqlite")
    s.insert([Project(uuid="p", name="p", created_at=STAMP)])
    s.insert(
        [Graph(uuid=GRAPH, project_uuid="p", type="standard", created_at=STAMP, updated_at=STAMP)]
    )
    s.insert(
        [
            Node(
                uuid="caroline",
                graph_uuid=GRAPH,
                name="Caroline",
                created_at=STAMP,
                updated_at=STAMP,
            )
        ]
    )
    said = Episode(
        uuid="said",
        graph_uuid=GRAPH,
        content="The rescue shelter trip went great: we brought home a greyhound!",
        source="message",
        role="user",
        role_name="Caroline",
        reference_time=STAMP,
        created_at=STAMP,
    )
    s.insert([said])
    # Facts that share the question's words, but answer nothing, fill a small budget...
    s.insert([_edge(f"d{i}", f"Caroline planned trip number {i} to the coast") for i in range(8)])
    # ...while the answer, extracted from the message, shares none of them.
    s.insert([_edge("answer", "Rex, a greyhound, was adopted", "ADOPTS")])
    s.link_episodes(Edge, GRAPH, "answer", ["said"])
    yield s
    s.close()


def _facts(store: Store, **filters: object) -> list[str]:
    result = ca.graph_context(
        Services(store, None),
        store.find(Project, {})[0],
        GRAPH,
        ca.ContextRequest(query=QUESTION, max_characters=400, filters=Filters(**filters)),
    )
    return [i.uuid for i in result.items if i.kind == "edge"]


def test_the_fact_of_the_matching_message_is_selected(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "answer" in _facts(store)
    monkeypatch.setattr(context_plan, "EPISODE_GUIDES", 0)
    assert "answer" not in _facts(store)  # the fact search alone misses it


def test_guided_facts_still_obey_the_callers_filters(store: Store) -> None:
    assert "answer" not in _facts(store, edge_types=["RELATES_TO"])
    assert "answer" in _facts(store, edge_types=["ADOPTS"])


def test_the_messages_a_thread_query_is_made_of_do_not_guide(store: Store) -> None:
    graph = store.get(Graph, GRAPH)
    assert graph is not None

    def guided(*query_episodes: str) -> list[str]:
        plan = context_plan.Plan(
            Services(store, None), graph, QUESTION, Filters(), None, None, query_episodes
        )
        guides = plan._start_guides()
        assert guides is not None
        return [i.uuid for i in plan._guided([], guides.result())]

    assert guided() == ["answer"]
    assert guided("said") == []  # thread context: the query is that message itself


def test_a_templates_fact_slot_is_guided_within_its_limit_and_types(store: Store) -> None:
    graph = store.get(Graph, GRAPH)
    assert graph is not None
    plan = context_plan.Plan(Services(store, None), graph, QUESTION, Filters(), None, None)
    top = plan._slot("edge", Slot("edges", 3))
    assert len(top) == 3 and top[0].uuid == "answer"
    assert "answer" not in [i.uuid for i in plan._slot("edge", Slot("edges", 3, ("RELATES_TO",)))]
    assert [i.uuid for i in plan._slot("edge", Slot("edges", 3, ("ADOPTS",)))] == ["answer"]
