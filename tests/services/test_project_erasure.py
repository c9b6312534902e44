"""Deleting a whole project (services/project_erasure.py, ``graphrecall projects delete``):
every record of the tenant goes, and no copy of its text is left in any file graphrecall
wrote, while the server runs and after a clean stop, on each backend (the scans of
tests/services/test_erasure.py); another project loses nothing; the receipt names ids
and counts, never content; the deleted project's keys stop working."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from zep_cloud import AddMessage, BatchItemInput

from graphrecall.services.accounts.projects import CROSS_PROCESS_SECONDS
from tests import pg_server
from tests.conftest import API_KEY, Server, _free_port, wait_for_task
from tests.services.test_erasure import Backend, _canary, _says


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def backend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Backend]:
    db: Path | str = tmp_path_factory.mktemp("project") / "graphrecall.db"
    data_dir = None
    if request.param == "postgresql":
        db = pg_server.with_schema(pg_server.server_url(), f"p{uuid.uuid4().hex}")
        with psycopg.connect(pg_server.server_url(), autocommit=True) as conn:
            row = conn.execute("SHOW data_directory").fetchone()
        assert row is not None
        data_dir = Path(row[0])
    srv = Server(db, _free_port(), API_KEY).start()
    yield Backend(srv, db, data_dir)
    srv.stop()


def _cli(server: Server, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "graphrecall", "--db", str(server.db), *args],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _rpc(server: Server, key: str, slug: str, method: str, params: dict[str, Any]) -> Any:
    body = {"jsonrpc": "2.0", "method": method, "id": 1, "params": params}
    answer = httpx.post(
        f"http://127.0.0.1:{server.port}/api/v1/memory/rpc",
        json=body,
        headers={"Authorization": f"Bearer {key}", "X-Me-Space": slug},
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_a_deleted_project_leaves_no_copy_and_another_loses_nothing(backend: Backend) -> None:
    srv = backend.server
    doomed, kept = _canary("project"), _canary("kept")
    # The doomed tenant: a key, a space, a webhook endpoint nobody answers (its queued
    # events name the user), a user whose name and messages carry the word, a graph, a
    # memory with a history, a draft batch, a context template.
    _cli(srv, "webhooks", "set", "http://127.0.0.1:9/hook", "--project", "doomed")
    key = _cli(srv, "keys", "create", "--project", "doomed")
    slug = _cli(srv, "spaces", "create", "doomed space", "--project", "doomed")
    zep = srv.client(api_key=key)
    _says(
        zep,
        f"u{doomed}",
        doomed.capitalize(),
        [f"My friend {doomed.capitalize()} works at Initech in Berlin and says {doomed}."],
    )
    graph = zep.graph.create(name=f"graph {doomed}", description=f"about {doomed}")
    added = zep.graph.episode.add(graph.uuid_, data=f"{doomed.capitalize()} lives in Rome.")
    assert wait_for_task(zep, added.task.uuid_) == "succeeded"
    made = _rpc(srv, key, slug, "memory.create", {"content": f"{doomed} code", "tree": "/n"})
    changed = _rpc(
        srv,
        key,
        slug,
        "memory.update",
        {
            "id": made["result"]["id"],
            "versionHash": made["result"]["versionHash"],
            "content": f"{doomed} v2",
        },
    )
    assert changed["result"]["version"] == 2
    batch = zep.batch.create()
    zep.batch.add_items(
        batch.uuid_,
        items=[BatchItemInput(type="graph_episode", graph_uuid=graph.uuid_, data=f"{doomed} x")],
    )
    zep.context.create_template(name=f"t{doomed}", template=f"{doomed}:\n%{{edges}}")
    # Another tenant, kept throughout.
    other = srv.client()
    keep_user, keep_graph, _ = _says(
        other, "keeper", "Keeper", [f"Keeper keeps the {kept} ledger."]
    )
    thread = other.thread.create(user_uuid=keep_user)
    other.thread.add_messages(thread.uuid_, messages=[AddMessage(role="user", content="hello")])
    assert backend.copies(doomed) and backend.copies(kept)

    receipt = json.loads(_cli(srv, "projects", "delete", "doomed"))

    # Erased before the command returned: no waiting here, the server still running.
    assert backend.copies(doomed) == {}, "the project's text is still on disk"
    assert receipt["deleted"]["kind"] == "project" and receipt["erased_at"]
    assert {"graphs", "users", "memories", "api_keys", "projects"} <= set(receipt["tables"])
    counts = receipt["deleted"]["counts"]
    assert counts["graphs"] == 2 and counts["User"] == 1 and counts["Memory"] == 1
    assert counts["ApiKey"] == 1 and counts["Space"] == 1
    assert doomed not in json.dumps(receipt)
    assert "doomed" not in _cli(srv, "projects", "list")
    # The deleted project's key is refused once the server's key cache has moved on.
    time.sleep(CROSS_PROCESS_SECONDS + 0.5)
    refused = httpx.get(
        f"{srv.base_url}/users/u{doomed}", headers={"Authorization": f"Api-Key {key}"}
    )
    assert refused.status_code == 401, refused.text
    # The other tenant lost nothing.
    assert other.user.get(keep_user).user_id == "keeper"
    found = other.graph.search_episodes(keep_graph, query=kept).items
    assert found and kept in found[0].content
    assert backend.copies(kept)

    srv.stop()
    try:
        assert backend.copies(doomed) == {}, "a clean stop wrote the project's text again"
        assert backend.copies(kept)
    finally:
        srv.start()


def test_an_unknown_project_is_one_line_and_exit_1(backend: Backend) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "graphrecall",
            "--db",
            str(backend.server.db),
            "projects",
            "delete",
            "nope",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert done.stderr.strip() == "graphrecall: project not found: nope"
