"""Re-embedding a database with another embedder (``graphrecall reembed``): every record
that has a vector gets a new one from ``embedder``, kind by kind and owner by owner, and
the database then records the new model (``settings.embedder_model``).

It runs with the database's servers and workers stopped: until it is done the database
holds vectors of two models, so it is marked ``reembedding:<model>`` first, and
``runtime.store_embedder`` refuses to start on a database so marked (an interrupted run
is finished by running it again, which embeds everything once more).
"""

from __future__ import annotations

from collections.abc import Callable

from graphrecall.domain.models import Graph, Space
from graphrecall.domain.scopes import SCOPES
from graphrecall.graph_model.embedding import embed_records
from graphrecall.ml.embedder import (
    EMBEDDER_SETTING,
    REEMBEDDING,
    EmbedderUnavailable,
    MiniLMEmbedder,
)
from graphrecall.store.base import Store

BATCH = 256  # records embedded and written together

Progress = Callable[[str, int], None]  # scope name, records of it done so far


def reembed(
    store: Store, embedder: MiniLMEmbedder, progress: Progress | None = None
) -> dict[str, int]:
    """Re-embed every record that has a vector; returns how many of each scope."""
    store.put_setting(EMBEDDER_SETTING, REEMBEDDING + embedder.family)
    done: dict[str, int] = {}
    for name, spec in SCOPES.items():
        owners = store.find(Space if spec.owner_field == "space_uuid" else Graph, {})
        count = 0
        for owner in owners:
            records = store.find(spec.kind, {spec.owner_field: owner.uuid})
            for start in range(0, len(records), BATCH):
                chunk = records[start : start + BATCH]
                held = store.get_embeddings(spec.kind, owner.uuid, [r.uuid for r in chunk])
                chunk = [r for r in chunk if r.uuid in held]
                if not chunk:
                    continue
                if not embed_records(store, embedder, chunk, owner_field=spec.owner_field):
                    raise EmbedderUnavailable(f"{embedder.family} could not be loaded")
                count += len(chunk)
                if progress is not None:
                    progress(name, count)
        done[name] = count
    store.put_setting(EMBEDDER_SETTING, embedder.family)
    return done
