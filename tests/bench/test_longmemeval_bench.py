"""``graphrecall bench longmemeval`` end to end on a tiny LongMemEval-format file written by
the test (the real data set is never needed by the suite), and the metrics it reports
checked against values worked out by hand. No timing assertions."""

from __future__ import annotations

import gzip
import importlib.util
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphrecall.cli import main
from graphrecall_bench.longmemeval_data import load, parse_date, session_of, split_text, turn_of
from graphrecall_bench.plain_baselines import PLAIN_BM25, PlainIndex, rrf
from graphrecall_bench.retrieval_metrics import evaluate, evaluate_turn2session

LONG = " ".join(["photosynthesis"] * 800)  # 11,999 characters: over the 10,000 limit


def _session(*turns: tuple[str, str, bool]) -> list[dict[str, Any]]:
    out = []
    for role, content, answer in turns:
        turn: dict[str, Any] = {"role": role, "content": content}
        if answer:
            turn["has_answer"] = True
        out.append(turn)
    return out


def _question(qid: str, qtype: str, question: str, answer_ids: list[str]) -> dict[str, Any]:
    sessions = {
        "s_filler_1": _session(
            ("user", "Can you suggest a pasta recipe with tomatoes?", False),
            ("assistant", "Try a simple marinara with garlic and basil.", False),
        ),
        "answer_a1": _session(
            ("user", "I just adopted a cat named Miso from the shelter.", True),
            ("assistant", "Congratulations on adopting Miso!", False),
        ),
        "s_filler_2": _session(
            ("user", "Explain how plants make food.", False),
            ("assistant", LONG, False),
        ),
        "answer_a2": _session(
            ("user", "My sister Ana moved to Porto last spring.", False),
            ("assistant", "Porto is a beautiful city by the Douro river.", False),
        ),
    }
    return {
        "question_id": qid,
        "question_type": qtype,
        "question": question,
        "answer": "an answer",
        "question_date": "2023/06/01 (Thu) 10:00",
        "haystack_session_ids": list(sessions),
        "haystack_dates": [
            "2023/05/01 (Mon) 09:00",
            "2023/05/02 (Tue) 09:30",
            "2023/05/03 (Wed) 10:15",
            "2023/05/04 (Thu) 18:45",
        ],
        "haystack_sessions": list(sessions.values()),
        "answer_session_ids": answer_ids,
    }


def write_tiny_longmemeval(path: Path) -> Path:
    items = [
        _question("q1", "single-session-user", "What is the name of my cat?", ["answer_a1"]),
        _question("q2", "single-session-user", "Where did my sister Ana move?", ["answer_a2"]),
        _question(
            "q3",
            "multi-session",
            "Where did my sister move and my cat's name?",
            ["answer_a1", "answer_a2"],
        ),
        _question("q4_abs", "single-session-user", "What is my dog's name?", ["answer_a1"]),
    ]
    path.write_bytes(gzip.compress(json.dumps(items).encode()))
    return path


# -- metrics, checked by hand ---------------------------------------------------------------


def test_longmemeval_metrics_by_hand() -> None:
    corpus = ["a", "b", "x", "y"]
    # gains [1, 0, 1]: DCG 1 + 0/log2(2) + 1/log2(3); ideal [1, 1, 0]: 1 + 1/log2(2) = 2.
    any3, all3, ndcg3 = evaluate(["a", "x", "b"], ["a", "b"], corpus, 3)
    assert (any3, all3) == (1.0, 1.0)
    assert ndcg3 == pytest.approx((1 + 1 / math.log2(3)) / 2)
    assert evaluate(["a", "x", "b"], ["a", "b"], corpus, 1) == (1.0, 0.0, 1.0)
    # LongMemEval's DCG gives ranks 1 and 2 full gain: a hit at rank 2 is 1 of an ideal 2.
    assert evaluate(["x", "a"], ["a", "b"], corpus, 2) == (1.0, 0.0, 0.5)
    assert evaluate(["x", "y"], ["a"], corpus, 2) == (0.0, 0.0, 0.0)

    # Session level: turns s1_0, s1_1 rank first and are one session, so k=2 grows to 3
    # turns (two sessions); the answer session s2 is third: DCG 1/log2(3); its two turns
    # in the corpus make the ideal [1, 1, 0] = 2.
    turns = ["s1_0", "s1_1", "s2_0", "s2_1", "s3_0"]
    ranked = ["s1_0", "s1_1", "s2_0", "s3_0"]
    any2, all2, ndcg2 = evaluate_turn2session(ranked, ["s2_1"], turns, 2, session_of)
    assert (any2, all2) == (1.0, 1.0)
    assert ndcg2 == pytest.approx((1 / math.log2(3)) / 2)
    assert evaluate_turn2session(ranked, ["s2_1"], turns, 1, session_of)[0] == 0.0


