"""Deletion that erases: a delete marks the tables it deleted from in its own
transaction, and once it has committed the store erases those rows' bytes from every
file it writes (``Maintenance.erase``: the full-text indexes' old segments, the saved
index copies, SQLite's WAL; PostgreSQL's dead tuples) before the delete is answered.
The receipt says what was deleted (kind and uuid, never its content), which tables were
erased and when; a Zep delete's task carries it as its result (docs/security.md,
"Deletion").
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from graphrecall.domain import predicates as p
from graphrecall.domain.models import (
    DocumentSummary,
    Edge,
    Episode,
    EpisodeDebugLog,
    Hyperedge,
    IngestionTrace,
    Node,
    Observation,
    Record,
    Task,
    ThreadSummary,
    WebhookDelivery,
)
from graphrecall.domain.scopes import TABLES
from graphrecall.services import tasks
from graphrecall.services.container import Services

log = logging.getLogger(__name__)

# Everything a graph holds. A delete of any part of a graph rewrites derived text in
# the others (an episode's facts, its neighbours' context, a hyperedge left empty), so
# the old text sits in all of their full-text indexes: each graph delete erases them all.
GRAPH_KINDS: tuple[type[Record], ...] = (
    Edge,
    Hyperedge,
    Node,
    Episode,
    Observation,
    ThreadSummary,
    DocumentSummary,
    EpisodeDebugLog,
    IngestionTrace,
)


def mark(ctx: Services, kinds: Iterable[type[Record]]) -> None:
    """Inside the deleting transaction: the tables of ``kinds`` are to be erased (the
    mark commits with the delete, so a crash before :func:`erase` leaves it for the
    store's next open)."""
    ctx.store.maintenance.mark_erasure([TABLES[kind] for kind in kinds])


def drop_graph_events(ctx: Services, project_uuid: str, graph_uuid: str) -> None:
    """Inside the transaction deleting a graph (or its user): the webhook events about it,
    delivered or not, go too (they name the graph and its user's id); marked."""
    about = ctx.store.find(
        WebhookDelivery,
        {"project_uuid": project_uuid},
        where=p.JsonPath("payload", "graph_uuid", "eq", graph_uuid),
    )
    for start in range(0, len(about), 500):
        chunk = [d.uuid for d in about[start : start + 500]]
        ctx.store.delete(WebhookDelivery, {"project_uuid": project_uuid, "uuid": chunk})
    mark(ctx, (WebhookDelivery,))


def erase(ctx: Services, what: str, uuid: str) -> dict[str, Any]:
    """After the delete committed: erase what is marked; the receipt."""
    receipt = {"deleted": {"kind": what, "uuid": uuid}, **ctx.store.maintenance.erase()}
    log.info(
        "erased %s %s: tables %s in %s s",
        what,
        uuid,
        ",".join(receipt.get("tables", [])),
        receipt.get("seconds"),
    )
    return receipt


def completed(
    ctx: Services,
    project_uuid: str,
    graph_uuid: str | None,
    type_: str,
    what: str,
    uuid: str,
    result: dict[str, Any] | None = None,
) -> Task:
    """The succeeded task of a delete (after its transaction): erased first, its receipt
    in the task's result under ``erasure``."""
    receipt = erase(ctx, what, uuid)
    return tasks.completed(
        ctx, project_uuid, graph_uuid, type_, {**(result or {}), "erasure": receipt}
    )
