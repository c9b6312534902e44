"""Why a message or episode is not processed, shown on it: the error of the failed task
that names it (issue 47: "processed becomes true or the message carries a visible
error").

An extraction that fails for one episode fails its task with ``error.episodes`` (each
``{uuid, error}``, ingest/worker.py); a task that failed whole names its episodes in its
payload. The episode itself stays ``processed: false``, and a read of it carries
``processing_error: {code, message, task_uuid}`` (the zep-cloud SDK's Message and Episode
models allow extra fields). Read from the tasks, not stored on the episode, so a retried
task (``graphrecall tasks retry``) clears it at once. Only unprocessed episodes are
looked up, and failed tasks are few, so a read of processed ones costs nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from graphrecall.domain.models import Episode, Task
from graphrecall.services.container import Services

# A failed task's message is kept to this many characters on each episode it names.
MAX_MESSAGE_CHARS = 500


def processing_errors(
    ctx: Services, project_uuid: str, episodes: Iterable[Episode]
) -> dict[str, dict[str, Any]]:
    """``{episode uuid: {code, message, task_uuid}}`` for those of ``episodes`` that are
    not processed and that a failed task of their graph names (the newest such task)."""
    pending: dict[str, set[str]] = {}
    for e in episodes:
        if not e.processed:
            pending.setdefault(e.graph_uuid, set()).add(e.uuid)
    out: dict[str, dict[str, Any]] = {}
    for graph_uuid, wanted in pending.items():
        failed = ctx.store.find(
            Task,
            {"project_uuid": project_uuid, "graph_uuid": graph_uuid, "status": "failed"},
            order_by="uuid",  # oldest first: a newer failure overwrites an older one
        )
        for task in failed:
            for uuid, message, code in _named(task):
                if uuid in wanted:
                    out[uuid] = {
                        "code": code,
                        "message": message[:MAX_MESSAGE_CHARS],
                        "task_uuid": task.uuid,
                    }
    return out


def _named(task: Task) -> list[tuple[str, str, str]]:
    """(episode uuid, why, code) for each episode the failed ``task`` names."""
    error = task.error or {}
    code = str(error.get("code") or "task_failed")
    listed = error.get("episodes")
    if isinstance(listed, list):
        return [
            (str(item.get("uuid")), str(item.get("error") or error.get("message") or ""), code)
            for item in listed
            if isinstance(item, dict) and item.get("uuid")
        ]
    uuids = (task.payload or {}).get("episodes") or []
    message = str(error.get("message") or "")
    return [(str(u), message, code) for u in uuids if isinstance(u, str)]