def test_plain_baselines_by_hand() -> None:
    # RRF k 60: a = 1/61 + 1/62, b = 1/62 + 1/61 (tie: first seen first), c = 1/63.
    assert rrf([["a", "b", "c"], ["b", "a"]]) == ["a", "b", "c"]
    assert rrf([["a"], ["b", "c", "a"]]) == ["a", "b", "c"]

    class Axis:  # a stand-in embedder: texts naming a cat on one axis, the rest on the other
        dim = 2

        def embed(self, texts: list[str]) -> Any:
            return np.array([[1.0, 0.0] if "cat" in t else [0.0, 1.0] for t in texts])

    docs = [
        "user: my cat sleeps",
        "assistant: dogs bark loudly at night",
        "user: the weather is mild",
        "user: a cat and a cat",
        "user: nothing here",
    ]
    index = PlainIndex(["d0", "d1", "d2", "d3", "d4"], docs, Axis())  # type: ignore[arg-type]
    # "cat" is in 2 of 5 rows: IDF log(3.5 / 2.5). d3 has it twice in 6 tokens ("user a
    # cat and a cat"), d0 once in 4; the rows hold 4 + 6 + 5 + 6 + 3 = 24 tokens, 4.8 on
    # average. With k1 1.2, b 0.75, d3 scores idf * 2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 *
    # 6 / 4.8)) = 0.4323 and d0 idf * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 4 / 4.8)) = 0.3611.
    assert index.query_terms("Which CAT?") == ["which", "cat"]
    assert index.bm25("Which cat?", 10) == ["d3", "d0"]
    idf = math.log(3.5 / 2.5)
    scores = index.terms.scores(["cat"], np.array([1, 4], dtype=np.int64), PLAIN_BM25)
    assert scores[4] == pytest.approx(idf * 2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * 6 / 4.8)))
    assert scores[1] == pytest.approx(idf * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 4 / 4.8)))
    assert scores[4] == pytest.approx(0.4323, abs=1e-4)
    assert index.cosine("cat", 2) == ["d0", "d3"]
    # BM25 [d3, d0], cosine [d0, d3, ...]: both 1/61 + 1/62, the tie to BM25's first.
    assert index.rankings("cat", 3)["plain_rrf"][:2] == ["d3", "d0"]


def test_parsing_splits_and_evidence(tmp_path: Path) -> None:
    items = load(write_tiny_longmemeval(tmp_path / "tiny.json.gz"))
    assert [i.question.question_id for i in items] == ["q1", "q2", "q3", "q4_abs"]
    q1, q2, q3, q4 = items
    assert q1.question.evidence_turns == ("answer_a1_0",)
    assert q3.question.evidence_turns == ("answer_a1_0", "answer_a2_0", "answer_a2_1")
    # answer_a2 marks no turn: the session as a whole is the evidence.
    assert q2.question.evidence_turns == ("answer_a2_0", "answer_a2_1")
    assert q2.question.unmarked_answer_sessions == 1
    assert q4.question.abstention and not q1.question.abstention
    assert len(q1.question.turn_ids) == 8 and q1.split_turns == 1 and q1.messages == 9
    parts = [t.dia_id for s in q1.sample.sessions for t in s.turns]
    assert "s_filler_2_1~1" in parts and turn_of("s_filler_2_1~1") == "s_filler_2_1"
    assert session_of("answer_a2_1") == "answer_a2"
    roles = [t.role for t in q1.sample.sessions[0].turns]
    assert roles == ["user", "assistant"]
    assert parse_date("2023/05/20 (Sat) 02:21").isoformat() == "2023-05-20T02:21:00+00:00"
    with pytest.raises(ValueError):
        parse_date("May 2023")
    pieces = split_text(LONG)
    # Words of 14 characters and a space: the last space before 10,000 is at 665 * 15 + 14.
    assert [len(p) for p in pieces] == [9989, 2009] and " ".join(pieces) == LONG
    # --max-questions takes the types in turn, not the file's first N.
    assert [i.question.question_type for i in load(tmp_path / "tiny.json.gz", 2)] == [
        "single-session-user",
        "multi-session",
    ]


