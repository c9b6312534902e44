"""Which tasks a claim takes (store/queue.py's select_run), apart from any backend: the
conformance suite tests the same rule through both stores."""

from __future__ import annotations

from graphrecall.domain.models import Task
from graphrecall.store.queue import select_run

BATCHABLE = frozenset({"episode"})


def task(uuid: str, graph: str | None, kind: str = "episode", episodes: int = 1) -> Task:
    return Task(
        uuid=uuid,
        project_uuid="p",
        graph_uuid=graph,
        type=kind,
        payload={"episodes": ["e"] * episodes},
        created_at="2026-01-01T00:00:00.000000Z",
        updated_at="2026-01-01T00:00:00.000000Z",
    )


def uuids(run: list[Task]) -> list[str]:
    return [t.uuid for t in run]


def test_the_oldest_free_graph_leads_and_its_batchable_tasks_follow() -> None:
    pending = [task("1", "busy"), task("2", "g"), task("3", "h"), task("4", "g")]
    run = select_run(pending, {"busy"}, batchable=BATCHABLE, max_tasks=16, max_episodes=256)
    assert uuids(run) == ["2", "4"]


def test_a_task_not_taken_stops_the_run_in_the_graphs_order() -> None:
    pending = [task("1", "g"), task("2", "g", kind="summary"), task("3", "g")]
    run = select_run(pending, set(), batchable=BATCHABLE, max_tasks=16, max_episodes=256)
    assert uuids(run) == ["1"]


def test_the_run_stops_at_its_task_and_episode_limits() -> None:
    pending = [task(str(i), "g", episodes=2) for i in range(6)]
    by_tasks = select_run(pending, set(), batchable=BATCHABLE, max_tasks=3, max_episodes=256)
    assert uuids(by_tasks) == ["0", "1", "2"]
    by_episodes = select_run(pending, set(), batchable=BATCHABLE, max_tasks=16, max_episodes=5)
    assert uuids(by_episodes) == ["0", "1"]


def test_a_task_without_a_graph_or_of_another_kind_runs_alone() -> None:
    alone = [task("1", None), task("2", None)]
    run = select_run(alone, set(), batchable=BATCHABLE, max_tasks=16, max_episodes=256)
    assert uuids(run) == ["1"]
    other = [task("1", "g", kind="summary"), task("2", "g")]
    run = select_run(other, set(), batchable=BATCHABLE, max_tasks=16, max_episodes=256)
    assert uuids(run) == ["1"]


def test_nothing_when_every_graph_is_busy() -> None:
    pending = [task("1", "g"), task("2", "h")]
    run = select_run(pending, {"g", "h"}, batchable=BATCHABLE, max_tasks=16, max_episodes=256)
    assert run == []
