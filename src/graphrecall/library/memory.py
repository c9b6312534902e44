"""``gr.memory``: the Memory Engine operations in process, under Memory Engine's names
(``memory.batchCreate`` is ``gr.memory.batch_create``; parameters may be given in
either spelling, ``dry_run`` or ``dryRun``).

Each method validates its parameters with the JSON-RPC method's own params model and
runs that method's handler (``wire/memory_engine/methods.py``, which the JSON-RPC face
serves too), so results are what the ``me`` client gets, as models
with Memory Engine's field names (``versionHash``, ``hasEmbedding``, ...).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from graphrecall.library.calls import OMIT, body, invalid, plain
from graphrecall.library.session import Part
from graphrecall.wire.memory_engine.methods import METHODS


class Record(BaseModel):
    # A newer server may add fields; they are kept, not refused.
    model_config = ConfigDict(extra="allow")


class Temporal(Record):
    start: str
    end: str | None = None


class Memory(Record):
    id: str
    content: str
    meta: dict[str, Any]
    tree: str
    name: str | None = None
    temporal: Temporal | None = None
    version: int
    versionHash: str
    hasEmbedding: bool
    createdAt: str
    createdBy: str | None = None
    updatedAt: str | None = None
    score: float | None = None


class SearchResult(Record):
    results: list[Memory]
    total: int
    limit: int


class BatchResult(Record):
    id: str
    status: str


class BatchCreateResult(Record):
    results: list[BatchResult]


class TreeNode(Record):
    path: str
    count: int


class TreeResult(Record):
    nodes: list[TreeNode]


class CountResult(Record):
    count: int
    paths: list[str] | None = None


class HistoryResult(Record):
    events: list[dict[str, Any]]
    limit: int
    nextCursor: str | None = None


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class MemoryClient(Part):
    def _run(self, method: str, **params: Any) -> Any:
        spec = METHODS[method]
        asked = {_camel(k): v for k, v in params.items() if v is not OMIT}
        return spec.handler(self._ctx, self._s.caller(), body(spec.params, **asked))

    def create(
        self,
        content: str,
        *,
        tree: str,
        id: str | None = OMIT,
        name: str | None = OMIT,
        meta: dict[str, Any] | None = OMIT,
        temporal: dict[str, Any] | None = OMIT,
        on_conflict: str | None = OMIT,
    ) -> Memory:
        return Memory.model_validate(self._run("memory.create", **_own(locals())))

    def batch_create(
        self, memories: list[Any], *, on_conflict: str | None = OMIT
    ) -> BatchCreateResult:
        made = self._run("memory.batchCreate", memories=memories, on_conflict=on_conflict)
        return BatchCreateResult.model_validate(made)

    def get(self, id: str) -> Memory:
        return Memory.model_validate(self._run("memory.get", id=id))

    def get_by_path(self, path: str) -> Memory:
        return Memory.model_validate(self._run("memory.getByPath", path=path))

    def update(
        self,
        id: str,
        *,
        version_hash: str,
        content: str | None = OMIT,
        meta: dict[str, Any] | None = OMIT,
        tree: str | None = OMIT,
        name: str | None = OMIT,
        temporal: dict[str, Any] | None = OMIT,
    ) -> Memory:
        """``name=None`` or ``temporal=None`` clears it, as ``null`` does on the wire."""
        asked = {_camel(k): plain(v) for k, v in _own(locals()).items() if v is not OMIT}
        spec = METHODS["memory.update"]
        try:
            parsed = spec.params.model_validate(asked)
        except ValidationError as exc:
            raise invalid(exc) from None
        return Memory.model_validate(spec.handler(self._ctx, self._s.caller(), parsed))

    def delete(self, id: str) -> bool:
        return bool(self._run("memory.delete", id=id)["deleted"])

    def delete_by_path(self, path: str) -> bool:
        return bool(self._run("memory.deleteByPath", path=path)["deleted"])

    def search(
        self,
        semantic: str | None = OMIT,
        *,
        fulltext: str | None = OMIT,
        grep: str | None = OMIT,
        tree: str | None = OMIT,
        meta: dict[str, Any] | None = OMIT,
        meta_predicate: str | None = OMIT,
        temporal: dict[str, Any] | None = OMIT,
        limit: int | None = OMIT,
        candidate_limit: int | None = OMIT,
        semantic_threshold: float | None = OMIT,
        weights: dict[str, float] | None = OMIT,
        order_by: str | None = OMIT,
    ) -> SearchResult:
        return SearchResult.model_validate(self._run("memory.search", **_own(locals())))

    def tree(self, tree: str | None = OMIT, *, levels: int | None = OMIT) -> TreeResult:
        return TreeResult.model_validate(self._run("memory.tree", tree=tree, levels=levels))

    def copy(self, source: str, destination: str, *, dry_run: bool | None = OMIT) -> int:
        found = self._run("memory.copy", source=source, destination=destination, dry_run=dry_run)
        return int(found["count"])

    def move(self, source: str, destination: str, *, dry_run: bool | None = OMIT) -> int:
        found = self._run("memory.move", source=source, destination=destination, dry_run=dry_run)
        return int(found["count"])

    def delete_tree(self, tree: str, *, dry_run: bool | None = OMIT) -> int:
        return int(self._run("memory.deleteTree", tree=tree, dry_run=dry_run)["count"])

    def delete_orphans_in_tree(
        self,
        root: str,
        *,
        meta_contains: dict[str, Any],
        keep: list[dict[str, str]],
        dry_run: bool | None = OMIT,
    ) -> CountResult:
        found = self._run("memory.deleteOrphansInTree", **_own(locals()))
        return CountResult.model_validate(found)

    def count_tree(self, tree: str, *, max_count: int | None = OMIT) -> int:
        return int(self._run("memory.countTree", tree=tree, max_count=max_count)["count"])

    def embedding_status(self) -> dict[str, Any]:
        return dict(self._run("memory.embeddingStatus"))

    def history(
        self,
        *,
        memory_id: str | None = OMIT,
        path: str | None = OMIT,
        tree: str | None = OMIT,
        operation: str | None = OMIT,
        operation_id: str | None = OMIT,
        since: str | None = OMIT,
        until: str | None = OMIT,
        cursor: str | None = OMIT,
        limit: int | None = OMIT,
        order: str | None = OMIT,
    ) -> HistoryResult:
        return HistoryResult.model_validate(self._run("memory.history", **_own(locals())))

    def revert(
        self,
        *,
        version: int,
        id: str | None = OMIT,
        path: str | None = OMIT,
        expected_version_hash: str | None = OMIT,
    ) -> Memory:
        return Memory.model_validate(self._run("memory.revert", **_own(locals())))


def _own(local: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in local.items() if k != "self"}
