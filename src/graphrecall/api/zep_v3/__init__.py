"""The Zep v3 face under ``/api/v2`` (``zep-cloud`` 3.x, ``@getzep/zep-cloud`` 3.x).

A thin translation onto the v4 services: v3 addresses users, threads and graphs by the
developer's ids (``user_id``, ``thread_id``, ``graph_id``), which ``ids.py`` resolves to
the records the v4 services take; ``wire.py`` reshapes what they answer into v3's shapes
(bare arrays, ``{message_uuids, task_id}``, ``{threads, total_count}``). Nothing is
searched, stored or assembled here. docs/migrating-from-zep-v3.md lists what is served.

The Zep Cloud v2 and CE 2.x routes share the prefix and the users (``api/zep_v2``).
"""

from __future__ import annotations

from fastapi import APIRouter

from graphrecall.api.zep_v3 import (
    batches,
    graph,
    graph_data,
    graph_items,
    graph_reads,
    instructions,
    ontology,
    tasks,
    templates,
    threads,
    user_groups,
    users,
)

PREFIX = "/api/v2"
# Routes are tried in order; no path of one router is a path of another (graph's
# ``/graph/{graph_id}`` has one segment after ``/graph``, graph_items' have two or more).
ROUTERS: tuple[APIRouter, ...] = (
    threads.router,
    graph.router,
    graph_data.router,
    graph_items.router,
    graph_reads.router,
    users.router,
    tasks.router,
    templates.router,
    instructions.router,
    ontology.router,
    user_groups.router,
    batches.router,
)
