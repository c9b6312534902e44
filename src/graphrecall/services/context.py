"""What every service call needs: the store, the models, and a way to wake the worker."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from graphrecall.ml.cross_encoder import CrossEncoder
from graphrecall.ml.embedder import Embedder
from graphrecall.services.projects import RecentKeys
from graphrecall.store.base import Store


@dataclass
class Context:
    store: Store
    embedder: Embedder | None
    wake_worker: Callable[[], None] = field(default=lambda: None)
    # None: the offline bi-encoder + lexical scorer serves the cross_encoder reranker.
    cross_encoder: CrossEncoder | None = None
    # API keys that authenticated a moment ago (see RecentKeys).
    recent_keys: RecentKeys = field(default_factory=RecentKeys)
