"""get_context through the real SDK: the block, the budget, selection ranks, relative time,
recency bias, filters, context templates and thread context."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from zep_cloud import AddMessage, EdgeInput, EdgeNodeRef, NodeInput, Zep
from zep_cloud.errors import BadRequestError, NotFoundError

from tests.conftest import wait_for_task
from tests.inprocess import InProcess

UNKNOWN = "0190f0f0-0000-7000-8000-000000000000"
QUERY = "Where does Alice live and work, and what does she drink?"
FACTS_HEADER = "Facts (with the dates they held, in UTC):"


@dataclass
class World:
    graph: str
    nodes: dict[str, str]
    edges: dict[str, str]
    observation: str
    summary: str


NODES = {
    "Alice": ("Person", "Alice is a senior engineer who loves mornings."),
    "Bob": ("Person", "Bob is a salesman and Alice's friend."),
    "Acme": ("Organization", "Acme builds rockets."),
    "Globex": ("Organization", "Globex sells software."),
    "Berlin": ("Location", "Berlin is the capital of Germany."),
    "Paris": ("Location", "Paris is the capital of France."),
    "Green tea": ("Food", "A tea made from unoxidised leaves."),
}
FACTS = [
    # (source, name, target, fact, valid_at, invalid_at)
    ("Alice", "WORKS_AT", "Acme", "Alice works at Acme as a senior engineer", "2021-03-01", None),
    ("Alice", "LIVES_IN", "Berlin", "Alice lived in Berlin", "2019-06-01", "2024-04-01"),
    ("Alice", "LIVES_IN", "Paris", "Alice moved to Paris", "2024-04-01", None),
    ("Alice", "LIKES", "Green tea", "Alice drinks green tea every morning", None, None),
    ("Bob", "WORKS_AT", "Globex", "Bob works at Globex in sales", "2022-01-15", None),
    ("Bob", "FRIEND_OF", "Alice", "Bob is a close friend of Alice", None, None),
]
OBSERVATION = "Alice starts every day with green tea before work."
SUMMARY = "Alice and Bob discussed Alice's move from Berlin to Paris and her job at Acme."


def _iso(day: str | None) -> str | None:
    return f"{day}T00:00:00Z" if day else None


def add_graph_items(
    zep: Zep,
    graph: str,
    nodes: dict[str, tuple[str, str]],
    facts: list[tuple[str, str, str, str, str | None, str | None]],
) -> tuple[dict[str, str], dict[str, str]]:
    added = zep.graph.node.add(
        graph,
        nodes=[NodeInput(name=n, label=label, summary=s) for n, (label, s) in nodes.items()],
    )
    node_ids = {n.name: n.uuid_ for n in added.nodes}
    edges = zep.graph.edge.add(
        graph,
        edges=[
            EdgeInput(
                fact=fact,
                fact_name=name,
                source_node=EdgeNodeRef(uuid_=node_ids[src]),
                target_node=EdgeNodeRef(uuid_=node_ids[dst]),
                valid_at=valid if valid is None or "T" in valid else _iso(valid),
                invalid_at=invalid if invalid is None or "T" in invalid else _iso(invalid),
            )
            for src, name, dst, fact, valid, invalid in facts
        ],
    )
    wait_for_task(zep, added.task.uuid_)
    wait_for_task(zep, edges.task.uuid_)
    return node_ids, {e.fact: e.uuid_ for e in edges.edges}


def insert_derived(
    server: InProcess, graph: str, observation: str, summary: str
) -> tuple[str, str]:
    """Observations and thread summaries come from the ingestion pipeline; here the store
    writes one of each (with their vectors), as the pipeline would."""
    from graphrecall.domain.ids import new_id
    from graphrecall.domain.models import Episode, Observation, ThreadSummary
    from graphrecall.graph_model.embedding import embed_records
    from graphrecall.ml.embedder import MiniLMEmbedder
    from graphrecall.store import open_store

    stamp = "2026-01-10T09:00:00.000000Z"
    obs = Observation(
        uuid=new_id(),
        graph_uuid=graph,
        name="Morning routine",
        labels=["Pattern"],
        summary=observation,
        created_at=stamp,
        updated_at=stamp,
    )
    ts = ThreadSummary(
        uuid=new_id(),
        graph_uuid=graph,
        thread_uuid=new_id(),
        summary=summary,
        created_at=stamp,
        last_summarized_at=stamp,
        last_summarized_episode_valid_at="2026-01-09T18:30:00.000000Z",
    )
    store = open_store(server.db)
    try:
        store.insert([obs, ts])
        episodes = store.find(Episode, {"graph_uuid": graph}, limit=1)
        if episodes:
            store.link_episodes(Observation, graph, obs.uuid, [episodes[0].uuid])
        embedder = MiniLMEmbedder()
        embed_records(store, embedder, [obs])
        embed_records(store, embedder, [ts])
    finally:
        store.close()
    return obs.uuid, ts.uuid


@pytest.fixture(scope="module")
def world(zep: Zep, server: InProcess) -> World:
    graph = zep.graph.create(name="context-world", time_zone="UTC").uuid_
    nodes, edges = add_graph_items(zep, graph, NODES, FACTS)
    # An episode for the observation's provenance. It states no fact, so the summaries
    # written above stay as written (a document's "she drinks ..." is now read as a fact
    # about Alice, which would rewrite her summary from her facts).
    episode = zep.graph.episode.add(graph, data="Alice said good morning.")
    wait_for_task(zep, episode.task.uuid_)
    observation, summary = insert_derived(server, graph, OBSERVATION, SUMMARY)
    return World(graph, nodes, edges, observation, summary)


def block_lines(results: Any) -> list[tuple[int, str]]:
    """(selection_rank, the start of the item's line in the block) for every result."""
    out: list[tuple[int, str]] = []
    for e in results.edges:
        out.append((e.selection_rank, f"- {e.fact}"))
    for n in results.nodes:
        labels = [label for label in n.labels if label != "Entity"]
        head = f"{n.name} ({', '.join(labels)})" if labels else n.name
        out.append((n.selection_rank, f"- {head}: {n.summary}" if n.summary else f"- {head}"))
    for o in results.observations:
        out.append((o.selection_rank, f"- {o.name}: {o.summary}"))
    for t in results.thread_summaries:
        out.append((t.selection_rank, f"- {t.summary} (conversation up to"))
    return out


def assert_ranks_follow_the_block(context: str, results: Any) -> None:
    assert results.episodes == []
    lines = sorted(block_lines(results))
    assert [rank for rank, _ in lines] == list(range(1, len(lines) + 1))
    positions = [context.index("\n" + text) for _, text in lines]
    assert positions == sorted(positions)
    # every item line of the block is a selected result
    item_lines = [line for line in context.splitlines() if line.startswith("- ")]
    assert len(item_lines) == len(lines)


# -- the block -----------------------------------------------------------------------------


def test_the_block_has_dated_facts_entities_observations_and_summaries(
    zep: Zep, world: World
) -> None:
    result = zep.graph.get_context(world.graph, query=QUERY)
    assert result.results is None
    assert result.truncated is False
    context = result.context
    assert FACTS_HEADER in context
    assert "- Alice works at Acme as a senior engineer (since 2021-03-01)" in context
    assert "- Alice lived in Berlin (2019-06-01 to 2024-04-01)" in context
    assert "- Alice drinks green tea every morning\n" in context + "\n"
    assert "Entities:\n" in context
    assert "- Alice (Person): Alice is a senior engineer who loves mornings." in context
    assert f"Observations:\n- Morning routine: {OBSERVATION}" in context
    assert f"Thread summaries:\n- {SUMMARY} (conversation up to 2026-01-09 18:30)" in context
    assert "Evidence restricted" not in context


def test_selection_ranks_follow_the_block_and_results_are_typed(zep: Zep, world: World) -> None:
    result = zep.graph.get_context(world.graph, query=QUERY, include_results=True)
    results = result.results
    assert results is not None
    assert_ranks_follow_the_block(result.context, results)
    assert {e.uuid_ for e in results.edges} == set(world.edges.values())
    assert {o.uuid_ for o in results.observations} == {world.observation}
    assert {t.uuid_ for t in results.thread_summaries} == {world.summary}
    for edge in results.edges:
        assert edge.graph_uuid == world.graph and edge.source_node_name
        assert edge.score is not None and 0 <= (edge.relevance or 0) <= 1
    for node in results.nodes:
        assert node.episode_uuids_truncated is False and isinstance(node.episode_uuids, list)
    assert results.observations[0].episode_uuids  # provenance is carried
    # the sections come in a fixed order (facts first), so rank 1 is the best fact
    best = max(results.edges, key=lambda item: item.score or 0)
    assert best.selection_rank == 1
    headers = [line for line in result.context.splitlines() if line.endswith(":")]
    assert headers == [FACTS_HEADER, "Entities:", "Observations:", "Thread summaries:"]


def test_no_budget_is_exceeded_and_truncated_says_when_it_cut(zep: Zep, world: World) -> None:
    full = zep.graph.get_context(world.graph, query=QUERY, max_characters=50_000)
    assert not full.truncated
    size = len(full.context)
    budgets = sorted(
        {1, 2, 7, 30, 45, 80, 120, 200, 333, 500, 777, size - 1, size, size + 1, 2500, 50_000}
        | set(range(1, size + 40, 53))
    )
    for budget in budgets:
        result = zep.graph.get_context(
            world.graph, query=QUERY, max_characters=budget, include_results=True
        )
        assert len(result.context) <= budget
        assert result.truncated == (size > budget), budget
        if not result.truncated:
            assert result.context == full.context
        assert result.results is not None
        assert_ranks_follow_the_block(result.context, result.results)


def test_the_default_budget_is_2500_characters(zep: Zep) -> None:
    graph = zep.graph.create(name="context-big", time_zone="UTC").uuid_
    nodes = {
        f"Person {i}": ("Person", f"Person {i} collects stamps from country {i}.")
        for i in range(30)
    }
    facts = [
        (
            f"Person {i}",
            "KNOWS",
            f"Person {(i + 1) % 30}",
            f"Person {i} has known Person {(i + 1) % 30} since school and they collect stamps",
            "2020-01-01",
            None,
        )
        for i in range(30)
    ]
    add_graph_items(zep, graph, nodes, facts)
    result = zep.graph.get_context(graph, query="Who collects stamps?")
    assert 2000 < len(result.context) <= 2500
    assert result.truncated is True


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [
        ({"max_characters": 0}, "max_characters"),
        ({"max_characters": -5}, "max_characters"),
        ({"max_characters": 50_001}, "max_characters"),
        ({"recency_bias": "sometimes"}, "recency_bias"),
        ({"query": "   "}, "query"),
        ({"filters": {"edge_uuids": ["nope"]}}, "filters.edge_uuids[0]"),
        ({"filters": {"no_such_filter": True}}, "filters.no_such_filter"),
        ({"template_uuid": "not-a-uuid"}, "template_uuid"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(
    zep: Zep, world: World, kwargs: dict[str, Any], param: str
) -> None:
    args: dict[str, Any] = {"query": QUERY, **kwargs}
    with pytest.raises(BadRequestError) as info:
        zep.graph.get_context(world.graph, **args)
    assert info.value.body.error.param == param


def test_unknown_graph_and_template_are_404(zep: Zep, world: World) -> None:
    with pytest.raises(NotFoundError):
        zep.graph.get_context(UNKNOWN, query=QUERY)
    with pytest.raises(NotFoundError) as info:
        zep.graph.get_context(world.graph, query=QUERY, template_uuid=UNKNOWN)
    assert info.value.body.error.param == "template_uuid"


# -- filters and recency -------------------------------------------------------------------


def test_edge_filters_restrict_facts_and_their_entities(zep: Zep, world: World) -> None:
    result = zep.graph.get_context(
        world.graph,
        query=QUERY,
        filters={"edge_types": ["WORKS_AT"]},
        include_results=True,
        max_characters=50_000,
    )
    results = result.results
    assert results is not None
    assert {e.name for e in results.edges} == {"WORKS_AT"}
    ends = {e.source_node_uuid for e in results.edges} | {e.target_node_uuid for e in results.edges}
    assert results.nodes and {n.uuid_ for n in results.nodes} <= ends
    # observation search honours no filter, so nothing unfiltered is slipped in
    assert results.observations == [] and results.thread_summaries == []


def test_node_label_filters_restrict_entities(zep: Zep, world: World) -> None:
    result = zep.graph.get_context(
        world.graph,
        query=QUERY,
        filters={"node_labels": ["Person"]},
        include_results=True,
        max_characters=50_000,
    )
    assert result.results is not None
    assert result.results.nodes
    assert all("Person" in n.labels for n in result.results.nodes)


def test_recency_bias_favours_newer_facts(zep: Zep) -> None:
    graph = zep.graph.create(name="context-recency", time_zone="UTC").uuid_
    nodes = {
        "Dana": ("Person", "Dana."),
        "Oslo": ("Location", "Oslo."),
        "Rome": ("Location", "Rome."),
    }
    facts = [
        (
            "Dana",
            "LIVES_IN",
            "Oslo",
            "Dana lives in Oslo and loves living there",
            "2015-01-01",
            None,
        ),
        ("Dana", "LIVES_IN", "Rome", "Dana settled in Rome", "2026-01-01", None),
    ]
    _, edges = add_graph_items(zep, graph, nodes, facts)
    old, new = edges[facts[0][3]], edges[facts[1][3]]

    def ranks(bias: str | None) -> dict[str, int]:
        kwargs: dict[str, Any] = {"recency_bias": bias} if bias else {}
        result = zep.graph.get_context(
            graph, query="Where does Dana live?", include_results=True, **kwargs
        )
        assert result.results is not None
        return {e.uuid_: e.selection_rank for e in result.results.edges}

    plain, off, strong = ranks(None), ranks("off"), ranks("strong")
    assert plain == off
    assert plain[old] < plain[new]  # the better textual match wins without bias
    assert strong[new] < strong[old]  # ... and loses to a much newer fact with it


# -- relative time -------------------------------------------------------------------------


def yesterday_utc(tz: str) -> tuple[datetime, datetime]:
    zone = ZoneInfo(tz)
    today = datetime.now(zone).date()
    start = datetime.combine(today - timedelta(days=1), time(), zone).astimezone(UTC)
    end = datetime.combine(today, time(), zone).astimezone(UTC)
    return start, end


def z(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def timed_graph(zep: Zep, tz: str) -> tuple[str, dict[str, datetime]]:
    """A graph whose facts became true 1, 4, 7, ... 70 hours ago, plus one undated fact
    (recorded now) and one that stopped being true 30 hours ago."""
    graph = zep.graph.create(name=f"context-time-{tz}", time_zone=tz).uuid_
    now = datetime.now(UTC).replace(microsecond=0)
    when = {f"Event {h} happened": now - timedelta(hours=h) for h in range(1, 72, 3)}
    facts: list[tuple[str, str, str, str, str | None, str | None]] = [
        ("Team", "HAD_EVENT", "Calendar", fact, z(at), None) for fact, at in when.items()
    ]
    facts.append(("Team", "HAD_EVENT", "Calendar", "An undated event happened", None, None))
    ended = now - timedelta(hours=30)
    facts.append(
        ("Team", "USED", "Calendar", "The team used the old calendar", "2001-01-01", z(ended))
    )
    nodes = {"Team": ("Group", "The team."), "Calendar": ("Thing", "The team calendar.")}
    add_graph_items(zep, graph, nodes, facts)
    when["The team used the old calendar"] = ended
    return graph, when


@pytest.mark.parametrize("tz", ["Pacific/Kiritimati", "Pacific/Pago_Pago", "Asia/Kolkata"])
def test_yesterday_restricts_facts_to_the_graphs_day(zep: Zep, tz: str) -> None:
    graph, when = timed_graph(zep, tz)
    for _ in range(2):  # once more if local midnight passed during the call
        start, end = yesterday_utc(tz)
        result = zep.graph.get_context(
            graph, query="What happened yesterday?", include_results=True, max_characters=50_000
        )
        if yesterday_utc(tz) == (start, end):
            break
    assert result.results is not None
    expected = {fact for fact, at in when.items() if start <= at < end}
    assert expected  # the fixture always has facts in any 24 hours of the last 70
    assert {e.fact for e in result.results.edges} == expected
    notice = f"Evidence restricted to [{z(start)}, {z(end)}) UTC"
    assert result.context.startswith(notice)
    assert f'"yesterday" in time zone {tz}.' in result.context.splitlines()[0]
    ends = {e.source_node_uuid for e in result.results.edges}
    ends |= {e.target_node_uuid for e in result.results.edges}
    assert {n.uuid_ for n in result.results.nodes} <= ends


def test_a_date_filter_from_the_caller_wins(zep: Zep) -> None:
    graph, when = timed_graph(zep, "UTC")
    since = datetime.now(UTC) - timedelta(hours=12)
    result = zep.graph.get_context(
        graph,
        query="What happened yesterday?",
        include_results=True,
        max_characters=50_000,
        filters={
            "date_filters": {
                "any_of": [
                    {"all_of": [{"field": "valid_at", "operator": "gte", "value": z(since)}]}
                ]
            }
        },
    )
    assert "Evidence restricted" not in result.context
    assert result.results is not None
    assert {e.fact for e in result.results.edges} == {f for f, at in when.items() if at >= since}


@pytest.mark.parametrize(
    "query",
    [
        'Who sang the song "Yesterday"?',
        "Who recorded Yesterday by the Beatles?",
        "What happened during her last week at Acme?",
    ],
)
def test_a_date_word_in_another_sense_does_not_restrict(zep: Zep, query: str) -> None:
    graph = zep.graph.create(name="context-songs", time_zone="UTC").uuid_
    nodes = {"The Beatles": ("Band", "A band from Liverpool."), "Yesterday": ("Song", "A song.")}
    facts = [
        (
            "The Beatles",
            "RECORDED",
            "Yesterday",
            "The Beatles recorded Yesterday",
            "1965-06-14",
            None,
        )
    ]
    add_graph_items(zep, graph, nodes, facts)
    result = zep.graph.get_context(graph, query=query, include_results=True)
    assert "Evidence restricted" not in result.context
    assert result.results is not None
    assert [e.fact for e in result.results.edges] == ["The Beatles recorded Yesterday"]


def test_the_window_uses_user_then_graph_then_project_zone(
    make_app: Callable[..., InProcess],
) -> None:
    zep = make_app().client()

    def zone_of(graph: str) -> str:
        context = zep.graph.get_context(graph, query="What happened yesterday?").context
        found = re.search(r"in time zone (\S+)\.$", context.splitlines()[0])
        assert found is not None, context
        return found.group(1)

    plain = zep.graph.create(name="no zone").uuid_
    assert zone_of(plain) == "UTC"
    zep.project.update(default_time_zone="Asia/Tokyo")
    assert zone_of(plain) == "Asia/Tokyo"
    assert zone_of(zep.graph.create(name="zoned", time_zone="Europe/Paris").uuid_) == (
        "Europe/Paris"
    )
    user = zep.user.create(first_name="Zed", time_zone="America/Los_Angeles")
    assert zone_of(user.uuid_) == "America/Los_Angeles"
    zep.user.update(user.uuid_, time_zone="Australia/Sydney")
    assert zone_of(user.graph_uuid) == "Australia/Sydney"


# -- context templates ---------------------------------------------------------------------


def test_context_template_crud(zep: Zep) -> None:
    created = zep.context.create_template(name="crud-template", template="FACTS:\n%{edges}")
    assert created.uuid_ and created.name == "crud-template" and created.created_at
    assert zep.context.get_template(created.uuid_).template == "FACTS:\n%{edges}"
    listed = list(zep.context.list_templates(name="crud-template"))
    assert [t.uuid_ for t in listed] == [created.uuid_]
    assert created.uuid_ in {t.uuid_ for t in zep.context.list_templates()}
    updated = zep.context.update_template(created.uuid_, template="%{entities limit=2}")
    assert updated.name == "crud-template" and updated.template == "%{entities limit=2}"
    renamed = zep.context.update_template(created.uuid_, name="crud-renamed")
    assert renamed.name == "crud-renamed" and renamed.template == "%{entities limit=2}"
    with pytest.raises(BadRequestError) as taken:  # a 400: the SDK retries 409s
        zep.context.create_template(name="crud-renamed", template="%{edges}")
    assert taken.value.body.error.param == "name"
    assert zep.context.delete_template(created.uuid_) is None
    with pytest.raises(NotFoundError):
        zep.context.get_template(created.uuid_)
    with pytest.raises(NotFoundError):
        zep.context.delete_template(created.uuid_)


@pytest.mark.parametrize(
    ("kwargs", "param", "message"),
    [
        ({"template": "%{edges}"}, "name", "required"),
        ({"name": "t-missing"}, "template", "required"),
        ({"name": "t-unknown", "template": "%{memories}"}, "template", "unknown variable"),
        ({"name": "t-open", "template": "FACTS %{edges limit=3"}, "template", "never closed"),
        ({"name": "t-limit", "template": "%{edges limit=5000}"}, "template", "limit"),
        (
            {"name": "t-cost", "template": "%{edges limit=150} %{entities limit=100}"},
            "template",
            "at most 200 items",
        ),
        ({"name": "t-slots", "template": "%{episodes limit=1}" * 21}, "template", "at most 20"),
        ({"name": "", "template": "%{edges}"}, "name", "name"),
    ],
)
def test_bad_templates_are_rejected(
    zep: Zep, kwargs: dict[str, str], param: str, message: str
) -> None:
    with pytest.raises(BadRequestError) as info:
        zep.context.create_template(**kwargs)
    assert info.value.body.error.param == param
    assert message in (info.value.body.error.message or "")


def test_a_template_renders_its_sections_and_limits(zep: Zep, world: World) -> None:
    template = zep.context.create_template(
        name="render-template",
        template=(
            "# JOBS\n%{edges limit=2 types=[WORKS_AT] include_attributes=true}\n"
            "# PEOPLE\n%{entities limit=1 types=[Person]}\n"
            "# HABITS\n%{observations limit=1}\n# DONE 100%%"
        ),
    )
    result = zep.graph.get_context(
        world.graph, query=QUERY, template_uuid=template.uuid_, include_results=True
    )
    context = result.context
    jobs, rest = context.removeprefix("# JOBS\n").split("\n# PEOPLE\n")
    people, rest = rest.split("\n# HABITS\n")
    habits, done = rest.split("\n# DONE 100%")
    assert done == ""
    assert context.startswith("# JOBS\n")
    job_lines = jobs.splitlines()
    assert len(job_lines) == 2
    assert {line.split(" (since")[0] for line in job_lines} == {
        "- Alice works at Acme as a senior engineer",
        "- Bob works at Globex in sales",
    }
    assert people.count("\n") == 0 and people.startswith("- ") and "(Person" in people
    assert habits == f"- Morning routine: {OBSERVATION}"
    assert result.results is not None
    assert {e.name for e in result.results.edges} == {"WORKS_AT"}
    assert_ranks_follow_the_block("\n" + context, result.results)
    tight = zep.graph.get_context(
        world.graph, query=QUERY, template_uuid=template.uuid_, max_characters=60
    )
    assert len(tight.context) <= 60 and tight.truncated


def test_a_template_can_show_the_user_summary_and_episodes(zep: Zep) -> None:
    user = zep.user.create(first_name="Fay", time_zone="UTC")
    node = zep.user.get_node(user.uuid_)
    zep.graph.node.update(user.graph_uuid, node.uuid_, summary="Fay is a marine biologist.")
    thread = zep.thread.create(user_uuid=user.uuid_)
    added = zep.thread.add_messages(
        thread.uuid_,
        messages=[AddMessage(role="user", name="Fay", content="I study coral reefs near Cairns.")],
        ignore_roles=["user"],
    )
    wait_for_task(zep, added.task.uuid_)
    template = zep.context.create_template(
        name="profile-template", template="PROFILE: %{user_summary}\nSAID:\n%{episodes limit=1}"
    )
    result = zep.graph.get_context(
        user.graph_uuid, query="coral reefs", template_uuid=template.uuid_, include_results=True
    )
    assert result.results is not None
    assert [(e.content, e.selection_rank) for e in result.results.episodes] == [
        ("I study coral reefs near Cairns.", 1)
    ]
    stamp = result.results.episodes[0].reference_time
    assert stamp is not None
    shown = stamp[:10] if stamp[11:16] == "00:00" else f"{stamp[:10]} {stamp[11:16]}"
    assert result.context == (
        f"PROFILE: Fay is a marine biologist.\nSAID:\n- [{shown}] Fay: I study coral reefs near"
        " Cairns."
    )


# -- thread context ------------------------------------------------------------------------


def test_thread_context_and_add_messages_return_context(zep: Zep) -> None:
    user = zep.user.create(first_name="Erin", time_zone="UTC")
    nodes = {"Erin": ("Person", "Erin is a pilot."), "Lufthansa": ("Organization", "An airline.")}
    facts = [("Erin", "FLIES_FOR", "Lufthansa", "Erin flies for Lufthansa", "2020-05-01", None)]
    add_graph_items(zep, user.graph_uuid, nodes, facts)
    thread = zep.thread.create(user_uuid=user.uuid_)
    assert zep.thread.get_context(thread.uuid_).context == ""  # no messages, no query

    added = zep.thread.add_messages(
        thread.uuid_,
        messages=[AddMessage(role="user", name="Erin", content="Which airline do I fly for?")],
        ignore_roles=["user", "assistant"],  # keep extraction out of this test's graph
        return_context=True,
    )
    assert added.context is not None
    assert "- Erin flies for Lufthansa (since 2020-05-01)" in added.context
    without = zep.thread.add_messages(
        thread.uuid_,
        messages=[AddMessage(role="assistant", content="Let me check.")],
        ignore_roles=["user", "assistant"],
    )
    assert without.context is None
    wait_for_task(zep, added.task.uuid_)
    wait_for_task(zep, without.task.uuid_)

    context = zep.thread.get_context(thread.uuid_).context
    assert context is not None and len(context) <= 2500
    assert "Erin flies for Lufthansa" in context

    template = zep.context.create_template(
        name="thread-template", template="JOB: %{edges limit=1 types=[FLIES_FOR]}"
    )
    templated = zep.thread.get_context(thread.uuid_, template_uuid=template.uuid_).context
    assert templated == "JOB: - Erin flies for Lufthansa (since 2020-05-01)"
    with pytest.raises(NotFoundError):
        zep.thread.get_context(thread.uuid_, template_uuid=UNKNOWN)
    with pytest.raises(NotFoundError):
        zep.thread.get_context(UNKNOWN)
