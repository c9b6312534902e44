"""The PostgreSQL backend answers as the SQLite backend does on one corpus: lexical
search (same rows, order and scores, so the same top-10 for lexical-only search),
including after the writes that change what an episode is searched by, and vector
search."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from graphrecall.domain.models import Edge, Episode, Memory, Node, Observation, Record
from graphrecall.domain.scopes import SCOPE_OF, owner_field
from graphrecall.store import Store, open_store
from tests.store.postgres import corpus as corpora

Pair = tuple[Store, Store, corpora.Corpus]
KINDS: tuple[type[Record], ...] = (Edge, Node, Episode, Observation, Memory)
TRICKY = ["Cafe", "ZOË", "naive", "running", "STRASSE", "東京", "über", "Ponies", "the", "2023"]


@pytest.fixture()
def pair(tmp_path: Path, pg_url: str, open_pg: Callable[[str], Store]) -> Iterator[Pair]:
    corpus = corpora.build()
    sqlite = open_store(tmp_path / "parity.db")
    pg = open_pg(pg_url)
    for store in (sqlite, pg):
        corpora.write(store, corpus)
    yield sqlite, pg, corpus
    sqlite.close()


def queries(seed: int, count: int) -> list[list[str]]:
    rng = random.Random(seed)
    single = [w for w in corpora.WORDS if "'" not in w and "-" not in w]
    out = [[t] for t in TRICKY]
    for _ in range(count):
        out.append(rng.sample(single, rng.randint(1, 3)))
    return out


def owner(corpus: corpora.Corpus, kind: type[Record]) -> str:
    return corpus.space if kind is Memory else corpus.graph


def assert_same_text_search(pair: Pair, seed: int) -> int:
    sqlite, pg, corpus = pair
    compared = 0
    for kind in KINDS:
        scope = {owner_field(kind): owner(corpus, kind)}
        for terms in queries(seed, 40):
            for bm25 in {SCOPE_OF[kind].bm25, SCOPE_OF[Edge].bm25}:
                want = sqlite.text_search(kind, scope, terms, limit=10, bm25=bm25)
                got = pg.text_search(kind, scope, terms, limit=10, bm25=bm25)
                assert [u for u, _ in got] == [u for u, _ in want], (kind, terms, bm25)
                np.testing.assert_allclose(
                    [s for _, s in got], [s for _, s in want], rtol=1e-9, err_msg=str(terms)
                )
                compared += bool(want)
    return compared


def test_lexical_search_ranks_as_sqlite(pair: Pair) -> None:
    assert assert_same_text_search(pair, seed=1) >= 250


def test_lexical_search_ranks_as_sqlite_after_the_writes_that_move_derived_text(
    pair: Pair,
) -> None:
    sqlite, pg, corpus = pair
    rng = random.Random(3)
    threaded = [e for e in corpus.episodes if e.thread_uuid and e.graph_uuid == corpus.graph]
    rewritten = [e.model_copy(update={"content": corpora.sentence(rng, 9)}) for e in threaded[5:9]]
    fact = corpus.edges[3].model_copy(update={"fact": "Melanie painted a sunrise at the beach"})
    late = Episode(
        **{
            **threaded[10].model_dump(),
            "uuid": "01990000-0000-7000-8000-000000000001",
            "content": "Caroline hiked over the well-known beach",
            "created_at": threaded[10].created_at[:-2] + "5Z",
        }
    )
    for store in (sqlite, pg):
        for episode in rewritten:
            store.update(episode)
        store.update(fact)
        store.delete(Episode, {"uuid": threaded[20].uuid})
        store.delete(Edge, {"uuid": corpus.edges[7].uuid})
        store.insert([late])
        store.link_episodes(Edge, corpus.graph, corpus.edges[9].uuid, [late.uuid])
    assert assert_same_text_search(pair, seed=2) >= 250


def test_vector_search_ranks_as_sqlite(pair: Pair) -> None:
    sqlite, pg, corpus = pair
    rng = np.random.default_rng(5)
    for kind in (Node, Edge, Memory):
        scope = {owner_field(kind): owner(corpus, kind)}
        for _ in range(10):
            q = rng.standard_normal(16).astype(np.float32)
            q /= np.linalg.norm(q)
            want = sqlite.vector_search(kind, owner(corpus, kind), q, scope=scope, limit=10)
            got = pg.vector_search(kind, owner(corpus, kind), q, scope=scope, limit=10)
            assert [u for u, _ in got] == [u for u, _ in want]
            np.testing.assert_allclose([s for _, s in got], [s for _, s in want], atol=1e-6)


def test_a_message_is_found_through_its_derived_text(pair: Pair) -> None:
    """The derived columns its writers set (graph_model/graph_writes.py) are indexed."""
    sqlite, pg, corpus = pair
    thread = "01990000-0000-7000-8000-0000000000aa"
    said = [
        ("Did you go anywhere?", "quesnel"),  # found by its reply's word
        ("I went to Quesnel with the zyzzyva club", "zyzzyva"),
        ("Sounds fun", "zyzzyva"),  # found by its context (the message before)
    ]
    messages = [
        Episode(
            uuid=f"01990000-0000-7000-8000-00000000010{i}",
            graph_uuid=corpus.graph,
            content=text,
            role="user",
            role_name="Caroline",
            reference_time=f"2026-02-01T00:00:0{i}.000000Z",
            created_at=f"2026-02-01T00:00:0{i}.000000Z",
            thread_uuid=thread,
            search_replies="Caroline: I went to Quesnel" if i == 0 else None,
            search_context="Caroline: I went to Quesnel with the zyzzyva club" if i == 2 else None,
            search_facts="Caroline owns a xylograph" if i == 2 else None,
        )
        for i, (text, _) in enumerate(said)
    ]
    scope = {"graph_uuid": corpus.graph}
    for store in (sqlite, pg):
        store.insert(messages)
        found = {u for u, _ in store.text_search(Episode, scope, ["quesnel"], limit=10)}
        assert messages[0].uuid in found
        found = {u for u, _ in store.text_search(Episode, scope, ["zyzzyva"], limit=10)}
        assert messages[2].uuid in found
        found = {u for u, _ in store.text_search(Episode, scope, ["xylograph"], limit=10)}
        assert found == {messages[2].uuid}
    assert assert_same_text_search(pair, seed=4) >= 250


def test_phrase_terms_rank_as_sqlite_where_their_tokens_stand_together(pair: Pair) -> None:
    sqlite, pg, corpus = pair
    scope = {"graph_uuid": corpus.graph}
    for terms in (["rock'n'roll"], ["well-known"], ["COVID-19", "beach"], ["e-mail"]):
        want = sqlite.text_search(Episode, scope, terms, limit=10)
        got = pg.text_search(Episode, scope, terms, limit=10)
        assert want
        assert [u for u, _ in got] == [u for u, _ in want]
        np.testing.assert_allclose([s for _, s in got], [s for _, s in want], rtol=1e-9)


def test_phrase_terms_differ_where_their_tokens_stand_apart(pair: Pair) -> None:
    """The documented difference (store/postgres/text_search.py): a term the tokenizer
    splits is matched by all its tokens anywhere on PostgreSQL, adjacent only on SQLite."""
    sqlite, pg, _ = pair
    apart = Episode(
        uuid="01990000-0000-7000-8000-0000000002aa",
        graph_uuid="01990000-0000-7000-8000-0000000002ff",
        content="a roll of film, a rock, n times",
        reference_time="2026-03-01T00:00:00.000000Z",
        created_at="2026-03-01T00:00:00.000000Z",
    )
    scope = {"graph_uuid": apart.graph_uuid}
    for store in (sqlite, pg):
        store.insert([apart])
    assert sqlite.text_search(Episode, scope, ["rock'n'roll"]) == []
    assert [u for u, _ in pg.text_search(Episode, scope, ["rock'n'roll"])] == [apart.uuid]


def test_a_token_of_any_length_is_indexed_and_found(pair: Pair) -> None:
    sqlite, pg, corpus = pair
    long_word = "x" * 100_000
    memory = corpus.memories[0].model_copy(
        update={"uuid": "01990000-0000-7000-8000-0000000004aa", "content": f"{long_word} end"}
    )
    scope = {"space_uuid": corpus.space}
    for store in (sqlite, pg):
        store.insert([memory])
    want = sqlite.text_search(Memory, scope, [long_word])
    assert [u for u, _ in want] == [memory.uuid]
    got = pg.text_search(Memory, scope, [long_word])
    assert [u for u, _ in got] == [memory.uuid]
    assert got[0][1] == pytest.approx(want[0][1], rel=1e-9)
