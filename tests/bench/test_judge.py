"""``graphrecall bench judge``: the change's parsing, the arithmetic of the report (recalls,
halves, paired differences, the verdict) worked out by hand, and the command end to end on
the work directories ``bench locomo`` and ``bench longmemeval`` leave on tiny data sets."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from graphrecall.cli import main
from graphrecall.domain import scopes
from graphrecall.retrieval.engine import DEFAULT_LEG_WEIGHTS, SearchOptions
from graphrecall_bench.judge import (
    QUESTIONS_FILE,
    Change,
    JudgedQuestion,
    paired,
    read_questions,
    summarise,
    verdict,
)
from graphrecall_bench.retrieval_metrics import units

from .test_locomo_bench import write_tiny_locomo
from .test_longmemeval_bench import write_tiny_longmemeval


def test_change_parsing_and_applying() -> None:
    change = Change.parse("vector=1.0, rrf_k=6,b=0.75")
    assert change.weights == {"vector": 1.0} and change.rrf_k == 6 and change.b == 0.75
    assert change.describe() == "vector=1,rrf_k=6,b=0.75"
    spec, opts = change.apply(scopes.SCOPES["episodes"], SearchOptions(query="q"))
    assert spec.rrf_k == 6 and spec.bm25.b == 0.75
    assert spec.bm25.k1 == scopes.SCOPES["episodes"].bm25.k1  # unchanged
    assert opts.weights == {**DEFAULT_LEG_WEIGHTS, "vector": 1.0}
    # The empty change is the shipped search, untouched.
    same, plain = Change.parse("").apply(scopes.SCOPES["episodes"], SearchOptions(query="q"))
    assert same == scopes.SCOPES["episodes"] and plain.weights is None
    assert Change().describe() == "shipped"


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("vectr=1", "vectr"),
        ("vector", "is not key=value"),
        ("vector=lots", "vector must be a number"),
        ("vector=-1", "vector must be >= 0"),
        ("facts=nan", "facts must be finite"),
        ("rrf_k=0", "rrf_k"),
        ("rrf_k=2.5", "rrf_k"),
        ("k1=0", "k1"),
        ("b=1.5", "b must be within"),
    ],
)
def test_change_rejects_what_it_cannot_run(text: str, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        Change.parse(text)


def test_units_are_turns_when_episodes_map_to_them() -> None:
    assert units(["e1", "e2", "e3"], None) == ["e1", "e2", "e3"]
    # e1 and e2 are parts of one long turn; e9 belongs to no turn of the question.
    assert units(["e1", "e2", "e9", "e3"], {"e1": "t1", "e2": "t1", "e3": "t2"}) == ["t1", "t2"]


def test_summary_by_hand() -> None:
    questions = [
        JudgedQuestion("a", "g", "q", ("x",), half=0),
        JudgedQuestion("b", "g", "q", ("x", "y"), half=0),
        JudgedQuestion("c", "g", "q", ("x",), half=1),
    ]
    filler = [f"f{i}" for i in range(30)]
    shipped = [["x", *filler], [*filler[:5], "x", "y"], ["x"]]
    changed = [["x", *filler], ["x", *filler[:8], "y"], [*filler[:5], "x"]]
    s = summarise(questions, shipped, changed)
    # @5: shipped 1, 0, 1; changed 1, 0.5, 0 -> differences 0, +0.5, -1.
    at5 = s["all"]["@5"]
    assert at5["shipped"] == pytest.approx(2 / 3) and at5["changed"] == pytest.approx(0.5)
    assert at5["difference"]["mean"] == pytest.approx(-1 / 6, abs=1e-6)
    diffs = [0.0, 0.5, -1.0]
    mean = sum(diffs) / 3
    se = math.sqrt(sum((d - mean) ** 2 for d in diffs) / 2) / math.sqrt(3)
    assert at5["difference"]["se"] == pytest.approx(se, abs=1e-6)
    # @10: shipped 1, 1, 1; changed 1, 1, 1 (y at rank 10): no difference.
    assert s["all"]["@10"]["difference"]["mean"] == 0
    assert s["half 1"]["questions"] == 2 and s["half 2"]["questions"] == 1
    assert s["half 1"]["@5"]["difference"]["mean"] == pytest.approx(0.25)
    assert s["half 2"]["@5"]["difference"] == {"mean": -1.0, "se": None}  # one question
    assert s["losses"] == ["all @5", "half 2 @5"]
    v = verdict({"locomo": s, "longmemeval": {"losses": []}})
    assert v == {
        "holds": False,
        "losses": ["locomo: all @5", "locomo: half 2 @5"],
        "sets": ["locomo", "longmemeval"],
    }
    assert verdict({"locomo": summarise(questions, shipped, shipped)})["holds"] is True
    assert paired([]) == {"mean": None, "se": None}


def test_bench_judge_end_to_end(tmp_path: Path) -> None:
    """Both benches leave their question files; the shipped settings given as a change rank
    exactly as shipped (verdict: holds); turning the lexical leg off is judged on both."""
    locomo_work, lme_work = tmp_path / "locomo", tmp_path / "lme"
    locomo = write_tiny_locomo(tmp_path / "tiny.json", samples=2)
    argv = ["bench", "locomo", "--data", str(locomo), "--no-facts", "--workdir", str(locomo_work)]
    assert main([*argv, "--json", str(tmp_path / "locomo.json")]) == 0
    lme = write_tiny_longmemeval(tmp_path / "tiny.json.gz")
    argv = ["bench", "longmemeval", "--data", str(lme), "--no-facts", "--workdir", str(lme_work)]
    assert main([*argv, "--json", str(tmp_path / "lme.json")]) == 0

    benchmark, db, questions = read_questions(locomo_work)
    assert benchmark == "locomo" and db == locomo_work / "locomo.db"
    assert len(questions) == 6 and {q.half for q in questions} == {0, 1}  # one sample each
    assert all(q.unit_of is None and q.relevant for q in questions)
    benchmark, db, questions = read_questions(lme_work)
    assert benchmark == "longmemeval" and db == lme_work / "longmemeval.db"
    assert len(questions) == 3  # the abstention question is not judged
    assert all(q.unit_of and set(q.relevant) <= set(q.unit_of.values()) for q in questions)

    out = tmp_path / "judge.json"
    works = ["--workdir", str(locomo_work), "--workdir", str(lme_work)]
    assert main(["bench", "judge", *works, "--try", "vector=0.5", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["verdict"] == {"holds": True, "losses": [], "sets": ["locomo", "longmemeval"]}
    bench_locomo = json.loads((tmp_path / "locomo.json").read_text())["search_episodes"]
    for name, s in result["sets"].items():
        for k in (5, 10, 25):
            entry = s["all"][f"@{k}"]
            assert entry["shipped"] == entry["changed"] and entry["difference"]["mean"] == 0
        if name == "locomo":  # in-process, as the SDK's search_episodes ranked
            assert s["all"]["@5"]["shipped"] == pytest.approx(bench_locomo["recall@5"], abs=1e-4)
    assert len(result["per_question"]["locomo"]) == 6

    assert main(["bench", "judge", *works, "--try", "bm25=0", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["change"] == "bm25=0"
    losses = [
        f"{name}: {group} @{k}"
        for name, s in result["sets"].items()
        for group in ("all", "half 1", "half 2")
        if group in s
        for k in (5, 10)
        if s[group][f"@{k}"]["difference"]["mean"] < 0
    ]
    assert result["verdict"]["losses"] == losses and result["verdict"]["holds"] == (not losses)


def test_bench_judge_refuses_what_it_cannot_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def refused(*argv: str) -> str:
        assert main(["bench", "judge", *argv]) == 1
        return capsys.readouterr().err

    missing = tmp_path / "never-run"
    assert "run bench locomo" in refused("--workdir", str(missing), "--try", "vector=1")
    work = tmp_path / "w"
    work.mkdir()
    (work / QUESTIONS_FILE).write_text(
        json.dumps({"benchmark": "locomo", "db": "locomo.db", "questions": []})
    )
    assert "locomo.db is missing" in refused("--workdir", str(work), "--try", "vector=1")
    twice = ["--workdir", str(work), "--workdir", str(work)]
    assert "one directory per data set" in refused(*twice, "--try", "vector=1")
    assert "unknown setting 'speed'" in refused("--workdir", str(work), "--try", "speed=9")
