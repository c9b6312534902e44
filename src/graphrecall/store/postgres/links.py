"""Provenance links: which episodes mention a node, or support an edge or observation
(PostgreSQL; ``store/sqlite/links.py`` is SQLite's)."""

from __future__ import annotations

from collections.abc import Sequence

from graphrecall.domain.models import Record
from graphrecall.store.base import Provenance
from graphrecall.store.postgres import rows as rowmap
from graphrecall.store.postgres.connection import Database


class Links(Provenance):
    def __init__(self, db: Database) -> None:
        self.db = db

    def link_episodes(
        self, kind: type[Record], graph_uuid: str, uuid: str, episode_uuids: Sequence[str]
    ) -> None:
        with self.db.transaction():
            self.db.executemany(
                "INSERT INTO links (kind, graph_uuid, uuid, episode_uuid)"
                " VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                [(rowmap.table(kind), graph_uuid, uuid, ep) for ep in sorted(set(episode_uuids))],
            )

    def episodes_of(
        self,
        kind: type[Record],
        graph_uuid: str,
        uuids: Sequence[str],
        *,
        limit: int | None = None,
    ) -> dict[str, tuple[list[str], bool]]:
        found: dict[str, list[str]] = {u: [] for u in uuids}
        if uuids:
            for r in self.db.query(
                "SELECT uuid, episode_uuid FROM links WHERE graph_uuid = %s AND kind = %s"
                " AND uuid = ANY(%s) ORDER BY episode_uuid DESC",
                [graph_uuid, rowmap.table(kind), list(uuids)],
            ):
                found[r["uuid"]].append(r["episode_uuid"])
        out: dict[str, tuple[list[str], bool]] = {}
        for uuid, episodes in found.items():
            truncated = limit is not None and len(episodes) > limit
            out[uuid] = (episodes[:limit] if truncated else episodes, truncated)
        return out

    def linked_to_episodes(
        self, kind: type[Record], graph_uuid: str, episode_uuids: Sequence[str]
    ) -> list[str]:
        if not episode_uuids:
            return []
        rows = self.db.query(
            "SELECT DISTINCT uuid FROM links WHERE graph_uuid = %s AND kind = %s"
            " AND episode_uuid = ANY(%s)",
            [graph_uuid, rowmap.table(kind), list(episode_uuids)],
        )
        return [r["uuid"] for r in rows]

    def linked_by_episode(
        self, kind: type[Record], graph_uuid: str, episode_uuids: Sequence[str]
    ) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        if not episode_uuids:
            return out
        rows = self.db.query(
            "SELECT episode_uuid, uuid FROM links WHERE graph_uuid = %s AND kind = %s"
            " AND episode_uuid = ANY(%s)",
            [graph_uuid, rowmap.table(kind), list(episode_uuids)],
        )
        for r in rows:
            out.setdefault(r["episode_uuid"], []).append(r["uuid"])
        return out