def _fraction(value: Any) -> bool:
    return isinstance(value, int | float) and 0.0 <= value <= 1.0


def test_bench_longmemeval_end_to_end(tmp_path: Path) -> None:
    data = write_tiny_longmemeval(tmp_path / "tiny.json.gz")
    out, png = tmp_path / "lme.json", tmp_path / "lme.png"
    argv = ["bench", "longmemeval", "--data", str(data), "--json", str(out), "--png", str(png)]
    assert main(argv) == 0
    result = json.loads(out.read_text())

    assert result["benchmark"] == "longmemeval"
    assert result["data"]["split_turns"] == 4 and result["data"]["truncated_turns"] == 0
    assert result["data"]["messages"] == 36 and result["data"]["turns"] == 32
    assert result["questions_answerable"] == 3 and result["questions_abstention"] == 1
    ing = result["ingestion"]
    assert ing["messages"] == 36 and ing["failed_tasks"] == 0 and ing["sessions"] == 16
    # The latencies are measured after the server's index copies were built again.
    assert isinstance(ing["copies_built_s"], float) and ing["copies_built_s"] >= 0

    names = set(result["rankings"])
    assert names == {
        "search_episodes", "bm25", "vector", "hybrid_rrf", "hybrid_cross_encoder",
        "hybrid_mmr", "plain_bm25", "plain_cosine", "plain_rrf",
    }  # fmt: skip
    for name, m in result["rankings"].items():
        assert m["questions"] == 3
        for level in ("session", "turn"):
            for k in (5, 10, 30, 50):
                for what in ("recall_any", "recall_all", "ndcg"):
                    assert _fraction(m[f"{level}_{what}@{k}"]), (name, level, what, k)
            assert m[f"{level}_recall_all@5"] <= m[f"{level}_recall_any@5"]
        # The share of evidence turns lies between "all of them" and "any of them".
        for k in (5, 10, 30, 50):
            assert m[f"turn_recall_all@{k}"] <= m[f"turn_recall@{k}"] <= m[f"turn_recall_any@{k}"]
    shipped = result["rankings"]["search_episodes"]
    # Eight turns per haystack, a page of 50: every turn and session is in the page.
    assert shipped["turn_recall_all@50"] == 1.0 and shipped["session_recall_all@50"] == 1.0
    assert result["rankings"]["plain_cosine"]["turn_recall_all@10"] == 1.0
    # Four sessions: at k=5 every session is in, whatever the order.
    assert result["rankings"]["plain_cosine"]["session_recall_all@5"] == 1.0
    assert set(shipped["by_type"]) == {"single-session-user", "multi-session"}
    assert shipped["by_type"]["single-session-user"]["questions"] == 2

    for name, lift in result["lift_over_plain"].items():
        assert {"turn_recall@5", "turn_recall@10"} <= set(lift)
        plain = result["rankings"][name]
        for k, v in lift.items():
            assert v == pytest.approx(shipped[k] - plain[k], abs=1e-3)

    edges = result["search_edges"]
    assert _fraction(edges["turn_share"]) and edges["questions"] == 3
    if result["context"] is None:
        assert result["context_error"]
    else:
        assert _fraction(result["context"]["turn_share"])
    lat = result["latency"]
    assert lat["first_search_episodes_per_graph"]["n"] == 4 and lat["search_episodes"]["n"] == 4
    assert len(result["per_question"]) == 4
    if importlib.util.find_spec("matplotlib") is not None:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
