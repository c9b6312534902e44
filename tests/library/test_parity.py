"""One scenario twice: through the real zep-cloud SDK against a served graphrecall, and
through the in-process library on a database of its own. The same method names and
arguments give the same results, field for field (ids and creation times aside)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from zep_cloud import Zep
from zep_cloud.errors import BadRequestError, NotFoundError

from graphrecall import GraphRecall
from graphrecall.domain.errors import BadRequest, NotFound
from tests.inprocess import InProcess

# Fields that differ between two databases by construction.
VOLATILE = {
    "uuid",
    "graph_uuid",
    "user_uuid",
    "thread_uuid",
    "thread_id",
    "source_node_uuid",
    "target_node_uuid",
    "episode_uuids",
    "created_at",
    "updated_at",
    "started_at",
    "completed_at",
    "last_summarized_at",
}
MESSAGES = [
    {
        "role": "user",
        "name": "Maya",
        "content": "I moved to Lisbon in March and I work at Nordlicht as a data engineer.",
        "reference_time": "2025-05-02T09:00:00Z",
    },
    {
        "role": "assistant",
        "name": "Helper",
        "content": "Lisbon is lovely. How is the new job at Nordlicht?",
        "reference_time": "2025-05-02T09:00:05Z",
    },
    {
        "role": "user",
        "name": "Maya",
        "content": "Great. My sister Ines visits me in Lisbon every summer; she plays the cello.",
        "reference_time": "2025-05-02T09:01:00Z",
    },
]


def stable(record: Any) -> Any:
    """A result as plain data by its wire names, less what differs by construction."""
    if hasattr(record, "model_dump"):
        record = record.model_dump(by_alias=True, exclude_none=True, mode="json")
    if isinstance(record, dict):
        return {k: stable(v) for k, v in record.items() if k not in VOLATILE}
    if isinstance(record, list):
        return [stable(v) for v in record]
    return record


def by_content(items: list[Any], key: str) -> list[Any]:
    """Rows with equal scores may come in either order (ties break on ids); compare them
    sorted."""
    rows = [stable(i) for i in items]
    return sorted(rows, key=lambda r: (str(r.get(key, "")), json.dumps(r, sort_keys=True)))


def sdk_wait(zep: Zep, task_uuid: str) -> str:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status = str(zep.task.get(task_uuid).status)
        if status in ("succeeded", "partial", "failed"):
            return status
        time.sleep(0.05)
    raise AssertionError("task did not finish")


def scenario(client: Any, wait: Callable[[str], str], user_id: str) -> tuple[dict[str, Any], Any]:
    """The same calls, by the SDK's names, on either client; returns what each gave."""
    out: dict[str, Any] = {}
    user = client.user.create(user_id=user_id, first_name="Maya", metadata={"plan": "pro"})
    out["user"] = stable(user)
    thread = client.thread.create(user_uuid=user.uuid_)
    out["thread"] = stable(thread)
    added = client.thread.add_messages(thread.uuid_, messages=MESSAGES)
    out["added"] = stable(added.messages)
    out["task"] = wait(added.task.uuid_)
    graph = user.graph_uuid
    out["messages"] = stable(list(client.thread.list_messages(thread.uuid_)))
    out["episodes"] = stable(list(client.graph.episode.list(graph)))
    out["edges"] = by_content(list(client.graph.edge.list(graph)), "fact")
    out["nodes"] = by_content(list(client.graph.node.list(graph)), "name")
    for reranker in ("rrf", "mmr", "cross_encoder"):
        lambda_ = 0.5 if reranker == "mmr" else None
        found = client.graph.search_edges(
            graph, query="Where does Maya work?", reranker=reranker, mmr_lambda=lambda_
        )
        out[f"search_edges_{reranker}"] = by_content(found.items, "fact")
    out["search_nodes"] = by_content(
        client.graph.search_nodes(graph, query="Maya's sister", page_size=5).items, "name"
    )
    out["search_episodes"] = by_content(
        client.graph.search_episodes(graph, query="cello summer").items, "content"
    )
    filtered = client.graph.search_edges(
        graph, query="Lisbon", filters={"edge_types": ["LIVES_IN", "MOVED_TO"]}
    )
    out["search_filtered"] = by_content(filtered.items, "fact")
    context = client.graph.get_context(graph, query="Maya's family", include_results=True)
    out["context_lines"] = sorted(context.context.splitlines())
    out["context_results"] = {
        kind: by_content(getattr(context.results, kind), "selection_rank")
        for kind in ("edges", "nodes", "episodes", "observations", "thread_summaries")
    }
    out["thread_context_lines"] = sorted(
        client.thread.get_context(thread.uuid_).context.splitlines()
    )
    out["user_node"] = stable(client.user.get_node(user.uuid_))
    out["looked_up"] = stable(client.user.lookup(user_id=user_id))
    out["page"] = [stable(u) for u in client.user.list(page_size=1, search=user_id).items]
    return out, (graph, thread.uuid_)


