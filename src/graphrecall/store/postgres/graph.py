"""The graph's shape: nodes by name, live edges around nodes, a graph's adjacency, node
degrees (provenance links are ``links.py``, as in ``store/sqlite/``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from graphrecall.domain.models import Edge, Episode, Node
from graphrecall.store.adjacency import Adjacency
from graphrecall.store.base import Exchange, GraphShape
from graphrecall.store.postgres import rows as rowmap
from graphrecall.store.postgres.connection import Database


class Graphs(GraphShape):
    def __init__(self, db: Database) -> None:
        self.db = db

    def nodes_named(self, graph_uuid: str, name: str) -> list[Node]:
        # lower() folds ASCII letters only under the "C" collation, as SQLite's NOCASE.
        found = self.db.query(
            "SELECT * FROM nodes t WHERE graph_uuid = %s AND lower(name) = lower(%s::ctext)"
            " ORDER BY created_at, uuid",
            [graph_uuid, name],
        )
        return [rowmap.from_row(Node, row) for row in found]

    def adjacency(self, graph_uuid: str, node_uuids: Sequence[str]) -> list[tuple[str, str, str]]:
        if not node_uuids:
            return []
        rows = self.db.query(
            "SELECT uuid, source_node_uuid AS s, target_node_uuid AS o FROM edges"
            " WHERE graph_uuid = %s AND expired_at IS NULL"
            " AND (source_node_uuid = ANY(%s) OR target_node_uuid = ANY(%s))",
            [graph_uuid, list(node_uuids), list(node_uuids)],
        )
        return [(r["uuid"], r["s"], r["o"]) for r in rows]

    def graph_adjacency(self, graph_uuid: str) -> Adjacency:
        # Read afresh each time: another process may have written edges (no cache yet).
        rows = self.db.query(
            "SELECT source_node_uuid AS s, target_node_uuid AS o FROM edges"
            " WHERE graph_uuid = %s AND expired_at IS NULL",
            [graph_uuid],
        )
        return Adjacency.from_edges((r["s"], r["o"]) for r in rows)

    def node_degrees(self, graph_uuid: str, node_uuids: Sequence[str]) -> dict[str, int]:
        """The stored degrees (graph_model/degree.py keeps them); a node of another graph: 0."""
        degrees = dict.fromkeys(node_uuids, 0)
        if node_uuids:
            for r in self.db.query(
                "SELECT uuid, degree FROM nodes WHERE graph_uuid = %s AND uuid = ANY(%s)",
                [graph_uuid, list(node_uuids)],
            ):
                degrees[r["uuid"]] = int(r["degree"])
        return degrees

    def exchanges(self, graph_uuid: str, episode_uuids: Sequence[str]) -> list[Exchange]:
        if not episode_uuids:
            return []
        # One statement for every message and its neighbours: each message looked up by
        # its key, then a limited read on the thread index each way. (Given "uuid =
        # ANY(...)" the planner scanned the graph's entries of the thread index: 2.5 ms in
        # a graph of 20,000 messages.) The three rows' columns come back side by side,
        # prefixed (as JSON objects they took three times as long).
        fields = list(Episode.model_fields)
        columns = ", ".join(f"{t}.{f} AS {t}_{f}" for t in ("q", "b", "a") for f in fields)
        neighbour = (
            " LEFT JOIN LATERAL (SELECT * FROM episodes t WHERE t.graph_uuid = q.graph_uuid"
            " AND t.thread_uuid = q.thread_uuid AND t.created_at {op} q.created_at"
            " ORDER BY t.created_at {order}, t.uuid {order} LIMIT 1) {alias} ON true"
        )
        rows = self.db.query(
            f"SELECT {columns} FROM unnest(%s::text[]) WITH ORDINALITY AS w(uuid, n)"
            " JOIN episodes q ON q.graph_uuid = %s AND q.uuid = w.uuid"
            + neighbour.format(op="<", order="DESC", alias="b")
            + neighbour.format(op=">", order="ASC", alias="a")
            + " ORDER BY w.n",
            [list(dict.fromkeys(episode_uuids)), graph_uuid],
        )

        def side(row: dict[str, object], t: str) -> Episode | None:
            if row[f"{t}_uuid"] is None:
                return None
            return rowmap.from_row(Episode, {f: row[f"{t}_{f}"] for f in fields})

        return [
            Exchange(
                rowmap.from_row(Episode, {f: row[f"q_{f}"] for f in fields}),
                side(row, "b"),
                side(row, "a"),
            )
            for row in rows
        ]

    def newest_edges(self, graph_uuid: str, limits: Mapping[str, int]) -> dict[str, list[Edge]]:
        out: dict[str, list[Edge]] = {node: [] for node in limits}
        if not limits:
            return out
        # One statement for every node and both ends (a round trip each was two a node);
        # each end stays its own indexed, limited read (an OR of the two made the
        # planner scan the graph).
        ends = [
            f"(SELECT * FROM edges t WHERE t.graph_uuid = %s AND t.{end} = n.node"
            " AND t.expired_at IS NULL"
            " ORDER BY t.created_at DESC NULLS LAST, t.uuid DESC LIMIT n.lim)"
            for end in ("source_node_uuid", "target_node_uuid")
        ]
        rows = self.db.query(
            "SELECT n.node AS newest_of, e.* FROM unnest(%s::ctext[], %s::int[]) AS n(node, lim)"
            f" CROSS JOIN LATERAL ({ends[0]} UNION ALL {ends[1]}) e",
            [list(limits), [int(n) for n in limits.values()], graph_uuid, graph_uuid],
        )
        seen: dict[str, set[str]] = {node: set() for node in limits}
        for row in rows:
            node = row["newest_of"]
            if row["uuid"] not in seen[node]:  # a self-loop is found from both ends
                seen[node].add(row["uuid"])
                out[node].append(rowmap.from_row(Edge, row))
        for edges in out.values():
            edges.sort(key=lambda e: (e.created_at, e.uuid), reverse=True)
        return out
