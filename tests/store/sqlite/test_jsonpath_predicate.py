"""``JsonPathMatch`` compiles to the registered ``gr_jsonpath`` function, which every
connection has: the main one and the pooled read-only ones."""

from __future__ import annotations

import threading
from pathlib import Path

from graphrecall.domain import predicates as p
from graphrecall.domain.models import Memory
from graphrecall.store import open_store

STAMP = "2026-01-01T00:00:00.000000Z"


def _memory(uuid: str, meta: dict[str, object]) -> Memory:
    return Memory(
        uuid=uuid,
        space_uuid="s",
        content=uuid,
        meta=meta,
        version_hash="0" * 32,
        created_at=STAMP,
    )


def test_jsonpath_match_on_main_and_pooled_connections(tmp_path: Path) -> None:
    store = open_store(tmp_path / "db.sqlite")
    try:
        store.insert(
            [
                _memory("a", {"kind": "note", "tags": ["x", "y"], "n": 1}),
                _memory("b", {"kind": "decision", "n": 5}),
                _memory("c", {}),
            ]
        )
        where = p.And(
            (p.JsonPathMatch("meta", "$.n > 0"), p.JsonPathMatch("meta", '$.tags == "y"'))
        )
        scope = {"space_uuid": "s"}
        assert [m.uuid for m in store.find(Memory, scope, where=where)] == ["a"]
        found: list[list[str]] = []

        def reader() -> None:  # another thread reads on a pooled connection
            hit = p.JsonPathMatch("meta", '$.kind starts with "dec" || !exists($.kind)')
            found.append([m.uuid for m in store.find(Memory, scope, where=hit)])

        thread = threading.Thread(target=reader)
        thread.start()
        thread.join()
        assert found == [["b", "c"]]
        assert store.count(Memory, scope, p.Not(p.JsonPathMatch("meta", "$.n == 1"))) == 2
    finally:
        store.close()
