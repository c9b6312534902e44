"""The torch-free parts of the training pipeline: the packs and their held-out split, the
passages as the product embeds them, hard-negative mining and the evidence-recall
measure (with the product's own bundled embedder)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from graphrecall.ml.embedder import MiniLMEmbedder
from graphrecall_training import data, evaluate, mine, passages

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "training"


def test_packs_split_by_conversation() -> None:
    pack = data.load(SHARED, ("friendsqa.json.gz",))
    assert len(pack.questions) > 2000
    train, kept = data.split(pack.questions)
    assert 0.05 < len(kept) / len(pack.questions) < 0.2
    assert not {q.conversation_ids[0] for q in train} & {q.conversation_ids[0] for q in kept}
    for q in pack.questions[:50]:
        assert set(q.evidence) <= set(pack.candidates(q))


def test_a_passage_is_what_the_product_embeds() -> None:
    pack = data.load(SHARED, ("longmemeval_s_train.json.gz",))
    q = pack.questions[0]
    first = passages.text(pack, pack.conversations[q.conversation_ids[0]][1])
    assert first.startswith("On ") and ", assistant: " in first and "(replying to user: " in first


def test_negatives_are_hard_and_never_evidence() -> None:
    pack = data.load(SHARED, ("friendsqa.json.gz",))
    questions = pack.questions[:20]
    embedder = MiniLMEmbedder()
    made = mine.pairs(pack, questions, embedder.embed, seed=13)
    assert len(made) == sum(len(q.evidence) for q in questions)
    evidence: dict[str, set[str]] = {}
    for q in questions:
        evidence.setdefault(q.text, set()).update(passages.text(pack, e) for e in q.evidence)
    for pair in made:
        assert pair.positive in evidence[pair.query]
        assert pair.negatives and not set(pair.negatives) & evidence[pair.query]
    # the stock model's mistakes come on top of BM25's
    assert max(len(p.negatives) for p in made) > mine.NEGATIVES_PER_SOURCE


def test_recall_measures_the_ranking() -> None:
    case = evaluate.Case(
        "Where does Ada work?",
        ("Ada: I work at the harbour museum.", "Bo: It rained all day.", "Bo: Lunch was late."),
        frozenset({0}),
    )
    perfect = evaluate.recall([case], MiniLMEmbedder().embed)
    assert perfect["vector@5"] == 100.0 and perfect["rrf@5"] == 100.0

    far = evaluate.Case(
        case.query, (*case.texts, *(f"Bo: filler {i}" for i in range(9))), frozenset({0})
    )
    vectors = np.zeros((14, 2), dtype=np.float32)
    vectors[:, 0] = 1.0
    vectors[1] = [0.0, 1.0]  # the evidence, orthogonal to the query
    assert evaluate.recall([far], lambda _t: vectors)["vector@10"] == 0.0


def test_random_negatives_come_from_the_rest_of_the_conversation() -> None:
    pack = data.load(SHARED, ("friendsqa.json.gz",))
    questions = pack.questions[:30]
    plain = mine.pairs(pack, questions, None, seed=13)
    more = mine.pairs(pack, questions, None, seed=13, random_negatives=2)
    assert sum(len(p.negatives) for p in more) > sum(len(p.negatives) for p in plain)
    by_query = {q.text: q for q in questions}
    for pair in more:
        q = by_query[pair.query]
        turns = {passages.text(pack, t) for t in pack.candidates(q)}
        evidence = {passages.text(pack, e) for e in q.evidence}
        assert set(pair.negatives) <= turns - evidence


def test_rrf_order_ranks_every_candidate_and_fuses_both_legs() -> None:
    case = evaluate.Case(
        "harbour museum",
        ("Bo: nothing here", "Ada: the harbour museum opened", "Cy: a museum?", "Di: hi"),
        frozenset({1}),
    )
    vectors = np.eye(5, dtype=np.float32)
    vectors[4] = vectors[0]  # by vector alone, the last candidate is the best
    order = evaluate.rrf_order(case, lambda _t: vectors)
    assert sorted(order) == [0, 1, 2, 3]
    assert evaluate.vector_order(case, lambda _t: vectors)[0] == 3
    assert order[0] == 1  # BM25's first (both terms) outranks the vector's first


def test_reranked_recall_reorders_only_the_head() -> None:
    from graphrecall_training import cross_encoder

    texts = tuple(f"turn {i}" for i in range(30))
    case = evaluate.Case("q", texts, frozenset({7, 25}))
    first = {0: list(range(30))}

    def by_number(_query: str, passages: list[str]) -> list[float]:
        return [float(p == "turn 7") + float(p == "turn 25") for p in passages]

    got = cross_encoder.reranked_recall([case], first, by_number, depth=20)
    # turn 7 moves to the top; turn 25 is beyond the depth and stays where it was
    assert got == {"rerank@5": 50.0, "rerank@10": 50.0}
    assert cross_encoder.reranked_recall([case], first, by_number, depth=30)["rerank@5"] == 100.0


def test_rank_parity() -> None:
    from graphrecall_training import export

    assert export.rank_parity([0.1, 0.5, 0.9], [1.0, 2.0, 3.0]) == 1.0
    assert export.rank_parity([0.1, 0.5, 0.9], [3.0, 2.0, 1.0]) == -1.0
