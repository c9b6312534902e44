"""``graphrecall reembed``: a database made with the stock embedder is re-embedded with
the configured one, every vector replaced and the new model recorded, on both backends;
an interrupted run leaves a database that refuses to start until it is run again."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest

from graphrecall import GraphRecall, runtime
from graphrecall.config import Settings
from graphrecall.domain.models import Episode
from graphrecall.graph_model.embedding import texts_to_embed
from graphrecall.ingest.reembed import reembed
from graphrecall.ml.embedder import CHAT, EMBEDDER_SETTING, REEMBEDDING, STOCK, MiniLMEmbedder
from graphrecall.store import open_store
from tests import pg_server

SAID = ["I moved to Lisbon in March.", "My sister Ines plays the cello every summer."]


def _stock_database(db: str) -> str:
    """A database made with the stock embedder, holding two messages; its graph's uuid."""
    settings = Settings(db=db, embedder="minilm", extractor="none")
    with GraphRecall(settings=settings) as gr:
        user = gr.user.create(user_id="maya", first_name="Maya")
        thread = gr.thread.create(user_uuid=user.uuid_)
        messages = [{"role": "user", "name": "Maya", "content": t} for t in SAID]
        added = gr.thread.add_messages(thread.uuid_, messages=messages)
        assert gr.wait(added).status == "succeeded"
        assert user.graph_uuid is not None
        return user.graph_uuid


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_reembed_moves_a_database_to_the_configured_model(tmp_path: Path, backend: str) -> None:
    if backend == "sqlite":
        db = str(tmp_path / "r.db")
    else:
        db = pg_server.with_schema(pg_server.server_url(), f"r{uuid.uuid4().hex}")
    graph = _stock_database(db)
    chat = Settings(db=db, extractor="none")
    store = open_store(db)
    try:
        assert store.setting(EMBEDDER_SETTING, "?") == STOCK.family
        episodes = store.find(Episode, {"graph_uuid": graph})
        uuids = [e.uuid for e in episodes]
        before = store.get_embeddings(Episode, graph, uuids)
        embedder = runtime.minilm(chat)
        done = reembed(store, embedder)
        assert done["episodes"] == 2 and done["nodes"] >= 1  # the user's node
        after = store.get_embeddings(Episode, graph, uuids)
        wanted = MiniLMEmbedder(model=CHAT).embed(texts_to_embed(store, episodes))
        for n, u in enumerate(uuids):
            assert float(np.dot(after[u], wanted[n])) > 0.999
            assert float(np.dot(after[u], before[u])) < 0.99  # another model's vector
        assert store.setting(EMBEDDER_SETTING, "?") == CHAT.family
    finally:
        store.close()
    with runtime.build(chat) as rt:
        model = rt.models.embedder
        assert isinstance(model, MiniLMEmbedder) and model.family == CHAT.family


def test_an_interrupted_reembed_is_refused_until_run_again(tmp_path: Path) -> None:
    db = str(tmp_path / "cut.db")
    _stock_database(db)
    store = open_store(db)
    store.put_setting(EMBEDDER_SETTING, REEMBEDDING + CHAT.family)  # as a run cut short
    store.close()
    with pytest.raises(runtime.StartupError, match="interrupted: run `graphrecall reembed`"):
        runtime.build(Settings(db=db, extractor="none"))
    cli = [sys.executable, "-m", "graphrecall", "--db", db, "reembed"]
    again = subprocess.run(cli, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert "re-embedding with graphrecall-chat-minilm-l6-v1" in again.stdout
    assert "2 episodes" in again.stdout
    twice = subprocess.run(cli, capture_output=True, text=True, timeout=300)
    assert twice.returncode == 0 and "nothing to do" in twice.stdout
    with runtime.build(Settings(db=db, extractor="none")) as rt:
        assert rt.store.setting(EMBEDDER_SETTING, "?") == CHAT.family
