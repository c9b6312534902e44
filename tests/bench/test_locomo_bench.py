"""``graphrecall bench locomo`` and ``bench ingest`` end to end on a tiny LoCoMo-format
file written by the test (the real data set is never needed by the suite).

Checks that both commands run through the CLI entry point (the locomo one against a real
server subprocess through the SDK) and write JSON of the documented shape with values in
range; malformed and unresolvable evidence ids are accounted for. No timing assertions.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from graphrecall.cli import main
from graphrecall.library.locomo import load, normalise_evidence, parse_session_time

SESSION_1 = [
    ("Alice", "Hi Bob! I just moved to Lisbon last week."),
    ("Bob", "Welcome to Portugal! How is the new flat?"),
    ("Alice", "It is lovely, close to the river. I started working at a bakery."),
    ("Bob", "Nice. I adopted a dog named Rex yesterday."),
    ("Alice", "Rex is a great name! What breed is he?"),
]
SESSION_2 = [
    ("Bob", "Rex learned to fetch. He is a golden retriever."),
    ("Alice", "Cute! The bakery promoted me to head baker."),
    ("Bob", "Congratulations! Do you still paint on weekends?"),
    ("Alice", "Yes, I painted a sunrise over the Tagus river."),
    ("Bob", "I would love to see it."),
]


def _turns(session: int, turns: list[tuple[str, str]]) -> list[dict[str, Any]]:
    out = []
    for i, (speaker, text) in enumerate(turns, 1):
        turn: dict[str, Any] = {"speaker": speaker, "dia_id": f"D{session}:{i}", "text": text}
        if (session, i) == (2, 4):
            turn["img_url"] = ["https://example.invalid/sunrise.jpg"]
            turn["blip_caption"] = "a painting of a sunrise over a river"
        out.append(turn)
    return out


def write_tiny_locomo(path: Path, samples: int = 1) -> Path:
    sample = {
        "sample_id": "tiny-1",
        "conversation": {
            "speaker_a": "Alice",
            "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": _turns(1, SESSION_1),
            "session_2_date_time": "10:04 am on 19 June, 2023",
            "session_2": _turns(2, SESSION_2),
        },
        "qa": [
            {
                "question": "Where did Alice move to?",
                "answer": "Lisbon",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": "What is the name and breed of Bob's dog?",
                "answer": "Rex, a golden retriever",
                "evidence": ["D1:4; D2:1 ", "D9:9"],  # malformed, then unresolvable
                "category": 1,
            },
            {
                "question": "When did Alice paint a sunrise?",
                "answer": "June 2023",
                "evidence": ["D:2:4"],  # malformed
                "category": 2,
            },
            {"question": "What is Bob's favourite colour?", "answer": "blue", "category": 5},
        ],
        # Generated annotations: present in the real file, never fed to the system.
        "observation": {"session_1_observation": {}},
        "session_summary": {"session_1_summary": "Alice moved."},
        "event_summary": {},
    }
    copies = [{**sample, "sample_id": f"tiny-{i}"} for i in range(1, samples + 1)]
    path.write_text(json.dumps(copies))
    return path


def test_parsing_and_evidence_normalisation(tmp_path: Path) -> None:
    [sample] = load(write_tiny_locomo(tmp_path / "tiny.json"))
    assert [len(s.turns) for s in sample.sessions] == [5, 5]
    assert sample.sessions[0].reference_time.isoformat() == "2023-05-08T13:56:00+00:00"
    shared = sample.sessions[1].turns[3].content
    assert shared.endswith(" [image: a painting of a sunrise over a river]")
    q1, q2, q3, q4 = sample.questions
    assert q1.evidence == ("D1:1",) and not q1.unresolved and not q1.normalised
    assert q2.evidence == ("D1:4", "D2:1") and q2.unresolved == ("D9:9",)
    assert q3.evidence == ("D2:4",) and q3.normalised == (("D:2:4", "D2:4"),)
    assert q4.evidence_raw == ()
    known = {"D10:14", "D10:1", "D1:3"}
    assert normalise_evidence("D10:1:4", known) == (["D10:14"], [])
    assert normalise_evidence("D10:1:4", {"D10:1"}) == (["D10:1"], [])
    assert normalise_evidence("D1:3 ", known) == (["D1:3"], [])
    assert normalise_evidence("D", known) == ([], ["D"])
    assert parse_session_time("7:30 pm on 21 November, 2023").hour == 19
    with pytest.raises(ValueError):
        parse_session_time("sometime in May")


def _fraction(value: Any) -> bool:
    return isinstance(value, int | float) and 0.0 <= value <= 1.0


def test_bench_locomo_end_to_end(tmp_path: Path) -> None:
    data = write_tiny_locomo(tmp_path / "tiny.json")
    out, png = tmp_path / "locomo.json", tmp_path / "locomo.png"
    argv = ["bench", "locomo", "--data", str(data), "--json", str(out), "--png", str(png)]
    assert main(argv) == 0
    result = json.loads(out.read_text())

    assert result["benchmark"] == "locomo"
    assert result["questions"] == 3 and result["questions_without_evidence"] == 1
    assert result["unresolved_evidence"] == 1
    assert result["unresolved_evidence_ids"] == [
        {"sample_id": "tiny-1", "question": 1, "raw": "D9:9"}
    ]
    assert {n["raw"] for n in result["normalised_evidence_ids"]} == {"D1:4; D2:1 ", "D:2:4"}
    assert result["evidence_turns"] == 4

    ing = result["ingestion"]
    assert ing["messages"] == 10 and ing["failed_tasks"] == 0 and ing["messages_per_s"] > 0
    # The latencies are measured after the server's index copies were built again.
    assert isinstance(ing["copies_built_s"], float) and ing["copies_built_s"] >= 0

    episodes = result["search_episodes"]
    for key in ("recall@5", "recall@10", "recall@25", "ndcg@10"):
        assert _fraction(episodes[key]), key
    assert episodes["recall@5"] <= episodes["recall@10"] <= episodes["recall@25"]
    # Ten turns in all: a page of 25 holds every turn, so every evidence turn is found.
    assert episodes["recall@25"] == 1.0
    assert 0 < episodes["p50_ms"] <= episodes["p95_ms"]
    assert set(episodes["by_category"]) == {"single-hop", "multi-hop", "temporal"}
    for cat in episodes["by_category"].values():
        assert cat["questions"] == 1 and _fraction(cat["recall@10"])

    edges = result["search_edges"]
    assert _fraction(edges["recall@10"]) and 0 < edges["p50_ms"] <= edges["p95_ms"]

    context = result["context"]
    if context is None:  # the endpoint is not there (yet): the reason is recorded
        assert result["context_error"]
    else:
        assert _fraction(context["coverage"]) and context["p50_ms"] > 0

    assert set(result["baselines"]) == {
        "bm25",
        "vector",
        "hybrid_rrf",
        "hybrid_cross_encoder",
        "hybrid_mmr",
    }
    for b in result["baselines"].values():
        assert _fraction(b["recall@5"]) and _fraction(b["recall@10"])
        assert b["recall@5"] <= b["recall@10"]
    # Ten turns, pages of ten: the vector leg ranks every turn.
    assert result["baselines"]["vector"]["recall@10"] == 1.0

    plain = result["plain_baselines"]
    assert plain["depth"] == 25
    for name in ("plain_bm25", "plain_cosine", "plain_rrf"):
        m = plain[name]
        assert _fraction(m["recall@5"]) and m["recall@5"] <= m["recall@10"] <= m["recall@25"]
        for k, lift in m["lift_of_search_episodes"].items():
            assert lift == pytest.approx(episodes[k] - m[k], abs=1e-3)
    # Ten turns: the cosine ranks all of them, the RRF fuses that full list.
    assert plain["plain_cosine"]["recall@10"] == plain["plain_rrf"]["recall@25"] == 1.0

    assert len(result["per_question"]) == 3
    assert result["params"]["fact_extraction"] is True
    assert result["target_verdicts"]["recall@5"]["target"] == 0.75
    if importlib.util.find_spec("matplotlib") is not None:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_locomo_without_facts(tmp_path: Path) -> None:
    """``--no-facts``: the server extracts nothing, so the episodes are still ranked (every
    evidence turn in a page of 25 of ten turns) but no fact cites a turn. Two samples: the
    warm-up asks the first one's graph, so the second's first search is timed apart."""
    data = write_tiny_locomo(tmp_path / "tiny.json", samples=2)
    out = tmp_path / "locomo.json"
    argv = ["bench", "locomo", "--data", str(data), "--json", str(out), "--no-facts"]
    assert main(argv) == 0
    result = json.loads(out.read_text())
    assert result["params"]["fact_extraction"] is False
    assert result["ingestion"]["failed_tasks"] == 0
    assert result["search_episodes"]["recall@25"] == 1.0
    assert result["search_edges"]["recall@10"] == 0.0
    first = result["search_episodes"]["first_per_graph"]
    assert first["n"] == 1 and first["p50_ms"] > 0


def test_bench_ingest_end_to_end(tmp_path: Path) -> None:
    data = write_tiny_locomo(tmp_path / "tiny.json")
    out = tmp_path / "ingest.json"
    assert main(["bench", "ingest", "--data", str(data), "--json", str(out), "--facts", "5"]) == 0
    result = json.loads(out.read_text())

    assert result["benchmark"] == "ingest"
    assert result["messages"] == 10 and result["sessions"] == 2
    assert set(result["runs"]) == {"http", "offline"}
    for run in result["runs"].values():
        assert run["messages"] == 10 and run["failed_tasks"] == 0
        assert run["messages_per_s"] > 0
        graph = run["graph"]
        assert graph["episodes"] == graph["episodes_processed"] == 10
        assert graph["nodes"] >= 2 and graph["edges"] >= 1
        assert 0 <= graph["edges_invalidated"] <= graph["edges"]
        assert graph["thread_summaries"] >= 1 and graph["observations"] >= 0
    breakdown = result["runs"]["offline"]["breakdown"]
    assert breakdown["embed_texts"] >= 10 and breakdown["extract_items"] == 10
    assert result["target"]["offline_messages_per_s_min"] == 100
    assert isinstance(result["target"]["met"], bool)

    facts = json.loads(Path(result["facts_sample"]["json"]).read_text())
    assert 1 <= facts["n"] <= 5 and len(facts["facts"]) == facts["n"]
    for fact in facts["facts"]:
        assert fact["fact"] and fact["relation"] and fact["messages"]
        assert all(m["dia_id"] and m["text"] for m in fact["messages"])
    assert Path(result["facts_sample"]["markdown"]).read_text().startswith("# ")