@pytest.fixture()
def library(tmp_path: Path) -> Iterator[GraphRecall]:
    with GraphRecall(tmp_path / "library.db") as gr:
        yield gr


def test_the_library_gives_what_the_sdk_gives(
    make_app: Callable[..., InProcess], library: GraphRecall
) -> None:
    # An app of its own: ranking statistics (BM25 document frequencies) span a database,
    # so both sides must hold the same records.
    zep = make_app().client()
    over_http, _ = scenario(zep, lambda uuid: sdk_wait(zep, uuid), "parity-maya")
    in_process, _ = scenario(library, lambda uuid: library.wait(uuid).status, "parity-maya")
    assert over_http["task"] == "succeeded"
    assert over_http["edges"], "the scenario should have made facts"
    differ = [key for key in over_http if in_process[key] != over_http[key]]
    assert not differ, {key: (in_process[key], over_http[key]) for key in differ}


def test_errors_name_the_same_field(zep: Zep, library: GraphRecall) -> None:
    bad = [{"role": "narrator", "content": "x"}]
    user = zep.user.create(user_id="parity-errors")
    thread = zep.thread.create(user_uuid=user.uuid_)
    with pytest.raises(BadRequestError) as over_http:
        zep.thread.add_messages(thread.uuid_, messages=bad)
    mine = library.thread.create(user_uuid=library.user.create(user_id="parity-errors").uuid_)
    with pytest.raises(BadRequest) as in_process:
        library.thread.add_messages(mine.uuid_, messages=bad)
    assert in_process.value.param == over_http.value.body.error.param == "messages[0].role"

    missing = "0190f0f0-0000-7000-8000-000000000000"
    with pytest.raises(NotFoundError) as sdk_missing:
        zep.graph.get(missing)
    with pytest.raises(NotFound) as lib_missing:
        library.graph.get(missing)
    assert lib_missing.value.message == sdk_missing.value.body.error.message


def test_pages_iterate_like_the_sdk_pager(library: GraphRecall) -> None:
    for n in range(5):
        library.user.create(user_id=f"pager-{n}")
    first = library.user.list(page_size=2)
    assert len(first.items) == 2 and first.has_next
    assert [u.user_id for u in first] == [u.user_id for u in library.user.list(page_size=100)]
    second = first.next_page()
    assert second is not None and second.items[0].uuid != first.items[0].uuid


def test_wait_accepts_a_result_a_task_or_its_uuid(library: GraphRecall) -> None:
    graph = library.graph.create(name="waits")
    added = library.graph.episode.add(graph.uuid_, data="Otto repairs bicycles in Graz.")
    done = library.wait(added, timeout=120)
    assert done.status == "succeeded"
    assert library.wait(done).uuid == library.wait(done.uuid).uuid == added.task.uuid
    with pytest.raises(TypeError):
        library.wait(42)


def test_memory_engine_operations_in_process(library: GraphRecall) -> None:
    made = library.memory.create(
        "Postgres ltree makes path queries fast.", tree="/notes/db", name="ltree"
    )
    assert made.tree == "/notes/db" and made.version == 1
    assert library.memory.get_by_path("/notes/db/ltree").id == made.id
    changed = library.memory.update(made.id, version_hash=made.versionHash, name=None)
    assert changed.name is None and changed.version == 2
    assert library.memory.search(fulltext="ltree").results[0].id == made.id
    assert [n.path for n in library.memory.tree().nodes] == ["/notes", "/notes/db"]
    assert library.memory.count_tree("/notes") == 1
    assert library.memory.copy("/notes", "/archive", dry_run=True) == 1
    with pytest.raises(BadRequest) as bad:
        library.memory.create("x", tree="/bad tree")
    assert bad.value.param == "tree"
    assert library.memory.delete(made.id) is True


def test_the_readme_library_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readme = Path(__file__).resolve().parents[2] / "README.md"
    blocks = re.findall(r"```python\n(.*?)```", readme.read_text(), flags=re.S)
    example = next(b for b in blocks if "GraphRecall(" in b)
    monkeypatch.chdir(tmp_path)  # its memory.db goes here
    exec(compile(example, "README library example", "exec"), {})
    assert (tmp_path / "memory.db").exists()
