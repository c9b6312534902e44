"""What the ingestion worker needs: the store and the models (no services above it)."""

from __future__ import annotations

from dataclasses import dataclass

from graphrecall.ml.embedder import Embedder
from graphrecall.ml.extraction import Extractor
from graphrecall.store.base import Store


@dataclass
class IngestContext:
    store: Store
    embedder: Embedder | None
    extractor: Extractor | None
