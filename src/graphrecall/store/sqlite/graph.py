"""The graph's shape: nodes by name, edges around nodes, a graph's adjacency (cached per
graph until one of its edges changes) and node degrees."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence

from graphrecall.domain.models import Edge, Episode, Node, Record
from graphrecall.store.adjacency import Adjacency
from graphrecall.store.base import Exchange, GraphShape
from graphrecall.store.sqlite import rows as rowmap
from graphrecall.store.sqlite.connection import Database

# How many graphs' adjacency arrays are kept in memory (least recently used go first).
ADJACENCY_CACHE_GRAPHS = 64


class Graphs(GraphShape):
    def __init__(self, db: Database) -> None:
        self.db = db
        # Adjacency per graph, valid while its edge version is unchanged.
        self._adjacency: OrderedDict[str, tuple[tuple[int, int, int], Adjacency]] = OrderedDict()
        self._edge_versions: dict[str, int] = {}
        self._all_edges_version = 0
        db.on_rollback(self.all_changed)  # a cache may have seen the undone writes

    def edges_changed(self, records: Sequence[Record]) -> None:
        """Invalidate the cached adjacency of the graphs whose edges are being written."""
        for record in records:
            if isinstance(record, Edge):
                self._edge_versions[record.graph_uuid] = (
                    self._edge_versions.get(record.graph_uuid, 0) + 1
                )

    def all_changed(self) -> None:
        """Invalidate every cached adjacency (a delete may cascade to any graph's edges)."""
        self._all_edges_version += 1

    def nodes_named(self, graph_uuid: str, name: str) -> list[Node]:
        found = self.db.query(
            "SELECT * FROM nodes t WHERE graph_uuid = ? AND name = ? COLLATE NOCASE"
            " ORDER BY created_at, uuid",
            [graph_uuid, name],
        )
        return [rowmap.from_row(Node, row) for row in found]

    def adjacency(self, graph_uuid: str, node_uuids: Sequence[str]) -> list[tuple[str, str, str]]:
        found: dict[str, tuple[str, str, str]] = {}
        for start in range(0, len(node_uuids), 500):
            chunk = list(node_uuids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for column in ("source_node_uuid", "target_node_uuid"):
                for uuid, source, target in self.db.query(
                    "SELECT uuid, source_node_uuid, target_node_uuid FROM edges"
                    f" WHERE graph_uuid = ? AND expired_at IS NULL AND {column} IN ({marks})",
                    [graph_uuid, *chunk],
                ):
                    found[uuid] = (uuid, source, target)
        return list(found.values())

    def graph_adjacency(self, graph_uuid: str) -> Adjacency:
        db = self.db
        with db.lock:
            # data_version moves when another process commits to the database.
            external = int(db.conn.execute("PRAGMA data_version").fetchone()[0])
            version = (self._edge_versions.get(graph_uuid, 0), self._all_edges_version, external)
            cached = self._adjacency.get(graph_uuid)
            if cached is not None and cached[0] == version:
                self._adjacency.move_to_end(graph_uuid)
                return cached[1]
            ends = db.conn.execute(
                "SELECT source_node_uuid, target_node_uuid FROM edges"
                " WHERE graph_uuid = ? AND expired_at IS NULL",
                [graph_uuid],
            ).fetchall()
            built = Adjacency.from_edges(ends)
            self._adjacency[graph_uuid] = (version, built)
            while len(self._adjacency) > ADJACENCY_CACHE_GRAPHS:
                self._adjacency.popitem(last=False)
            return built

    def node_degrees(self, graph_uuid: str, node_uuids: Sequence[str]) -> dict[str, int]:
        # The column the listing by degree sorts on, so the two agree.
        degrees = dict.fromkeys(node_uuids, 0)
        for start in range(0, len(node_uuids), 500):
            chunk = list(node_uuids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for node_uuid, degree in self.db.query(
                f"SELECT uuid, degree FROM nodes WHERE graph_uuid = ? AND uuid IN ({marks})",
                [graph_uuid, *chunk],
            ):
                degrees[node_uuid] = int(degree)
        return degrees

    def exchanges(self, graph_uuid: str, episode_uuids: Sequence[str]) -> list[Exchange]:
        # In process, so no round trips to save: three reads per message. Each neighbour's
        # time is one seek on the thread index (an ORDER BY over the later messages sorted
        # the rest of the thread: 5 ms a message in a thread of 20,000), then only the
        # messages of that instant are read and the first by uuid taken.
        out: list[Exchange] = []
        for uuid in dict.fromkeys(episode_uuids):
            found = self.db.query(
                "SELECT * FROM episodes t WHERE graph_uuid = ? AND uuid = ?", [graph_uuid, uuid]
            )
            if found:
                message = rowmap.from_row(Episode, found[0])
                out.append(
                    Exchange(
                        message,
                        self._neighbour(message, "max", "<", "DESC"),
                        self._neighbour(message, "min", ">", ""),
                    )
                )
        return out

    def _neighbour(self, message: Episode, pick: str, op: str, order: str) -> Episode | None:
        if message.thread_uuid is None:
            return None
        found = self.db.query(
            "SELECT r.* FROM episodes r INDEXED BY episodes_thread"
            " WHERE r.thread_uuid = ? AND r.graph_uuid = ? AND r.created_at = ("
            f"SELECT {pick}(n.created_at) FROM episodes n WHERE n.thread_uuid = ?"
            f" AND n.graph_uuid = ? AND n.created_at {op} ?) ORDER BY r.uuid {order} LIMIT 1",
            [message.thread_uuid, message.graph_uuid] * 2 + [message.created_at],
        )
        return rowmap.from_row(Episode, found[0]) if found else None

    def newest_edges(self, graph_uuid: str, limits: Mapping[str, int]) -> dict[str, list[Edge]]:
        # In process, so no round trips to save: one indexed, limited read per node and end.
        out: dict[str, list[Edge]] = {}
        for node, limit in limits.items():
            found: dict[str, Edge] = {}
            for end in ("source_node_uuid", "target_node_uuid"):
                for row in self.db.query(
                    f"SELECT * FROM edges t WHERE graph_uuid = ? AND {end} = ?"
                    " AND expired_at IS NULL ORDER BY created_at DESC, uuid DESC LIMIT ?",
                    [graph_uuid, node, int(limit)],
                ):
                    found.setdefault(row["uuid"], rowmap.from_row(Edge, row))
            out[node] = sorted(found.values(), key=lambda e: (e.created_at, e.uuid), reverse=True)
        return out
