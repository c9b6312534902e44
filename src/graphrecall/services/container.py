"""What every service call needs: the store, the models, and a way to wake the worker."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from graphrecall.ml.cross_encoder import CrossEncoder
from graphrecall.ml.embedder import Embedder
from graphrecall.services.accounts.projects import RecentKeys
from graphrecall.services.project_gate import ProjectGate
from graphrecall.services.regex_gate import RegexGate
from graphrecall.store.base import Store


@dataclass
class Services:
    store: Store
    embedder: Embedder | None
    wake_worker: Callable[[], None] = field(default=lambda: None)
    # None: the offline bi-encoder + lexical scorer serves the cross_encoder reranker.
    cross_encoder: CrossEncoder | None = None
    # API keys that authenticated a moment ago (see RecentKeys).
    recent_keys: RecentKeys = field(default_factory=RecentKeys)
    # How many searches with a caller's pattern each project runs at once (regex_gate.py).
    regex_gate: RegexGate = field(default_factory=RegexGate)
    # How many expensive reads each project runs at once (admission.py); None: no limit.
    admission: ProjectGate | None = None
    # How long a deleted memory's history is kept (GRAPHRECALL_DELETED_HISTORY_SECONDS);
    # 0: erased with the memory (services/memory_engine/writes.py ``forget``).
    deleted_history_seconds: int = 0
